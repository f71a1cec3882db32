"""torch.nn.modules: the layer classes."""

from fake_torch.nn.modules.activation import (
    GELU,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSoftmax,
    Mish,
    PReLU,
    ReLU,
    ReLU6,
    RReLU,
    Sigmoid,
    SiLU,
    Softmax,
    Tanh,
)
from fake_torch.nn.modules.container import ModuleDict, ModuleList, Sequential
from fake_torch.nn.modules.dropout import Dropout
from fake_torch.nn.modules.linear import Identity, Linear
from fake_torch.nn.modules.loss import (
    CrossEntropyLoss,
    HuberLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from fake_torch.nn.modules.module import Module
from fake_torch.nn.modules.normalization import LayerNorm, RMSNorm
from fake_torch.nn.modules.sparse import Embedding

__all__ = [
    "GELU",
    "CrossEntropyLoss",
    "Dropout",
    "Embedding",
    "Hardswish",
    "Hardtanh",
    "HuberLoss",
    "Identity",
    "L1Loss",
    "LayerNorm",
    "LeakyReLU",
    "Linear",
    "LogSoftmax",
    "MSELoss",
    "Mish",
    "Module",
    "ModuleDict",
    "ModuleList",
    "NLLLoss",
    "PReLU",
    "RMSNorm",
    "RReLU",
    "ReLU",
    "ReLU6",
    "Sequential",
    "SiLU",
    "Sigmoid",
    "SmoothL1Loss",
    "Softmax",
    "Tanh",
]

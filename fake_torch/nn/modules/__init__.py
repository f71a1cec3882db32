"""torch.nn.modules: the layer classes."""

from fake_torch.nn.modules.activation import (
    GELU,
    LogSoftmax,
    ReLU,
    Sigmoid,
    SiLU,
    Softmax,
    Tanh,
)
from fake_torch.nn.modules.container import ModuleDict, ModuleList, Sequential
from fake_torch.nn.modules.dropout import Dropout
from fake_torch.nn.modules.linear import Identity, Linear
from fake_torch.nn.modules.module import Module
from fake_torch.nn.modules.normalization import LayerNorm, RMSNorm
from fake_torch.nn.modules.sparse import Embedding

__all__ = [
    "GELU",
    "Dropout",
    "Embedding",
    "Identity",
    "LayerNorm",
    "Linear",
    "LogSoftmax",
    "Module",
    "ModuleDict",
    "ModuleList",
    "RMSNorm",
    "ReLU",
    "Sequential",
    "SiLU",
    "Sigmoid",
    "Softmax",
    "Tanh",
]

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
from fake_torch.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from fake_torch.nn.modules.container import ModuleDict, ModuleList, Sequential
from fake_torch.nn.modules.conv import (
    Conv1d,
    Conv2d,
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
)
from fake_torch.nn.modules.dropout import Dropout
from fake_torch.nn.modules.linear import Identity, Linear
from fake_torch.nn.modules.loss import (
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from fake_torch.nn.modules.module import Module
from fake_torch.nn.modules.normalization import GroupNorm, LayerNorm, RMSNorm
from fake_torch.nn.modules.pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d
from fake_torch.nn.modules.rnn import (
    GRU,
    LSTM,
    RNN,
    GRUCell,
    LSTMCell,
    RNNBase,
    RNNCell,
    RNNCellBase,
)
from fake_torch.nn.modules.sparse import Embedding

__all__ = [
    "GELU",
    "GRU",
    "LSTM",
    "RNN",
    "AdaptiveAvgPool2d",
    "AvgPool2d",
    "BCEWithLogitsLoss",
    "BatchNorm1d",
    "BatchNorm2d",
    "BatchNorm3d",
    "Conv1d",
    "Conv2d",
    "Conv3d",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "ConvTranspose3d",
    "CrossEntropyLoss",
    "Dropout",
    "Embedding",
    "GRUCell",
    "GroupNorm",
    "Hardswish",
    "Hardtanh",
    "HuberLoss",
    "Identity",
    "L1Loss",
    "LSTMCell",
    "LayerNorm",
    "LeakyReLU",
    "Linear",
    "LogSoftmax",
    "MSELoss",
    "MaxPool2d",
    "Mish",
    "Module",
    "ModuleDict",
    "ModuleList",
    "NLLLoss",
    "PReLU",
    "RMSNorm",
    "RNNBase",
    "RNNCell",
    "RNNCellBase",
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

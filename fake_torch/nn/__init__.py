"""torch.nn: Module, Parameter, the layers, `functional` and `init`."""

from fake_torch.nn import functional, init, modules, parameter
from fake_torch.nn.modules import (
    GELU,
    Dropout,
    Embedding,
    Identity,
    LayerNorm,
    Linear,
    LogSoftmax,
    Module,
    ModuleDict,
    ModuleList,
    ReLU,
    RMSNorm,
    Sequential,
    Sigmoid,
    SiLU,
    Softmax,
    Tanh,
)
from fake_torch.nn.parameter import Buffer, Parameter

__all__ = [
    "GELU",
    "Buffer",
    "Dropout",
    "Embedding",
    "Identity",
    "LayerNorm",
    "Linear",
    "LogSoftmax",
    "Module",
    "ModuleDict",
    "ModuleList",
    "Parameter",
    "RMSNorm",
    "ReLU",
    "Sequential",
    "SiLU",
    "Sigmoid",
    "Softmax",
    "Tanh",
    "functional",
    "init",
    "modules",
    "parameter",
]

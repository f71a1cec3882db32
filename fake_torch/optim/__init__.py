"""torch.optim: the optimizers and lr_scheduler, present so that code importing them gets
torch's names and signatures, and refused when constructed: optimizers step parameters along
gradients, and fake_torch does not emulate autograd."""

from fake_torch.optim import lr_scheduler
from fake_torch.optim._algorithms import (
    ASGD,
    LBFGS,
    SGD,
    Adadelta,
    Adafactor,
    Adagrad,
    Adam,
    Adamax,
    AdamW,
    Muon,
    NAdam,
    RAdam,
    RMSprop,
    Rprop,
    SparseAdam,
)
from fake_torch.optim.optimizer import Optimizer

__all__ = ["ASGD", "LBFGS", "SGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW",
           "Adamax", "Muon", "NAdam", "Optimizer", "RAdam", "RMSprop", "Rprop", "SparseAdam",
           "lr_scheduler"]

"""torch._subclasses: tensor subclasses torch.compile uses; here, fake tensors."""

from fake_torch._subclasses.fake_tensor import (
    DataDependentOutputException,
    FakeTensor,
    FakeTensorMode,
    UnsupportedFakeTensorException,
)

__all__ = ["DataDependentOutputException", "FakeTensor", "FakeTensorMode",
           "UnsupportedFakeTensorException"]

"""torch._C.TensorBase: the Tensor methods and properties that are ops.

Each is installed here by its op's definition (fake_torch._opdef), never written by hand; its
type is in `_tensor_base.pyi`, generated from the same definitions (`python -m fake_torch
stubs`). Tensor (fake_torch._tensor) subclasses this and adds the metadata: shape, dtype, ...
"""


class TensorBase:
    """The base of Tensor: its op methods (`add`, `view`, `__add__`, ...)."""

    __slots__ = ()

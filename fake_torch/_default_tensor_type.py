"""torch.set_default_tensor_type (deprecated since torch 2.1, still called by meta-llama's
reference code: `torch.set_default_tensor_type(torch.cuda.BFloat16Tensor)`).

A legacy type names a dtype and a device. Its dtype becomes the default dtype; a torch.cuda
type also makes factories called without `device=` create on cuda, as torch's default tensor
type does (here through set_default_device), until a CPU type is set again; so does the
legacy constructor torch.Tensor(...), which set_default_device alone leaves on the cpu."""

from __future__ import annotations

import warnings

from fake_torch._dtype import set_default_dtype
from fake_torch._legacy_types import CPU_TYPES, CUDA_TYPES
from fake_torch._tensor import hooks

_warned = False  # torch warns once per process
_cuda_from_tensor_type = False  # the cuda default device came from a cuda tensor type


def legacy_device() -> str:
    """Where torch.Tensor(...) (the legacy constructor, which set_default_device does not
    move) creates: the default tensor type's device."""
    return "cuda" if _cuda_from_tensor_type else "cpu"


hooks.legacy_device = legacy_device  # Tensor's legacy constructor (fake_torch/_tensor.py)


def set_default_tensor_type(t: type | str, /) -> None:
    """The default floating type: a legacy type (torch.DoubleTensor, torch.cuda.HalfTensor)
    or its name ("torch.FloatTensor")."""
    global _warned, _cuda_from_tensor_type
    if not _warned:
        _warned = True
        warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please "
                      "use torch.set_default_dtype() and torch.set_default_device() as "
                      "alternatives.", UserWarning, stacklevel=2)
    if isinstance(t, str):  # torch imports the dotted name
        space, _, name = t.rpartition(".")
        if space not in ("torch", "torch.cuda"):
            raise ModuleNotFoundError(f"No module named '{space or t}'")
        found = (CPU_TYPES if space == "torch" else CUDA_TYPES).get(name)
        if found is None:
            raise AttributeError(f"module '{space}' has no attribute '{name}'")
        t = found
    if t not in CPU_TYPES.values() and t not in CUDA_TYPES.values():
        raise TypeError("invalid type object: only floating-point types are supported as the "
                        "default type")
    dt = t.dtype  # type: ignore[attr-defined]
    if not dt.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    set_default_dtype(dt)
    from fake_torch.utils._device import set_default_device

    if t in CUDA_TYPES.values():
        set_default_device("cuda")
        _cuda_from_tensor_type = True
    elif _cuda_from_tensor_type:
        set_default_device(None)
        _cuda_from_tensor_type = False

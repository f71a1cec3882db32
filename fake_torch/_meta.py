"""The `meta` device: tensors with torch's shape, dtype, strides and storage offset, and no data.

A meta tensor is a Tensor like any other (`_a` a numpy view), over memory that costs nothing:
each allocation is its own anonymous, private, READ-ONLY mapping of the tensor's bytes. Pages
never touched take no RAM, so an 8-billion-parameter model's worth of meta tensors is only
address space; views are numpy views of the mapping, so their strides, storage offsets and
aliasing are exactly what the op computed, with no rule written twice. Reading one sees zeros,
writing one raises (numpy's "assignment destination is read-only"), so a host-side write that
forgot the meta device fails loudly instead of pretending.

Every op's implementation already works out its outputs' shape, dtype and layout before it
launches (kernels write into buffers they are given): that code IS the op's output rule. On
meta, `_kernels._common.new_tensor` hands out a mapping, and `launch` drops the launch (no
count, no kernel), so the op runs its rule and nothing else. What needs the values refuses, as
torch does: host reads (`item`, `tolist`, `.cpu()`, `print` prints no data), and ops whose
output shape depends on the data (`nonzero`, `masked_select`, `unique`, ...).
"""

from __future__ import annotations

import mmap
from typing import Any

import numpy as np

# torch's texts (c10 / ATen / torch/_meta_registrations.py)
NO_DATA = "Cannot copy out of meta tensor; no data!"
ITEM = "Tensor.item() cannot be called on meta tensors"
NONZERO = ("The register_meta function for torch.nonzero() raises unimplemented by default, as "
           "a correct data-independent implementation does not exist. This implementation "
           "returns a fake value, assuming all elements of the tensor are non-zero. To enable "
           "this registration, please set "
           "'torch.fx.experimental._config.meta_nonzero_assume_all_nonzero' to True.")


def meta_array(shape: tuple[int, ...], np_dtype: np.dtype[Any]) -> np.ndarray:
    """A read-only `shape` array of `np_dtype` over zero pages that cost no memory until read
    (an empty one over no memory at all)."""
    nbytes = np_dtype.itemsize
    for s in shape:
        nbytes *= s
    if nbytes == 0:  # over no memory, with row-major strides as torch's (np.empty's are 0)
        a = np.ndarray(shape, np_dtype, buffer=np.empty(0, np.uint8))
        a.flags.writeable = False
        return a
    # MAP_PRIVATE: a read maps the kernel's shared zero page (MAP_SHARED would allocate)
    root = np.frombuffer(mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ),
                         np.uint8)
    return np.ndarray(shape, np_dtype, buffer=root)


def no_kernel(op: str) -> NotImplementedError:
    """What torch raises for an op with no meta kernel (its output depends on the data)."""
    return NotImplementedError(
        f"aten::{op}: attempted to run this operator with Meta tensors, but there was no fake "
        "impl or Meta kernel registered. You may have run into this message while using an "
        "operator with PT2 compilation APIs (torch.compile/torch.export); in order to use this "
        "operator with those APIs you'll need to add a fake impl. Please see the following for "
        "next steps:  https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html")

"""The optional native core, one extension (fake_torch/_simulated/_native.c: the allocator's
block book; _native_storage.c: an op output's allocation and free; _native_lock.c: the
allocator's and the timeline's lock; _native_door.c: the door's eager cuda launch;
_native_rows.c: the allocator statistics' queued block events; _native_ufunc.c: a ufunc
kernel run with numpy's warnings off; _native_tensor.c: an op output's Tensor object).

Everything else about the package is in pyproject.toml. The extension is `optional`: without
a C compiler (or Python's headers) the build warns and goes on, and fake_torch runs its
pure-Python book (fake_torch/_simulated/_allocator_book.py) and door
(fake_torch/_simulated/_dispatch.py); `python -m fake_torch bench` says which.
"""

from setuptools import Extension, setup  # type: ignore[import-untyped]

setup(ext_modules=[Extension("fake_torch._simulated._native",
                             ["fake_torch/_simulated/_native.c",
                              "fake_torch/_simulated/_native_storage.c",
                              "fake_torch/_simulated/_native_lock.c",
                              "fake_torch/_simulated/_native_door.c",
                              "fake_torch/_simulated/_native_rows.c",
                              "fake_torch/_simulated/_native_ufunc.c",
                              "fake_torch/_simulated/_native_tensor.c"],
                             depends=["fake_torch/_simulated/_native.h"], optional=True)])

"""torch.utils.cpp_extension: compiling C++/CUDA extensions at run time. fake_torch cannot
build or load native code: load and load_inline raise NotImplementedError when called."""

from __future__ import annotations

from typing import Any

__all__ = ["load", "load_inline"]


def load(name: str, sources: Any, extra_cflags: Any = None, extra_cuda_cflags: Any = None,
         extra_sycl_cflags: Any = None, extra_ldflags: Any = None,
         extra_include_paths: Any = None, build_directory: Any = None, verbose: bool = False,
         with_cuda: Any = None, with_sycl: Any = None, is_python_module: bool = True,
         is_standalone: bool = False, keep_intermediates: bool = True) -> Any:
    """Compile and load an extension from source files: not emulated."""
    raise NotImplementedError(
        f"torch.utils.cpp_extension.load({name!r}) is not emulated by fake_torch: it compiles "
        "and loads native C++/CUDA code, which a numpy simulation cannot run")


def load_inline(name: str, cpp_sources: Any, cuda_sources: Any = None,
                sycl_sources: Any = None, functions: Any = None, extra_cflags: Any = None,
                extra_cuda_cflags: Any = None, extra_sycl_cflags: Any = None,
                extra_ldflags: Any = None, extra_include_paths: Any = None,
                build_directory: Any = None, verbose: bool = False, with_cuda: Any = None,
                with_sycl: Any = None, is_python_module: bool = True,
                with_pytorch_error_handling: bool = True, keep_intermediates: bool = True,
                use_pch: bool = False, no_implicit_headers: bool = False) -> Any:
    """Compile and load an extension from source strings: not emulated."""
    raise NotImplementedError(
        f"torch.utils.cpp_extension.load_inline({name!r}) is not emulated by fake_torch: it "
        "compiles and loads native C++/CUDA code, which a numpy simulation cannot run")

"""Make fake_torch answer to `import torch` in every Python process started with this folder on
PYTHONPATH (tests/test_vllm_compile_tests.py puts it there), including the fresh interpreters
that vLLM's tests start per test (`create_new_process_for_each_test("spawn")` runs
`sys.executable -c ...` with the parent's PYTHONPATH).

Python imports `sitecustomize` at start-up (the `site` module), before any user code. This one:
  1. calls fake_torch.install(), so `torch`, `torch.nn`, ... are fake_torch's modules;
  2. when VLLM_PATH is set, puts that folder (an unpacked vLLM wheel) on sys.path and installs
     tests/vllm/standins (the stand-ins for vLLM's compiled CUDA kernels), then makes vLLM's
     current_platform its own NonNvmlCudaPlatform, as tests/test_vllm_files.py does.
A failure here is printed and re-raised: a half-installed torch would fail later and obscurely.
"""

import importlib.util
import os
import sys
from pathlib import Path


def _install() -> None:
    import fake_torch

    fake_torch.install()
    tree = os.environ.get("VLLM_PATH")
    if not tree:
        return
    if tree not in sys.path:
        sys.path.insert(0, tree)
    # the stand-ins under a private name: this folder's parent is not put on sys.path
    path = Path(__file__).resolve().parent.parent / "standins" / "__init__.py"
    spec = importlib.util.spec_from_file_location(  # a package: it imports its .kernels
        "_fake_torch_vllm_standins", path, submodule_search_locations=[str(path.parent)])
    assert spec is not None and spec.loader is not None, path
    standins = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = standins
    spec.loader.exec_module(standins)
    standins.install()
    standins.use_cuda_platform()


try:
    _install()
except BaseException:
    print("tests/vllm/site/sitecustomize.py: installing fake_torch as torch failed",
          file=sys.stderr)
    raise

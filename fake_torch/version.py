"""torch.version: the build fake_torch stands in for: torch 2.13.0 for CUDA.

`__version__` carries the local label "+fake" where a real wheel names its build variant
("2.13.0+cpu", "2.13.0+cu130"): version checks read the release, 2.13.0, as torch's; the label
tells a person (and `"+fake" in torch.__version__`, code) that this is not a real build. `cuda`
is a version string because the simulated device is a CUDA GPU (code asks `torch.version.cuda`
to tell CUDA from ROCm); it is the CUDA of torch 2.13's default wheels.
"""

__all__ = ["__version__", "cuda", "debug", "git_version", "hip", "rocm", "xpu"]

__version__ = "2.13.0+fake"
debug = False
cuda: str | None = "13.0"
git_version = "Unknown"  # torch's value for a build made outside a git checkout
hip: str | None = None
rocm: str | None = None
xpu: str | None = None

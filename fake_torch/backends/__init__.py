"""torch.backends: the flags runner code sets and reads (TF32, cuDNN) and what was built.

The flags are stored and read back, as torch's are; fake_torch's numpy kernels compute at each
dtype's own precision whatever they say (TF32 rounding and cuDNN algorithm choice are not
simulated), as torch's CPU kernels ignore them too.
"""

from fake_torch.backends import cpu as cpu
from fake_torch.backends import cuda as cuda
from fake_torch.backends import cudnn as cudnn
from fake_torch.backends import mha as mha
from fake_torch.backends import mps as mps

__all__: list[str] = []

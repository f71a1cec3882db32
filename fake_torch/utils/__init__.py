"""torch.utils: the private helpers model-runner code imports (`_pytree`, `_device`)."""

from fake_torch.utils import _device as _device
from fake_torch.utils import _python_dispatch as _python_dispatch
from fake_torch.utils import _pytree as _pytree

__all__: list[str] = []

"""torch.utils: the private helpers model-runner code imports (`_pytree`, `_device`), and
`data` (its dataset base classes)."""

from fake_torch.utils import _device as _device
from fake_torch.utils import _python_dispatch as _python_dispatch
from fake_torch.utils import _pytree as _pytree
from fake_torch.utils import data as data

__all__: list[str] = []

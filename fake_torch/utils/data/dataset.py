"""Dataset and IterableDataset as torch defines them (abstract bases, generic in the sample
type), get_worker_info, and DataLoader, which is not emulated."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Generic, NoReturn, TypeVar

_T_co = TypeVar("_T_co", covariant=True)


class Dataset(Generic[_T_co]):
    """A map from keys to samples: subclasses define __getitem__ (and usually __len__)."""

    def __getitem__(self, index: Any) -> _T_co:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset[_T_co]) -> NoReturn:
        raise NotImplementedError("torch.utils.data.ConcatDataset (Dataset + Dataset) is not "
                                  "emulated by fake_torch")


class IterableDataset(Dataset[_T_co], Iterable[_T_co]):
    """A stream of samples: subclasses define __iter__ (abstract, Iterable's: a subclass
    without one cannot be instantiated)."""

    def __add__(self, other: Dataset[_T_co]) -> NoReturn:
        raise NotImplementedError("torch.utils.data.ChainDataset (IterableDataset + "
                                  "IterableDataset) is not emulated by fake_torch")


def get_worker_info() -> None:
    """The DataLoader worker this runs in: None, as in torch's main process (fake_torch starts
    no worker processes)."""
    return None


class DataLoader:
    """Not emulated: constructing one raises NotImplementedError."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError("torch.utils.data.DataLoader is not emulated by fake_torch "
                                  "(it runs model code, not input pipelines)")

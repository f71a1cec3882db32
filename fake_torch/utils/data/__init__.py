"""torch.utils.data: the dataset base classes that model code subclasses at import time
(llama2.c's tinystories.py defines an IterableDataset). fake_torch runs no data-loading worker
processes: get_worker_info() is None, as in torch's main process, and DataLoader refuses."""

from fake_torch.utils.data.dataset import DataLoader, Dataset, IterableDataset, get_worker_info

__all__ = ["DataLoader", "Dataset", "IterableDataset", "get_worker_info"]

"""torch.distributed.checkpoint.hf_storage: the names, so code importing them loads.
Distributed checkpointing (planning reads and writes across ranks) is not emulated by fake_torch:
making a reader or writer raises NotImplementedError naming it."""

from __future__ import annotations

__all__ = ["HuggingFaceStorageReader", "HuggingFaceStorageWriter"]


class HuggingFaceStorageReader:
    """Reads a Hugging Face safetensors checkpoint for torch.distributed.checkpoint."""

    def __init__(self, path: str, thread_count: int = 1) -> None:
        raise NotImplementedError("torch.distributed.checkpoint.hf_storage."
                                  "HuggingFaceStorageReader: torch.distributed.checkpoint is "
                                  "not emulated by fake_torch")


class HuggingFaceStorageWriter:
    """Writes a Hugging Face safetensors checkpoint for torch.distributed.checkpoint."""

    def __init__(self, path: str, fqn_to_index_mapping: dict[str, int] | None = None,
                 thread_count: int = 1, save_distributed: bool = False,
                 enable_consolidation: bool = False, thread_count_consolidation: int = 1) -> None:
        raise NotImplementedError("torch.distributed.checkpoint.hf_storage."
                                  "HuggingFaceStorageWriter: torch.distributed.checkpoint is "
                                  "not emulated by fake_torch")

"""torch.distributed.FileStore: a store kept in a file that every process opening the same path
shares (the `file://` init method's store).

The file holds a pickle of the key -> bytes dict. Each operation takes an exclusive `flock` on
the file, reads the dict, runs Store's own logic on it and writes it back when it changed; a
wait for a missing key releases the lock and polls. So FileStore reuses HashStore's semantics
with the file as the `_data` and the lock as the `_cond`.

    store = FileStore("/tmp/rendezvous", 2)   # in each of two processes
    store.set("k", "v")                        # the other process's get("k") reads b'v'
"""

from __future__ import annotations

import fcntl
import os
import pickle
import time
from datetime import timedelta
from types import TracebackType

from fake_torch.distributed._store import DistStoreError, Store, check_key

__all__ = ["FileStore"]

_USERS = "__fake_torch_filestore_users"  # c10d's FileStore keeps one such counter key too
_POLL_S = 0.005


class _FileLock:
    """The condition Store's methods take: entering locks the file and loads its dict into the
    store's `_data`; leaving writes it back (when changed) and unlocks. `wait` polls."""

    def __init__(self, store: FileStore) -> None:
        self._store = store
        self._fd = -1
        self._loaded: dict[str, bytes] = {}

    def __enter__(self) -> _FileLock:
        self._fd = os.open(self._store.path, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        size = os.fstat(self._fd).st_size
        data = os.pread(self._fd, size, 0) if size else b""
        self._loaded = pickle.loads(data) if data else {}
        self._store._data = dict(self._loaded)
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            if self._store._data != self._loaded:
                data = pickle.dumps(self._store._data)
                os.ftruncate(self._fd, 0)
                os.pwrite(self._fd, data, 0)
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)

    def notify_all(self) -> None:
        """Other processes poll: nothing to wake."""

    def wait(self, timeout: float | None) -> None:
        """Let other processes write for a moment, then read the file again."""
        self.__exit__(None, None, None)
        time.sleep(_POLL_S if timeout is None else max(0.0, min(_POLL_S, timeout)))
        self.__enter__()


class FileStore(Store):
    """A store in the file `file_name`, shared by every process that opens it."""

    def __init__(self, file_name: str, world_size: int = -1) -> None:
        super().__init__()
        self.path = file_name
        self._world_size = world_size
        self._data = {}
        self._cond = _FileLock(self)  # type: ignore[assignment]  # (duck-typed condition)
        self.add(_USERS, 1)

    def get(self, key: str) -> bytes:
        key = check_key(key, "get")
        try:
            self._wait_for([key], self._timeout)
        except DistStoreError:
            ms = int(self._timeout.total_seconds() * 1000)
            raise RuntimeError(f"Timeout waiting for key: {key} after {ms} ms") from None
        with self._cond:
            return self._data[key]

    def wait(self, keys: list[str], timeout: timedelta | None = None) -> None:
        try:
            super().wait(keys, timeout)
        except DistStoreError as e:
            raise RuntimeError(str(e)) from None

    def delete_key(self, key: str) -> bool:
        """Delete `key`: True, whether it was there or not (c10d's FileStore says so)."""
        super().delete_key(key)
        return True

    def has_extended_api(self) -> bool:
        """c10d's FileStore says False (its multi_get/compare_set are the base class's)."""
        return False

    def list_keys(self) -> list[str]:
        return [k for k in super().list_keys() if k != _USERS]


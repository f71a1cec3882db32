"""torch.distributed's key-value stores kept in this process: `Store` (the interface),
`HashStore` (a dict guarded by a condition) and `PrefixStore` (keys under "prefix/" of another
store). The stores other processes reach are TCPStore (_tcp_store.py, a server on the loopback
interface) and FileStore (_file_store.py, a file).

    store = HashStore()
    store.set("k", "v"); store.get("k")        # b'v'
    PrefixStore("pg", store).set("k", "w")     # the store now holds "pg/k"

Values are bytes (a str is stored UTF-8 encoded), as c10d's. A read of a key nobody has set
waits, on a condition other threads' writes wake, for the store's timeout, then raises
torch's DistStoreError("Wait timeout").
"""

from __future__ import annotations

import threading
import time
from datetime import timedelta
from typing import Any

__all__ = ["DistError", "DistNetworkError", "DistStoreError", "HashStore", "PrefixStore",
           "Store"]

DEFAULT_STORE_TIMEOUT = timedelta(seconds=300)  # c10d's Store::kDefaultTimeout


class DistError(RuntimeError):
    """A torch.distributed error (c10::DistError)."""


class DistStoreError(DistError):
    """A store operation failed: most often, a key did not appear before the timeout."""


class DistNetworkError(DistError):
    """A store could not connect or listen (c10::DistNetworkError)."""


def check_key(key: Any, fn: str) -> str:
    if not isinstance(key, str):
        raise TypeError(f"{fn}(): incompatible function arguments. The following argument "
                        "types are supported:\n    key: str")
    return key


def check_value(value: Any, fn: str) -> bytes:
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    raise TypeError(f"{fn}(): incompatible function arguments. The following argument types "
                    "are supported:\n    value: str | bytes")


class Store:
    """The store interface (torch._C._distributed_c10d.Store): `set`/`get`/`add`/`wait`/...;
    the subclasses hold the keys."""

    def __init__(self) -> None:
        self._timeout = DEFAULT_STORE_TIMEOUT

    # the subclasses' storage: `_data` (a dict) guarded by `_cond`
    _data: dict[str, bytes]
    _cond: threading.Condition

    @property
    def timeout(self) -> timedelta:
        """How long `get`/`wait` wait for a missing key."""
        return self._timeout

    def set_timeout(self, timeout: timedelta) -> None:
        """Set the default timeout of `get` and `wait`."""
        self._timeout = timeout

    def set(self, key: str, value: str | bytes) -> None:
        """Store `value` under `key`, replacing what was there."""
        self._set(check_key(key, "set"), check_value(value, "set"))

    def get(self, key: str) -> bytes:
        """`key`'s value; waits up to the timeout for it to be set."""
        key = check_key(key, "get")
        self._wait_for([key], self._timeout)
        with self._cond:
            return self._data[key]

    def add(self, key: str, amount: int) -> int:
        """Add `amount` to the integer stored under `key` (0 when absent); the new value."""
        key = check_key(key, "add")
        with self._cond:
            old = self._data.get(key, b"0")
            try:
                value = int(old) + int(amount)
            except ValueError:
                raise ValueError("stoll") from None  # c10d parses the value with std::stoll
            self._data[key] = str(value).encode()
            self._cond.notify_all()
            return value

    def append(self, key: str, value: str | bytes) -> None:
        """Append `value` to `key`'s value (set it when absent)."""
        key, data = check_key(key, "append"), check_value(value, "append")
        with self._cond:
            self._data[key] = self._data.get(key, b"") + data
            self._cond.notify_all()

    def compare_set(self, key: str, expected_value: str | bytes,
                    desired_value: str | bytes) -> bytes:
        """Set `key` to `desired_value` if it holds `expected_value` (or is absent and
        `expected_value` is empty); returns the value `key` holds afterwards, or
        `expected_value` when `key` is absent and nothing was set."""
        key = check_key(key, "compare_set")
        expected = check_value(expected_value, "compare_set")
        desired = check_value(desired_value, "compare_set")
        with self._cond:
            current = self._data.get(key)
            if current is None:
                if expected:
                    return expected
            elif current != expected:
                return current
            self._data[key] = desired
            self._cond.notify_all()
            return desired

    def check(self, keys: list[str]) -> bool:
        """Whether every key in `keys` is set (no waiting)."""
        names = [check_key(k, "check") for k in keys]
        with self._cond:
            return all(k in self._data for k in names)

    def delete_key(self, key: str) -> bool:
        """Delete `key`; whether it was there."""
        key = check_key(key, "delete_key")
        with self._cond:
            return self._data.pop(key, None) is not None

    def num_keys(self) -> int:
        """How many keys the store holds."""
        with self._cond:
            return len(self._data)

    def multi_get(self, keys: list[str]) -> list[bytes]:
        """The values of `keys`, each waited for as `get` waits."""
        return [self.get(k) for k in keys]

    def multi_set(self, keys: list[str], values: list[str | bytes]) -> None:
        """`set` each key to its value."""
        for k, v in zip(keys, values, strict=True):
            self.set(k, v)

    def wait(self, keys: list[str], timeout: timedelta | None = None) -> None:
        """Block until every key in `keys` is set, or raise DistStoreError after `timeout`
        (None: the store's timeout)."""
        self._wait_for([check_key(k, "wait") for k in keys],
                       self._timeout if timeout is None else timeout)

    def has_extended_api(self) -> bool:
        """Whether the store has append/multi_get/multi_set/compare_set: True."""
        return True

    def list_keys(self) -> list[str]:
        """Every key the store holds."""
        with self._cond:
            return list(self._data)

    # --- storage, for the subclasses to share ---------------------------------------------

    def _set(self, key: str, value: bytes) -> None:
        with self._cond:
            self._data[key] = value
            self._cond.notify_all()

    def _timeout_text(self, keys: list[str], timeout: timedelta) -> str:
        return "Wait timeout"

    def _wait_for(self, keys: list[str], timeout: timedelta) -> None:
        seconds = timeout.total_seconds()
        deadline = time.monotonic() + seconds if seconds > 0 else None  # 0: wait forever

        def ready() -> bool:
            return all(k in self._data for k in keys)

        with self._cond:
            while not ready():
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise DistStoreError(self._timeout_text(keys, timeout))
                self._cond.wait(left)


class HashStore(Store):
    """An in-memory store of this process (thread-safe)."""

    def __init__(self) -> None:
        super().__init__()
        self._data = {}
        self._cond = threading.Condition()


class PrefixStore(Store):
    """`store`'s keys under `prefix + "/"`: `PrefixStore("a", s).set("k", v)` sets "a/k" in s."""

    def __init__(self, prefix: str, store: Store) -> None:
        super().__init__()
        if not isinstance(store, Store):
            raise TypeError("__init__(): incompatible constructor arguments. The following "
                            "argument types are supported:\n    1. (prefix: str, store: "
                            "torch._C._distributed_c10d.Store)")
        self._prefix, self._store = prefix, store

    @property
    def underlying_store(self) -> Store:
        """The store the keys go to."""
        return self._store

    @property
    def timeout(self) -> timedelta:
        return self._store.timeout

    def set_timeout(self, timeout: timedelta) -> None:
        self._store.set_timeout(timeout)

    def _wrap(self, key: str) -> str:
        return f"{self._prefix}/{key}"

    def set(self, key: str, value: str | bytes) -> None:
        self._store.set(self._wrap(check_key(key, "set")), value)

    def get(self, key: str) -> bytes:
        return self._store.get(self._wrap(check_key(key, "get")))

    def add(self, key: str, amount: int) -> int:
        return self._store.add(self._wrap(check_key(key, "add")), amount)

    def append(self, key: str, value: str | bytes) -> None:
        self._store.append(self._wrap(check_key(key, "append")), value)

    def compare_set(self, key: str, expected_value: str | bytes,
                    desired_value: str | bytes) -> bytes:
        return self._store.compare_set(self._wrap(check_key(key, "compare_set")), expected_value,
                                       desired_value)

    def check(self, keys: list[str]) -> bool:
        return self._store.check([self._wrap(check_key(k, "check")) for k in keys])

    def delete_key(self, key: str) -> bool:
        return self._store.delete_key(self._wrap(check_key(key, "delete_key")))

    def num_keys(self) -> int:
        """The underlying store's key count (c10d's PrefixStore does not filter by prefix)."""
        return self._store.num_keys()

    def wait(self, keys: list[str], timeout: timedelta | None = None) -> None:
        self._store.wait([self._wrap(check_key(k, "wait")) for k in keys], timeout)

    def list_keys(self) -> list[str]:
        start = self._wrap("")
        return [k[len(start):] for k in self._store.list_keys() if k.startswith(start)]


"""torch.distributed's key-value stores, in this one process: `HashStore` (a dict), `TCPStore`
(a HashStore registered under its host:port, so a client made in this process with the same
address reaches the master's keys) and `PrefixStore` (keys under "prefix/" of another store).

    store = TCPStore("127.0.0.1", 29500, 1, is_master=True)
    store.set("k", "v"); store.get("k")        # b'v'
    PrefixStore("pg", store).set("k", "w")     # the master now holds "pg/k"

Values are bytes (a str is stored UTF-8 encoded), as c10d's. A read of a key nobody has set
waits, on a condition other threads' writes wake, for the store's timeout, then raises
torch's DistStoreError("Wait timeout"). Nothing is sent over a network: a TCPStore client whose
master is not in this process would be talking to another process, which fake_torch does not
emulate, so it raises NotImplementedError.
"""

from __future__ import annotations

import threading
import time
import weakref
from datetime import timedelta
from typing import Any

__all__ = ["DistError", "DistNetworkError", "DistStoreError", "HashStore", "PrefixStore",
           "Store", "TCPStore"]

_DEFAULT_STORE_TIMEOUT = timedelta(seconds=300)  # c10d's Store::kDefaultTimeout


class DistError(RuntimeError):
    """A torch.distributed error (c10::DistError)."""


class DistStoreError(DistError):
    """A store operation failed: most often, a key did not appear before the timeout."""


class DistNetworkError(DistError):
    """A store could not connect or listen (c10::DistNetworkError)."""


def _key(key: Any, fn: str) -> str:
    if not isinstance(key, str):
        raise TypeError(f"{fn}(): incompatible function arguments. The following argument "
                        "types are supported:\n    key: str")
    return key


def _value(value: Any, fn: str) -> bytes:
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
        self._timeout = _DEFAULT_STORE_TIMEOUT

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
        self._set(_key(key, "set"), _value(value, "set"))

    def get(self, key: str) -> bytes:
        """`key`'s value; waits up to the timeout for it to be set."""
        key = _key(key, "get")
        self._wait_for([key], self._timeout)
        with self._cond:
            return self._data[key]

    def add(self, key: str, amount: int) -> int:
        """Add `amount` to the integer stored under `key` (0 when absent); the new value."""
        key = _key(key, "add")
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
        key, data = _key(key, "append"), _value(value, "append")
        with self._cond:
            self._data[key] = self._data.get(key, b"") + data
            self._cond.notify_all()

    def compare_set(self, key: str, expected_value: str | bytes,
                    desired_value: str | bytes) -> bytes:
        """Set `key` to `desired_value` if it holds `expected_value` (or is absent and
        `expected_value` is empty); returns the value `key` holds afterwards, or
        `expected_value` when `key` is absent and nothing was set."""
        key = _key(key, "compare_set")
        expected = _value(expected_value, "compare_set")
        desired = _value(desired_value, "compare_set")
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
        names = [_key(k, "check") for k in keys]
        with self._cond:
            return all(k in self._data for k in names)

    def delete_key(self, key: str) -> bool:
        """Delete `key`; whether it was there."""
        key = _key(key, "delete_key")
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
        self._wait_for([_key(k, "wait") for k in keys],
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


# the live masters of this process, as the ports they listen on (freed when a master dies)
_servers: weakref.WeakValueDictionary[tuple[str, int], TCPStore] = weakref.WeakValueDictionary()
_servers_lock = threading.Lock()


class TCPStore(Store):
    """A store served at `host_name:port`. The master (`is_master=True`) holds the keys; a
    client made in this process with the same address shares them. `port=0` picks a free
    port, as the OS would; `port` then reads it."""

    def __init__(self, host_name: str, port: int, world_size: int | None = None,
                 is_master: bool = False, timeout: timedelta = _DEFAULT_STORE_TIMEOUT,
                 wait_for_workers: bool = True, multi_tenant: bool = False,
                 master_listen_fd: int | None = None, use_libuv: bool = True) -> None:
        super().__init__()
        if not 0 <= port < 2**16:
            raise ValueError(f"port must have value from 0 to 65535 but was {port}.")
        self._host, self._libuv = host_name, use_libuv
        self._timeout = timeout
        with _servers_lock:
            if is_master:
                if port == 0:
                    port = next(p for p in range(29500, 2**16) if (host_name, p) not in _servers)
                master = _servers.get((host_name, port))
                if master is not None and not multi_tenant:
                    raise DistNetworkError(
                        "The server socket has failed to listen on any local network address. "
                        f"port: {port}, useIpv6: false, code: -98, name: EADDRINUSE, "
                        "message: address already in use")
                if master is None:
                    master = self
                    self._data, self._cond = {}, threading.Condition()
                    _servers[(host_name, port)] = self
            else:
                master = _servers.get((host_name, port))
                if master is None:
                    raise NotImplementedError(
                        f"torch.distributed.TCPStore({host_name!r}, {port}, is_master=False): "
                        "no TCPStore master serves that address in this process, and fake_torch "
                        "does not emulate a store in another process")
        self._port = port
        self._data, self._cond = master._data, master._cond
        if world_size is not None and world_size > 1 and wait_for_workers:
            raise NotImplementedError(
                f"torch.distributed.TCPStore(world_size={world_size}, wait_for_workers=True): "
                "fake_torch runs one process; no other worker would ever join")

    def _timeout_text(self, keys: list[str], timeout: timedelta) -> str:
        # the server keeps keys under "/" and says which it waited for
        ms = int(timeout.total_seconds() * 1000)
        return f"wait timeout after {ms}ms, keys: {', '.join('/' + k for k in keys)}"

    @property
    def host(self) -> str:
        """The host name the store was made with."""
        return self._host

    @property
    def port(self) -> int:
        """The port the store serves on."""
        return self._port

    @property
    def libuvBackend(self) -> bool:  # torch's name
        """Whether the server runs on libuv (the `use_libuv` it was made with)."""
        return self._libuv


class PrefixStore(Store):
    """`store`'s keys under `prefix + "/"`: `PrefixStore("a", s).set("k", v)` sets "a/k" in s."""

    def __init__(self, prefix: str, store: Store) -> None:
        super().__init__()
        if not isinstance(store, Store):
            raise TypeError("__init__(): incompatible constructor arguments. The following "
                            "argument types are supported:\n    1. (prefix: str, store: "
                            "torch._C._distributed_c10d.Store)")
        self._prefix, self._store = prefix, store
        self._data, self._cond = store._data, store._cond

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
        self._store.set(self._wrap(_key(key, "set")), value)

    def get(self, key: str) -> bytes:
        return self._store.get(self._wrap(_key(key, "get")))

    def add(self, key: str, amount: int) -> int:
        return self._store.add(self._wrap(_key(key, "add")), amount)

    def append(self, key: str, value: str | bytes) -> None:
        self._store.append(self._wrap(_key(key, "append")), value)

    def compare_set(self, key: str, expected_value: str | bytes,
                    desired_value: str | bytes) -> bytes:
        return self._store.compare_set(self._wrap(_key(key, "compare_set")), expected_value,
                                       desired_value)

    def check(self, keys: list[str]) -> bool:
        return self._store.check([self._wrap(_key(k, "check")) for k in keys])

    def delete_key(self, key: str) -> bool:
        return self._store.delete_key(self._wrap(_key(key, "delete_key")))

    def num_keys(self) -> int:
        """The underlying store's key count (c10d's PrefixStore does not filter by prefix)."""
        return self._store.num_keys()

    def wait(self, keys: list[str], timeout: timedelta | None = None) -> None:
        self._store.wait([self._wrap(_key(k, "wait")) for k in keys], timeout)

    def list_keys(self) -> list[str]:
        start = self._wrap("")
        return [k[len(start):] for k in self._store.list_keys() if k.startswith(start)]


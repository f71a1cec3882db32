"""torch.distributed.TCPStore: a key-value server on a TCP port, and its clients in any process.

The master (`is_master=True`) starts the server in a thread of its process, then connects to it
as every other client does: each request is one framed message on a loopback socket, answered
when the server has done it (a `get` or `wait` of a missing key is answered when the key is set
or, after the timeout, with torch's DistStoreError). A master made with a `world_size` waits
for that many clients to join (itself included), as c10d's does.

    master = TCPStore("127.0.0.1", 0, 2, is_master=True)   # port 0: the OS picks one
    client = TCPStore("127.0.0.1", master.port, 2)          # (in another process)
    client.set("k", "v"); master.get("k")                    # b'v'

Frames: 8 bytes of length (big-endian), then a pickle of (command, args) or of the answer
(("ok", value) or ("err", error class name, text)). Only this package's clients talk to it.
"""

from __future__ import annotations

import pickle
import socket
import socketserver
import struct
import threading
import time
import weakref
from datetime import timedelta
from typing import Any

from fake_torch.distributed._store import (
    DEFAULT_STORE_TIMEOUT,
    DistError,
    DistNetworkError,
    DistStoreError,
    HashStore,
    Store,
    check_key,
    check_value,
)

__all__ = ["TCPStore"]

_JOINED = "__fake_torch_tcpstore_joined"  # the server's count of clients that joined
_ERRORS: dict[str, type[Exception]] = {
    "DistStoreError": DistStoreError, "DistNetworkError": DistNetworkError,
    "DistError": DistError, "ValueError": ValueError, "RuntimeError": RuntimeError}
_DROPPED = ("Failed to recv, got 0 bytes. Connection was likely closed. Did the remote server "
            "shutdown or crash?")


def _send(sock: socket.socket, obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    sock.sendall(struct.pack(">Q", len(data)) + data)


def _recv_exactly(sock: socket.socket, n: int) -> bytes:
    parts, left = [], n
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            raise ConnectionError(_DROPPED)
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def _recv(sock: socket.socket) -> Any:
    (n,) = struct.unpack(">Q", _recv_exactly(sock, 8))
    return pickle.loads(_recv_exactly(sock, n))


# --- the server ---------------------------------------------------------------------------------

class _ServerKeys(HashStore):
    """The server's keys: a HashStore whose timeout names the keys as c10d's server does."""

    def _timeout_text(self, keys: list[str], timeout: timedelta) -> str:
        ms = int(timeout.total_seconds() * 1000)
        return f"wait timeout after {ms}ms, keys: {', '.join('/' + k for k in keys)}"


class _Handler(socketserver.BaseRequestHandler):
    """One client's connection: requests answered in order until the client hangs up."""

    server: _Server

    def handle(self) -> None:
        keys = self.server.keys
        while True:
            try:
                command, args = _recv(self.request)
            except (ConnectionError, OSError, EOFError, struct.error):
                return
            try:
                if command in ("get", "wait", "multi_get"):  # these carry their timeout
                    *rest, ms = args
                    names = rest[0] if command != "get" else [rest[0]]
                    keys._wait_for(names, timedelta(milliseconds=ms))
                    value: Any = None if command == "wait" else keys.multi_get(names)
                    if command == "get":
                        value = value[0]
                else:
                    value = getattr(keys, command)(*args)
            except ValueError:  # c10d's server drops a client whose `add` it cannot parse
                return
            except DistError as e:
                _send(self.request, ("err", type(e).__name__, str(e)))
                continue
            _send(self.request, ("ok", value))


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True  # a client's thread ends with the process
    allow_reuse_address = True  # (a port in TIME_WAIT is free; one with a listener is not)

    def __init__(self, address: tuple[str, int]) -> None:
        self.keys = _ServerKeys()
        self.keys.set_timeout(timedelta(0))
        super().__init__(address, _Handler)


def _listen(host: str, port: int) -> _Server:
    """Start a server on host:port in a daemon thread; torch's DistNetworkError when the port
    is taken."""
    try:
        server = _Server((host, port))
    except OSError as e:
        raise DistNetworkError(
            "The server socket has failed to listen on any local network address. "
            f"port: {port}, useIpv6: false, code: -{e.errno}, name: EADDRINUSE, "
            "message: address already in use") from None
    threading.Thread(target=server.serve_forever, name=f"TCPStore:{server.server_address[1]}",
                     daemon=True).start()
    return server


def _stop(server: _Server) -> None:
    server.shutdown()
    server.server_close()


# --- the client ---------------------------------------------------------------------------------

class TCPStore(Store):
    """A store served at `host_name:port` (see the module's docstring). `port=0` on the master
    lets the OS pick a free port; `port` then reads it."""

    def __init__(self, host_name: str, port: int, world_size: int | None = None,
                 is_master: bool = False, timeout: timedelta = DEFAULT_STORE_TIMEOUT,
                 wait_for_workers: bool = True, multi_tenant: bool = False,
                 master_listen_fd: int | None = None, use_libuv: bool = True) -> None:
        super().__init__()
        if not 0 <= port < 2**16:
            raise ValueError(f"port must have value from 0 to 65535 but was {port}.")
        if master_listen_fd is not None:
            raise NotImplementedError("torch.distributed.TCPStore(master_listen_fd=...): "
                                      "fake_torch's server opens its own socket")
        self._host, self._libuv, self._timeout = host_name, use_libuv, timeout
        self._lock = threading.Lock()  # one request at a time on this client's socket
        if is_master:
            server = _tenants.get((host_name, port)) if multi_tenant else None
            if server is None:
                server = _listen(host_name, port)
                if multi_tenant:
                    _tenants[(host_name, server.server_address[1])] = server
                else:  # the server lives as long as its master
                    weakref.finalize(self, _stop, server)
            self._server: _Server | None = server
            port = int(server.server_address[1])
        else:
            self._server = None
        self._port = port
        self._sock = self._connect(timeout)
        joined = int(self._call("add", _JOINED, 1))
        if is_master and wait_for_workers and world_size is not None and world_size > 1:
            self._wait_for_workers(joined, world_size, timeout)

    def _connect(self, timeout: timedelta) -> socket.socket:
        """Connect to the server, retrying until `timeout` (the server may start later)."""
        deadline = time.monotonic() + timeout.total_seconds()
        while True:
            try:
                sock = socket.create_connection((self._host, self._port), timeout=1.0)
                sock.settimeout(None)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                return sock
            except OSError:
                if time.monotonic() >= deadline:
                    ms = int(timeout.total_seconds() * 1000)
                    raise DistNetworkError(
                        f"The client socket has timed out after {ms}ms while trying to "
                        f"connect to ({self._host}, {self._port}).") from None
                time.sleep(0.02)

    def _wait_for_workers(self, joined: int, world_size: int, timeout: timedelta) -> None:
        start = time.monotonic()
        deadline = start + timeout.total_seconds()
        while joined < world_size:
            if time.monotonic() >= deadline:
                seconds = round(time.monotonic() - start)
                raise DistStoreError(f"Timed out after {seconds} seconds waiting for clients. "
                                     f"{joined}/{world_size} clients joined.")
            time.sleep(0.01)
            joined = int(self._call("add", _JOINED, 0))

    def _call(self, command: str, *args: Any) -> Any:
        with self._lock:
            try:
                _send(self._sock, (command, args))
                answer = _recv(self._sock)
            except (ConnectionError, OSError) as e:
                raise DistNetworkError(_DROPPED) from e
        if answer[0] == "err":
            raise _ERRORS[answer[1]](answer[2])
        return answer[1]

    def _ms(self, timeout: timedelta | None) -> int:
        return int((self._timeout if timeout is None else timeout).total_seconds() * 1000)

    # --- the Store API, each one request ----------------------------------------------------------

    def set(self, key: str, value: str | bytes) -> None:
        self._call("set", check_key(key, "set"), check_value(value, "set"))

    def get(self, key: str) -> bytes:
        value: bytes = self._call("get", check_key(key, "get"), self._ms(None))
        return value

    def add(self, key: str, amount: int) -> int:
        return int(self._call("add", check_key(key, "add"), int(amount)))

    def append(self, key: str, value: str | bytes) -> None:
        self._call("append", check_key(key, "append"), check_value(value, "append"))

    def compare_set(self, key: str, expected_value: str | bytes,
                    desired_value: str | bytes) -> bytes:
        value: bytes = self._call("compare_set", check_key(key, "compare_set"),
                                  check_value(expected_value, "compare_set"),
                                  check_value(desired_value, "compare_set"))
        return value

    def check(self, keys: list[str]) -> bool:
        return bool(self._call("check", [check_key(k, "check") for k in keys]))

    def delete_key(self, key: str) -> bool:
        return bool(self._call("delete_key", check_key(key, "delete_key")))

    def num_keys(self) -> int:
        """The keys set, plus the server's own count of joined clients (c10d's counts its
        one internal key too)."""
        return int(self._call("num_keys"))

    def multi_get(self, keys: list[str]) -> list[bytes]:
        values: list[bytes] = self._call("multi_get", [check_key(k, "multi_get") for k in keys],
                                         self._ms(None))
        return values

    def multi_set(self, keys: list[str], values: list[str | bytes]) -> None:
        self._call("multi_set", [check_key(k, "multi_set") for k in keys],
                   [check_value(v, "multi_set") for v in values])

    def wait(self, keys: list[str], timeout: timedelta | None = None) -> None:
        self._call("wait", [check_key(k, "wait") for k in keys], self._ms(timeout))

    def list_keys(self) -> list[str]:
        return [k for k in self._call("list_keys") if k != _JOINED]

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


# multi_tenant masters share one server per address in a process (c10d's TCPServer cache)
_tenants: dict[tuple[str, int], _Server] = {}

"""torch.distributed.rendezvous: `rendezvous(url, rank, world_size)` yields (store, rank,
world_size) once, as torch's generator does, for env:// and tcp:// (a TCPStore: rank 0 hosts
the server, the others connect to it) and file:// (a FileStore on the url's path).

    store, rank, world_size = next(rendezvous("tcp://127.0.0.1:29500", 0, 1))
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Iterator
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qsl, urlparse, urlunparse

from fake_torch.distributed._file_store import FileStore
from fake_torch.distributed._store import Store
from fake_torch.distributed._tcp_store import TCPStore
from fake_torch.distributed.constants import default_pg_timeout

__all__ = ["register_rendezvous_handler", "rendezvous"]

_Handler = Any  # (url: str, **kwargs) -> Iterator[tuple[Store, int, int]]


def _error(scheme: str, msg: str) -> ValueError:
    return ValueError(f"Error initializing torch.distributed using {scheme}:// rendezvous: "
                      f"{msg}")


def _query(url: str) -> dict[str, str]:
    return dict(parse_qsl(urlparse(url).query))


def _tcp_handler(url: str, timeout: timedelta = default_pg_timeout,
                 **kwargs: Any) -> Iterator[tuple[Store, int, int]]:
    result, query = urlparse(url), _query(url)
    if result.port is None:
        raise _error("tcp", "port number missing")
    if "rank" not in query:
        raise _error("tcp", "rank parameter missing")
    if "world_size" not in query:
        raise _error("tcp", "world size parameter missing")
    rank, world_size = int(query["rank"]), int(query["world_size"])
    if result.hostname is None:
        raise AssertionError("hostname cannot be None")
    store = TCPStore(result.hostname, result.port, world_size, rank == 0, timeout,
                     multi_tenant=True, use_libuv=query.get("use_libuv", "1") != "0")
    yield store, rank, world_size
    raise RuntimeError("Unable to perform re-rendezvous using tcp:// method")


def _env_handler(url: str, timeout: timedelta = default_pg_timeout,
                 **kwargs: Any) -> Iterator[tuple[Store, int, int]]:
    query = _query(url)

    def env(name: str) -> str:
        value = os.environ.get(name)
        if value is None:
            raise _error("env", f"environment variable {name} expected, but not set")
        return value

    rank = int(query["rank"]) if "rank" in query else int(env("RANK"))
    world_size = int(query["world_size"]) if "world_size" in query else int(env("WORLD_SIZE"))
    addr, port = env("MASTER_ADDR"), int(env("MASTER_PORT"))
    store = TCPStore(addr, port, world_size, rank == 0, timeout, multi_tenant=True)
    yield store, rank, world_size
    raise RuntimeError("Unable to perform re-rendezvous using env:// method")


def _file_handler(url: str, **kwargs: Any) -> Iterator[tuple[Store, int, int]]:
    result, query = urlparse(url), _query(url)
    if not result.path:
        raise _error("file", "path missing")
    if "rank" not in query:
        raise _error("file", "rank parameter missing")
    if "world_size" not in query:
        raise _error("file", "world size parameter missing")
    rank, world_size = int(query["rank"]), int(query["world_size"])
    store = FileStore(result.path, world_size)
    store.set_timeout(kwargs.get("timeout", default_pg_timeout))
    yield store, rank, world_size
    raise RuntimeError("Unable to perform rerendezvous using file:// method")


_handlers: dict[str, _Handler] = {"tcp": _tcp_handler, "env": _env_handler,
                                  "file": _file_handler}


def register_rendezvous_handler(scheme: str, handler: _Handler) -> None:
    """Register `handler(url, **kwargs)`, a generator of (store, rank, world_size), for
    `scheme`:// URLs."""
    if scheme in _handlers:
        raise RuntimeError(f"Rendezvous handler for {scheme}:// already registered")
    _handlers[scheme] = handler


def rendezvous(url: str, rank: int = -1, world_size: int = -1,
               **kwargs: Any) -> Iterator[tuple[Store, int, int]]:
    """A generator of (store, rank, world_size) for `url`; `rank`/`world_size` other than -1
    go into its query, as torch puts them."""
    if not isinstance(url, str | bytes):
        raise RuntimeError(f"`url` must be a string. {type(url)}: {url}")
    if not isinstance(rank, numbers.Integral):
        raise RuntimeError(f"`rank` must be an integer. {rank}")
    if not isinstance(world_size, numbers.Integral):
        raise RuntimeError(f"`world_size` must be an integer. {world_size}")
    text = url.decode() if isinstance(url, bytes) else url
    result = urlparse(text)
    if rank != -1 or world_size != -1:
        query = _query(text)
        if "rank" in query or "world_size" in query:
            raise AssertionError(
                f"The url: {text} has node-specific arguments(rank, world_size) already.")
        if rank != -1:
            query["rank"] = str(rank)
        if world_size != -1:
            query["world_size"] = str(world_size)
        result = result._replace(query="&".join(f"{k}={v}" for k, v in query.items()))
        text = urlunparse(result)
    if result.scheme not in _handlers:
        raise RuntimeError(f"No rendezvous handler for {result.scheme}://")
    handler: Iterator[tuple[Store, int, int]] = _handlers[result.scheme](text, **kwargs)
    return handler

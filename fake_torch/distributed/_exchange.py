"""How the ranks of a group meet inside a collective: through the group's store.

Each collective of a group is numbered (every rank calls a group's collectives in the same
order, as NCCL requires); for collective #k each rank sets the key "k/RANK" to a Post (what it
called, when its stream reached the call, its data), then reads every rank's post. A post that
names another collective, or one that does not come within the group's timeout, raises with the
rank and the collective: NCCL would hang there. A rank entering collective #k deletes its post
of #k-2: every rank has read it (each has posted #k-1, so it had finished #k-2).

Point-to-point messages go under "p2p/SRC-DST/k", numbered per pair; the receiver deletes them.
"""

from __future__ import annotations

import pickle
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from fake_torch.distributed._store import DistNetworkError, Store

__all__ = ["Exchange", "Post"]


@dataclass
class Post:
    """What one rank brings to a collective."""

    rank: int  # in the group
    what: str  # the collective as this rank called it, e.g. "all_reduce(SUM, torch.float32)"
    start_ns: float  # when this rank's stream reached it (its simulated clock)
    data: Any  # numpy arrays or objects (None: this rank sends nothing)


class Exchange:
    """The meeting point of one group's ranks (`rank` of `size`) in `store`."""

    def __init__(self, store: Store, rank: int, size: int, timeout: timedelta,
                 name: str) -> None:
        self.store, self.rank, self.size, self.timeout, self.name = (store, rank, size,
                                                                     timeout, name)
        self.count = 0  # collectives this rank has entered
        self._sent: dict[int, int] = {}  # peer -> messages sent to it
        self._received: dict[int, int] = {}  # peer -> messages received from it
        self.left = False  # this rank left the group (`leave`)

    def collective(self, what: str, data: Any, start_ns: float = 0.0) -> list[Post]:
        """Post `data` for the next collective and return every rank's post, in rank order."""
        self.count += 1
        base = f"{self.count}"
        if self.count > 2:  # everyone has read this rank's post before last: it can go
            self.store.delete_key(f"{self.count - 2}/{self.rank}")
        self.store.set(f"{base}/{self.rank}", pickle.dumps(
            Post(self.rank, what, start_ns, data), protocol=pickle.HIGHEST_PROTOCOL))
        posts = self._read([f"{base}/{r}" for r in range(self.size)], list(range(self.size)),
                           what, f"its collective #{self.count}")
        for post in posts:
            if post.what != what:
                self._linger(f"{base}/failed")  # (rank 0 hosts the store: the others read on)
                raise RuntimeError(
                    f"collective mismatch in process group {self.name!r} at its collective "
                    f"#{self.count}: rank {self.rank} called {what}, but rank {post.rank} "
                    f"called {post.what} (NCCL would hang here)")
        return posts

    def _linger(self, key: str) -> None:
        """Count this rank in `key`; rank 0 waits (within the timeout) for every rank."""
        count = self.store.add(key, 1)
        deadline = time.monotonic() + self.timeout.total_seconds()
        while self.rank == 0 and count < self.size and time.monotonic() < deadline:
            time.sleep(0.005)
            count = self.store.add(key, 0)

    def leave(self) -> None:
        """This rank is done with the group. The rank whose process hosts the store (rank 0 of
        the world) waits, within the timeout, for the others to leave too, so that none loses
        the store while it still reads its last collective's posts. Once only."""
        if not self.left:
            self.left = True
            self._linger("left")

    def _read(self, keys: list[str], ranks: list[int], what: str, where: str) -> list[Post]:
        """The posts under `keys` (one wait for all, one multi_get); a missing one raises after
        the timeout, naming the ranks that never came."""
        start = time.monotonic()
        try:
            self.store.wait(keys, self.timeout)
        except DistNetworkError:
            raise
        except RuntimeError:  # a TCPStore's DistStoreError, a FileStore's RuntimeError
            seconds = time.monotonic() - start
            missing = [str(r) for k, r in zip(keys, ranks, strict=True)
                       if not self.store.check([k])]
            raise RuntimeError(
                f"rank {self.rank} of process group {self.name!r} waited {seconds:.1f} s "
                f"(the group's timeout) in {where}, {what}, for rank {', '.join(missing)}, "
                "which never called it (NCCL would hang here)") from None
        return [pickle.loads(v) for v in self.store.multi_get(keys)]

    def send(self, peer: int, what: str, data: Any) -> None:
        """Leave a message for `peer` (it returns at once)."""
        n = self._sent.get(peer, 0) + 1
        self._sent[peer] = n
        self.store.set(f"p2p/{self.rank}-{peer}/{n}", pickle.dumps(
            Post(self.rank, what, 0.0, data), protocol=pickle.HIGHEST_PROTOCOL))

    def recv_key(self, peer: int) -> str:
        """The key of the next message from `peer` (taken: the next call names the one
        after)."""
        n = self._received.get(peer, 0) + 1
        self._received[peer] = n
        return f"p2p/{peer}-{self.rank}/{n}"

    def recv(self, key: str, peer: int, what: str) -> Post:
        """The message under `key` from `peer`, waited for; its sender must have sent what
        this rank expects to receive."""
        post = self._read([key], [peer], what, "its receive")[0]
        self.store.delete_key(key)
        if post.what != what:
            raise RuntimeError(f"point-to-point mismatch in process group {self.name!r}: rank "
                               f"{self.rank} called {what}, but rank {peer} called {post.what}")
        return post

    def ready(self, key: str) -> bool:
        return self.store.check([key])

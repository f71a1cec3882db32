"""torch._inductor.fx_utils: what graph passes read off FX nodes.

`get_node_storage(node)` names the storage under the tensor a node produced (its meta["val"]),
so a pass can tell whether two nodes' values would share memory: equal ints, same storage.
"""

from __future__ import annotations

from fake_torch._tensor import Tensor, base_array
from fake_torch.fx import Node

__all__ = ["get_node_storage", "get_storage"]


def get_storage(t: Tensor) -> int:
    """An int naming t's storage: the same for every view of one buffer (torch's is the
    address of the StorageImpl, `untyped_storage()._cdata`)."""
    # a cuda tensor's block owner is shared by all its views; a cpu tensor's is its outermost
    # numpy array
    owner: object = t._storage if t._storage is not None else base_array(t._a)
    return id(owner)


def get_node_storage(node: Node) -> int | None:
    """The storage of the tensor in node.meta["val"]; None when the node has no tensor value."""
    value = node.meta.get("val")
    if not isinstance(value, Tensor):
        return None
    return get_storage(value)

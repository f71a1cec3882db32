"""The segment cache: compiled graphs, matched by structure, and their re-specialisation.

A traced graph's "skeleton" is its structure with every int/float literal blanked; a cached entry
serves a new trace with the same skeleton when its input metadata fits (a dynamic dim accepts any
size >= 2) and its literals are equal or dynamic. The entry's graph is then re-specialised: the
args of every node whose literals differ are rewritten in place, in the graph and in every copy
of a node a backend made (split_module copies carry meta["orig"]), so what the backend built
still runs correctly at the new size. Backends must read node.args when they run.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from types import FunctionType, MethodType, ModuleType
from typing import Any

import numpy as np

from fake_torch._tensor import Tensor
from fake_torch.fx import Graph, GraphModule, Node


def structure(graph: Graph) -> tuple[Hashable, tuple[Any, ...], list[int]]:
    """(structure with int/float literals blanked, the literals, each literal's node index)."""
    index = {node: i for i, node in enumerate(graph.nodes)}
    literals: list[Any] = []
    owners: list[int] = []

    def sk(a: Any, owner: int) -> Hashable:
        if isinstance(a, Node):
            return ("n", index[a])
        if isinstance(a, (int, float)) and not isinstance(a, bool):
            literals.append(a)
            owners.append(owner)
            return ("#", type(a) is float)
        if isinstance(a, tuple):
            return (type(a), tuple(sk(x, owner) for x in a))
        if isinstance(a, list):
            return (list, tuple(sk(x, owner) for x in a))
        if isinstance(a, dict):
            return (dict, tuple((k, sk(v, owner)) for k, v in a.items()))
        if isinstance(a, slice):
            return (slice, sk(a.start, owner), sk(a.stop, owner), sk(a.step, owner))
        try:
            hash(a)
        except TypeError:
            return ("obj", id(a))
        return ("c", type(a), a)

    nodes = tuple((n.op, n.target, sk(n.args, i), sk(n.kwargs, i))
                  for i, n in enumerate(graph.nodes))
    return nodes, tuple(literals), owners


def same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and (a == b or (a != a and b != b))


@dataclass
class Meta:
    """A graph input's metadata, as the segment cache matches it."""

    dtype: Any
    device: Any
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    requires_grad: bool

    @classmethod
    def of(cls, t: Tensor) -> Meta:
        return cls(t.dtype, t.device, tuple(t.shape), tuple(t.stride()), t.requires_grad)

    def matches(self, other: Meta, dynamic: frozenset[int], any_size: bool = False) -> bool:
        """Same properties, a dynamic dim of any size >= 2 (any size at all with `any_size`:
        the entry's shape guards were dropped, so torch's graph would take 0 and 1 too)."""
        if (self.dtype is not other.dtype or self.device != other.device
                or self.requires_grad != other.requires_grad
                or len(self.shape) != len(other.shape)):
            return False
        for i, (a, b) in enumerate(zip(self.shape, other.shape, strict=True)):
            if a != b and not (i in dynamic and (b >= 2 or any_size)):
                return False
        if not dynamic:
            return all(s == o or n <= 1 for s, o, n in
                       zip(self.strides, other.strides, self.shape, strict=True))
        return _is_contiguous(self) == _is_contiguous(other)


def _is_contiguous(m: Meta) -> bool:
    expected = 1
    for n, s in zip(reversed(m.shape), reversed(m.strides), strict=True):
        if n != 1 and s != expected:
            return False
        expected *= n
    return True


Spec = dict[int, tuple[tuple[Any, ...], dict[str, Any]]]  # node index -> (args, kwargs)


class SegmentEntry:
    """One compiled graph of a frame, with what it was traced for."""

    def __init__(self, skeleton: Hashable, literals: tuple[Any, ...], owners: list[int],
                 metas: list[Meta], graph: Graph, gm: GraphModule,
                 compiled: Callable[..., Any] | None, dyn_literals: frozenset[int],
                 dyn_dims: list[frozenset[int]]) -> None:
        self.skeleton = skeleton
        self.literals = literals
        self.owners = owners
        self.metas = metas
        self.graph = graph
        self.gm = gm
        self.compiled = compiled
        self.dyn_literals = dyn_literals
        self.dyn_dims = dyn_dims
        self.nodes = list(graph.nodes)
        self.base: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
            (n.args, n.kwargs) for n in self.nodes]
        self.current: Spec = {}
        self._copies: dict[int, list[Node]] | None = None

    def metas_match(self, metas: list[Meta], any_size: bool = False) -> bool:
        return len(metas) == len(self.metas) and all(
            mine.matches(other, dims, any_size)
            for mine, other, dims in zip(self.metas, metas, self.dyn_dims, strict=True))

    def matches(self, literals: tuple[Any, ...], metas: list[Meta]) -> bool:
        return all(same(a, b) or i in self.dyn_literals
                   for i, (a, b) in enumerate(zip(self.literals, literals, strict=True))
                   ) and self.metas_match(metas)

    def specialize(self, fresh: Graph, literals: tuple[Any, ...]) -> Spec:
        """The args of the nodes whose literals differ in `fresh` (same structure)."""
        changed = {self.owners[i] for i, (a, b) in enumerate(zip(self.literals, literals,
                                                                 strict=True))
                   if not same(a, b)}
        if not changed:
            return {}
        fresh_nodes = list(fresh.nodes)
        to_mine = {n: self.nodes[i] for i, n in enumerate(fresh_nodes)}
        spec: Spec = {}
        for i in sorted(changed):
            node = fresh_nodes[i]
            spec[i] = (_map_nodes(node.args, to_mine), _map_nodes(node.kwargs, to_mine))
        return spec

    def apply(self, spec: Spec) -> None:
        """Put `spec`'s args into the nodes (and their copies); the others get their base."""
        if spec is self.current or (not spec and not self.current):
            self.current = spec
            return
        for i in set(self.current) | set(spec):
            args, kwargs = spec.get(i, self.base[i])
            node = self.nodes[i]
            node.args, node.kwargs = args, kwargs
            for copy in self.copies().get(i, ()):
                copy.args = _merge(copy.args, args)
                copy.kwargs = _merge(copy.kwargs, kwargs)
        self.current = spec

    def copies(self) -> dict[int, list[Node]]:
        """Node index -> the copies the backend made of it (found once, after compile)."""
        if self._copies is None:
            index = {n: i for i, n in enumerate(self.nodes)}
            self._copies = {}
            for graph in _reachable_graphs(self.compiled):
                if graph is self.graph:
                    continue
                for node in graph.nodes:
                    orig = node.meta.get("orig")  # (a partition's placeholder has one too)
                    if orig in index and node.op == orig.op and node.target == orig.target:
                        self._copies.setdefault(index[orig], []).append(node)
        return self._copies


def _map_nodes(value: Any, to_mine: dict[Node, Node]) -> Any:
    if isinstance(value, Node):
        return to_mine[value]
    if isinstance(value, tuple):
        items = tuple(_map_nodes(v, to_mine) for v in value)
        return type(value)(*items) if hasattr(value, "_fields") else items
    if isinstance(value, list):
        return [_map_nodes(v, to_mine) for v in value]
    if isinstance(value, dict):
        return {k: _map_nodes(v, to_mine) for k, v in value.items()}
    if isinstance(value, slice):
        return slice(_map_nodes(value.start, to_mine), _map_nodes(value.stop, to_mine),
                     _map_nodes(value.step, to_mine))
    return value


def _merge(old: Any, new: Any) -> Any:
    """A copied node's args with new literals: its own Nodes kept, the rest from `new`."""
    if isinstance(old, Node):
        return old
    if isinstance(old, (tuple, list)) and isinstance(new, (tuple, list)) \
            and len(old) == len(new):
        items = [_merge(o, n) for o, n in zip(old, new, strict=True)]
        if isinstance(old, list):
            return items
        return type(old)(*items) if hasattr(old, "_fields") else tuple(items)
    if isinstance(old, dict) and isinstance(new, dict) and old.keys() == new.keys():
        return {k: _merge(old[k], new[k]) for k in old}
    if isinstance(old, slice) and isinstance(new, slice):
        return slice(_merge(old.start, new.start), _merge(old.stop, new.stop),
                     _merge(old.step, new.step))
    return new


def _reachable_graphs(root: Any, limit: int = 20000) -> list[Graph]:
    """Every fx Graph reachable from a backend's compiled callable (through bound methods,
    closures, partials, modules, containers and object attributes)."""
    graphs: list[Graph] = []
    seen: set[int] = set()
    queue = [root]
    while queue and len(seen) < limit:
        obj = queue.pop()
        if id(obj) in seen or obj is None:
            continue
        seen.add(id(obj))
        if isinstance(obj, Graph):
            graphs.append(obj)
        elif isinstance(obj, (Tensor, np.ndarray, str, bytes, int, float, type, ModuleType,
                              Node)):
            continue
        elif isinstance(obj, MethodType):
            queue += [obj.__self__, obj.__func__]
        elif isinstance(obj, FunctionType):
            for cell in obj.__closure__ or ():
                try:
                    queue.append(cell.cell_contents)
                except ValueError:
                    pass
            queue.extend(obj.__defaults__ or ())
        elif isinstance(obj, functools.partial):
            queue += [obj.func, *obj.args, *obj.keywords.values()]
        elif isinstance(obj, (list, tuple, set, frozenset)):
            queue.extend(obj)
        elif isinstance(obj, dict):
            queue.extend(obj.values())
        else:
            queue.extend(getattr(obj, "__dict__", {}).values())
            for name in getattr(type(obj), "__slots__", ()):
                queue.append(getattr(obj, name, None))
    return graphs


__all__ = ["Meta", "SegmentEntry", "Spec", "same", "structure"]

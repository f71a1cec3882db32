"""torch.utils._pytree: nested containers as a flat list of leaves plus a TreeSpec, and back.

    leaves, spec = tree_flatten({"a": [x, (y, z)], "b": None})   # [x, y, z, None]
    tree_unflatten([2 * v for v in leaves], spec)                # same nesting, new leaves
    tree_map(lambda t: t.cuda(), batch)

Nodes are tuple, list, dict, namedtuples (all of them, as one node type `namedtuple` whose
context is the class), OrderedDict, defaultdict, deque, torch.return_types, and whatever
`register_pytree_node` adds; anything else is a leaf (None too). A dict flattens in insertion
order. The order, the contexts and the TreeSpec's repr are torch's.
"""

from __future__ import annotations

import dataclasses
import types
from collections import OrderedDict, defaultdict, deque, namedtuple
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeAlias

__all__ = [
    "Context", "DumpableContext", "FlattenFn", "FromDumpableContextFn", "LeafSpec", "PyTree",
    "PyTreeSpec", "ToDumpableContextFn", "TreeSpec", "UnflattenFn", "is_namedtuple",
    "is_namedtuple_class", "is_namedtuple_instance", "is_structseq", "is_structseq_class",
    "is_structseq_instance", "key_get", "keystr", "register_dataclass", "register_pytree_node",
    "tree_all", "tree_all_only", "tree_any", "tree_any_only", "tree_flatten",
    "tree_flatten_with_path", "tree_is_leaf", "tree_iter", "tree_leaves",
    "tree_leaves_with_path", "tree_map", "tree_map_", "tree_map_only", "tree_map_only_",
    "tree_map_with_path", "tree_structure", "tree_unflatten",
]

Context = Any
PyTree = Any
DumpableContext = Any
FlattenFn = Callable[[PyTree], tuple[list[Any], Context]]
UnflattenFn = Callable[[Iterable[Any], Context], PyTree]
ToDumpableContextFn = Callable[[Context], DumpableContext]
FromDumpableContextFn = Callable[[DumpableContext], Context]
KeyEntry: TypeAlias = Any  # SequenceKey | MappingKey | GetAttrKey, or a registered type's
KeyPath = tuple[KeyEntry, ...]
FlattenWithKeysFn = Callable[[PyTree], tuple[list[tuple[KeyEntry, Any]], Any]]
IsLeaf = Callable[[PyTree], bool] | None
TypeOrTypes = type[Any] | tuple[type[Any], ...] | types.UnionType


# --- keys: how a leaf is reached from the root ------------------------------------------------

@dataclasses.dataclass(frozen=True)
class SequenceKey:
    """`[idx]` of a tuple or list."""

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"

    def get(self, sequence: Any) -> Any:
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True)
class MappingKey:
    """`[key]` of a dict."""

    key: Any

    def __str__(self) -> str:
        return f"[{self.key!r}]"

    def get(self, mapping: Any) -> Any:
        return mapping[self.key]


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    """`.name` of an object (a namedtuple's field)."""

    name: str

    def __str__(self) -> str:
        return f".{self.name}"

    def get(self, obj: Any) -> Any:
        return getattr(obj, self.name)


def keystr(kp: KeyPath) -> str:
    """A key path as Python would spell the access: `['a'][1].x`."""
    return "".join(str(k) for k in kp)


def key_get(obj: Any, kp: KeyPath) -> Any:
    """The value at key path `kp` inside `obj`."""
    for k in kp:
        obj = k.get(obj)
    return obj


# --- the node registry --------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class NodeDef:
    """How one node type flattens (children, context) and unflattens."""

    type: Any
    flatten_fn: FlattenFn
    unflatten_fn: UnflattenFn
    flatten_with_keys_fn: FlattenWithKeysFn | None = None


SUPPORTED_NODES: dict[Any, NodeDef] = {}


def register_pytree_node(cls: type[Any], flatten_fn: FlattenFn, unflatten_fn: UnflattenFn, *,
                         serialized_type_name: str | None = None,
                         to_dumpable_context: ToDumpableContextFn | None = None,
                         from_dumpable_context: FromDumpableContextFn | None = None,
                         flatten_with_keys_fn: FlattenWithKeysFn | None = None) -> None:
    """Make `cls` a node: flatten_fn(obj) -> (children, context), unflatten_fn(children,
    context) -> obj; flatten_with_keys_fn(obj) -> ([(key, child)], context) for key paths.
    (The serialization arguments are accepted; fake_torch has no treespec_dumps.)"""
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)


def register_dataclass(cls: type[Any], *, field_names: list[str] | None = None,
                       drop_field_names: list[str] | None = None,
                       serialized_type_name: str | None = None) -> None:
    """Make `cls` (a dataclass, or a class built from keyword arguments `field_names`) a node:
    its non-None fields are the children, the context is [their names, the None fields' names]
    (torch's), and unflattening calls cls(**fields)."""
    dropped = set(drop_field_names or [])
    if not dataclasses.is_dataclass(cls):
        if field_names is None:
            raise ValueError("field_names must be specified with a list of all fields used to "
                             f"initialize {cls}, as it is not a dataclass.")
    elif field_names is None:
        field_names = [f.name for f in dataclasses.fields(cls) if f.init]
    else:
        init_fields = {f.name for f in dataclasses.fields(cls) if f.init} - dropped
        if init_fields != set(field_names):
            text = "field_names does not include all dataclass fields.\n"
            if missing := init_fields - set(field_names):
                text += (f"Missing fields in `field_names`: {missing}. If you want to include "
                         "these fields in the pytree, please add them to `field_names`, "
                         "otherwise please add them to `drop_field_names`.\n")
            if unexpected := set(field_names) - init_fields:
                text += (f"Unexpected fields in `field_names`: {unexpected}. Please remove "
                         "these fields, or add them to `drop_field_names`.\n")
            raise ValueError(text)
    names = list(field_names)

    def flatten(obj: Any) -> tuple[list[Any], Any]:
        present = [n for n in names if getattr(obj, n) is not None]
        return [getattr(obj, n) for n in present], [present, [n for n in names
                                                              if n not in present]]

    def unflatten(values: Iterable[Any], context: Any) -> Any:
        present, absent = context
        return cls(**dict(zip(present, values, strict=True)), **dict.fromkeys(absent))

    def flatten_with_keys(obj: Any) -> tuple[list[tuple[KeyEntry, Any]], Any]:
        values, (present, _) = flatten(obj)
        return [(GetAttrKey(n), v) for n, v in zip(present, values, strict=True)], present

    register_pytree_node(cls, flatten, unflatten, serialized_type_name=serialized_type_name,
                         flatten_with_keys_fn=flatten_with_keys)


def _sequence_keys(flatten: FlattenFn) -> FlattenWithKeysFn:
    def with_keys(node: Any) -> tuple[list[tuple[KeyEntry, Any]], Any]:
        children, context = flatten(node)
        return [(SequenceKey(i), c) for i, c in enumerate(children)], context
    return with_keys


def _dict_flatten_with_keys(d: dict[Any, Any]) -> tuple[list[tuple[KeyEntry, Any]], Any]:
    """A dict's (MappingKey(key), value) pairs and its keys as the context."""
    return [(MappingKey(k), v) for k, v in d.items()], list(d.keys())


def _register_builtins() -> None:
    """tuple, list, dict, namedtuple, OrderedDict, defaultdict, deque: torch's contexts."""
    def tuple_flatten(t: tuple[Any, ...]) -> tuple[list[Any], Any]:
        return list(t), None

    def list_flatten(seq: list[Any]) -> tuple[list[Any], Any]:
        return list(seq), None

    def dict_flatten(d: dict[Any, Any]) -> tuple[list[Any], Any]:
        return list(d.values()), list(d.keys())

    def namedtuple_flatten(t: Any) -> tuple[list[Any], Any]:
        return list(t), type(t)

    def namedtuple_keys(t: Any) -> tuple[list[tuple[KeyEntry, Any]], Any]:
        return [(GetAttrKey(f), v) for f, v in zip(t._fields, t, strict=True)], type(t)

    def defaultdict_flatten(d: defaultdict[Any, Any]) -> tuple[list[Any], Any]:
        return list(d.values()), [d.default_factory, list(d.keys())]

    def defaultdict_keys(d: defaultdict[Any, Any]) -> tuple[list[tuple[KeyEntry, Any]], Any]:
        return [(MappingKey(k), v) for k, v in d.items()], [d.default_factory, list(d.keys())]

    def deque_flatten(d: deque[Any]) -> tuple[list[Any], Any]:
        return list(d), d.maxlen

    register_pytree_node(tuple, tuple_flatten, lambda vs, _: tuple(vs),
                         flatten_with_keys_fn=_sequence_keys(tuple_flatten))
    register_pytree_node(list, list_flatten, lambda vs, _: list(vs),
                         flatten_with_keys_fn=_sequence_keys(list_flatten))
    register_pytree_node(dict, dict_flatten, lambda vs, keys: dict(zip(keys, vs, strict=True)),
                         flatten_with_keys_fn=_dict_flatten_with_keys)
    register_pytree_node(namedtuple, namedtuple_flatten,  # type: ignore[arg-type]
                         lambda vs, cls: cls(*vs), flatten_with_keys_fn=namedtuple_keys)
    register_pytree_node(OrderedDict, dict_flatten,
                         lambda vs, keys: OrderedDict(zip(keys, vs, strict=True)),
                         flatten_with_keys_fn=_dict_flatten_with_keys)
    register_pytree_node(defaultdict, defaultdict_flatten,
                         lambda vs, c: defaultdict(c[0], zip(c[1], vs, strict=True)),
                         flatten_with_keys_fn=defaultdict_keys)
    register_pytree_node(deque, deque_flatten, lambda vs, maxlen: deque(vs, maxlen=maxlen),
                         flatten_with_keys_fn=_sequence_keys(deque_flatten))


def _register_return_types() -> None:
    """torch.return_types (max, sort, ...) are nodes of their own type, as torch registers
    them: context None."""
    from fake_torch import return_types

    def flatten(t: tuple[Any, ...]) -> tuple[list[Any], Any]:
        return list(t), None

    def unflatten_as(cls: type[Any]) -> UnflattenFn:
        return lambda values, _: cls(values)

    for cls in vars(return_types).values():
        if isinstance(cls, type) and is_structseq_class(cls):
            register_pytree_node(cls, flatten, unflatten_as(cls),
                                 flatten_with_keys_fn=_sequence_keys(flatten))


# --- namedtuples and structseqs -------------------------------------------------------------------

def is_namedtuple(obj: object | type) -> bool:
    """An instance or a class of collections.namedtuple / typing.NamedTuple."""
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def is_namedtuple_class(cls: type) -> bool:
    return (isinstance(cls, type) and issubclass(cls, tuple)
            and isinstance(getattr(cls, "_fields", None), tuple)
            and all(isinstance(f, str) for f in cls._fields)  # type: ignore[attr-defined]
            and callable(getattr(cls, "_make", None))
            and callable(getattr(cls, "_asdict", None)))


def is_namedtuple_instance(obj: object) -> bool:
    return is_namedtuple_class(type(obj))


def is_structseq(obj: object | type) -> bool:
    """An instance or a class of a structseq (torch.return_types.max, os.stat_result)."""
    return is_structseq_class(obj if isinstance(obj, type) else type(obj))


def is_structseq_class(cls: type) -> bool:
    """A tuple type with the structseq members (n_fields, n_sequence_fields,
    n_unnamed_fields); fake_torch's return types are Python classes made to look so."""
    return (isinstance(cls, type) and issubclass(cls, tuple)
            and not is_namedtuple_class(cls)
            and all(isinstance(getattr(cls, m, None), int)
                    for m in ("n_fields", "n_sequence_fields", "n_unnamed_fields")))


def is_structseq_instance(obj: object) -> bool:
    return is_structseq_class(type(obj))


def _node_type(tree: Any) -> Any:
    """The registry key of a node: its type; every namedtuple class is `namedtuple`."""
    cls = type(tree)
    return namedtuple if is_namedtuple_class(cls) else cls


def tree_is_leaf(tree: PyTree, is_leaf: IsLeaf = None) -> bool:
    """Not a registered node (or `is_leaf` says so)."""
    if is_leaf is not None and is_leaf(tree):
        return True
    return _node_type(tree) not in SUPPORTED_NODES


# --- TreeSpec -----------------------------------------------------------------------------------

class TreeSpec:
    """The structure of a pytree: its root's node type and context, and its children's specs
    (a leaf: type None, no context, no children)."""

    __slots__ = ("_children", "_context", "num_children", "num_leaves", "num_nodes", "type")

    def __init__(self, type: Any, context: Context, children_specs: list[TreeSpec]) -> None:
        self.type = type
        self._context = context
        self._children = children_specs
        if type is None:
            self.num_nodes, self.num_leaves, self.num_children = 1, 1, 0
        else:
            self.num_nodes = 1 + sum(c.num_nodes for c in children_specs)
            self.num_leaves = sum(c.num_leaves for c in children_specs)
            self.num_children = len(children_specs)

    @property
    def context(self) -> Context:
        return self._context

    def is_leaf(self) -> bool:
        return self.num_nodes == 1 and self.num_leaves == 1

    def children(self) -> list[TreeSpec]:
        return list(self._children)

    def child(self, index: int) -> TreeSpec:
        return self._children[index]

    def __repr__(self, indent: int = 0) -> str:
        if self.is_leaf():
            return "*"
        inner = indent + 2
        parts = [c.__repr__(inner) for c in self._children]
        body = (",\n" + " " * inner).join(parts)
        return f"TreeSpec({self.type.__name__}, {self._context}, [{body}])"

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, TreeSpec):
            return NotImplemented
        return (str(self.type) == str(other.type) and self._context == other._context
                and self._children == other._children)

    def __hash__(self) -> int:
        context = self._context
        if self.type is defaultdict:
            context = (context[0], tuple(context[1]))
        elif isinstance(context, list):
            context = tuple(context)
        try:
            hash(context)
        except TypeError:
            context = None  # a registered type's context may be unhashable: left out
        return hash((self.type, context, tuple(self._children)))

    def flatten_up_to(self, tree: PyTree) -> list[PyTree]:
        """The subtrees of `tree` where this spec has leaves (`tree` has this spec as a
        prefix); torch's ValueErrors on a mismatch."""
        out: list[PyTree] = []
        self._up_to(tree, out)
        return out

    def _up_to(self, node: PyTree, out: list[PyTree]) -> None:
        if self.is_leaf():
            out.append(node)
            return
        node_type = _node_type(node)
        dicts = (dict, OrderedDict, defaultdict)
        if self.type in dicts and node_type in dicts:
            keys = self._context if self.type is not defaultdict else self._context[1]
            if set(node) != set(keys):
                missing, extra = set(keys) - set(node), set(node) - set(keys)
                msg = (f"; missing key(s): {missing}" if missing else "") + (
                    f"; extra key(s): {extra}" if extra else "")
                raise ValueError(f"Node keys mismatch{msg}.")
            children = [node[k] for k in keys]
        else:
            if node_type != self.type:
                raise ValueError(f"Node type mismatch; expected {self.type!r}, but got "
                                 f"{node_type!r}.")
            children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
            if len(children) != self.num_children:
                raise ValueError(f"Node arity mismatch; expected {self.num_children}, but "
                                 f"got {len(children)}.")
            if node_type is not deque and context != self._context:
                raise ValueError(f"Node context mismatch for node type {self.type!r}; "
                                 f"expected {self._context!r}, but got {context!r}.")
        for spec, child in zip(self._children, children, strict=True):
            spec._up_to(child, out)

    def unflatten(self, leaves: Iterable[Any]) -> PyTree:
        """The pytree of this structure holding `leaves` in order."""
        values = leaves if isinstance(leaves, (list, tuple)) else list(leaves)
        if len(values) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(values)} "
                             f"but the spec refers to a pytree that holds {self.num_leaves} "
                             f"items ({self}).")
        if self.is_leaf():
            return values[0]
        children, start = [], 0
        for spec in self._children:
            children.append(spec.unflatten(values[start:start + spec.num_leaves]))
            start += spec.num_leaves
        return SUPPORTED_NODES[self.type].unflatten_fn(children, self._context)


PyTreeSpec = TreeSpec


class LeafSpec(TreeSpec):
    """The spec of a leaf."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(None, None, [])


_LEAF = LeafSpec()


# --- flatten, unflatten, map ----------------------------------------------------------------------

def tree_flatten(tree: PyTree, is_leaf: IsLeaf = None) -> tuple[list[Any], TreeSpec]:
    """(the leaves, depth first, left to right; the structure)."""
    leaves: list[Any] = []

    def visit(node: PyTree) -> TreeSpec:
        if tree_is_leaf(node, is_leaf):
            leaves.append(node)
            return _LEAF
        node_type = _node_type(node)
        children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
        return TreeSpec(node_type, context, [visit(c) for c in children])

    return leaves, visit(tree)


def tree_unflatten(leaves: Iterable[Any], treespec: TreeSpec) -> PyTree:
    """The inverse of tree_flatten (the two arguments may come swapped, as torch allows)."""
    if not isinstance(treespec, TreeSpec):
        if not isinstance(leaves, TreeSpec):
            raise TypeError(f"Expected `treespec` to be an instance of PyTreeSpec but got item "
                            f"of type {type(treespec)}.")
        leaves, treespec = treespec, leaves
    return treespec.unflatten(leaves)


def tree_iter(tree: PyTree, is_leaf: IsLeaf = None) -> Iterator[Any]:
    """The leaves, lazily."""
    if tree_is_leaf(tree, is_leaf):
        yield tree
        return
    children, _ = SUPPORTED_NODES[_node_type(tree)].flatten_fn(tree)
    for child in children:
        yield from tree_iter(child, is_leaf)


def tree_leaves(tree: PyTree, is_leaf: IsLeaf = None) -> list[Any]:
    return list(tree_iter(tree, is_leaf))


def tree_structure(tree: PyTree, is_leaf: IsLeaf = None) -> TreeSpec:
    return tree_flatten(tree, is_leaf)[1]


def tree_map(func: Callable[..., Any], tree: PyTree, *rests: PyTree,
             is_leaf: IsLeaf = None) -> PyTree:
    """`tree` with each leaf x replaced by func(x, *xs), xs the matching subtrees of `rests`
    (each has `tree`'s structure as a prefix)."""
    leaves, spec = tree_flatten(tree, is_leaf)
    columns = [leaves, *(spec.flatten_up_to(r) for r in rests)]
    return spec.unflatten([func(*xs) for xs in zip(*columns, strict=True)])


def tree_map_(func: Callable[..., Any], tree: PyTree, *rests: PyTree,
              is_leaf: IsLeaf = None) -> PyTree:
    """Call func on each leaf (for its effect, in place); return `tree` itself."""
    leaves, spec = tree_flatten(tree, is_leaf)
    for xs in zip(leaves, *(spec.flatten_up_to(r) for r in rests), strict=True):
        func(*xs)
    return tree


def _only(type_or_types_or_pred: TypeOrTypes | Callable[[Any], bool],
          func: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """func on the leaves of the type(s) (or that the predicate accepts); others unchanged."""
    if isinstance(type_or_types_or_pred, (type, tuple, types.UnionType)):
        kinds = type_or_types_or_pred
        return lambda x: func(x) if isinstance(x, kinds) else x
    if not callable(type_or_types_or_pred):
        raise TypeError("Argument must be a type, a tuple of types, or a callable.")
    pred = type_or_types_or_pred
    return lambda x: func(x) if pred(x) else x


def tree_map_only(type_or_types_or_pred: TypeOrTypes | Callable[[Any], bool], /,
                  func: Callable[[Any], Any], tree: PyTree, is_leaf: IsLeaf = None) -> PyTree:
    return tree_map(_only(type_or_types_or_pred, func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred: TypeOrTypes | Callable[[Any], bool], /,
                   func: Callable[[Any], Any], tree: PyTree, is_leaf: IsLeaf = None) -> PyTree:
    return tree_map_(_only(type_or_types_or_pred, func), tree, is_leaf=is_leaf)


def tree_all(pred: Callable[[Any], bool], tree: PyTree, is_leaf: IsLeaf = None) -> bool:
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(pred: Callable[[Any], bool], tree: PyTree, is_leaf: IsLeaf = None) -> bool:
    return any(map(pred, tree_iter(tree, is_leaf)))


def tree_all_only(type_or_types: TypeOrTypes, /, pred: Callable[[Any], bool], tree: PyTree,
                  is_leaf: IsLeaf = None) -> bool:
    return all(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


def tree_any_only(type_or_types: TypeOrTypes, /, pred: Callable[[Any], bool], tree: PyTree,
                  is_leaf: IsLeaf = None) -> bool:
    return any(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


# --- key paths ------------------------------------------------------------------------------------

def tree_flatten_with_path(tree: PyTree, is_leaf: IsLeaf = None
                           ) -> tuple[list[tuple[KeyPath, Any]], TreeSpec]:
    """tree_flatten, each leaf with the key path that reaches it."""
    found: list[tuple[KeyPath, Any]] = []

    def visit(node: PyTree, path: KeyPath) -> None:
        if tree_is_leaf(node, is_leaf):
            found.append((path, node))
            return
        nodedef = SUPPORTED_NODES[_node_type(node)]
        if nodedef.flatten_with_keys_fn is None:
            raise ValueError(f"Did not find a flatten_with_keys_fn for type: {nodedef.type}. "
                             "Please pass a flatten_with_keys_fn argument to "
                             "register_pytree_node.")
        for key, child in nodedef.flatten_with_keys_fn(node)[0]:
            visit(child, (*path, key))

    visit(tree, ())
    return found, tree_structure(tree, is_leaf)


def tree_leaves_with_path(tree: PyTree, is_leaf: IsLeaf = None) -> list[tuple[KeyPath, Any]]:
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(func: Callable[..., Any], tree: PyTree, *rests: PyTree,
                       is_leaf: IsLeaf = None) -> PyTree:
    """tree_map whose func also gets each leaf's key path first: func(path, x, *xs)."""
    found, spec = tree_flatten_with_path(tree, is_leaf)
    columns = [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten([func(path, x, *xs) for (path, x), *xs in
                           zip(found, *columns, strict=True)])


_register_builtins()
_register_return_types()

"""torch.fx.experimental.proxy_tensor.make_fx: a function traced into a graph of aten ops.

`make_fx(f)(*args)` runs `f` once and returns a GraphModule whose call nodes target
`torch.ops.aten.<name>.<overload>` (and `operator.getitem` for the items of an op's tuple
result), with placeholders named as torch names them (`x_1` for a parameter `x`, `arg0_1` for
`*args`) and `meta["val"]` on every node: a fake tensor like the value.

How: at the API door (fake_torch._torch_function), a TorchFunctionMode sees each public call
and records it at the level torch's dispatcher would see it, since fake_torch's kernel door
sees launches (views launch nothing, composites launch several) rather than aten calls.
  - an op definition of one aten op (kind pointwise, reduction, extern, view, ...) is one node,
    its overload chosen from the arguments as torch's parser chooses (`_aten_overloads.choose`:
    add.Tensor, gt.Scalar, sum.dim_IntList, ...); the op runs with the mode popped, so what it
    calls inside is part of it;
  - a public op torch decomposes (CompositeImplicit: reshape, matmul, x[...], .to, rms_norm
    on CPU, ...) runs its rule (`_aten_rules.RULES`), which records the aten ops torch's
    decomposition calls;
  - any other composite op definition (F.linear, ...) is traced through: the mode is pushed
    again while it runs, so the public calls it makes are recorded as torch records the calls
    of its CompositeImplicit kernels;
  - a custom operator (`torch.ops.<ns>.<name>`, torch.library) is one node of its OpOverload;
    `auto_functionalized(op, **kwargs)` one node of its own (the op runs on clones).
Tensors are tracked by identity: the node that made a tensor is its argument in later nodes;
a tensor that no node made (a closure's constant) becomes a `get_attr` of `_tensor_constant<n>`.

`make_fx(torch.func.functionalize(f))` records no mutation: see _functionalize.

tracing_mode: "real" runs the kernels on the arguments; "fake" runs `f` on fake copies under a
FakeTensorMode (no kernel runs; a custom op runs its fake impl); "symbolic" as "fake", with
the arguments' sizes symbols (duck-sized, named as torch names them for `input<i>.size()[d]`:
`s75`): the code reads SymInts from `x.shape`, a SymInt given to an op is a `sym_size.int`
node (and the arithmetic on it), and each node's value is its op's output rule over the
symbolic examples (where no rule fits, its sizes are taken as the symbols of equal hint).

Differences from torch (the DIFFERS lists of tests/test_make_fx*.py, each asserted): an op
recorded as one node keeps the public call's arguments (`sum(x, -1)`; torch: the schema's
`[-1]`); with grad enabled
torch also records the `detach` of outputs autograd saves; a host read (`.item()`) refuses
as torch's real tracing does, but with _error_on_data_dependent_ops=False its value is baked
in (torch: a `_local_scalar_dense` node); symbolic traces read each symbol once, from the
placeholder whose size it is, where torch reads a SymInt object from the first tensor that
held it (more sym_size nodes, and its size arithmetic node by node), and infer reshape's -1
without `sym_numel`; the decompositions are those in `_aten_rules*` (other composites record
the public calls they make); make_fx(pre_dispatch=True) is not emulated.
"""

from __future__ import annotations

import inspect
import operator
from collections.abc import Callable, Mapping
from typing import Any

from fake_torch import _opdef, _ops
from fake_torch._dynamo.symbolic import concrete, has_symbols
from fake_torch._higher_order_ops.auto_functionalize import (
    AutoFunctionalized,
    auto_functionalized_dense,
)
from fake_torch._memory_format import contiguous_strides
from fake_torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode
from fake_torch._sym import SymInt
from fake_torch._tensor import Tensor
from fake_torch.func import Functionalized
from fake_torch.fx import Graph, GraphModule, Node
from fake_torch.fx.experimental import (
    _aten_overloads,
    _aten_rules_composite,
    _aten_rules_index,
    _aten_rules_nn,
    _aten_rules_operators,
)
from fake_torch.fx.experimental._aten_rules import RULES
from fake_torch.fx.experimental._functionalize import Functionalizer, tensors_in
from fake_torch.fx.experimental._proxy_symbolic import PUBLIC_FORM, preorder_symbols, symints
from fake_torch.nn.parameter import Parameter
from fake_torch.overrides import TorchFunctionMode

_TRACING_MODES = ("real", "fake", "symbolic")
# their rules join RULES on import
_RULE_MODULES = (_aten_rules_nn, _aten_rules_index, _aten_rules_operators,
                 _aten_rules_composite)
_SHAPE = inspect.getattr_static(Tensor, "shape")
_NOT_SYMBOLIC = object()
# a tensor's value read by the host (torch's _local_scalar_dense)
_VALUE_READS = frozenset({"item", "tolist", "__bool__", "__float__", "__int__", "__complex__",
                          "__index__"})
# aten ops whose schema returns Tensor[] (a list), not a tuple
_LIST_RESULTS = frozenset({"split", "split_with_sizes", "unbind", "tensor_split", "meshgrid",
                           "broadcast_tensors", "chunk"})
# reductions whose aten schema takes a list of dims
_DIM_LISTS = frozenset({"sum", "mean", "amax", "amin", "var", "std", "var_mean", "std_mean",
                        "logsumexp", "nansum"})
# aten ops whose arguments are not those of the public op of their name
_ATEN_ORDER = frozenset({"embedding", "rsub", "convolution"})


# torch.func.functionalize refuses a custom op that writes its arguments (only torch.compile's
# functionalization turns it into auto_functionalized)
_MUTATING_CUSTOM_OP = (
    "Found a custom (non-ATen) operator whose output has alias annotations: {schema}. We only "
    "support functionalizing operators whose outputs do not have alias annotations (e.g. "
    "'Tensor(a)' is a Tensor with an alias annotation whereas 'Tensor' is a Tensor without. "
    "The '(a)' is the alias annotation). The alias annotation specifies that the output Tensor "
    "shares storage with an input that has the same annotation. Please check if (1) the output "
    "needs to be an output (if not, don't return it), (2) if the output doesn't share storage "
    "with any inputs, then delete the alias annotation. (3) if the output indeed shares storage "
    "with an input, then add a .clone() before returning it to prevent storage sharing and then "
    "delete the alias annotation. Otherwise, please file an issue on GitHub.")


class _Tracer:
    """One make_fx trace: its graph, the node behind each tensor, its fake mode."""

    def __init__(self, tracing_mode: str,
                 decomposition_table: Mapping[Any, Callable[..., Any]]) -> None:
        self.graph = Graph()
        self.tracing_mode = tracing_mode
        self.decompositions = dict(decomposition_table)
        self.fake_mode = FakeTensorMode(allow_non_fake_inputs=True)
        self._nodes: dict[int, Node] = {}
        self._alive: list[Any] = []  # the tensors tracked, so their ids stay theirs
        self.constants: dict[str, Tensor] = {}
        self.current = ""  # the public op whose rule is running
        self.symbolic: Any = None  # fake_torch._dynamo.symbolic.SymbolicTrace
        self.public: Callable[..., Any] = _no_call  # the public op whose rule is running
        self.error_on_data_dependent_ops = True
        self.symbol_places: dict[Any, tuple[Node, int]] = {}  # symbol -> (placeholder, dim)
        self.functional: Functionalizer | None = None  # make_fx(functionalize(f))
        self._symbol_nodes: dict[Any, Node] = {}

    # --- values -------------------------------------------------------------------------------

    def bind(self, t: Tensor, node: Node) -> None:
        self._nodes[id(t)] = node
        self._alive.append(t)

    def example(self, value: Any) -> Any:
        """What `meta["val"]` holds for a value: a fake tensor like it (containers item by
        item); the symbolic example of a tensor a placeholder or node stands for."""
        if isinstance(value, Tensor):
            node = self._nodes.get(id(value))
            if node is not None and "val" in node.meta and isinstance(node.meta["val"], Tensor):
                return node.meta["val"]
            if isinstance(value, FakeTensor):
                return value
            return self._fake(value)
        if isinstance(value, (tuple, list)):
            return type(value)(self.example(v) for v in value) if type(value) in (tuple, list) \
                else value
        return value

    def sizes(self, t: Tensor) -> list[Any]:
        """`t`'s sizes as the traced code sees them: SymInts where they are symbolic."""
        return list(self.example(t).shape)

    def _fake(self, t: Tensor) -> Tensor:
        try:
            return self.fake_mode.from_tensor(t)
        except ValueError:  # strides empty_strided cannot lay out alone: the layout dropped
            return self.fake_mode.from_tensor(t.contiguous())

    def arg(self, value: Any) -> Any:
        """A node argument: tensors as the nodes that made them, sequences as lists (the
        schema's `int[]`, `Tensor[]`)."""
        if isinstance(value, Tensor):
            node = self._nodes.get(id(value))
            return node if node is not None else self._constant(value)
        if isinstance(value, (tuple, list)):
            return [self.arg(v) for v in value]
        if isinstance(value, dict):
            return {k: self.arg(v) for k, v in value.items()}
        if isinstance(value, SymInt) and self.symbolic is not None:
            return self.symbolic.node_of(value, self.graph, self._symbol_node)
        return value

    def _symbol_node(self, symbol: Any) -> Node | None:
        """`aten.sym_size.int(placeholder, dim)` for a symbol, made at its first use."""
        found = self._symbol_nodes.get(symbol)
        if found is None and symbol in self.symbol_places:
            placeholder, dim = self.symbol_places[symbol]
            found = self.graph.create_node("call_function",
                                           _aten_overloads.overload("sym_size", "int"),
                                           (placeholder, dim), name="sym_size_int")
            found.meta["val"] = placeholder.meta["val"].size(dim)
            self._symbol_nodes[symbol] = found
        return found

    def size_query(self, func: Callable[..., Any], args: tuple[Any, ...],
                   kwargs: dict[str, Any]) -> Any:
        """x.shape / x.size() / x.stride() / x.numel() of a tensor with symbolic sizes: its
        SymInts (torch's symbolic tracing hands the code SymInts), else _NOT_SYMBOLIC."""
        node = self._nodes.get(id(args[0])) if args and isinstance(args[0], Tensor) else None
        val: Any = node.meta.get("val") if node is not None else None
        if getattr(val, "_sym_shape", None) is None:
            return _NOT_SYMBOLIC
        if getattr(func, "__self__", None) is _SHAPE:
            return val.shape
        name = getattr(func, "__name__", "")
        if name in ("size", "stride", "numel"):
            return getattr(val, name)(*args[1:], **kwargs)
        return _NOT_SYMBOLIC

    def _constant(self, t: Tensor) -> Node:
        """A tensor no node made (a module's parameter, a closure's tensor): an attribute."""
        kind = "_param_constant" if isinstance(t, Parameter) else "_tensor_constant"
        name = f"{kind}{sum(1 for n in self.constants if n.startswith(kind))}"
        self.constants[name] = t
        node = self.graph.get_attr(name)
        node.meta["val"] = self.example(t)
        self.bind(t, node)
        return node

    # --- nodes --------------------------------------------------------------------------------

    def call(self, name: str, overload: str, *args: Any, **kwargs: Any) -> Any:
        """Run torch.ops.aten.<name>.<overload> and record it."""
        target = _aten_overloads.overload(name, overload)
        decomposed = self.decompositions.get(target)
        if decomposed is not None:
            with _pushed(self.mode):
                return decomposed(*args, **kwargs)
        return self.record(target, args, kwargs,
                           target._kernel(*concrete(args), **concrete(kwargs)))

    def record_as(self, name: str, overload: str, args: tuple[Any, ...],
                  kwargs: dict[str, Any], result: Any) -> Any:
        """Record a call of torch.ops.aten.<name>.<overload> that already ran."""
        return self.record(_aten_overloads.overload(name, overload), args, kwargs, result)

    def record(self, target: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
               result: Any, opdef: _opdef.OpDef | None = None) -> Any:
        """One node calling `target` that returned `result`; `opdef`: the public op whose
        output rule describes it (symbolic sizes), when its arguments are the op's own.
        Functionalizing, an in-place op is recorded as its functional op (_functionalize)."""
        if self.functional is not None:
            return self.functional.record(target, args, kwargs, result, opdef)
        self.record_node(target, args, kwargs, result, opdef)
        return result

    def record_node(self, target: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                    result: Any, opdef: _opdef.OpDef | None = None, bind: bool = True) -> Node:
        """The node of `record` (its items' getitem nodes after it); `bind`: the tensors of
        `result` are the node's (not for a functionalized in-place op's target)."""
        inputs = [self.example(a) for a in tensors_in((args, kwargs))]
        if self.symbolic is not None:  # every size read first, then the arithmetic on them
            for size in symints((args, kwargs)):
                for symbol in preorder_symbols(size.node.expr):
                    self._symbol_node(symbol)
        name = getattr(getattr(target, "overloadpacket", None), "__name__", None)
        node = self.graph.create_node("call_function", target,
                                      tuple(self.arg(a) for a in args), self.arg(kwargs),
                                      name=name)
        if opdef is None and name in PUBLIC_FORM and self.symbolic is not None:
            opdef, args, kwargs = PUBLIC_FORM[name](*args, **kwargs)
        elif opdef is None and name is not None and name not in _ATEN_ORDER \
                and target.namespace == "aten":
            opdef = _opdef.def_of(_opdef.aten_callable(name))
        node.meta["val"] = self._value(result, inputs, opdef, args, kwargs)
        if name in _LIST_RESULTS:  # the schema returns Tensor[]
            node.meta["val"] = list(node.meta["val"])
        if isinstance(result, (tuple, list)):
            for i, item in enumerate(result):
                got = self.graph.call_function(operator.getitem, (node, i))
                if node.meta["val"][i] is not None:  # torch: no "val" for a None item
                    got.meta["val"] = node.meta["val"][i]
                if isinstance(item, Tensor) and bind:
                    self.bind(item, got)
        elif isinstance(result, Tensor) and bind:
            self.bind(result, node)
        return node

    # --- functionalization's own nodes (_functionalize) -----------------------------------------

    def node_of(self, t: Tensor) -> Node:
        return self.arg(t)  # type: ignore[no-any-return]

    def rebind(self, t: Tensor, node: Node) -> None:
        self._nodes[id(t)] = node

    def emit(self, target: Any, args: tuple[Any, ...], val: Any) -> Node:
        """A node of functionalization's (a scatter, a copy back) whose value is like `val`."""
        name = getattr(getattr(target, "overloadpacket", None), "__name__", None)
        node = self.graph.create_node("call_function", target, args, {}, name=name)
        node.meta["val"] = val
        return node

    def emit_view(self, target: Any, source: Node, args: tuple[Any, ...],
                  kwargs: dict[str, Any]) -> Node:
        """A view of `source`'s value replayed (its value the view of source's example)."""
        with self.fake_mode:
            val = target._kernel(source.meta["val"], *concrete(args), **concrete(kwargs))
        node = self.emit(target, (source, *args), val)
        node.kwargs = dict(kwargs)
        return node

    def emit_getitem(self, node: Node, index: int) -> Node:
        got = self.graph.call_function(operator.getitem, (node, index))
        got.meta["val"] = node.meta["val"][index]
        return got

    def _value(self, result: Any, inputs: list[Any], opdef: _opdef.OpDef | None,
               args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if self.symbolic is None:
            return self.example(result)
        symbolic = any(getattr(i, "_sym_shape", None) is not None for i in inputs)
        if opdef is not None and (symbolic or has_symbols((args, kwargs))):
            try:  # the op's output rule over the symbolic examples, as torch's meta
                return self.symbolic.output_example(opdef, args, kwargs, result, self.example,
                                                    self.example)
            except (NotImplementedError, TypeError, RuntimeError, ValueError, IndexError):
                pass  # no rule for it: its sizes by their hints
        by_hint: dict[int, Any] = {}  # a symbol's hint -> the symbol, from the inputs' sizes
        for ex in inputs:
            for size in getattr(ex, "_sym_shape", None) or ():
                if isinstance(size, SymInt) and size.node.expr.is_Symbol:
                    by_hint.setdefault(size.node.hint, size)
        return self._by_hints(result, by_hint)

    def _by_hints(self, result: Any, by_hint: dict[int, Any]) -> Any:
        """`result`'s example with each size equal to a symbol's hint taken as that symbol
        (compared by hint: no guard is recorded). A static size equal to a symbol's hint is
        taken as the symbol too: torch runs the output rules on the symbols instead."""
        if isinstance(result, Tensor):
            fake = self.example(result)
            shape = tuple(by_hint.get(n, n) for n in result.shape)
            if all(isinstance(n, int) for n in shape):
                return fake
            strides = contiguous_strides(shape) if result.is_contiguous() else \
                tuple(result.stride())
            return FakeTensor.symbolic(fake, shape, tuple(strides), result.storage_offset(),
                                       self.symbolic.fake_mode)
        if isinstance(result, (tuple, list)):
            items = [self._by_hints(r, by_hint) for r in result]
            return type(result)(*items) if hasattr(result, "_fields") else type(result)(items)
        return self.example(result)

    def run_public(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """The public call whose rule is running, run as it is (nothing recorded)."""
        return self.public(*concrete(args), **concrete(kwargs))

    mode: _AtenMode


def _no_call(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("make_fx: no public call is running")


def _new_tensors(result: Any, args: Any, kwargs: Any) -> bool:
    made = tensors_in(result)
    given = {id(t) for t in tensors_in((args, kwargs))}
    return bool(made) and not any(id(t) in given for t in made)


class _pushed:
    """The mode on this thread's stack again for a block (tracing through a composite)."""

    def __init__(self, mode: TorchFunctionMode) -> None:
        self.mode = mode

    def __enter__(self) -> None:
        self.mode.__enter__()

    def __exit__(self, *exc: object) -> None:
        self.mode.__exit__(None, None, None)


class _AtenMode(TorchFunctionMode):
    """Records each public call at the aten level (see the module docstring)."""

    def __init__(self, tracer: _Tracer) -> None:
        super().__init__()
        self.tracer = tracer
        tracer.mode = self

    def __torch_function__(self, func: Callable[..., Any], types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        tr = self.tracer
        if isinstance(func, _ops.OpOverloadPacket):
            func = func._first()
        if isinstance(func, AutoFunctionalized):  # one node: (op, **kwargs) -> its items
            op = args[0]
            run = op._kernel if tr.tracing_mode == "real" else _fake_body(op)
            return tr.record(func, args, kwargs,
                             auto_functionalized_dense(run, op, concrete(kwargs)))
        if isinstance(func, _ops.OpOverload) and func.namespace != "aten":  # a custom op
            if tr.functional is not None and "!" in str(func._schema):
                raise RuntimeError(_MUTATING_CUSTOM_OP.format(schema=func._schema))
            run = func._kernel if tr.tracing_mode == "real" else _fake_body(func)
            return tr.record(func, args, kwargs, run(*concrete(args), **concrete(kwargs)))
        opdef = _opdef.def_of(func)
        if isinstance(func, _ops.OpOverload):  # torch.ops.aten.<name>.<overload>(...)
            return tr.record(func, args, kwargs, func._kernel(*concrete(args),
                                                              **concrete(kwargs)))
        if opdef is None:  # metadata: x.shape, x.size(), x.dim()
            if tr.symbolic is not None:
                answer = tr.size_query(func, args, kwargs)
                if answer is not _NOT_SYMBOLIC:
                    return answer
            return func(*args, **kwargs)
        rule = RULES.get(opdef.name)
        if rule is not None:
            saved = tr.current, tr.public
            tr.current, tr.public = opdef.name, func
            try:
                return rule(tr, tuple(args), kwargs)
            finally:
                tr.current, tr.public = saved
        if opdef.kind == _opdef.COMPOSITE:  # its implementation, whose public calls we see
            before = len(tr.graph.nodes)
            with _pushed(self):
                result = opdef.impl(*args, **kwargs)
            if len(tr.graph.nodes) == before and (opdef.mutates or
                                                  _new_tensors(result, args, kwargs)):
                # it called no public op (implementations call each other directly): one
                # node of its own name, as torch's ops with a kernel of their own
                target = _aten_overloads.overload(
                    opdef.name, _aten_overloads.choose(opdef.name, args, kwargs), func)
                return tr.record(target, args, kwargs, result)
            return result
        if opdef.name in _VALUE_READS and tr.error_on_data_dependent_ops \
                and tr.tracing_mode == "real":
            raise RuntimeError(
                "It appears that you're trying to get value out of a tracing tensor with "
                "aten._local_scalar_dense.default - erroring out! It's likely that this is "
                "caused by data-dependent control flow or similar.  It may be possible to trace "
                "this with dynamic shapes; try setting tracing_mode='symbolic' in your make_fx "
                "call.")
        if opdef.kind in (_opdef.HOST, _opdef.DATA_DEPENDENT) and not opdef.aten:
            return func(*args, **kwargs)
        name = opdef.aten[0] if opdef.aten else opdef.name
        if name in _DIM_LISTS and len(args) > 1 and isinstance(args[1], int):
            args = (args[0], [args[1]], *args[2:])  # the schema's int[] dim: sum(x, [-1])
        target = _aten_overloads.overload(name, _aten_overloads.choose(name, args, kwargs))
        decomposed = tr.decompositions.get(target)
        if decomposed is not None:
            with _pushed(self):
                return decomposed(*args, **kwargs)
        return tr.record(target, args, kwargs, func(*concrete(args), **concrete(kwargs)), opdef)


def _fake_body(op: _ops.OpOverload) -> Callable[..., Any]:
    """What a custom op runs on fake tensors: its fake impl, as torch's FakeTensorMode runs
    it (its body only when it has none, as a CompositeImplicit kernel runs)."""
    from fake_torch import library

    custom = library.custom_op_def(op)
    if getattr(custom, "_abstract_fn", None) is None:
        return op._kernel
    return lambda *args, **kwargs: library.run_fake(op, args, kwargs)


def _placeholder_names(f: Callable[..., Any], count: int) -> list[str]:
    """torch's: each positional parameter's name with `_1`, `arg<i>_1` for *args."""
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        params = []
    names: list[str] = []
    for p in params:
        if p.kind == p.VAR_POSITIONAL:
            break
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            names.append(f"{p.name}_1")
    names = names[:count]
    return names + [f"arg{i}_1" for i in range(len(names), count)]


def make_fx(f: Callable[..., Any],
            decomposition_table: Mapping[Any, Callable[..., Any]] | None = None,
            tracing_mode: str = "real", _allow_non_fake_inputs: bool = False,
            *, pre_dispatch: bool = False, record_module_stack: bool = False,
            _allow_fake_constant: bool = False, _error_on_data_dependent_ops: bool = True,
            record_stack_traces: bool = False, proxy_module_inputs: bool = False,
            _disable_torch_fn_metadata_mode: bool = False) -> Callable[..., GraphModule]:
    """A function that traces `f` on its arguments into an aten-level GraphModule."""
    if tracing_mode not in _TRACING_MODES:
        raise AssertionError(f"Unexpected tracing type: {tracing_mode}")
    if pre_dispatch:
        raise NotImplementedError("make_fx(pre_dispatch=True) is not emulated by fake_torch")

    def wrapped(*args: Any) -> GraphModule:
        functional = isinstance(f, Functionalized)
        return _trace(f.func if isinstance(f, Functionalized) else f, args, tracing_mode,
                      decomposition_table or {}, _error_on_data_dependent_ops, functional)

    return wrapped


def _trace(f: Callable[..., Any], args: tuple[Any, ...], tracing_mode: str,
           decompositions: Mapping[Any, Callable[..., Any]],
           error_on_data_dependent_ops: bool = True, functional: bool = False) -> GraphModule:
    tr = _Tracer(tracing_mode, decompositions)
    if functional:
        tr.functional = Functionalizer(tr)
    tr.error_on_data_dependent_ops = error_on_data_dependent_ops
    mode = _AtenMode(tr)
    if tracing_mode != "real":
        args = tuple(tr.fake_mode.from_tensor(a) if isinstance(a, Tensor) else a
                     for a in args)
    if tracing_mode == "symbolic":
        from fake_torch._dynamo.symbolic import SymbolicTrace

        tr.symbolic = SymbolicTrace(duck=True)
    for i, (name, value) in enumerate(zip(_placeholder_names(f, len(args)), args, strict=True)):
        node = tr.graph.placeholder(name)
        if isinstance(value, Tensor):
            node.meta["val"] = _input_example(tr, value, i, node)
            tr.bind(value, node)
            if tr.functional is not None:
                tr.functional.add_input(node, value)
        else:
            node.meta["val"] = value
    if tracing_mode == "real":
        with mode:
            result = f(*args)
    else:
        with tr.fake_mode, mode:
            result = f(*args)
    if tr.functional is not None:
        tr.functional.finish(tensors_in(result))
    tr.graph.output(_output_arg(tr, result))
    for node in tr.graph.nodes:  # a size expression's nodes (`mul = s75 * s96`)
        if "val" not in node.meta and "example_value" in node.meta:
            node.meta["val"] = node.meta.pop("example_value")
    return GraphModule(dict(tr.constants), tr.graph)


def _output_arg(tr: _Tracer, value: Any) -> Any:
    """The output node's argument: the result's structure kept (a tuple stays a tuple)."""
    if type(value) in (tuple, list):
        return type(value)(_output_arg(tr, v) for v in value)
    return tr.arg(value)


def _input_example(tr: _Tracer, t: Tensor, index: int, placeholder: Node) -> Any:
    fake = t if tr.tracing_mode != "real" else tr.fake_mode.from_tensor(t)
    if tr.symbolic is None:
        return fake
    env = tr.symbolic.env
    sizes: list[Any] = []
    for d, n in enumerate(t.shape):
        source = f"input{index}.size()[{d}]"
        expr = env.create_symbol(n, source)
        if expr.is_number:
            sizes.append(n)
            continue
        sizes.append(env.create_symintnode(expr, hint=n, source=source))
        tr.symbol_places.setdefault(expr, (placeholder, d))
    strides = contiguous_strides(sizes) if t.is_contiguous() else tuple(t.stride())
    return FakeTensor.symbolic(fake, tuple(sizes), tuple(strides), t.storage_offset(),
                               tr.symbolic.fake_mode)


__all__ = ["make_fx"]

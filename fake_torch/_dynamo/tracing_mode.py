"""What each call becomes while torch.compile traces: a node, a graph break, or neither.

Tracing pushes `TracingMode`, a TorchFunctionMode, on the tracing thread: every public call
(an op reached through any name: `F.silu`, a stored `self.act = F.silu`, a `functools.partial`,
an alias, a Tensor method, an operator) comes to `__torch_function__`, as in torch. The mode is
popped while a call runs, so what an op calls inside is part of that op's one node. Nothing is
patched. A call is
  - a node, described by the op's definition (fake_torch._opdef): `call_function(torch.add)`,
    `call_method("add")` for a Tensor method, `call_function(operator.add)` for `x + y` (the
    entry the code called, `Tensor.__add__`, is `called_entry()`), `getattr(x, "T")` for a
    property; a custom op (`torch.ops.<ns>.<name>`) is one node, whatever its body launches;
  - a graph break, when the definition says so (`nonzero`: a dynamic shape) or the op reads
    the host (`item`, `tolist`, `bool(t)`, `repr`), in torch's words (graph_breaks.py); with
    capture_scalar_outputs `.item()` is a node giving an unbacked SymInt (`u0`), with
    capture_dynamic_output_shape_ops nonzero / masked_select are nodes whose output has an
    unbacked size (trace.py's capture_item, dynamic_output);
  - neither, for metadata (`x.shape`, `x.size(0)`): it runs as it is.
`print(...)` is a C call, seen by a profile function (`sys.setprofile`, this thread only)
while the trace runs: a graph break before it, as Dynamo's.
"""

from __future__ import annotations

import builtins
import dis
import weakref
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING, Any

from fake_torch import _opdef, _torch_function
from fake_torch._dtype import bool_
from fake_torch._dynamo import graph_breaks as gb
from fake_torch._dynamo.state import _state
from fake_torch._ops import OpOverload, OpOverloadPacket
from fake_torch._tensor import _GETTERS, Tensor
from fake_torch.nn.modules.module import Module
from fake_torch.overrides import TorchFunctionMode

if TYPE_CHECKING:
    from fake_torch._dynamo.trace import Tracer

# a host sync met inside an op (on cuda): the op's text
_NONZERO = gb.dynamic_shape("aten.nonzero.default")
_SYNC_TEXT = {"index": _NONZERO, "nonzero": _NONZERO,
              "masked_select": gb.dynamic_shape("aten.masked_select.default"),
              "repeat_interleave": gb.dynamic_shape("aten.repeat_interleave.Tensor"),
              "multinomial": gb.data_dependent("aten.multinomial.default"),
              "item": gb.ITEM, "repr": gb.REPR}


def on_sync(what: str) -> str:
    return _SYNC_TEXT.get(what, gb.data_dependent("aten._local_scalar_dense.default"))


_BREAK_TEXT: dict[str, Callable[[str], str]] = {"dynamic_shape": gb.dynamic_shape,
                                                "data_dependent": gb.data_dependent,
                                                "one_hot": gb.one_hot_num_classes}


class TracingMode(TorchFunctionMode):
    """The mode a Tracer pushes: each call it sees is recorded, breaks the graph, or runs."""

    def __init__(self, tracer: Tracer) -> None:
        super().__init__()
        self._tracer = weakref.ref(tracer)  # weak: no cycle keeps a finished trace alive

    def __torch_function__(self, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        tracer = self._tracer()
        kwargs = kwargs or {}
        if tracer is None or _state.tracer is not tracer or _state.depth:
            return func(*args, **kwargs)  # suspended, or inside a recorded call
        entry = _torch_function.called_entry() or func
        opdef = _opdef.def_of(entry)
        if opdef is None:
            if isinstance(func, (OpOverload, OpOverloadPacket)):  # one node per custom op
                return tracer.call(_traced_body(tracer, func), args, kwargs, "call_function",
                                   func, on_sync=on_sync)
            if (tracer.sym is not None or tracer.dynamic_dims) and args \
                    and isinstance(args[0], Tensor):
                answer = _symbolic_metadata(tracer, func, args)
                if answer is not NotImplemented:
                    return answer
            return func(*args, **kwargs)  # metadata: nothing to record
        if opdef.kind == _opdef.HOST:
            return _host_read(tracer, opdef.name, entry, args, kwargs)
        brk = opdef.graph_break_for(args, kwargs)
        if brk is not None and brk[0] == "dynamic_shape" and tracer.capture_dynamic \
                and _dynamic_output_op(opdef.name, args, kwargs):
            op, target = ("call_function", opdef.fx_target) if opdef.fx_target is not None \
                else _node_form(entry)
            return tracer.dynamic_output(entry, args, kwargs, op, target, opdef.name)
        if brk is not None:
            text = _BREAK_TEXT[brk[0]](brk[1])
            return tracer.breaking_call(gb.GraphBreak(text, text), entry, *args, **kwargs)
        if opdef.is_property:
            return tracer.call(entry, args, kwargs, "call_function", getattr,
                               node_args=(args[0], opdef.name), opdef=opdef)
        if opdef.fx_target is not None:
            node_args = (args[1], args[0]) if opdef.reflected else tuple(args)
            return tracer.call(entry, args, kwargs, "call_function", opdef.fx_target,
                               node_args=node_args, on_sync=on_sync, opdef=opdef)
        op, target = _node_form(entry)
        return tracer.call(entry, args, kwargs, op, target, on_sync=on_sync, opdef=opdef)


def _node_form(entry: Any) -> tuple[str, Any]:
    """A Tensor method is `call_method` of its name, any other entry `call_function` of it."""
    if entry.__qualname__.startswith("TensorBase."):
        return "call_method", entry.__name__
    return "call_function", entry


def _dynamic_output_op(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """The ops whose data-dependent output size the tracer gives an unbacked symbol
    (capture_dynamic_output_shape_ops): nonzero / argwhere (not as_tuple), masked_select,
    and indexing by one bool mask (`x[x > 0]`)."""
    if name in ("nonzero", "argwhere"):
        return not kwargs.get("as_tuple", False) and "out" not in kwargs
    if name == "__getitem__":
        mask = args[1] if len(args) > 1 else None
        return isinstance(mask, Tensor) and mask.dtype is bool_ and 0 < mask.dim() <= \
            args[0].dim() and not kwargs
    return name == "masked_select" and "out" not in kwargs


# --- symbolic sizes -------------------------------------------------------------------------

_SIZE_QUERIES: dict[Any, str] = {Tensor.size: "size", Tensor.stride: "stride",
                                 Tensor.numel: "numel", Tensor.storage_offset: "storage_offset",
                                 _GETTERS["shape"]: "shape", Tensor.__len__: "len"}


def _symbolic_metadata(tracer: Tracer, func: Any, args: tuple[Any, ...]) -> Any:
    """`x.shape`, `x.size(0)`, `x.stride()`, `x.numel()` of a tensor with symbolic sizes: the
    SymInts of its example value (NotImplemented: not such a query, or not such a tensor)."""
    query = _SIZE_QUERIES.get(func)
    if query is None:
        return NotImplemented
    example = tracer.symbolic_example(args[0])
    if example is None:
        return NotImplemented
    if query == "shape":
        return example.shape
    if query == "len":  # Python wants an int: the size is specialised (a guard), as in torch
        if not example.shape:
            raise TypeError("len() of a 0-d tensor")
        return int(example.shape[0])
    return getattr(example, query)(*args[1:])


def _traced_body(tracer: Tracer, op: OpOverload | OpOverloadPacket) -> Callable[..., Any]:
    """What a custom op runs while traced: its fake impl (or Meta kernel), as torch runs it on
    FakeTensors, so the op's real body (and its side effects) runs only when the graph does;
    `torch.library.get_ctx()` in it makes symbols in the trace's ShapeEnv. An op with none
    runs its body (torch runs a Composite kernel so; for other kernels it raises "There was
    no fake impl registered")."""
    from fake_torch import library

    custom = library.custom_op_def(op)
    fake = getattr(custom, "_abstract_fn", None) if custom is not None else None
    if fake is None:
        return op
    return lambda *args, **kwargs: tracer.run_fake(op, args, kwargs)


# --- host reads -------------------------------------------------------------------------------

def _host_read(tracer: Tracer, name: str, entry: Any, args: tuple[Any, ...],
               kwargs: dict[str, Any]) -> Any:
    t = args[0]
    if name == "item" and tracer.capture_scalars and t.dtype is not bool_ and t.numel() == 1:
        return tracer.capture_item(t)
    if name == "__bool__":
        brk = _bool_break(tracer, t)
    else:
        text = _host_text(tracer, name, t)
        brk = gb.GraphBreak(text, text)
    return tracer.breaking_call(brk, entry, *args, **kwargs)


def _host_text(tracer: Tracer, name: str, t: Tensor) -> str:
    if name in ("__float__", "__int__", "__index__"):
        return gb.PYTHON_NUMBER if tracer.capture_scalars else gb.ITEM
    if name == "tolist":
        if t.dtype.is_floating_point:
            return gb.TOLIST_FLOAT
        return gb.data_dependent("aten._local_scalar_dense.default")
    if name in ("numpy", "__array__"):
        return gb.NUMPY
    if name == "__repr__":
        return gb.REPR
    return gb.ITEM


def _bool_break(tracer: Tracer, t: Tensor) -> gb.GraphBreak:
    """`if t:` (a jump on the tensor) is data-dependent branching; `bool(t)` reads .item()."""
    frames = gb.user_frames(tracer.code)
    frame = frames[0] if frames else None
    opname = dis.opname[frame.f_code.co_code[frame.f_lasti]] if frame is not None else ""
    if "JUMP" not in opname and opname not in ("TO_BOOL", "UNARY_NOT"):
        return gb.GraphBreak(gb.ITEM, gb.ITEM)
    seg = tracer.segment
    lines: list[str] = []
    if seg is not None:
        entry = seg.nodes.get(id(t))
        if entry is not None and entry[0]() is t and entry[1].op.startswith("call"):
            lines.append(_describe(entry[1]))
    stack = gb.summarize(frames)
    text = gb.branching(lines, stack[-1] if stack else None)
    return gb.GraphBreak(text, gb.BRANCH_EXPLAIN, "unimplemented")


def _describe(node: Any) -> str:
    """`gt = gt(sum_1, 0)`: a node as torch's branching message shows it."""
    def fmt(a: Any) -> str:
        return a.name if hasattr(a, "op") else repr(a)
    args = [fmt(a) for a in node.args] + [f"{k}={fmt(v)}" for k, v in node.kwargs.items()]
    if node.op == "call_method":
        return f"{node.name} = {args[0]}.{node.target}({', '.join(args[1:])})"
    return f"{node.name} = {getattr(node.target, '__name__', node.target)}({', '.join(args)})"


# --- builtins: print ------------------------------------------------------------------------

_WATCHED = {id(builtins.print): "print"}


_MODULE_CALL = Module._call_impl.__code__


def builtin_watch(tracer: Tracer) -> Callable[[FrameType, str, Any], None]:
    """The profile function of a trace: a watched builtin called by traced code (not inside an
    op) breaks the graph before it runs; tracing resumes when it returns. It also tells the
    tracer each nn.Module the traced code calls (their tensors are static inputs)."""
    pending: list[bool] = []
    watched = _WATCHED

    # (it runs for every call, return, C call and C return while the traced code runs: ~4M
    # events compiling the 32-layer toy; hence the commonest cases answered first and no
    # lookup past the first false test: a return, or a C return with no watched call pending)
    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            if frame.f_code is _MODULE_CALL:
                tracer.saw_module(frame.f_locals["self"])
        elif event == "c_call":
            if id(arg) in watched and _state.tracer is tracer and not _state.depth:
                types, has_kwargs = _call_arg_types(frame)
                text = gb.builtin_call_types(watched[id(arg)], types, has_kwargs)
                pending.append(True)
                tracer.begin_builtin_break(gb.GraphBreak(text, text))
        elif pending and event in ("c_return", "c_exception") and watched.get(id(arg)):
            pending.pop()
            tracer.end_builtin_break()

    return profile


_VALUE_LOADS = frozenset({"LOAD_FAST", "LOAD_DEREF", "LOAD_GLOBAL", "LOAD_NAME",
                          "LOAD_FAST_CHECK", "LOAD_FAST_BORROW"})
_STRING_MAKERS = frozenset({"BUILD_STRING", "FORMAT_VALUE", "FORMAT_SIMPLE",
                            "FORMAT_WITH_SPEC"})
_SKIPPED = frozenset({"PRECALL", "KW_NAMES", "CACHE", "EXTENDED_ARG"})


def _call_arg_types(frame: FrameType) -> tuple[list[str], bool]:
    """The type names of the positional arguments of the call `frame` is making, read from
    its bytecode (a constant, a variable, an f-string); "object" where no value says."""
    instructions = list(dis.get_instructions(frame.f_code))
    at = next((i for i, ins in enumerate(instructions) if ins.offset == frame.f_lasti), None)
    if at is None or instructions[at].opname not in ("CALL", "CALL_KW"):
        return ["object"], False
    call = instructions[at]
    argc = call.arg or 0
    i = at - 1
    num_kw = 0
    if call.opname == "CALL_KW":  # 3.13: the names tuple is pushed last
        num_kw = len(instructions[i].argval) if instructions[i].opname == "LOAD_CONST" else 0
        i -= 1
    while i >= 0 and instructions[i].opname in _SKIPPED:
        if instructions[i].opname == "KW_NAMES":
            num_kw = len(frame.f_code.co_consts[instructions[i].arg or 0])
        i -= 1
    types: list[str] = []
    for _ in range(argc):
        last, depth = instructions[i], 0
        while i >= 0:  # back to the first instruction of this argument's expression
            ins = instructions[i]
            depth += dis.stack_effect(ins.opcode, ins.arg if ins.opcode >= dis.HAVE_ARGUMENT
                                      else None, jump=False)
            i -= 1
            if depth >= 1:
                break
        types.append(_type_of(frame, last, single=depth == 1 and instructions[i + 1] is last))
    types.reverse()
    return types[:argc - num_kw], num_kw > 0


def _type_of(frame: FrameType, ins: dis.Instruction, single: bool) -> str:
    if ins.opname in _STRING_MAKERS:
        return "str"
    if not single:
        return "object"
    if ins.opname == "LOAD_CONST":
        return type(ins.argval).__name__
    if ins.opname in _VALUE_LOADS:
        name = ins.argval
        for space in (frame.f_locals, frame.f_globals, vars(builtins)):
            if name in space:
                return type(space[name]).__name__
    return "object"


def user_break() -> None:
    """torch._dynamo.graph_break(): end the graph here."""
    tracer = _state.tracer
    if tracer is None or _state.depth:
        return
    tracer.breaking_call(gb.GraphBreak(gb.USER_BREAK, gb.USER_BREAK), lambda: None)


__all__ = ["TracingMode", "builtin_watch", "on_sync", "user_break"]

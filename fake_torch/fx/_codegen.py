"""Graph -> `def forward(self, ...)` source text, laid out as torch.fx's CodeGen lays it out.

One line per node (`add = torch.add(x, x);  x = None`: values are dropped after their last
use), operators printed as Python operators (`getitem = x[0]`), torch functions by their torch
path, anything else through a global name recorded in `PythonCode.globals`. `verbose=True` is
what `print_readable()` shows: tensor annotations from `meta['val'/'example_value']`
(`add: "f32[4, 8]"`) and one stack-trace comment per run of nodes.

A graph's CodeGen says how its forward takes and returns values: as its placeholders (CodeGen),
or, for a graph whose inputs or outputs are nested structures (symbolic_trace with structured
`concrete_args`, torch._dynamo.export), as the original signature, flattened by a pytree spec
on the way in and rebuilt by another on the way out (_PyTreeCodeGen).
"""

from __future__ import annotations

import math
import re
import typing
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from fake_torch._tensor import Tensor
from fake_torch.fx.node import (
    Argument,
    Node,
    _find_exported_name,
    _get_qualified_name,
    _type_repr,
)

reflectable_magic_methods = {
    "add": "{} + {}", "sub": "{} - {}", "mul": "{} * {}", "floordiv": "{} // {}",
    "truediv": "{} / {}", "div": "{} / {}", "mod": "{} % {}", "pow": "{} ** {}",
    "lshift": "{} << {}", "rshift": "{} >> {}", "and_": "{} & {}", "or_": "{} | {}",
    "xor": "{} ^ {}", "getitem": "{}[{}]", "matmul": "{} @ {}",
}
magic_methods = {
    "eq": "{} == {}", "ne": "{} != {}", "lt": "{} < {}", "gt": "{} > {}", "le": "{} <= {}",
    "ge": "{} >= {}", "pos": "+{}", "neg": "-{}", "invert": "~{}",
    **reflectable_magic_methods,
}
inplace_methods = {
    "iadd": "{} += {}", "iand": "{} &= {}", "ifloordiv": "{} //= {}", "ilshift": "{} <<= {}",
    "imod": "{} %= {}", "imul": "{} *= {}", "imatmul": "{} @= {}", "ior": "{} |= {}",
    "ipow": "{} **= {}", "irshift": "{} >>= {}", "isub": "{} -= {}", "itruediv": "{} /= {}",
    "ixor": "{} ^= {}", "setitem": "{}[{}] = {}",
}
dtype_abbrs = {
    "bfloat16": "bf16", "float64": "f64", "float32": "f32", "float16": "f16", "int64": "i64",
    "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "u8", "bool": "b8",
}
_stack_line = re.compile(r"^File \"(.+)\", line (\d+), in (.+)$")


@dataclass
class PythonCode:
    """A graph as Python source: `src` defines `forward`; `globals` are the names it reads."""

    src: str
    globals: dict[str, Any]


class CodeGen:
    """A graph's inputs are its placeholders, its output is what it returns (torch's CodeGen)."""

    def process_inputs(self, *args: Any) -> Any:
        """The graph's positional inputs, from forward's arguments."""
        return args

    def process_outputs(self, out: Any) -> Any:
        """forward's return value, from what the graph's output node returns."""
        return out


class _PyTreeInfo(NamedTuple):
    orig_args: list[str]  # forward's parameter names
    in_spec: Any  # TreeSpec of (args) or ((args), {kwargs}): its leaves are the placeholders
    out_spec: Any | None  # TreeSpec the flat outputs are rebuilt by (None: returned as they are)


class _PyTreeCodeGen(CodeGen):
    """forward keeps the original signature: its arguments are flattened by `in_spec` into
    the placeholders, and the graph's flat outputs rebuilt by `out_spec`."""

    def __init__(self, pytree_info: _PyTreeInfo) -> None:
        super().__init__()
        self.pytree_info = pytree_info

    def process_inputs(self, *args: Any) -> Any:
        from fake_torch.utils import _pytree as pytree

        return pytree.tree_leaves(args)

    def process_outputs(self, out: Any) -> Any:
        from fake_torch.utils import _pytree as pytree

        if self.pytree_info.out_spec is None:
            return out
        if not isinstance(out, (list, tuple)):
            out = [out]
        return pytree.tree_unflatten(out, self.pytree_info.out_spec)

    def gen_var_bindings(self, free_vars: list[str]) -> str:
        """The line that flattens forward's arguments into the placeholders."""
        info = self.pytree_info
        in_spec = info.in_spec
        fn_args = info.orig_args
        fn_signature = f"[{', '.join(fn_args)}], self._in_spec"
        if (in_spec.type is tuple and in_spec.num_children == 2
                and in_spec.child(0).type is tuple and in_spec.child(1).type is dict):
            count_args = in_spec.child(0).num_children
            fn_kwargs = "{" + ", ".join(f"'{k}':{v}" for k, v in zip(
                in_spec.child(1).context, info.orig_args[count_args:], strict=False)) + "}"
            fn_signature = f"([{', '.join(info.orig_args[:count_args])}], {fn_kwargs}), " \
                           "self._in_spec"
        names = [x.split(":")[0].split("#")[0] for x in free_vars]
        annotated = [x + "; " for x in free_vars if ":" in x]
        bindings = "\n    " + "".join(annotated) + "\n" if annotated else ""
        return bindings + f"\n    {', '.join(names)}, = fx_pytree.tree_flatten_spec({fn_signature})"


def _custom_builtins() -> dict[str, object]:
    """Names every generated forward may use without an import (torch's list)."""
    from fake_torch import _namespace

    torch = _namespace.torch()
    return {"inf": math.inf, "nan": math.nan, "NoneType": type(None), "torch": torch,
            "device": torch.device}


def _format_target(base: str, target: str) -> str:
    """'self' + 'lin.weight' -> 'self.lin.weight' (getattr(...) for non-identifier atoms)."""
    r = base
    for e in target.split("."):
        r = f'{r}.{e}' if e.isidentifier() else f'getattr({r}, "{e}")'
    return r


def _stack_summary(stack_trace: str | None) -> str | None:
    """The innermost 'File: path:line in fn, code: ...' of a recorded stack trace."""
    if not stack_trace:
        return None
    lines = stack_trace.strip().split("\n")
    for idx in range(len(lines) - 2, -1, -1):
        m = _stack_line.match(lines[idx].strip())
        if m:
            return f"File: {m.group(1)}:{m.group(2)} in {m.group(3)}, code: " \
                   f"{lines[idx + 1].strip()}"
    return None


def _tensor_annotation(value: object, include_stride: bool, include_device: bool) -> str | None:
    """'f32[4, 8]' (plus strides / device on request) for a tensor example value, 'Sym(s77)'
    for a symbolic size."""
    from fake_torch._sym import SymBool, SymFloat, SymInt

    if isinstance(value, (SymInt, SymFloat, SymBool)):  # a symbol's value: "Sym(s77)"
        return f"Sym({value})"
    if not isinstance(value, Tensor):
        return None
    name = repr(value.dtype).removeprefix("torch.")
    text = f"{dtype_abbrs.get(name, name)}[{', '.join(str(s) for s in value.shape)}]"
    if include_stride:
        text += f"[{', '.join(str(s) for s in value.stride())}]"
    if include_device:
        text += str(value.device)
    return text


class _CodeGen:
    """State of one `gen_python_code` run: the namespace, globals and body lines."""

    def __init__(self, root_module: str) -> None:
        from fake_torch.fx.graph import _Namespace

        self.root_module = root_module
        self.namespace = _Namespace()
        self.globals: dict[str, Any] = {}
        for name, obj in _custom_builtins().items():
            self.add_global(name, obj)

    def add_global(self, name_hint: str, obj: Any) -> str:
        """The name under which generated code reaches `obj` (a torch path, or a new global)."""
        exported = _find_exported_name(obj)
        if exported is not None and exported.startswith("torch."):
            return exported
        module = getattr(obj, "__module__", None) or ""
        if callable(obj) and module.split(".")[0] in ("torch", "fake_torch"):
            return _get_qualified_name(obj)  # torch's own functions by their path
        name = self.namespace.create_name(name_hint, obj)
        if name in self.globals:
            assert self.globals[name] is obj, f"Global name {name} already assigned"
            return name
        self.globals[name] = obj
        return name

    def type_repr(self, o: object) -> str:
        """A type annotation as source ('torch.Tensor', 'int', 'list[int]')."""
        if o == ():
            return "()"
        origin = getattr(o, "__origin__", None)
        if origin is not None:
            args = typing.get_args(o)
            origin_name = self.type_repr(origin)
            return f"{origin_name}[{','.join(self.type_repr(a) for a in args)}]" if args \
                else origin_name
        text = _type_repr(o)
        if isinstance(o, type) and (o.__module__ == "builtins" or text.startswith("torch.")):
            return text
        return self.add_global(text, o)

    def node_name(self, n: Node) -> str:
        return self.namespace.create_name(n.name, n)

    def repr_arg(self, arg: Argument) -> str:
        """An argument as Python source: Nodes by name, containers recursively."""
        if isinstance(arg, Node):
            return self.node_name(arg)
        if isinstance(arg, tuple) and hasattr(arg, "_fields"):
            cls = type(arg)
            name = self.add_global(_get_qualified_name(cls), cls)
            return f"{name}{self.repr_arg(tuple(arg))}"
        if isinstance(arg, Tensor):
            dt = repr(arg.dtype).removeprefix("torch.")
            return f"torch.Tensor(size={list(arg.shape)}, dtype={dt})"
        if isinstance(arg, tuple):
            if len(arg) == 1:
                return f"({self.repr_arg(arg[0])},)"
            return "(" + ", ".join(self.repr_arg(a) for a in arg) + ")"
        if isinstance(arg, list):
            return "[" + ", ".join(self.repr_arg(a) for a in arg) + "]"
        if isinstance(arg, dict):
            return "{" + ", ".join(f"{k!r}: {self.repr_arg(v)}" for k, v in arg.items()) + "}"
        if isinstance(arg, slice):
            return (f"slice({self.repr_arg(arg.start)}, {self.repr_arg(arg.stop)}, "
                    f"{self.repr_arg(arg.step)})")
        return repr(arg)  # dtypes print as 'torch.float32', devices as 'device(...)'

    def format_args(self, args: tuple[Argument, ...], kwargs: dict[str, Argument]) -> str:
        parts = [self.repr_arg(a) for a in args]
        parts.extend(f"{k} = {self.repr_arg(v)}" for k, v in kwargs.items())
        return ", ".join(parts)

    def emit(self, node: Node, annotation: str) -> str:
        """One node's statement (without the trailing deletions)."""
        name = self.node_name(node)
        if node.op == "call_method":
            assert isinstance(node.target, str)
            return (f"{name}{annotation} = "
                    f"{_format_target(self.repr_arg(node.args[0]), node.target)}"
                    f"({self.format_args(node.args[1:], node.kwargs)})")
        if node.op == "call_function":
            target = node.target
            assert callable(target)
            fn_name = getattr(target, "__name__", "")
            if getattr(target, "__module__", "") == "_operator" and fn_name in magic_methods:
                return (f"{name}{annotation} = "
                        f"{magic_methods[fn_name].format(*(self.repr_arg(a) for a in node.args))}")
            if getattr(target, "__module__", "") == "_operator" and fn_name in inplace_methods:
                stmt = inplace_methods[fn_name].format(*(self.repr_arg(a) for a in node.args))
                return f"{stmt};  {name}{annotation} = {self.repr_arg(node.args[0])}"
            global_name = self.add_global(_get_qualified_name(target), target)
            if target is getattr and len(node.args) == 2 and isinstance(node.args[1], str) \
                    and node.args[1].isidentifier():
                return (f"{name}{annotation} = "
                        f"{_format_target(self.repr_arg(node.args[0]), node.args[1])}")
            return f"{name}{annotation} = {global_name}({self.format_args(node.args, node.kwargs)})"
        if node.op == "call_module":
            assert isinstance(node.target, str)
            return (f"{name}{annotation} = {_format_target(self.root_module, node.target)}"
                    f"({self.format_args(node.args, node.kwargs)})")
        if node.op == "get_attr":
            assert isinstance(node.target, str)
            return f"{name}{annotation} = {_format_target(self.root_module, node.target)}"
        raise NotImplementedError(f"node: {node.op} {node.target}")


def _last_uses(nodes: list[Node]) -> dict[Node, list[Node]]:
    """user -> the values whose last read is that user (they can be dropped right after)."""
    seen: set[Node] = set()
    user_to_last_uses: dict[Node, list[Node]] = {}
    for node in reversed(nodes):
        for input_node in node._input_nodes:
            if input_node not in seen:
                seen.add(input_node)
                user_to_last_uses.setdefault(node, []).append(input_node)
    return user_to_last_uses


def gen_python_code(nodes: Iterable[Node], root_module: str, *, verbose: bool = False,
                    include_stride: bool = False, include_device: bool = False,
                    codegen: CodeGen | None = None) -> PythonCode:
    """Source of `def forward(self, <placeholders>):` computing the graph `nodes` (under a
    _PyTreeCodeGen: `def forward(self, <original arguments>):` and a flattening line)."""
    node_list = list(nodes)
    gen = _CodeGen(root_module)
    pytree_info = codegen.pytree_info if isinstance(codegen, _PyTreeCodeGen) else None
    free_vars: list[str] = []
    body: list[str] = []
    wrapped_fns: dict[str, None] = {}  # functions fx.wrap kept as calls: re-wrapped on load
    user_to_last_uses = _last_uses(node_list)
    prev_summary: str | None = None
    return_annotation = ""
    for node in node_list:
        meta_val = node.meta.get("val", node.meta.get("example_value"))
        annotation = "" if node.type is None else f" : {gen.type_repr(node.type)}"
        if verbose:
            tensor_note = _tensor_annotation(meta_val, include_stride, include_device)
            if tensor_note is not None:
                annotation = f': "{tensor_note}"'
        if node.op == "placeholder":
            assert isinstance(node.target, str)
            default = "" if not node.args else f" = {gen.repr_arg(node.args[0])}"
            free_vars.append(f"{node.target}{annotation}{default}")
            raw_name = node.target.replace("*", "")
            if raw_name != gen.node_name(node):
                body.append(f"{gen.node_name(node)} = {raw_name}\n")
            continue
        if node.op == "output":
            if node.type is not None:
                return_annotation = f" -> {gen.type_repr(node.type)}"
            if pytree_info is not None and pytree_info.out_spec is not None:
                body.append(f"return pytree.tree_unflatten({gen.repr_arg(node.args[0])}, "
                            "self._out_spec)")
            else:
                body.append(f"return {gen.repr_arg(node.args[0])}")
            body.append("\n")
            continue
        if verbose:
            summary = _stack_summary(node.stack_trace) or \
                "No stacktrace found for following nodes"
            summary_str = f"\n# {summary}\n"
            if summary_str != prev_summary:
                prev_summary = summary_str
                body.append(summary_str)
        body.append(gen.emit(node, annotation))
        if node.op == "call_function" and node.meta.get("is_wrapped", False):
            assert callable(node.target)
            wrapped_fns.setdefault(gen.add_global(_get_qualified_name(node.target), node.target))
        to_delete = list(user_to_last_uses.get(node, []))
        if not node.users:
            to_delete.append(node)  # unused (kept for its side effect): free at once
        if to_delete:
            body.append(";  " + " = ".join([gen.node_name(n) for n in to_delete] + ["None"])
                        + "\n")
        else:
            body.append("\n")
    if not body:
        body.append("pass\n")
    wrap_stmts = ""
    if wrapped_fns:
        import fake_torch.fx

        wrap_name = gen.add_global("wrap", fake_torch.fx.wrap)
        wrap_stmts = "\n".join(f'{wrap_name}("{name}")' for name in wrapped_fns)
    if pytree_info is None:
        free_vars.insert(0, "self")
        prologue = f"def forward({', '.join(free_vars)}){return_annotation}:"
    else:
        fn_args = list(pytree_info.orig_args)
        if fn_args and fn_args[0] == "self":
            free_vars.insert(0, "self")
        else:
            fn_args.insert(0, "self")
        prologue = f"def forward({', '.join(fn_args)}){return_annotation}:"
        if free_vars:  # the structure holds placeholders
            assert isinstance(codegen, _PyTreeCodeGen)
            prologue += codegen.gen_var_bindings(free_vars)
    code = "".join(body).lstrip("\n")
    code = "\n".join("    " + line for line in code.split("\n"))
    src = f"\n{wrap_stmts}\n\n{prologue}\n{code}"
    return PythonCode(src, gen.globals)


__all__ = ["CodeGen", "PythonCode", "gen_python_code"]

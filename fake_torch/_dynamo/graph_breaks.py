"""Graph breaks: what stops a graph, in torch 2.13's words.

A break's text is the key of `counters["graph_break"]` (or `counters["unimplemented"]` for
data-dependent branching, as in torch), the reason `torch._dynamo.explain` reports, and, under
`fullgraph=True`, the message of the Unsupported error (with torch's "from user code:" tail).
Texts for breaks torch does not have (fake_torch cannot trace `.numpy()` or a host sync) follow
the same layout and say they are fake_torch's.
"""

from __future__ import annotations

import linecache
import os
import sys
import traceback
from dataclasses import dataclass, field
from types import CodeType, FrameType

from fake_torch._dynamo.exc import VERBOSE_FOOTER

# fake_torch's own folder (this file is fake_torch/_dynamo/graph_breaks.py)
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_GB_URL = "https://meta-pytorch.github.io/compile-graph-break-site/gb/{}.html"


@dataclass
class GraphCompileReason:
    """Why a graph was cut off (torch._dynamo.output_graph.GraphCompileReason)."""

    reason: str
    user_stack: list[traceback.FrameSummary]
    graph_break: bool = True


@dataclass
class GraphBreak:
    """One break as the tracer met it."""

    text: str  # torch's graph-break text: the counters key
    explain_reason: str  # what explain() reports (torch words branching differently)
    counter: str = "graph_break"  # or "unimplemented"
    user_stack: list[traceback.FrameSummary] = field(default_factory=list)
    site: tuple[str, int, str] = ("", 0, "")  # (file, line, function) of the compiled frame

    def error_message(self) -> str:
        """The Unsupported message under fullgraph=True."""
        lines = "".join(f'   File "{f.filename}", line {f.lineno}, in {f.name}\n{code_lines(f)}'
                        for f in self.user_stack)
        return f"{self.text}\n\nfrom user code:\n{lines}\n{VERBOSE_FOOTER}"


def _gb(gb_type: str, explanation: str, hints: list[str], context: str,
        gb_id: str | None) -> str:
    text = "\n".join([gb_type, f"  Explanation: {explanation}",
                      *(f"  Hint: {h}" for h in hints)])
    text += f"\n\n  Developer debug context: {context}\n"
    if gb_id is not None:
        text += f"\n For more details about this graph break, please visit: {_GB_URL.format(gb_id)}"
    return text


_VARIABLE = {"str": "constant.ConstantVariable", "int": "constant.ConstantVariable",
             "float": "constant.ConstantVariable", "bool": "constant.ConstantVariable",
             "NoneType": "constant.ConstantVariable", "Tensor": "tensor.TensorVariable",
             "Parameter": "tensor.TensorVariable", "Size": "lists.SizeVariable",
             "list": "lists.ListVariable", "tuple": "lists.TupleVariable",
             "dict": "dicts.ConstDictVariable"}


def builtin_call_types(name: str, types: list[str], has_kwargs: bool) -> str:
    """`print(...)` (or another builtin) on values Dynamo cannot trace it with: the type names
    of its positional arguments, and whether it had keyword arguments."""
    default = "user_defined.UserDefinedObjectVariable"
    classes = ", ".join(f"<class 'torch._dynamo.variables.{_VARIABLE.get(t, default)}'>"
                        for t in types)
    return _gb("Failed to trace builtin operator",
               f"Dynamo does not know how to trace builtin operator `{name}` with argument "
               f"types {types} (has_kwargs {has_kwargs})",
               [f"Avoid calling builtin `{name}` with argument types {types}. Consider using an "
                f"equivalent alternative function/method to `{name}`.",
                "If you are attempting to call a logging function (e.g. `print`), you can try "
                "adding it to `torch._dynamo.config.reorderable_logging_functions`.",
                "Please report an issue to PyTorch."],
               f"builtin {name} [{classes}] {has_kwargs}", "gb0059")


ITEM: str = _gb("Unsupported Tensor.item() call with capture_scalar_outputs=False",
           "Dynamo does not support tracing `Tensor.item()` with "
           "config.capture_scalar_outputs=False.",
           ["Set `torch._dynamo.config.capture_scalar_outputs = True` or `export "
            "TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS=1` to include these operations in the captured "
            "graph."],
           "call_method TensorVariable() item () {}", "gb0124")

PYTHON_NUMBER: str = _gb("Python number from a tensor (fake_torch)",
                    "`float(t)`, `int(t)` and `operator.index(t)` need the value as a plain Python "
                    "number while tracing; fake_torch captures only `Tensor.item()` as a scalar "
                    "output (torch captures these too).",
                    ["Call `t.item()` instead, or keep the value as a tensor."],
                    "call_method TensorVariable() item () {}", None)

TOLIST_FLOAT: str = _gb("Tensor.tolist() with non-integer tensor",
                   "Dynamo currently does not support tracing `tolist()` on non-integer tensors.",
                   ["Ensure the input tensor to `tolist()` is an integer type (e.g., int8, "
                    "int16, int32, int64)."],
                   "call_method TensorVariable() to_list", "gb0109")

REPR: str = _gb("repr() on tensor",
           "Tensor repr requires actual runtime values which are not available during tracing.",
           ["It may be possible to write Dynamo tracing rules for this code. Please report an "
            "issue to PyTorch if you encounter this graph break often and it is causing "
            "performance issues."],
           "repr() on Tensor", "gb0569")

USER_BREAK: str = _gb("Call to `torch._dynamo.graph_break()`",
                 "User-inserted graph break. Message: None",
                 ["Remove the `torch._dynamo.graph_break()` call."],
                 "Called `torch._dynamo.graph_break()` with args `[]`, kwargs `{}`", "gb0025")

NUMPY: str = _gb("Unsupported Tensor.numpy() call (fake_torch)",
            "fake_torch cannot trace `Tensor.numpy()`: the host array holds the tensor's values, "
            "which do not exist while tracing (torch traces numpy code; fake_torch does not).",
            ["Move the `.numpy()` call out of the compiled function."],
            "call_method TensorVariable() numpy () {}", None)


def disabled_call(fn: object, reason: str | None) -> str:
    """A torch.compiler.disable()d function called from compiled code."""
    return _gb("Skip calling `torch.compiler.disable()`d function",
               f"Skip calling function `{fn}` since it was wrapped with "
               f"`torch.compiler.disable` (reason: {reason})",
               ["Remove the `torch.compiler.disable` call"], f"{fn}", "gb0098")


def data_dependent(aten_op: str) -> str:
    """An op whose (non-tensor) result is read from the tensor's data."""
    return _gb("Data dependent operator",
               f"Operator `{aten_op}` has a non-Tensor output whose value is dependent on the "
               "data of Tensor inputs.",
               ["Enable tracing of data-dependent output operators with "
                "`torch._dynamo.config.capture_scalar_outputs = True`"],
               aten_op, "gb0033")


def one_hot_num_classes(context: str) -> str:
    """F.one_hot without a class count: its output's shape is read from the data."""
    return _gb("Attempted to use `torch.nn.functional.one_hot` with data-dependent output shape",
               "Dynamo does not support this.",
               ["Explicitly set the `num_classes` param of the function call "
                "`torch.nn.functional.one_hot` to something other than -1."],
               context, "gb0246")


def dynamic_shape(aten_op: str) -> str:
    """An op whose output shape is read from the tensor's data."""
    return _gb("Dynamic shape operator",
               f"Operator `{aten_op}`'s output shape depends on input Tensor data.",
               ["Enable tracing of dynamic shape operators with "
                "`torch._dynamo.config.capture_dynamic_output_shape_ops = True`"],
               aten_op, "gb0036")


def host_sync(what: str) -> str:
    """A host synchronisation fake_torch cannot trace (torch.cuda.synchronize(), ...)."""
    return _gb("Unsupported host synchronization (fake_torch)",
               f"The host waits for the device ({what}) inside the compiled region; fake_torch "
               "ends the graph there and runs the wait eagerly.",
               ["Move the synchronization out of the compiled function."], what, None)


def branching(condition_lines: list[str], frame: traceback.FrameSummary | None) -> str:
    """`if tensor:` and friends: the branch depends on the tensor's data."""
    where = ""
    if frame is not None:
        where = (f"        # File \"{frame.filename}\", line {frame.lineno}, in {frame.name}, "
                 f"code: {frame.line}\n")
    computed = "".join(f"        {line}\n" for line in condition_lines)
    return _gb("Data-dependent branching",
               "Detected data-dependent branching (e.g. `if my_tensor.sum() > 0:`). Dynamo does "
               "not support tracing dynamic control flow.\n\n"
               "      The branch condition involves a tensor computed as follows:\n"
               f"{where}{computed}    ",
               ["For the common pattern `if tensor_cond: x = transform(x)` (e.g. clamping "
                "inf/nan values), consider making the code branchless by always applying the "
                "transform. Operations like torch.clamp, torch.nan_to_num, and torch.where are "
                "typically no-ops on well-behaved inputs and compile without graph breaks.",
                "This graph break is fundamental - it is unlikely that Dynamo will ever be able "
                "to trace through your code. Consider finding a workaround.",
                "Use `torch.cond` to express dynamic control flow."],
               "attempted to jump with TensorVariable()", "gb0170")


BRANCH_EXPLAIN = "generic_jump TensorVariable()"

RECOMPILE_LIMIT: str = _gb("Dynamo recompile limit exceeded",
                      "Dynamo attempted to recompile the code object too many times, exceeding "
                      "the recompile_limit cache size limit (currently set to {limit}). Excessive "
                      "recompilations can degrade performance due to the compilation overhead "
                      "of each recompilation.",
                      ["To monitor recompilations, enable TORCH_LOGS=recompiles. If "
                       "recompilations are expected, consider increasing "
                       "torch._dynamo.config.recompile_limit to an appropriate value.",
                       "See https://docs.pytorch.org/docs/main/user_guide/torch_compiler/compile/"
                       "programming_model.recompilation.html for tips on dealing with "
                       "recompilations."],
                      "Limit type: recompile_limit", "gb0039")


def scalar_guard_error(expr: str) -> str:
    """A captured `.item()` value decides Python control flow (fullgraph=True)."""
    return (f"Consider annotating your code using torch._check*(). Could not guard on "
            f"data-dependent expression {expr} (unhinted: {expr}).  (Size-like symbols: none)\n\n"
            "consider using data-dependent friendly APIs such as guard_or_false, guard_or_true "
            "and statically_known_true.")


# --- where the user is --------------------------------------------------------------------------

def is_user_code(code: CodeType) -> bool:
    """Not fake_torch's (its files, and the op entries it generates) nor Python's frozen."""
    filename = code.co_filename
    return not filename.startswith((_PACKAGE_DIR, "<frozen", "<fake_torch"))


def user_frames(stop: CodeType | None) -> list[FrameType]:
    """The user frames on the stack, innermost first, up to the compiled function's frame."""
    found: list[FrameType] = []
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if is_user_code(frame.f_code):
            found.append(frame)
        if frame.f_code is stop:
            break
        frame = frame.f_back
    return found


def summarize(frames: list[FrameType]) -> list[traceback.FrameSummary]:
    """FrameSummaries (outermost first) of `frames` (innermost first), with their code lines
    (and the column span of the expression running, for torch's caret line)."""
    out = []
    for f in reversed(frames):
        lineno = f.f_lineno or 0
        line = linecache.getline(f.f_code.co_filename, lineno).strip()
        summary = traceback.FrameSummary(f.f_code.co_filename, lineno, f.f_code.co_name,
                                         line=line)
        positions = list(f.f_code.co_positions())
        index = f.f_lasti // 2
        if 0 <= index < len(positions):
            start, end, col, end_col = positions[index]
            if start == end == lineno:
                summary.colno, summary.end_colno = col, end_col
        out.append(summary)
    return out


def code_lines(f: traceback.FrameSummary) -> str:
    """The code line of a frame, with carets under the expression when it is not all of it."""
    text = f"    {f.line}\n"
    raw = linecache.getline(f.filename, f.lineno or 0).rstrip()
    col: int | None = getattr(f, "colno", None)
    end_col: int | None = getattr(f, "end_colno", None)
    if col is None or end_col is None or not raw:
        return text
    indent = len(raw) - len(raw.lstrip())
    if col <= indent and end_col >= len(raw):
        return text
    return text + " " * (4 + col - indent) + "^" * (end_col - col) + "\n"


__all__ = ["GraphBreak", "GraphCompileReason"]

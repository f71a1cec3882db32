"""Operator schemas as torch.library.Library.define reads them:
"name.overload(Tensor x, Tensor(a!) out, *, int k=3) -> ()".

The parts fake_torch uses: the name and overload, each argument's type, name, default and
whether it is keyword-only or written to (`Tensor(a!)`), and the return type; from them comes
the Python signature a call is bound against, with the dispatcher's errors.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass
from typing import Any

# the schema types torch's parser knows (a registered opaque type's name is valid too)
_BASE_TYPES = frozenset({
    "Tensor", "SymInt", "int", "float", "bool", "str", "Scalar", "ScalarType", "Device",
    "Layout", "MemoryFormat", "Generator", "Storage", "Stream", "Dimname", "Any", "complex",
    "SymFloat", "SymBool", "QScheme", "GraphModule"})
# a type is `Tensor(a!)[]?`, `Tensor!?` (the shorthand for a fresh written-to alias set) or a
# tuple `(int, int)?`
_ARG = re.compile(r"^(?P<type>(?:\S+(?:\s*\([^)]*\))?|\([^)]*\))[\[\]\d?!]*)\s+(?P<name>\w+)"
                  r"(?:\s*=\s*(?P<default>.+))?$")
_NO_DEFAULT = inspect.Parameter.empty


@dataclass(frozen=True)
class Argument:
    """One argument of a schema: `Tensor(a!) out`, `int k=3`."""

    type: str
    name: str
    default: Any  # the Python value, or inspect.Parameter.empty
    kwarg_only: bool

    @property
    def is_write(self) -> bool:
        return "!" in self.type

    @property
    def is_tensor_like(self) -> bool:
        return self.type.startswith("Tensor")


@dataclass(frozen=True)
class FunctionSchema:
    """A parsed schema; str() gives it back as written."""

    name: str  # without the overload
    overload_name: str  # "" for the default overload
    arguments: tuple[Argument, ...]
    returns: str  # "()", "Tensor", "(Tensor, Tensor)", ...
    text: str

    def __str__(self) -> str:
        return self.text

    def signature(self) -> inspect.Signature:
        """The Python signature a call binds against."""
        kinds = {False: inspect.Parameter.POSITIONAL_OR_KEYWORD,
                 True: inspect.Parameter.KEYWORD_ONLY}
        return inspect.Signature([inspect.Parameter(a.name, kinds[a.kwarg_only],
                                                    default=a.default)
                                  for a in self.arguments])

    def mutated_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.arguments if a.is_write)


def parse_schema(text: str, opaque_names: frozenset[str] = frozenset()) -> FunctionSchema:
    """Parse "name(args) -> returns" (a "ns::" prefix on the name is allowed); torch's
    RuntimeError for what its parser rejects."""
    # `Tensor!` is short for a fresh alias set of its own; torch prints it `Tensor($0! -> )`
    fresh = iter(range(text.count("!")))
    text = re.sub(r"\bTensor!", lambda m: f"Tensor(${next(fresh)}! -> )", text)
    head, paren, rest = text.partition("(")
    args_text, close, after = _split_args(rest)
    returns = after.strip()
    if not paren:
        raise RuntimeError(f"expected ( but found 'eof' here:\n{text}\n")
    if not close:
        raise RuntimeError(f"expected ) but found 'arrow' here:\n{text}\n")
    if not returns.startswith("->"):
        raise RuntimeError(f"expected 'arrow' but found {returns[:1]!r} here:\n{text}\n")
    name = head.strip().split("::")[-1]
    base, _, overload = name.partition(".")
    arguments: list[Argument] = []
    kwarg_only = False
    for part in _top_level_split(args_text):
        if part == "*":
            kwarg_only = True
            continue
        match = _ARG.match(part)
        if match is None:
            raise RuntimeError(f"expected a type and a name but found {part!r} here:\n{text}\n")
        type_ = match["type"]
        if not set(_base_types(type_)) <= _BASE_TYPES | opaque_names:
            raise RuntimeError(
                "\nunknown type specifier. Common valid schema types include Tensor, SymInt, "
                "int, float, bool, Scalar; for a full list, please see "
                "https://github.com/pytorch/pytorch/blob/main/aten/src/ATen/native/README.md"
                f"#func :\n{text}\n")
        default = _NO_DEFAULT if match["default"] is None else _value(match["default"])
        arguments.append(Argument(type_, match["name"], default, kwarg_only))
    return FunctionSchema(base, overload, tuple(arguments), returns[2:].strip(), text)


def _split_args(rest: str) -> tuple[str, str, str]:
    """The text inside the argument list's parentheses, ")" (or "" when unbalanced), and what
    follows it."""
    depth = 0
    for i, ch in enumerate(rest):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            if depth == 0:
                return rest[:i], ")", rest[i + 1:]
            depth -= 1
        elif ch == "-" and rest[i:i + 2] == "->" and depth == 0:
            return rest[:i], "", rest[i:]
    return rest, "", ""


def _top_level_split(args: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(args):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(args[start:i].strip())
            start = i + 1
    last = args[start:].strip()
    return [*parts, last] if last else parts


def _base_types(type_: str) -> list[str]:
    """"Tensor(a!)[]?" -> ["Tensor"], "Tensor!?" -> ["Tensor"], "(int, int)?" -> ["int", "int"]."""
    if type_.startswith("("):  # a tuple type: its elements'
        inner = type_[1:type_.rindex(")")]
        return [t for part in _top_level_split(inner) for t in _base_types(part)]
    return [re.sub(r"\(.*?\)|\[\d*\]|\?|!", "", type_)]


def _value(text: str) -> Any:
    """A default as Python sees it: "None", "True", "3", "1.5", '"hi"', "[1, 2]"; any other
    token (a dtype name such as "float32") stays a string."""
    text = text.strip()
    literals: dict[str, Any] = {"None": None, "True": True, "False": False}
    if text in literals:
        return literals[text]
    if text.startswith("[") and text.endswith("]"):
        return [_value(v) for v in _top_level_split(text[1:-1])]
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    for number in (int, float):
        try:
            return number(text)
        except ValueError:
            pass
    return text

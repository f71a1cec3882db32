"""PatternPrettyPrinter: a pattern written out as the Python that builds it (one named
assignment per node pattern, shared sub-patterns named once), as torch prints pattern dumps."""

from __future__ import annotations

import functools
from typing import Any

from fake_torch._inductor._pattern_exprs import PatternExpr, _TargetArgsExpr
from fake_torch.fx.graph import _Namespace


class PatternPrettyPrinter:
    """Serializes patterns to executable Python."""

    def __init__(self) -> None:
        self.namespace = _Namespace()
        self.memoized_objs_names: dict[PatternExpr, str] = {}
        self.memoized_objs_pp: dict[PatternExpr, str] = {}

    @staticmethod
    @functools.cache
    def run(obj: PatternExpr, output_name: str = "output") -> str:
        """`obj` as Python statements ending in `<output_name> = ...`."""
        pp = PatternPrettyPrinter()
        assert hasattr(obj, "pretty_print")
        out_str = obj.pretty_print(pp=pp)
        lines = [f"{pp.memoized_objs_names[key]} = {pp.memoized_objs_pp[key]}"
                 for key in pp.memoized_objs_names]
        lines.append(f"{output_name} = {out_str}")
        return "\n".join(lines)

    def pretty_print(self, obj: Any) -> str:
        if isinstance(obj, _TargetArgsExpr):
            return self.memoized_objs_names.get(obj) or self.memoize(obj)
        if hasattr(obj, "pretty_print"):
            return str(obj.pretty_print(self))
        return repr(obj)

    def memoize(self, obj: _TargetArgsExpr) -> str:
        obj_str = obj.pretty_print(self)
        obj_name = obj.fns_repr()
        for prefix in ("aten.", "torch.", "prims."):
            obj_name = obj_name.replace(prefix, "")
        tmp_name = self.namespace.create_name(obj_name, None)
        self.memoized_objs_names[obj] = tmp_name
        self.memoized_objs_pp[obj] = obj_str
        return tmp_name


__all__ = ["PatternPrettyPrinter"]

"""torch._dynamo.symbolic_convert: Dynamo's bytecode interpreter. fake_torch's Dynamo runs the
Python itself under modes (trace.py) and has no instruction translator; the class exists so
that code can refer to it, and its entry points raise."""

from __future__ import annotations

from typing import Any


class InstructionTranslatorBase:
    """Dynamo's symbolic bytecode interpreter (not emulated)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(
            "torch._dynamo.symbolic_convert is not emulated by fake_torch: its Dynamo runs "
            "Python under modes, it does not interpret bytecode")


class InliningInstructionTranslator(InstructionTranslatorBase):
    """The translator Dynamo inlines a called function with (not emulated)."""

    @classmethod
    def inline_call_(cls, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            "torch._dynamo.symbolic_convert.InliningInstructionTranslator.inline_call_ is not "
            "emulated by fake_torch: its Dynamo inlines calls by running them")


__all__ = ["InliningInstructionTranslator", "InstructionTranslatorBase"]

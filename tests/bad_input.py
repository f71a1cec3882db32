"""The bad-input oracle the tests/test_bad_input_*.py suites share: one small program, run in
real torch (CPU build) and in fake_torch, and judged by what torch did.

A program takes the library as its argument (`lambda L: L.zeros(2).view(3)`). Its outcome in
fake_torch must be torch's:
  - torch raises, fake_torch returns: a SILENT result, the failure this suite exists to find;
  - torch raises: fake_torch raises the same exception class with the same first message line
    (`oracles.first_line`: torch appends hints and overload lists after it), or one whose
    variant torch prints on its machine (`oracles.torch_may_say`);
  - torch returns: fake_torch returns too, or refuses by name with NotImplementedError (what it
    does not emulate), never another error.
`judge` says which of these happened; `check` fails the test unless the outcomes agree. A case
whose first line is known to differ (TEXT_DIFFERS in its module, with the reason) must still
raise torch's class, and must still differ: a text fixed since makes its entry fail as stale.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from oracles import first_line, outcome, torch_may_say

import fake_torch as ft

Program = Callable[[Any], Any]


def judge(program: Program) -> str:
    """"same", or what differs: "silent", "refused", "class" or "text" (with both outcomes)."""
    import torch

    _, theirs = outcome(lambda: program(torch))
    _, ours = outcome(lambda: program(ft))
    if theirs is None:
        if ours is None or isinstance(ours, NotImplementedError) \
                or torch_may_say(None, first_line(ours)):
            return "same"
        return f"refused: torch returned, fake_torch raised {ours!r}"
    if ours is None:
        return f"silent: torch raised {type(theirs).__name__}: {first_line(theirs)!r}, " \
               "fake_torch returned a result"
    if type(ours) is not type(theirs):
        return f"class: torch raised {theirs!r}, fake_torch {ours!r}"
    mine = first_line(ours).replace("fake_torch.", "torch.")
    if not torch_may_say(first_line(theirs), mine):
        return f"text: torch {first_line(theirs)!r}, fake_torch {mine!r}"
    return "same"


def check(program: Program, text_differs: str | None = None) -> None:
    """Fail unless fake_torch's outcome is torch's (see the module docstring); `text_differs`:
    why the first message line is known to differ (the class must not)."""
    pytest.importorskip("torch")
    verdict = judge(program)
    if text_differs is None:
        if verdict != "same":
            pytest.fail(verdict, pytrace=False)
    elif not verdict.startswith("text:"):
        pytest.fail(f"a known text difference ({text_differs}) is now {verdict!r}: update its "
                    "entry", pytrace=False)


ARG_PARSER = ("torch's argument parser lists its overloads; fake_torch's Python signature "
              "names the one argument")
PY_ARITY = ("a Python method: Python words its own arity error (torch's C method: 'takes no "
            "arguments')")
ONE_IMPL = ("one implementation serves torch.max and Tensor.max: its parser error prints the "
            "method form, without the leading 'Tensor, '")

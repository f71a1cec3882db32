"""torch.SymInt, SymFloat, SymBool: the symbolic scalars of torch's dynamic shapes.

Code names them in type hints and `isinstance` checks (`*size: int | torch.SymInt`); fake_torch
traces with concrete sizes only, so no value is ever one of them and building one refuses."""

from __future__ import annotations

from typing import Any


class SymInt:
    """A symbolic int (torch's dynamic shapes): not emulated, never constructed."""

    def __init__(self, node: Any) -> None:
        raise NotImplementedError("torch.SymInt: symbolic shapes are not emulated by fake_torch "
                                  "(sizes are always concrete ints)")


class SymFloat:
    """A symbolic float (torch's dynamic shapes): not emulated, never constructed."""

    def __init__(self, node: Any) -> None:
        raise NotImplementedError("torch.SymFloat: symbolic shapes are not emulated by "
                                  "fake_torch (values are always concrete floats)")


class SymBool:
    """A symbolic bool (torch's dynamic shapes): not emulated, never constructed."""

    def __init__(self, node: Any) -> None:
        raise NotImplementedError("torch.SymBool: symbolic shapes are not emulated by "
                                  "fake_torch (values are always concrete bools)")

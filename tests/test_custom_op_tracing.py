"""A custom op traced by torch.compile runs its fake impl, not its body: an op with side
effects runs its real body once per call (at execution), as in torch 2.13 CPU. Both ways of
registering one: torch.library.custom_op + register_fake, and (vLLM's) Library.define + impl +
_register_fake."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

import fake_torch as ft

LIBS = ["torch", "fake_torch"]
_names = itertools.count()


def _lib(name: str) -> Any:
    return pytest.importorskip("torch") if name == "torch" else ft


def _custom_op(lib: Any, runs: dict[str, int]) -> Any:
    name = f"tracecnt{next(_names)}::bump"

    def body(x: Any) -> Any:
        runs["real"] += 1
        return x + 1

    body.__annotations__ = {"x": lib.Tensor, "return": lib.Tensor}  # real types, not strings
    bump = lib.library.custom_op(name, mutates_args=())(body)

    @bump.register_fake  # type: ignore[untyped-decorator]
    def _(x: Any) -> Any:
        runs["fake"] += 1
        return lib.empty_like(x)

    return bump


def _defined_op(lib: Any, runs: dict[str, int], register_fake: Any) -> Any:
    """Library.define + impl of a counting op; `register_fake(library, ns, fake)` gives it its
    fake impl."""
    ns = f"tracecnt{next(_names)}"
    library = lib.library.Library(ns, "FRAGMENT")
    library.define("bump(Tensor x) -> Tensor")

    def real(x: Any) -> Any:
        runs["real"] += 1
        return x + 1

    def fake(x: Any) -> Any:
        runs["fake"] += 1
        return lib.empty_like(x)

    library.impl("bump", real, "CPU")
    register_fake(library, ns, fake)
    op = getattr(lib.ops, ns).bump
    op._keep_library = library  # the registrations live as long as the Library object
    return op


def _library_op(lib: Any, runs: dict[str, int]) -> Any:
    return _defined_op(lib, runs, lambda library, ns, fake: library._register_fake("bump", fake))


def _impl_abstract_op(lib: Any, runs: dict[str, int]) -> Any:
    """The fake impl by the old name torch.library.impl_abstract."""
    def register(library: Any, ns: str, fake: Any) -> None:
        with pytest.warns(FutureWarning, match="renamed to `torch.library.register_fake`"):
            lib.library.impl_abstract(f"{ns}::bump", fake, lib=library)
    return _defined_op(lib, runs, register)


@pytest.mark.parametrize("make", [_custom_op, _library_op, _impl_abstract_op],
                         ids=["custom_op", "Library", "impl_abstract"])
@pytest.mark.parametrize("lib_name", LIBS)
def test_traced_custom_op_runs_its_body_once_per_call(lib_name: str, make: Any) -> None:
    lib = _lib(lib_name)
    lib._dynamo.reset()
    runs = {"real": 0, "fake": 0}
    op = make(lib, runs)
    compiles: list[int] = []

    def backend(gm: Any, example_inputs: list[Any]) -> Any:
        compiles.append(1)
        return gm.forward

    compiled = lib.compile(lambda x: op(x) * 2, backend=backend)
    assert compiled(lib.ones(3)).tolist() == [4.0, 4.0, 4.0]
    assert runs == {"real": 1, "fake": 1}
    compiled(lib.ones(3))
    assert runs == {"real": 2, "fake": 1}
    assert compiled(lib.ones(5)).tolist() == [4.0] * 5  # a recompile: traced again
    assert runs == {"real": 3, "fake": 2}
    assert len(compiles) == 2

"""torch.library.Library and infer_schema: how vLLM registers its custom ops
(`direct_register_custom_op`: infer_schema, define, impl for a dispatch key, _register_fake).

Differential: the same program runs against real torch (CPU build) and fake_torch; kernels,
errors (class and first line) and schemas must agree. Eager a defined op launches what its
kernel launches; torch.compile records it as ONE graph node a backend can split at.

No `from __future__ import annotations` here: infer_schema reads the annotations of functions
defined inside the tests, whose local types (the library's Tensor, LayerName) a postponed
annotation could not resolve."""

import gc
import itertools
import re
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import fake_torch as ft
from fake_torch import library
from fake_torch._library.opaque_object import register_opaque_type
from fake_torch._opaque_base import OpaqueBase
from tests.oracles import assert_same_error, launches, outcome

_names = itertools.count()


@pytest.fixture
def ns() -> str:
    """A fresh namespace per test (both libraries keep their registrations per process)."""
    return f"ftlibtest{next(_names)}"


def _libs() -> Iterator[Any]:
    yield ft
    torch = pytest.importorskip("torch")
    yield torch


# --- define + impl, eager ----------------------------------------------------------------------


def test_define_impl_and_call_eagerly_on_cuda(ns: str) -> None:
    lib = ft.library.Library(ns, "FRAGMENT")
    assert repr(lib) == f"Library(kind=FRAGMENT, ns={ns}, dispatch_key=)>"
    assert lib.define("scale(Tensor x, Tensor(a!) out, *, float alpha=2.0) -> ()") == "scale"

    def scale(x: ft.Tensor, out: ft.Tensor, *, alpha: float = 2.0) -> None:
        out.copy_(x * alpha)  # two launches: mul, copy_

    lib.impl("scale", scale, dispatch_key="CUDA")
    packet = getattr(ft.ops, ns).scale
    assert str(packet.default) == f"{ns}.scale.default"
    assert packet.default._schema == (f"{ns}::scale(Tensor x, Tensor(a!) out, *, float "
                                      "alpha=2.0) -> ()")
    x, out = ft.full((4,), 3.0, device="cuda"), ft.zeros(4, device="cuda")
    for call in (packet, packet.default):
        with launches() as names:
            assert call(x, out, alpha=3.0) is None
        assert names == ["mul", "copy_"]
        assert out.tolist() == [9.0] * 4
    assert library.mutated_arg_names(packet.default) == ("out",)


def _dispatch_program(torch: Any, ns: str) -> list[Any]:
    """Which kernel runs for which key, as values (cpu tensors: both libraries have them)."""
    lib = torch.library.Library(ns, "FRAGMENT")
    ops = getattr(torch.ops, ns)
    lib.define("a(Tensor x) -> Tensor")
    lib.impl("a", lambda x: x * 2, "CPU")
    lib.impl("a", lambda x: x * 3, "CompositeExplicitAutograd")
    lib.define("b(Tensor x) -> Tensor")
    lib.impl("b", lambda x: x * 5)  # "" = CompositeImplicitAutograd
    lib.define("c(Tensor x) -> Tensor")
    lib.impl("c", lambda x: x * 5, "CompositeImplicitAutograd")
    lib.impl("c", lambda x: x * 7, "CPU")
    lib.define("d(int n) -> int")
    lib.impl("d", lambda n: n + 1, "CompositeExplicitAutograd")
    lib.define("e(Tensor x, *, int k=3) -> Tensor")
    lib.impl("e", lambda x, *, k=3: x * k, "CPU")
    one = torch.ones(1)
    out = [ops.a(one).tolist(), ops.b(one).tolist(), ops.c(one).tolist(), ops.d(1),
           ops.e(one).tolist(), ops.e.default(one, k=4).tolist()]
    lib._destroy()
    return out


def test_dispatch_keys_pick_the_kernel_torch_picks(ns: str) -> None:
    torch = pytest.importorskip("torch")
    assert _dispatch_program(ft, ns) == _dispatch_program(torch, ns + "t") == \
        [[2.0], [5.0], [7.0], 2, [3.0], [4.0]]


@pytest.mark.parametrize("case", [
    "cuda_only_on_cpu", "no_kernel", "no_tensor_no_fallback", "too_many_positional",
    "missing", "unknown_kw", "returns_for_void", "define_twice", "bad_alias_analysis",
    "bad_dispatch_key", "bad_kind", "reserved", "def_twice", "impl_not_callable",
    "impl_bad_name", "unknown_type", "unclosed", "destroyed", "no_override"])
def test_errors_match_torch(case: str, ns: str) -> None:
    suffix = itertools.count()

    def program(torch: Any) -> Any:
        name = f"{ns}_{next(suffix)}"
        lib = torch.library.Library(name, "FRAGMENT")
        ops = getattr(torch.ops, name)
        one = torch.ones(2)
        lib.define("f(Tensor x, Tensor(a!) out, *, int k=3) -> ()")
        lib.impl("f", lambda x, out, *, k=3: None, "CPU")
        if case == "cuda_only_on_cpu":
            lib.define("g(Tensor x) -> Tensor")
            lib.impl("g", lambda x: x + 1, "CUDA")
            return ops.g(one)
        if case == "no_kernel":
            lib.define("g(Tensor x) -> Tensor")
            return ops.g(one)
        if case == "no_tensor_no_fallback":
            lib.define("g(int x) -> int")
            lib.impl("g", lambda x: x, "CUDA")
            return ops.g(1)
        if case == "too_many_positional":
            return ops.f(one, one, 4)
        if case == "missing":
            return ops.f(one)
        if case == "unknown_kw":
            return ops.f(one, one, z=1)
        if case == "returns_for_void":
            lib.impl("f", lambda x, out, *, k=3: out, "CPU")
            return ops.f(one, one)
        if case == "define_twice":
            return lib.define("f(Tensor x) -> ()")
        if case == "bad_alias_analysis":
            return lib.define("g(Tensor x) -> Tensor", alias_analysis="PURE_FUNCTION")
        if case == "bad_dispatch_key":
            return lib.impl("f", lambda *a: None, "Bogus")
        if case == "bad_kind":
            return torch.library.Library(name + "k", "BAD")
        if case == "reserved":
            return torch.library.Library("prim", "FRAGMENT")
        if case == "def_twice":
            keep = torch.library.Library(name + "d", "DEF")
            return keep, torch.library.Library(name + "d", "DEF")
        if case == "impl_not_callable":
            return lib.impl("f", 3, "CPU")
        if case == "impl_bad_name":
            return lib.impl(5, lambda x: x, "CPU")
        if case == "unknown_type":
            return lib.define("g(Tensr x) -> Tensor")
        if case == "unclosed":
            return lib.define("g(Tensor x -> Tensor")
        if case == "destroyed":
            lib._destroy()
            return lib.define("g(Tensor x) -> Tensor")
        assert case == "no_override"
        return lib.impl("f", lambda *a: None, "CPU", allow_override=False)

    pytest.importorskip("torch")
    import torch

    ours, theirs = outcome(lambda: program(ft))[1], outcome(lambda: program(torch))[1]
    assert theirs is not None, "torch accepted it"
    assert type(ours) is type(theirs), (ours, theirs)
    assert _leading(ours) == _leading(theirs)


def _leading(e: BaseException) -> str:
    """The message's first sentence (torch's parser starts some with a newline; its dispatcher
    appends build hints and kernel lists after the first sentence)."""
    first = str(e).strip().split("\n")[0].split(". ")[0]
    return re.sub(r"ftlibtest\d+_\d+", "NS", first)  # each library ran in its own namespace


def test_what_torch_accepts_fake_torch_accepts(ns: str) -> None:
    """impl and _register_fake before define; a second DEF library after the first died;
    a kind="IMPL" library's dispatch_key as impl's default; impl by OpOverload."""

    def program(torch: Any) -> list[Any]:
        lib = torch.library.Library(ns + torch.__name__, "FRAGMENT")
        lib.impl("later", lambda x: x + 1, "CPU")
        lib._register_fake("later", lambda x: torch.empty_like(x))
        lib.define("later(Tensor x) -> Tensor")
        ops = getattr(torch.ops, ns + torch.__name__)
        first = ops.later(torch.ones(1)).tolist()
        impl_lib = torch.library.Library(ns + torch.__name__, "IMPL", "CPU")
        impl_lib.impl("later", lambda x: x + 10)
        second = ops.later(torch.ones(1)).tolist()
        lib.impl(ops.later.default, lambda x: x + 20, "CPU")
        third = ops.later(torch.ones(1)).tolist()
        owner = torch.library.Library(ns + torch.__name__ + "def", "DEF")
        del owner
        gc.collect()
        again = repr(torch.library.Library(ns + torch.__name__ + "def", "DEF"))
        return [first, second, third, again.replace(torch.__name__, "")]

    torch = pytest.importorskip("torch")
    assert program(ft) == program(torch)


def test_destroy_and_garbage_collection_take_the_ops_back(ns: str) -> None:
    def program(torch: Any) -> list[Any]:
        lib = torch.library.Library(ns + torch.__name__, "FRAGMENT")
        lib.define("a(Tensor x) -> Tensor")
        ops = getattr(torch.ops, ns + torch.__name__)
        seen = [hasattr(ops, "a")]
        lib._destroy()
        seen.append(hasattr(ops, "a"))

        def scoped() -> None:
            tmp = torch.library.Library(ns + torch.__name__ + "g", "FRAGMENT")
            tmp.define("b(Tensor x) -> Tensor")
        scoped()
        gc.collect()
        seen.append(hasattr(getattr(torch.ops, ns + torch.__name__ + "g"), "b"))
        return seen

    torch = pytest.importorskip("torch")
    assert program(ft) == program(torch) == [True, False, False]


def test_overloads_are_named_as_in_torch(ns: str) -> None:
    def program(torch: Any) -> list[Any]:
        lib = torch.library.Library(ns + torch.__name__, "FRAGMENT")
        lib.define("h.out(Tensor x) -> Tensor")
        packet = getattr(torch.ops, ns + torch.__name__).h
        lib.impl("h.out", lambda x: x * 4, "CPU")
        result = [packet.overloads(), packet.out(torch.ones(1)).tolist(),
                  str(packet.out).replace(torch.__name__, "")]
        lib._destroy()
        return result

    torch = pytest.importorskip("torch")
    assert program(ft) == program(torch) == [["out"], [4.0], f"{ns}.h.out"]


# --- torch.compile: one node, the fake impl ---------------------------------------------------


def test_compile_traces_a_defined_op_as_one_node(ns: str, fresh_device: Any) -> None:
    from fake_torch._compile import compile

    lib = ft.library.Library(ns, "FRAGMENT")
    schema = library.infer_schema(_attention, mutates_args=["out"])
    lib.define("attention" + schema)
    lib.impl("attention", _attention, dispatch_key="CUDA")
    lib._register_fake("attention", lambda q, k, out: None)
    op = getattr(ft.ops, ns).attention
    seen: list[Any] = []

    def backend(gm: Any, example_inputs: list[Any]) -> Any:
        seen.append(gm)
        return gm.forward

    def f(q: ft.Tensor, k: ft.Tensor) -> ft.Tensor:
        out = ft.empty_like(q)
        op(q * 2, k, out)
        return out + 1

    q, k = ft.randn(4, 8, device="cuda"), ft.randn(4, 8, device="cuda")
    compiled = compile(f, backend=backend)
    np.testing.assert_allclose(compiled(q, k).cpu().numpy(), f(q, k).cpu().numpy(), rtol=1e-6)
    targets = [n.target for n in seen[0].graph.nodes if n.op == "call_function"]
    assert targets.count(op) + targets.count(op.default) == 1
    assert library.custom_op_def(op.default) is not None  # what piecewise backends split at
    assert library.mutated_arg_names(op.default) == ("out",)
    assert library.run_fake(op.default, (q, k, q), {}) is None
    with launches() as names:  # eager: what the kernel's body launches (mul, add, copy_)
        op(q, k, ft.empty_like(q))
    assert names == ["add", "copy_"]


def _attention(q: ft.Tensor, k: ft.Tensor, out: ft.Tensor) -> None:
    out.copy_(q + k)


def test_register_fake_and_register_autograd_on_a_defined_op(ns: str) -> None:
    lib = ft.library.Library(ns, "FRAGMENT")
    lib.define("sq(Tensor x) -> Tensor")
    lib.impl("sq", lambda x: x * x, "CompositeExplicitAutograd")
    ft.library.register_fake(f"{ns}::sq", lambda x: ft.empty_like(x))
    op = getattr(ft.ops, ns).sq.default
    assert library.run_fake(op, (ft.ones(3),), {}).shape == (3,)
    backward = lambda ctx, grad: grad  # noqa: E731
    ft.library.register_autograd(f"{ns}::sq", backward)
    entry = library.custom_op_def(op)
    assert entry is not None and not isinstance(entry, library.CustomOpDef)
    assert entry.autograd == (backward, None)
    with pytest.raises(RuntimeError, match=f"^operator {ns}::nope does not exist$"):
        ft.library.register_autograd(f"{ns}::nope", backward)


# --- infer_schema --------------------------------------------------------------------------------


def _schema_fns(torch: Any) -> list[tuple[Callable[..., Any], Any, str | None]]:
    T = torch.Tensor

    def f1(x: T, y: T | None, n: int, a: float, b: bool, l: list[int],  # noqa: E741
           out: T) -> None: ...

    def f2(x: T, *, k: int = 3, name: str = "a") -> tuple[T, T]: ...

    def f3(x: list[T], y: T | None = None, d: torch.dtype | None = None) -> list[T]: ...

    cuda = torch.device("cuda")

    def f4(x: T, y: float | None = None, z: list[int] | None = None, s: int | float | bool = 1,
           dt: torch.dtype = torch.float16, dev: torch.device = cuda) -> T: ...

    def f5(x: T, flag: bool = False) -> T: ...

    return [(f1, ["out"], None), (f2, (), "foo"), (f3, "unknown", None), (f4, (), None),
            (f5, [], "bar")]


def test_infer_schema_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    ours = [library.infer_schema(f, mutates_args=m, op_name=o) for f, m, o in _schema_fns(ft)]
    theirs = [torch.library.infer_schema(f, mutates_args=m, op_name=o)
              for f, m, o in _schema_fns(torch)]
    assert ours == theirs
    assert ours[0] == "(Tensor x, Tensor? y, SymInt n, float a, bool b, SymInt[] l, " \
                      "Tensor(a6!) out) -> ()"


@pytest.mark.parametrize("case", ["mutated_scalar", "missing_mutated", "no_annotation",
                                  "symint", "varargs"])
def test_infer_schema_errors_match_torch(case: str) -> None:
    def program(torch: Any) -> str:
        T = torch.Tensor
        if case == "mutated_scalar":
            def f(x: T, n: int) -> None: ...
            return torch.library.infer_schema(f, mutates_args=["n"])
        if case == "missing_mutated":
            def g(x: T) -> None: ...
            return torch.library.infer_schema(g, mutates_args=["z"])
        if case == "no_annotation":
            return torch.library.infer_schema(lambda x: x, mutates_args=())
        if case == "symint":
            def h(x: T, s: torch.SymInt) -> None: ...
            return torch.library.infer_schema(h, mutates_args=())
        def v(*xs: T) -> None: ...
        return torch.library.infer_schema(v, mutates_args=())

    pytest.importorskip("torch")
    import torch

    ours, theirs = outcome(lambda: program(ft))[1], outcome(lambda: program(torch))[1]
    assert theirs is not None and type(ours) is type(theirs)
    # up to the signature and class names (which print the library's module paths)
    def leading(e: BaseException) -> str:
        return str(e).split(". ")[0].split(" Got func")[0].split(" <class")[0]

    assert leading(ours) == leading(theirs)


# --- opaque types ---------------------------------------------------------------------------------


def _layer_name_type(base: type) -> type:
    class LayerName(base):  # type: ignore[misc, valid-type]
        def __init__(self, value: str) -> None:
            self.value = value

        def __eq__(self, other: object) -> bool:
            return isinstance(other, LayerName) and self.value == other.value

        def __hash__(self) -> int:
            return hash(self.value)

        def __fx_repr__(self) -> tuple[str, dict[str, type]]:
            return f"LayerName({self.value!r})", {"LayerName": LayerName}

    return LayerName


def test_opaque_value_types_name_themselves_in_schemas(ns: str) -> None:
    torch = pytest.importorskip("torch")
    from torch._library.opaque_object import register_opaque_type as torch_register
    from torch._opaque_base import OpaqueBase as TorchOpaqueBase

    results = []
    for lib, base, register in ((ft, OpaqueBase, register_opaque_type),
                                (torch, TorchOpaqueBase, torch_register)):
        LayerName = _layer_name_type(base)
        assert not isinstance(LayerName("a"), base)  # registration makes it opaque
        register(LayerName, typ="value", hoist=True)
        assert isinstance(LayerName("a"), base)

        def f(x: lib.Tensor, name: LayerName) -> lib.Tensor: ...  # type: ignore[valid-type]

        results.append(lib.library.infer_schema(f, mutates_args=()))
        Plain = type("Plain", (), {})
        _, error = outcome(lambda r=register, p=Plain: r(p, typ="value"))
        _, ref_error = outcome(lambda r=register, p=Plain: r(p, typ="reference"))
        _, builtin_error = outcome(lambda r=register: r(int, typ="value"))
        results.append((type(error), str(error).split(" is ")[-1][:40], type(ref_error),
                        type(builtin_error)))
    assert results[0] == results[2]
    assert results[0].endswith("_layer_name_type.<locals>.LayerName name) -> Tensor")
    assert results[1] == results[3]


def test_a_defined_op_takes_an_opaque_argument(ns: str) -> None:
    LayerName = _layer_name_type(OpaqueBase)
    register_opaque_type(LayerName, typ="value")
    seen: list[str] = []

    def record(x: ft.Tensor, name: LayerName) -> None:  # type: ignore[valid-type]
        seen.append(name.value)

    lib = ft.library.Library(ns, "FRAGMENT")
    lib.define("record" + library.infer_schema(record, mutates_args=()))
    lib.impl("record", record, "CompositeExplicitAutograd")
    getattr(ft.ops, ns).record(ft.ones(1), LayerName("layers.0.attn"))
    assert seen == ["layers.0.attn"]


def test_same_error_helper_is_exercised() -> None:
    assert_same_error(None, None)


def test_shorthand_write_and_tuple_types_as_vllm_writes_them(ns: str) -> None:
    """`Tensor!` / `Tensor!?` (a written-to argument without a named alias set) and a tuple
    type `(int, int)?`, as vLLM's csrc/torch_bindings.cpp declares its kernels; an unknown
    element type in a tuple is refused."""

    def program(torch: Any) -> list[Any]:
        name = ns + torch.__name__
        lib = torch.library.Library(name, "FRAGMENT")
        lib.define("quant(Tensor! result, Tensor input, Tensor!? extra, "
                   "(int, int)? group_shape=None) -> ()")

        def quant(result: Any, input: Any, extra: Any, group_shape: Any = None) -> None:
            result.copy_(input * (2 if group_shape is None else group_shape[0]))
            if extra is not None:
                extra.fill_(7.0)

        lib.impl("quant", quant, "CPU")
        op = getattr(torch.ops, name).quant.default
        out, extra = torch.zeros(2), torch.zeros(1)
        op(out, torch.ones(2), None)
        first = out.tolist()
        op(out, torch.ones(2), extra, (3, 1))
        try:
            lib.define("bad(Tensor! result, (int, nosuchtype)? shape) -> ()")
            refused = ""
        except RuntimeError as e:
            refused = str(e).strip().split("\n")[0]
        return [str(op._schema).replace(torch.__name__, ""), first, out.tolist(),
                extra.tolist(), refused]

    torch = pytest.importorskip("torch")
    assert program(ft) == program(torch)


def test_fake_mode_runs_the_fake_impl(ns: str) -> None:
    """Under FakeTensorMode a defined op with a fake impl runs the fake impl, not its kernel
    (vLLM builds its fusion patterns under FakeTensorMode with example shapes its kernels
    would refuse); outside the mode the kernel runs."""

    def program(torch: Any) -> list[Any]:
        from importlib import import_module

        fake_mode = import_module(torch.__name__ + "._subclasses.fake_tensor").FakeTensorMode
        name = ns + torch.__name__
        lib = torch.library.Library(name, "FRAGMENT")
        lib.define("grp(Tensor! out, Tensor x, int group) -> ()")
        ran: list[str] = []

        def grp(out: Any, x: Any, group: int) -> None:
            ran.append("kernel")
            out.copy_(x.reshape(-1, group).sum(-1))  # refuses a group that does not divide

        def grp_fake(out: Any, x: Any, group: int) -> None:
            ran.append("fake")

        lib.impl("grp", grp, "CompositeExplicitAutograd")
        torch.library.register_fake(f"{name}::grp", grp_fake, lib=lib)
        op = getattr(torch.ops, name).grp.default
        out = torch.zeros(2)
        op(out, torch.ones(4), 2)
        with fake_mode():
            op(torch.empty(5), torch.empty(16), 128)
        _LIBS_ALIVE.append(lib)
        return [ran, out.tolist()]

    torch = pytest.importorskip("torch")
    assert program(ft) == program(torch)


_LIBS_ALIVE: list[Any] = []

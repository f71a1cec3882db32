"""torch.autocast / torch.amp against real torch 2.13.

Oracles:
  - which ops autocast at all: real torch's dispatcher, which has an AutocastCUDA / AutocastCPU
    kernel for exactly the ops of its lists (the CPU wheel registers both);
  - on cuda: real torch itself, run over FakeTensors that claim device cuda (FakeTensorMode
    needs no GPU): with autocast on for cuda, the output dtypes and the aten ops it dispatches
    (the casts, `_to_copy`, included) are the CUDA build's; fake_torch launches the same ops;
  - on cpu: real torch's values and dtypes;
  - values on cuda: fake_torch's own eager path with the casts written out, as torch's own
    autocast tests check (`_run_autocast_outofplace`).
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
from oracles import assert_same_error, launches, outcome, to_numpy, to_torch, torch_launches

import fake_torch as ft
from fake_torch.amp import _policy


def _real_torch() -> Any:
    return pytest.importorskip("torch")


# --- which ops autocast ---------------------------------------------------------------------------

@pytest.mark.parametrize(("key", "table"), [("AutocastCUDA", _policy.CUDA),
                                            ("AutocastCPU", _policy.CPU)])
def test_the_lists_are_torchs(key: str, table: dict[str, str]) -> None:
    torch = _real_torch()
    registered = {name.split("::")[1].split(".")[0]
                  for name in torch._C._dispatch_get_all_op_names()
                  if torch._C._dispatch_has_kernel_for_dispatch_key(name, key)}
    assert set(table) == registered


# --- cuda: real torch over FakeTensors on cuda ----------------------------------------------------

@contextmanager
def _torch_cuda_autocast(dtype: Any) -> Iterator[tuple[Callable[[np.ndarray], Any], list[str]]]:
    """Real torch with autocast on for cuda, over FakeTensors on cuda:0. Yields (make, ops):
    make(array) is a fake cuda tensor of the array's shape and dtype; ops: the aten ops
    dispatched below autocast inside the block, as the CUDA build would launch them."""
    torch = _real_torch()
    from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode

    mode = FakeTensorMode(allow_non_fake_inputs=True)

    def make(a: np.ndarray) -> Any:
        meta = torch.empty(a.shape, dtype=to_torch(a.reshape(-1)[:0]).dtype, device="meta")
        return FakeTensor(mode, meta, torch.device("cuda", 0))

    before = torch.get_autocast_dtype("cuda")
    with mode:
        torch.set_autocast_enabled("cuda", True)
        torch.set_autocast_dtype("cuda", dtype)
        try:
            with torch_launches() as ops:
                yield make, ops
        finally:
            torch.set_autocast_enabled("cuda", False)
            torch.set_autocast_dtype("cuda", before)
            torch.clear_autocast_cache()


def _arrays(*specs: tuple[tuple[int, ...], str], seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for shape, dt in specs:
        a = rng.uniform(0.5, 1.5, size=shape).astype(np.float32)
        out.append(ft.from_numpy(a).to(getattr(ft, dt)).numpy() if dt != "float32" else a)
    return out


F32, F16, BF16 = "float32", "float16", "bfloat16"
M = ((8, 8), F32)
V = ((8,), F32)
# program(lib, *tensors) -> tensor, and the inputs it takes (shape, dtype)
CUDA_CASES: dict[str, tuple[Callable[..., Any], list[tuple[tuple[int, ...], str]]]] = {
    "matmul": (lambda t, a, b: t.matmul(a, b), [M, M]),
    "matmul 3d x 2d": (lambda t, a, b: t.matmul(a, b), [((2, 8, 8), F32), M]),
    "mm": (lambda t, a, b: t.mm(a, b), [M, M]),
    "bmm": (lambda t, a, b: t.bmm(a, b), [((2, 8, 8), F32)] * 2),
    "addmm": (lambda t, c, a, b: t.addmm(c, a, b), [M, M, M]),
    "baddbmm": (lambda t, c, a, b: t.baddbmm(c, a, b), [((2, 8, 8), F32)] * 3),
    "mv": (lambda t, a, v: t.mv(a, v), [M, V]),
    "einsum": (lambda t, a, b: t.einsum("ij,jk->ik", a, b), [M, M]),
    "@": (lambda t, a, b: a @ b, [M, M]),
    "linear": (lambda t, x, w: t.nn.functional.linear(x, w), [M, M]),
    "linear bias": (lambda t, x, w, b: t.nn.functional.linear(x, w, b), [M, M, V]),
    "linear fp16 input": (lambda t, x, w: t.nn.functional.linear(x, w), [((8, 8), F16), M]),
    "sdpa": (lambda t, q, k, v: t.nn.functional.scaled_dot_product_attention(q, k, v),
             [((1, 2, 4, 8), F32)] * 3),
    "exp": (lambda t, x: t.exp(x), [((8,), F16)]),
    "log": (lambda t, x: t.log(x), [((8,), F16)]),
    "log1p": (lambda t, x: x.log1p(), [((8,), BF16)]),
    "rsqrt": (lambda t, x: t.rsqrt(x), [((8,), F16)]),
    "reciprocal": (lambda t, x: t.reciprocal(x), [((8,), F16)]),
    "pow scalar": (lambda t, x: t.pow(x, 2), [((8,), F16)]),
    "pow tensor": (lambda t, x, y: t.pow(x, y), [((8,), F16), ((8,), F16)]),
    "**": (lambda t, x: x ** 2, [((8,), F16)]),
    "rpow": (lambda t, x: 2 ** x, [((8,), F16)]),
    "exp fp32 (no cast)": (lambda t, x: t.exp(x), [V]),
    "softmax fp16": (lambda t, x: t.softmax(x, -1), [((4, 8), F16)]),
    "softmax bf16": (lambda t, x: x.softmax(-1), [((4, 8), BF16)]),
    "F.softmax": (lambda t, x: t.nn.functional.softmax(x, dim=-1), [((4, 8), F16)]),
    "softmax given dtype": (lambda t, x: x.softmax(-1, dtype=t.float16), [((4, 8), F16)]),
    "log_softmax": (lambda t, x: t.log_softmax(x, 1), [((4, 8), F16)]),
    "sum": (lambda t, x: x.sum(), [((4, 8), F16)]),
    "sum dim": (lambda t, x: t.sum(x, 1), [((4, 8), BF16)]),
    "sum int (not eligible)": (lambda t, x: x.long().sum(), [((4, 8), F16)]),
    "prod": (lambda t, x: x.prod(), [((4, 8), F16)]),
    "cumsum": (lambda t, x: t.cumsum(x, 1), [((4, 8), F16)]),
    "norm": (lambda t, x: x.norm(), [((4, 8), F16)]),
    "vector_norm": (lambda t, x: t.linalg.vector_norm(x), [((4, 8), F16)]),
    "layer_norm": (lambda t, x, w, b: t.nn.functional.layer_norm(x, (8,), w, b),
                   [((4, 8), F16), V, V]),
    "mse_loss": (lambda t, x, y: t.nn.functional.mse_loss(x, y), [((4, 8), F16)] * 2),
    "l1_loss": (lambda t, x, y: t.nn.functional.l1_loss(x, y), [((4, 8), F16)] * 2),
    "smooth_l1_loss": (lambda t, x, y: t.nn.functional.smooth_l1_loss(x, y),
                       [((4, 8), F16)] * 2),
    "cross_entropy": (lambda t, x, y: t.nn.functional.cross_entropy(x, y),
                      [((4, 8), F16), ((4,), "int64")]),
    "nll_loss": (lambda t, x, y: t.nn.functional.nll_loss(x, y), [((4, 8), F16), ((4,), "int64")]),
    "huber_loss": (lambda t, x, y: t.nn.functional.huber_loss(x, y), [((4, 8), BF16)] * 2),
    "rms_norm": (lambda t, x, w: t.nn.functional.rms_norm(x, (8,), w), [((4, 8), F16), V]),
    "dot (promote)": (lambda t, x, y: t.dot(x, y), [((8,), F16), V]),
    "dot fp16 (promote)": (lambda t, x, y: t.dot(x, y), [((8,), F16), ((8,), F16)]),
    "dot bf16 (promote)": (lambda t, x, y: t.dot(x, y), [((8,), BF16), V]),
    "cat (builtin promotion)": (lambda t, x, y: t.cat([x, y]), [((8,), F16), V]),
    "add (builtin promotion)": (lambda t, x, y: x + y, [((8,), F16), V]),
    "silu (not listed)": (lambda t, x: t.nn.functional.silu(x), [((8,), F16)]),
    "float64 stays": (lambda t, x, y: t.mm(x, y), [((4, 4), "float64")] * 2),
}


# FakeTensors carry no device properties, so real torch picks its math attention there (which
# casts again inside), and the CPU wheel has no fused rms_norm (tests/oracles.py): only the
# casts of the inputs are compared
CASTS_ONLY = {"sdpa": 3, "rms_norm": 1}  # case -> the casts autocast makes (float32 inputs)


@pytest.mark.parametrize("dtype", [F16, BF16])
@pytest.mark.parametrize("case", list(CUDA_CASES))
def test_cuda_autocast_dtypes_and_launches_are_the_cuda_builds(case: str, dtype: str) -> None:
    """Each case's output dtype and launches (casts included) are what torch's CUDA build
    dispatches; where torch refuses the mix of dtypes (autocast to bfloat16 meeting a float16
    input in a promote op), fake_torch raises the same error."""
    torch = _real_torch()
    program, specs = CUDA_CASES[case]
    arrays = _arrays(*specs)
    with _torch_cuda_autocast(getattr(torch, dtype)) as (make, torch_ops):
        theirs, their_error = outcome(lambda: program(torch, *[make(a) for a in arrays]))
    inputs = [ft.from_numpy(a).cuda() for a in arrays]
    with ft.autocast("cuda", dtype=getattr(ft, dtype)), launches() as ours:
        got, error = outcome(lambda: program(ft, *inputs))
    assert_same_error(error, their_error)
    if their_error is not None:
        return
    assert str(got.dtype) == str(theirs.dtype)
    assert tuple(got.shape) == tuple(theirs.shape)
    if case in CASTS_ONLY:
        casts = CASTS_ONLY[case]
        assert _leading_casts(ours) == ["_to_copy"] * casts
        ours, torch_ops = ours[:casts], torch_ops[:casts]
    assert ours == torch_ops


def _leading_casts(ops: list[str]) -> list[str]:
    n = next((i for i, op in enumerate(ops) if op != "_to_copy"), len(ops))
    return ops[:n]


# the dtype each case's inputs are cast to under autocast("cuda", dtype=bfloat16)
CAST_TO = {"matmul": "bfloat16", "linear bias": "bfloat16", "exp": "float32",
           "softmax bf16": "float32", "sum dim": "float32", "dot bf16 (promote)": "float32",
           "layer_norm": "float32"}


@pytest.mark.parametrize("case", list(CAST_TO))
def test_cuda_autocast_values_are_the_explicit_casts(case: str) -> None:
    """An op under autocast equals the op on inputs cast as its policy says (torch's own
    check): lower precision for matmuls, float32 for exp and the norms, the widest for dot;
    softmax and sum read their low-precision input and compute in float32."""
    program, specs = CUDA_CASES[case]
    inputs = [ft.from_numpy(a).cuda() for a in _arrays(*specs)]
    with ft.autocast("cuda", dtype=ft.bfloat16):
        got = program(ft, *inputs)
    control = program(ft, *[x.to(getattr(ft, CAST_TO[case])) for x in inputs])
    assert got.dtype is control.dtype
    np.testing.assert_array_equal(to_numpy(got), to_numpy(control))


def _torch_cpu_ops(program: Callable[[], Any]) -> list[str]:
    """The aten ops real torch dispatches for program() on the cpu (casts included)."""
    _real_torch()
    from torch.utils._python_dispatch import TorchDispatchMode

    ops: list[str] = []

    class Record(TorchDispatchMode):  # type: ignore[misc]
        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                               kwargs: Any = None) -> Any:
            ops.append(func.overloadpacket.__name__)
            return func(*args, **(kwargs or {}))

    with Record():
        program()
    return ops


@pytest.mark.parametrize("grad", ["no_grad", "enable_grad", "inference_mode"])
def test_a_weight_is_cast_once_per_autocast_block(grad: str) -> None:
    """A model's float32 nn.Parameter is cast once in a block and the cast reused by every later
    op in it (torch's cast cache, the same code for every device: real torch on the cpu is the
    oracle), except under inference_mode, where torch 2.13 casts every time; the cache empties
    when the outermost block exits, and cache_enabled=False turns it off."""
    torch = _real_torch()
    a, w = _arrays(M, M)
    ta, tw = to_torch(a), torch.nn.Parameter(to_torch(w))
    x, p = ft.from_numpy(a).cuda(), ft.nn.Parameter(ft.from_numpy(w).cuda())

    def program(lib: Any, x: Any, w: Any, device: str, **kw: Any) -> None:
        with getattr(lib, grad)(), lib.autocast(device, dtype=lib.bfloat16, **kw):
            for _ in range(3):
                lib.matmul(x, w)

    for kw in ({}, {"cache_enabled": False}):
        theirs = _torch_cpu_ops(lambda kw=kw: program(torch, ta, tw, "cpu", **kw))
        theirs = [{"to": "_to_copy", "matmul": "mm"}.get(op, op) for op in theirs]
        with launches() as ours:
            program(ft, x, p, "cuda", **kw)
        assert ours == theirs
    with launches() as again:  # a new block casts again
        program(ft, x, p, "cuda")
    assert again.count("_to_copy") == (6 if grad == "inference_mode" else 4)


# --- cpu: real torch ------------------------------------------------------------------------------

CPU_CASES: dict[str, tuple[Callable[..., Any], list[tuple[tuple[int, ...], str]]]] = {
    "matmul": (lambda t, a, b: t.matmul(a, b), [M, M]),
    "mm": (lambda t, a, b: t.mm(a, b), [M, M]),
    "bmm": (lambda t, a, b: t.bmm(a, b), [((2, 8, 8), F32)] * 2),
    "linear bias": (lambda t, x, w, b: t.nn.functional.linear(x, w, b), [M, M, V]),
    "@": (lambda t, a, b: a @ b, [M, M]),
    "exp (not on cpu's list)": (lambda t, x: t.exp(x), [((8,), BF16)]),
    "softmax (not on cpu's list)": (lambda t, x: x.softmax(-1), [((4, 8), BF16)]),
    "prod (fp32 on cpu)": (lambda t, x: x.prod(), [((4, 8), BF16)]),
    "mse_loss": (lambda t, x, y: t.nn.functional.mse_loss(x, y), [((4, 8), BF16)] * 2),
    "cat (promote on cpu)": (lambda t, x, y: t.cat([x, y]), [((8,), BF16), V]),
    "stack": (lambda t, x, y: t.stack([x, y]), [((8,), F16), ((8,), F16)]),
}


@pytest.mark.parametrize("dtype", [F16, BF16])
@pytest.mark.parametrize("case", list(CPU_CASES))
def test_cpu_autocast_matches_torch(case: str, dtype: str) -> None:
    torch = _real_torch()
    program, specs = CPU_CASES[case]
    arrays = _arrays(*specs)
    with torch.autocast("cpu", dtype=getattr(torch, dtype)):
        theirs, their_error = outcome(lambda: program(torch, *[to_torch(a) for a in arrays]))
    with ft.autocast("cpu", dtype=getattr(ft, dtype)):
        ours, error = outcome(lambda: program(ft, *[ft.from_numpy(a.copy()) for a in arrays]))
    assert_same_error(error, their_error)
    if their_error is not None:
        return
    assert str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_allclose(to_numpy(ours).astype(np.float64),
                               to_numpy(theirs).astype(np.float64), rtol=2e-2, atol=2e-2)


# --- the state, the context manager, its errors ---------------------------------------------------

def _state(lib: Any) -> tuple[Any, ...]:
    return (lib.is_autocast_enabled("cuda"), lib.is_autocast_enabled("cpu"),
            str(lib.get_autocast_dtype("cuda")), str(lib.get_autocast_dtype("cpu")),
            lib.is_autocast_cache_enabled(), lib.is_autocast_enabled())


def test_state_inside_and_after_nested_blocks() -> None:
    torch = _real_torch()

    def program(lib: Any) -> list[tuple[Any, ...]]:
        seen = [_state(lib)]
        with lib.autocast("cpu", dtype=lib.float16, cache_enabled=False):
            seen.append(_state(lib))
            with lib.autocast("cpu", enabled=False):
                seen.append(_state(lib))
            seen.append(_state(lib))
        seen.append(_state(lib))
        lib.set_autocast_enabled("cpu", True)
        lib.set_autocast_dtype("cpu", lib.float16)
        seen.append(_state(lib))
        lib.set_autocast_enabled("cpu", False)
        lib.set_autocast_dtype("cpu", lib.bfloat16)
        seen.append(_state(lib))
        return seen

    assert program(ft) == program(torch)


def test_the_legacy_spellings() -> None:
    torch = _real_torch()

    def program(lib: Any) -> list[Any]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.set_autocast_enabled(True)  # cuda, the old one-argument form
            out = [lib.is_autocast_enabled(), lib.is_autocast_enabled("cuda"),
                   str(lib.get_autocast_gpu_dtype()), str(lib.get_autocast_cpu_dtype()),
                   lib.is_autocast_cpu_enabled()]
            lib.set_autocast_enabled(False)
            lib.set_autocast_cpu_dtype(lib.bfloat16)
            lib.set_autocast_gpu_dtype(lib.float16)
            lib.set_autocast_cpu_enabled(False)
        return out + [(w.category.__name__, str(w.message).split(" (Triggered")[0])
                      for w in caught]

    assert program(ft) == program(torch)


@pytest.mark.parametrize("program", [
    lambda t: t.autocast(1),
    lambda t: t.autocast("foo"),
    lambda t: t.autocast("meta"),
    lambda t: t.autocast("cpu")(3),
    lambda t: t.is_autocast_enabled("foo"),
    lambda t: t.is_autocast_enabled(1),
    lambda t: t.set_autocast_enabled("cpu"),
    lambda t: t.set_autocast_dtype("cpu", 1),
    lambda t: t.get_autocast_dtype("meta"),
    lambda t: t.amp.custom_fwd(lambda: None, device_type=1),
])
def test_errors_are_torchs(program: Callable[[Any], Any]) -> None:
    torch = _real_torch()
    with pytest.raises(Exception) as theirs:
        program(torch)
    with pytest.raises(type(theirs.value)) as ours:
        program(ft)
    assert str(ours.value) == str(theirs.value)


def test_an_unsupported_cpu_dtype_warns_and_disables() -> None:
    torch = _real_torch()

    def program(lib: Any) -> tuple[Any, ...]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with lib.autocast("cpu", dtype=lib.float32):
                on = lib.is_autocast_enabled("cpu")
        return on, [(w.category, str(w.message)) for w in caught]

    ours, theirs = program(ft), program(torch)
    assert ours[0] == theirs[0] is False
    assert [(c.__name__, m) for c, m in ours[1]] == [(c.__name__, m) for c, m in theirs[1]]


def test_cuda_amp_spellings_warn_as_torchs() -> None:
    torch = _real_torch()

    def program(lib: Any) -> list[Any]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ctx = lib.cuda.amp.autocast()
            fwd = lib.cuda.amp.custom_fwd(cast_inputs=lib.float32)
        return [type(ctx).__mro__[1].__name__, ctx.device, str(ctx.fast_dtype), callable(fwd),
                *[(w.category.__name__, str(w.message)) for w in caught]]

    # torch's cuda autocast disables itself on a machine without CUDA, with one more warning
    theirs = [x for x in program(torch) if "CUDA is not available" not in str(x)]
    assert program(ft) == theirs


def test_decorator_and_custom_fwd() -> None:
    """@autocast runs the function inside a block; custom_fwd(cast_inputs=) casts the floating
    inputs of a forward and runs it with autocast off, as torch (on cpu, compared)."""
    torch = _real_torch()

    class Ctx:
        pass

    def program(lib: Any) -> list[Any]:
        @lib.autocast("cpu")
        def inside() -> bool:
            return bool(lib.is_autocast_enabled("cpu"))

        @lib.amp.custom_fwd(device_type="cpu", cast_inputs=lib.float32)
        def forward(ctx: Any, x: Any, n: Any) -> Any:
            return [str(x.dtype), str(n.dtype), lib.is_autocast_enabled("cpu")]

        x = lib.ones(2, dtype=lib.bfloat16)
        n = lib.ones(2, dtype=lib.int64)
        ctx = Ctx()
        with lib.autocast("cpu"):
            cast = forward(ctx, x, n)
        plain = forward(Ctx(), x, n)
        return [inside(), lib.is_autocast_enabled("cpu"), cast, plain, ctx._fwd_used_autocast,
                str(ctx._dtype)]

    assert program(ft) == program(torch)


def test_grad_scaler_is_not_emulated() -> None:
    with pytest.raises(NotImplementedError, match=r"torch\.amp\.GradScaler"):
        ft.amp.GradScaler()


# --- what modes see -------------------------------------------------------------------------------

def test_modes_see_the_call_as_written() -> None:
    """Autocast runs below the TorchFunctionModes: a mode sees torch.matmul with its float32
    arguments and none of the casts (real torch, on cpu, compared)."""
    torch = _real_torch()

    def program(lib: Any) -> list[Any]:
        seen: list[Any] = []

        class Log(lib.overrides.TorchFunctionMode):  # type: ignore[misc]
            def __torch_function__(self, func: Any, types: Any, args: Any = (),
                                   kwargs: Any = None) -> Any:
                seen.append((func.__name__, [str(a.dtype) for a in args
                                             if isinstance(a, lib.Tensor)]))
                return func(*args, **(kwargs or {}))

        a = lib.ones(4, 4)
        with lib.autocast("cpu"), Log():
            out = lib.matmul(a, a)
        return [*seen, str(out.dtype)]

    assert program(ft) == program(torch)


# --- torch.compile: the global state guard --------------------------------------------------------

def test_compiled_code_recompiles_when_autocast_changes() -> None:
    torch = _real_torch()

    def program(lib: Any) -> list[Any]:
        def f(x: Any, w: Any) -> Any:
            return lib.matmul(x, w)

        cf = lib.compile(f, backend="eager")
        x = lib.ones(4, 4)
        out = [str(cf(x, x).dtype)]
        with lib.autocast("cpu"):
            out.append(str(cf(x, x).dtype))
            out.append(str(cf(x, x).dtype))  # cached for this state
        with lib.autocast("cpu", dtype=lib.float16):
            out.append(str(cf(x, x).dtype))
        with lib.no_grad():
            out.append(str(cf(x, x).dtype))
        out.append(str(cf(x, x).dtype))
        return out

    def reasons(lib: Any) -> list[str]:
        messages: list[str] = []

        class Keep(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                messages.append(record.getMessage())

        if lib is ft:
            logger = logging.getLogger("fake_torch._dynamo.guards")
        else:
            lib._logging.set_logs(recompiles=True)
            logger = logging.getLogger("torch._dynamo.guards.__recompiles")
        keep, level = Keep(), logger.level
        lib._dynamo.reset()  # (frame ids count from 0: what other tests compiled is forgotten)
        logger.addHandler(keep)
        logger.setLevel(logging.DEBUG)
        try:
            got = program(lib)
        finally:
            logger.removeHandler(keep)
            logger.setLevel(level)
            if lib is not ft:
                lib._logging.set_logs()
            lib._dynamo.reset()
        return got + [line.strip() for m in messages for line in m.split("\n")
                      if "GLOBAL_STATE" in line]

    assert reasons(ft) == reasons(torch)


def test_a_compiled_function_traced_under_autocast_launches_the_casts() -> None:
    """Traced inside an autocast block, a compiled graph holds the casts; its output dtype and
    values are the eager ones."""
    x = ft.randn(8, 8, device="cuda")
    w = ft.nn.Parameter(ft.randn(8, 8, device="cuda"))

    def f(x: ft.Tensor, w: ft.Tensor) -> ft.Tensor:
        return ft.matmul(x, w).softmax(-1)

    with ft.autocast("cuda"):
        eager = f(x, w)
        compiled = ft.compile(f)
        got = [compiled(x, w) for _ in range(3)]
    for g in got:
        assert g.dtype is eager.dtype is ft.float32
        np.testing.assert_array_equal(g.cpu().numpy(), eager.cpu().numpy())


def test_make_graphed_callables_refuses_the_autocast_cache() -> None:
    """A weight cast cached while capturing would be freed when the autocast block exits and
    the graph would read freed memory: torch refuses, and so does fake_torch; with the cache
    off it graphs, and the replays launch the casts inside the graph."""
    torch = _real_torch()
    fn = ft.nn.Linear(4, 4).cuda()
    x = ft.randn(2, 4, device="cuda")
    with ft.autocast("cuda"), pytest.raises(RuntimeError) as ours:
        ft.cuda.make_graphed_callables(fn, (x,))
    with pytest.raises(RuntimeError) as theirs:
        torch.set_autocast_enabled("cuda", True)
        try:
            torch.cuda.make_graphed_callables(torch.nn.Linear(4, 4), (torch.randn(2, 4),))
        finally:
            torch.set_autocast_enabled("cuda", False)
    assert str(ours.value) == str(theirs.value)
    with ft.autocast("cuda", cache_enabled=False):
        graphed = ft.cuda.make_graphed_callables(fn, (x,))
        eager = fn(x)
        with ft.LaunchCounter.expect(1, cudaGraphLaunch=1):
            out = graphed(x)
    assert out.dtype is eager.dtype is ft.float16
    np.testing.assert_array_equal(to_numpy(out), to_numpy(eager))

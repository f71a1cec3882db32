"""The meta device (fake_torch/_meta.py): tensors with torch's shapes, dtypes and strides, no
data, no launches; what needs the data refuses with torch's error; models built on it without
memory (an 8-billion-parameter Llama), given memory by `to_empty` or a checkpoint by
`load_state_dict(assign=True)`. Real torch's own meta device is the oracle.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from bad_input import check
from test_default_device import PROGRAMS

import fake_torch as ft
from fake_torch._tensor import base_array
from fake_torch._tools._bench_meta import build_llama_8b

# the `torch` fixture (real torch) and `no_default_device` are conftest.py's
pytestmark = pytest.mark.usefixtures("no_default_device")


def _layout(t: Any) -> tuple[Any, ...]:
    return (tuple(t.shape), str(t.dtype), tuple(t.stride()), t.storage_offset(),
            t.device.type)


# --- tensors -----------------------------------------------------------------------------------

def test_a_meta_tensor_has_torchs_metadata(torch: Any) -> None:
    for lib in (ft, torch):
        assert str(lib.device("meta")) == "meta" and repr(lib.device("meta")) == \
            "device(type='meta')"

    def made(lib: Any) -> list[Any]:
        x = lib.empty(4, 6, device="meta", dtype=lib.float16)
        return [x, x[1:, ::2], x.t(), x.view(2, 12), x.permute(1, 0)[2], x.expand(3, 4, 6),
                lib.empty(10, device="meta").as_strided((2, 3), (1, 2), 1)]

    for ours, theirs in zip(made(ft), made(torch), strict=True):
        assert ours.is_meta and theirs.is_meta and not ours.is_cpu and not ours.is_cuda
        assert _layout(ours) == _layout(theirs)
        assert ours.data_ptr() == theirs.data_ptr()  # null storage: offset * itemsize
        assert ours.untyped_storage().nbytes() == theirs.untyped_storage().nbytes()
        assert ours.get_device() == theirs.get_device() == -1


def test_meta_tensors_print_as_torchs(torch: Any) -> None:
    def made(lib: Any) -> list[Any]:
        return [lib.empty(2, 3, device="meta"), lib.empty(0, device="meta"),
                lib.empty((), device="meta", dtype=lib.int64),
                lib.empty(2, 1000, device="meta", dtype=lib.bfloat16),
                lib.empty(2, device="meta", requires_grad=True),
                lib.nn.Parameter(lib.empty(2, 2, device="meta", dtype=lib.float16))]

    for ours, theirs in zip(made(ft), made(torch), strict=True):
        assert repr(ours) == repr(theirs)
        assert str(ours) == str(theirs)


def test_meta_ops_launch_nothing_and_write_no_memory() -> None:
    x = ft.empty(8, 16, device="meta")
    w = ft.empty(32, 16, device="meta")
    with ft.LaunchCounter.expect(0):
        y = ft.nn.functional.silu(x @ w.t()).softmax(-1)
        x[0] = 1.0  # an in-place write: nothing to write into
        x.add_(1).zero_()
        z = ft.zeros(4, device="meta") + ft.tensor(2.0)  # a cpu scalar joins, as in torch
    assert _layout(y) == ((8, 32), "torch.float32", (32, 1), 0, "meta")
    assert z.is_meta
    with pytest.raises(ValueError, match="read-only"):  # its buffer has no memory to write
        y._a[0, 0] = 1.0
    assert not y._a.any()  # reads see zero pages


def test_moving_onto_meta_copies_nothing_and_out_of_it_refuses(torch: Any) -> None:
    cuda = ft.ones(2, 3, device="cuda")
    with ft.LaunchCounter.expect(0):
        moved = [cuda.to("meta"), ft.ones(2, 3).t().to("meta"), ft.ones(2, 3).to("meta"),
                 ft.empty(2, 3, device="meta").copy_(ft.ones(2, 3))]
    theirs = [torch.ones(2, 3).to("meta"), torch.ones(2, 3).t().to("meta"),
              torch.ones(2, 3).to("meta"), torch.empty(2, 3, device="meta").copy_(
                  torch.ones(2, 3))]
    assert [_layout(t) for t in moved] == [_layout(t) for t in theirs]
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
        ft.empty(2, device="meta").cuda()


META_REFUSALS = {
    "cpu()": lambda L: L.empty(2, 3, device="meta").cpu(),
    "to(cpu)": lambda L: L.empty(2, 3, device="meta").to("cpu"),
    "cpu copy_ of meta": lambda L: L.ones(2, 3).copy_(L.empty(2, 3, device="meta")),
    "numpy()": lambda L: L.empty(2, 3, device="meta").numpy(),
    "np.asarray": lambda L: np.asarray(L.empty(2, 3, device="meta")),
    "item() of one": lambda L: L.empty((), device="meta").item(),
    "item() of many": lambda L: L.empty(2, 3, device="meta").item(),
    "tolist()": lambda L: L.empty(2, 3, device="meta").tolist(),
    "bool()": lambda L: bool(L.empty(1, device="meta")),
    "float()": lambda L: float(L.empty(1, device="meta").sum()),
    "int()": lambda L: int(L.empty(1, device="meta", dtype=L.int64)),
    "if x.sum() > 0": lambda L: 1 if L.empty(3, device="meta").sum() > 0 else 0,
    "nonzero": lambda L: L.empty(3, device="meta").nonzero(),
    "argwhere": lambda L: L.argwhere(L.empty(3, device="meta")),
    "where(cond)": lambda L: L.where(L.empty(3, device="meta") > 0),
    "masked_select": lambda L: L.empty(3, device="meta").masked_select(
        L.empty(3, device="meta", dtype=L.bool)),
    "boolean mask index": lambda L: L.empty(3, device="meta")[L.empty(3, device="meta") > 0],
    "equal": lambda L: L.equal(L.empty(3, device="meta"), L.empty(3, device="meta")),
    "allclose": lambda L: L.allclose(L.empty(3, device="meta"), L.empty(3, device="meta")),
    "repeat_interleave": lambda L: L.repeat_interleave(
        L.empty(3, device="meta", dtype=L.int64)),
    "pin_memory": lambda L: L.empty(3, device="meta").pin_memory(),
    "meta + cpu": lambda L: L.empty(2, 3, device="meta") + L.ones(2, 3),
    "cpu + meta": lambda L: L.ones(2, 3) + L.empty(2, 3, device="meta"),
    # (not matmul: torch's meta mm checks no device, and a cpu mm reads the meta tensor's
    # null storage; a torch bug, not something to reproduce)
    "where over meta and cpu": lambda L: L.where(L.empty(3, device="meta") > 0,
                                                 L.empty(3, device="meta"), L.ones(3)),
    "cat of meta and cpu": lambda L: L.cat([L.empty(2, device="meta"), L.ones(2)]),
}


@pytest.mark.parametrize("name", list(META_REFUSALS))
def test_what_needs_the_data_refuses_as_torchs_meta(name: str) -> None:
    check(META_REFUSALS[name])


def test_random_ops_on_meta_draw_nothing(torch: Any) -> None:
    """No generator advances (torch's meta kernels draw nothing): the next cpu draw is the
    one it would have been."""
    for lib in (ft, torch):
        lib.manual_seed(0)
        expected = lib.randn(3)
        lib.manual_seed(0)
        lib.randn(5, device="meta")
        lib.empty(4, device="meta").uniform_()
        lib.nn.Linear(3, 3, device="meta")
        lib.multinomial(lib.empty(4, device="meta"), 2)
        g = lib.Generator().manual_seed(1)
        lib.randn(3, device="meta", generator=g)  # a cpu generator, unread
        assert g.initial_seed() == 1 and bool((g.get_state() == lib.Generator().manual_seed(
            1).get_state()).all())
        assert bool((lib.randn(3) == expected).all())
    check(lambda L: L.Generator(device="meta"))
    check(lambda L: L.randn(3, device="meta", generator=L.Generator()))


def test_meta_ops_that_torch_runs_run() -> None:
    """What torch's meta kernels accept without data (checked against torch by `check`)."""
    for program in (
        lambda L: L.repeat_interleave(L.empty(3, device="meta", dtype=L.int64), output_size=5),
        lambda L: L.multinomial(L.empty(2, 3, device="meta"), 2),
        lambda L: L.empty(3, device="meta")[L.tensor([0, 2])],  # a cpu index into meta
        lambda L: L.tensor([[1, 2], [3, 4]], device="meta").t(),
    ):
        check(program)
    assert ft.repeat_interleave(ft.empty(3, device="meta", dtype=ft.int64),
                                output_size=5).shape == (5,)


# --- the default device ------------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore:To copy construct from a tensor")  # torch.tensor(t)
@pytest.mark.parametrize("how", ["set_default_device", "with device"])
def test_what_follows_a_meta_default_device_is_torchs(torch: Any, how: str) -> None:
    def where(lib: Any) -> dict[str, Any]:
        c = lib.zeros(2, device="cpu")
        if how == "set_default_device":
            lib.set_default_device("meta")
        try:
            with lib.device("meta") if how == "with device" else _nothing():
                found = {}
                for name, program in PROGRAMS.items():
                    made = program(lib, c)
                    dev = made if isinstance(made, lib.device) else made.device
                    found[name] = dev.type
            return found
        finally:
            lib.set_default_device(None)

    with ft.LaunchCounter.expect(0):
        ours = where(ft)
    assert ours == where(torch)
    assert ours["Linear.weight"] == "meta"


class _nothing:
    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        pass


# --- nn -----------------------------------------------------------------------------------------

class _Net:
    """A small model in either library: a Linear, a norm, an Embedding and a buffer."""

    @staticmethod
    def build(L: Any) -> Any:
        class Net(L.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.emb = L.nn.Embedding(5, 4)
                self.lin = L.nn.Linear(4, 3)
                self.norm = L.nn.LayerNorm(3)
                self.register_buffer("scale", L.ones(3))
                self.lin.bias.requires_grad_(False)

        return Net()


def _state(m: Any) -> dict[str, Any]:
    return {k: (_layout(v), type(v).__name__, v.requires_grad) for k, v in
            m.state_dict(keep_vars=True).items()}


def test_module_to_meta_and_to_empty_make_new_parameters_as_torch(torch: Any) -> None:
    """Onto or off meta, each parameter is a new Parameter (torch cannot swap a meta tensor's
    data into a dense one) keeping requires_grad; a cast keeps the Parameter itself."""
    built = {}
    for lib in (ft, torch):
        m = _Net.build(lib)
        weight = m.lin.weight
        assert m.to("meta") is m
        assert m.lin.weight is not weight and m.lin.weight.is_meta and not weight.is_meta
        weight = m.lin.weight
        m.to(lib.float16)
        assert m.lin.weight is weight  # meta to meta: the same one
        on_meta = _state(m)
        assert m.to_empty(device="cpu") is m
        assert m.lin.weight is not weight and not m.lin.weight.is_meta
        built[lib.__name__] = (on_meta, _state(m))
    assert built["fake_torch"] == built["torch"]


def test_to_empty_then_init_gives_torchs_values(torch: Any) -> None:
    def run(lib: Any) -> dict[str, np.ndarray]:
        with lib.device("meta"):
            m = _Net.build(lib)
        m.to_empty(device="cpu", recurse=True)
        with lib.no_grad():
            for i, (_, p) in enumerate(m.named_parameters()):
                p.copy_(lib.arange(p.numel(), dtype=p.dtype).reshape(p.shape) / (i + 1))
            m.norm.reset_parameters()
            m.scale.fill_(2.0)
        return {k: v.detach().numpy().copy() for k, v in m.state_dict().items()}

    ours, theirs = run(ft), run(torch)
    assert ours.keys() == theirs.keys()
    for k in ours:
        np.testing.assert_array_equal(ours[k], theirs[k], err_msg=k)


def test_to_empty_without_recurse_moves_only_the_modules_own(torch: Any) -> None:
    for lib in (ft, torch):
        with lib.device("meta"):
            m = _Net.build(lib)
        m.to_empty(device="cpu", recurse=False)
        assert (m.scale.device.type, m.lin.weight.device.type) == ("cpu", "meta")


def test_load_state_dict_assign_takes_the_checkpoints_tensors(torch: Any) -> None:
    """assign=True: the module holds the checkpoint's tensors themselves (as Parameters where
    it had Parameters, keeping each one's requires_grad); values, dtypes and layouts are the
    checkpoint's."""
    rng = np.random.default_rng(0)
    arrays = {"emb.weight": rng.standard_normal((5, 4)).astype(np.float32),
              "lin.weight": rng.standard_normal((3, 4)).astype(np.float16),
              "lin.bias": rng.standard_normal(3).astype(np.float32),
              "norm.weight": rng.standard_normal(3).astype(np.float32),
              "norm.bias": rng.standard_normal(3).astype(np.float32),
              "scale": rng.standard_normal(3).astype(np.float32)}
    seen = {}
    for lib in (ft, torch):
        with lib.device("meta"):
            m = _Net.build(lib)
        sd = {k: lib.from_numpy(a.copy()) for k, a in arrays.items()}
        sd["lin.weight"] = sd["lin.weight"].t().contiguous().t()  # a column-major checkpoint
        with lib.LaunchCounter.expect(0) if lib is ft else _nothing():
            result = m.load_state_dict(sd, assign=True)
        assert not result.missing_keys and not result.unexpected_keys
        assert m.scale is sd["scale"]  # a buffer: the tensor itself
        assert m.lin.weight.data_ptr() == sd["lin.weight"].data_ptr()  # the same memory
        for k, v in m.state_dict().items():
            np.testing.assert_array_equal(v.float().numpy(), arrays[k].astype(np.float32))
        seen[lib.__name__] = _state(m)
    assert seen["fake_torch"] == seen["torch"]


def test_copying_into_a_meta_module_warns_as_torch(torch: Any) -> None:
    for lib in (ft, torch):
        with lib.device("meta"):
            lin = lib.nn.Linear(2, 2)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lin.load_state_dict({"weight": lib.ones(2, 2), "bias": lib.ones(2)})
        assert next(str(w.message) for w in caught).startswith(
            "for weight: copying from a non-meta parameter in the checkpoint to a meta "
            "parameter in the current model, which is a no-op.")
        assert lin.weight.is_meta


def test_load_state_dict_hooks_run_as_torchs(torch: Any) -> None:
    def run(lib: Any) -> list[Any]:
        calls: list[Any] = []
        m = _Net.build(lib)
        sd = m.state_dict()
        sd["extra"] = lib.ones(1)

        def pre(module: Any, state_dict: Any, prefix: str, local_metadata: Any, strict: bool,
                missing: list[str], unexpected: list[str], errors: list[str]) -> None:
            calls.append(("pre", type(module).__name__, prefix, sorted(local_metadata),
                          strict))
            state_dict.pop(prefix + "weight", None)  # the copy handed to this module

        def bare_pre(state_dict: Any, prefix: str, *rest: Any) -> None:
            calls.append(("bare pre", prefix, len(rest)))

        def post(module: Any, incompatible: Any) -> None:
            calls.append(("post", type(module).__name__, list(incompatible.missing_keys),
                          list(incompatible.unexpected_keys)))

        def forgive(module: Any, incompatible: Any) -> None:
            incompatible.unexpected_keys.remove("extra")

        m.lin.register_load_state_dict_pre_hook(pre)
        handle = m.norm._register_load_state_dict_pre_hook(bare_pre)
        m.norm.register_load_state_dict_post_hook(post)
        m.register_load_state_dict_post_hook(forgive)
        m.register_load_state_dict_post_hook(post)
        with pytest.raises(RuntimeError) as error:  # the norm's post hook sees no "extra"
            m.load_state_dict(sd, assign=True)
        calls.append(str(error.value).splitlines()[1])
        handle.remove()
        calls.append(len(m.norm._load_state_dict_pre_hooks))
        return calls

    assert run(ft) == run(torch)


# --- a model of 8 billion parameters, built without memory -------------------------------------

def _llama(L: Any) -> Any:
    """`python -m fake_torch bench`'s Llama 3 8B (plain nn.Module code, built on meta in
    bfloat16), with the rotary table Meta's reference keeps as a non-persistent buffer."""
    model = build_llama_8b(L)
    L.set_default_dtype(L.bfloat16)
    try:
        with L.device("meta"):
            model.register_buffer("freqs_cis", L.empty(8192, 64, 2), persistent=False)
    finally:
        L.set_default_dtype(L.float32)
    return model


def _resident_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_an_8b_llama_builds_on_meta_as_torchs_without_memory(torch: Any) -> None:
    ft.bfloat16.np  # noqa: B018 (bfloat16's numpy dtype loaded before measuring)
    before = _resident_bytes()
    with ft.LaunchCounter.expect(0):
        model = _llama(ft)
    grown = _resident_bytes() - before
    sd = model.state_dict()
    nominal = sum(t.nbytes for t in sd.values())
    assert sum(p.numel() for p in model.parameters()) == 8_030_261_248
    assert nominal == 2 * 8_030_261_248  # bf16: 16 GB, none of it held
    assert grown < 64 * 2**20, f"building on meta took {grown / 2**20:.0f} MiB of memory"
    assert all(base_array(t._a).base is not None and not t._a.flags.writeable
               for t in sd.values()), "every tensor lies over a read-only mapping"
    theirs = _llama(torch).state_dict()
    assert list(sd) == list(theirs)
    assert {k: _layout(v) for k, v in sd.items()} == {k: _layout(v) for k, v in theirs.items()}
    assert {k: type(v).__name__ for k, v in model.state_dict(keep_vars=True).items()} == {
        k: type(v).__name__ for k, v in _llama(torch).state_dict(keep_vars=True).items()}

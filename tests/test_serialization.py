"""torch.save / torch.load in torch's file format, both ways with real torch: what torch writes
fake_torch loads (values, dtypes, strides, offsets, sharing), what fake_torch writes torch loads;
weights_only refusals, mmap, map_location and launch counts, the pre-zip format, bad input.
The interop tests skip without torch; the round trips within fake_torch always run."""

from __future__ import annotations

import copy
import io
import mmap
import os
import pickle
import pickletools
import zipfile
from collections import Counter, OrderedDict
from pathlib import Path
from typing import Any

import pytest
from oracles import assert_same_error, first_line, launches, outcome

import fake_torch as ft

Lib = Any
# (dtype name, values): every dtype torch pickles over a typed storage, and some of the newer
# ones it pickles over bytes with the dtype beside them (_rebuild_tensor_v3)
DTYPES = [("float32", [1.5, -2.0, 3.25]), ("float64", [1e-300, 2.0]), ("float16", [0.5, 65504.0]),
          ("bfloat16", [1.5, -3.0e38]), ("int8", [-128, 127]), ("int16", [-3, 300]),
          ("int32", [-(2**31), 5]), ("int64", [-1, 2**40]), ("uint8", [0, 255]),
          ("bool", [True, False]), ("float8_e4m3fn", [0.5, -448.0]),
          ("float8_e5m2", [2.0, -0.25]), ("uint16", [1, 65535]), ("uint32", [7, 2**32 - 1])]


@pytest.fixture
def torch() -> Lib:
    return pytest.importorskip("torch")


def _state_dict(lib: Lib) -> OrderedDict[str, Any]:
    """The same checkpoint in either library: several dtypes, views of one storage (a
    transpose, a row at an offset, a strided slice), a Parameter, nested metadata."""
    sd: OrderedDict[str, Any] = OrderedDict()
    for name, values in DTYPES:
        sd[name] = lib.tensor(values, dtype=getattr(lib, name))
    base = lib.arange(12, dtype=lib.float32).reshape(3, 4)
    sd["base"], sd["base_t"], sd["row"], sd["cols"] = base, base.t(), base[2], base[:, ::2]
    sd["param"] = lib.nn.Parameter(lib.ones(2, 2))
    sd["frozen"] = lib.nn.Parameter(lib.zeros(3), requires_grad=False)
    sd["meta"] = {"step": 7, "lr": 0.5, "name": "llama", "dtype": lib.bfloat16,
                  "device": lib.device("cpu"), "shape": lib.Size([2, 3]), "nested": [1, (2, "x")],
                  "bytes": b"\x00\xff", "bytearray": bytearray(b"ab"), "set": {1, 2},
                  "complex": 1 + 2j, "big": 2**70, "none": None, "flag": True,
                  "counter": Counter("aab"), "cuda": lib.device("cuda", 0)}
    return sd


def _describe(obj: Any, lib: Lib) -> Any:
    """A checkpoint as plain Python, comparable across libraries: each tensor's class name,
    dtype, shape, strides, offset, requires_grad and storage bytes."""
    if isinstance(obj, lib.Tensor):
        return (type(obj).__name__, str(obj.dtype), tuple(obj.shape), obj.stride(),
                obj.storage_offset(), obj.requires_grad, obj.untyped_storage().tolist())
    if isinstance(obj, dict):
        return {k: _describe(v, lib) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)) and not isinstance(obj, lib.Size):
        return type(obj)([_describe(v, lib) for v in obj])
    return repr(obj)


def _sharing(sd: dict[str, Any], lib: Lib) -> set[tuple[str, str]]:
    """The pairs of tensors that share a storage."""
    ts = {k: v for k, v in sd.items() if isinstance(v, lib.Tensor)}
    return {(a, b) for a in ts for b in ts if a < b and
            ts[a].untyped_storage().data_ptr() == ts[b].untyped_storage().data_ptr()}


def _saved(lib: Lib, obj: Any, **kwargs: Any) -> io.BytesIO:
    buf = io.BytesIO()
    lib.save(obj, buf, **kwargs)
    buf.seek(0)
    return buf


# --- interop with real torch ---------------------------------------------------------------


def test_what_torch_saves_fake_torch_loads_with_values_strides_and_sharing(torch: Lib) -> None:
    theirs = _state_dict(torch)
    ours = ft.load(_saved(torch, theirs))
    assert _describe(ours, ft) == _describe(theirs, torch)
    assert _sharing(ours, ft) == _sharing(theirs, torch) == {
        ("base", "base_t"), ("base", "cols"), ("base", "row"), ("base_t", "cols"),
        ("base_t", "row"), ("cols", "row")}
    assert type(ours) is OrderedDict and ours["meta"]["dtype"] is ft.bfloat16
    assert type(ours["meta"]["shape"]) is ft.Size and ours["cols"].is_contiguous() is False


def test_what_fake_torch_saves_torch_loads_equal(torch: Lib) -> None:
    ours = _state_dict(ft)
    theirs = torch.load(_saved(ft, ours))  # weights_only=True: only torch's allowed names
    assert _describe(theirs, torch) == _describe(ours, ft) == _describe(_state_dict(torch),
                                                                        torch)
    assert _sharing(theirs, torch) == _sharing(ours, ft)


def test_the_file_is_torch_s_records_names_and_alignment(torch: Lib, tmp_path: Path) -> None:
    files = {}
    for lib in (torch, ft):
        path = tmp_path / lib.__name__ / "my.model.pt"
        path.parent.mkdir()
        lib.save(_state_dict(lib), path)
        files[lib.__name__] = zipfile.ZipFile(path)
    ours, theirs = files["fake_torch"], files["torch"]
    assert ours.namelist() == theirs.namelist()
    assert ours.namelist()[:4] == ["my.model/data.pkl", "my.model/.format_version",
                                   "my.model/.storage_alignment", "my.model/byteorder"]
    for name in ours.namelist()[1:-1]:  # (torch's serialization id is a hash of its own)
        assert ours.read(name) == theirs.read(name), name
    # the pickles differ only in which equal strings the pickler memoized
    assert _globals(ours.read("my.model/data.pkl")) == _globals(theirs.read("my.model/data.pkl"))
    raw = (tmp_path / "fake_torch" / "my.model.pt").read_bytes()
    for info in ours.infolist():  # every record's bytes start at a multiple of 64
        extra = int.from_bytes(raw[info.header_offset + 28:info.header_offset + 30], "little")
        start = info.header_offset + 30 + len(info.filename) + extra
        assert start % 64 == 0 and info.compress_type == zipfile.ZIP_STORED


def _globals(pickled: bytes) -> list[str]:
    return [str(arg) for op, arg, _ in pickletools.genops(pickled) if op.name == "GLOBAL"]


def test_the_pickle_names_torch_not_fake_torch() -> None:
    buf = _saved(ft, {"t": ft.ones(2), "p": ft.nn.Parameter(ft.ones(1)), "d": ft.float16,
                      "f8": ft.zeros(1, dtype=ft.float8_e5m2)})
    data = zipfile.ZipFile(buf).read("archive/data.pkl")
    assert set(_globals(data)) == {"collections OrderedDict", "torch._utils _rebuild_tensor_v2",
                        "torch._utils _rebuild_tensor_v3", "torch._utils _rebuild_parameter",
                        "torch FloatStorage", "torch.storage UntypedStorage",
                        "torch float16", "torch float8_e5m2"}
    assert b"fake_torch" not in data


def test_a_tensor_with_attributes_and_a_subclass_round_trip(torch: Lib) -> None:
    t = torch.ones(2)
    t.tag = "kv"  # Python state: torch wraps the rebuild in _rebuild_from_type_v2
    loaded = ft.load(_saved(torch, {"t": t}))["t"]
    assert (type(loaded), loaded.tag, loaded.tolist()) == (ft.Tensor, "kv", [1.0, 1.0])
    back = torch.load(_saved(ft, {"t": loaded}))["t"]
    assert (back.tag, back.tolist()) == ("kv", [1.0, 1.0])


def test_a_real_torch_model_state_dict_loads_into_a_fake_torch_model(torch: Lib) -> None:
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.LayerNorm(3))
    ours = ft.nn.Sequential(ft.nn.Linear(4, 3), ft.nn.LayerNorm(3))
    ours.load_state_dict(ft.load(_saved(torch, theirs.state_dict())))
    x = [[0.5, -1.0, 2.0, 0.25]]
    assert ours(ft.tensor(x)).tolist()[0] == pytest.approx(
        theirs(torch.tensor(x)).tolist()[0], abs=1e-6)


def test_the_pre_zip_format_loads_both_ways(torch: Lib) -> None:
    sd = _state_dict(torch)  # (torch itself cannot load its pre-zip files of float8 tensors)
    for name in ("float8_e4m3fn", "float8_e5m2", "uint16", "uint32"):
        del sd[name]
    ours = ft.load(_saved(torch, sd, _use_new_zipfile_serialization=False))
    assert _describe(ours, ft) == _describe(sd, torch)
    assert _sharing(ours, ft) == _sharing(sd, torch)
    theirs = torch.load(_saved(ft, ours, _use_new_zipfile_serialization=False))
    assert _describe(theirs, torch) == _describe(sd, torch)


def test_pickle_protocol_4_is_refused_by_weights_only_as_torch_refuses_it(torch: Lib) -> None:
    for saver in (torch, ft):
        for loader in (torch, ft):
            buf = _saved(saver, {"a": saver.ones(2)}, pickle_protocol=4)
            data = buf.getvalue()
            _, theirs = outcome(lambda: torch.load(io.BytesIO(data)))  # noqa: B023
            _, ours = outcome(lambda: loader.load(io.BytesIO(data)))  # noqa: B023
            assert_same_error(ours, theirs)
            loaded = loader.load(io.BytesIO(buf.getvalue()), weights_only=False)
            assert loaded["a"].tolist() == [1.0, 1.0]


# --- weights_only ----------------------------------------------------------------------------


class Config:
    """A user class in a checkpoint: refused by weights_only until marked safe."""

    def __init__(self) -> None:
        self.hidden = 64


def test_an_unsafe_global_is_refused_with_torch_s_error(torch: Lib) -> None:
    buf = _saved(torch, {"cfg": Config(), "w": torch.ones(1)})
    _, theirs = outcome(lambda: torch.load(io.BytesIO(buf.getvalue())))
    _, ours = outcome(lambda: ft.load(io.BytesIO(buf.getvalue())))
    assert type(ours) is type(theirs) is pickle.UnpicklingError
    assert str(ours) == str(theirs)  # the whole message: the hint names the global
    assert f"GLOBAL {__name__}.Config was not an allowed global" in str(ours)
    assert ft.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(buf.getvalue())) == [
        f"{__name__}.Config"]


def test_a_blocked_module_is_refused_even_when_marked_safe(torch: Lib) -> None:
    buf = _saved(torch, {"f": os.getcwd})
    for lib in (torch, ft):
        lib.serialization.add_safe_globals([os.getcwd])
    try:
        _, theirs = outcome(lambda: torch.load(io.BytesIO(buf.getvalue())))
        _, ours = outcome(lambda: ft.load(io.BytesIO(buf.getvalue())))
    finally:
        for lib in (torch, ft):
            lib.serialization.clear_safe_globals()
    assert type(ours) is type(theirs) and str(ours) == str(theirs)
    assert "is blocked" in str(ours)


# hand-made pickles, each a step the weights_only unpickler must refuse (or allow) as torch's
CRAFTED = [
    b"\x80\x02}q\x00K\x01a.",  # APPEND to a dict
    b"\x80\x02}K\x01K\x02K\x03e.",  # APPENDS to a dict (no MARK: the stack underflows)
    b"\x80\x02](K\x01K\x02u.",  # SETITEMS on a list
    b"\x80\x02]K\x01K\x02s.",  # SETITEM on a list
    b"\x80\x02cbuiltins\nprint\n.",  # a builtin that is not allowed
    b"\x80\x02c__builtin__\neval\n.",  # a Python 2 name, mapped first
    b"\x80\x02cos\nsystem\n.",  # a blocked module
    b"\x80\x02cposix\nsystem\n.",
    b"\x80\x02X\x01\x00\x00\x00aQ.",  # a persistent id that is not a tuple or int
    b"\x80\x02X\x01\x00\x00\x00a\x85Q.",  # a persistent id that is not a storage
    b"\x80\x02\x95\x00\x00\x00\x00\x00\x00\x00\x00.",  # FRAME: protocol 4 only
    b"\x80\x02]}b.",  # BUILD on a list
    b"\x80\x02])R.",  # REDUCE with a list as the function
    b"\x80\x02ccollections\nOrderedDict\n)\x81.",  # NEWOBJ of an allowed class
    b"\x80\x02ccollections\nCounter\n}\x85R.",  # Counter({})
    b"\x80\x02c_codecs\nencode\nX\x02\x00\x00\x00hiX\x06\x00\x00\x00latin1\x86R.",
    b"\x80\x02\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x01.",  # LONG1: 2**64
    b"\x80\x02U\x02abM\x01\x01J\xff\xff\xff\xffG?\xf8\x00\x00\x00\x00\x00\x00\x87.",
    b"\x80\x02h\x05.",  # a memo entry never put
    b"\x80\x02",  # cut short
]


@pytest.mark.parametrize("data", CRAFTED)
def test_the_weights_only_unpickler_refuses_and_allows_what_torch_s_does(
        data: bytes, torch: Lib) -> None:
    from torch import _weights_only_unpickler as theirs_module

    from fake_torch import _weights_only_unpickler as ours_module

    theirs, their_error = outcome(lambda: theirs_module.load(io.BytesIO(data)))
    ours, our_error = outcome(lambda: ours_module.load(io.BytesIO(data)))
    assert type(our_error) is type(their_error)
    assert str(our_error) == str(their_error)
    assert ours == theirs


def test_safe_globals_allow_a_class_and_are_listed() -> None:
    buf = _saved(ft, {"cfg": Config(), "w": ft.ones(1)})
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        ft.load(io.BytesIO(buf.getvalue()))
    with ft.serialization.safe_globals([Config]):
        assert ft.serialization.get_safe_globals() == [Config]
        assert ft.load(io.BytesIO(buf.getvalue()))["cfg"].hidden == 64
    assert ft.serialization.get_safe_globals() == []
    ft.serialization.add_safe_globals([(Config, f"{__name__}.Config")])
    try:
        assert ft.load(io.BytesIO(buf.getvalue()))["cfg"].hidden == 64
    finally:
        ft.serialization.clear_safe_globals()
    assert ft.load(io.BytesIO(buf.getvalue()), weights_only=False)["cfg"].hidden == 64


def test_weights_only_with_a_pickle_module_is_refused_as_torch_refuses_it(torch: Lib) -> None:
    buf = _saved(torch, torch.ones(1))
    _, theirs = outcome(lambda: torch.load(buf, pickle_module=pickle, weights_only=True))
    _, ours = outcome(lambda: ft.load(buf, pickle_module=pickle, weights_only=True))
    assert_same_error(ours, theirs)


def test_a_pickle_module_alone_turns_weights_only_off_as_in_torch(torch: Lib) -> None:
    buf = _saved(torch, {"cfg": Config()})
    for lib in (torch, ft):
        assert lib.load(io.BytesIO(buf.getvalue()), pickle_module=pickle)["cfg"].hidden == 64


@pytest.mark.filterwarnings("ignore:torch.quantize_per_tensor:UserWarning")
def test_what_fake_torch_cannot_rebuild_raises_not_implemented(torch: Lib) -> None:
    buf = _saved(torch, {"q": torch.quantize_per_tensor(torch.ones(2), 0.1, 0, torch.qint8)})
    with pytest.raises(NotImplementedError, match=r"torch\._utils\._rebuild_qtensor"):
        ft.load(buf)


def test_a_whole_module_saves_and_loads_with_weights_only_false() -> None:
    model = ft.nn.Linear(3, 2)
    loaded = ft.load(_saved(ft, model), weights_only=False)
    assert type(loaded) is ft.nn.Linear
    assert loaded.weight.tolist() == model.weight.tolist()
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        ft.load(_saved(ft, model))


# --- sharing, round trips within fake_torch ------------------------------------------------------


def test_a_tied_embedding_and_lm_head_load_tied() -> None:
    class TinyLM(ft.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = ft.nn.Embedding(10, 4)
            self.lm_head = ft.nn.Linear(4, 10, bias=False)
            self.lm_head.weight = self.embed.weight

    loaded = ft.load(_saved(ft, TinyLM().state_dict()))
    assert loaded["embed.weight"].data_ptr() == loaded["lm_head.weight"].data_ptr()
    fresh = TinyLM()
    fresh.load_state_dict(loaded)
    assert fresh.lm_head.weight.data_ptr() == fresh.embed.weight.data_ptr()
    assert fresh.embed.weight.tolist() == loaded["embed.weight"].tolist()


def test_a_module_state_dict_round_trips_through_a_file(tmp_path: Path) -> None:
    model = ft.nn.Sequential(ft.nn.Linear(4, 8), ft.nn.ReLU(), ft.nn.Linear(8, 2))
    ft.save(model.state_dict(), tmp_path / "model.pt")  # a pathlib path
    fresh = ft.nn.Sequential(ft.nn.Linear(4, 8), ft.nn.ReLU(), ft.nn.Linear(8, 2))
    fresh.load_state_dict(ft.load(str(tmp_path / "model.pt")))
    x = ft.randn(3, 4)
    assert fresh(x).tolist() == model(x).tolist()


def test_one_memory_seen_as_two_dtypes_is_refused_as_torch_refuses_it(torch: Lib) -> None:
    for lib in (torch, ft):
        x = lib.ones(4)
        _, e = outcome(lambda: lib.save([x, x.view(lib.int32)], io.BytesIO()))  # noqa: B023
        assert type(e) is RuntimeError and first_line(e) == (
            "Cannot save multiple tensors or storages that view the same data as different "
            "types")


def test_plain_pickle_and_deepcopy_use_the_rebuild_functions() -> None:
    x = ft.arange(6.).reshape(2, 3).t()
    back = pickle.loads(pickle.dumps(x))
    assert (back.tolist(), back.stride(), back.storage_offset()) == (x.tolist(), (1, 3), 0)
    assert back.data_ptr() != x.data_ptr()
    p = ft.nn.Parameter(ft.ones(2), requires_grad=False)
    assert type(pickle.loads(pickle.dumps(p))) is ft.nn.Parameter
    copied = copy.deepcopy({"x": x, "row": x[1], "same": x})
    assert copied["same"] is copied["x"] and copied["x"].data_ptr() != x.data_ptr()
    assert copied["row"].data_ptr() - copied["x"].data_ptr() == 4  # still one storage


def test_a_pickled_cuda_tensor_comes_back_on_the_device(fresh_device: Any) -> None:
    y = ft.ones(3, dtype=ft.bfloat16, device="cuda")
    with launches() as names:
        z = pickle.loads(pickle.dumps(y))
    assert names == ["copy_", "copy_"]  # its bytes to the host, and back to the device
    assert (z.device, z.dtype, z.cpu().tolist()) == (ft.device("cuda", 0), ft.bfloat16,
                                                     [1.0] * 3)


# --- devices and map_location ------------------------------------------------------------------


def test_cuda_tensors_save_as_cuda_0_and_load_back_to_the_device(fresh_device: Any) -> None:
    x = ft.arange(12., device="cuda").reshape(3, 4)
    sd = {"x": x, "xt": x.t(), "y": ft.ones(2, device="cuda", dtype=ft.bfloat16)}
    buf = io.BytesIO()
    with launches() as names:
        ft.save(sd, buf)
    # one device-to-host copy per storage, not per tensor (torch on an H200:
    # tests/gpu/serialization_gpu.py)
    assert names == ["copy_", "copy_"]
    data = zipfile.ZipFile(buf).read("archive/data.pkl")
    assert [a for op, a, _ in pickletools.genops(data) if a in ("cpu", "cuda:0")] == [
        "cuda:0"] * 3
    with launches() as names:
        loaded = ft.load(io.BytesIO(buf.getvalue()))
    assert names == ["copy_", "copy_"]  # one host-to-device copy per storage
    assert loaded["x"].device == ft.device("cuda", 0) and loaded["xt"].stride() == (1, 4)
    assert loaded["x"].data_ptr() == loaded["xt"].data_ptr()
    assert loaded["xt"].cpu().tolist() == x.t().cpu().tolist()


@pytest.mark.parametrize("map_location", ["cpu", ft.device("cpu"), {"cuda:0": "cpu"},
                                          lambda storage, location: storage])
def test_map_location_to_the_cpu_launches_nothing(map_location: Any, fresh_device: Any) -> None:
    buf = _saved(ft, {"x": ft.arange(4., device="cuda")})
    with launches() as names:
        loaded = ft.load(buf, map_location=map_location)
    assert names == [] and loaded["x"].device == ft.device("cpu")
    assert loaded["x"].tolist() == [0.0, 1.0, 2.0, 3.0]


@pytest.mark.parametrize("map_location", ["cuda", "cuda:0", ft.device("cuda"), {"cpu": "cuda"},
                                          lambda storage, location: storage.cuda()])
def test_map_location_to_cuda_copies_each_storage_once(map_location: Any,
                                                       fresh_device: Any) -> None:
    x = ft.arange(6.)
    buf = _saved(ft, {"x": x, "row": x[2:], "y": ft.ones(2, dtype=ft.int64)})
    with launches() as names:
        loaded = ft.load(buf, map_location=map_location)
    assert names == ["copy_", "copy_"]
    assert loaded["row"].device == ft.device("cuda", 0)
    assert loaded["row"].cpu().tolist() == [2.0, 3.0, 4.0, 5.0]
    assert loaded["row"].data_ptr() - loaded["x"].data_ptr() == 8


def test_mmap_and_the_pre_zip_format_onto_cuda_copy_as_torch_does(tmp_path: Path,
                                                                  fresh_device: Any) -> None:
    """On an H200 (tests/gpu/serialization_gpu.py) torch copied each storage to the device once
    from a mapped file, and twice from a pre-zip file (made on the device, then filled)."""
    x = ft.arange(12., device="cuda").reshape(3, 4)
    sd = {"x": x, "xt": x.t(), "row": x[1], "y": ft.ones(2, device="cuda", dtype=ft.bfloat16)}
    ft.save(sd, tmp_path / "m.pt")
    with launches() as names:
        mapped = ft.load(tmp_path / "m.pt", mmap=True)
    assert names == ["copy_"] * 2 and mapped["row"].cpu().tolist() == [4.0, 5.0, 6.0, 7.0]
    buf = _saved(ft, sd, _use_new_zipfile_serialization=False)
    with launches() as names:
        legacy = ft.load(buf)
    assert names == ["copy_"] * 4 and legacy["xt"].cpu().tolist() == x.t().cpu().tolist()
    assert legacy["x"].data_ptr() == legacy["xt"].data_ptr() and legacy["y"].is_cuda


def test_a_missing_device_is_refused() -> None:
    buf = _saved(ft, ft.ones(1))
    with pytest.raises(RuntimeError, match=r"Attempting to deserialize object on CUDA device 1 "
                                           r"but torch.cuda.device_count\(\) is 1"):
        ft.load(buf, map_location="cuda:1")


# --- mmap ------------------------------------------------------------------------------------


def test_mmap_maps_every_storage_from_one_mapping_of_the_file(torch: Lib, tmp_path: Path) -> None:
    path = tmp_path / "m.pt"
    torch.save({"a": torch.arange(6.), "b": torch.ones(3), "c": torch.zeros(2)}, path)
    offsets = {}
    with open(path, "rb") as f:  # where each record's bytes sit in the file
        for info in zipfile.ZipFile(f).infolist():
            f.seek(info.header_offset + 26)
            n, m = int.from_bytes(f.read(2), "little"), int.from_bytes(f.read(2), "little")
            offsets[info.filename.rsplit("/", 1)[-1]] = info.header_offset + 30 + n + m
    for lib in (torch, ft):
        d = lib.load(path, mmap=True)
        assert d["a"].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
        # the storages sit as far apart in memory as their records in the file: one mapping
        assert d["b"].data_ptr() - d["a"].data_ptr() == offsets["1"] - offsets["0"]
        assert d["c"].data_ptr() - d["a"].data_ptr() == offsets["2"] - offsets["0"]


def test_mmap_shared_writes_through_to_the_file_and_private_does_not(tmp_path: Path) -> None:
    path = str(tmp_path / "m.pt")
    ft.save({"a": ft.arange(4.)}, path)
    ft.load(path, mmap=True)["a"][0] = 42.0  # MAP_PRIVATE (the default): a private copy
    assert ft.load(path)["a"].tolist() == [0.0, 1.0, 2.0, 3.0]
    with ft.serialization.set_default_mmap_options(mmap.MAP_SHARED):
        assert ft.serialization.get_default_mmap_options() == mmap.MAP_SHARED
        ft.load(path, mmap=True)["a"][0] = 42.0
    assert ft.serialization.get_default_mmap_options() == mmap.MAP_PRIVATE
    assert ft.load(path)["a"].tolist() == [42.0, 1.0, 2.0, 3.0]


def test_mmap_refusals_match_torch(torch: Lib, tmp_path: Path) -> None:
    zipped, legacy = str(tmp_path / "z.pt"), str(tmp_path / "legacy.pt")
    torch.save({"a": torch.ones(1)}, zipped)
    torch.save({"a": torch.ones(1)}, legacy, _use_new_zipfile_serialization=False)
    data = Path(zipped).read_bytes()
    for call in (lambda lib: lib.load(io.BytesIO(data), mmap=True),
                 lambda lib: lib.load(legacy, mmap=True),
                 lambda lib: lib.serialization.set_default_mmap_options(12345)):
        _, theirs = outcome(lambda: call(torch))  # noqa: B023
        _, ours = outcome(lambda: call(ft))  # noqa: B023
        assert theirs is not None
        assert_same_error(ours, theirs)


# --- bad input -------------------------------------------------------------------------------


def test_bad_files_raise_torch_s_errors(torch: Lib, tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"hello world, not a checkpoint")
    good = tmp_path / "good.pt"
    torch.save({"a": torch.ones(4)}, good)
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(good.read_bytes()[:300])
    empty = tmp_path / "empty.pt"
    empty.write_bytes(b"")

    class NoSeek(io.RawIOBase):
        def readable(self) -> bool:
            return True

        def seek(self, *args: Any) -> int:
            raise io.UnsupportedOperation("seek")

    calls = [lambda lib: lib.load(garbage), lambda lib: lib.load(garbage, weights_only=False),
             lambda lib: lib.load(tmp_path / "missing.pt"), lambda lib: lib.load(truncated),
             lambda lib: lib.load(NoSeek()), lambda lib: lib.save(lib.ones(1), 3),
             lambda lib: lib.save(lib.ones(1), tmp_path / "no" / "dir.pt"),
             lambda lib: lib.save(lib.ones(1), tmp_path), lambda lib: lib.load(tmp_path),
             lambda lib: lib.load(io.BytesIO(b"PK\x03\x04 too short")), lambda lib: lib.load(empty),
             lambda lib: lib.load(empty, weights_only=False)]
    for call in calls:
        _, theirs = outcome(lambda: call(torch))  # noqa: B023
        _, ours = outcome(lambda: call(ft))  # noqa: B023
        assert theirs is not None
        assert_same_error(ours, theirs)


def test_a_safetensors_path_is_not_emulated(tmp_path: Path) -> None:
    with pytest.raises(NotImplementedError, match="safetensors"):
        ft.load(tmp_path / "model.safetensors")


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_a_torchscript_archive_is_not_emulated(torch: Lib, tmp_path: Path) -> None:
    path = tmp_path / "scripted.pt"
    torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), path)
    with pytest.raises(NotImplementedError, match=r"TorchScript archive \(torch\.jit\.load\)"):
        ft.load(path, weights_only=False)
    _, theirs = outcome(lambda: torch.load(path))
    _, ours = outcome(lambda: ft.load(path))
    assert_same_error(ours, theirs)


def test_a_big_endian_checkpoint_is_byteswapped_as_torch_does(torch: Lib, tmp_path: Path) -> None:
    little = tmp_path / "little.pt"
    torch.save({"f": torch.tensor([1.5, -2.0]), "i": torch.tensor([1, 2**40]),
                "h": torch.tensor([0.5], dtype=torch.bfloat16)}, little)
    big = tmp_path / "big.pt"
    sizes = {"data/0": 4, "data/1": 8, "data/2": 2}  # each record's element size
    with zipfile.ZipFile(little) as src, zipfile.ZipFile(big, "w") as dst:
        for info in src.infolist():
            data, record = src.read(info), info.filename.split("/", 1)[1]
            if record == "byteorder":
                data = b"big"
            elif record in sizes:  # the same numbers, written big-endian
                n = sizes[record]
                data = b"".join(data[i:i + n][::-1] for i in range(0, len(data), n))
            dst.writestr(info, data)
    theirs, ours = torch.load(big), ft.load(big)
    assert _describe(ours, ft) == _describe(theirs, torch)
    assert ours["i"].tolist() == [1, 2**40] and ours["h"].tolist() == [0.5]


def test_options_and_the_names_not_emulated() -> None:
    ser = ft.serialization
    assert ser.get_default_load_endianness() is None and ser.get_crc32_options() is True
    ser.set_default_load_endianness(ser.LoadEndianness.LITTLE)
    try:
        assert ser.get_default_load_endianness() is ser.LoadEndianness.LITTLE
    finally:
        ser.set_default_load_endianness(None)
    with pytest.raises(TypeError, match="Invalid argument type"):
        ser.set_default_load_endianness("big")
    with pytest.raises(NotImplementedError, match="set_crc32_options"):
        ser.set_crc32_options(False)
    with pytest.raises(NotImplementedError, match="skip_data"):
        ser.skip_data()
    assert ser.location_tag(ft.ones(1).untyped_storage()) == "cpu"
    assert ser.default_restore_location(ft.ones(1).untyped_storage(), "cpu").device == ft.device(
        "cpu")


class Scaled(ft.Tensor):
    """A user Tensor subclass: pickled through _rebuild_from_type_v2, so refused by
    weights_only until marked safe."""


def test_a_tensor_subclass_loads_as_itself_once_marked_safe() -> None:
    t = ft.ones(2).as_subclass(Scaled)
    t.scale = 0.5
    buf = _saved(ft, t)
    with pytest.raises(pickle.UnpicklingError, match=f"GLOBAL {__name__}.Scaled was not"):
        ft.load(io.BytesIO(buf.getvalue()))
    with ft.serialization.safe_globals([Scaled]):
        loaded = ft.load(io.BytesIO(buf.getvalue()))
    assert (type(loaded), loaded.scale, loaded.tolist()) == (Scaled, 0.5, [1.0, 1.0])


def test_a_parameter_with_attributes_round_trips_both_ways(torch: Lib) -> None:
    p = ft.nn.Parameter(ft.ones(2))
    p.tp_dim = 1  # what tensor-parallel loaders hang on their weights
    theirs = torch.load(_saved(ft, {"p": p}))["p"]
    assert (type(theirs), theirs.tp_dim, theirs.tolist()) == (torch.nn.Parameter, 1, [1.0, 1.0])
    ours = ft.load(_saved(torch, {"p": theirs}))["p"]
    assert (type(ours), ours.tp_dim, ours.requires_grad) == (ft.nn.Parameter, 1, True)


@pytest.mark.filterwarnings("ignore:TypedStorage is deprecated:UserWarning")
def test_a_saved_storage_loads_as_a_typed_storage_as_in_torch(torch: Lib) -> None:
    for lib in (torch, ft):
        loaded = lib.load(_saved(lib, lib.arange(3.0).untyped_storage()))
        assert (type(loaded).__name__, loaded.nbytes(), loaded.dtype) == (
            "TypedStorage", 12, lib.uint8)


def _layout(sd: dict[str, Any]) -> dict[str, Any]:
    return {k: (str(v.device), str(v.dtype), tuple(v.shape), v.stride(), v.storage_offset())
            for k, v in sd.items()}


def test_meta_tensors_save_without_storage_and_load_both_ways(torch: Lib) -> None:
    saved = {}
    for lib in (torch, ft):
        m = lib.empty(4, 3, dtype=lib.bfloat16, device="meta")
        saved[lib.__name__] = {"m": m, "mt": m.t(), "col": m[:, 1]}
    for saver in (torch, ft):
        data = _saved(saver, saved[saver.__name__]).getvalue()
        assert not any(n.startswith("archive/data/") for n in zipfile.ZipFile(io.BytesIO(
            data)).namelist())  # torch._utils._rebuild_meta_tensor_no_storage: no bytes
        theirs, ours = torch.load(io.BytesIO(data)), ft.load(io.BytesIO(data))
        # (the views come back apart, with offset 0: torch pickles meta layouts alone)
        assert _layout(ours) == _layout(theirs) == {
            "m": ("meta", "torch.bfloat16", (4, 3), (3, 1), 0),
            "mt": ("meta", "torch.bfloat16", (3, 4), (1, 3), 0),
            "col": ("meta", "torch.bfloat16", (4,), (3,), 0)}


def test_map_location_meta_reads_no_storage_and_launches_nothing(torch: Lib,
                                                                 fresh_device: Any) -> None:
    data = _saved(torch, _state_dict(torch)).getvalue()
    theirs = torch.load(io.BytesIO(data), map_location="meta")
    with launches() as names:
        ours = ft.load(io.BytesIO(data), map_location=ft.device("meta"))
    assert names == []
    tensors = [k for k, v in theirs.items() if isinstance(v, torch.Tensor)]
    assert _layout({k: ours[k] for k in tensors}) == _layout({k: theirs[k] for k in tensors})
    assert type(ours["param"]) is ft.nn.Parameter and ours["meta"] == _state_dict(ft)["meta"]

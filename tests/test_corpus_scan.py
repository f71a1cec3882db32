"""`python -m fake_torch api --corpus DIR`: the scan that counts which torch names and Tensor
attributes a corpus of codebases uses and whether fake_torch provides them.

Oracles: small synthetic programs whose counts are written out by hand; fake_torch's own objects
for resolution (a name it has, one it lacks, one it refuses); real torch (CPU build) for which
names torch has and what torch.Tensor's attributes are.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

import fake_torch
import fake_torch.nn.functional
from fake_torch.__main__ import main
from fake_torch._tools import _corpus_scan as cs

TENSOR = frozenset({"view", "float", "dim", "norm", "mean", "split", "to", "shape", "add"})


def _real_torch() -> None:
    pytest.importorskip("torch", reason="real torch (CPU build) is the oracle: pip install torch")
    try:
        cs.real_tensor_names()
    except ImportError:
        pytest.skip("`torch` is fake_torch here (install() is in effect), not real torch")


def test_tensor_attributes_skip_self_imports_torch_paths_and_the_codebases_own_names() -> None:
    source = textwrap.dedent("""
        import numpy as np
        import torch
        from torch import Tensor
        from dataclasses import dataclass

        @dataclass
        class Args:
            dim: int = 8              # `dim` is this codebase's own field

        class Block(torch.nn.Module):
            def forward(self, x, args):
                y = x.view(2, -1).float()          # two Tensor uses
                z = self.norm(y)                   # self.*: the module's own attribute
                w = np.mean(z) + Tensor.add(y, y)  # an imported module; a torch path
                a, b = y.split(1)                  # ambiguous: str.split too
                return args.dim, z.to(torch.float16).shape, y.mean()
    """)
    own = cs.own_attribute_names([source])
    assert {"dim", "forward"} <= own and "view" not in own
    counts = cs.count_tensor_names(source, TENSOR, own)
    assert counts == {"Tensor.view": 1, "Tensor.float": 1, "Tensor.split": 1, "Tensor.to": 1,
                      "Tensor.shape": 1, "Tensor.mean": 1}


def test_own_names_include_buffers_class_attributes_and_argparse_options() -> None:
    source = textwrap.dedent("""
        import argparse
        class M:
            norm = None
            def mean(self): ...
            def __init__(self):
                self.register_buffer("freqs", None)
                self.shape: tuple = ()
        p = argparse.ArgumentParser()
        p.add_argument("--max-new-tokens", type=int)
        p.add_argument("-m", "--mode")
        p.add_argument("--x", dest="device")
        p.add_argument("positional")
    """)
    assert cs.own_attribute_names([source]) == {
        "norm", "mean", "__init__", "freqs", "shape", "max_new_tokens", "mode", "device",
        "positional"}


def test_tally_counts_call_sites_and_codebases_and_keeps_unparsable_files_out() -> None:
    corpus = {
        "b": {"m.py": "import torch.nn.functional as F\ny = F.silu(x).view(1)\nF.silu(y)\n"},
        "a": {"m.py": "from torch.nn.functional import silu\nsilu(x)\n",
              "broken.py": "def (:\n",
              "sub/n.py": "from torch import nn\nclass L(nn.Module):\n    pass\nx.view(2)\n"},
    }
    counted = cs.tally(corpus, TENSOR)
    assert counted.codebases == ["a", "b"]
    assert counted.unparsed == ["a/broken.py"]
    assert counted.sites == {"torch.nn.functional.silu": 3, "Tensor.view": 2,
                             "torch.nn.Module": 1}
    assert counted.users == {"torch.nn.functional.silu": {"a", "b"}, "Tensor.view": {"a", "b"},
                             "torch.nn.Module": {"a"}}


def test_resolve_walks_attributes_and_imports_submodules() -> None:
    assert cs.resolve("torch.nn.functional.silu", "fake_torch") is fake_torch.nn.functional.silu
    assert cs.resolve("Tensor.view", "fake_torch") is fake_torch.Tensor.view
    assert cs.resolve("torch.cuda.CUDAGraph.replay", "fake_torch") \
        is fake_torch.cuda.CUDAGraph.replay
    pytree = cs.resolve("torch.utils._pytree", "fake_torch")  # a submodule, imported on the way
    assert getattr(pytree, "__name__", None) == "fake_torch.utils._pytree"
    assert cs.resolve("torch.no_such_name", "fake_torch") is cs._MISSING
    assert cs.resolve("torch.zeros.no_such_attribute", "fake_torch") is cs._MISSING
    assert cs.resolve("Tensor.no_such_method", "fake_torch") is cs._MISSING


def _refusing(x: int) -> int:
    """A docstring first: the refusal is the first statement after it."""
    raise NotImplementedError("torch.foo is not emulated")


def _helper_refusing(x: int) -> int:
    _refuse_this("torch.bar")
    return x


def _refuse_this(name: str) -> None:
    raise NotImplementedError(name)


def _working(x: int) -> int:
    if x < 0:
        raise NotImplementedError("only for negative x")
    return x


def test_refuses_reads_the_first_statement() -> None:
    for fn in (_refusing, _helper_refusing, _working):
        fn.__module__ = "fake_torch.synthetic"  # refuses() judges fake_torch's objects only
    assert cs.refuses(_refusing) and cs.refuses(_helper_refusing)
    assert not cs.refuses(_working)
    assert cs.refuses(NotImplementedError("a look-up that raised"))
    assert cs.refuses(fake_torch.optim.AdamW)  # its __init__ refuses: training is not emulated
    assert not cs.refuses(fake_torch.zeros) and not cs.refuses(fake_torch.nn.Linear)


def test_tested_names_reads_only_files_that_compare_with_real_torch(tmp_path: Path) -> None:
    (tmp_path / "test_oracle.py").write_text(textwrap.dedent("""
        from oracles import to_torch
        import fake_torch as ft
        from fake_torch.nn import functional as F
        F.gelu(ft.ones(2).cumsum(0)).softmax(0)
        OPS = ["expm1"]
        module.register_buffer("b", None)
    """))
    (tmp_path / "test_no_oracle.py").write_text("import fake_torch as ft\nft.softplus(x).erf()\n")
    tested = cs.tested_names(tmp_path)
    assert tested.covers("torch.nn.functional.gelu") and tested.covers("torch.ones")
    assert tested.covers("Tensor.cumsum") and tested.covers("torch.expm1")
    assert tested.covers("torch.nn")  # a prefix of a path the test reaches
    assert not tested.covers("torch.softplus") and not tested.covers("Tensor.erf")
    assert not tested.covers("torch.cuda.expm1")  # strings count only for torch and F's names
    assert tested.covers("Tensor.softmax") and not tested.covers("torch.softmax")
    assert tested.covers("Module.register_buffer")  # a Module attribute an oracle test uses
    assert not tested.covers("Module.apply")


def test_measure_orders_most_used_first_and_computes_coverage() -> None:
    _real_torch()
    corpus = {
        "a": {"m.py": "import torch\ntorch.zeros(1).view(1)\ntorch.zeros(2)\n"
                      "torch.no_such_thing()\ntorch.nn.functional.softplus(x)\nx.split(1)\n"},
        "b": {"m.py": "import torch\ntorch.zeros(1)\ntorch.nn.functional.softplus(x)\n"},
        "c": {"m.py": "import torch.nn.functional as F\nF.softplus(x)\nF.softplus(x)\n"},
    }
    counted = cs.tally(corpus, cs.real_tensor_names())
    uses = cs.measure(counted, cs.TestedNames({"torch.zeros"}, set(), set()))
    softplus_provided = hasattr(fake_torch.nn.functional, "softplus")
    assert [(u.name, u.kind, u.sites, u.codebases) for u in uses] == [
        ("torch.nn.functional.softplus", "torch", 4, 3), ("torch.zeros", "torch", 3, 2),
        ("Tensor.split", "tensor?", 1, 1), ("Tensor.view", "tensor", 1, 1),
        ("torch.no_such_thing", "torch", 1, 1)]
    by_name = {u.name: u for u in uses}
    assert by_name["torch.zeros"].tested and not by_name["Tensor.view"].tested
    assert not by_name["torch.no_such_thing"].in_torch  # out of the figures: torch lacks it
    assert cs.coverage(uses, ("torch",)) == (3 + 4 * softplus_provided, 7)
    assert cs.coverage(uses, ("tensor",)) == (1, 1)  # the ambiguous split is left out
    assert [u.name for u in cs.missing(uses)] == \
        ([] if softplus_provided else ["torch.nn.functional.softplus"])
    assert cs.missing(uses, 1, ("tensor?",)) == []  # fake_torch has split
    rows = cs.by_codebase(counted, uses)
    assert list(rows) == ["a", "b", "c"]
    assert rows["a"] == {"sites": 4, "sites_resolved": 3 + softplus_provided,
                         "missing": [] if softplus_provided else
                         ["torch.nn.functional.softplus"]}  # no_such_thing and split left out
    again = cs.measure(cs.tally(dict(reversed(corpus.items())), cs.real_tensor_names()),
                       cs.TestedNames({"torch.zeros"}, set(), set()))
    assert again == uses  # deterministic, whatever order the codebases come in


def test_the_command_prints_markdown_and_writes_json(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    _real_torch()
    for name in ("one", "two", "three"):
        (tmp_path / "corpus" / name).mkdir(parents=True)
        (tmp_path / "corpus" / name / "model.py").write_text(
            "import torch\nx = torch.ones(2).to(torch.float16)\ntorch.no_such_thing\n")
    (tmp_path / "corpus" / "README.txt").write_text("not a codebase: files at the top are skipped")
    out = tmp_path / "scan.json"
    assert main(["api", "--corpus", str(tmp_path / "corpus"), "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("# Corpus scan: 3 codebases, 4 names\n")
    assert "| torch.* names | 6 | 6 | 100.0% |" in text  # ones and float16; no_such_thing is out
    assert "| Tensor attributes | 3 | 3 | 100.0% |" in text
    data = json.loads(out.read_text())
    assert data["codebases"] == ["one", "three", "two"]
    assert data["summary"]["sites"] == 9 and data["summary"]["not_in_torch"] == 1
    assert [n["name"] for n in data["names"]] == [
        "Tensor.to", "torch.float16", "torch.no_such_thing", "torch.ones"]


def test_the_command_names_a_missing_corpus_folder(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["api", "--corpus", str(tmp_path / "absent")]) == 2
    assert "expected a folder of codebases" in capsys.readouterr().err


def test_a_baseline_scan_shows_figures_before_and_now_and_what_changed() -> None:
    _real_torch()
    corpus = {"a": {"m.py": "import torch\ntorch.ones(1)\ntorch.ones(2)\ntorch.zeros(1)\n"}}
    counted = cs.tally(corpus, cs.real_tensor_names())
    uses = cs.measure(counted, cs.TestedNames(set(), set(), set()))
    baseline = json.loads(cs.to_json(counted, uses))
    for entry in baseline["names"]:  # as if an earlier fake_torch had lacked torch.ones
        entry["provided"] = entry["provided"] and entry["name"] != "torch.ones"
    baseline["summary"]["torch_sites_resolved"] = 1
    baseline["summary"]["sites_resolved"] = 1
    text = cs.render_markdown(counted, uses, baseline=baseline)
    assert "| torch.* names | 1/3 (33.3%) | 3/3 (100.0%) |" in text
    assert "Now provided (1): `torch.ones`\n" in text and "No longer provided" not in text
    assert text.index("## Against the baseline") < text.index("## Missing")


def test_a_file_that_imports_torch_only_inside_one_test_is_no_oracle_file(tmp_path: Path) -> None:
    (tmp_path / "test_inner.py").write_text(textwrap.dedent("""
        import pytest
        import fake_torch as ft

        def test_x():
            pytest.importorskip("torch")
            ft.softplus
    """))
    (tmp_path / "test_top.py").write_text("import pytest\ntorch = pytest.importorskip('torch')\n"
                                          "import fake_torch as ft\nft.erf\n")
    tested = cs.tested_names(tmp_path)
    assert not tested.covers("torch.softplus") and tested.covers("torch.erf")


@pytest.mark.parametrize("stored", ["corpus_scan_before.json", "corpus_scan.json"])
def test_the_stored_scans_hold_counts_only_most_used_first(stored: str) -> None:
    import re

    data = json.loads((Path(__file__).resolve().parents[1] / "docs" / stored).read_text())
    assert len(data["codebases"]) >= 28 and data["summary"]["codebases"] == len(data["codebases"])
    names = data["names"]
    assert all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", n["name"]) for n in names)  # no code
    assert all(isinstance(n[k], int) and n[k] > 0 for n in names for k in ("sites", "codebases"))
    order = [(-n["codebases"], -n["sites"], n["name"]) for n in names]
    assert order == sorted(order)
    torch_sites = sum(n["sites"] for n in names if n["kind"] == "torch" and n["in_torch"])
    assert data["summary"]["torch_sites"] == torch_sites


def test_module_attributes_count_self_in_module_subclasses_only() -> None:
    source = textwrap.dedent("""
        import torch.nn as nn
        from torch.nn import Linear

        class Base(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("b", None)          # Module.register_buffer
                self._register_load_state_dict_pre_hook(self.fix)

            def fix(self, *args):                        # the codebase's own method
                pass

        class Block(Base):                               # a Module through Base
            def forward(self, x):
                return self.fix(x), self.apply(print), self.cuda

        class MyLinear(Linear):                          # a Module through torch's Linear
            def go(self):
                return self.parameters()

        class NotAModule:
            def go(self):
                return self.register_buffer, self.apply
    """)
    names = frozenset({"register_buffer", "_register_load_state_dict_pre_hook", "apply",
                       "parameters", "cuda", "fix"})
    modules = {"torch.nn.Module", "torch.nn.Linear"}
    own = cs.own_attribute_names([source])
    counts = cs.count_module_names(source, names, own, modules.__contains__)
    assert counts == {"Module.register_buffer": 1, "Module._register_load_state_dict_pre_hook": 1,
                      "Module.apply": 1, "Module.cuda": 1, "Module.parameters": 1}
    assert cs.resolve("Module.register_buffer", "fake_torch") is \
        fake_torch.nn.Module.register_buffer

"""Every name fake_torch exports has torch's signature (parameter names, kinds, defaults), or an
entry with its reason in fake_torch/_tools/_api_deviations.py; and `python -m fake_torch api`
reports it. Real torch (a CPU build) is the oracle; without it these skip, saying why."""

from __future__ import annotations

import re

import pytest

from fake_torch.__main__ import main
from fake_torch._tools import _api
from fake_torch._tools._api_deviations import DEVIATIONS, EXTENSION

pytest.importorskip("torch", reason="real torch (CPU build) is the oracle: pip install torch")


@pytest.fixture(scope="module")
def reports() -> list[_api.ModuleReport]:
    found = _api.compare_all()
    if not found:
        pytest.skip("`torch` is fake_torch here (install() is in effect), not real torch")
    return found


def test_every_signature_difference_is_listed(reports: list[_api.ModuleReport]) -> None:
    unlisted = [f"{r.torch_name}.{name}: {diff}" for r in reports
                for name, diff in r.differs.items() if f"{r.torch_name}.{name}" not in DEVIATIONS]
    assert not unlisted, "signatures differ from torch's:\n" + "\n".join(unlisted)


def test_every_name_torch_lacks_is_a_listed_extension(reports: list[_api.ModuleReport]) -> None:
    unlisted = [f"{r.torch_name}.{n}" for r in reports for n in r.extra
                if not DEVIATIONS.get(f"{r.torch_name}.{n}", "").startswith(EXTENSION)]
    assert not unlisted, f"exported, but torch has no such name: {unlisted}"


def test_no_stale_deviations(reports: list[_api.ModuleReport]) -> None:
    live = {f"{r.torch_name}.{n}" for r in reports for n in [*r.differs, *r.extra]}
    assert sorted(DEVIATIONS.keys() - live) == []  # fixed or renamed: drop the entry


def test_signatures_are_really_compared(reports: list[_api.ModuleReport]) -> None:
    nn = next(r for r in reports if r.torch_name == "torch.nn")
    assert "Linear" in nn.provided and "Linear" not in nn.unchecked  # a Python signature
    assert _api.signature_of(_api.signature_of) is not None
    top = next(r for r in reports if r.torch_name == "torch")
    assert "is_tensor" in top.differs and "(/obj)" in top.differs["is_tensor"]  # kinds count


def test_api_command_prints_the_report(capsys: pytest.CaptureFixture[str],
                                       reports: list[_api.ModuleReport]) -> None:
    assert main(["api"]) == 0
    out = capsys.readouterr().out
    rows = {m.group(1): (int(m.group(2)), int(m.group(3)))
            for m in re.finditer(r"^\| `([\w.]+)` \| (\d+) \| (\d+) \|", out, re.M)}
    by_name = {r.torch_name: r for r in reports}
    assert set(rows) == set(by_name) >= {"torch", "torch.nn", "torch.nn.functional", "torch.cuda"}
    for name, (provided, missing) in rows.items():
        assert (provided, missing) == (len(by_name[name].provided), len(by_name[name].missing))
    assert rows["torch"][0] > 200 and rows["torch.nn"][0] >= 20
    assert "**not listed**" not in out
    assert "`torch._dynamo.disable`" in out  # a listed difference, with its reason

"""Imports point down: every import in fake_torch, at module level or inside a function, goes to
its own layer or a lower one (the order is declared once, in fake_torch/_tools/_layers.py), and
no import circle runs across packages. The scan itself is tested on made-up module sets, so that
an upward import, a lazy one, a relative one and a circle are each shown to fail it."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from fake_torch._tools._layers import (
    LAYERS,
    PACKAGES_ABOVE_MEMBERS,
    Import,
    cycles_across_packages,
    imports_of,
    layer_of,
    modules_of,
    packages_above_members,
    upward,
)

REPO_ROOT = Path(__file__).resolve().parents[1]


@functools.cache
def _package_edges() -> list[Import]:
    return imports_of(modules_of(REPO_ROOT))

# a made-up package in three layers: low < mid < top
TOY_LAYERS = (("low", ("fake_torch._low",)), ("mid", ("fake_torch.mid",)),
              ("top", ("fake_torch", "fake_torch.tools")))


def _edges(**sources: str) -> list[Import]:
    """The imports of a made-up package given as {module name, "__" for ".": source}."""
    return imports_of({name.replace("__", "."): text for name, text in sources.items()})


def test_every_module_is_in_a_layer() -> None:
    missing = []
    for module in modules_of(REPO_ROOT):
        try:
            layer_of(module)
        except KeyError as e:
            missing.append(str(e))
    assert not missing, "\n".join(missing)


def _check_points_down(edges: list[Import]) -> None:
    """The suite's check: AssertionError listing every upward import among `edges`."""
    assert len(edges) > 1000  # the scan sees the package (a scan that finds nothing passes)
    up = upward(edges)
    names = [name for name, _ in LAYERS]
    assert not up, "imports from a lower layer to a higher one (register from above instead):\n" \
        + "\n".join(f"  {e.module}:{e.line} ({names[layer_of(e.module)]}) imports {e.target} "
                    f"({names[layer_of(e.target)]})" for e in up)


def test_no_import_points_up() -> None:
    _check_points_down(_package_edges())


def test_no_import_circle_across_packages() -> None:
    cycles = cycles_across_packages(_package_edges())
    assert not cycles, "import circles across packages:\n" + "\n".join(map(str, cycles))


def test_only_the_listed_packages_have_an_init_above_their_modules() -> None:
    """Importing a module runs its package's __init__ first, which no import statement shows:
    a package whose __init__ is in a higher layer than one of its modules must be listed, with
    its reason (torch's own layout), in PACKAGES_ABOVE_MEMBERS; a new one fails here."""
    found = packages_above_members(modules_of(REPO_ROOT))
    assert sorted(found) == sorted(PACKAGES_ABOVE_MEMBERS), found
    toy = packages_above_members(["fake_torch.mid", "fake_torch.mid._low", "fake_torch.mid.b"],
                                 (("low", ("fake_torch.mid._low",)), ("mid", ("fake_torch.mid",)),
                                  ("top", ("fake_torch",))))
    assert toy == {"fake_torch.mid": ["fake_torch.mid._low"]}


def test_the_layers_are_in_the_documented_order() -> None:
    assert [name for name, _ in LAYERS] == ["simulated machine", "tensor core", "ops", "nn",
                                           "compile", "torch namespace", "tools / CLI"]
    assert layer_of("fake_torch._simulated._dispatch") == 0
    assert layer_of("fake_torch._tensor") == 1
    assert layer_of("fake_torch._kernels.arith") == 2
    assert layer_of("fake_torch._kernels._common") == 1  # the longest prefix wins
    assert layer_of("fake_torch.nn.functional") == 3
    assert layer_of("fake_torch._dynamo.trace") == 4
    assert layer_of("fake_torch") == 5
    assert layer_of("fake_torch._tools._bench") == 6
    with pytest.raises(KeyError, match=r"fake_torch\._new_module is in no layer"):
        layer_of("fake_torch._new_module")  # the root names itself only


# --- the scan, on made-up packages -----------------------------------------------------------

def test_scan_passes_imports_that_point_down() -> None:
    edges = _edges(fake_torch="from fake_torch import mid\n",
                   fake_torch__mid="from fake_torch._low import x\nimport fake_torch._low\n",
                   fake_torch___low="x = 1\n")
    assert {(e.module, e.target) for e in edges} == {
        ("fake_torch", "fake_torch.mid"), ("fake_torch.mid", "fake_torch._low")}
    assert upward(edges, TOY_LAYERS) == []
    assert cycles_across_packages(edges) == []


def test_scan_fails_an_upward_import_at_module_level() -> None:
    edges = _edges(fake_torch___low="from fake_torch.mid import thing\n",
                   fake_torch__mid="thing = 1\n")
    assert upward(edges, TOY_LAYERS) == [
        Import("fake_torch._low", "fake_torch.mid", 1, lazy=False, typing_only=False)]


def test_scan_fails_an_upward_import_inside_a_function() -> None:
    edges = _edges(fake_torch___low="def f():\n    import fake_torch.mid\n    return 1\n",
                   fake_torch__mid="")
    assert upward(edges, TOY_LAYERS) == [
        Import("fake_torch._low", "fake_torch.mid", 2, lazy=True, typing_only=False)]


def test_scan_fails_an_import_of_the_root_package_from_below() -> None:
    """`import fake_torch` (the whole namespace, top layer) from a lower layer: upward."""
    edges = _edges(fake_torch="", fake_torch__mid="class A:\n    def f(self):\n"
                   "        from fake_torch import Tensor\n")
    assert [(e.module, e.target, e.lazy) for e in upward(edges, TOY_LAYERS)] == [
        ("fake_torch.mid", "fake_torch", True)]


def test_scan_fails_upward_relative_and_type_checking_imports() -> None:
    edges = _edges(fake_torch="", fake_torch__tools="",
                   fake_torch__mid__a="from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                   "    from fake_torch.tools import T\nelse:\n    from .. import tools\n",
                   fake_torch__mid="")
    up = upward(edges, TOY_LAYERS)
    assert [(e.target, e.line, e.typing_only) for e in up] == [
        ("fake_torch.tools", 3, True), ("fake_torch.tools", 5, False)]


def test_scan_fails_the_real_package_with_an_upward_import_added() -> None:
    """The test of the test: the package as it is, plus one lazy import the kernel door must not
    make (the simulated machine reaching the Tensor class), fails the check the suite runs."""
    sources = modules_of(REPO_ROOT)
    sources["fake_torch._simulated._dispatch"] += (
        "\n\ndef _tensor_class():\n"
        "    from fake_torch._tensor import Tensor\n\n"
        "    return Tensor\n")
    edges = imports_of(sources)
    assert [(e.module, e.target, e.lazy) for e in upward(edges)] == [
        ("fake_torch._simulated._dispatch", "fake_torch._tensor", True)]
    with pytest.raises(AssertionError, match=r"_simulated\._dispatch:\d+ \(simulated machine\) "
                       r"imports fake_torch\._tensor \(tensor core\)"):
        _check_points_down(edges)


def test_scan_finds_a_circle_across_packages_but_not_inside_one() -> None:
    inside = _edges(fake_torch__fx="from fake_torch.fx import graph\n",
                    fake_torch__fx__graph="def f():\n    from fake_torch.fx import node\n",
                    fake_torch__fx__node="from fake_torch.fx import graph\n")
    assert cycles_across_packages(inside) == []
    across = _edges(fake_torch___a="from fake_torch.fx import node\n",
                    fake_torch__fx="", fake_torch__fx__node="def f():\n"
                    "    import fake_torch._a\n")
    assert cycles_across_packages(across) == [["fake_torch._a", "fake_torch.fx.node"]]
    typing_only = _edges(fake_torch___a="from fake_torch.fx import node\n",
                         fake_torch__fx="", fake_torch__fx__node="import typing\n"
                         "if typing.TYPE_CHECKING:\n    import fake_torch._a\n")
    assert cycles_across_packages(typing_only) == []  # never runs: no circle

"""torch._functorch._aot_autograd.autograd_cache is loaded with torch._inductor.compile_fx, as
torch loads it (vLLM reaches autograd_cache_key as an attribute to patch it); fake_torch has no
AOTAutograd, so calling the key function refuses by name."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

import fake_torch as ft

_PROBE = ("import {m}._inductor.compile_fx, sys; "
          "print('{m}._functorch._aot_autograd.autograd_cache' in sys.modules)")


@pytest.mark.parametrize("module", ["fake_torch", "torch"])
def test_compile_fx_loads_the_autograd_cache(module: str) -> None:
    if module == "torch":
        pytest.importorskip("torch")
    done = subprocess.run([sys.executable, "-c", _PROBE.format(m=module)],
                          capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "True"


def test_autograd_cache_key_signature_and_refusal() -> None:
    torch = pytest.importorskip("torch")
    from torch._functorch._aot_autograd import autograd_cache as theirs

    from fake_torch._functorch._aot_autograd import autograd_cache as ours

    assert list(inspect.signature(ours.autograd_cache_key).parameters) == \
        list(inspect.signature(theirs.autograd_cache_key).parameters)
    with pytest.raises(NotImplementedError, match="autograd_cache_key"):
        ours.autograd_cache_key(ft.fx.GraphModule(ft.nn.Module(), ft.fx.Graph()), [], None)
    del torch

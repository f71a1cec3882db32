"""ml_dtypes (bfloat16, the float8s) is imported at the first use of one of its dtypes, not by
`import fake_torch`: its extension takes ~0.85 s to initialise (ml_dtypes 0.7). Each check
runs in a fresh interpreter, where nothing has imported it yet."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_import_and_float32_work_leave_ml_dtypes_unimported() -> None:
    out = _run("""
        import sys
        import fake_torch as torch
        x = torch.randn(4, 4, device="cuda") @ torch.ones(4, 4, device="cuda")
        y = (x.cpu() + 1).to(torch.float16).sum().item()
        print("ml_dtypes" in sys.modules, type(torch.bfloat16) is torch.dtype,
              torch.bfloat16.itemsize, torch.float8_e4m3fn.itemsize)
    """)
    assert out.split() == ["False", "True", "2", "1"]


def test_the_first_bfloat16_use_loads_it_and_computes_as_torch() -> None:
    out = _run("""
        import sys
        import fake_torch as torch
        x = torch.tensor([1.0, 2.5, 3.0078125], dtype=torch.bfloat16)  # 3.0078125 rounds
        print("ml_dtypes" in sys.modules, x.tolist(), x.dtype, torch.finfo(torch.bfloat16).eps,
              torch.finfo(torch.float8_e4m3fn).max)
    """)
    assert out.split() == ["True", "[1.0,", "2.5,", "3.0]", "torch.bfloat16", "0.0078125",
                           "448.0"]


def test_a_callers_own_ml_dtypes_array_is_recognised_before_any_use() -> None:
    out = _run("""
        import ml_dtypes
        import numpy as np
        import fake_torch as torch
        t = torch.from_numpy(np.array([1.5, -2.0], dtype=ml_dtypes.bfloat16))
        print(t.dtype, t.float().tolist())
    """)
    assert out.split() == ["torch.bfloat16", "[1.5,", "-2.0]"]

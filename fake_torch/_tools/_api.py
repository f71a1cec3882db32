"""fake_torch measured against torch: which names each module provides, and whose signature
differs. `python -m fake_torch api` prints it, the missing names most used first (by real runner
code: fake_torch/_tools/_api_usage.py); tests/test_api_conformance.py enforces it against the one
table of deliberate differences, fake_torch/_tools/_api_deviations.py."""

from __future__ import annotations

import importlib
import inspect
import warnings
from dataclasses import dataclass, field
from types import ModuleType

from fake_torch._tools._api_usage import usage

# torch module -> fake_torch module; torch.profiler joins when fake_torch has one
MODULES = {
    "torch": "fake_torch",
    "torch.nn": "fake_torch.nn",
    "torch.nn.functional": "fake_torch.nn.functional",
    "torch.nn.init": "fake_torch.nn.init",
    "torch.optim": "fake_torch.optim",
    "torch.optim.lr_scheduler": "fake_torch.optim.lr_scheduler",
    "torch.linalg": "fake_torch.linalg",
    "torch.cuda": "fake_torch.cuda",
    "torch.amp": "fake_torch.amp",
    "torch.cuda.amp": "fake_torch.cuda.amp",
    "torch.cuda.memory": "fake_torch.cuda.memory",
    "torch.accelerator": "fake_torch.accelerator",
    "torch.compiler": "fake_torch.compiler",
    "torch._dynamo": "fake_torch._dynamo",
    "torch.fx": "fake_torch.fx",
    "torch.jit": "fake_torch.jit",
    "torch.profiler": "fake_torch.profiler",
    "torch.testing": "fake_torch.testing",
    "torch.overrides": "fake_torch.overrides",
    "torch.types": "fake_torch.types",
    "torch.version": "fake_torch.version",
    "torch.backends.cuda": "fake_torch.backends.cuda",
    "torch.backends.cudnn": "fake_torch.backends.cudnn",
    "torch.multiprocessing": "fake_torch.multiprocessing",
    "torch.multiprocessing.reductions": "fake_torch.multiprocessing.reductions",
    "torch.nn.parameter": "fake_torch.nn.parameter",
    "torch.serialization": "fake_torch.serialization",
    "torch.storage": "fake_torch.storage",
    "torch.utils._python_dispatch": "fake_torch.utils._python_dispatch",
    "torch.distributed": "fake_torch.distributed",
    "torch.distributions": "fake_torch.distributions",
    "torch.distributions.constraints": "fake_torch.distributions.constraints",
    "torch.distributed.constants": "fake_torch.distributed.constants",
    "torch.distributed.rendezvous": "fake_torch.distributed.rendezvous",
    "torch.distributed.device_mesh": "fake_torch.distributed.device_mesh",
    "torch.distributed.tensor": "fake_torch.distributed.tensor",
    "torch.distributed.tensor.placement_types": "fake_torch.distributed.tensor.placement_types",
    "torch.distributed.fsdp": "fake_torch.distributed.fsdp",
    "torch.distributed.checkpoint.hf_storage": "fake_torch.distributed.checkpoint.hf_storage",
    "torch.utils._pytree": "fake_torch.utils._pytree",
    "torch.utils.checkpoint": "fake_torch.utils.checkpoint",
    "torch.func": "fake_torch.func",
    "torch.autograd": "fake_torch.autograd",
    "torch.autograd.graph": "fake_torch.autograd.graph",
    "torch.cuda.nvtx": "fake_torch.cuda.nvtx",
    "torch.xpu": "fake_torch.xpu",
    "torch.nn.attention.flex_attention": "fake_torch.nn.attention.flex_attention",
}


def public_names(module: ModuleType) -> list[str]:
    """`__all__`, or else every name without a leading underscore that is not a module or an
    import from outside the package (`Callable` in torch.nn.functional)."""
    names = getattr(module, "__all__", None)
    if names is None:
        root = module.__name__.split(".")[0]
        names = [n for n, v in vars(module).items() if not inspect.ismodule(v)
                 and getattr(v, "__module__", root).split(".")[0] == root]
    return sorted({n for n in names if not n.startswith("_")})


def _default(value: object) -> object:
    # torch's defaults that are torch objects (dtypes, layouts) compare by their printed form
    # (a class by its module path, fake_torch's read as torch's: fake_torch mirrors its tree)
    if value is None or value is inspect.Parameter.empty:
        return value
    if isinstance(value, tuple):
        return tuple(_default(v) for v in value)
    if isinstance(value, type):
        module = value.__module__
        return f"{'torch' + module[10:] if module.startswith('fake_torch') else module}." \
               f"{value.__qualname__}"
    if isinstance(value, bool | int | float | str):
        return value
    return repr(value)


def signature_of(obj: object) -> tuple[tuple[str, str, object], ...] | None:
    """(name, kind, default) per parameter, or None when Python cannot read a signature."""
    if not callable(obj):
        return None
    try:
        sig = inspect.signature(obj)
    except (ValueError, TypeError):
        return None
    return tuple((p.name, p.kind.name, _default(p.default)) for p in sig.parameters.values())


_KIND_MARK = {"POSITIONAL_ONLY": "/", "POSITIONAL_OR_KEYWORD": "", "KEYWORD_ONLY": "*",
              "VAR_POSITIONAL": "*", "VAR_KEYWORD": "**"}


def _format(sig: tuple[tuple[str, str, object], ...]) -> str:
    """`(/obj, *, *out=None)`: "/" marks positional-only, a leading "*" keyword-only."""
    return "(" + ", ".join(
        _KIND_MARK[kind] + name + ("" if default is inspect.Parameter.empty else f"={default}")
        for name, kind, default in sig) + ")"


@dataclass
class ModuleReport:
    """One torch module: the names fake_torch shares with it, lacks, adds, and differs on."""

    torch_name: str
    provided: list[str] = field(default_factory=list)  # torch names fake_torch also has
    missing: list[str] = field(default_factory=list)  # torch names it lacks, most used first
    extra: list[str] = field(default_factory=list)  # fake_torch names torch lacks
    differs: dict[str, str] = field(default_factory=dict)  # name -> "fake (...) torch (...)"
    unchecked: list[str] = field(default_factory=list)  # provided, no readable signature


def compare_module(torch_name: str, fake_name: str) -> ModuleReport | None:
    """Compare one module pair; None when either side is absent."""
    try:
        real = importlib.import_module(torch_name)
        fake = importlib.import_module(fake_name)
    except ImportError:
        return None
    if real.__name__.startswith("fake_torch"):  # fake_torch.install() made it torch
        return None
    report = ModuleReport(torch_name)
    fake_names = public_names(fake)
    lacking = [n for n in public_names(real) if not hasattr(fake, n)]
    report.missing = sorted(lacking, key=lambda n: (-usage(torch_name, n), n))
    for name in fake_names:
        if not hasattr(real, name):
            report.extra.append(name)
            continue
        report.provided.append(name)
        ours, theirs = getattr(fake, name), getattr(real, name)
        if inspect.ismodule(ours):
            continue
        sig_ours, sig_theirs = signature_of(ours), signature_of(theirs)
        if sig_ours is None or sig_theirs is None:
            if callable(ours):
                report.unchecked.append(name)
            continue
        if sig_ours != sig_theirs:
            report.differs[name] = f"fake_torch {_format(sig_ours)}; torch {_format(sig_theirs)}"
    return report


def compare_all() -> list[ModuleReport]:
    """Every module pair that both sides have."""
    with warnings.catch_warnings():  # torch's deprecated names warn when looked at
        warnings.simplefilter("ignore", FutureWarning)
        return [r for t, f in MODULES.items() if (r := compare_module(t, f)) is not None]


NO_TORCH = ("fake_torch api: needs real torch to measure fake_torch against, and none is "
            "importable here: pip install 'torch==2.13.*' (a CPU build is enough), then run it "
            "again")


def render_report(reports: list[ModuleReport], deviations: dict[str, str]) -> str:
    """The coverage report as Markdown: one row per torch module (its most used missing names
    first), then every signature difference (marked "listed" when it is a deliberate
    deviation)."""
    rows = ["| torch module | provided | missing | extensions | signatures checked | differ |"
            " most used missing names |",
            "|---|---:|---:|---:|---:|---:|---|"]
    for r in reports:
        checked = len(r.provided) - len(r.unchecked)
        shown = [f"{n} ({usage(r.torch_name, n)})" if usage(r.torch_name, n) else n
                 for n in r.missing[:5]]
        rows.append(f"| `{r.torch_name}` | {len(r.provided)} | {len(r.missing)} | "
                    f"{len(r.extra)} | {checked} | {len(r.differs)} | "
                    f"{', '.join(shown)}{', ...' if len(r.missing) > 5 else ''} |")
    total = sum(len(r.provided) for r in reports), sum(len(r.missing) for r in reports)
    rows.append(f"\n{total[0]} torch names provided, {total[1]} missing. Missing names come most "
                "used first: (n) is how often nano-vllm, vLLM's compilation files and PyTorch's "
                "CUDA-graph tests use one (fake_torch/_tools/_api_usage.py); unused ones follow, "
                "alphabetically. Signatures are compared where Python can read both (torch's C "
                "builtins have none).\n")
    rows.append("| name | signature difference | deviation table |")
    rows.append("|---|---|---|")
    for r in reports:
        for name, diff in r.differs.items():
            qual = f"{r.torch_name}.{name}"
            rows.append(f"| `{qual}` | {diff} | {deviations.get(qual, '**not listed**')} |")
    return "\n".join(rows) + "\n"

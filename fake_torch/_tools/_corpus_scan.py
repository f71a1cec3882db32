"""Which torch names a corpus of real inference code uses, and whether fake_torch has them:
`python -m fake_torch api --corpus DIR`. Each immediate subfolder of DIR is one codebase (its
`.py` files, at any depth); docs/corpus.md lists the corpus this project measures itself on.

Three kinds of use are counted, once per reference ("call site"):

  torch names   a dotted path reached through an import of torch (`torch.nn.functional.silu`,
                `F.silu` after `import torch.nn.functional as F`, `nn.Linear` after
                `from torch import nn`): `count_torch_names`, fake_torch/_tools/_api_usage.py.
  Tensor names  an attribute access `x.foo` whose receiver is not itself a torch path, counted
                as `Tensor.foo` when (1) `foo` is a public attribute of real `torch.Tensor`;
                (2) the receiver is not the bare name `self` or `cls` (an object's own state:
                `self.norm(x)` is a submodule) nor a name an import binds (`np.mean`, `math.sqrt`);
                (3) the codebase does not itself define `foo` on its own objects (`self.foo = ...`,
                a class-body `foo = ...` / `foo: T` / `def foo`, `register_buffer("foo", ...)`,
                an argparse option `add_argument("--foo")`):
                there `args.dim` or `self.attn.norm` is likely its own attribute, so `foo` is left
                uncounted in that codebase. Names that are also attributes of a Python builtin
                type, a path, an enum member or a dataclass field (`split`, `sort`, `values`,
                `real`, `name`, ...) are counted as kind "tensor?" (ambiguous) and kept out of
                the coverage figure and the missing list (they are listed apart).
                The rule undercounts (a Tensor's `.norm()` in a codebase with a `self.norm`) more
                than it overcounts (an ndarray's `.reshape`, a module's `.to`, `finfo(t).max`).
  Module names  `self.foo` inside a class that subclasses torch.nn.Module (a torch path that is
                a Module subclass in real torch, or a Module class of the same file), counted as
                `Module.foo` when `foo` is an attribute of real torch.nn.Module's class (its
                methods, private ones included: `self.register_buffer`,
                `self._register_load_state_dict_pre_hook`) and the codebase does not define `foo`
                itself (rule (3) above). Classes whose Module base lives in another file
                (transformers' PreTrainedModel) are not seen: this kind undercounts most.

For every name: call sites, codebases, whether real torch has it (`in_torch`), whether fake_torch
provides it (the path resolved against fake_torch: each part by getattr, importing submodules on
the way; `Tensor.foo` and `Module.foo` as attributes of fake_torch.Tensor and
fake_torch.nn.Module), whether fake_torch refuses it
(`refused`: the function, or a class's `__init__`/`__new__`, starts by raising
NotImplementedError or calling a `refuse`/`unsupported` helper, or the attribute look-up itself
raises NotImplementedError), and whether it is tested against real torch (`tested`: a test file
under tests/ that compares with real torch, i.e. whose top-level code imports `oracles` or torch
or calls pytest.importorskip("torch"), references the path through fake_torch or torch; for a
Tensor name an attribute access `.foo` there also counts, and for a Tensor name or a name
directly in torch or torch.nn.functional the string "foo", as op lists are parametrized by name).

Only counts leave this module: names and numbers, never the code they were read from.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import functools
import importlib
import inspect
import json
import pathlib
import textwrap
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from types import ModuleType

from fake_torch._tools._api_usage import _dotted, count_torch_names

# attributes of the other types a model's code handles: builtins, paths, enum members and
# dataclass fields (`path.name`, `mode.value`, `field.name`)
_AMBIGUOUS = frozenset().union(*(dir(t) for t in (
    str, bytes, list, tuple, dict, set, frozenset, int, float, complex, bool, object,
    pathlib.PurePath, enum.Enum, dataclasses.Field)))
_MISSING = object()


@dataclass(frozen=True)
class NameUse:
    """One name the corpus uses: `torch.nn.functional.silu` (kind "torch"), `Tensor.view`
    ("tensor"), `Tensor.split` ("tensor?": a builtin type has the attribute too),
    `Module.register_buffer` ("module")."""

    name: str
    kind: str
    sites: int
    codebases: int
    in_torch: bool
    provided: bool
    refused: bool
    tested: bool


# ---- counting ------------------------------------------------------------------------------

def own_attribute_names(sources: Iterable[str]) -> set[str]:
    """Names a codebase defines on its own objects: `self.foo = ...`, a class body's
    `foo = ...`, `foo: T` or `def foo`, `register_buffer("foo", ...)`, an argparse option
    `add_argument("--foo", ...)` (or its `dest=`)."""
    own: set[str] = set()
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) \
                    and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                own.add(node.attr)
            elif isinstance(node, ast.ClassDef):
                for item in node.body:
                    own.update(_class_body_names(item))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in ("register_buffer", "register_parameter") \
                    and node.args and isinstance(node.args[0], ast.Constant) \
                    and isinstance(node.args[0].value, str):
                own.add(node.args[0].value)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "add_argument":
                own.update(_argparse_dest(node))
    return own


def _argparse_dest(call: ast.Call) -> list[str]:
    for keyword in call.keywords:
        if keyword.arg == "dest" and isinstance(keyword.value, ast.Constant):
            return [str(keyword.value.value)]
    flags = [a.value for a in call.args if isinstance(a, ast.Constant)
             and isinstance(a.value, str)]
    long = [f for f in flags if f.startswith("--")] or flags
    return [long[0].lstrip("-").replace("-", "_")] if long else []


def _class_body_names(item: ast.stmt) -> list[str]:
    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
        return [item.name]
    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
        return [item.target.id]
    if isinstance(item, ast.Assign):
        return [t.id for t in item.targets if isinstance(t, ast.Name)]
    return []


def count_module_names(source: str, module_names: frozenset[str], own: set[str],
                       is_module: Callable[[str], bool]) -> Counter[str]:
    """`Module.foo` per `self.foo` in the methods of an nn.Module subclass (module docstring);
    `is_module(path)` says whether a torch path names an nn.Module subclass."""
    tree = ast.parse(source)
    _, torch_aliases = _imports(tree)
    classes = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    modules: set[str] = set()
    grew = True
    while grew:  # a Module class of this file makes its subclasses Modules too
        grew = False
        for cls in classes:
            if cls.name not in modules and any(
                    (isinstance(b, ast.Name) and b.id in modules)
                    or ((path := _dotted(b, torch_aliases)) is not None and is_module(path))
                    for b in cls.bases):
                modules.add(cls.name)
                grew = True
    counts: Counter[str] = Counter()
    for cls in classes:
        if cls.name not in modules:
            continue
        for item in cls.body:
            if not isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(item):
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                        and node.value.id == "self" and node.attr in module_names \
                        and node.attr not in own:
                    counts[f"Module.{node.attr}"] += 1
    return counts


def _imports(tree: ast.Module) -> tuple[set[str], dict[str, str]]:
    """The names imports bind (torch's or not), and the torch aliases among them."""
    imported: set[str] = set()
    torch_aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                imported.add(alias.asname or alias.name.split(".")[0])
                if alias.name == "torch" or alias.name.startswith("torch."):
                    torch_aliases[alias.asname or "torch"] = alias.name if alias.asname \
                        else "torch"
        elif isinstance(node, ast.ImportFrom):
            imported.update(alias.asname or alias.name for alias in node.names)
            if node.level == 0 and node.module is not None \
                    and (node.module == "torch" or node.module.startswith("torch.")):
                for alias in node.names:
                    torch_aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return imported, torch_aliases


def count_tensor_names(source: str, tensor_names: frozenset[str],
                       own: set[str]) -> Counter[str]:
    """`Tensor.foo` per attribute access the module docstring's rule counts as a Tensor's."""
    tree = ast.parse(source)
    imported, torch_aliases = _imports(tree)
    counts: Counter[str] = Counter()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or node.attr not in tensor_names \
                or node.attr in own:
            continue
        receiver = node.value
        if isinstance(receiver, ast.Name) and (receiver.id in ("self", "cls")
                                               or receiver.id in imported):
            continue
        if _dotted(receiver, torch_aliases) is not None:  # torch.Tensor.foo: a torch name
            continue
        counts[f"Tensor.{node.attr}"] += 1
    return counts


@dataclass
class Tally:
    """What a corpus uses: per name, its call sites and the codebases that use it."""

    codebases: list[str]
    sites: Counter[str]
    users: dict[str, set[str]]
    unparsed: list[str]  # "codebase/path" of files Python could not parse
    by_codebase: dict[str, Counter[str]] = dataclasses.field(default_factory=dict)


def tally(corpus: Mapping[str, Mapping[str, str]], tensor_names: frozenset[str],
          module_names: frozenset[str] = frozenset(),
          is_module: Callable[[str], bool] = lambda path: False) -> Tally:
    """Count a corpus given as {codebase: {relative path: source}}: `tensor_names` and
    `module_names` are real torch.Tensor's and torch.nn.Module's attributes, `is_module` says
    whether a torch path is an nn.Module subclass."""
    result = Tally(sorted(corpus), Counter(), {}, [])
    for codebase in result.codebases:
        files = corpus[codebase]
        parsed: dict[str, str] = {}
        for path in sorted(files):
            try:
                ast.parse(files[path])
            except SyntaxError:
                result.unparsed.append(f"{codebase}/{path}")
                continue
            parsed[path] = files[path]
        own = own_attribute_names(parsed.values())
        for source in parsed.values():
            for counts in (count_torch_names(source),
                           count_tensor_names(source, tensor_names, own),
                           count_module_names(source, module_names, own, is_module)):
                result.sites.update(counts)
                result.by_codebase.setdefault(codebase, Counter()).update(counts)
                for name in counts:
                    result.users.setdefault(name, set()).add(codebase)
    return result


def read_corpus(root: Path) -> dict[str, dict[str, str]]:
    """{codebase: {relative path: source}}: each immediate subfolder of `root` is a codebase."""
    if not root.is_dir():
        raise FileNotFoundError(f"fake_torch api --corpus: expected a folder of codebases, "
                                f"got {str(root)!r}")
    return {folder.name: {p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8",
                                                                        errors="replace")
                          for p in sorted(folder.rglob("*.py"))}
            for folder in sorted(root.iterdir()) if folder.is_dir()}


# ---- resolving -----------------------------------------------------------------------------

def resolve(path: str, root: str) -> object:
    """The object `path` (`torch.nn.functional.silu`, `Tensor.view`, `Module.to`) names under the
    package
    `root` ("torch" or "fake_torch"): each part by getattr, else as a submodule; _MISSING when
    absent. A look-up that raises NotImplementedError returns that exception (refused)."""
    parts = path.split(".")
    if parts[0] == "Tensor":
        parts = ["torch", *parts]
    elif parts[0] == "Module":
        parts = ["torch", "nn", *parts]
    obj: object = importlib.import_module(root)
    for part in parts[1:]:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                obj = getattr(obj, part)
            continue
        except NotImplementedError as exc:
            return exc
        except Exception:  # AttributeError, or a lazy attribute failing: try a submodule
            pass
        if not isinstance(obj, ModuleType):
            return _MISSING
        try:
            obj = importlib.import_module(f"{obj.__name__}.{part}")
        except Exception:  # absent, or a submodule whose import fails
            return _MISSING
    return obj


_REFUSERS = ("refuse", "unsupported", "not_implemented")


def refuses(obj: object) -> bool:
    """Whether fake_torch's `obj` refuses to run: its first statement (after a docstring)
    raises NotImplementedError or calls a refuse/unsupported helper; a class by its own
    `__init__` or `__new__`."""
    if isinstance(obj, NotImplementedError):
        return True
    if inspect.isclass(obj):
        return any(refuses(vars(obj)[m]) for m in ("__init__", "__new__") if m in vars(obj))
    if isinstance(obj, staticmethod | classmethod):
        obj = obj.__func__
    fn = inspect.unwrap(obj) if callable(obj) else obj
    if not inspect.isfunction(fn) or not fn.__module__.startswith("fake_torch"):
        return False
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return False
    body = next((n.body for n in ast.walk(tree)
                 if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)), [])
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    if not body:
        return False
    first = body[0]
    call = first.exc if isinstance(first, ast.Raise) else \
        first.value if isinstance(first, ast.Expr) else None
    target = call.func if isinstance(call, ast.Call) else call
    name = target.id if isinstance(target, ast.Name) else \
        target.attr if isinstance(target, ast.Attribute) else ""
    return (name == "NotImplementedError" and isinstance(first, ast.Raise)) \
        or any(word in name.lower() for word in _REFUSERS)


# ---- tested against real torch -------------------------------------------------------------

@dataclass
class TestedNames:
    """What the oracle test files (those that import `oracles` or torch) reach."""

    paths: set[str]  # torch paths, through fake_torch or torch
    attrs: set[str]  # attribute names accessed (`x.cumsum`)
    strings: set[str]  # identifier-like string constants (`"cumsum"` in an op list)

    def covers(self, name: str) -> bool:
        if name.startswith("Tensor."):
            short = name[len("Tensor."):]
            return short in self.attrs or short in self.strings or f"torch.{name}" in self.paths
        if name.startswith("Module."):  # `self.foo` of a Module: an attribute an oracle test uses
            return name[len("Module."):] in self.attrs
        if name in self.paths or any(p.startswith(name + ".") for p in self.paths):
            return True
        module, _, last = name.rpartition(".")
        return module in ("torch", "torch.nn.functional") and last in self.strings


def tested_names(tests: Path) -> TestedNames:
    """Read the oracle test files under `tests` (each `test_*.py`, at any depth)."""
    found = TestedNames(set(), set(), set())
    for path in sorted(tests.rglob("test_*.py")):
        source = path.read_text(encoding="utf-8")
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        if not _compares_with_torch(tree):
            continue
        found.paths.update(count_torch_names(source))
        found.paths.update("torch" + p[len("fake_torch"):]
                           for p in count_torch_names(source, root="fake_torch"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                found.attrs.add(node.attr)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and node.value.isidentifier():
                found.strings.add(node.value)
    return found


def _compares_with_torch(tree: ast.Module) -> bool:
    """Whether the module's own top-level code imports torch or `oracles`, or calls
    `pytest.importorskip("torch")` (a function that does so, for one test, does not count)."""
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for node in ast.walk(stmt):
            if isinstance(node, ast.Import) and any(a.name in ("torch", "oracles")
                                                    for a in node.names):
                return True
            if isinstance(node, ast.ImportFrom) and node.module in ("oracles", "torch"):
                return True
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "importorskip" and node.args \
                    and isinstance(node.args[0], ast.Constant) and node.args[0].value == "torch":
                return True
    return False


# ---- the report ----------------------------------------------------------------------------

def real_tensor_names() -> frozenset[str]:
    """Public attributes of real torch.Tensor (ImportError without real torch)."""
    torch = importlib.import_module("torch")
    if "fake_torch" in torch.__name__ or "fake_torch" in str(getattr(torch, "__file__", "")):
        raise ImportError("`torch` is fake_torch here, not real torch")
    return frozenset(n for n in dir(torch.Tensor) if not n.startswith("_"))


def real_module_names() -> frozenset[str]:
    """The attributes of real torch.nn.Module's class, private ones too (not dunders)."""
    module = importlib.import_module("torch.nn").Module
    return frozenset(n for n in dir(module) if not n.startswith("__"))


def is_real_module(path: str) -> bool:
    """Whether the torch path names a subclass of real torch.nn.Module."""
    obj = resolve(path, "torch")
    return inspect.isclass(obj) and issubclass(obj, importlib.import_module("torch.nn").Module)


def measure(counted: Tally, tested: TestedNames) -> list[NameUse]:
    """Every counted name, resolved; most used first (codebases, then call sites, then name)."""
    uses = []
    for name, sites in counted.sites.items():
        ours = resolve(name, "fake_torch")
        uses.append(NameUse(
            name=name,
            kind="tensor?" if name.startswith("Tensor.") and name[7:] in _AMBIGUOUS
            else "tensor" if name.startswith("Tensor.")
            else "module" if name.startswith("Module.") else "torch",
            sites=sites, codebases=len(counted.users[name]),
            in_torch=resolve(name, "torch") is not _MISSING,
            provided=ours is not _MISSING, refused=ours is not _MISSING and refuses(ours),
            tested=tested.covers(name)))
    return sorted(uses, key=lambda u: (-u.codebases, -u.sites, u.name))


def coverage(uses: list[NameUse], kinds: tuple[str, ...]) -> tuple[int, int]:
    """(call sites fake_torch resolves, call sites) over names of `kinds` real torch has."""
    counted = [u for u in uses if u.kind in kinds and u.in_torch]
    return sum(u.sites for u in counted if u.provided), sum(u.sites for u in counted)


_ROWS = (("torch.* names", "torch_sites"), ("Tensor attributes", "tensor_sites"),
         ("nn.Module attributes (self.*)", "module_sites"), ("all", "sites"))


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "n/a"


def summary(counted: Tally, uses: list[NameUse], min_codebases: int = 3) -> dict[str, object]:
    """The headline figures, as numbers (the JSON's "summary")."""
    torch_ok, torch_all = coverage(uses, ("torch",))
    tensor_ok, tensor_all = coverage(uses, ("tensor",))
    module_ok, module_all = coverage(uses, ("module",))
    gaps = missing(uses, min_codebases)
    return {"codebases": len(counted.codebases), "names": len(uses),
            "torch_sites": torch_all, "torch_sites_resolved": torch_ok,
            "tensor_sites": tensor_all, "tensor_sites_resolved": tensor_ok,
            "module_sites": module_all, "module_sites_resolved": module_ok,
            "sites": torch_all + tensor_all + module_all,
            "sites_resolved": torch_ok + tensor_ok + module_ok,
            f"missing_used_by_{min_codebases}": len(gaps),
            "refused": sum(u.refused for u in uses),
            "not_in_torch": sum(not u.in_torch for u in uses),
            "unparsed_files": counted.unparsed}


def missing(uses: list[NameUse], min_codebases: int = 3,
            kinds: tuple[str, ...] = ("torch", "tensor", "module")) -> list[NameUse]:
    """Names of `kinds` real torch has and fake_torch lacks, used by at least `min_codebases`
    codebases, most used first."""
    return [u for u in uses if u.kind in kinds and u.in_torch and not u.provided
            and u.codebases >= min_codebases]


def _flags(u: NameUse) -> str:
    return " ".join(f for f, on in (("provided", u.provided), ("REFUSED", u.refused),
                                     ("tested", u.tested), ("not-in-torch", not u.in_torch))
                    if on) or "MISSING"


def render_markdown(counted: Tally, uses: list[NameUse], min_codebases: int = 3,
                    baseline: Mapping[str, object] | None = None) -> str:
    """The scan as Markdown: headline coverage (against `baseline`, an earlier scan's JSON, when
    given), the gaps most used first, then every name."""
    s = summary(counted, uses, min_codebases)
    lines = [f"# Corpus scan: {s['codebases']} codebases, {s['names']} names", "",
             "| call sites of | resolved in fake_torch | all | coverage |",
             "|---|---:|---:|---:|"]
    for label, key in _ROWS:
        ok, total = s[f"{key}_resolved"], s[key]
        assert isinstance(ok, int) and isinstance(total, int)
        lines.append(f"| {label} | {ok} | {total} | {_percent(ok, total)} |")
    gaps = missing(uses, min_codebases)
    lines += ["", "Counted over names real torch has; ambiguous Tensor names (kind `tensor?`) "
              "are left out. See fake_torch/_tools/_corpus_scan.py for the counting rules.", ""]
    if baseline is not None:
        lines += [render_comparison(baseline, counted, uses)]
    lines += [
              f"## Missing: used by >= {min_codebases} codebases ({len(gaps)})",
              "", "| name | call sites | codebases |", "|---|---:|---:|"]
    lines += [f"| `{u.name}` | {u.sites} | {u.codebases} |" for u in gaps]
    unsure = missing(uses, min_codebases, ("tensor?",))
    lines += ["", f"Ambiguous Tensor names missing, used by >= {min_codebases} codebases (often "
              "another type's attribute): " + (", ".join(
                  f"`{u.name}` ({u.sites}/{u.codebases})" for u in unsure) or "none")]
    refused = [u for u in uses if u.refused]
    lines += ["", f"## Refused: provided, raising NotImplementedError ({len(refused)})", "",
              "| name | call sites | codebases |", "|---|---:|---:|"]
    lines += [f"| `{u.name}` | {u.sites} | {u.codebases} |" for u in refused]
    lines += ["", "## By codebase", "", "| codebase | call sites | resolved | missing names |",
              "|---|---:|---:|---|"]
    for codebase, row in by_codebase(counted, uses).items():
        sites, ok, lacking = row["sites"], row["sites_resolved"], row["missing"]
        assert isinstance(sites, int) and isinstance(ok, int) and isinstance(lacking, list)
        lines.append(f"| {codebase} | {sites} | {_percent(ok, sites)} | "
                     + (", ".join(f"`{n}`" for n in lacking) or "none") + " |")
    lines += ["", "## Every name", "", "| name | kind | call sites | codebases | status |",
              "|---|---|---:|---:|---|"]
    lines += [f"| `{u.name}` | {u.kind} | {u.sites} | {u.codebases} | {_flags(u)} |"
              for u in uses]
    if counted.unparsed:
        lines += ["", "Files Python could not parse (not counted): "
                  + ", ".join(counted.unparsed)]
    return "\n".join(lines) + "\n"


def by_codebase(counted: Tally, uses: list[NameUse]) -> dict[str, dict[str, object]]:
    """Per codebase: its call sites (of names real torch has, ambiguous ones left out), how
    many resolve in fake_torch, and the names it uses that fake_torch lacks, most used first."""
    known = {u.name: u for u in uses}
    out: dict[str, dict[str, object]] = {}
    for codebase in counted.codebases:
        counts = counted.by_codebase.get(codebase, Counter())
        counted_names = [n for n in counts if known[n].in_torch and known[n].kind != "tensor?"]
        lacking = sorted((n for n in counted_names if not known[n].provided),
                         key=lambda n: (-counts[n], n))
        out[codebase] = {"sites": sum(counts[n] for n in counted_names),
                         "sites_resolved": sum(counts[n] for n in counted_names
                                               if known[n].provided),
                         "missing": lacking}
    return out


def to_json(counted: Tally, uses: list[NameUse], min_codebases: int = 3) -> str:
    """The scan as JSON: the codebases, the summary, per codebase what it lacks, and every
    name's counts and flags."""
    return json.dumps({"codebases": counted.codebases,
                       "summary": summary(counted, uses, min_codebases),
                       "by_codebase": by_codebase(counted, uses),
                       "names": [asdict(u) for u in uses]}, indent=1) + "\n"


def render_comparison(baseline: Mapping[str, object], counted: Tally,
                      uses: list[NameUse]) -> str:
    """Markdown: the headline figures now against a scan saved earlier with `to_json`, and the
    names whose status changed (newly provided, newly missing, newly refused or tested)."""
    before_summary = baseline["summary"]
    before_names = baseline["names"]
    assert isinstance(before_summary, dict) and isinstance(before_names, list)
    now = summary(counted, uses)
    lines = ["## Against the baseline", "", "| call sites of | before | now |", "|---|---:|---:|"]
    for label, key in _ROWS:
        if key not in before_summary:  # a kind the earlier scan did not count
            continue
        then_ok, then_all = before_summary[f"{key}_resolved"], before_summary[key]
        now_ok, now_all = now[f"{key}_resolved"], now[key]
        assert isinstance(now_ok, int) and isinstance(now_all, int)
        lines.append(f"| {label} | {then_ok}/{then_all} ({_percent(then_ok, then_all)}) | "
                     f"{now_ok}/{now_all} ({_percent(now_ok, now_all)}) |")
    key = "missing_used_by_3"
    lines.append(f"| names used by >= 3 codebases missing | {before_summary.get(key)} | "
                 f"{now.get(key)} |")
    before = {n["name"]: n for n in before_names}
    for flag, label in (("provided", "provided"), ("refused", "refused"), ("tested", "tested")):
        gained = [u.name for u in uses if getattr(u, flag) and u.name in before
                  and not before[u.name][flag]]
        lost = [u.name for u in uses if not getattr(u, flag) and u.name in before
                and before[u.name][flag]]
        lines.append("")
        lines.append(f"Now {label} ({len(gained)}): "
                     + (", ".join(f"`{n}`" for n in gained) or "none"))
        if lost:
            lines.append(f"No longer {label} ({len(lost)}): "
                         + ", ".join(f"`{n}`" for n in lost))
    return "\n".join(lines) + "\n"


def scan(corpus: Path, tests: Path | None) -> tuple[Tally, list[NameUse]]:
    """Read, count and resolve a corpus folder (ImportError without real torch)."""
    counted = tally(read_corpus(corpus), real_tensor_names(), real_module_names(),
                    functools.lru_cache(maxsize=None)(is_real_module))
    tested = tested_names(tests) if tests is not None and tests.is_dir() \
        else TestedNames(set(), set(), set())
    return counted, measure(counted, tested)

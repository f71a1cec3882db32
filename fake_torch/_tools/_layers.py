"""The layers of fake_torch, lowest first, and the scan that holds the package to them.

Imports point down: a module may import from its own layer and the layers below it, never from
a layer above, at module level or inside a function (`if TYPE_CHECKING:` imports included: a
reader follows them too). What a lower layer needs from above is registered into it by the layer
above at import (as _generator.py gives the simulated machine its generator factory).
tests/test_layers.py runs the scan; `python -m fake_torch._tools._layers [ROOT]` prints it for a
source tree (its upward imports and its import cycles across packages).

A module's layer is that of the longest prefix (whole dotted components) that LAYERS names; the
root package `fake_torch` names itself only. A module no prefix names is an error: a new module
is placed in a layer when it is written.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

ROOT_PACKAGE = "fake_torch"

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # the simulated GPU and host memory: allocators, clock, cost model, counter, the kernel door
    ("simulated machine", ("fake_torch._simulated",)),
    # what a tensor is: dtypes, devices, streams, storage, the Tensor class, generators, SymInts,
    # the API door (__torch_function__) and the op-definition machinery the Tensor class reads
    ("tensor core", (
        "fake_torch._dtype", "fake_torch._layout", "fake_torch._memory_format", "fake_torch._meta",
        "fake_torch._tensor_base", "fake_torch._torch_function", "fake_torch._torch_device",
        "fake_torch._torch_stream", "fake_torch._grad_mode", "fake_torch._tensor",
        "fake_torch._storage", "fake_torch._generator", "fake_torch._sym", "fake_torch._checks",
        "fake_torch._opdef", "fake_torch._kernels._common", "fake_torch._threads",
        "fake_torch._tags", "fake_torch._config_module", "fake_torch._logging",
        "fake_torch._missing_names", "fake_torch._torch_names", "fake_torch.version",
        "fake_torch.torch_version", "fake_torch.backends", "fake_torch.overrides",
        "fake_torch.types", "fake_torch.utils._device", "fake_torch.utils._python_dispatch",
        "fake_torch.utils._sympy", "fake_torch.fx.experimental.sym_node",
        "fake_torch.fx.experimental.symbolic_shapes", "fake_torch.fx.experimental._config",
        "fake_torch._namespace",
    )),
    # the ops: kernels, factories, output rules, and the device modules that launch them
    ("ops", (
        "fake_torch._kernels", "fake_torch._factories", "fake_torch._meta_registrations",
        "fake_torch._meta_calls", "fake_torch._tensor_new", "fake_torch._windows",
        "fake_torch._repr", "fake_torch._ops", "fake_torch._buffers", "fake_torch._utils",
        "fake_torch._default_tensor_type", "fake_torch._legacy_types", "fake_torch._C",
        "fake_torch._build", "fake_torch._device_module", "fake_torch.linalg",
        "fake_torch.return_types", "fake_torch.storage", "fake_torch.testing",
        "fake_torch.amp", "fake_torch.cuda", "fake_torch.cpu", "fake_torch.xpu",
        "fake_torch.accelerator", "fake_torch.profiler", "fake_torch.autograd",
        "fake_torch.distributions", "fake_torch._serialization_zip",
        "fake_torch._serialization_options", "fake_torch.utils._pytree",
    )),
    # modules, functional, optimizers, and what saves, loads and shares them
    ("nn", (
        "fake_torch.nn", "fake_torch.optim", "fake_torch.func", "fake_torch.utils",
        "fake_torch._serialization_legacy", "fake_torch._serialization_location",
        "fake_torch._serialization_names", "fake_torch._serialization_pickle",
        "fake_torch._weights_only_unpickler", "fake_torch.serialization",
        "fake_torch.distributed",
    )),
    # torch.compile: tracing (dynamo, fx), custom ops, the inductor stand-in, cudagraph trees
    ("compile", (
        "fake_torch._compile", "fake_torch._dynamo", "fake_torch._inductor", "fake_torch.fx",
        "fake_torch._functorch", "fake_torch._higher_order_ops", "fake_torch._library",
        "fake_torch.library", "fake_torch._opaque_base", "fake_torch._subclasses",
        "fake_torch._guards", "fake_torch._prims_common", "fake_torch.compiler",
        "fake_torch.jit",
    )),
    # `import torch`: the root package gathers every layer's names, as torch/__init__.py does
    # and what makes `import torch` mean it, in this process and in the ones it spawns
    ("torch namespace", ("fake_torch", "fake_torch._install", "fake_torch.multiprocessing")),
    ("tools / CLI", ("fake_torch._tools", "fake_torch.__main__")),
)


# Packages whose __init__ sits in a higher layer than some of their modules. Importing such a
# module runs its package's __init__ first (Python's rule): a step up that no import statement
# shows, so the scan below does not see it. Each is torch's own layout, kept so that `import
# torch.X.Y` runs what torch runs; the test holds the list to exactly these.
PACKAGES_ABOVE_MEMBERS: dict[str, str] = {
    "fake_torch._kernels": "its __init__ imports every op module (which registers the ops); "
                           "_common.py, the ops' way to the door, is tensor core",
    "fake_torch.fx": "torch.fx's __init__ imports the graph classes; experimental/sym_node.py "
                     "and symbolic_shapes.py (SymInt's nodes, the ShapeEnv) are tensor core",
    "fake_torch.fx.experimental": "its __init__ imports _aten_overloads (make_fx's); sym_node.py, "
                                  "symbolic_shapes.py and _config.py are tensor core",
    "fake_torch.utils": "torch.utils' __init__ imports data; _device.py, _python_dispatch.py and "
                        "_sympy/ are tensor core, _pytree.py ops",
}


@dataclass(frozen=True)
class Import:
    """One import statement's edge: `module` (at `line`) imports `target` (a module of the
    package: the deepest one the statement names)."""

    module: str
    target: str
    line: int
    lazy: bool  # inside a function (runs when it is called), not at import
    typing_only: bool  # under `if TYPE_CHECKING:` (never runs; mypy and readers follow it)


def layer_of(module: str, layers: Iterable[tuple[str, tuple[str, ...]]] = LAYERS) -> int:
    """The index in LAYERS of `module`'s layer; KeyError when no prefix names it."""
    best, best_len = -1, -1
    for i, (_, prefixes) in enumerate(layers):
        for p in prefixes:
            matches = module == p if p == ROOT_PACKAGE else (
                module == p or module.startswith(p + "."))
            if matches and len(p) > best_len:
                best, best_len = i, len(p)
    if best < 0:
        raise KeyError(f"{module} is in no layer: add it (or a package above it) to LAYERS in "
                       f"fake_torch/_tools/_layers.py")
    return best


def modules_of(root: Path, package: str = ROOT_PACKAGE) -> dict[str, str]:
    """{dotted module name: its source} for every .py file of `package` under `root`."""
    found = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path.read_text(encoding="utf-8")
    return found


def imports_of(sources: Mapping[str, str], package: str = ROOT_PACKAGE) -> list[Import]:
    """Every import of a module of `package` by one of `sources` ({module name: source}, a
    package's `__init__` named as the package): module level and inside functions."""

    def deepest(name: str) -> str:
        while name not in sources and "." in name:
            name = name.rpartition(".")[0]
        return name

    edges: list[Import] = []
    for module, text in sources.items():
        is_package = any(m.startswith(module + ".") for m in sources)
        tree = ast.parse(text, filename=module)
        todo: list[tuple[ast.AST, bool, bool]] = [(node, False, False) for node in tree.body]
        while todo:
            node, lazy, typing_only = todo.pop()
            if isinstance(node, ast.If) and ast.unparse(node.test) in _TYPE_CHECKING:
                todo += [(n, lazy, True) for n in node.body]
                todo += [(n, lazy, typing_only) for n in node.orelse]
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from the module's package, up level - 1
                    here = module.split(".") if is_package else module.split(".")[:-1]
                    here = here[:len(here) - (node.level - 1)]
                    base = ".".join(here + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in sources else base
                           for a in node.names]
            for t in targets:
                if t == package or t.startswith(package + "."):
                    target = deepest(t)
                    if target != module:
                        line = getattr(node, "lineno", 0)
                        edges.append(Import(module, target, line, lazy, typing_only))
            inner = lazy or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            todo += [(child, inner, typing_only) for child in ast.iter_child_nodes(node)]
    return sorted(set(edges), key=lambda e: (e.module, e.line, e.target))


_TYPE_CHECKING = ("TYPE_CHECKING", "typing.TYPE_CHECKING")


def packages_above_members(modules: Iterable[str],
                           layers: Iterable[tuple[str, tuple[str, ...]]] = LAYERS
                           ) -> dict[str, list[str]]:
    """{package: its modules in a lower layer than its __init__} (the root package aside: it is
    the top of every import)."""
    layers = tuple(layers)
    modules = set(modules)
    found: dict[str, list[str]] = {}
    for m in sorted(modules):
        parts = m.split(".")
        for i in range(2, len(parts)):
            package = ".".join(parts[:i])
            if package in modules and layer_of(package, layers) > layer_of(m, layers):
                found.setdefault(package, []).append(m)
    return found


def upward(edges: Iterable[Import],
           layers: Iterable[tuple[str, tuple[str, ...]]] = LAYERS) -> list[Import]:
    """The imports from a lower layer to a higher one."""
    layers = tuple(layers)
    return [e for e in edges if layer_of(e.module, layers) < layer_of(e.target, layers)]


def cycles_across_packages(edges: Iterable[Import]) -> list[list[str]]:
    """The import graph's strongly connected components (module-level and lazy imports alike;
    not the `if TYPE_CHECKING:` ones, which never run) that hold modules of more than one
    package (fake_torch's own modules, fake_torch._kernels, fake_torch.fx, ...: a subpackage
    counts as part of the package directly under fake_torch), each sorted: circles a reader
    cannot cut along package lines."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        graph.setdefault(e.module, set())
        graph.setdefault(e.target, set())
        if not e.typing_only:
            graph[e.module].add(e.target)
        graph.setdefault(e.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:  # Tarjan's algorithm, iterative (the graph is deep)
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len({_package(m, graph) for m in component}) > 1:
                        found.append(sorted(component))
    return sorted(found, key=len, reverse=True)


def _package(module: str, graph: Mapping[str, object]) -> str:
    """The package directly under the root that a module belongs to (`fake_torch.fx` for
    fake_torch.fx.passes.split_module); the root's own modules belong to the root."""
    parts = module.split(".")
    if len(parts) > 2 or (len(parts) == 2 and any(m.startswith(module + ".") for m in graph)):
        return ".".join(parts[:2])
    return parts[0]


def report(root: Path) -> str:
    """The upward imports and the cycles across packages of the source tree at `root`."""
    edges = imports_of(modules_of(root))
    up = upward(edges)
    cycles = cycles_across_packages(edges)
    names = [name for name, _ in LAYERS]
    above = packages_above_members(modules_of(root))
    lines = [f"{len(edges)} imports; {len(up)} upward; "
             f"{len(cycles)} cycles across packages {[len(c) for c in cycles]}; "
             f"{len(above)} packages whose __init__ is above some of their modules "
             f"{sorted(above)}"]
    for e in up:
        lines.append(f"  {e.module}:{e.line} ({names[layer_of(e.module)]}) imports {e.target} "
                     f"({names[layer_of(e.target)]}){' inside a function' if e.lazy else ''}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parents[2])))

"""The import graph follows the pipeline: no cycle, and no module imports a stage above its own.

LAYERS lists the packages from the ground up (docs/architecture.md draws them); a module may import
its own package and any layer below.  Packages that share a layer are independent of each other.
Every import counts, also those inside functions and under `if TYPE_CHECKING:`.  Platform code that
the registry names by "module:attribute" strings is loaded at run time and drew no import.  The napalm
driver packages use fabricgen only through `fabricgen.napalm_kit`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import ROOT

LAYERS: tuple[tuple[str, ...], ...] = (
    ("fabricgen.errors",),
    ("fabricgen.base",),
    ("fabricgen.catalog",),
    ("fabricgen.intent",),
    ("fabricgen.plan",),
    ("fabricgen.platforms",),
    ("fabricgen.render", "fabricgen.napalm_kit"),
    ("fabricgen.check", "fabricgen.analyze", "fabricgen.lab"),
    ("fabricgen.connect",),
    ("fabricgen.validate",),
    ("fabricgen.deploy", "fabricgen.sot"),
    ("fabricgen.api",),
    ("fabricgen",),  # the package's face: the library functions of api, `__version__`
    ("fabricgen.cli",),
)
DRIVERS = ("napalm_frr", "napalm_sonic", "napalm_nxos_fabricgen", "napalm_eos_fabricgen")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for top in ("fabricgen", *DRIVERS) for p in sorted((ROOT / top).rglob("*.py"))}


def imports(path: Path, known: set[str]) -> Iterator[tuple[str, int]]:
    """(module imported, line) for every fabricgen / driver import in a file, resolved to a module we have."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            base = node.module
            for alias in node.names:
                full = f"{base}.{alias.name}"
                yield (full if full in known else base), node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno


def layer_of(module: str) -> tuple[int, str]:
    """(rank, the package of LAYERS it belongs to): the longest matching prefix wins."""
    best: tuple[int, str] | None = None
    for rank, packages in enumerate(LAYERS):
        for package in packages:
            if (module == package or module.startswith(package + ".")) and (best is None or len(package) > len(
                    best[1])):
                best = (rank, package)
    assert best is not None, f"{module} is in no layer (fix: add its package to LAYERS and docs/architecture.md)"
    return best


def graph() -> dict[str, list[tuple[str, int]]]:
    mods = modules()
    known = set(mods)
    return {name: [(m, line) for m, line in imports(path, known) if m in known and m != name]
            for name, path in mods.items()}


def test_no_import_runs_against_the_layer_order() -> None:
    wrong = []
    for name, deps in graph().items():
        if name.split(".")[0] in DRIVERS:
            continue
        rank, package = layer_of(name)
        for dep, line in deps:
            if dep.split(".")[0] in DRIVERS:
                wrong.append(f"{name}:{line} imports the driver package {dep}")
                continue
            dep_rank, dep_package = layer_of(dep)
            if dep_rank > rank or (dep_rank == rank and dep_package != package):
                wrong.append(f"{name}:{line} ({package}) imports {dep} ({dep_package}), not below it")
    assert not wrong, "\n".join(wrong)


def test_the_drivers_use_fabricgen_only_through_napalm_kit() -> None:
    wrong = [f"{name}:{line} imports {dep}" for name, deps in graph().items() if name.split(".")[0] in DRIVERS
             for dep, line in deps if dep.startswith("fabricgen") and dep != "fabricgen.napalm_kit"]
    assert not wrong, "\n".join(wrong)


def test_no_import_cycle() -> None:
    g = {name: sorted({d for d, _ in deps}) for name, deps in graph().items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in g.get(v, []):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(g):
        if v not in index:
            visit(v)
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_the_layer_test_sees_a_wrong_import(tmp_path: Path) -> None:
    """The checks above are not blind: an upward import and a cycle are found in a made-up graph."""
    assert layer_of("fabricgen.plan.model")[0] < layer_of("fabricgen.platforms.nxos.render")[0]
    assert layer_of("fabricgen.napalm_kit")[0] > layer_of("fabricgen.platforms.health")[0]
    bad = tmp_path / "m.py"
    bad.write_text("from fabricgen.deploy.run import run_deploy\n", encoding="utf-8")
    ((dep, _),) = list(imports(bad, {"fabricgen.deploy.run"}))
    assert layer_of(dep)[0] > layer_of("fabricgen.plan.build")[0]

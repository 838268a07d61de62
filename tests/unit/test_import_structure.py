"""The packages' imports form no cycle.

Every import statement counts, at module level or inside a function: a lazy import that
closes a cycle still ties the two modules together. The accelerator kinds register themselves
in a registry that imports none of them (``simulator.accel.registry``,
``simulator.config.accelerators``); the module that imports them all (``simulator.accel.kinds``,
``simulator.config.accel_specs``) stands above both.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("simulator", "models", "workloads")


def module_files() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the packages (a package is its __init__)."""
    out = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def imported_modules(name: str, path: Path, known: set[str]) -> set[str]:
    """The project modules that module ``name`` (at ``path``) imports; ``from a import b`` names
    a.b when that is a module, and relative imports are resolved against the module's package."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                found.add(sub if sub in known else module)
    return found & known


def import_graph() -> nx.DiGraph:
    files = module_files()
    graph = nx.DiGraph()
    graph.add_nodes_from(files)
    for name, path in files.items():
        graph.add_edges_from((name, other) for other in imported_modules(name, path, set(files)) if other != name)
    return graph


def test_relative_imports_resolve_against_the_package(tmp_path):
    module = tmp_path / "mod.py"
    module.write_text("from . import sibling\nfrom ..memory import dram\nfrom .sibling import x\n")
    known = {"simulator.accel.sibling", "simulator.memory.dram"}
    assert imported_modules("simulator.accel.mod", module, known) == known
    init = tmp_path / "__init__.py"
    init.write_text("from . import sibling\n")
    assert imported_modules("simulator.accel", init, known) == {"simulator.accel.sibling"}


def test_the_graph_sees_the_imports():
    graph = import_graph()
    assert graph.has_edge("simulator.memory.dram", "simulator.memory.power")
    assert graph.has_edge("simulator.studies.reproduce", "simulator.studies.fmm.placement")  # an import inside a function
    assert graph.has_edge("simulator.accel.kinds", "simulator.accel.lap")  # ``from package import module``


def test_no_import_cycles():
    cycles = [sorted(c) for c in nx.strongly_connected_components(import_graph()) if len(c) > 1]
    assert not cycles, f"import cycles: {cycles}"


def test_a_registration_import_in_the_registry_is_seen_as_a_cycle(tmp_path):
    """The check can fail: a registry that imports its kinds at its end, as the registration pattern
    would write it, closes a cycle through every kind module."""
    registry = tmp_path / "registry.py"
    registry.write_text("def register_builder(kind): ...\n\n\nfrom simulator.accel import kinds  # noqa: E402\n")
    graph = import_graph()
    graph.add_edges_from(("simulator.accel.registry", other)
                         for other in imported_modules("simulator.accel.registry", registry, set(graph)))
    cycles = [c for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert cycles and {"simulator.accel.registry", "simulator.accel.kinds", "simulator.accel.lap"} <= cycles[0]


@pytest.mark.parametrize("registry, kinds, kind", [
    ("simulator.accel.registry", "simulator.accel.kinds", "simulator.accel.lap"),
    ("simulator.config.accelerators", "simulator.config.accel_specs", "simulator.config.accel_lap"),
])
def test_the_registries_import_no_kind(registry, kinds, kind):
    graph = import_graph()
    assert graph.has_edge(kinds, kind) and graph.has_edge(kind, registry)  # the kinds register in it
    assert not nx.has_path(graph, registry, kinds)


def _floor(module: str) -> str:
    """The floor of the layering a module stands on: engine, studies or the command line."""
    if module == "simulator.cli" or module.startswith("simulator.cli."):
        return "command line"
    if module.startswith("simulator.studies"):
        return "studies"
    if module.startswith("simulator"):
        return "engine"
    return module.split(".")[0]  # models, workloads


#: the engine's modules below its configuration package, which the models and generators may import too
CONFIGURATION_FLOOR = ("simulator.units", "simulator.errors", "simulator.kernel_cache")

# who may import whom: the engine below, the studies above it, the command line on top; the models
# and the workload generators stand beside the engine and see only its configuration floor
ALLOWED = {
    "engine": {"engine", "workloads"},
    "studies": {"engine", "studies", "models", "workloads"},
    "command line": {"engine", "studies", "models", "workloads", "command line"},
    "models": {"models", "config"},
    "workloads": {"workloads", "models", "config"},
}


def test_the_engine_never_imports_a_study_a_model_or_the_command_line():
    """Checked over every module the packages hold, so a new kind, generator or study needs no edit here."""
    wrong = []
    for a, b in import_graph().edges:
        floor_a, floor_b = _floor(a), _floor(b)
        if floor_b == "engine" and (b.startswith("simulator.config") or b in CONFIGURATION_FLOOR):
            floor_b = "config" if floor_a in ("models", "workloads") else "engine"
        if floor_b not in ALLOWED[floor_a]:
            wrong.append(f"{a} -> {b}")
    assert not wrong, "imports against the layering: " + "; ".join(sorted(wrong))


def test_the_layering_check_sees_a_wrong_import(tmp_path):
    module = tmp_path / "bad.py"
    module.write_text("from simulator.studies import sweep\n")
    known = {"simulator.studies.sweep"}
    edges = [("simulator.memory.bad", b) for b in imported_modules("simulator.memory.bad", module, known)]
    assert [(a, b) for a, b in edges if _floor(b) not in ALLOWED[_floor(a)]] == edges != []

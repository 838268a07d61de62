"""The packages' imports form no cycle, apart from the two registration packages.

Every import statement counts, at module level or inside a function: a lazy import that
closes a cycle still ties the two modules together. The accelerator builders and the
accelerator spec kinds register themselves through a module that imports them all, which is
a cycle by design; a cycle is allowed only inside one of those (``REGISTRATION_PACKAGES``), so
adding a kind needs no edit here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("simulator", "models", "workloads")
#: (the registry module, the prefix every module of its cycle shares)
REGISTRATION_PACKAGES = (("simulator.accel.registry", "simulator.accel."),
                         ("simulator.config.accelerators", "simulator.config.accel"))


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


def _registration_cycle(cycle: set[str]) -> bool:
    return any(registry in cycle and all(m.startswith(prefix) for m in cycle)
               for registry, prefix in REGISTRATION_PACKAGES)


def test_no_import_cycles_but_the_registrations():
    cycles = [set(c) for c in nx.strongly_connected_components(import_graph()) if len(c) > 1]
    unexpected = [sorted(c) for c in cycles if not _registration_cycle(c)]
    assert not unexpected, f"import cycles: {unexpected}"
    assert len(cycles) == len(REGISTRATION_PACKAGES)


def test_a_cycle_outside_the_registrations_is_refused():
    assert _registration_cycle({"simulator.accel.registry", "simulator.accel.kinds", "simulator.accel.lap"})
    assert not _registration_cycle({"simulator.accel.registry", "simulator.system"})
    assert not _registration_cycle({"simulator.config.accel_lap", "simulator.config.accel_specs"})


def _floor(module: str) -> str:
    """The floor of the layering a module stands on: engine, studies or the command line."""
    if module == "simulator.cli" or module.startswith("simulator.cli."):
        return "command line"
    if module.startswith("simulator.studies"):
        return "studies"
    if module.startswith("simulator"):
        return "engine"
    return module.split(".")[0]  # models, workloads


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
        if floor_b == "engine" and b.startswith("simulator.config"):
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

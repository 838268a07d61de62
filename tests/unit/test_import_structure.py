"""The packages' imports form no cycle, apart from the two registration packages.

Every import statement counts, at module level or inside a function: a lazy import that
closes a cycle still ties the two modules together. The accelerator builders and the
accelerator spec kinds register themselves through a module that imports them all, which is
a cycle by design; any other cycle, or one of those growing, fails here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("simulator", "models", "workloads")
REGISTRATION_CYCLES = (
    {"simulator.accel.registry", "simulator.accel.kinds", "simulator.accel.lap", "simulator.accel.crypto",
     "simulator.accel.stencil", "simulator.accel.kernel", "simulator.accel.systolic"},
    {"simulator.config.accelerators", "simulator.config.accel_specs", "simulator.config.accel_lap",
     "simulator.config.accel_crypto", "simulator.config.accel_stencil", "simulator.config.accel_kernel",
     "simulator.config.accel_systolic"},
)


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
    assert graph.has_edge("simulator.reproduce", "simulator.fmm_study")  # an import inside a function
    assert graph.has_edge("simulator.accel.kinds", "simulator.accel.lap")  # ``from package import module``


def test_no_import_cycles_but_the_registrations():
    cycles = [set(c) for c in nx.strongly_connected_components(import_graph()) if len(c) > 1]
    unexpected = [sorted(c) for c in cycles if c not in REGISTRATION_CYCLES]
    assert not unexpected, f"import cycles: {unexpected}"
    assert len(cycles) == len(REGISTRATION_CYCLES)

"""The benchmark scripts of ``tests/bench``, listed and run from the command line: ``offsim bench``.

Each script ``bench_<name>.py`` measures one speed or memory target and prints its figures and
ratios against a reference measured in the same run (simulator/README.md, "Benchmarks"). They are scripts, not
tests: timings depend on the machine, so nothing here passes or fails on a figure. ``offsim bench``
lists them with the first line of each docstring, or runs the named ones one after another, each
in a fresh Python process from the project root, its output streamed as it comes.

The scripts ship with the source tree, not with an installed wheel: the command needs offsim
installed from a checkout (``pip install -e .``).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from simulator.errors import InputError
from simulator.config.loader import PROJECT_ROOT

BENCH_DIR = PROJECT_ROOT / "tests" / "bench"
PREFIX = "bench_"


def available(bench_dir: Path = BENCH_DIR) -> dict[str, str]:
    """Benchmark name -> the first line of its script's docstring, sorted by name; read without
    importing the scripts. InputError when the directory is missing (an installed wheel)."""
    if not bench_dir.is_dir():
        raise InputError(f"bench: no benchmark scripts here ({bench_dir.relative_to(bench_dir.parents[1])} is "
                         "missing); expected offsim installed from a source checkout (pip install -e .), whose "
                         "tests/bench holds them")
    out = {}
    for path in sorted(bench_dir.glob(f"{PREFIX}*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text(), filename=path.name)) or ""
        out[path.stem.removeprefix(PREFIX)] = doc.strip().splitlines()[0] if doc.strip() else ""
    return out


def listing(bench_dir: Path = BENCH_DIR) -> list[str]:
    """One line per benchmark: its name and what it measures."""
    benches = available(bench_dir)
    width = max(map(len, benches), default=0)
    return [f"{name:<{width}}  {what}" for name, what in benches.items()]


def run(names: Sequence[str], bench_dir: Path = BENCH_DIR) -> int:
    """Run the benchmarks ``names`` in order, each in a fresh process from the project root; return 0, or
    the exit code of the first that failed (the rest still run). Unknown names are refused before any run."""
    benches = available(bench_dir)
    unknown = [n for n in names if n not in benches]
    if unknown:
        raise InputError(f"bench: {', '.join(repr(n) for n in unknown)}: no such benchmark; expected one of: "
                         f"{', '.join(benches)}")
    code = 0
    for name in names:
        print(f"=== {name}: {benches[name]}", flush=True)
        done = subprocess.run([sys.executable, str(bench_dir / f"{PREFIX}{name}.py")], cwd=bench_dir.parents[1],
                              check=False)
        if done.returncode:
            code = code or done.returncode
            print(f"=== {name}: exit code {done.returncode}", flush=True)
    return code

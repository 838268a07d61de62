"""The light commands start without the heavy packages: ``offsim --help``, ``offsim keys`` and
``offsim validate`` of a system config import neither the engine's compiled kernels nor the
table and figure libraries (a check of the set of modules imported, each command in a fresh
process, not a timing)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("matplotlib", "pandas", "dask", "distributed", "numba", "pyarrow", "networkx", "simpy")

_PROBE = """
import contextlib, io, json, sys
from simulator.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        code = main(sys.argv[1:])
    except SystemExit as exc:
        code = exc.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def imported_by(*argv: str) -> tuple[int, set[str]]:
    """Exit code and top-level packages imported by ``offsim ARGV`` in a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", _PROBE, *argv], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    found = json.loads(out.splitlines()[-1])
    return found["code"], {name.split(".")[0] for name in found["modules"]}


@pytest.mark.parametrize("argv", [("--help",), ("keys", "dram.timing"),
                                  ("validate", "configs/systems/i7_920_ddr3.yaml")])
def test_light_commands_import_nothing_heavy(argv):
    code, packages = imported_by(*argv)
    assert code == 0
    assert not packages & set(HEAVY), f"offsim {' '.join(argv)} imported {sorted(packages & set(HEAVY))}"


def test_the_probe_sees_a_heavy_import():
    """The check can fail: a run's engine brings the compiled kernels."""
    code, packages = imported_by("validate", "configs/systems/i7_920_ddr3.yaml", "configs/workloads/stream_read.yaml")
    assert code == 0
    assert {"numba", "pyarrow"} <= packages

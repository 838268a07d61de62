"""Extension without forking: a package installed beside offsim adds an accelerator kind and a workload
generator through entry points alone (tests/plugins/offsim_example), and offsim lists and runs them.

The package is built from a copy of its source and installed into a temporary folder (no offsim file
and no installed environment changes); offsim runs in subprocesses with that folder on PYTHONPATH.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "plugins" / "offsim_example"

SYSTEM = """\
name: i7-920 + filter
host: {preset: cpu/i7_920}
caches: {preset: caches/i7_920}
dram: {preset: dram/ddr3_1600_mt41j256m4}
accelerators:
  filter: {kind: filter, frequency_hz: 1 GHz, cycles_per_byte: 0.5,
           interface: {coupling: dram, bandwidth_bytes_per_s: 10 GB/s}}
"""
WORKLOAD = "name: filter-64k\ngenerator: filter_stream\nparams: {buffer_bytes: 64 KiB}\n"


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The folder the example package is installed into."""
    work = tmp_path_factory.mktemp("plugin")
    source = shutil.copytree(EXAMPLE, work / "src")
    target = work / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--no-index", "--target", str(target), str(source)], check=True, capture_output=True)
    return target


def offsim(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run([sys.executable, "-m", "simulator.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_an_installed_package_adds_a_kind_and_a_generator_that_list_and_run(installed, tmp_path):
    keys = offsim(installed, tmp_path, "keys", "accelerators")
    assert keys.returncode == 0, keys.stderr
    assert "accelerators.<name>.cycles_per_byte" in keys.stdout and "filter" in keys.stdout
    commands = offsim(installed, tmp_path, "commands", "filter")
    assert commands.returncode == 0 and "the regions to filter" in commands.stdout, commands.stderr
    gens = offsim(installed, tmp_path, "generators", "filter_stream")
    assert gens.returncode == 0, gens.stderr
    assert "filter_stream:" in gens.stdout and "buffer_bytes" in gens.stdout
    (tmp_path / "sys.yaml").write_text(SYSTEM)
    (tmp_path / "w.yaml").write_text(WORKLOAD)
    run = offsim(installed, tmp_path, "run", "sys.yaml", "w.yaml", "--out", "out")
    assert run.returncode == 0, run.stderr
    import pandas as pd

    table = pd.read_parquet(tmp_path / "out" / "results.parquet")
    counters = table[table.component == "accel/filter"].set_index("quantity")["value"]
    assert counters["bytes_read"] == counters["bytes_written"] == 64 * 1024
    assert counters["compute_cycles"] == 0.5 * 64 * 1024
    assert counters["commands"] == 1


def test_without_the_package_the_kind_is_unknown(tmp_path):
    """The kind comes from the package alone: offsim itself does not know it."""
    (tmp_path / "sys.yaml").write_text(SYSTEM)
    result = subprocess.run([sys.executable, "-m", "simulator.cli", "validate", "sys.yaml"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and "filter" in result.stderr and "Traceback" not in result.stderr


def test_kinds_cannot_load_before_the_shipped_kinds_register():
    """A package's kinds load after the shipped ones (so it cannot take their names): asked before
    ``accel_specs`` is imported, ``load_kinds`` refuses; after it, every shipped kind is there."""
    root = Path(__file__).resolve().parents[2]

    def python(code: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300)

    early = python("from simulator.config.accelerators import AcceleratorSpec; AcceleratorSpec.load_kinds()")
    assert early.returncode == 1 and "RuntimeError" in early.stderr and "accel_specs" in early.stderr
    late = python("import simulator.config.schema; from simulator.config.accelerators import AcceleratorSpec; "
                  "print(sorted(AcceleratorSpec.load_kinds()))")
    assert late.returncode == 0, late.stderr
    assert all(kind in late.stdout for kind in ("'crypto'", "'kernel'", "'lap'", "'stencil'", "'systolic'"))

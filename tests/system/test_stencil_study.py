"""The stencil and roofline study files are refused at load, before the runner writes anything, when the
runner could not run them: empty or repeated lists, grids and tiles of the wrong dimension, tiles larger
than the fast memory that holds them, a system file that is not a system or has no stencil engine."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from simulator.cli import main
from simulator.studies.stencil.study import load_study
from tests.conftest import ROOT

STUDIES = ROOT / "configs" / "studies"


def variant(tmp_path: Path, kind: str, changes: dict[str, Any]) -> Path:
    """A copy of the shipped ``configs/studies/<kind>.yaml`` with top-level keys replaced."""
    raw = yaml.safe_load((STUDIES / f"{kind}.yaml").read_text())
    raw.update(changes)
    path = tmp_path / f"{kind}.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


def refused(tmp_path: Path, capsys: pytest.CaptureFixture, path: Path) -> list[str]:
    """The error lines of ``offsim validate`` and of ``offsim study`` on ``path``, after checking that both exit 2
    and that the study leaves no output directory."""
    assert main(["validate", str(path)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    out = tmp_path / "out"
    assert main(["study", str(path), "--out", str(out)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == lines  # the same lines, under offsim's own name
    assert not out.exists()
    return lines


BAD = {
    "no intensity": ("roofline", {"intensities": []}, "intensities: []; expected a non-empty list"),
    "an intensity twice": ("roofline", {"intensities": [1.0, 2.0, 1.0]},
                           "intensities[2]: 1.0 repeats intensities[0]; expected each value once"),
    "a workload as the system": ("roofline", {"system": "configs/workloads/stream_read.yaml"},
                                 "system: 'configs/workloads/stream_read.yaml' has no 'host' section, so it is not a "
                                 "system config; expected a system file"),
    "no engine tile": ("stencil_tiling", {"engine_tiles": []}, "engine_tiles: []; expected a non-empty list"),
    "an engine tile twice": ("stencil_tiling", {"engine_tiles": [{"t_t": 4, "t_s": [8, 32]}] * 2},
                             "engine_tiles[1]: {'t_t': 4, 't_s': [8, 32]} repeats engine_tiles[0]; expected each "
                             "value once"),
    "a 3-D grid for a 2-D stencil": ("stencil_tiling", {"grid": [64, 64, 64]},
                                     "grid: [64, 64, 64]; expected 2 sizes, one per dimension of the 2-D stencil "
                                     "'jacobi_2d'"),
    "an engine tile beyond the scratchpad": ("stencil_tiling", {"engine_tiles": [{"t_t": 4, "t_s": [4096, 4096]}]},
                                             "engine_tiles[0]: t_t 4, t_s [4096, 4096] needs 33636402 words per tile; "
                                             "expected at most the 12288 words of the engine's scratchpad"),
    "an odd hexagonal tile height": ("stencil_tiling", {"engine_tiles": [{"t_t": 3, "t_s": [8, 32]}]},
                                     "engine_tiles[0]: t_t must be even for hexagonal tiles"),
    "a host tile of another dimension": ("stencil_tiling", {"host_tile": {"kind": "hex_1d", "t_t": 8, "t_s": [32]}},
                                         "host_tile.kind: 'hex_1d' tiles 1-D grids; expected a kind for the 2-D "
                                         "stencil 'jacobi_2d'"),
    "a host tile beyond the LLC": ("stencil_tiling", {"host_tile": {"kind": "hhc_2d", "t_t": 8, "t_s": [4096, 4096]}},
                                   "host_tile: a tile of t_t 8, t_s [4096, 4096] needs 33702050 words; expected at "
                                   "most the 1048576 8 B words of the host's LLC"),
    # tiles run whole, as the stencil generator refuses them: deeper than the steps or wider than the grid
    "a host tile deeper than the steps": (
        "stencil_tiling", {"host_tile": {"kind": "hhc_2d", "t_t": 16, "t_s": [8, 32]}},
        "host_tile: t_t must be at most steps = 8"),
    "a host tile wider than the grid": (
        "stencil_tiling", {"host_tile": {"kind": "hhc_2d", "t_t": 8, "t_s": [8, 2048]}},
        "host_tile: t_s must be at most the grid [1024, 1024] along each dimension"),
    "a roofline point beyond a trace": ("roofline", {"total_bytes": "1 TiB"},
                                        "total_bytes: expected a value <= 125000 MiB, got 1 TiB"),
    "a roofline Q of part of an element": ("roofline", {"total_bytes": "12 B"},
                                           "total_bytes: 12 B; expected whole 8 B elements"),
    "a roofline Q of less than an element per core": ("roofline", {"total_bytes": "16 B"},
                                                      "total_bytes: 16 B; expected at least one 8 B element per core "
                                                      "(4 cores)"),
    "a roofline Q beyond the DRAM": ("roofline", {"total_bytes": "100 GiB"},
                                     "total_bytes: the host's accesses reach 100 GiB of memory; expected at most the "
                                     "6 GiB of the system's DRAM (configs/systems/i7_950_choi.yaml: dram.geometry)"),
    "a system whose memory's energy is not known": (
        "roofline", {"system": "configs/systems/lap_hbm2e_stack.yaml"},
        "system: the roofline's energy costs are measured on the system, and its memory near_memories.hbm (hbm2e) "
        "declares no currents, so its energy is not known"),
    "host arrays beyond the DRAM": ("stencil_tiling", {"grid": [64, 50000000], "steps": 8},
                                    "grid: the host's accesses reach 49.17 GiB of memory; expected at most the 4 GiB "
                                    "of the system's DRAM (configs/systems/i7_920_ddr3.yaml: dram.geometry)"),
    "more host steps than a trace holds": ("stencil_tiling", {"steps": 10**9},
                                           "grid and steps: the naive sweep: steps must be at most 488 (a trace holds "
                                           "at most 2,000,000 rows"),
    "a host grid one step of which is more than a trace holds": (
        "stencil_tiling", {"grid": [10**8, 10**8]},
        "grid and steps: the naive sweep: grid must be smaller: one time step takes 400,000,002 trace rows"),
    "more engine steps than a program holds": ("stencil_tiling", {"engine_steps": 10**12},
                                               "engine_steps: 1000000000000; expected at most 4,525 with tiles t_t 4, "
                                               "t_s [8, 32] (442 per wavefront over grid [512, 512]; an engine "
                                               "program holds at most 1,000,000 tiles)"),
    "an engine grid one wavefront of which is more than a command holds": (
        "stencil_tiling", {"engine_grid": [10**8, 10**8]},
        "engine_grid: [100000000, 100000000]: one wavefront of tiles t_t 4, t_s [8, 32] holds"),
    "a roofline intensity whose host rows outlast the time limit": (
        "roofline", {"intensities": [1.0, 1e9]},
        "intensities: 1e+09 flop/B: the host's rows take at least 314.9 ks at configs/systems/i7_950_choi.yaml's"),
    "an engine system without an engine": ("stencil_tiling", {"engine_system": "configs/systems/i7_920_ddr3.yaml"},
                                           "engine_system: configs/systems/i7_920_ddr3.yaml has no stencil engine "
                                           "named 'stencil' (accelerators: none); expected a system with one"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_study_file_the_runner_cannot_run_is_refused_at_load(tmp_path, capsys, case):
    kind, changes, message = BAD[case]
    path = variant(tmp_path, kind, changes)
    lines = refused(tmp_path, capsys, path)
    assert len(lines) == 1 and lines[0].startswith(f"offsim: error: {path}: {message}"), lines


def test_the_shipped_files_still_load():
    from simulator.studies.stencil.study import load_study

    assert len(load_study(STUDIES / "roofline.yaml").intensities) == 14
    assert len(load_study(STUDIES / "stencil_tiling.yaml").engine_tiles) == 5


def failing_run(run):
    """A run_point that fails (module level: the pool pickles it)."""
    raise RuntimeError("injected")


def test_a_run_whose_point_fails_records_it_and_writes_no_summary(tmp_path, monkeypatch, capsys):
    """A run that raises is recorded under failed/ (retried by the next run); the others' records are
    kept, and no figure or summary is written."""
    import simulator.studies.stencil.study as stencil_study

    cfg = replace(load_study(STUDIES / "roofline.yaml"), intensities=(1.0,))
    monkeypatch.setitem(stencil_study.PLUGINS, "roofline", replace(stencil_study.ROOFLINE_PLUGIN, run_point=failing_run))
    out = tmp_path / "out"
    with pytest.raises(RuntimeError, match="2 runs of the roofline study failed: .*RuntimeError: injected"):
        stencil_study.run_study(cfg, out, workers=1)
    assert len(list((out / "failed").iterdir())) == 2
    assert not (out / "roofline_summary.json").exists() and not (out / "roofline_sweep.png").exists()


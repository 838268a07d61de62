"""Intensity sweep on the simulated host vs the energy roofline (issue 4, 001 ch. 3-4).

tau and eps are measured on the simulated system with micro runs (compute-only and a
zero-intensity stream); the sweep's points are separate runs at other intensities,
so agreement away from the ridge is a prediction, not a fit.
"""

from __future__ import annotations

import pytest

from simulator.config.loader import load_spec
from simulator.config.schema import SystemSpec
from simulator.studies.stencil.study import intensity_sweep, measure_machine
from tests.conftest import CONFIGS

SYSTEM = load_spec(CONFIGS / "systems" / "nehalem_choi.yaml", SystemSpec)
Q_BYTES = 8 * 2**20
MACHINE = measure_machine(SYSTEM, flops=2 * 10**7, stream_bytes=Q_BYTES)


def test_measured_costs_follow_from_the_configured_core():
    host = SYSTEM.spec.host
    assert MACHINE.tau_flop_s == pytest.approx(1 / (host.flops_per_cycle * host.frequency_hz), rel=1e-6)
    assert MACHINE.eps_flop_j == pytest.approx(host.energy_per_flop_j, rel=1e-6)
    # the constant power is the core's static power plus a DRAM background of a few watts
    assert host.static_power_w < MACHINE.pi0_w < host.static_power_w + 10
    # a byte from DRAM costs more than the host-side path alone (device + interface on top)
    assert MACHINE.eps_mem_j_per_byte > host.memory_path_energy_j_per_byte
    assert 3e9 < 1 / MACHINE.tau_mem_s_per_byte < 7e9


def test_sweep_matches_the_roofline_away_from_the_ridge():
    plat = MACHINE.platform()
    b_tau = plat.b_tau
    intensities = [b_tau / 8, b_tau / 3, 3 * b_tau, 12 * b_tau]
    _, points = intensity_sweep(SYSTEM, intensities, Q_BYTES, machine=MACHINE)
    for p in points:
        assert p.dram_bytes == pytest.approx(Q_BYTES, rel=0.01)  # all bytes really came from DRAM
        assert abs(p.time_error) < 0.05, p
        assert abs(p.energy_error) < 0.05, p
    # memory-bound points are slower than their flops alone; compute-bound ones are not
    assert points[0].time_s > 4 * points[0].w_flops * plat.tau_flop_s
    assert points[-1].time_s == pytest.approx(points[-1].w_flops * plat.tau_flop_s, rel=0.05)


def test_doubling_the_flop_rate_moves_the_ridge():
    fast = load_spec(CONFIGS / "systems" / "nehalem_choi.yaml", SystemSpec, ["host.flops_per_cycle=8.0"])
    m2 = measure_machine(fast, flops=2 * 10**7, stream_bytes=Q_BYTES)
    assert m2.platform().b_tau == pytest.approx(2 * MACHINE.platform().b_tau, rel=0.01)


def test_shipped_study_files_validate():
    from simulator.config.loader import PROJECT_ROOT
    from simulator.studies.stencil.study import load_study

    roof = load_study(PROJECT_ROOT / "configs" / "studies" / "roofline.yaml")
    assert roof.total_bytes == 16 * 2**20 and len(roof.intensities) == 14
    tiling = load_study(PROJECT_ROOT / "configs" / "studies" / "stencil_tiling.yaml")
    assert tiling.host_tile.kind == "hhc_2d" and len(tiling.engine_tiles) == 5


def test_bad_study_file_exits_2_naming_file_and_keys(tmp_path, capsys):
    from simulator.studies.stencil.study import main

    bad = tmp_path / "bad.yaml"
    bad.write_text("study: roofline\nsystem: configs/systems/nehalem_choi.yaml\ntotal_bytes: 16777216\n"
                   "intensities: [1, -2]\nextra: 3\n")
    assert main([str(bad), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "bad.yaml: extra: unknown key" in err
    assert "bad.yaml: total_bytes" in err and "a bare number has no unit" in err
    assert "bad.yaml: intensities[1]" in err and "positive" in err
    assert not (tmp_path / "out").exists()

"""A sweep file's ``crosscheck: roofline``: the energy roofline beside every point in study.parquet, the report
and the figures; refused for a model it does not know, an offloading workload, or a figure of it without it."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from simulator.studies import roofline as roofline_check
from simulator.errors import ConfigError
from simulator.studies.roofline import measure_machine, roofline_prediction
from simulator.studies.sweep import prepare_points, load_study, run_study
from tests.conftest import CONFIGS, DEFAULT_SYSTEM, refused

SWEEP = ("sweep:\n  product:\n    set.host.max_outstanding_misses: [10, 4]\n"
         "    param.array_bytes: [\"256 KiB\", \"4 MiB\"]\n")


def _study(tmp_path: Path, extra: str = "crosscheck: roofline\n", workload: str | None = None) -> Path:
    if workload is None:
        (tmp_path / "w.yaml").write_text("name: w\ngenerator: stream\nparams: {kind: triad, array_bytes: 1 MiB}\n")
        workload = "w.yaml"
    path = tmp_path / "study.yaml"
    path.write_text(f"name: s\nsystem: {DEFAULT_SYSTEM}\nworkload: {workload}\n{extra}{SWEEP}")
    return path


def test_each_point_gets_the_roofline_of_its_own_system(tmp_path, monkeypatch):
    study = _study(tmp_path)
    outcome = run_study(study, tmp_path / "out", workers=1, progress=False)
    table = pq.read_table(outcome.table_path).to_pandas()
    check = table[table["component"] == "crosscheck/roofline"]
    assert len(check) == 4 * len(outcome.points)
    assert set(check["quantity"]) == {"model_time_s", "model_energy_j", "time_error", "energy_error"}
    for point in outcome.points:
        rows = table[table["run_hash"] == point.run_hash]
        value = {(c, q): v for c, q, v in zip(rows["component"], rows["quantity"], rows["value"])}
        # the prediction from the point's own W and Q, with the costs measured on the point's own system
        w = value[("host", "flops")]
        q = value[("dram", "bytes_read")] + value[("dram", "bytes_written")]
        t_model, e_model = roofline_prediction(measure_machine(point.loaded), w, q)
        assert value[("crosscheck/roofline", "model_time_s")] == pytest.approx(t_model, rel=1e-12)
        assert value[("crosscheck/roofline", "model_energy_j")] == pytest.approx(e_model, rel=1e-12)
        t = value[("system", "simulated_time_s")]
        assert value[("crosscheck/roofline", "time_error")] == pytest.approx(t / t_model - 1, rel=1e-9)
        # the axis columns are the point's, as for its other rows
        assert rows["set.host.max_outstanding_misses"].nunique() == 1
    # a 4 MiB triad writes back dirty lines the core does not wait for: faster than the roofline's Q tau_mem
    big = check[(check["param.array_bytes"] == 4 * 2**20) & (check["quantity"] == "time_error")]
    assert (big["value"] < -0.02).all()
    report = (outcome.out_dir / "report.md").read_text()
    assert "roofline time error" in report and "roofline energy error" in report
    assert any("time_error" in p.name for p in (outcome.out_dir / "figures").iterdir())
    # a rerun reuses every point and the stored costs (it measures nothing), and writes the same table
    first = outcome.table_path.read_bytes()
    costs = outcome.out_dir / "roofline_machines.json"
    assert len(json.loads(costs.read_text())) == 2  # one per distinct system
    with monkeypatch.context() as patch:
        patch.setattr(roofline_check, "measure_machine", _no_measuring)
        again = run_study(study, tmp_path / "out", workers=1, progress=False)
    assert not again.simulated and again.table_path.read_bytes() == first
    # a stored file that does not read back is measured again, to the same bytes
    costs.write_text("{not json")
    assert run_study(study, tmp_path / "out", workers=1, progress=False).table_path.read_bytes() == first
    assert len(json.loads(costs.read_text())) == 2


def _no_measuring(*args, **kwargs):
    raise AssertionError("measured again although the study stored the costs")


@pytest.mark.parametrize("extra, message", [
    ("crosscheck: logca\n", "crosscheck: 'logca'; expected one of: roofline"),
    ("figures:\n  - {x: param.array_bytes, y: crosscheck/roofline/time_error}\n",
     "figures[0].y: 'crosscheck/roofline/time_error': no component 'crosscheck/roofline'"),
])
def test_an_unknown_model_or_a_figure_of_a_missing_crosscheck_is_refused(tmp_path, capsys, extra, message):
    study = _study(tmp_path, extra)
    err = refused(["study", str(study), "--out", str(tmp_path / "out")], capsys, tmp_path / "out")
    assert len(err) == 1 and err[0].startswith(f"offsim: error: {study}: {message}"), err


def test_an_offloading_workload_is_refused_with_the_roofline(tmp_path):
    workload = tmp_path / "fmm.yaml"
    workload.write_text((CONFIGS / "workloads" / "fmm_ulist_q4.yaml").read_text().replace(
        "n_points: 240000", "n_points: 2000"))
    study = tmp_path / "study.yaml"
    study.write_text(f"name: s\nsystem: {CONFIGS / 'systems' / 'lap_dram.yaml'}\nworkload: fmm.yaml\n"
                     "crosscheck: roofline\nsweep:\n  product:\n    set.host.max_outstanding_misses: [10, 4]\n")
    with pytest.raises(ConfigError) as err:
        prepare_points(load_study(study))
    assert (f"{study}: crosscheck: the workload (every point) has 20 accelerator command rows (offload, wait); "
            "expected a host-only workload, as the energy roofline describes the host and its memory alone") \
        in str(err.value)


def test_a_system_too_small_to_measure_is_refused_with_the_roofline(tmp_path):
    study = _study(tmp_path).read_text().replace("set.host.max_outstanding_misses: [10, 4]",
                                                 "set.dram.geometry.rows: [65536, 64]")
    (tmp_path / "study.yaml").write_text(study)
    with pytest.raises(ConfigError) as err:
        prepare_points(load_study(tmp_path / "study.yaml"))
    assert "crosscheck: the roofline's costs are measured with a 32 MiB read stream, more than the 16 MiB" \
        in str(err.value)


def _fmm_study(tmp_path: Path, workload: str = "fmm_ulist_q4.yaml") -> Path:
    study = tmp_path / "fmm_study.yaml"
    study.write_text(f"name: f\nsystem: {CONFIGS / 'systems' / 'lap_dram.yaml'}\n"
                     f"workload: {CONFIGS / 'workloads' / workload}\ncrosscheck: ulist\n"
                     "sweep:\n  product:\n    param.n_points: [20000]\n    param.variant: [orig, blocking, pipelining]\n"
                     "    set.accelerators.lap.frequency_hz: [\"1 GHz\", \"1.5 GHz\"]\n")
    return study


def test_each_fmm_point_gets_the_u_list_model_measured_on_its_own_system(tmp_path, monkeypatch, capsys):
    from simulator.studies.fmm import run_check as ulist_run_check
    from simulator.cli import main

    study = _fmm_study(tmp_path)
    outcome = run_study(study, tmp_path / "out", workers=1, progress=False)
    table = pq.read_table(outcome.table_path).to_pandas()
    check = table[table["component"] == "crosscheck/ulist"]
    quantities = {"model_time_s", "model_energy_j", "time_error", "energy_error"}
    assert set(check["quantity"]) == quantities | {f"ext_{q}" for q in quantities}
    assert len(check) == 8 * len(outcome.points)
    machines = json.loads((outcome.out_dir / "ulist_machines.json").read_text())
    # one per LAP clock: the same placement and layout; the pipelined points' inputs serve the others too
    assert sorted(k.split("/", 1)[1] for k in machines) == ["lap-dram/rows+pipelined"] * 2
    f_l = sorted(m["machine"]["lap-dram.f_l_flops_per_s"] for m in machines.values())
    assert f_l[1] / f_l[0] == pytest.approx(1.5, rel=0.02)  # the LAP's rate follows its clock
    # one point against `offsim run --crosscheck` of the same point, measured afresh
    point = next(p for p in outcome.points if dict(p.values)["param.variant"] == "blocking"
                 and dict(p.values)["set.accelerators.lap.frequency_hz"] == "1.5 GHz")
    rows = table[(table["run_hash"] == point.run_hash) & (table["component"] == "crosscheck/ulist")]
    value = dict(zip(rows["quantity"], rows["value"]))
    argv = ["run", str(CONFIGS / "systems" / "lap_dram.yaml"), str(CONFIGS / "workloads" / "fmm_ulist_q4.yaml"),
            "--param", "n_points=20000", "--param", "variant=blocking",
            "--set", "accelerators.lap.frequency_hz=1.5 GHz", "--out", str(tmp_path / "run"), "--crosscheck"]
    assert main(argv) == 0
    capsys.readouterr()
    single = (tmp_path / "run" / "crosscheck.csv").read_text().splitlines()
    models = [line.split(",") for line in single if line.startswith(("time,", "energy,"))]
    assert [float(m[2]) for m in models] == pytest.approx(
        [value[q] for q in ("model_time_s", "model_energy_j", "ext_model_time_s", "ext_model_energy_j")], rel=1e-12)
    assert [float(m[4]) for m in models] == pytest.approx(
        [value[q] for q in ("time_error", "energy_error", "ext_time_error", "ext_energy_error")], rel=1e-9)
    report = (outcome.out_dir / "report.md").read_text()
    assert "U-list time error" in report and "extended energy error" in report
    # a rerun measures nothing and writes the same table
    first = outcome.table_path.read_bytes()
    with monkeypatch.context() as patch:
        patch.setattr(ulist_run_check, "measure_all", _no_measuring)
        again = run_study(study, tmp_path / "out", workers=1, progress=False)
    assert not again.simulated and again.table_path.read_bytes() == first
    # a stored measurement that lacks a figure is measured again, to the same bytes
    stored = outcome.out_dir / "ulist_machines.json"
    stored.write_text(json.dumps({k: {**m, "machine": {"w_c_bytes_per_s": 1.0}} for k, m in machines.items()}))
    assert run_study(study, tmp_path / "out", workers=1, progress=False).table_path.read_bytes() == first
    assert json.loads(stored.read_text()) == machines


def test_the_u_list_model_is_refused_for_a_workload_it_does_not_describe(tmp_path):
    study = _study(tmp_path, "crosscheck: ulist\n")
    with pytest.raises(ConfigError) as err:
        prepare_points(load_study(study))
    assert err.value.messages == [f"{study}: crosscheck: ulist: the workload runs the generator 'stream'; expected "
                                  "the 'fmm_ulist' generator, whose U-list the model describes"]
    pcie = _fmm_study(tmp_path).read_text().replace("lap_dram.yaml", "lap_pcie.yaml").replace(
        "    set.accelerators.lap.frequency_hz: [\"1 GHz\", \"1.5 GHz\"]\n", "")
    (tmp_path / "fmm_study.yaml").write_text(pcie)
    with pytest.raises(ConfigError) as err:
        prepare_points(load_study(tmp_path / "fmm_study.yaml"))
    assert "crosscheck: ulist: the workload (param.n_points=20000, param.variant=orig) offloads its GEMMs to the " \
           "LAP, and" in str(err.value) and "has its LAP coupled to 'pcie'" in str(err.value)


def test_an_idle_accelerators_power_is_constant_power_to_the_roofline():
    """On a system with a GPU that the host-only micro runs never use, the GPU's idle power over the run is part
    of pi_0, not of the energy per flop: eps_flop is the host's own, as on the system without the GPU."""
    from simulator.config.loader import load_spec
    from simulator.config.schema import SystemSpec

    system = load_spec(CONFIGS / "systems" / "logca_gpu_discrete.yaml", SystemSpec)
    host = system.spec.host
    machine = measure_machine(system, flops=10**7, stream_bytes=2**20)
    assert machine.eps_flop_j == pytest.approx(host.energy_per_flop_j, rel=1e-6)
    idle_w = sum(a.idle_power_w for a in system.spec.accelerators.values())
    assert idle_w > 0 and machine.pi0_w > host.static_power_w + idle_w

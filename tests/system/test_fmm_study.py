"""The FMM placement study file is refused at load, before any worker starts or any output is written, when
its points could not run: a placement's system file that is not a system (or has no LAP for gemm: lap, no
systolic array of doubles for gemm: systolic, or refuses the placement's overrides), a variant the CPU cannot
run, empty or repeated lists."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from simulator.cli import main
from tests.conftest import ROOT

STUDY = ROOT / "configs" / "studies" / "fmm_placement.yaml"


def variant(tmp_path: Path, changes: dict[str, Any]) -> Path:
    """A copy of the shipped FMM study file with the dotted keys of ``changes`` replaced."""
    raw = yaml.safe_load(STUDY.read_text())
    for dotted, value in changes.items():
        *parents, last = dotted.split(".")
        node = raw
        for part in parents:
            node = node[part]
        node[last] = value
    path = tmp_path / "fmm.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


BAD = {
    "a workload as a placement's system": (
        {"placements.cpu.system": "configs/workloads/stream_read.yaml"},
        "placements.cpu.system: 'configs/workloads/stream_read.yaml' has no 'host' section, so it is not a system "
        "config; expected a system file (host, caches, dram)"),
    "a LAP placement on a system without a LAP": (
        {"placements.lap-dram.system": "configs/systems/i7_920_ddr3.yaml"},
        "placements.lap-dram.system: configs/systems/i7_920_ddr3.yaml has no LAP named 'lap'; expected a system with "
        "one for gemm: lap"),
    "a systolic placement on a system without a systolic array": (
        {"placements.systolic-os-dram.system": "configs/systems/lap_dram.yaml"},
        "placements.systolic-os-dram.system: configs/systems/lap_dram.yaml has no systolic array named 'systolic'; "
        "expected a system with one for gemm: systolic, e.g. configs/systems/systolic_fp64_llc.yaml"),
    "a systolic array of 2-byte words": (
        {"placements.systolic-os-dram.system": "configs/systems/systolic_dram.yaml"},
        "placements.systolic-os-dram.system: accelerators.systolic.word_bytes = 2; expected 8 (the U-list's "
        "doubles)"),
    "an override the system refuses": (
        {"placements.systolic-ws-llc.overrides": ["accelerators.systolic.dataflow=xs"]},
        "placements.systolic-ws-llc.system: --set accelerators.systolic.dataflow=xs (over "),
    "an override of every system the systems refuse": (
        {"system_overrides": ["dram.geometry.scheduler=fastest"]},
        "system_overrides: --set dram.geometry.scheduler=fastest (over "),
    "a LAP variant on the CPU": ({"placements.cpu.variants": ["orig", "pipelining"]},
                                 "placements.cpu.variants[1]: 'pipelining'; expected only 'orig' for gemm: cpu"),
    "no variant": ({"placements.lap-llc.variants": []}, "placements.lap-llc.variants: []; expected a non-empty list"),
    "a variant twice": ({"placements.lap-llc.variants": ["orig", "blocking", "orig"]},
                        "placements.lap-llc.variants[2]: 'orig' repeats placements.lap-llc.variants[0]; expected each "
                        "value once"),
    "a q twice": ({"qs": [4, 6, 4]}, "qs[2]: 4 repeats qs[0]; expected each value once"),
    "a quick q twice": ({"quick.qs": [8, 8]}, "quick.qs[1]: 8 repeats quick.qs[0]; expected each value once"),
    "a q whose leaf holds more than every point": (
        {"qs": [4, 1000]}, "qs[1]: q must be at most 110 for n_points = 240000 (a leaf box holds"),
    "a quick q whose leaf holds more than every quick point": (
        {"quick.qs": [70]}, "quick.qs[0]: q must be at most 69 for n_points = 60000"),
    "more points than a trace may address": ({"n_points": 10**12}, "n_points: expected a value <= 16777216"),
    "a negative q": ({"qs": [4, -1]}, "qs[1]: expected a value >= 0, got -1"),
}
# a placement name keys machine.json's figures (<name>.<figure>) and --only's pairs (<name>/<variant>)
for _name in ("lap.x", "../a/b", "a/b", "", ".lap", "1lap"):
    BAD[f"a placement named {_name!r}"] = (
        {"placements": {"cpu": {"system": "configs/systems/i7_920_ddr3.yaml", "gemm": "cpu", "variants": ["orig"]},
                        _name: {"system": "configs/systems/lap_dram.yaml", "gemm": "lap", "variants": ["orig"]}}},
        f"placements: '{_name}'; expected a name of letters, digits, '_' and '-', starting with a letter")


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_study_file_whose_points_cannot_run_is_refused_at_load(tmp_path, capsys, case):
    changes, message = BAD[case]
    path = variant(tmp_path, changes)
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"offsim: error: {path}: {message}"), err
    out = tmp_path / "out"
    assert main(["study", str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"offsim: error: {path}: {message}"), err
    assert not out.exists()


def test_an_llc_too_small_for_the_pipelined_search_is_refused_before_anything_runs(tmp_path, capsys):
    """The b search needs the problem's tree, which validate does not build: the file validates, and the study
    refuses it when it starts, before its micro runs, with nothing written."""
    path = variant(tmp_path, {"llc_bytes": "1 B", "n_points": 60000, "qs": [4],
                              "placements": {"cpu": {"system": "configs/systems/i7_920_ddr3.yaml", "gemm": "cpu",
                                                     "variants": ["orig"]},
                                             "lap-dram": {"system": "configs/systems/lap_dram.yaml", "gemm": "lap",
                                                          "variants": ["pipelining"]}}})
    assert main(["validate", str(path)]) == 0
    capsys.readouterr()
    out = tmp_path / "out"
    assert main(["study", str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "llc_bytes: an LLC of 1 B leaves a pipelined point 93,405,618 block counts" in err[0]
    assert err[0].endswith("at q = 4 (pipelined_blocks: llc_rule gives one)")
    assert not out.exists()


def test_the_shipped_files_still_load():
    from simulator.studies.fmm.placement import load_study

    for name in ("fmm_placement.yaml", "fmm_placement_marssx86.yaml", "fmm_placement_ready_first.yaml"):
        assert set(load_study(ROOT / "configs" / "studies" / name).placements) >= {"cpu"}


def test_a_study_takes_every_order_the_generator_and_the_model_take(tmp_path):
    """q = 0 (one value per leaf box) loads as a study's q, as the fmm_ulist generator and ``models ulist`` take it:
    one lower bound for all three (``fmm_tree.MIN_ORDER``)."""
    from simulator.studies.fmm.model_eval import points
    from simulator.studies.fmm.placement import grid, load_study
    from workloads import fmm_tree

    study = load_study(variant(tmp_path, {"qs": [fmm_tree.MIN_ORDER, 4]}))
    assert {p.q for p in grid(study, quick=False)} == {0, 4}
    assert fmm_tree.leaf_points(fmm_tree.MIN_ORDER) == 1
    with pytest.raises(ValueError, match="q must be an integer >= 0"):
        fmm_tree.leaf_points(fmm_tree.MIN_ORDER - 1)
    assert points({"dims": {}}, [fmm_tree.MIN_ORDER], ["cpu"], ["orig"]) == [(0, "cpu", "orig")]


def test_system_overrides_reach_every_placement_and_every_micro_run(tmp_path):
    """The ready-first study's overrides come before each placement's own, in its points and in the micro runs
    that measure the model's inputs on the same systems; the keys tell the two studies apart."""
    from simulator.config.loader import LoadedConfig
    from simulator.studies.fmm.placement import grid, load_study, micro_runs

    ready = ["dram.geometry.scheduler=ready_first", "dram.geometry.command_queue_depth=8"]
    study = load_study(variant(tmp_path, {"system_overrides": ready}))
    default = load_study(STUDY)
    for name, pl in study.placements.items():
        assert pl.overrides == (*ready, *default.placements[name].overrides)
    assert all(p.overrides[:2] == tuple(ready) for p in grid(study, True))
    systems = [a for run in micro_runs(study) for a in run.part.args if isinstance(a, LoadedConfig)]
    assert systems and all(s.spec.dram.geometry.scheduler == "ready_first" for s in systems)
    assert not {r.key() for r in micro_runs(study)} & {r.key() for r in micro_runs(default)}
    shipped = load_study(ROOT / "configs" / "studies" / "fmm_placement_ready_first.yaml")
    assert all(pl.overrides[:2] == tuple(ready) for pl in shipped.placements.values())


def test_a_placements_own_override_replaces_the_studys_of_the_same_key(tmp_path):
    from simulator.studies.fmm.placement import load_study

    study = load_study(variant(tmp_path, {"system_overrides": ["dram.geometry.scheduler=ready_first",
                                                              "dram.geometry.command_queue_depth=8"],
                                          "placements.lap-dram.overrides": ["dram.geometry.command_queue_depth=4"]}))
    assert study.placements["lap-dram"].overrides == ("dram.geometry.scheduler=ready_first",
                                                      "dram.geometry.command_queue_depth=4")
    assert study.placements["cpu"].overrides == ("dram.geometry.scheduler=ready_first",
                                                 "dram.geometry.command_queue_depth=8")
    # a cache level named by index in one list and by name in the other is the same key
    study = load_study(variant(tmp_path, {"system_overrides": ["caches.levels.LLC.ways=8"],
                                          "placements.lap-dram.overrides": ["caches.levels.2.ways=16"]}))
    assert study.placements["lap-dram"].overrides == ("caches.levels.2.ways=16",)


def test_the_paper_placements_are_the_cpu_and_the_lap_in_main_memory():
    from simulator.studies.fmm.placement import accelerator_couplings, load_study, paper_placements

    study = load_study(STUDY)
    assert paper_placements(study) == ["cpu", "lap-dram", "lap-llc", "lap-near-memory"]
    assert accelerator_couplings(study)["lap-hbm"] == "near_memory (hbm)"
    assert accelerator_couplings(study)["lap-near-memory"] == "near_memory"


def test_a_narrowed_study_measures_only_the_lap_systems_its_points_read():
    """--only keeps the selected placements, the CPU placement, the first LAP placement (CPU-only points'
    LLC costs) and the one the residency curves are measured on; the micro runs it keeps are the full
    study's, argument for argument, and the points of the selection are the same."""
    from simulator.studies.fmm.crosscheck import residency_system
    from simulator.studies.fmm.placement import grid, load_study, micro_runs, narrowed

    study = load_study(STUDY)
    assert residency_system({"cpu-like": "configs/systems/lap_dram.yaml"}) is None
    for pairs, kept in [({("lap-near-memory", "orig")}, ["cpu", "lap-dram", "lap-llc", "lap-near-memory"]),
                        ({("systolic-os-llc", "orig")}, ["cpu", "lap-dram", "lap-llc", "systolic-os-llc"]),
                        ({("cpu", "orig")}, ["cpu", "lap-dram", "lap-llc"])]:
        small = narrowed(study, frozenset(pairs))
        assert list(small.placements) == kept
        full = {(r.part.kind, r.part.fn.__name__, repr(r.part.args)) for r in micro_runs(study)}
        measured = [(r.part.kind, r.part.fn.__name__, repr(r.part.args)) for r in micro_runs(small)]
        assert set(measured) < full
        assert sorted(r.part.args[0] for r in micro_runs(small) if r.part.kind == "lap") == \
            [name for name in kept if name.startswith("lap-")]
        selected = [p for p in grid(study, True) if (p.placement, p.variant) in pairs]
        assert selected and selected == [p for p in grid(small, True) if (p.placement, p.variant) in pairs]


def test_the_plugin_plans_the_micro_runs_and_the_untuned_points_first():
    """The first round holds every micro run and every point but the model-tuned pipelined ones; those
    follow once every micro run has its record. Each point's key is stable and its own."""
    from dataclasses import replace

    from simulator.studies.fmm.placement import (MicroRun, PlacementPoint, grid, load_study, micro_runs,
                                                 needs_model_blocks, plan_points, tuned_points)

    study = load_study(STUDY)
    first = plan_points(study, True)
    runs = [p for p in first if isinstance(p, MicroRun)]
    assert runs == micro_runs(study) and runs
    tuned = [p for p in grid(study, True) if needs_model_blocks(p, study)]
    assert tuned and [p for p in first if isinstance(p, PlacementPoint)] == [
        p for p in grid(study, True) if p not in tuned]
    assert tuned_points(study, True, {}) is None
    assert tuned_points(study, True, {run: {} for run in runs[1:]}) is None  # one micro run missing
    keys = [p.key() for p in first]
    assert len(set(keys)) == len(keys) and keys == [p.key() for p in plan_points(study, True)]
    assert replace(tuned[0], blocks=7).key() != tuned[0].key()
    assert all(run.cost() > point.cost() for run in runs for point in first if isinstance(point, PlacementPoint))


def test_figure_12_draws_the_placements_that_ran_beside_ones_that_did_not(tmp_path, monkeypatch):
    """A grid narrowed by --only (``reproduce`` runs no systolic array): the LAP's bars are drawn in its
    coupling's panels even though the array at the same coupling ran nothing, and a coupling none of whose
    placements ran keeps empty panels, with no legend, rather than warn on stderr."""
    import warnings

    import pandas as pd

    from simulator.studies.fmm import placement

    table = pd.DataFrame({"q": [4, 4], "placement": ["lap-dram", "lap-dram"], "variant": ["orig", "blocking"],
                          "cycles_gemm": [1e6, 5e5], "cycles": [2e6, 1.5e6], "energy_total_j": [0.1, 0.08]})
    drawn: dict[str, Any] = {}
    monkeypatch.setattr(placement, "save_figure", lambda fig, path, dpi=110: drawn.setdefault("fig", fig))
    couplings = {"lap-dram": "dram", "systolic-os-dram": "dram", "systolic-os-llc": "llc"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        placement.accelerators_figure(table, couplings, tmp_path / "fig12.png")
    dram_top, llc_top, dram_bottom, llc_bottom = drawn["fig"].axes  # two rows of panels, one column a coupling
    # two groups (q = 4 orig and blocking), each a GEMM bar and the rest of the cycles above it
    assert [round(b.get_y() + b.get_height(), 9) for b in dram_top.patches] == [1.0, 0.5, 2.0, 1.5]
    assert [b.get_height() for b in dram_bottom.patches] == [0.1, 0.08]
    assert not llc_top.patches and not llc_bottom.patches and llc_top.get_legend() is None


def test_figure_11_stacks_every_energy_part_a_point_has_up_to_its_total(tmp_path, monkeypatch):
    """A part a point lacks (the HBM energy of a point without HBM: empty in table.csv) counts as 0 J, so
    each bar of the total-energy figure reaches its own point's energy_total_j."""
    import pandas as pd

    from simulator.studies.fmm import placement

    points = [("cpu", "orig", "cpu"), ("lap-dram", "orig", "lap"), ("lap-hbm", "orig", "lap")]
    rows = []
    for qi, q in enumerate((4, 8)):
        for pi, (name, variant, gemm) in enumerate(points):
            parts = {"energy_host_j": 1.0 + qi + pi, "energy_dram_j": 0.5 * (pi + 1),
                     "energy_hbm_j": 0.25 * (qi + 1) if name == "lap-hbm" else float("nan")}
            rows.append({"q": q, "placement": name, "variant": variant, "gemm": gemm, "dram_accesses": 1e6,
                         **{f"cycles_{st}": 1e6 for st in placement.STAGES}, "cycles": 4e6, "cycles_gemm": 1e6,
                         "dram_background_j": 0.1, "dram_refresh_j": 0.1, "dram_dynamic_j": 0.1, **parts,
                         "energy_total_j": sum(v for v in parts.values() if v == v)})
    table = pd.DataFrame(rows)
    drawn: dict[str, Any] = {}
    monkeypatch.setattr(placement, "save_figure", lambda fig, path, dpi=110: drawn.setdefault(Path(path).name, fig))
    placement.figures(table, tmp_path, {})
    ax = drawn[placement.FIGURE_FILES[3]].axes[0]
    tops: dict[float, float] = {}
    for bar in ax.patches:
        x = round(bar.get_x() + bar.get_width() / 2, 9)  # the bar's centre
        tops[x] = max(tops.get(x, 0.0), bar.get_y() + bar.get_height())
    width = 0.8 / len(points)  # each configuration's bar at its q's slot, in the table's order
    want = {round(qi + pi * width, 9): r["energy_total_j"] for qi, q in enumerate((4, 8))
            for pi, r in enumerate(rr for rr in rows if rr["q"] == q)}
    assert tops == pytest.approx(want, rel=1e-12)


def test_table3_keeps_its_header_without_a_cpu_only_point():
    """The MARSSx86-like study runs no CPU-only point: its table3.csv is a header, not an empty file."""
    import pandas as pd

    from simulator.studies.fmm.placement import TABLE3_COLUMNS, table3

    lap_only = pd.DataFrame({"q": [4], "placement": ["lap-dram"]})
    assert table3(lap_only).to_csv(index=False) == ",".join(TABLE3_COLUMNS) + "\n"


def test_figure_9_leaves_out_a_stage_no_point_has_and_keeps_the_others_colours(tmp_path, monkeypatch):
    """A grid without prefetching (the main job's MARSSx86-like study) has no prefetch stage: no legend entry
    for it, and the output permutation keeps the colour it has in the full study's figure; the title names
    the study's host."""
    import pandas as pd
    from matplotlib.colors import to_rgba

    from simulator.studies.fmm import placement

    table = pd.read_csv(ROOT / "results" / "fmm" / "table.csv")
    table = table[table.gemm.isin(placement.MODELLED_GEMMS) & ~table.variant.str.endswith("_pref")]
    assert not table.cycles_out_prefetch.fillna(0).any()  # the case under test
    drawn: dict[str, Any] = {}
    monkeypatch.setattr(placement, "save_figure", lambda fig, path, dpi=110: drawn.setdefault(Path(path).name, fig))
    host = placement.host_name(placement.load_study(ROOT / "configs" / "studies" / "fmm_placement_marssx86.yaml"))
    assert host == "i7-920 (MARSSx86-like, 3 GB/s) + DDR3-1600"
    placement.figures(table, tmp_path, {}, host)
    ax = drawn[placement.FIGURE_FILES[1]].axes[0]
    assert ax.get_title() == f"Host cycles by stage (cf. 003 Fig. 9), host {host}"  # which host the figure shows
    shown = ax.get_legend()
    legend = {t.get_text(): h.get_facecolor() for t, h in zip(shown.get_texts(), shown.legend_handles)}
    assert list(legend) == ["input_perm", "gemm", "output_perm"]
    assert legend["output_perm"] == to_rgba(f"C{placement.STAGES.index('output_perm')}")


def test_a_grid_of_systolic_points_only_gets_its_tables_and_figures(tmp_path):
    """--only with systolic pairs alone: no point has a model, and the cross-check, Table 5 and the figures are
    written empty (their header, empty panels) rather than failing."""
    import json
    import warnings

    import pandas as pd

    from models.ulist import UListDims
    from simulator.studies.fmm import placement
    from simulator.studies.fmm.crosscheck import CROSSCHECK_COLUMNS, crosscheck_summary, model_rows

    table = pd.read_csv(ROOT / "results" / "fmm" / "table.csv")
    table = table[table.placement == "systolic-os-llc"]
    machine = json.loads((ROOT / "results" / "fmm" / "machine.json").read_text())
    dims = {int(q): UListDims(**d) for q, d in machine["dims"].items()}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cross = model_rows(table, machine, dims, {int(q): tuple(c) for q, c in machine["class_counts"].items()})
        assert tuple(cross.columns) == CROSSCHECK_COLUMNS and cross.empty
        assert crosscheck_summary(cross).points.eq(0).all()
        t5 = placement.table5(table, cross)  # 003's columns, none of ours beside them
        assert all(c == "q" or "_paper_" in c for c in t5.columns)
        placement.figures(table, tmp_path, {"systolic-os-llc": "llc"})
    assert all((tmp_path / name).is_file() for name in placement.FIGURE_FILES)


def test_an_llc_too_small_for_the_pipelined_search_stops_the_study_with_one_message(tmp_path, monkeypatch):
    """The pipelined points' b is searched once the micro runs are in: an LLC of a few KiB would leave
    thousands of block counts to price, so the study stops there, naming llc_bytes (not after hours)."""
    import json

    from simulator.errors import InputError
    from simulator.studies.fmm import placement
    from simulator.studies.fmm.model_eval import DEFAULT_MACHINE

    study = placement.load_study(variant(tmp_path, {"llc_bytes": "4 KiB"}))
    monkeypatch.setattr(placement, "machine_of", lambda runs, records: json.loads(DEFAULT_MACHINE.read_text()))
    with pytest.raises(InputError, match=r"fmm_placement study: llc_bytes: an LLC of 4 KiB leaves a pipelined point "
                                         r"[\d,]+ block counts to try .* \(pipelined_blocks: llc_rule gives one\)"):
        placement.tuned_points(study, True, {})


def test_points_that_move_every_gemm_line_run_before_the_lap_points_and_grow_with_q():
    """The run order: CPU-only and systolic points (their replay moves every GEMM operand line, more at larger
    q) before every LAP point, largest q first; the LAP points by their leaf boxes, smallest q first."""
    from simulator.studies.fmm.placement import grid, load_study

    points = grid(load_study(STUDY), False)
    lap = [p for p in points if p.gemm == "lap"]
    heavy = [p for p in points if p.gemm != "lap"]
    assert {p.gemm for p in heavy} == {"cpu", "systolic"}
    assert min(p.cost() for p in heavy) > max(p.cost() for p in lap)
    for group, largest_q_first in ((heavy, True), (lap, False)):
        by_q = {p.q: p.cost() for p in group}
        order = sorted(by_q, key=by_q.get, reverse=True)
        assert order == sorted(by_q, reverse=largest_q_first)

"""``offsim models stencil``: the tiled-stencil GPU model (004 apps. A, B) on its own."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from models.stencil import (C_ITER_GTX980_S, GTX980, K20C, STENCILS, TileShape, max_blocks_per_sm, predict_energy_j,
                            predict_time_s)
from simulator.cli import main
from tests.conftest import refused

SMALL = ["--space", "1024,1024", "--steps", "256"]
RANGES = ["--t-t", "2:8:2", "--t-s", "2:16:2", "--t-s", "32:64:32", "--threads", "64:256:64"]


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open() as fh:
        return list(csv.DictReader(fh))


def test_without_a_stencil_it_lists_them_with_004_s_c_iter(capsys: pytest.CaptureFixture) -> None:
    assert main(["models", "stencil"]) == 0
    text = capsys.readouterr().out
    assert "heat_2d       2D, 7 flop per point update, C_iter 36.8 ns (004 Table A.4, GTX 980)" in text
    assert "jacobi_1d     1D, 3 flop per point update, C_iter not in 004 Table A.4 (give --c-iter)" in text


def test_the_search_finds_the_brute_force_minimum(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Every tile and thread count of the ranges priced directly with the model: the report's best is their
    minimum, and the CSV holds each feasible point once, ranked."""
    out = tmp_path / "s.csv"
    assert main(["models", "stencil", "heat_2d", *SMALL, *RANGES, "--out", str(out)]) == 0
    c_iter = C_ITER_GTX980_S["heat_2d"]
    priced = {}
    for t_t in (2, 4, 6, 8):
        for ts1 in range(2, 17, 2):
            for ts2 in (32, 64):
                shape = TileShape("hhc_2d", t_t, (ts1, ts2))
                for threads in (64, 128, 192, 256):
                    if max_blocks_per_sm(shape, GTX980, threads) >= 1:
                        priced[(t_t, f"{ts1} {ts2}", threads)] = predict_time_s(shape, (1024, 1024), 256, GTX980,
                                                                                c_iter, threads)
    rows = _rows(out)
    assert len(rows) == len(priced) and [int(r["rank"]) for r in rows] == list(range(1, len(rows) + 1))
    times = [float(r["time_s"]) for r in rows]
    assert times == sorted(times) and times[0] == min(priced.values())
    for r in rows:
        assert float(r["time_s"]) == priced[(int(r["t_t"]), r["t_s"], int(r["n_threads"]))]
    best = rows[0]
    text = capsys.readouterr().out
    assert f"searched: {len(priced):,} feasible of 256 candidates" in text
    assert f"best: tT {best['t_t']}, ts {best['t_s'].replace(' ', ' x ')}, {best['n_threads']} threads" in text
    assert sum(r["within_tolerance"] == "True" for r in rows) == sum(t <= 1.1 * times[0] for t in times)


def test_a_given_tile_is_priced_at_its_best_thread_count_with_its_traffic_and_energy(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "t.csv"
    assert main(["models", "stencil", "jacobi_2d", "--space", "100,64", "--steps", "16", "--tile", "4,6,32",
                 "--threads", "32,64", "--out", str(out)]) == 0
    (row,) = _rows(out)
    shape = TileShape("hhc_2d", 4, (6, 32))
    c_iter = C_ITER_GTX980_S["jacobi_2d"]
    times = {n: predict_time_s(shape, (100, 64), 16, GTX980, c_iter, n) for n in (32, 64)}
    assert float(row["time_s"]) == min(times.values()) and int(row["n_threads"]) == min(times, key=times.get)
    # N_tiles = 2 T / tT x S1 / (ts1 + w_tile) x (S2 + tT) / ts2 (B.5) = 8 x 100 / 14 x 68 / 32; M_io = 2 x 32 x 14
    n_tiles = 8 * 100 / 14 * 68 / 32
    assert float(row["global_bytes"]) == pytest.approx(n_tiles * 896 * 4, rel=1e-12)
    # E = P_stat T + N_tiles (e_gs M_io + u_sr e_sr V + E_iter V) with the K20c's Table B.2 costs
    v = 4 * (12 + 2) // 2 * 32
    e_tile = 2.2e-9 * 896 + 6 * 2.23e-10 * v + (4 * 5.3e-11 + 3.7e-11) * v
    assert float(row["energy_j"]) == pytest.approx(48.0 * float(row["time_s"]) + n_tiles * e_tile, rel=1e-12)
    assert float(row["static_energy_j"]) == pytest.approx(48.0 * float(row["time_s"]), rel=1e-12)
    # 5 flop per update over 100 x 64 points and 16 steps
    assert float(row["gflop_per_s"]) == pytest.approx(5 * 100 * 64 * 16 / float(row["time_s"]) / 1e9, rel=1e-12)
    assert "the given tiles, ranked, at their best thread counts:" in capsys.readouterr().out


def test_a_1d_stencil_takes_its_c_iter_from_the_command_line_and_may_be_time_skewed(tmp_path: Path) -> None:
    out = tmp_path / "j.csv"
    assert main(["models", "stencil", "jacobi_1d", "--kind", "time_skew_1d", "--c-iter", "20 ns", "--space", "5000",
                 "--steps", "300", "--tile", "7,40", "--tile", "12,64", "--threads", "64", "--out", str(out)]) == 0
    rows = _rows(out)
    for r in rows:
        shape = TileShape("time_skew_1d", int(r["t_t"]), (int(r["t_s"]),))  # odd tT: time skewing allows it
        assert float(r["time_s"]) == predict_time_s(shape, (5000,), 300, GTX980, 20e-9, 64)
        assert float(r["c_iter_s"]) == 20e-9
    assert sorted((int(r["t_t"]), int(r["t_s"])) for r in rows) == [(7, 40), (12, 64)]


def test_ranked_by_energy_the_best_point_uses_the_least_energy(tmp_path: Path) -> None:
    out = tmp_path / "e.csv"
    assert main(["models", "stencil", "heat_2d", *SMALL, *RANGES, "--objective", "energy", "--out", str(out)]) == 0
    rows = _rows(out)
    energies = [float(r["energy_j"]) for r in rows]
    assert energies == sorted(energies)
    best = rows[0]
    shape = TileShape("hhc_2d", int(best["t_t"]), tuple(int(v) for v in best["t_s"].split()))
    t = predict_time_s(shape, (1024, 1024), 256, GTX980, C_ITER_GTX980_S["heat_2d"], int(best["n_threads"]))
    assert energies[0] == predict_energy_j(shape, (1024, 1024), 256, STENCILS["heat_2d"], K20C, t)


def test_a_point_beyond_the_gpu_s_bandwidth_is_flagged(capsys: pytest.CaptureFixture) -> None:
    """The model has no device-wide bandwidth limit (each SM pays L per word, A.9): the smallest tiles of
    the default 2D problem move more than the GTX 980's 224 GB/s, and the report says so; large tiles don't."""
    assert main(["models", "stencil", "heat_2d", "--tile", "2,2,192", "--threads", "128"]) == 0
    assert "above the GTX 980's 224 GB/s peak" in capsys.readouterr().out
    assert main(["models", "stencil", "heat_2d", "--tile", "16,32,64", "--threads", "256"]) == 0
    assert "above the GTX 980" not in capsys.readouterr().out


def test_the_figure_and_csv_are_written_and_a_rerun_is_identical(tmp_path: Path) -> None:
    for run in ("a", "b"):
        out, png = tmp_path / f"{run}.csv", tmp_path / f"{run}.png"
        assert main(["models", "stencil", "heat_2d", "gradient_2d", "--space", "256,256", "--steps", "64", *RANGES,
                     "--out", str(out), "--plot", str(png)]) == 0
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    assert {r["stencil"] for r in _rows(tmp_path / "a.csv")} == {"heat_2d", "gradient_2d"}


@pytest.mark.parametrize("argv, message", [
    (["heat_5d"], "'heat_5d': not a stencil; expected one of: jacobi_1d"),
    (["heat_2d", "--space", "64,64,64"], "--space 64,64,64: 3 sizes; heat_2d is 2D, expected 2 sizes"),
    (["heat_2d", "--space", "64,x"], "--space '64,x': expected grid points as positive integers"),
    (["heat_2d", "--steps", "0"], "--steps 0: expected time steps >= 1"),
    (["jacobi_1d"], "jacobi_1d: 004 Table A.4 has no C_iter for it; expected --c-iter TIME"),
    (["heat_2d", "--c-iter", "36.8"], "--c-iter '36.8'"),
    (["heat_2d", "--c-iter", "-1 ns"], "--c-iter '-1 ns': expected a time per point update > 0 s"),
    (["heat_2d", "--c-iter", "1e308 s"], "--c-iter '1e308 s': expected a time per point update of at most 1 s"),
    (["heat_2d", "--kind", "hex_1d"], "--kind hex_1d: tiles 1D iteration spaces; heat_2d is 2D, expected hhc_2d"),
    (["heat_2d", "--t-t", "8:2"], "--t-t '8:2': expected positive integers as N, A:B or A:B:STEP"),
    (["heat_2d", "--threads", "0:64:32"], "--threads '0:64:32': expected positive integers"),
    (["heat_2d", "--t-s", "2:8:2"], "--t-s: given 1 times; hhc_2d tiles 2 space dimensions"),
    (["heat_2d", "--t-t", "2", "--t-s", "200", "--t-s", "256"], "heat_2d: no feasible tile size in the given ranges"),
    (["heat_2d", "--tile", "4,8"], "--tile 4,8: 2 sizes; expected tT then 2 tile sizes"),
    (["heat_2d", "--tile", "3,8,32"], "--tile 3,8,32: t_t must be even"),
    (["heat_2d", "--tile", "4,200,256"], "--tile 4,200,256: no feasible tile size"),
    (["heat_2d", "--tile", "4,8,32", "--t-t", "2:8:2"], "--tile with --t-t or --t-s: expected either"),
    (["heat_2d", "--t-t", "1:1000000000"], "--t-t '1:1000000000': more than 2,000,000 values"),  # refused unbuilt
    (["heat_2d", "--t-t", "1:" + "9" * 30], "more than 2,000,000 values"),  # beyond what len(range) can count
    (["heat_2d", "--t-t", "1:100000", "--t-s", "1:100000", "--t-s", "1:100000"],
     "32,000,000,000,000,000 candidate tiles (tT 1:100000; ts1 1:100000; ts2 1:100000; threads 32:1024:32); "
     "expected at most 2,000,000"),
])
def test_bad_stencil_input_is_refused_with_one_message(argv: list[str], message: str, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "s.csv"
    errors = refused(["models", "stencil", *argv, "--out", str(out)], capsys, out)
    assert len(errors) == 1 and message in errors[0]


BIG = "1" + "0" * 320  # an integer beyond a float


@pytest.mark.parametrize("argv, message", [
    (["heat_2d", "--space", f"{BIG},10", "--tile", "2,2,192"],
     f"--space '{BIG[:57]}...': expected grid points of at most 2,147,483,648 each (2**31: beyond any grid a GPU "
     "holds or any run's steps)"),
    (["heat_2d", "--steps", BIG], f"--steps {BIG[:57]}...: expected time steps of at most 2,147,483,648"),
    (["heat_2d", "--space", "2,32", "--steps", "2", "--tile", "32,30,64"],
     "--tile 32,30,64: global memory 133.7 B; below the 512 B that reading the grid once and writing it once take"),
])
def test_a_problem_beyond_the_bounds_and_a_tile_beyond_the_problem_are_refused(
        argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A grid or run beyond 2**31 is refused (it would price at inf and nan, or overflow); so is a given tile whose
    traffic falls below reading and writing the grid once, outside the model's range, as in ``models chain``."""
    out = tmp_path / "s.csv"
    errors = refused(["models", "stencil", *argv, "--out", str(out)], capsys, out)
    assert len(errors) == 1 and errors[0].startswith(f"offsim: error: {message}")


def test_the_search_leaves_out_tiles_whose_traffic_falls_below_the_grid_read_and_written_once(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """On 2 x 32 points and 2 steps, the largest tile (tT 32, 30 x 64) would be priced at 133.7 B of global memory,
    below the 512 B that reading the 64 points and writing them once take: the search leaves such points out."""
    out = tmp_path / "s.csv"
    assert main(["models", "stencil", "heat_2d", "--space", "2,32", "--steps", "2", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "; 48,128 feasible left out, their global memory below the 512 B that reading the grid once" in text
    with out.open() as fh:
        assert min(float(r["global_bytes"]) for r in csv.DictReader(fh)) >= 512

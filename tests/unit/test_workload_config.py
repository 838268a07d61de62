"""Workload configs: bad input is one ConfigError (exit 2) naming the file (or --param option), the key and
what was expected; no crash, no partial output, no huge allocation before the refusal."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from simulator.cli import main
from simulator.errors import ConfigError, as_written
from workloads.spec import MAX_NAME_BYTES, build_workload, generate_trace, load_workload, name_error
from tests.conftest import CONFIGS, DEFAULT_SYSTEM, refused
from workloads import micro, stencil, trace
from workloads.registry import GENERATORS

SMALL = {"name": "small", "generator": "stream", "params": {"kind": "read", "array_bytes": "64 KiB"}}
# a valid hexagonal-tiling stencil workload: t_s is a tile size in grid points, not a time
TILED = {"generator": "stencil", "params": {"stencil": "jacobi_2d", "grid": [64, 64], "steps": 4,
                                             "scheme": "time_tiled", "tile_kind": "hhc_2d", "t_t": 2, "t_s": [8, 16]}}


def _messages(raw: dict, params: tuple[str, ...] = (), tmp_path: Path | None = None) -> list[str]:
    """The messages of the ConfigError that loading (from w.yaml, with ``params`` as --param) and
    generating ``raw`` raises."""
    import yaml

    path = (tmp_path or Path("/nonexistent")) / "w.yaml"
    with pytest.raises(ConfigError) as info:
        if params:
            path.write_text(yaml.safe_dump(raw))
            generate_trace(load_workload(path, params), str(path))
        else:
            generate_trace(build_workload(raw, "w.yaml", Path(".")), "w.yaml")
    return info.value.messages


def _one(raw: dict, **kwargs) -> str:
    messages = _messages(raw, **kwargs)
    assert len(messages) == 1, messages
    assert "<memory>" not in messages[0] and "Traceback" not in messages[0]
    return messages[0]


def _params(**params) -> dict:
    return {**SMALL, "params": {**SMALL["params"], **params}}


# ---- 1, 2, 5: the shape of the file


@pytest.mark.parametrize("generator", [["stream"], {"a": 1}, 5, None])
def test_generator_must_be_a_generator_name(generator):
    message = _one({"generator": generator})
    assert message.startswith(f"w.yaml: generator: {as_written(generator)} is not a name; expected one of: ")
    assert all(name in message for name in GENERATORS)


@pytest.mark.parametrize("value", [5, None, ["a.parquet"], "", "a\0b"])
def test_trace_must_be_a_path_string(value):
    assert _one({"trace": value}) == (f"w.yaml: trace: {as_written(value)}; expected the path of a Parquet or CSV trace "
                                      "file (a string, relative to the workload file)")


@pytest.mark.parametrize("extra", [{"params": {"kind": "read"}}, {"params": {}}])
def test_trace_with_params_is_refused(extra):
    message = _one({"trace": "t.parquet", **extra})
    assert message.startswith("w.yaml: params: given beside trace; expected either generator with params, or trace "
                              "alone")


# ---- 6: names


@pytest.mark.parametrize("name", ["../../escaped", "a/b", "", "  ", ["a"], 5, ".hidden", "a\0b", "a\tb", "a\bb",
                                  "\u202e", "x" * (MAX_NAME_BYTES + 1), "é" * (MAX_NAME_BYTES // 2 + 1)])
def test_name_must_be_usable_as_a_directory_name(name):
    message = _one({**SMALL, "name": name})
    assert message.startswith("w.yaml: name: ")
    assert message.endswith(f"; expected a non-empty name usable as a directory name: printable, no '/', not "
                            f"starting with '.', at most {MAX_NAME_BYTES} bytes")


@pytest.mark.parametrize("raw, expected", [
    ({**SMALL, "name": None}, "name: null; expected a non-empty name"),
    ({**SMALL, "name": True}, "name: true; expected a non-empty name"),
    ({"generator": None}, "generator: null is not a name"),
    ({"trace": None}, "trace: null; expected the path"),
    ({"generator": "stream", "params": [1, True]}, "params: expected a mapping of stream arguments, got [1, true]"),
    (_params(repeats=True), "params.repeats: expected an integer, got true"),
    ({"generator": "fmm_ulist", "params": {"q": 4, "n_points": 1000, "llc_share": None}},
     "params.llc_share: expected a number, got null"),
    ({"generator": "stencil", "params": {"stencil": "jacobi_2d", "grid": [64, 64], "steps": 4, "scheme": "blocked",
                                         "block": [True]}}, "params.block: [true]; expected a list of 1 positive"),
])
def test_a_null_or_a_flag_is_quoted_as_the_file_writes_it(raw, expected):
    """null, true and a list as YAML writes them, not Python's None, True or a tuple."""
    message = _one(raw)
    assert message.startswith(f"w.yaml: {expected}"), message
    assert not any(word in message for word in ("None", "True", "False")), message


def test_a_number_in_exponent_form_is_a_number():
    # YAML 1.1 (PyYAML) reads 1e-3 as a string for want of a dot; a number parameter takes it as 0.001
    w = build_workload({"name": "i", "generator": "intensity", "params": {"flops_per_byte": "1e-3",
                                                                         "total_bytes": "1 MiB"}}, "w.yaml", Path("."))
    assert w.params["flops_per_byte"] == 0.001


def test_longest_name_fits_the_run_directory_and_its_temporary_name():
    assert name_error("x" * MAX_NAME_BYTES, "w.yaml") is None
    run_dir = "x" * MAX_NAME_BYTES + "-" + "0" * 16  # runner: <name>-<run hash>
    assert len(f".{run_dir}.tmp-abcdefgh") <= 255  # write_run_dir's temporary directory


def test_escaping_name_writes_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "w.yaml").write_text("name: ../../escaped\ngenerator: stream\n"
                                     "params: {kind: read, array_bytes: 64 KiB}\n")
    assert main(["run", str(DEFAULT_SYSTEM), "w.yaml"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("offsim: error: w.yaml: name: '../../escaped'; expected"), err
    assert list(tmp_path.iterdir()) == [tmp_path / "w.yaml"]


# ---- 3, 4: values beyond the trace's int64 columns, traces beyond MAX_TRACE_ROWS


def test_integer_beyond_int64_is_refused_naming_the_parameter_and_bound(tmp_path):
    raw = {"generator": "compute_only", "params": {"flops": 1}}
    big = 10**23
    assert _one({"generator": "compute_only", "params": {"flops": big}}) == (
        f"w.yaml: params.flops: {big}; expected at most 9,223,372,036,854,775,807 (the largest value of the "
        "trace's int64 columns)")
    message = _one(raw, params=(f"flops={big}",), tmp_path=tmp_path)
    assert message.startswith(f"--param flops={big} (over {tmp_path / 'w.yaml'}): params.flops: {big}; expected "
                              "at most 9,223,372,036,854,775,807")
    with pytest.raises(ValueError, match=r"^flops must be at most 9,007,199,254,740,992 \(a row holds at most "
                                         r"2\*\*53 flops"):
        micro.compute_only(big)


def test_size_beyond_the_address_space_is_refused():
    message = _one({"generator": "random_access", "params": {"n_accesses": 1, "footprint_bytes": "8 EiB"}})
    assert message.startswith("w.yaml: params.footprint_bytes: ")  # EiB is no unit: refused as such
    message = _one({"generator": "random_access", "params": {"n_accesses": 1, "footprint_bytes": "9000000 TB"}})
    assert message == ("w.yaml: params.footprint_bytes: '9000000 TB'; expected at most 4,611,686,018,427,387,904 B "
                       "(the trace's byte addresses end at 2**62)")


def test_overflow_the_checks_did_not_foresee_is_still_one_message(monkeypatch):
    def overflowing(flops: int, rows: int = 1):
        raise OverflowError("Python int too large to convert to C long")

    monkeypatch.setitem(micro.GENERATORS, "compute_only", overflowing)  # the table the registry looks it up in
    assert _one({"generator": "compute_only", "params": {"flops": 1}}) == (
        "w.yaml: params: Python int too large to convert to C long; expected parameters whose trace fits its int64 "
        "columns")


@pytest.mark.parametrize("generator, params, key, expected", [
    ("stream", {"kind": "read", "array_bytes": "64 KiB", "repeats": 10**12}, "repeats",
     "1000000000000; expected at most 2,000,000 (a trace holds at most 2,000,000 rows, 1 per repeat)"),
    ("stream", {"kind": "triad", "array_bytes": "1 TiB"}, "array_bytes",
     "'1 TiB'; expected at most 43,690,622,976 B (a trace holds at most 2,000,000 rows, 3 per block of "
     "block_bytes = 65536 B)"),
    ("random_access", {"n_accesses": 10**12, "footprint_bytes": "1 MiB"}, "n_accesses",
     "1000000000000; expected at most 16,777,216 (a trace draws at most 16,777,216 explicit addresses"),
    ("pointer_chase", {"n_hops": 10**12, "footprint_bytes": "1 MiB"}, "n_hops", "1000000000000; expected at most"),
    ("pointer_chase", {"n_hops": 1, "footprint_bytes": "1 TiB"}, "footprint_bytes",
     "'1 TiB'; expected at most 1,073,741,824 B"),
    ("intensity", {"flops_per_byte": 1, "total_bytes": "1 TiB"}, "total_bytes", "'1 TiB'; expected at most"),
    ("compute_only", {"flops": 1, "rows": 10**9}, "rows", "1000000000; expected at most 2,000,000"),
    ("stencil", {"stencil": "jacobi_2d", "grid": [64, 64], "steps": 10**9}, "steps",
     "1000000000; expected at most 7,812 (a trace holds at most 2,000,000 rows, 258 for one step"),
    ("stencil", {"stencil": "jacobi_2d", "grid": [10**8, 2], "steps": 1}, "grid",
     "[100000000, 2]; expected smaller: one time step takes 400,000,002 trace rows with scheme naive"),
    ("kernel_host", {"kernel": "fft", "g_bytes": "4 TiB", "c_cycles_per_byte_beta": 1.0}, "g_bytes",
     "'4 TiB'; expected at most"),
    ("kernel_offload", {"kernel": "fft", "g_bytes": "1 GiB", "c_cycles_per_byte_beta": 1.0, "stages": 10**8},
     "stages", "100000000; expected at most 1,000,000 (an offload command holds at most 1,000,000 parts)"),
    ("crypto_offload", {"kernel": "aes", "g_bytes": "1 TiB", "requests": 10**9}, "requests",
     "1000000000; expected at most"),
    ("crypto_host", {"kernel": "aes", "g_bytes": "4 TiB", "c_cycles_per_byte_beta": 1.0, "beta": 1.0}, "g_bytes",
     "'4 TiB'; expected at most"),
    ("host_gemm", {"m": 10**5, "n": 10**5, "k": 10**5}, "m", "m, n and k must be smaller for this blocking"),
    ("gemm_tiled", {"p0": 10**5, "p1": 10**5, "p2": 10**5, "cache_bytes": "32 KiB", "ways": 8}, "p0",
     "p0, p1 and p2 must be smaller for this cache"),
    ("stream", {"kind": "read", "array_bytes": "64 KiB", "threads": 1025}, "threads",
     "1025; expected an integer from 1 to 1024"),
    ("compute_only", {"flops": 1000, "threads": 1025}, "threads", "1025; expected an integer from 1 to 1024"),
])
def test_too_large_a_trace_is_refused_at_once_naming_the_parameter(generator, params, key, expected):
    message = _one({"generator": generator, "params": params})
    assert message.startswith(f"w.yaml: params.{key}: {expected}"), message


def test_repeats_option_exits_2_at_once(tmp_path, capsys):
    w = tmp_path / "w.yaml"
    w.write_text("name: small\ngenerator: stream\nparams: {kind: read, array_bytes: 64 KiB}\n")
    argv = ["run", str(DEFAULT_SYSTEM), str(w), "--param", "repeats=100000000000", "--out", str(tmp_path / "r")]
    assert refused(argv, capsys, tmp_path / "r") == [
        f"offsim: error: --param repeats=100000000000 (over {w}): params.repeats: 100000000000; "
        "expected at most 2,000,000 (a trace holds at most 2,000,000 rows, 1 per repeat)"]


def test_trace_builder_stops_at_max_trace_rows(monkeypatch):
    monkeypatch.setattr(trace, "MAX_TRACE_ROWS", 3)
    builder = trace.TraceBuilder()
    for _ in range(3):
        builder.compute("host", "s", flops=1)
    with pytest.raises(trace.TraceError, match=r"^<memory>: row 3: at most 3 rows in a trace"):
        builder.compute("host", "s", flops=1)


@pytest.mark.parametrize("scheme, grid, steps, extra", [
    ("naive", [100], 3, {}), ("naive", [40, 30], 3, {}), ("naive", [10, 12, 14], 2, {}),
    ("blocked", [40, 30], 3, {"block": [8]}), ("blocked", [10, 12, 14], 2, {"block": [4, 5]}),
    ("time_tiled", [200], 7, {"tile_kind": "time_skew_1d", "t_t": 4, "t_s": [16]}),
    ("time_tiled", [200], 7, {"tile_kind": "hex_1d", "t_t": 4, "t_s": [16]}),
    ("time_tiled", [64, 64], 4, {"tile_kind": "hhc_2d", "t_t": 2, "t_s": [8, 16]}),
    ("time_tiled", [20, 24, 28], 5, {"tile_kind": "hhc_3d", "t_t": 2, "t_s": [4, 8, 8]}),
])
def test_stencil_row_count_bounds_the_trace(scheme, grid, steps, extra):
    """The size check counts at least the rows the sweep emits (exactly, but for time-tiled bounds)."""
    from models.stencil import TileShape

    name = {1: "jacobi_1d", 2: "jacobi_2d", 3: "jacobi_3d"}[len(grid)]
    table = stencil.stencil_sweep(name, grid, steps, scheme, **extra)
    shape = TileShape(extra["tile_kind"], extra["t_t"], tuple(extra["t_s"])) if scheme == "time_tiled" else None
    rows = stencil.sweep_rows(scheme, tuple(grid), steps, extra.get("block"), shape)
    assert table.num_rows <= rows and (scheme == "time_tiled" or table.num_rows == rows)


# ---- 7, 8: stencil parameters


def test_stencil_tile_sizes_are_not_times(tmp_path, capsys):
    """t_s ends in the time suffix _s but the generator declares it a sequence of grid points."""
    spec = build_workload(TILED, "w.yaml", Path("."))
    assert spec.params["t_s"] == [8, 16]
    w = tmp_path / "tiled.yaml"
    w.write_text("name: tiled\ngenerator: stencil\nparams: {stencil: jacobi_2d, grid: [64, 64], steps: 4, "
                 "scheme: time_tiled, tile_kind: hhc_2d, t_t: 2, t_s: [8, 16]}\n")
    assert main(["validate", str(w)]) == 0
    assert main(["run", str(CONFIGS / "systems" / "stencil_dram.yaml"), str(w), "--out", str(tmp_path / "r")]) == 0
    assert (tmp_path / "r" / "summary.json").is_file()
    out = capsys.readouterr().out
    assert f"{w}: ok (workload 'tiled', 242 trace rows)" in out and "written" in out


def test_suffixed_numbers_still_take_units():
    assert build_workload(SMALL, "w.yaml", Path(".")).params["array_bytes"] == 65536
    message = _one(_params(array_bytes=65536))
    assert message.startswith("w.yaml: params.array_bytes: expected a size with a unit")
    assert _one(_params(array_bytes="1.5 B")) == ("w.yaml: params.array_bytes: expected a whole number of bytes, "
                                                  "got '1.5 B'")
    # a number parameter given as a huge integer is bounded by the generator (its flops), not by int64
    float_param = {"generator": "intensity", "params": {"flops_per_byte": 10**30, "total_bytes": "1 MiB"}}
    assert _one(float_param) == (f"w.yaml: params.flops_per_byte: {10**30}; expected at most 137,438,953,472 "
                                 "(a row holds at most 2**53 flops (workloads.trace.MAX_ROW_FLOPS))")


@pytest.mark.parametrize("grid", [64, [6.5, 8], ["a", "b"], [[1], [2]], [64], [64, 64, 64], [0, 8], [True, 8]])
def test_stencil_grid_is_a_list_of_the_stencils_dimensions(grid):
    message = _one({"generator": "stencil", "params": {"stencil": "jacobi_2d", "grid": grid, "steps": 4}})
    assert message == (f"w.yaml: params.grid: {as_written(grid)}; expected a list of 2 positive integers (the interior points "
                       "along each dimension of stencil jacobi_2d)")


@pytest.mark.parametrize("params, key, expected", [
    ({"variant": "fast"}, "variant", "'fast'; expected one of orig, orig_pref, blocking, blocking_pref, pipelining"),
    ({"density": "dense"}, "density", "'dense'; expected one of uniform, plummer, gaussian, table2"),
    ({"placement": "gpu"}, "placement", "'gpu'; expected one of cpu, lap, systolic"),
    ({"blocks": 0}, "blocks", "0; expected a positive integer or null"),
])
def test_fmm_choices_are_listed_in_words(params, key, expected):
    """Not a Python tuple ('orig', ...) nor None."""
    assert _one({"generator": "fmm_ulist", "params": {"q": 4, "n_points": 1000, **params}}) == \
        f"w.yaml: params.{key}: {expected}"


def test_every_bad_choice_is_reported_with_its_key(tmp_path, capsys):
    """Two closed choices (declared as Literal) that are both wrong, and a wrong unit: three lines, each naming the
    file, the key, the value as written and the choices, before the generator runs; exit 2, nothing written."""
    from tests.conftest import refused

    w = tmp_path / "w.yaml"
    w.write_text("name: w\ngenerator: fmm_ulist\nparams: {q: 4, n_points: 1000, density: dense, variant: null, "
                 "llc_bytes: 8 GHz}\n")
    errors = refused(["run", str(DEFAULT_SYSTEM), str(w), "--param", "placement=gpu", "--out", str(tmp_path / "o")],
                     capsys, tmp_path / "o")
    assert errors == [
        f"offsim: error: {w}: params.density: 'dense'; expected one of uniform, plummer, gaussian, table2",
        f"offsim: error: {w}: params.variant: null; expected one of orig, orig_pref, blocking, blocking_pref, "
        "pipelining",
        f"offsim: error: {w}: params.llc_bytes: expected a size with a unit (B, kB, KB, MB, GB, TB, ...), got "
        "'8 GHz': 'GHz' is a frequency unit",
        f"offsim: error: --param placement=gpu (over {w}): params.placement: 'gpu'; expected one of cpu, lap, systolic",
    ], errors


@pytest.mark.parametrize("generator, params, key, expected", [
    ("stream", {"kind": ["read"], "array_bytes": "1 MiB"}, "kind",
     "['read']; expected one of read, write, copy, scale, add, triad"),
    ("random_access", {"op": True}, "op", "true; expected one of read, write, update"),
    ("stencil", {"stencil": "jacobi_2d", "grid": [8, 8], "steps": 1, "scheme": "tiled"}, "scheme",
     "'tiled'; expected one of naive, blocked, time_tiled"),
])
def test_a_choice_is_checked_before_the_generator_runs(generator, params, key, expected):
    """The workload is refused while it is read (build_workload), not by its generator."""
    problems = _messages({"generator": generator, "params": params})
    assert f"w.yaml: params.{key}: {expected}" in problems, problems
    with pytest.raises(ConfigError):
        build_workload({"generator": generator, "params": params}, "w.yaml", Path("."))


@pytest.mark.parametrize("option, key", [("stencil=heat_3d", "grid"), ("t_s=[8]", "t_s")])
def test_a_param_that_breaks_a_rule_between_parameters_is_named(tmp_path, option, key):
    """--param stencil=heat_3d makes the file's 2D grid wrong: the message names the option, as for a value the
    option gives itself."""
    message = _one(TILED, params=(option,), tmp_path=tmp_path)
    assert message.startswith(f"--param {option} (over {tmp_path / 'w.yaml'}): params.{key}: "), message


@pytest.mark.parametrize("params, key, expected", [
    ({"t_s": [8]}, "t_s", "[8]; expected a list of 2 positive integers (tile sizes in grid points"),
    ({"t_s": ["a", 8]}, "t_s", "['a', 8]; expected a list of 2 positive integers"),
    ({"tile_kind": "hhc_3d", "t_s": [8, 8]}, "tile_kind", "'hhc_3d'; expected one of hhc_2d (the tiles of a 2D "
                                                          "stencil)"),
    ({"t_t": 3}, "t_t", "3; expected even for hexagonal tiles"),
    ({"scheme": "foo"}, "scheme", "'foo'; expected one of naive, blocked, time_tiled"),
    ({"scheme": "blocked", "block": 8}, "block", "8; expected a list of 1 positive integers"),
    ({"stencil": "jacobi_9d"}, "stencil", "'jacobi_9d'; expected one of gradient_2d, heat_2d"),
])
def test_stencil_parameters_are_named(params, key, expected):
    raw = {**TILED, "params": {**TILED["params"], **params}}
    assert _one(raw).startswith(f"w.yaml: params.{key}: {expected}")


@pytest.mark.parametrize("scheme, params, key, expected", [
    ("naive", {"block": {"a": 1}}, "block", "expected a list of 1 positive integers"),
    ("naive", {"t_t": -1}, "t_t", "expected"),
    ("naive", {"tile_kind": "bogus"}, "tile_kind", "expected one of"),
    ("naive", {"tile_kind": "hex_1d"}, "tile_kind", "expected one of hhc_2d (the tiles of a 2D stencil)"),
    ("naive", {"tile_kind": "hhc_2d", "t_t": 3, "t_s": [8, 8]}, "t_t", "expected even for hexagonal tiles"),
    ("blocked", {"block": [8], "t_s": "bogus"}, "t_s", "expected a list of 2 positive integers"),
])
def test_stencil_parameters_of_another_scheme_must_still_be_valid(scheme, params, key, expected):
    """A parameter the scheme does not read is checked as its own scheme checks it: a mistyped value is refused
    rather than ignored, and a valid one is allowed (a sweep over schemes keeps one workload's values)."""
    raw = {"generator": "stencil", "params": {"stencil": "jacobi_2d", "grid": [64, 64], "steps": 4,
                                              "scheme": scheme, **params}}
    message = _one(raw)
    assert message.startswith(f"w.yaml: params.{key}: {params[key]!r}") and expected in message, message
    valid = {"block": [16], "tile_kind": "hhc_2d", "t_t": 4, "t_s": [8, 8]}
    for other in ("naive", "blocked", "time_tiled"):
        stencil.stencil_sweep("jacobi_2d", [64, 64], 4, other, **valid)  # every scheme takes the others' values


def test_time_tiled_tiles_run_whole():
    """Every tile carries its full work, at the grid's edges too (workloads/README.md): 24 hhc_2d tiles of
    tT 4, ts 8 x 32 over 64 x 64 points and 4 steps are 138,240 flops, where the grid's points are 81,920."""
    from workloads.trace import trace_summary

    table = stencil.stencil_sweep("jacobi_2d", [64, 64], 4, "time_tiled", tile_kind="hhc_2d", t_t=4, t_s=[8, 32])
    assert trace_summary(table)["flops"] == 24 * (4 * (2 * 8 + 4 - 2) // 2 * 32) * 5 == 138_240
    assert trace_summary(stencil.stencil_sweep("jacobi_2d", [64, 64], 4))["flops"] == 64 * 64 * 4 * 5


# ---- 9: values the trace builder used to refuse by row and column


@pytest.mark.parametrize("raw, key, expected", [
    ({"generator": "kernel_offload", "params": {"kernel": "gemm", "g_bytes": "1 MiB",
                                                "c_cycles_per_byte_beta": float("inf")}},
     "c_cycles_per_byte_beta", "inf; expected a finite number"),
    ({"generator": "kernel_host", "params": {"kernel": "gemm", "g_bytes": "1 MiB", "c_cycles_per_byte_beta": 1e300}},
     "c_cycles_per_byte_beta", "1e+300; expected a finite number small enough for a finite cycle count"),
    ({"generator": "crypto_host", "params": {"kernel": "aes", "g_bytes": "4 KiB", "c_cycles_per_byte_beta": 1,
                                             "beta": 10**15}}, "c_cycles_per_byte_beta",
     "c_cycles_per_byte_beta and beta must be small enough for a finite cycle count"),
    ({"generator": "intensity", "params": {"flops_per_byte": 10**400, "total_bytes": "1 MiB"}}, "flops_per_byte",
     "1000000000"),  # a whole number beyond a float: refused naming its key, not "int too large to convert"
    ({"generator": "lap_gemm", "params": {"m": 8, "n": 8, "k": 8, "target": ""}}, "target",
     "''; expected a non-empty string"),
    (_params(unit=""), "unit", "''; expected a non-empty string"),
    (_params(stage=" "), "stage", "' '; expected a non-empty string"),
    (_params(stage="s" * 300), "stage", "'" + "s" * 196 + "...; expected at most 256 characters"),  # a trace label
])
def test_parameters_are_checked_before_the_trace_is_built(raw, key, expected):
    message = _one(raw)
    assert message.startswith(f"w.yaml: params.{key}: {expected}")
    assert len(message) < 600 and "convert" not in message


# ---- 10: generator refusals name the parameter, and the --param option that set it


@pytest.mark.parametrize("option, key, expected", [
    ("array_bytes=-8 MiB", "array_bytes", "'-8 MiB'; expected a whole number of bytes >= 1"),
    ("kind=foo", "kind", "'foo'; expected one of read, write, copy, scale, add, triad"),
    ("elem_bytes=0 B", "elem_bytes", "'0 B'; expected a whole number of bytes >= 1"),
    ("elem_bytes=24 B", "array_bytes", "'64 KiB'; expected a multiple of elem_bytes (24)"),
    ("seed=-1", "seed", None),  # not a stream parameter: refused as unknown, without "(over ...)"
])
def test_generator_errors_name_the_param_option(tmp_path, option, key, expected):
    message = _one(SMALL, params=(option,), tmp_path=tmp_path)
    if expected is None:
        assert message.startswith(f"--param {option}: unknown parameter of stream")
    else:
        assert message == f"--param {option} (over {tmp_path / 'w.yaml'}): params.{key}: {expected}"


def test_generator_errors_from_the_file_name_the_file_and_key():
    assert _one(_params(array_bytes="-8 MiB")) == ("w.yaml: params.array_bytes: '-8 MiB'; expected a whole number "
                                                   "of bytes >= 1")
    assert _one(_params(kind="foo")) == "w.yaml: params.kind: 'foo'; expected one of read, write, copy, scale, add, triad"


def test_param_option_message_on_the_command_line(tmp_path, capsys):
    w = tmp_path / "w.yaml"
    w.write_text("name: small\ngenerator: stream\nparams: {kind: read, array_bytes: 64 KiB}\n")
    argv = ["run", str(DEFAULT_SYSTEM), str(w), "--param", "array_bytes=-8 MiB", "--out", str(tmp_path / "r")]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"offsim: error: --param array_bytes=-8 MiB (over {w}): params.array_bytes: '-8 MiB'; expected a whole "
        "number of bytes >= 1"]
    assert not (tmp_path / "r").exists()


def test_messages_and_hashes_ignore_how_a_value_was_given(tmp_path):
    """given/options serve messages only: the same workload from the file or from --param is equal."""
    (tmp_path / "w.yaml").write_text("name: small\ngenerator: stream\nparams: {kind: read, array_bytes: 1 MiB}\n")
    from_file = build_workload({**SMALL, "params": {"kind": "read", "array_bytes": "64 KiB"}}, "x", tmp_path)
    from_option = load_workload(tmp_path / "w.yaml", ["array_bytes=64 KiB"])
    assert from_file == from_option and from_file.as_dict() == from_option.as_dict()


def test_every_generator_parameter_has_a_plain_or_declared_type():
    """The up-front checks read the generators' annotations: each names a plain type or a sequence."""
    for name, fn in GENERATORS.items():
        for p in inspect.signature(fn).parameters.values():
            if p.name != "space":
                assert p.annotation is not inspect.Parameter.empty, (name, p.name)


@pytest.mark.parametrize("value, expected", [
    (float("inf"), "inf; expected a finite number"),
    (float("nan"), "nan; expected a finite number"),
    (10**400, "expected at most 9,223,372,036,854,775,807"),  # an integer it takes: the int64 bound
])
def test_a_parameter_of_int_or_float_is_finite_and_fits_int64(value, expected):
    # a plug-in generator may declare ``x: int | float``: neither kind lets inf, nan or a huge integer through
    import inspect

    from workloads.spec import _check_param

    param = inspect.Parameter("x", inspect.Parameter.KEYWORD_ONLY, annotation="int | float")
    _, problem = _check_param(param, value)
    assert problem is not None and expected in problem

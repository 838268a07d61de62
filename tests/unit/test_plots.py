"""Study figures: categorical axes as grouped bars from zero; comparing run directories."""

from __future__ import annotations

import json

import pytest
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from simulator.errors import InputError
from simulator.studies.compare import comparison_table, read_run
from simulator.studies.plots import Panel, Series, line_panels


@pytest.fixture
def drawn(monkeypatch):
    """The figures line_panels saves, kept for inspection."""
    figures = []
    original = Figure.savefig

    def keep(self, *args, **kwargs):
        figures.append(self)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", keep)
    return figures


def test_a_categorical_axis_is_drawn_as_grouped_bars_from_zero(tmp_path, drawn):
    series = (Series("orig", ("cpu", "lap-dram", "lap-llc"), (100.0, 97.0, 98.0)),
              Series("blocking", ("cpu", "lap-dram", "lap-llc"), (100.0, 96.0, 99.0)))
    line_panels([Panel("", series)], tmp_path / "f.png", xlabel="placement", ylabel="cycles")
    ax = drawn[0].axes[0]
    bars = [p for p in ax.patches if isinstance(p, Rectangle)]
    assert len(bars) == 6 and not ax.lines
    assert ax.get_ylim()[0] == 0.0
    lefts = sorted(round(b.get_x() + b.get_width() / 2, 6) for b in bars)
    assert lefts == [-0.2, 0.2, 0.8, 1.2, 1.8, 2.2]  # two bars side by side in each category


def test_a_numeric_axis_stays_a_line(tmp_path, drawn):
    line_panels([Panel("", (Series("a", (1, 2, 4), (3.0, 2.0, 1.0)),))], tmp_path / "f.png", xlabel="x", ylabel="y")
    ax = drawn[0].axes[0]
    assert len(ax.lines) == 1 and not ax.patches


def _run_dir(path, name, time_s, energy):
    path.mkdir()
    (path / "summary.json").write_text(json.dumps({
        "system_name": name, "workload_name": "w", "simulated_time_s": time_s,
        "energy_total_j": sum(energy.values()), "energy_by_component_j": energy}))
    return path


def test_compare_lists_runs_in_order_with_every_component(tmp_path, capsys):
    a = _run_dir(tmp_path / "a", "sys-a", 1e-3, {"host": 2e-3, "dram": 1e-3})
    b = _run_dir(tmp_path / "b", "sys-b", 2e-3, {"host": 1e-3, "lap": 5e-4})
    table = comparison_table([read_run(a), read_run(b)])
    assert table[0] == ("run", "system", "workload", "time", "energy", "host", "dram", "lap")
    assert table[1][:5] == ("a", "sys-a", "w", "1 ms", "3 mJ")
    assert table[2][3] == "2 ms"
    from simulator.cli import main

    assert main(["compare", str(a), str(b), "--png", str(tmp_path / "c.png")]) == 0
    assert "(-: a component the run's system does not have)" in capsys.readouterr().out
    assert (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"


def test_compare_shows_a_component_a_run_does_not_have_as_not_applicable(tmp_path):
    """A run without a LAP spent no LAP energy, but "lap 0 J" would say its LAP was idle: it reads "-"."""
    a = _run_dir(tmp_path / "a", "sys-a", 1e-3, {"host": 2e-3, "dram": 1e-3})
    b = _run_dir(tmp_path / "b", "sys-b", 2e-3, {"host": 1e-3, "lap": 0.0})
    header, row_a, row_b = comparison_table([read_run(a), read_run(b)])
    assert dict(zip(header, row_a))["lap"] == "-" and dict(zip(header, row_b))["dram"] == "-"
    assert dict(zip(header, row_b))["lap"] == "0 J"  # a LAP it has, idle


def test_compare_shows_an_energy_the_run_could_not_price_as_not_known(tmp_path, capsys):
    """offsim run writes null for an energy it cannot price (a memory whose preset declares no currents, and so
    the total): compare reads such a run, shows "not known" and says why, and draws the energies it knows."""
    a = _run_dir(tmp_path / "a", "sys-a", 1e-3, {"host": 2e-3, "dram": 1e-3})
    b = tmp_path / "b"
    b.mkdir()
    (b / "summary.json").write_text(json.dumps({
        "system_name": "sys-b", "workload_name": "w", "simulated_time_s": 2e-3, "energy_total_j": None,
        "energy_by_component_j": {"host": 1e-3, "hbm": None}}))
    header, row_a, row_b = comparison_table([read_run(a), read_run(b)])
    assert dict(zip(header, row_b)) == {"run": "b", "system": "sys-b", "workload": "w", "time": "2 ms",
                                        "energy": "not known", "host": "1 mJ", "dram": "-", "hbm": "not known"}
    assert dict(zip(header, row_a))["hbm"] == "-"
    from simulator.cli import main

    assert main(["compare", str(a), str(b), "--png", str(tmp_path / "c.png")]) == 0
    assert "(not known: an energy the run could not price" in capsys.readouterr().out
    assert (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"


def test_compare_refuses_what_is_not_a_run_directory(tmp_path):
    with pytest.raises(InputError, match="no summary.json; expected a run directory"):
        read_run(tmp_path)
    (tmp_path / "w.yaml").write_text("name: w\n")
    with pytest.raises(InputError, match=r"w.yaml: a file; expected a run directory written by offsim run$"):
        read_run(tmp_path / "w.yaml")
    (tmp_path / "summary.json").write_text("{not json")
    with pytest.raises(InputError, match="summary.json: unreadable"):
        read_run(tmp_path)


@pytest.mark.parametrize("text, says", [
    ("{}", "summary.json: system_name: missing; expected the summary.json offsim run writes"),
    ("[1, 2]", "summary.json: a JSON list; expected the summary.json offsim run writes (an object)"),
    ('{"system_name": "s", "workload_name": "w", "simulated_time_s": "1 s", "energy_total_j": 1, '
     '"energy_by_component_j": {}}', "summary.json: simulated_time_s: '1 s'; expected a finite number >= 0 of seconds"),
    ('{"system_name": "s", "workload_name": "w", "simulated_time_s": 1' + "0" * 400 + ', "energy_total_j": 1, '
     '"energy_by_component_j": {}}', "summary.json: simulated_time_s: 1000"),  # beyond a float: no OverflowError
    ('{"system_name": "s", "workload_name": "w", "simulated_time_s": null, "energy_total_j": 1, '
     '"energy_by_component_j": {}}', "summary.json: simulated_time_s: null; expected a finite number >= 0 of seconds"),
    ('{"system_name": "s", "workload_name": "w", "simulated_time_s": 1, "energy_total_j": 1, '
     '"energy_by_component_j": {"host": "1 J"}}',
     "summary.json: energy_by_component_j.host: '1 J'; expected a finite number >= 0 of joules or null (not known)"),
    ('{"system_name": "s", "workload_name": "w", "simulated_time_s": 1, "energy_total_j": -1, '
     '"energy_by_component_j": {}}', "summary.json: energy_total_j: -1; expected a finite number >= 0 of joules"),
    ('{"system_name": "s", "system_name": "t"}', "summary.json: unreadable (RepeatedKey"),
    ('{"system_name": "s", "workload_name": "w", "simulated_time_s": 1, "energy_total_j": 1.7e308, '
     '"energy_by_component_j": {"a": 1.7e308, "b": 1.7e308}}',  # each finite, their stack not: no OverflowError
     "summary.json: energy_by_component_j: its energies add up to more than a float holds"),
])
def test_compare_names_the_key_of_a_summary_it_cannot_read(tmp_path, text, says):
    """A summary.json that is not what offsim run writes is refused naming the file and the key at fault (a list,
    an object without the keys, a value of the wrong type), not with Python's own words."""
    (tmp_path / "summary.json").write_text(text)
    with pytest.raises(InputError) as info:
        read_run(tmp_path)
    assert says in str(info.value)


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_compare_refuses_a_summary_that_is_not_a_regular_file_without_reading_it(tmp_path, kind):
    """A FIFO would block the read and /dev/zero would fill the memory: both are refused as configs are."""
    import os

    if kind == "fifo":
        os.mkfifo(tmp_path / "summary.json")
    else:
        (tmp_path / "summary.json").symlink_to("/dev/zero")
    with pytest.raises(InputError, match=r"summary.json: not a regular file \(a device, pipe or socket\)"):
        read_run(tmp_path)


def test_runs_of_one_directory_name_are_labelled_by_their_paths(tmp_path):
    from simulator.studies.compare import read_runs

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    one = _run_dir(tmp_path / "a" / "x", "s1", 1.0, {"host": 1.0})
    two = _run_dir(tmp_path / "b" / "x", "s2", 2.0, {"host": 2.0})
    other = _run_dir(tmp_path / "y", "s3", 3.0, {"host": 3.0})
    runs = read_runs([one, two, other])
    assert [r.label for r in runs] == [str(one), str(two), "y"]
    assert comparison_table(runs)[1][0] == str(one)


def test_a_total_with_a_part_not_known_is_not_known():
    # one point's HBM energy is not known (NaN): its total energy is not known, not the sum of the rest
    import math

    import pandas as pd

    from simulator.studies.plots import format_value
    from simulator.studies.report import ENERGY_TOTAL, quantity_table
    rows = [("a", "energy/host", 2.0), ("a", "energy/hbm", float("nan")), ("b", "energy/host", 3.0),
            ("b", "energy/hbm", 1.0), ("a", "system", 7.0)]
    table = pd.DataFrame([{"run_hash": h, "component": c, "quantity": "total", "value": v, "unit": "J", "x": 1}
                          for h, c, v in rows])
    data, unit = quantity_table(table, ["x"], ENERGY_TOTAL)
    values = dict(zip(data["run_hash"], data["value"]))
    assert unit == "J" and math.isnan(values["a"]) and values["b"] == 4.0
    assert format_value(values["a"], "J") == "not known" and format_value(values["b"], "J") == "4 J"

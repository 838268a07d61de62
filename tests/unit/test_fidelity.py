"""A reproduction report's counts and reasons: the true median, fitted entries counted apart, self-contradicting
entries listed apart, misses without a reason flagged."""

from __future__ import annotations

from pathlib import Path

import pytest

from simulator.studies.fidelity import median, tally
from simulator.studies.references import Reason, load_reasons, reason_for
from simulator.studies.reproduce import Comparison, Reproduction, Section, render_markdown


def _row(label: str, ours: float, key: bool = True) -> Comparison:
    return Comparison(label, 1.0, ours, "x", "000 T (000:L1)", key=("T", label, "c") if key else None)


def _rep() -> Reproduction:
    rows = (_row("close", 1.05), _row("near", 0.85), _row("far", 1.5), _row("fit", 1.3), _row("self", 3.0),
            _row("explained", 0.5), _row("missing", None), _row("given", 1.0))
    model = (_row("model vs sim", 2.0, key=False),)
    return Reproduction("t", "test", (Section("published", rows), Section("checks", model, reference_header="model")),
                        ())


REASONS = [Reason("t", "T", "fit", "*", "fitted", "fitted to it", "a module"),
           Reason("t", "T", "self", "c", "contradiction", "table against text", "000:L1"),
           Reason("t", "T", "given", "c", "input", "a parameter of the run", "a config"),
           Reason("t", "T", "explained", "*", "miss", "a known cause", "a README section"),
           Reason("t", "T", "close", "c", "miss", "not shown: the row is within 20 %", "-"),
           Reason("other", "*", "*", "*", "miss", "another target", "-")]


def test_median_takes_the_mean_of_the_middle_two():
    assert median([3.0, 1.0, 2.0]) == 2.0
    assert median([4.0, 1.0, 3.0, 2.0]) == 2.5
    assert median([]) is None


def test_tally_counts_fitted_and_contradictions_apart():
    t = tally(_rep(), REASONS)
    assert (t.compared, t.checked, t.fitted, t.contradictions, t.not_produced) == (6, 4, 2, 1, 1)
    assert (t.within_close, t.within_miss, t.fitted_within_miss) == (1, 2, 1)
    assert t.median_deviation == pytest.approx((0.15 + 0.5) / 2)
    assert t.unexplained == 2  # "far" and the model row: beyond 20 %, no reason


def test_most_specific_reason_wins():
    reasons = [Reason("t", "*", "*", "*", "miss", "general", "-"), Reason("t", "T", "r", "c", "miss", "specific", "-")]
    assert reason_for(reasons, "t", ("T", "r", "c")).cause == "specific"
    assert reason_for(reasons, "t", ("T", "x", "c")).cause == "general"
    assert reason_for(reasons, "u", ("T", "r", "c")) is None


def test_a_row_within_20_percent_falls_back_on_a_broader_fitted_entry():
    # the specific miss reason does not apply to a row that does not miss; the fitted column still does
    from simulator.studies.fidelity import standing

    reasons = [Reason("t", "T", "*", "c", "fitted", "the column is fitted", "-"),
               Reason("t", "T", "close", "c", "miss", "a miss at one entry", "-")]
    section = Section("published", (_row("close", 1.05),))
    assert standing("t", section, section.rows[0], reasons).reason.kind == "fitted"
    assert standing("t", section, _row("close", 1.5), reasons).reason.kind == "miss"


def test_report_puts_reasons_in_rows_and_contradictions_apart():
    text = render_markdown(_rep(), Path("."), False, REASONS)
    lines = text.splitlines()
    row = {label: next(ln for ln in lines if ln.startswith(f"| {label} |")) for label in ("far", "fit", "explained", "close")}
    assert "no reason recorded" in row["far"]
    assert "fitted: fitted to it (a module)" in row["fit"]
    assert "input: a parameter of the run (a config)" in next(ln for ln in lines if ln.startswith("| given |"))
    assert "a known cause (a README section)" in row["explained"]
    assert "not shown" not in row["close"]
    apart = text.split("## Where the source contradicts itself")[1]
    assert "| self |" in apart and "table against text (000:L1)" in apart
    assert text.count("| self |") == 1
    assert "**Summary:** 6 published figures compared; 4 neither fitted to nor inputs: 1 (25 %) within 10 %, 2 (50 %)" in text


def test_reasons_table_is_well_formed():
    assert load_reasons()  # every row validated on load


def test_load_reasons_rejects_an_unknown_kind(tmp_path):
    path = tmp_path / "reasons.csv"
    path.write_text("target,table,row,column,kind,cause,evidence\nt,T,r,c,excuse,why,where\n")
    with pytest.raises(ValueError, match="kind must be one of"):
        load_reasons(path)


def test_a_published_upper_bound_counts_as_met_at_or_below_it_and_by_its_excess_above():
    from simulator.studies.comparisons import published
    from simulator.studies.references import ReferenceRow

    def bound_row(ours: float) -> Comparison:
        ref = ReferenceRow(table="T", row="r", column="error (under)", value="2", unit="%", source="a source")
        return published(ref, "error (under)", ours)

    below, above = bound_row(0.5), bound_row(3.0)
    assert below.upper_bound and below.deviation == pytest.approx(-0.75) and below.judged_deviation == 0.0
    assert above.judged_deviation == pytest.approx(0.5)
    t = tally(Reproduction("t", "test", (Section("bounds", (below, above)),), ()), [])
    assert (t.checked, t.within_close, t.within_miss, t.unexplained) == (2, 1, 1, 1)  # the exceeded one has no reason
    value = Comparison("error", 2.0, 0.5, "%", "a source", key=("T", "r", "error"))
    assert not value.upper_bound and value.judged_deviation == pytest.approx(-0.75)


def test_an_upper_bound_of_zero_or_below_is_met_at_or_below_it():
    zero = Comparison("x (under)", 0.0, 0.0, "%", "a source", key=("T", "r", "x (under)"))
    negative = Comparison("x (under)", -2.0, -3.0, "%", "a source", key=("T", "r", "x (under)"))
    over = Comparison("x (under)", -2.0, -1.0, "%", "a source", key=("T", "r", "x (under)"))
    assert zero.judged_deviation == 0.0 and negative.judged_deviation == 0.0
    above_zero = Comparison("x (under)", 0.0, 0.1, "%", "a source", key=("T", "r", "x (under)"))
    # above a bound of 0 or below, ours / bound - 1 measures nothing: a miss, not "not produced"
    assert over.judged_deviation == float("inf") and above_zero.judged_deviation == float("inf")

"""How closely a reproduction meets its published figures: each row's standing and the report's counts.

A row of a reproduction report compares ours with a reference value. Published rows carry the key of
their entry in ``results/reference/<target>.csv`` (table, row, column); the others set our simulation
beside a model. The reasons table (``results/reference/reasons.csv``, read by
``simulator.studies.references.load_reasons``) says, per target and entry, why a row misses by more
than ``MISS_FRACTION``, which entries were used to fit a parameter, and where the source contradicts
itself, and which entries are parameters the simulation runs with. Rows without a key are looked up by (section
title, row label, reference heading).

The counts: published figures compared (ours produced, contradictions left out), split into those used
for fitting or as inputs and the rest; of the rest, how many lie within 10 % and 20 % and the median of |ours /
published - 1| (the mean of the middle two for an even count); a published upper bound counts by how far ours
exceeds it (``Comparison.judged_deviation``). Deviations are fractions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from simulator.studies.comparisons import Comparison, Reproduction, Section
from simulator.studies.references import Reason, reason_for

CLOSE_FRACTION = 0.10
MISS_FRACTION = 0.20


def median(values: Iterable[float]) -> float | None:
    """The median (mean of the middle two for an even count); None for no values."""
    xs = sorted(values)
    if not xs:
        return None
    mid = len(xs) // 2
    return xs[mid] if len(xs) % 2 else (xs[mid - 1] + xs[mid]) / 2


def row_key(section: Section, row: Comparison) -> tuple[str, str, str]:
    """The entry key a reason is looked up by: the published entry, else (section, label, reference heading)."""
    return row.key or (section.title, row.label, section.reference_header)


def misses(row: Comparison) -> bool:
    """Whether ours parts from the reference by more than ``MISS_FRACTION`` (a bound: exceeds it by more)."""
    dev = row.judged_deviation
    return dev is not None and abs(dev) > MISS_FRACTION


@dataclass(frozen=True)
class Standing:
    """One row's standing: the reason that applies (None: none), and whether it counts as explained."""

    reason: Reason | None
    explained: bool

    @property
    def fitted(self) -> bool:
        """Used for fitting or as an input: counted apart."""
        return self.reason is not None and self.reason.kind in ("fitted", "input")

    @property
    def contradiction(self) -> bool:
        return self.reason is not None and self.reason.kind == "contradiction"

    def cell(self) -> str:
        """The report's reason cell."""
        if self.reason is None:
            return "" if self.explained else "**no reason recorded**"
        prefix = {"fitted": "fitted: ", "input": "input: ",
                  "contradiction": "source contradicts itself: "}.get(self.reason.kind, "")
        return f"{prefix}{self.reason.cause} ({self.reason.evidence})"


def standing(target: str, section: Section, row: Comparison, reasons: list[Reason]) -> Standing:
    """The reason that applies to ``row``: a fitted, input or contradiction entry always, a miss reason only when
    the row misses; a missing row without a reason is unexplained (a non-published row's note counts)."""
    # a miss reason only for a row that misses: one that does not falls back on a broader fitted or input entry
    reason = reason_for(reasons, target, row_key(section, row), lambda r: r.kind != "miss" or misses(row))
    explained = reason is not None or not misses(row) or (row.key is None and bool(row.note))
    return Standing(reason, explained)


@dataclass(frozen=True)
class Tally:
    """A report's counts over its published rows (fractions for the median)."""

    compared: int
    checked: int
    within_close: int
    within_miss: int
    median_deviation: float | None
    fitted: int
    fitted_within_miss: int
    contradictions: int
    unexplained: int
    not_produced: int

    def sentence(self) -> str:
        """The summary in one line."""
        med = "—" if self.median_deviation is None else f"{self.median_deviation * 100:.1f} %"
        pct = (lambda n: f"{100 * n / self.checked:.0f} %") if self.checked else (lambda n: "—")
        return (f"{self.compared} published figures compared; {self.checked} neither fitted to nor inputs: "
                f"{self.within_close} ({pct(self.within_close)}) within 10 %, {self.within_miss} "
                f"({pct(self.within_miss)}) within 20 %, median |deviation| {med}; {self.fitted} used for fitting or as inputs "
                f"({self.fitted_within_miss} within 20 %); {self.contradictions} self-contradicting source entries "
                f"listed apart; {self.not_produced} published values not produced; {self.unexplained} rows beyond "
                "20 % without a reason.")


def tally(rep: Reproduction, reasons: list[Reason]) -> Tally:
    """The counts of reproduction ``rep`` under ``reasons``."""
    checked: list[float] = []
    fitted: list[float] = []
    contradictions = unexplained = not_produced = 0
    for sec in rep.sections:
        for row in sec.rows:
            st = standing(rep.target, sec, row, reasons)
            unexplained += not st.explained
            if row.key is None:
                continue
            if st.contradiction:
                contradictions += 1
            elif row.judged_deviation is None:
                not_produced += 1
            else:
                (fitted if st.fitted else checked).append(abs(row.judged_deviation))
    return Tally(compared=len(checked) + len(fitted), checked=len(checked),
                 within_close=sum(d <= CLOSE_FRACTION for d in checked),
                 within_miss=sum(d <= MISS_FRACTION for d in checked), median_deviation=median(checked),
                 fitted=len(fitted), fitted_within_miss=sum(d <= MISS_FRACTION for d in fitted),
                 contradictions=contradictions, unexplained=unexplained, not_produced=not_produced)

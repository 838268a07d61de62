"""What a reproduction report is made of: rows setting ours beside a reference value, sections, the whole.

A ``Comparison`` holds a reference value (published, or a model where its section says so), ours, their unit
and the source; a published row also carries the key of its entry in ``results/reference/<target>.csv``
(``published``). Deviations are fractions (ours / reference - 1). A published bound (an entry whose column ends in
"(under)": the source says the value stays below it) is met by any value at or below it; the counts judge such a row by
how far ours exceeds the bound (``judged_deviation``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from simulator.studies.references import ReferenceRow

#: the end of a reference column that states an upper bound (module docstring)
UPPER_BOUND_MARK = "(under)"


@dataclass(frozen=True)
class Comparison:
    """A reference value (published, or the model where a section says so) and ours, in ``unit``."""

    label: str
    reference: float
    ours: float | None
    unit: str
    source: str
    note: str = ""
    key: tuple[str, str, str] | None = None  # the published entry (table, row, column); None: not a published value

    @property
    def upper_bound(self) -> bool:
        """Whether the reference is a bound ours should stay at or below, not a value to meet: its entry's column
        ends with UPPER_BOUND_MARK."""
        return self.key is not None and self.key[2].endswith(UPPER_BOUND_MARK)

    @property
    def deviation(self) -> float | None:
        """ours / reference - 1 (None when ours is missing or the reference is zero)."""
        if self.ours is None or self.reference == 0:
            return None
        return self.ours / self.reference - 1.0

    @property
    def judged_deviation(self) -> float | None:
        """The deviation the counts judge: ``deviation``, or for an upper bound how far ours exceeds it (0 when met)."""
        if not self.upper_bound or self.ours is None:
            return self.deviation
        if self.ours <= self.reference:
            return 0.0
        return self.deviation if self.reference > 0 else math.inf  # above a bound of 0 or below: a miss


def published(r: ReferenceRow, label: str, ours: float | None, note: str = "") -> Comparison:
    """Ours beside published value ``r`` (its unit, citation and entry key)."""
    return Comparison(label, r.number, ours, r.unit, r.source, note, key=(r.table, r.row, r.column))


@dataclass(frozen=True)
class Section:
    """One Markdown table of comparisons, with its column headings and a paragraph of context."""

    title: str
    rows: tuple[Comparison, ...]
    text: str = ""
    reference_header: str = "published"
    ours_header: str = "ours"


@dataclass(frozen=True)
class Reproduction:
    """What a target produced: sections, figure files (absolute paths) and notes."""

    target: str
    title: str
    sections: tuple[Section, ...]
    figures: tuple[Path, ...]
    notes: tuple[str, ...] = field(default_factory=tuple)

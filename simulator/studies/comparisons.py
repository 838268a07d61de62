"""What a reproduction report is made of: rows setting ours beside a reference value, sections, the whole.

A ``Comparison`` holds a reference value (published, or a model where its section says so), ours, their unit
and the source; a published row also carries the key of its entry in ``results/reference/<target>.csv``
(``published``). Deviations are fractions (ours / reference - 1).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from simulator.studies.references import ReferenceRow


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
    def deviation(self) -> float | None:
        """ours / reference - 1 (None when ours is missing or the reference is zero)."""
        if self.ours is None or self.reference == 0:
            return None
        return self.ours / self.reference - 1.0


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

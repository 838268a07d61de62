"""Published reference values: one CSV per source document in ``results/reference``.

Each row is one printed value with its table, row and column labels, its unit and a citation
of the source line it comes from (``003 Table 5 (003:L373)``); the reproduction targets
(``simulator.studies.reproduce``) and the FMM study compare against them. A column label ending in "(under)"
marks an upper bound the source states ("less than 3 %"): a report counts it as met by any value at or below it
(``comparisons.Comparison.judged_deviation``). Other qualifiers, "(up to)", "(from)", "(to)", name the largest or
smallest value the source observed, and are compared as values.
"""

from __future__ import annotations

from collections.abc import Callable

import csv
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from simulator.config.loader import PROJECT_ROOT

REFERENCE_DIR = PROJECT_ROOT / "results" / "reference"
REFERENCE_COLUMNS = ("table", "row", "column", "value", "unit", "source")
SOURCE_PATTERN = re.compile(r"^00[0-4] .+\(00[0-4]:L\d+\)$")


@dataclass(frozen=True)
class ReferenceRow:
    """One published value: table, row and column labels, value (as printed, normalised), unit, citation."""

    table: str
    row: str
    column: str
    value: str
    unit: str
    source: str

    @property
    def number(self) -> float:
        """The value as a float (raises ValueError for a non-numeric value)."""
        return float(self.value)


def reference_table(name: str, table: str, columns: Sequence[str],
                    directory: Path = REFERENCE_DIR) -> dict[int, tuple[float, ...]]:
    """Published values of one table of ``<name>.csv`` whose rows are ``q=<int>``: {q: (column values...)}.

    KeyError naming the file, table, row and column when a requested value is missing.
    """
    cells = {(r.row, r.column): r.number for r in load_reference(name, directory) if r.table == table}
    qs = sorted({int(row[2:]) for row, _ in cells if row.startswith("q=")})
    out = {}
    for q in qs:
        try:
            out[q] = tuple(cells[(f"q={q}", col)] for col in columns)
        except KeyError as exc:
            raise KeyError(f"{name}.csv: {table}, q={q}: no value for column {exc.args[0][1]!r}") from None
    return out


def _records(path: Path, columns: tuple[str, ...]) -> list[tuple[int, list[str]]]:
    """(line number, fields) of each row of CSV ``path``; ValueError naming the file (and row) if the header is not
    ``columns`` or a row has another number of fields."""
    with Path(path).open(newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if tuple(header or ()) != columns:
            raise ValueError(f"{path}: header must be {','.join(columns)}, got {header!r}")
        records = list(enumerate(reader, start=2))
    for lineno, rec in records:
        if len(rec) != len(columns):
            raise ValueError(f"{path}:{lineno}: expected {len(columns)} fields, got {len(rec)}")
    return records


def load_reference(name: str, directory: Path = REFERENCE_DIR) -> list[ReferenceRow]:
    """Rows of ``<directory>/<name>.csv``; ValueError naming the file and row if a row is malformed."""
    path = Path(directory) / f"{name}.csv"
    rows = []
    for lineno, rec in _records(path, REFERENCE_COLUMNS):
        row = ReferenceRow(*rec)
        if not SOURCE_PATTERN.match(row.source):
            raise ValueError(f"{path}:{lineno}: source must cite a table and a line like "
                             f"'000 Table 4.4 (000:L1034)', got {row.source!r}")
        if not row.table or not row.column or not row.value:
            raise ValueError(f"{path}:{lineno}: table, column and value must not be empty")
        rows.append(row)
    if not rows:
        raise ValueError(f"{path}: no rows")
    return rows


def index_rows(rows: list[ReferenceRow]) -> dict[tuple[str, str, str], ReferenceRow]:
    """The rows by (table, row, column)."""
    return {(r.table, r.row, r.column): r for r in rows}


# --------------------------------------------------------------------------- reasons

REASONS_FILE = REFERENCE_DIR / "reasons.csv"
REASON_COLUMNS = ("target", "table", "row", "column", "kind", "cause", "evidence")
#: miss: why ours parts from the published value by more than 20 %; fitted: the entry was used to fit a
#: parameter, input: the entry is a parameter the simulation runs with (both counted apart); contradiction: the
#: source contradicts itself there (counted neither way)
REASON_KINDS = ("miss", "fitted", "input", "contradiction")
ANY = "*"  # in a reason's table, row or column: matches every value


@dataclass(frozen=True)
class Reason:
    """Why a report entry is what it is: target, entry key (table, row, column; ``*`` for any), kind, cause
    and where the evidence is (a results README section, a module, a source line)."""

    target: str
    table: str
    row: str
    column: str
    kind: str
    cause: str
    evidence: str

    def matches(self, target: str, key: tuple[str, str, str]) -> bool:
        """Whether this reason covers entry ``key`` of ``target``."""
        return self.target == target and all(p in (ANY, k) for p, k in zip((self.table, self.row, self.column), key))

    @property
    def wildcards(self) -> int:
        """How many of table, row, column are ``*`` (fewer: more specific)."""
        return sum(p == ANY for p in (self.table, self.row, self.column))


def load_reasons(path: Path = REASONS_FILE) -> list[Reason]:
    """Rows of the reasons table; ValueError naming the file and row if a row is malformed."""
    reasons = []
    for lineno, rec in _records(path, REASON_COLUMNS):
        reason = Reason(*rec)
        if reason.kind not in REASON_KINDS:
            raise ValueError(f"{path}:{lineno}: kind must be one of {', '.join(REASON_KINDS)}, got {reason.kind!r}")
        if not all(rec):
            raise ValueError(f"{path}:{lineno}: no field may be empty (use '*' for any table, row or column)")
        reasons.append(reason)
    return reasons


def reason_for(reasons: list[Reason], target: str, key: tuple[str, str, str],
               applies: Callable[[Reason], bool] = lambda r: True) -> Reason | None:
    """The most specific reason covering entry ``key`` of ``target`` of those that ``applies`` accepts (None: none
    does); of equally specific ones, the first in the file."""
    found = [r for r in reasons if r.matches(target, key) and applies(r)]
    return min(found, key=lambda r: r.wildcards) if found else None

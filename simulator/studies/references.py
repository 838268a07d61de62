"""Published reference values: one CSV per source document in ``results/reference``.

Each row is one printed value with its table, row and column labels, its unit and a citation
of the seed line it comes from (``003 Table 5 (003:L373)``); the reproduction targets
(``simulator.studies.reproduce``) and the FMM study compare against them.
"""

from __future__ import annotations

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


def load_reference(name: str, directory: Path = REFERENCE_DIR) -> list[ReferenceRow]:
    """Rows of ``<directory>/<name>.csv``; ValueError naming the file and row if a row is malformed."""
    path = Path(directory) / f"{name}.csv"
    with path.open(newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if tuple(header or ()) != REFERENCE_COLUMNS:
            raise ValueError(f"{path}: header must be {','.join(REFERENCE_COLUMNS)}, got {header!r}")
        rows = []
        for lineno, rec in enumerate(reader, start=2):
            if len(rec) != len(REFERENCE_COLUMNS):
                raise ValueError(f"{path}:{lineno}: expected {len(REFERENCE_COLUMNS)} fields, got {len(rec)}")
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

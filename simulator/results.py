"""Results of a run: one long-form table of (component, quantity, value, unit), and its views.

Components are named by kind: ``system``, ``host``, ``cache/<level>``,
``dram``, ``energy/<component>`` (one quantity per energy category, J),
``stage/<unit>/<stage>`` (timeline), ``accel/<name>`` (each accelerator's counters),
``actions/<component>/<requester>`` (the actions a requester caused there, in
their units) and ``energy_by_requester/<component>/<requester>`` (one
quantity per energy category, J; they sum to ``energy/<component>``).
``summary()`` nests the same numbers for ``summary.json``; ``to_arrow()``
gives the table written as ``results.parquet``, ``to_pandas()`` the same
table as a DataFrame. Results add up (``a + b`` sums equal rows) so that
points of a study can be combined.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported when a table is asked for: pandas for to_pandas only, which a run does not call
    import pandas as pd
    import pyarrow as pa

COLUMNS = ("component", "quantity", "value", "unit")


@dataclass
class Results:
    """A run's numbers (long form) and metadata (names, hashes)."""

    rows: list[tuple[str, str, float, str]] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    def add(self, component: str, quantity: str, value: float, unit: str) -> None:
        """Append one number with its unit."""
        self.rows.append((component, quantity, float(value), unit))

    def value(self, component: str, quantity: str) -> float:
        """The value of one (component, quantity); KeyError if absent."""
        for c, q, v, _ in self.rows:
            if c == component and q == quantity:
                return v
        raise KeyError(f"{component}/{quantity}")

    def __add__(self, other: Results) -> Results:
        """Sum equal (component, quantity, unit) rows; keep the others as they are."""
        totals: dict[tuple[str, str, str], float] = {}
        for c, q, v, u in [*self.rows, *other.rows]:
            totals[(c, q, u)] = totals.get((c, q, u), 0.0) + v
        return Results([(c, q, v, u) for (c, q, u), v in totals.items()], {"combined": [self.meta, other.meta]})

    def to_arrow(self) -> pa.Table:
        """The long-form table (:data:`COLUMNS`; value in the row's unit) as an Arrow table: the content
        of ``results.parquet``, built without pandas (``simulator.config.arrow``)."""
        import pyarrow as pa

        from simulator.config.arrow import arrow_array

        columns = list(zip(*self.rows)) if self.rows else [(), (), (), ()]
        types = (pa.string(), pa.string(), pa.float64(), pa.string())
        return pa.Table.from_arrays([arrow_array(list(c), t) for c, t in zip(columns, types)], names=list(COLUMNS))

    def to_pandas(self) -> pd.DataFrame:
        """The long-form table: component, quantity, value, unit."""
        import pandas as pd

        return pd.DataFrame(self.rows, columns=list(COLUMNS))

    def summary(self) -> dict[str, Any]:
        """Nested view for summary.json; every key carries its unit (suffix or the summary.json table of simulator/README.md)."""
        out: dict[str, Any] = {k: v for k, v in self.meta.items()}
        energy: dict[str, dict[str, float]] = {}
        caches: dict[str, dict[str, float]] = {}
        stages: dict[str, dict[str, float]] = {}
        dram: dict[str, Any] = {}
        host: dict[str, Any] = {}
        actions: dict[str, dict[str, dict[str, Any]]] = {}
        by_requester: dict[str, dict[str, dict[str, float]]] = {}
        requester_total: dict[str, float] = {}
        for c, q, v, _u in self.rows:
            val = int(v) if float(v).is_integer() and abs(v) < 2**53 and not q.endswith(("_s", "_j", "_w")) else v
            if c == "system":
                out[q] = val
            elif c.startswith("energy/"):
                energy.setdefault(c[len("energy/"):], {})[q] = v
            elif c.startswith(("actions/", "energy_by_requester/")):
                kind, component, who = c.split("/", 2)
                if kind == "actions":
                    actions.setdefault(component, {}).setdefault(who, {})[q] = val
                else:
                    by_requester.setdefault(component, {}).setdefault(who, {})[q] = v
                    requester_total[who] = requester_total.get(who, 0.0) + v
            elif c.startswith("cache/"):
                caches.setdefault(c[len("cache/"):], {})[q] = val
            elif c.startswith("stage/"):
                stages.setdefault(c[len("stage/"):], {})[q] = val
            elif c == "dram":
                dram[q] = val
            elif c == "host":
                host[q] = val
            else:
                out.setdefault(c, {})[q] = val
        by_component = {k: sum(cats.values()) for k, cats in energy.items()}
        out["energy_total_j"] = sum(by_component.values())
        out["energy_by_component_j"] = by_component
        out["energy_j"] = energy
        out["actions"] = actions
        out["energy_by_requester_j"] = by_requester
        out["energy_total_by_requester_j"] = requester_total
        if "dram" in energy:
            dram["energy_j"] = energy["dram"]
        out["host"] = host
        out["caches"] = caches
        out["dram"] = dram
        out["stages"] = stages
        return out

    def summary_json(self) -> str:
        """summary() as stable JSON text (sorted keys; non-finite numbers as null)."""
        def clean(x):
            if isinstance(x, dict):
                return {k: clean(v) for k, v in x.items()}
            if isinstance(x, list):
                return [clean(v) for v in x]
            if isinstance(x, float) and not math.isfinite(x):
                return None
            return x
        return json.dumps(clean(self.summary()), indent=2, sort_keys=True)

"""Checking a trace's accelerator rows and commands against a built system, before it is replayed.

The host replays the trace's rows; an accelerator does the work of the
``offload`` commands it is sent. No accelerator kind declares trace-row
operations of its own, so a row whose ``unit`` is an accelerator would do
nothing: it is refused, naming the row, rather than dropped. Every ``offload``
command is checked by its target unit against its kind's command schema
(``AcceleratorUnit.check_command``: unknown, missing and bad keys, the unit's
limits, regions within the memory) and completed with its defaults, its regions
included, and parsed once for the unit to run (``AcceleratorUnit.checked_command``); a
``wait`` takes only its target. ``offsim run`` checks a trace so
before replaying it, and ``offsim validate SYSTEM TRACE`` the same way.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from simulator.accel.command_schema import TARGET_KEY, CommandError
from simulator.config.arrow import arrow_scalar, to_numpy
from simulator.system import System
from workloads.trace import TraceError


def check_commands(system: System, table: pa.Table, source: str, decoded: dict[int, dict[str, Any]],
                   row_offset: int = 0) -> dict[int, tuple[dict[str, Any], Any]]:
    """The (params, parsed command) of every offload/wait row of ``table`` (``decoded``: validation's
    params, by row index) as its target unit will run them, defaults filled in (a wait's parsed command
    is None: it has none); TraceError naming ``source``, the row and
    the column on the first row addressed to an accelerator or the first bad command. ``row_offset``
    is added to reported rows (a batch of a longer trace)."""
    units = table.column("unit")
    if pa.types.is_dictionary(units.type):
        units = units.cast(pa.string())
    not_host = to_numpy(pc.not_equal(units, arrow_scalar("host", pa.string())))
    if not_host.any():
        i = int(np.flatnonzero(not_host)[0])
        name = units[i].as_py()
        kind = system.spec.accelerators[name].kind  # validation took only the system's units
        raise TraceError(source, f"unit {name!r} is a {kind} accelerator, which runs offload commands, not trace "
                         f"rows; expected unit 'host' (the host issues every row; {name}'s work goes in an offload "
                         f"command: offsim commands {kind})", row=i + row_offset, column="unit")
    ops = table.column("op")
    resolved = {}
    for i, params in decoded.items():
        target = system.units.get(params[TARGET_KEY])
        row = i + row_offset
        if target is None:
            raise TraceError(source, f"target unit {params[TARGET_KEY]!r} is not an accelerator of the system (it "
                             f"has: {', '.join(sorted(system.units)) or 'none'})", row=row, column="params")
        if ops[i].as_py() == "wait":
            extra = sorted(set(params) - {TARGET_KEY})
            if extra:
                raise TraceError(source, f"wait: {', '.join(extra)}: unknown key; expected only \"unit\" (a wait "
                                 "takes no arguments)", row=row, column="params")
            resolved[i] = params, None
            continue
        try:
            resolved[i] = target.checked_command(params)
        except CommandError as exc:
            raise TraceError(source, str(exc), row=row, column="params") from None
    return resolved

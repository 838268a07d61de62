"""``offsim commands [KIND]``: the offload command of each accelerator kind, as its schema declares it.

A command is the JSON object of an ``offload`` trace row: ``unit`` names the
accelerator it goes to, the other keys are the fields its kind declares
(``simulator.accel.command_schema``), numbers plain in the unit shown.
"""

from __future__ import annotations

import argparse

from simulator.accel.command_schema import describe_command
from simulator.accel.kinds import COMMANDS
from simulator.errors import InputError
from simulator.config.fields import did_you_mean

HEADER = ("key", "type", "unit", "default", "accepts", "description")
#: widest a column grows before its text overflows it (key, type, unit, default, accepts)
COLUMN_CAPS = (16, 24, 12, 28, 28)


def command_lines(kind: str) -> list[str]:
    """The reference of ``kind``'s command: a heading, then one row per key."""
    rows = [(r.key, r.type, r.unit, r.default, r.accepts, r.doc) for r in describe_command(COMMANDS[kind])]
    table = [HEADER] + rows
    widths = [min(max(len(row[i]) for row in table), cap) for i, cap in enumerate(COLUMN_CAPS)]
    lines = [f"{kind}: offload params (a JSON object; \"unit\" names the target accelerator)"]
    lines += ["  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[-1] for row in table]
    return lines


def cmd_commands(args: argparse.Namespace) -> int:
    """Print the command reference of ``args.kind``, or of every kind (installed packages' kinds included)."""
    from simulator.config.accelerators import AcceleratorSpec

    AcceleratorSpec.load_kinds()  # an installed kind registers its command as it loads
    kinds = sorted(COMMANDS)
    if args.kind is not None and args.kind not in COMMANDS:
        raise InputError(f"commands: kind {args.kind!r}{did_you_mean(args.kind, kinds)}; expected one of: "
                         f"{', '.join(kinds)}")
    blocks = [command_lines(kind) for kind in ([args.kind] if args.kind else kinds)]
    print("\n\n".join("\n".join(block) for block in blocks))
    return 0

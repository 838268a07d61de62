"""Declaring an accelerator kind's command once, and checking a command's JSON params against it.

A kind declares its command as a frozen dataclass whose fields are declared with
``command_field(...)``: type (the annotation), unit (bytes ``B``, ``elements``,
``host cycles``, ...), bounds, default and description, with the bounds of a
config parameter (``simulator.config.fields.param``). Commands are JSON, so a
number is written plain, in the unit its field names (``"m": 512``, not
``"512 elements"``). Field types: ``int``, ``float``, ``bool``, ``str``,
``Regions`` (a list of ``[byte address, bytes]`` pairs), ``tuple[int, ...]``
(a list of integers) and ``tuple[Item, ...]`` for a list of objects declared the
same way (a stencil command's tiles).

``parse_command`` builds the dataclass from a command's params: an unknown key is
refused with a "did you mean", a missing required key, a value of the wrong type
or out of bounds with what was expected; cross-field rules go in the dataclass's
``__post_init__`` (a ValueError). What depends on the unit that runs the command
(its memory, its engines) the unit checks itself (``AcceleratorUnit.check_args``).

A command's ``inputs`` and ``outputs`` say what the coupling flushes, copies or
invalidates. A kind whose command names its operands (a GEMM's A, B, C) lets
them default to those operands (``operand_regions``), so that no offload skips
its coherence work for want of a list. ``describe_command`` lists the fields for
``offsim commands``.
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from typing import Any, Callable

import numpy as np

from simulator.config.fields import (MISSING, _accepts, _convert_scalar, _default_text, _describe, did_you_mean,
                                     param, spec_fields)
from simulator.units import INT64_MAX

#: A list of ``[byte address, bytes]`` memory regions, as a command's ``inputs``/``outputs`` give them.
Regions = tuple[tuple[int, int], ...]

#: The key every command carries besides its fields: the accelerator it is sent to.
TARGET_KEY = "unit"

#: Most items (regions, parts, tiles, row counts) in one list of a command: keeps its expansion bounded.
MAX_COMMAND_ITEMS = 1_000_000
#: A region's address and size stay below 2**62 bytes, the trace's address space (``workloads.trace.MAX_ADDR``).
MAX_REGION_BYTES = 1 << 62


class CommandError(ValueError):
    """An offload command's params are not what its unit expects (checked before the unit runs it)."""


def command_field(default: Any = MISSING, *, doc: str, unit: str = "", default_text: str | None = None,
                  min: float | None = None, max: float | None = None, positive: bool = False,
                  choices: tuple[str, ...] | None = None, check: Callable[[Any], str | None] | None = None) -> Any:
    """Declare a command field: ``unit`` names the unit its plain JSON number is in (``"B"``, ``"elements"``;
    "" for a flag, name or count), ``default_text`` says what a default of None stands for (e.g. "k");
    the bounds are those of ``simulator.config.fields.param``. ``check`` also applies to Regions and lists."""
    base = param(default, doc=doc, min=min, max=max, positive=positive, choices=choices, check=check)
    return dataclasses.field(default=base.default,
                             metadata={**base.metadata, "command_unit": unit, "default_text": default_text})


def _regions(value: Any, key: str) -> Regions:
    """A Regions value: a list of [byte address, bytes] pairs of integers >= 0."""
    if not isinstance(value, list):
        raise CommandError(f"{key} = {value!r}: expected a list of [byte address, bytes] regions")
    if len(value) > MAX_COMMAND_ITEMS:
        raise CommandError(f"{key}: {len(value):,} regions; expected at most {MAX_COMMAND_ITEMS:,}")
    top = MAX_REGION_BYTES
    ok = [type(r) is list and len(r) == 2 and type(r[0]) is int and type(r[1]) is int  # not bool either
          and 0 <= r[0] < top and 0 <= r[1] < top for r in value]
    if not all(ok):
        i = ok.index(False)
        raise CommandError(f"{key}[{i}] = {value[i]!r}: expected [byte address, bytes], two integers >= 0 and "
                           "below 2**62")
    return tuple(map(tuple, value))


def _value(tp: Any, value: Any, meta: dict, key: str) -> Any:
    """Convert one field's JSON value to ``tp``; CommandError naming ``key`` and what was expected."""
    if tp == Regions:
        out = _regions(value, key)
    elif typing.get_origin(tp) is tuple:
        item_tp = typing.get_args(tp)[0]
        if not isinstance(value, list):
            raise CommandError(f"{key} = {value!r}: expected a list")
        if len(value) > MAX_COMMAND_ITEMS:
            raise CommandError(f"{key}: {len(value):,} items; expected at most {MAX_COMMAND_ITEMS:,}")
        if dataclasses.is_dataclass(item_tp):
            out = tuple(parse_command(item_tp, v, f"{key}[{i}].", item=True) for i, v in enumerate(value))
        elif item_tp is int and _plain_ints_within(value, meta):  # the common case, without a call per item
            out = tuple(value)
        else:
            item_meta = {k: v for k, v in meta.items() if k != "check"}  # the check is the whole list's
            out = tuple(_value(item_tp, v, item_meta, f"{key}[{i}]") for i, v in enumerate(value))
    else:
        try:
            return _convert_scalar(value, tp, meta)
        except ValueError as exc:
            raise CommandError(f"{key}: {exc}") from None
    problem = meta.get("check") and meta["check"](out)
    if problem:
        raise CommandError(f"{key}: {problem}")
    return out


def _plain_ints_within(values: list, meta: dict) -> bool:
    """Whether every item of ``values`` is an int within the field's min and max, when those are its only
    bounds (a list of row lengths: thousands per command); False sends the items through one by one."""
    if any(meta.get(k) for k in ("positive", "power_of_two", "choices", "unit")):
        return False
    if not set(map(type, values)) <= {int}:  # bool is a type of its own here
        return False
    low = max(-INT64_MAX - 1, meta["min"] if meta.get("min") is not None else -INT64_MAX - 1)
    high = min(INT64_MAX, meta["max"] if meta.get("max") is not None else INT64_MAX)
    return not values or (min(values) >= low and max(values) <= high)


def parse_command(cls: type, params: Any, where: str = "", item: bool = False) -> Any:
    """The command ``cls`` built from JSON ``params`` (a mapping); CommandError on the first problem, its
    message starting with ``where`` and naming the key: unknown (with a "did you mean"), missing, or
    not what its field accepts. A command's target key (``unit``) is not a field; an ``item`` (an
    object of one of its lists) has none."""
    if not isinstance(params, dict):
        raise CommandError(f"{where.rstrip('. ')}: {params!r}: expected an object of {', '.join(field_names(cls))}")
    known = _names(cls)
    for key in params:
        if key not in known and not (key == TARGET_KEY and not item):
            raise CommandError(f"{where}{key}: unknown key{did_you_mean(key, known)}; expected one of: "
                               f"{', '.join(known)}")
    values = {}
    for f, tp in _fields(cls):
        if f.name in params:
            values[f.name] = _value(tp, params[f.name], f.metadata, f"{where}{f.name}")
        elif f.default is MISSING:
            raise CommandError(f"{where}{f.name}: missing; expected {_expected(f, tp)}")
    try:
        return cls(**values)
    except ValueError as exc:  # cross-field rules of the dataclass
        raise CommandError(f"{where}{exc}") from None


def _expected(f: dataclasses.Field, tp: Any) -> str:
    """What a field takes, in words, for the message of a missing one."""
    if tp == Regions:
        return "a list of [byte address, bytes] regions"
    item_tp = typing.get_args(tp)[0] if typing.get_origin(tp) is tuple else None
    if dataclasses.is_dataclass(item_tp):
        return f"a list of objects of {', '.join(field_names(item_tp))}"
    unit = f.metadata.get("command_unit")
    return _describe(f.metadata, tp) + (f" ({unit})" if unit else "")


def field_names(cls: type) -> list[str]:
    """The keys a command of schema ``cls`` takes (its fields), sorted."""
    return sorted(f.name for f in dataclasses.fields(cls))


# a schema's fields, resolved once: a command of many tiles parses one item per tile
_fields = functools.cache(spec_fields)
_names = functools.cache(field_names)


def command_params(command: Any, params: dict) -> dict:
    """``params`` completed with the defaults of the parsed ``command`` (given values kept as written),
    for the unit to execute: a key it leaves out is one the command does not use."""
    out = {}
    for f in dataclasses.fields(command):
        value = getattr(command, f.name)
        if value is not None and f.name not in params:
            out[f.name] = _plain(value)
    return {**out, **params}


def _plain(value: Any) -> Any:
    """A parsed value as JSON would give it: tuples as lists, items as objects."""
    if dataclasses.is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)
                if getattr(value, f.name) is not None}
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def union_regions(items: Any, key: str) -> Regions:
    """The ``key`` regions (inputs or outputs) of every item (a command's parts or tiles), in order."""
    return tuple(r for item in items for r in getattr(item, key))


def first_uncovered_byte(regions: Regions, base: int, rows: int, row_bytes: int, pitch_bytes: int) -> int | None:
    """The first byte of ``rows`` rows of ``row_bytes`` bytes, ``pitch_bytes`` apart from byte ``base`` (a
    matrix operand), that no region of ``regions`` covers; None if they cover it all."""
    merged: list[list[int]] = []
    for addr, nbytes in sorted(r for r in regions if r[1] > 0):
        if merged and addr <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], addr + nbytes)
        else:
            merged.append([addr, addr + nbytes])
    if not merged:
        return base
    starts = np.array([m[0] for m in merged], dtype=np.int64)
    ends = np.array([m[1] for m in merged], dtype=np.int64)
    row_starts = base + pitch_bytes * np.arange(rows, dtype=np.int64)
    covering = np.searchsorted(starts, row_starts, side="right") - 1  # the merged region starting at or before
    reach = np.where(covering >= 0, ends[np.maximum(covering, 0)], -1)
    short = np.flatnonzero(reach < row_starts + row_bytes)
    if not short.size:
        return None
    r = int(short[0])
    return int(max(row_starts[r], reach[r]))


# --------------------------------------------------------------------------- reference


@dataclasses.dataclass(frozen=True)
class CommandKeyDoc:
    """One key of a command (``offsim commands``): dotted key (``tiles[].points`` for an item's), type,
    unit of its JSON number, default ("required" if none), accepted values, description."""

    key: str
    type: str
    unit: str
    default: str
    accepts: str
    doc: str


_TYPE_NAMES = {int: "integer", float: "number", bool: "true/false", str: "string"}


def _type_name(tp: Any) -> str:
    if tp == Regions:
        return "list of [address, bytes]"
    if typing.get_origin(tp) is tuple:
        item_tp = typing.get_args(tp)[0]
        return "list of objects" if dataclasses.is_dataclass(item_tp) else f"list of {_TYPE_NAMES[item_tp]}s"
    return _TYPE_NAMES.get(tp, getattr(tp, "__name__", str(tp)))


def _bounds(meta: dict, tp: Any) -> str:
    """A field's bounds in words (">= 1", "one of 'gemm'"), without its type (a column of its own)."""
    if tp == tuple[int, int] or dataclasses.is_dataclass(tp):  # a region, an item: their own keys say it
        return ""
    text = _accepts(meta, tp)
    return text if meta.get("choices") else ", ".join(text.split(", ")[1:])


def describe_command(cls: type, prefix: str = "") -> list[CommandKeyDoc]:
    """Every key of command schema ``cls``, an item list's keys after it (``tiles[].inputs``)."""
    rows = []
    for f, tp in spec_fields(cls):
        meta = f.metadata
        unit = "B" if tp == Regions else meta.get("command_unit", "")
        default = meta.get("default_text") or ("required" if f.default is MISSING else _default_text(f, ""))
        item_tp = typing.get_args(tp)[0] if typing.get_origin(tp) is tuple else tp
        rows.append(CommandKeyDoc(f"{prefix}{f.name}", _type_name(tp), unit, default, _bounds(meta, item_tp),
                                  meta.get("doc", "")))
        if tp != Regions and dataclasses.is_dataclass(item_tp):
            rows += describe_command(item_tp, f"{prefix}{f.name}[].")
    return rows

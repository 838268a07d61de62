"""Declaring config parameters once, and building frozen specs from raw YAML.

A spec field is declared with ``param(...)``: its dimension (unit), default,
description and bounds, in the spirit of gem5's ``Param.Latency("...")``.
``build_spec`` turns a raw mapping into the frozen dataclass, collecting every
problem (unknown key, missing key, bad unit, out of bounds, a rule across
keys) as a ``Problem`` naming the file, the dotted key, the value and what was
expected.
"""

from __future__ import annotations

import builtins
import collections.abc
import dataclasses
import difflib
import re
import types
import typing
from collections.abc import Collection, Sequence
from typing import Any, Callable

from simulator.config.bounds import BY_DIMENSION, CYCLES, Range
from simulator.errors import FieldError, Problem, TableError, as_written, join_key
from simulator.units import (COUNT_UNITS, DIMENSIONS, INT64_MAX, UnitError, exponent_number, finite_float,
                             format_bytes, format_count, format_exact, is_power_of_two, parse_quantity)

MISSING = dataclasses.MISSING
# Keys any mapping may carry as documentation; they are kept in the resolved config
# but are not parameters.
META_KEYS = ("source", "notes", "preset")


def param(
    default: Any = MISSING,
    *,
    unit: str | None = None,
    doc: str,
    min: float | None = None,
    max: float | None = None,
    positive: bool = False,
    power_of_two: bool = False,
    choices: tuple[str, ...] | None = None,
    check: Callable[[Any], str | None] | None = None,
    within: Range | None = None,
    recorded_at_default: bool = True,
    count: str | None = None,
) -> Any:
    """Declare a spec field.

    unit: a dimension name of ``simulator.units.DIMENSIONS`` ("time", "size", ...):
    the YAML value must be a string with a unit and is stored in SI (sizes as int
    bytes). None: a plain number, bool or string as typed. within: a named range of
    ``simulator.config.bounds`` (its bounds, tightened by ``min``/``max`` if given; its
    reason added to ``doc``); an energy, power, current or voltage without one gets its
    dimension's (``bounds.BY_DIMENSION``). recorded_at_default=False: at its default the key is left
    out of the spec's record and content hash (``spec_to_dict``), so that a system which does not
    use the feature it switches records and hashes the same with or without the key. count: what a plain
    number counts (one of ``units.COUNT_UNITS``), shown as its unit; a field bounded by ``bounds.CYCLES``
    counts cycles.
    """
    if unit is not None and unit not in DIMENSIONS:
        raise ValueError(f"unknown dimension {unit!r}")
    if within is None and max is None:  # an energy, power, current or voltage is never unbounded
        within = BY_DIMENSION.get(unit or "")
    if count is None and unit is None and within is CYCLES:
        count = "cycles"
    if count is not None and count not in COUNT_UNITS:
        raise ValueError(f"unknown count {count!r}")
    if within is not None:
        if not (positive and within.low <= 0):  # "> 0" already says more than ">= 0"
            min = within.low if min is None else builtins.max(min, within.low)  # the arguments shadow the builtins
        max = within.high if max is None else builtins.min(max, within.high)
        doc = f"{doc} (bounds {within.why})"
    meta = dict(unit=unit, count=count, doc=doc, min=min, max=max, positive=positive,
                power_of_two=power_of_two, choices=choices, check=check, recorded_at_default=recorded_at_default)
    if isinstance(default, (list, dict)):
        raise ValueError("use a tuple or a factory for container defaults")
    return dataclasses.field(default=default, metadata=meta)


def spec_fields(cls: type) -> list[tuple[dataclasses.Field, Any]]:
    """The dataclass fields of a spec with their resolved type hints."""
    hints = typing.get_type_hints(cls)
    return [(f, hints[f.name]) for f in dataclasses.fields(cls)]


def _is_spec(tp: Any) -> bool:
    return isinstance(tp, type) and dataclasses.is_dataclass(tp)


def _describe(meta: dict, tp: Any) -> str:
    """What a value of type ``tp`` with the param metadata ``meta`` must be, for messages."""
    origin = typing.get_origin(tp)
    if origin is tuple:  # the item's expectation, in the plural sense of a list of them
        return f"a list, each item {_describe(meta, typing.get_args(tp)[0])}"
    if origin is dict:
        return f"a mapping of names, each to {_describe(meta, typing.get_args(tp)[1])}"
    if meta.get("unit"):
        return DIMENSIONS[meta["unit"]].expected()
    if meta.get("choices"):
        return "one of " + ", ".join(repr(c) for c in meta["choices"])
    if dataclasses.is_dataclass(tp):  # a section: its name, not the Python class
        words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", tp.__name__.removesuffix("Spec")).lower()  # HostTile: host tile
        words = words or "config"
        return f"{'an' if words[0] in 'aeiou' else 'a'} {words} section (a mapping of its parameters)"
    return {int: "an integer", float: "a number", bool: "true or false", str: "a string"}.get(
        tp, getattr(tp, "__name__", str(tp)))


_PLAIN = {int: ("an integer", "integers"), float: ("a number", "numbers"), bool: ("true or false", "true/false values"),
          str: ("a string", "strings"), type(None): ("null", "nulls")}


def plain_type(tp: Any) -> str:
    """What a value of Python type ``tp`` is, in a config's words: ``Literal["a", "b"]`` -> "one of a, b",
    ``Sequence[int] | None`` -> "a list of integers or null", ``float`` -> "a number"."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Literal:
        return "one of " + ", ".join(str(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(plain_type(a) for a in args)
    if origin in (list, tuple, collections.abc.Sequence) and args:
        item = args[0]
        return f"a list of {_PLAIN[item][1]}" if item in _PLAIN else f"a list, each item {plain_type(item)}"
    if tp in _PLAIN:
        return _PLAIN[tp][0]
    return getattr(tp, "__name__", str(tp))


def plain_value(value: Any, unit: str = "") -> str:
    """A default or given value in a config's words: null (or an empty name) as "not set", true/false, a
    string as it is, a size in bytes exactly (``format_bytes``), a number with its unit."""
    if value is None or value == "":
        return "not set"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)) and unit in COUNT_UNITS:
        return format_count(value, unit)
    if isinstance(value, (int, float)) and unit:
        return format_exact(value, unit)
    return str(value)


def _convert_scalar(value: Any, tp: Any, meta: dict) -> Any:
    """Convert one scalar; raise ValueError with the expectation on failure."""
    unit = meta.get("unit")
    if unit:
        try:
            number = parse_quantity(value, unit)
        except UnitError as exc:
            raise ValueError(str(exc)) from None
        if tp is int:
            if abs(number - round(number)) > 1e-9 * max(1.0, abs(number)):
                raise ValueError(f"expected a whole number of {DIMENSIONS[unit].si_unit}, "
                                 f"got {as_written(value)}")
            number = int(round(number))
        value = number
    elif tp is bool:
        if not isinstance(value, bool):
            raise ValueError(f"expected true or false, got {as_written(value)}")
    elif tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"expected an integer, got {as_written(value)}")
        if abs(value) > INT64_MAX:
            raise ValueError(f"expected an integer within +-{INT64_MAX:,} (the simulator's 64-bit integers), "
                             f"got {as_written(value)}")
    elif tp is float:
        value = exponent_number(value)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"expected a number, got {as_written(value)}")
        number = finite_float(value)
        if number is None:
            raise ValueError(f"expected a finite number, got {as_written(value)}")
        value = number
    elif tp is str:
        if not isinstance(value, str):
            raise ValueError(f"expected a string, got {as_written(value)}")
    if meta.get("choices") and value not in meta["choices"]:
        raise ValueError(f"expected {_describe(meta, tp)}, got {as_written(value)}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        unit = meta.get("unit")
        if meta.get("positive") and value <= 0:
            raise ValueError(f"expected a positive value, got {as_written(value)}")
        problem = bound_problem(value, meta.get("min"), meta.get("max"), unit)
        if problem:
            raise ValueError(f"{problem}, got {_shown(value, unit)}")
        if meta.get("power_of_two") and not is_power_of_two(value):
            raise ValueError(f"expected a power of two, got {as_written(value)}")
    if meta.get("check"):
        problem = meta["check"](value)
        if problem:
            raise ValueError(problem)
    return value


def bound_problem(value: float, low: float | None, high: float | None, unit: str | None = None) -> str | None:
    """What ``value`` (SI, of dimension ``unit``, a name of ``DIMENSIONS``) should be when it lies outside
    ``low`` .. ``high`` (either None: unbounded), as a config's message says it ("expected a value >= 1 MHz");
    None when it lies within."""
    if low is not None and value < low:
        return f"expected a value >= {_shown(low, unit)}"
    if high is not None and value > high:
        return f"expected a value <= {_shown(high, unit)}"
    return None


def _shown(x: float, unit: str | None) -> str:
    """A bound or value in a message: with its unit where it has a dimension."""
    return format_exact(x, DIMENSIONS[unit].si_unit) if unit else repr(x)


def within_problem(value: float, within: Range, unit: str | None = None, positive: bool = False) -> str | None:
    """``bound_problem`` of a value checked against a named range of ``simulator.config.bounds`` (``positive``:
    also > 0, where the range starts at 0); None when it lies within."""
    if positive and value <= 0:
        return "expected a positive value"
    return bound_problem(value, within.low, within.high, unit)


def convert_value(value: Any, tp: type, unit: str | None = None) -> Any:
    """``value`` of a table outside the schema read as a spec field of type ``tp`` (and dimension ``unit``, a
    name of ``DIMENSIONS``) reads it: in SI units, ``1e3`` a number; ValueError saying what was expected."""
    return _convert_scalar(value, tp, {"unit": unit})


def table_value(value: Any, tp: type, unit: str | None = None, scale: float = 1.0, within: Range | None = None,
                positive: bool = False) -> Any:
    """``value`` of a key of a model's table (outside the schema) of type ``tp``, in the key's own unit:
    a number bare or in exponent form ("1e3") is in that unit, as the shipped tables write it; where the
    key has a dimension ``unit`` (a name of ``DIMENSIONS``), a value with a unit ("1 GHz", "20 pJ") is
    converted to SI and divided by ``scale``, the SI value of one of the key's units (1e9 for a key in
    GFLOP/s). ``within``: the key's range of ``simulator.config.bounds`` (in SI; ``positive``: also > 0), as a
    config's field of the same quantity has it. ValueError saying what was expected."""
    if unit and isinstance(exponent_number(value), str):
        number = convert_value(value, tp, unit) / scale
    else:
        number = convert_value(value, tp)
    problem = None if within is None else within_problem(number * scale, within, unit, positive)
    if problem:
        raise ValueError(f"{problem}, got {as_written(value)}")
    return number


def table_rows(doc: Any, source: str, top_keys: Sequence[str],
               read_row: Callable[[str, Any, str], tuple[Any, list[str]]]) -> dict[str, Any]:
    """The rows of a model's table (outside the schema): ``doc`` (the parsed file ``source``) maps ``top_keys``,
    one of them a non-empty ``platforms`` mapping of row name to row; ``read_row(name, row, where)`` gives a row's
    value, or None and its problems (``where``: the file and the row, as messages name them). A row named by a
    number (YAML's ``7:``) is named by its text. TableError with every problem of the file, one each."""
    if not isinstance(doc, dict) or not isinstance(doc.get("platforms"), dict) or not doc["platforms"]:
        raise TableError([f"{source}: expected a mapping with a non-empty 'platforms' mapping"])
    problems = [f"{source}: unknown top-level key {as_written(k)}{did_you_mean(k, top_keys)}; expected one of: "
                f"{', '.join(sorted(top_keys))}" for k in doc if k not in top_keys]
    rows: dict[str, Any] = {}
    for key, raw in doc["platforms"].items():
        row, errors = read_row(str(key), raw, f"{source}: platforms.{key}")
        problems += errors
        if row is not None:
            rows[str(key)] = row
    if problems:
        raise TableError(problems)
    return rows


def row_values(row: Any, where: str, keys: Sequence[str], required: Collection[str],
               convert: Callable[[str, Any], Any]) -> tuple[dict[str, Any] | None, list[str]]:
    """The values of one row of a model's table (``table_rows``), each key's by ``convert(key, value)``
    (ValueError saying what was expected), or None and a problem per unknown, missing (of ``required``) or
    bad key, each naming ``where`` and the key."""
    if not isinstance(row, dict):
        return None, [f"{where}: expected a mapping of the row's keys ({', '.join(keys)}), got {as_written(row)}"]
    problems = [f"{where}: unknown key {as_written(k)}{did_you_mean(k, keys)}; expected one of: {', '.join(keys)}"
                for k in row if k not in keys]
    problems += [f"{where}: missing key {k!r}" for k in keys if k in required and k not in row]
    values = {}
    for name in [n for n in keys if n in row]:
        try:
            values[name] = convert(name, row[name])
        except ValueError as exc:
            problems.append(f"{where}.{name}: {exc}")
    return (None, problems) if problems else (values, [])


def did_you_mean(name: Any, known: Any) -> str:
    """`` (did you mean X?)`` naming the one or two ``known`` names closest to a mistyped ``name``, or ''."""
    close = difflib.get_close_matches(str(name), sorted(known), n=2)
    return f" (did you mean {' or '.join(close)}?)" if close else ""


def build_spec(cls: type, raw: Any, source: str, key: str, errors: list[Problem]) -> Any:
    """Build ``cls`` from ``raw``; append problems to ``errors`` and return None on failure."""
    if not isinstance(raw, dict):
        errors.append(Problem(source, key, f"expected {_describe({}, cls)}, got {as_written(raw)}"))
        return None
    known = {f.name for f in dataclasses.fields(cls)}
    for name in raw:
        if name not in known and name not in META_KEYS:
            errors.append(Problem(source, join_key(key, str(name)), f"unknown key{did_you_mean(name, known)}; "
                                  f"expected one of: {', '.join(sorted(known))}"))
    values: dict[str, Any] = {}
    n_errors = len(errors)
    for f, tp in spec_fields(cls):
        sub = join_key(key, f.name)
        if f.name not in raw:
            if f.default is MISSING and f.default_factory is MISSING:
                errors.append(Problem(source, sub, f"missing; expected {_describe(f.metadata, tp)}"))
            continue
        values[f.name] = _build_value(tp, raw[f.name], f.metadata, source, sub, errors)
    if len(errors) > n_errors:
        return None
    try:
        return cls(**values)
    except FieldError as exc:  # a rule across fields in __post_init__, naming the field it refuses
        found = exc.within(key)
        errors.append(Problem(source, found.key, found.detail, found.related))
    except ValueError as exc:  # a rule about the section as a whole
        errors.append(Problem(source, key, str(exc)))
    return None


def _build_value(tp: Any, value: Any, meta: dict, source: str, key: str, errors: list[Problem]) -> Any:
    origin = typing.get_origin(tp)
    if _is_spec(tp) and getattr(tp, "KINDS", None) is not None:
        # a polymorphic spec: the mapping's ``kind`` selects the registered subclass
        kinds = registered_kinds(tp)
        kind = value.get("kind") if isinstance(value, dict) else None
        if not isinstance(kind, str) or kind not in kinds:
            given = "missing" if kind is None else repr(kind)
            errors.append(Problem(source, f"{key}.kind", f"{given}; expected one of: {', '.join(sorted(kinds))}"))
            return None
        return build_spec(kinds[kind], value, source, key, errors)
    if _is_spec(tp):
        return build_spec(tp, value, source, key, errors)
    if origin is tuple:
        (item_tp, _ellipsis) = typing.get_args(tp)
        if not isinstance(value, list):
            errors.append(Problem(source, key, f"expected a list, got {as_written(value)}"))
            return None
        return tuple(_build_value(item_tp, v, meta, source, f"{key}[{i}]", errors) for i, v in enumerate(value))
    if origin is dict:
        _key_tp, item_tp = typing.get_args(tp)
        if not isinstance(value, dict):
            errors.append(Problem(source, key, f"expected a mapping, got {as_written(value)}"))
            return None
        bad = [k for k in value if not isinstance(k, str)]  # YAML makes null:, true: and 5: None, True and 5
        if bad:
            errors.append(Problem(source, key, f"keys {bad!r}; expected names (strings)"))
            return None
        return {k: _build_value(item_tp, v, meta, source, f"{key}.{k}", errors) for k, v in value.items()}
    try:
        return _convert_scalar(value, tp, meta)
    except ValueError as exc:
        errors.append(Problem(source, key, str(exc)))
        return None


def spec_to_dict(spec: Any, every_key: bool = False) -> Any:
    """A spec as plain data (SI numbers), for hashing and the resolved-config record: without the keys
    declared ``recorded_at_default=False`` that hold their default, unless ``every_key``."""
    if dataclasses.is_dataclass(spec):
        return {f.name: spec_to_dict(getattr(spec, f.name), every_key) for f in dataclasses.fields(spec)
                if every_key or f.metadata.get("recorded_at_default", True) or getattr(spec, f.name) != f.default}
    if isinstance(spec, tuple):
        return [spec_to_dict(v, every_key) for v in spec]
    if isinstance(spec, dict):
        return {k: spec_to_dict(v, every_key) for k, v in spec.items()}
    return spec


@dataclasses.dataclass(frozen=True)
class KeyDoc:
    """One key of the config reference (``offsim keys``): the dotted key as ``--set`` takes it,
    its SI unit ("" for a plain number, flag or name), its default ("required" if none), what
    values it accepts beyond its unit, and its description."""

    key: str
    unit: str
    default: str
    accepts: str
    doc: str


def _accepts(meta: dict, tp: Any) -> str:
    """The bounds of a field in words: "> 0", ">= 1, <= 64", "power of two", "one of ..."."""
    if meta.get("choices"):
        return _describe(meta, tp)
    parts = [] if meta.get("unit") else [{int: "integer", float: "number", bool: "true/false", str: "string"}
                                          .get(tp, getattr(tp, "__name__", str(tp)))]
    if meta.get("positive") and not (meta.get("min") or 0) > 0:  # a positive minimum says it already
        parts.append("> 0")
    for bound, sign in (("min", ">="), ("max", "<=")):
        if meta.get(bound) is not None:  # a size exactly, with its unit (4 GiB, not 4.29497e+09)
            parts.append(f"{sign} {format_bytes(meta[bound]) if meta.get('unit') == 'size' else f'{meta[bound]:g}'}")
    if meta.get("power_of_two"):
        parts.append("power of two")
    return ", ".join(parts)


def _default_text(f: dataclasses.Field, unit: str) -> str:
    if f.default is MISSING and f.default_factory is MISSING:
        return "required"
    default = f.default if f.default is not MISSING else f.default_factory()
    if isinstance(default, (int, float)) and not isinstance(default, bool):
        if unit in COUNT_UNITS:
            return format_count(default, unit)
        return format_bytes(default) if unit == "B" else f"{default:.10g} {unit}".rstrip()
    return repr(default) if isinstance(default, (str, tuple)) else str(default).lower()


def describe_spec(cls: type, prefix: str = "") -> list[KeyDoc]:
    """Every leaf key of spec ``cls`` (sections flattened to dotted keys), for the config reference.

    A tuple of specs is keyed by its items' ``name`` (``caches.levels.<name>.size_bytes``, as ``--set``
    addresses it); a mapping of specs by ``<name>``; a polymorphic spec (``KINDS``) lists its common
    keys once, then each kind's own keys with "[kind]" before their description.
    """
    rows: list[KeyDoc] = []
    for f, tp in spec_fields(cls):
        name = f"{prefix}{f.name}"
        origin = typing.get_origin(tp)
        item_tp = typing.get_args(tp)[0 if origin is tuple else -1] if origin in (tuple, dict) else tp
        if origin is tuple and _is_spec(item_tp):
            rows += describe_spec(item_tp, f"{name}.<name>.")
        elif origin is dict and _is_spec(item_tp):
            rows += _describe_kinds(item_tp, f"{name}.<name>.")
        elif _is_spec(tp):
            rows += _describe_kinds(tp, f"{name}.")
        else:
            unit = DIMENSIONS[f.metadata["unit"]].si_unit if f.metadata.get("unit") else f.metadata.get("count") or ""
            rows.append(KeyDoc(name, unit, _default_text(f, unit), _accepts(f.metadata, tp),
                               f.metadata.get("doc", "")))
    return rows


def registered_kinds(tp: type) -> dict[str, type]:
    """Kind -> spec class of a polymorphic spec (one with ``KINDS``), with the kinds of installed packages
    loaded first where the spec has them (``load_kinds``); {} for any other type."""
    load = getattr(tp, "load_kinds", None)
    if load is not None:
        load()
    return getattr(tp, "KINDS", None) or {}


def _describe_kinds(tp: type, prefix: str) -> list[KeyDoc]:
    """A section's keys; for a polymorphic section, its common keys then each kind's own."""
    rows = describe_spec(tp, prefix)
    kinds = registered_kinds(tp)
    if kinds:  # the registry, not a choices list, says which kinds exist
        rows = [dataclasses.replace(r, accepts="one of " + ", ".join(repr(k) for k in sorted(kinds)))
                if r.key == f"{prefix}kind" else r for r in rows]
    common = {r.key for r in rows}
    for kind, kind_cls in sorted(kinds.items()):
        rows += [dataclasses.replace(r, doc=f"[{kind}] {r.doc}")
                 for r in describe_spec(kind_cls, prefix) if r.key not in common]
    return rows

"""A system's effective configuration, key by key, with where each value came from.

``offsim keys --system FILE [--set ...]`` prints it: every leaf key as ``--set`` addresses it
(``caches.levels.L2.size_bytes``, ``accelerators.lap.interface.coupling``), its value after presets,
overrides and defaults (in SI units, printed with their unit), and its origin:

- ``file``: written in the system file itself;
- ``preset <name>``: supplied by the preset a mapping of the file names (the outermost one, where
  presets name presets);
- ``--set``: given by an override;
- ``default``: the schema's default (``offsim keys`` lists the defaults).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from simulator.config.fields import describe_spec, plain_value, spec_to_dict
from simulator.config.loader import list_item, load_spec, parse_override, resolve_presets
from simulator.config.schema import SystemSpec
from simulator.config.yamlio import load_yaml

META = ("preset", "source", "notes")


@dataclass(frozen=True)
class EffectiveValue:
    """One key of a loaded system: its value (SI), the value's unit ("" for none) and origin."""

    key: str
    value: Any
    unit: str
    origin: str

    def value_text(self) -> str:
        """The value as ``offsim keys --system`` prints it: with its unit, a size exactly (8 MiB); a flag as
        true or false, a key left unset (null, or an empty name) as "not set"."""
        return plain_value(self.value, self.unit)


def _flatten(node: Any, prefix: str = "") -> dict[str, Any]:
    """Leaf key -> value; list items of mappings are keyed by their ``name`` as ``--set`` addresses them."""
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        for k, v in node.items():
            if k in META:
                continue
            out.update(_flatten(v, f"{prefix}{k}."))
        return out
    if isinstance(node, list) and node and all(isinstance(v, dict) and "name" in v for v in node):
        out = {}
        for item in node:
            out.update(_flatten(item, f"{prefix}{item['name']}."))
        return out
    return {prefix[:-1]: node}


def _preset_origins(raw: Any, prefix: str = "") -> list[tuple[str, str]]:
    """(key prefix, preset name) of every mapping of ``raw`` that names a preset, outermost first."""
    found = []
    if isinstance(raw, dict):
        if isinstance(raw.get("preset"), str):
            found.append((prefix, raw["preset"]))
        for k, v in raw.items():
            if k not in META:
                found += _preset_origins(v, f"{prefix}{k}.")
    elif isinstance(raw, list):
        for item in raw:
            if isinstance(item, dict) and "name" in item:
                found += _preset_origins(item, f"{prefix}{item['name']}.")
    return found


def named_key(parts: list[str], raw: Any) -> str:
    """The dotted key of override ``parts`` with each list index (``caches.levels.0``) replaced by the name of the
    item it selects in ``raw`` (``caches.levels.L1D``), as the effective values name it."""
    named, node = [], raw
    for part in parts:
        if isinstance(node, list):
            item = list_item(node, part)
            if isinstance(item, dict) and "name" in item:
                part = str(item["name"])
            node = item
        else:
            node = node.get(part) if isinstance(node, dict) else None
        named.append(part)
    return ".".join(named)


@functools.cache
def _key_patterns() -> tuple[tuple[re.Pattern, str], ...]:
    """Each system key of the schema as a pattern (a ``<name>`` any list item or entry) and its unit."""
    return tuple((re.compile(re.escape(row.key).replace(re.escape("<name>"), r"[^.]+")), row.unit)
                 for row in describe_spec(SystemSpec))


def key_unit(key: str) -> str:
    """The unit of system key ``key`` as ``--set`` addresses it: its dimension's SI unit ("B" for a size), what a
    count counts (``tCK``, ``cycles``, ``beats``); "" for a plain number, a choice or a key the schema does not
    have."""
    return next((unit for pattern, unit in _key_patterns() if pattern.fullmatch(key)), "")


def effective_values(path: str | Path, overrides: Iterable[str] = ()) -> list[EffectiveValue]:
    """Every leaf key of the system at ``path`` with ``overrides`` applied, in the file's order
    (ConfigError as ``offsim validate`` reports it)."""
    overrides = list(overrides)
    loaded = load_spec(path, SystemSpec, overrides)
    raw = load_yaml(path)
    written = set(_flatten(raw))
    resolved = resolve_presets(raw, str(path))
    with_presets = set(_flatten(resolved))
    presets = _preset_origins(raw)
    overridden = {named_key(parse_override(text)[0], resolved) for text in overrides}
    rows = []
    for key, value in _flatten(spec_to_dict(loaded.spec, every_key=True)).items():
        if key in overridden:
            origin = "--set"
        elif key in written:
            origin = "file"
        elif key in with_presets:
            origin = next((f"preset {name}" for prefix, name in presets if key.startswith(prefix)), "preset")
        else:
            origin = "default"
        rows.append(EffectiveValue(key, value, key_unit(key), origin))
    return rows

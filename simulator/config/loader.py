"""Loading a system config: presets, overrides, validation, resolved record, hash.

A system file is a YAML mapping whose sections (``host``, ``caches``, ``dram``,
...) may each name a ``preset`` (a file under ``configs/presets/``, without
``.yaml``) and override any of its keys. ``--set key=value`` overrides apply
last, on dotted keys (``dram.geometry.ranks_per_channel=2``,
``caches.levels.L2.size_bytes="512 KiB"``). Every problem in every file is
collected and reported together; nothing is built from a config with errors.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import os
import typing
from pathlib import Path
from typing import Any

from simulator.errors import ConfigError, Problem, overlaps
from simulator.config.fields import META_KEYS, build_spec, did_you_mean, registered_kinds, spec_to_dict
from simulator.config.yamlio import AliasError, load_yaml, load_yaml_text

PROJECT_ROOT = Path(__file__).resolve().parents[2]
PRESETS_DIR = PROJECT_ROOT / "configs" / "presets"


def project_file(path: str) -> str | None:
    """Config check: None if ``path`` (relative to the project root) is a file, else what was expected."""
    if (PROJECT_ROOT / path).is_file():
        return None
    return f"no file {path!r}; expected a path relative to the project root"


#: directories searched for presets named without a path, before the shipped ones (separated like PATH)
PRESET_PATH_VARIABLE = "OFFSIM_PRESET_PATH"


def preset_dirs() -> list[Path]:
    """Where a preset named without a path is looked for: the directories of ``$OFFSIM_PRESET_PATH``
    in order, then the shipped ``configs/presets``."""
    extra = [Path(d) for d in os.environ.get(PRESET_PATH_VARIABLE, "").split(os.pathsep) if d]
    return [*extra, PRESETS_DIR]


def display_path(path: Path) -> str:
    """A config file as messages name it: relative to the project root when inside it."""
    try:
        return str(path.resolve().relative_to(PROJECT_ROOT))
    except ValueError:
        return str(path)


def preset_path(name: str, source: str, key: str, base_dir: Path | None = None) -> Path:
    """Locate preset ``name``: a file path ending in ``.yaml`` (relative to ``base_dir``, the directory
    of the file that names it, or absolute), or a name such as "dram/ddr3_1600_mt41j256m4" looked up in
    ``preset_dirs()``."""
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{source}: {key}.preset: {name!r}; expected a preset name like "
                          "'dram/ddr3_1600_mt41j256m4' or a path to a preset file ending in .yaml")
    if name.endswith((".yaml", ".yml")):
        path = Path(name) if Path(name).is_absolute() else (base_dir or Path(".")) / name
        if not path.is_file():
            found = "a directory, not a file:" if path.is_dir() else "no file"
            raise ConfigError(f"{source}: {key}.preset: {found} {str(path)!r}; expected a preset file (a path "
                              "relative to the file that names it, or absolute)")
        return path
    if ".." in Path(name).parts or Path(name).is_absolute():
        raise ConfigError(f"{source}: {key}.preset: {name!r}; expected a preset name like 'dram/ddr3_1600_mt41j256m4' "
                          "or a path to a preset file ending in .yaml")
    dirs = preset_dirs()
    for directory in dirs:
        if (directory / f"{name}.yaml").is_file():
            return directory / f"{name}.yaml"
    known = sorted({str(p.relative_to(d).with_suffix("")) for d in dirs if d.is_dir() for p in d.rglob("*.yaml")})
    searched = "" if len(dirs) == 1 else f" (searched ${PRESET_PATH_VARIABLE} and the shipped presets)"
    raise ConfigError(f"{source}: {key}.preset: no preset {name!r}{searched}; expected one of: {', '.join(known)}")


#: presets a preset may name in turn (a system's host preset naming a core preset is 2)
MAX_PRESET_DEPTH = 8


def resolve_presets(raw: Any, source: str, key: str = "", base_dir: Path | None = None,
                    chain: tuple[tuple[str, str, Path], ...] = (), origins: dict[str, str] | None = None,
                    at: str | None = None) -> Any:
    """Replace every mapping's ``preset`` by the preset's contents, overridden by the mapping's own keys.

    ``source`` names the file ``raw`` was read from; a preset given as a path is relative to
    ``base_dir`` (default: that file's directory). ``chain``: the (file, key, preset file) of each preset
    that led here; a preset that names itself again, or nests deeper than MAX_PRESET_DEPTH, is a ConfigError
    naming the first file and key and the chain. ``origins``, if given, receives the file each value of the
    result was written in, by its dotted key in the result (``at``: the key of ``raw`` there; default ``key``,
    which within a preset is relative to the preset's file)."""
    base_dir = Path(source).parent if base_dir is None else base_dir
    at = key if at is None else at
    if isinstance(raw, list):
        return [resolve_presets(v, source, f"{key}[{i}]", base_dir, chain, origins, f"{at}[{i}]")
                for i, v in enumerate(raw)]
    if not isinstance(raw, dict):
        if origins is not None:
            origins[at] = source
        return raw
    merged: dict[str, Any] = {}
    if "preset" in raw:
        path = preset_path(raw["preset"], source, key, base_dir)
        here = (*chain, (source, key, path))
        if path.resolve() in {p.resolve() for _, _, p in chain} or len(here) > MAX_PRESET_DEPTH:
            first_source, first_key, _ = here[0]
            steps = " -> ".join(f"{display_path(p)}" for _, _, p in here)
            why = "names itself again" if len(here) <= MAX_PRESET_DEPTH else \
                f"nests more than {MAX_PRESET_DEPTH} presets deep"
            raise ConfigError(f"{first_source}: {first_key + '.' if first_key else ''}preset: the chain {steps} "
                              f"{why}; expected presets that end without a cycle")
        base = resolve_presets(load_yaml(path), display_path(path), "", path.parent, here, origins, at)
        if not isinstance(base, dict):
            raise ConfigError(f"{path}: expected a mapping at the top level")
        merged.update(base)
        merged["preset"] = raw["preset"]
    for k, v in raw.items():
        if k == "preset":
            continue
        sub = f"{key}.{k}" if key else str(k)
        v = resolve_presets(v, source, sub, base_dir, chain, origins, f"{at}.{k}" if at else str(k))
        if isinstance(v, dict) and isinstance(merged.get(k), dict):
            merged[k] = _deep_merge(merged[k], v)
        else:
            merged[k] = v
    return merged


def _deep_merge(base: dict, top: dict) -> dict:
    out = dict(base)
    for k, v in top.items():
        out[k] = _deep_merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def parse_override(text: str, option: str = "--set") -> tuple[list[str], Any]:
    """``"a.b.c=2 GHz"`` -> (["a", "b", "c"], "2 GHz"); values are read as YAML scalars.
    ``option`` (``--set`` or ``--param``) names the option in error messages."""
    example = "host.frequency_hz='2.5 GHz'" if option == "--set" else "array_bytes='8 MiB'"
    if "=" not in text:
        raise ConfigError(f"{option} {text}: expected key=value, e.g. {option} {example}")
    key, value = text.split("=", 1)
    parts = [p for p in key.strip().split(".")]
    if not all(parts):
        raise ConfigError(f"{option} {text}: expected a dotted key like dram.geometry.channels" if option == "--set"
                          else f"{option} {text}: expected a parameter name, e.g. {option} {example}")
    try:
        parsed = load_yaml_text(value, f"{option} {text}") if value.strip() else ""
    except AliasError:
        raise
    except ConfigError:  # not YAML: the text as it is (the schema says what it expected)
        parsed = value
    return parts, parsed


def apply_overrides(raw: dict, overrides: typing.Iterable[str], spec_cls: type) -> dict:
    """Apply ``--set`` overrides to a resolved raw config, checking each key against the schema."""
    raw = copy.deepcopy(raw)
    errors: list[Problem] = []
    set_by: dict[tuple[int, str], str] = {}  # (the mapping, its key) -> the override that set it
    for text in overrides:
        parts, value = parse_override(text)
        problem = _check_path(spec_cls, parts, raw)
        if problem:
            errors.append(Problem("", *problem, option=f"--set {text}"))
            continue
        node: Any = raw
        for i, part in enumerate(parts[:-1]):
            if _written_wrong(node):
                break
            if isinstance(node, list):
                items, node = node, list_item(node, part)
                if node is None:
                    errors.append(Problem("", ".".join(parts[:i + 1]), f"no list item named {part!r}; expected "
                                          f"{item_names(items)}", option=f"--set {text}"))
                    break
            else:
                node = node.setdefault(part, {})
        else:
            if isinstance(node, list) and not _written_wrong(node):
                errors.append(Problem("", "", "expected a parameter, not a whole list item", option=f"--set {text}"))
            elif not _written_wrong(node):
                where = (id(node), parts[-1])  # however the key is written (a list item by index or by name)
                if where in set_by:
                    errors.append(Problem("", ".".join(parts), f"set twice (--set {set_by[where]} and --set {text}); "
                                          "expected each key set once", option=f"--set {text}"))
                set_by.setdefault(where, text)
                node[parts[-1]] = value
    if errors:
        raise ConfigError(errors)
    return raw


def _written_wrong(node: Any) -> bool:
    """Whether an override's walk has reached a section the file gives as neither a mapping nor a list of
    specs (a scalar, or a list of scalars): the override is then left out, for the schema to refuse the section
    in the file's own words."""
    if isinstance(node, list):
        return not all(isinstance(item, dict) for item in node)
    return not isinstance(node, dict)


def list_item(items: list, part: str) -> Any:
    """The item of a list of specs (cache levels) that a dotted key's ``part`` selects: by index or by name; None
    for neither."""
    if part.isdigit() and int(part) < len(items):
        return items[int(part)]
    return next((it for it in items if isinstance(it, dict) and it.get("name") == part), None)


def item_names(items: list) -> str:
    """What selects an item of a list of specs, for a message: "one of L1D, L2, LLC (or an index 0 to 2)"."""
    names = [str(it["name"]) for it in items if isinstance(it, dict) and "name" in it]
    indices = f"an index 0 to {len(items) - 1}" if items else "none: the list is empty"
    return f"one of {', '.join(names)} (or {indices})" if names else indices


def _field_types(cls: Any) -> dict[str, Any]:
    """Parameter name -> type of a spec dataclass (its fields, not its class attributes)."""
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls)}


def _check_path(cls: Any, parts: list[str], raw: Any = None) -> tuple[str, str] | None:
    """None if ``parts`` names a parameter of ``cls``, else (the key at fault, what is wrong with it).
    ``raw``, the config being overridden, tells which entries of a mapping exist and which kind each is."""
    tp: Any = cls
    node: Any = raw
    for i, part in enumerate(parts):
        where = ".".join(parts[:i + 1])
        origin = typing.get_origin(tp)
        if origin is tuple:  # list of specs: an index or a name selects the item
            tp = typing.get_args(tp)[0]
            node = list_item(node, part) if isinstance(node, list) else None
            continue
        if origin is dict:
            tp = typing.get_args(tp)[1]
            if isinstance(node, dict) or node is None and raw is not None:
                entries = sorted(node or {})
                if part not in entries:
                    return where, (f"no such entry in the system; expected one of: "
                                   f"{', '.join(entries) or '(none: the system has no ' + parts[i - 1] + ')'}")
            node = node.get(part) if isinstance(node, dict) else None
            continue
        if not dataclasses.is_dataclass(tp):
            return ".".join(parts[:i]), f"a value, it has no key {part!r}"
        hints = _field_types(tp)
        kinds = registered_kinds(tp)
        kind = node.get("kind") if isinstance(node, dict) else None
        # a polymorphic spec: the keys of its entry's kind, or any registered kind's if unknown
        for kind_cls in ([kinds[kind]] if kind in kinds else kinds.values()):
            hints = {**_field_types(kind_cls), **hints}
        if part not in hints:
            of_kind = f" of a {kind!r} entry" if kind in kinds else ""
            return where, (f"unknown key{of_kind}{did_you_mean(part, hints)}; "
                           f"expected one of: {', '.join(sorted(hints))}")
        tp = hints[part]
        node = node.get(part) if isinstance(node, dict) else None
    if dataclasses.is_dataclass(tp) or typing.get_origin(tp) in (tuple, dict):
        return ".".join(parts), "a section; expected the key of one parameter"
    return None


@dataclasses.dataclass(frozen=True)
class LoadedConfig:
    """A validated spec with the raw resolved mapping it came from and its content hash."""

    spec: Any
    resolved: dict
    source: str

    @property
    def content_hash(self) -> str:
        """First 16 hex digits of the SHA-256 of the spec's canonical JSON (SI values)."""
        return content_hash(spec_to_dict(self.spec))


def content_hash(data: Any) -> str:
    """Stable hash of plain data (canonical JSON)."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def load_spec(path: str | Path, spec_cls: type, overrides: typing.Iterable[str] = ()) -> LoadedConfig:
    """Load, resolve presets, apply overrides and validate a config file into ``spec_cls``."""
    source = str(path)
    raw = load_yaml(path)
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: expected a mapping at the top level, got {type(raw).__name__}")
    origins: dict[str, str] = {}
    as_written = resolve_presets(raw, source, origins=origins)
    resolved = apply_overrides(as_written, overrides, spec_cls)
    errors: list[Problem] = []
    spec = build_spec(spec_cls, resolved, source, "", errors)
    if errors:  # the options name list items as the file has them, or as an earlier option renamed them
        raise ConfigError([_from_preset(_attributed(e, overrides, as_written, resolved), source, origins)
                           for e in errors])
    return LoadedConfig(spec=spec, resolved=resolved, source=source)


def _from_preset(problem: Problem, source: str, origins: dict[str, str]) -> Problem:
    """``problem`` saying which preset file wrote the refused value, where one did: not ``source`` itself, nor a
    ``--set``, and no key its rule reads written in ``source`` (the file's own value may be the cause)."""
    written_in = origins.get(problem.key)
    if problem.option or written_in in (None, source) or any(origins.get(k) == source for k in problem.related):
        return problem
    return dataclasses.replace(problem, detail=f"{problem.detail} (written in preset {written_in})")


def indexed_key(raw: Any, key: str) -> str:
    """An override's dotted key as validation problems spell it: a list item, which ``--set`` names
    (``caches.levels.L2``), becomes its index (``caches.levels[1]``)."""
    out: list[str] = []
    node = raw
    for part in key.split("."):
        if isinstance(node, list) and out:
            item = list_item(node, part)
            index = next((i for i, it in enumerate(node) if it is item), part)
            out[-1] += f"[{index}]"
            node = item
        else:
            out.append(part)
            node = node.get(part) if isinstance(node, dict) else None
    return ".".join(out)


#: keys that choose which rules the rest of their section obeys (a DRAM standard, an accelerator kind)
SELECTOR_KEYS = ("standard", "kind")


def _attributed(problem: Problem, overrides: typing.Iterable[str], as_written: Any, resolved: Any) -> Problem:
    """``_attribute_override`` against the file as written, else against the config the options made."""
    named = _attribute_override(problem, overrides, as_written)
    return named if named is not problem else _attribute_override(problem, overrides, resolved)


def _attribute_override(problem: Problem, overrides: typing.Iterable[str], resolved: Any) -> Problem:
    """Name the ``--set`` option, not only the file, when the bad value came from the command line:
    the problem is about the overridden key itself or the section holding it, or else its rule reads
    that key (a rule across sections, such as a cache line of one DRAM burst)."""
    set_keys = [(text, text.split("=", 1)[0].strip()) for text in overrides]
    said = {key: indexed_key(resolved, key) for _, key in set_keys}
    for keys in ((problem.key,), problem.related):
        for text, key in set_keys:
            if any(overlaps(k, said[key]) for k in keys):
                shown = key if problem.key == said[key] else problem.key  # the option's own spelling
                return dataclasses.replace(problem, key=shown, option=f"--set {text}")
    for text, key in set_keys:  # a section whose kind the option changed: its keys are read by the new kind's rules
        section, _, leaf = said[key].rpartition(".")
        if leaf in SELECTOR_KEYS and section and (problem.key + ".").startswith(section + "."):
            return dataclasses.replace(problem, option=f"--set {text}")
    return problem


def strip_meta(raw: Any) -> Any:
    """The resolved mapping without documentation keys (source, notes, preset)."""
    if isinstance(raw, dict):
        return {k: strip_meta(v) for k, v in raw.items() if k not in META_KEYS}
    if isinstance(raw, list):
        return [strip_meta(v) for v in raw]
    return raw

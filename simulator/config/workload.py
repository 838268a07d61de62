"""Workload configs: which generator, with which parameters, or a stored trace.

A workload YAML is either
  ``{name, generator, params}``: ``generator`` names an entry of
  ``workloads.registry.GENERATORS`` and ``params`` its keyword arguments, or
  ``{name, trace}``: a Parquet operation trace (path relative to the YAML file).
A parameter whose name ends in a unit suffix is given with its unit and
converted: ``*_bytes`` sizes ("64 MiB"), ``*_hz`` frequencies, ``*_s`` times,
``*_bytes_per_s`` bandwidths. Unknown parameters, missing required ones and
wrong units are refused with the file and key named.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simulator.config.errors import ConfigError
from simulator.config.fields import did_you_mean
from simulator.config.loader import parse_override
from simulator.config.yamlio import load_yaml
from simulator.units import UnitError, parse_quantity

SUFFIX_DIMENSIONS = (("_bytes_per_s", "bandwidth"), ("_bytes", "size"), ("_hz", "frequency"), ("_s", "time"))
WORKLOAD_KEYS = ("name", "generator", "params", "trace", "source", "notes")


@dataclass(frozen=True)
class WorkloadSpec:
    """A resolved workload: generator name and converted parameters (SI), or a trace path."""

    name: str
    generator: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    trace_path: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """Plain data for hashing and the resolved record."""
        return {"name": self.name, "generator": self.generator, "params": dict(sorted(self.params.items())),
                "trace_path": self.trace_path}


def _convert_param(name: str, value: Any, label: str) -> Any:
    for suffix, dim in SUFFIX_DIMENSIONS:
        if name.endswith(suffix):
            try:
                number = parse_quantity(value, dim)
            except UnitError as exc:
                raise ConfigError(f"{label}: {exc}") from None
            return int(round(number)) if dim == "size" and abs(number - round(number)) < 1e-9 else number
    return value


_PLAIN_TYPES = {"int": "an integer", "float": "a number", "str": "a string", "bool": "true or false",
                "None": "null"}


def _type_problem(parameter: inspect.Parameter, value: Any) -> str | None:
    """What is wrong with ``value`` for a generator parameter annotated with plain types
    (``int``, ``float | None``, ...), or None; other annotations are left to the generator."""
    kinds = [k.strip() for k in str(parameter.annotation).split("|")]
    if parameter.annotation is inspect.Parameter.empty or not all(k in _PLAIN_TYPES for k in kinds):
        return None
    checks = {"int": lambda v: isinstance(v, int) and not isinstance(v, bool),
              "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
              "str": lambda v: isinstance(v, str), "bool": lambda v: isinstance(v, bool),
              "None": lambda v: v is None}
    if not any(checks[k](value) for k in kinds):
        return f"expected {' or '.join(_PLAIN_TYPES[k] for k in kinds)}, got {value!r}"
    if parameter.name == "seed" and value < 0:  # numpy's SeedSequence takes non-negative entropy
        return f"expected a non-negative integer, got {value!r}"
    return None


def build_workload(raw: Any, source: str, base_dir: Path, labels: dict[str, str] | None = None) -> WorkloadSpec:
    """Validate a raw workload mapping; raise ConfigError listing every problem.

    ``labels``: for parameters set from the command line, what messages name instead of
    ``<source>: params.<name>`` (the ``--param`` option)."""
    labels = labels or {}

    def label(k: str) -> str:
        return labels.get(k, f"{source}: params.{k}")

    from workloads.registry import GENERATORS

    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: expected a mapping with name and generator/params (or trace)")
    errors = [f"{source}: {k}: unknown key; expected one of: {', '.join(WORKLOAD_KEYS)}"
              for k in raw if k not in WORKLOAD_KEYS]
    name = raw.get("name", Path(source).stem)
    if ("generator" in raw) == ("trace" in raw):
        errors.append(f"{source}: generator/trace: expected exactly one of 'generator' or 'trace'")
    if errors:
        raise ConfigError(errors)
    if "trace" in raw:
        if labels:
            raise ConfigError([f"{text}: {source} replays a trace file; expected no workload parameters"
                               for text in labels.values()])
        path = Path(raw["trace"])
        path = path if path.is_absolute() else base_dir / path
        return WorkloadSpec(name=str(name), trace_path=str(path))
    gen = raw["generator"]
    if gen not in GENERATORS:
        raise ConfigError(f"{source}: generator: {gen!r} is unknown; expected one of: {', '.join(sorted(GENERATORS))}")
    params = raw.get("params") or {}
    if not isinstance(params, dict):
        raise ConfigError(f"{source}: params: expected a mapping of {gen} arguments, got {params!r}")
    sig = inspect.signature(GENERATORS[gen])
    accepted = [p for p in sig.parameters.values() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
                and p.name != "space"]
    names = {p.name for p in accepted}
    for k in params:
        if k not in names:
            errors.append(f"{label(k)}: unknown parameter of {gen}{did_you_mean(k, names)}; "
                          f"expected one of: {', '.join(sorted(names))}")
    for p in accepted:
        if p.default is inspect.Parameter.empty and p.name not in params:
            errors.append(f"{source}: params.{p.name}: missing; {gen} requires it")
    converted = {}
    by_name = {p.name: p for p in accepted}
    for k, v in params.items():
        if k in names:
            try:
                converted[k] = _convert_param(k, v, label(k))
            except ConfigError as exc:
                errors.extend(exc.messages)
                continue
            problem = _type_problem(by_name[k], converted[k])
            if problem:
                errors.append(f"{label(k)}: {problem}")
    if errors:
        raise ConfigError(errors)
    return WorkloadSpec(name=str(name), generator=gen, params=converted)


def load_workload(path: str | Path, params: list[str] | tuple[str, ...] = ()) -> WorkloadSpec:
    """Read and validate a workload YAML; ``params`` are ``key=value`` strings (``--param``) that
    override its generator parameters (messages about them name the option)."""
    raw = load_yaml(path)
    labels: dict[str, str] = {}
    if isinstance(raw, dict):
        for text in params:
            parts, value = parse_override(text, "--param")
            if len(parts) != 1:
                raise ConfigError(f"--param {text}: expected a parameter name without dots, e.g. "
                                  f"--param array_bytes='8 MiB'")
            if not isinstance(raw.get("params") or {}, dict):
                break  # build_workload reports the file's params
            raw["params"] = {**(raw.get("params") or {}), parts[0]: value}
            labels[parts[0]] = f"--param {text}"
    return build_workload(raw, str(path), Path(path).parent, labels)


def generate_trace(spec: WorkloadSpec, source: str = "<workload>"):
    """Run the workload's generator (or read its trace) and return the operation trace."""
    from workloads.registry import GENERATORS
    from workloads.trace import TraceError, read_trace

    if spec.trace_path is not None:
        try:
            return read_trace(spec.trace_path)
        except TraceError as exc:
            raise ConfigError(str(exc)) from None
    try:
        return GENERATORS[spec.generator](**spec.params)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{source}: params: {exc}") from None

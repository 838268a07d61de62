"""Workload configs: which generator, with which parameters, or a stored trace.

A workload YAML is either
  ``{name, generator, params}``: ``generator`` names an entry of
  ``workloads.registry.GENERATORS`` and ``params`` its keyword arguments, or
  ``{name, trace}``: a Parquet or CSV operation trace (path relative to the YAML file;
  ``workloads.trace.read_trace`` says which column types it takes), whose identity (the
  workload's hash) is the SHA-256 of the file's bytes, not its path: an edited trace is a new
  run, and the same file named by another path (relative or absolute) is the same run.
A parameter whose name ends in a unit suffix is given with its unit and
converted: ``*_bytes`` sizes ("64 MiB"), ``*_hz`` frequencies, ``*_s`` times,
``*_bytes_per_s`` bandwidths, unless the generator declares it as something
other than a number (``t_s: Sequence[int]``, a tile size in points). Unknown
parameters, missing required ones, wrong units, values of the wrong type, values
outside a closed choice (a parameter declared as a ``Literal``) and integers
beyond the trace's int64 columns are all refused together, with the file and
key named, before the generator runs. The generator's own refusals are
reported the same way, attributed to the parameter they name. A value given with ``--param`` is named by that option, over the file.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from simulator.errors import ConfigError, Problem, as_written
from simulator.config.fields import did_you_mean, plain_type, plain_value
from simulator.config.files import file_sha256
from simulator.config.loader import content_hash, parse_override
from simulator.config.yamlio import load_yaml
from simulator.units import DIMENSIONS, INT64_MAX, UnitError, exponent_number, finite_float, parse_quantity

SUFFIX_DIMENSIONS = (("_bytes_per_s", "bandwidth"), ("_bytes", "size"), ("_hz", "frequency"), ("_s", "time"))
WORKLOAD_KEYS = ("name", "generator", "params", "trace", "source", "notes")
#: Longest workload (or study) name, in bytes of UTF-8. The default run directory is
#: ``<name>-<16 hex digits>``, first written as ``.<that>.tmp-<8 characters>`` beside it
#: (``runner.write_run_dir``); both must fit the 255-byte file-name limit (NAME_MAX).
MAX_NAME_BYTES = 255 - len("-") - 16 - len("." + ".tmp-") - 8


@dataclass(frozen=True)
class WorkloadSpec:
    """A resolved workload: generator name and converted parameters (SI), or a trace path.

    ``trace_path`` is the trace file as named (relative to the working directory, or absolute), which
    reads it and names it in messages; ``trace_file`` is the same file as an absolute path with links
    resolved, which the resolved record names. ``trace_sha256``: the SHA-256 of the file's bytes when
    the workload was built (None if it could not be read then; reading the trace reports why). A trace
    workload's identity is its name and that digest, never the path's spelling. ``given`` (the
    parameters as written) and ``options`` (parameter -> the ``--param`` option that set it) only serve
    messages: they are not part of the workload's identity or hash."""

    name: str
    generator: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    trace_path: str | None = field(default=None, compare=False)
    trace_sha256: str | None = None
    trace_file: str | None = field(default=None, compare=False, repr=False)
    given: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    options: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    def identity(self) -> dict[str, Any]:
        """Plain data that identifies the workload, hashed into its run's hash (``run_hash``): a generator
        workload's name, generator and parameters; a trace workload's name and the digest of its file."""
        if self.trace_path is not None:
            return {"name": self.name, "generator": None, "params": {}, "trace_sha256": self.trace_sha256}
        return {"name": self.name, "generator": self.generator, "params": dict(sorted(self.params.items())),
                "trace_path": None}

    def as_dict(self) -> dict[str, Any]:
        """Plain data for the resolved record: the identity, and a trace workload's absolute file path."""
        return self.identity() if self.trace_path is None else {**self.identity(), "trace_path": self.trace_file}


def run_hash(config_hash: str, workload: WorkloadSpec) -> str:
    """A run's identity (16 hex digits): the hash of its system's content hash (``LoadedConfig.content_hash``)
    and the workload's identity, whatever path named the workload's trace file."""
    return content_hash([config_hash, workload.identity()])


def name_error(name: Any, source: str, key: str = "name") -> Problem | None:
    """The problem refusing ``name`` as a workload or study name, or None if it is fine: a non-empty
    string usable as one directory name (printable: no control or direction-changing characters; no
    '/', not starting with '.', at most MAX_NAME_BYTES bytes), since the default run and study
    directories are named after it."""
    text = name if isinstance(name, str) else ""
    size = len(text.encode("utf-8", "surrogatepass"))
    if text.strip() and text.isprintable() and "/" not in text and not text.startswith(".") \
            and size <= MAX_NAME_BYTES:
        return None
    written = as_written(name)
    shown = written if len(written) <= 60 else f"{written[:57]}... ({size} bytes)"
    return Problem(source, key, f"{shown}; expected a non-empty name usable as a directory name: printable, "
                   f"no '/', not starting with '.', at most {MAX_NAME_BYTES} bytes")


def _shape_errors(raw: dict, source: str) -> list[Problem]:
    """Problems with the top-level keys of a workload mapping: unknown keys, the name, and whether it
    is a generator with params or a trace file (never both, never neither)."""
    from workloads.registry import GENERATORS

    errors = [Problem(source, str(k), f"unknown key; expected one of: {', '.join(WORKLOAD_KEYS)}")
              for k in raw if k not in WORKLOAD_KEYS]
    problem = name_error(raw.get("name", Path(source).stem), source)
    if problem:
        errors.append(problem if "name" in raw else replace(problem, detail=f"{problem.detail} (no name given: "
                                                                            "the file's name)"))
    if ("generator" in raw) == ("trace" in raw):
        errors.append(Problem(source, "generator/trace", "expected exactly one of 'generator' or 'trace'",
                              ("generator", "trace")))
    elif "trace" in raw and "params" in raw:  # they would be ignored
        errors.append(Problem(source, "params", "given beside trace; expected either generator with params, or "
                              "trace alone (a trace file's workload takes no parameters)", ("trace",)))
    gen = raw.get("generator")
    if "generator" in raw and (not isinstance(gen, str) or gen not in GENERATORS):
        errors.append(Problem(source, "generator", f"{as_written(gen)} is {'unknown' if isinstance(gen, str) else 'not a name'}; "
                              f"expected one of: {', '.join(sorted(GENERATORS))}"))
    trace = raw.get("trace")
    if "trace" in raw and (not isinstance(trace, str) or not trace.strip() or "\0" in trace):
        errors.append(Problem(source, "trace", f"{as_written(trace)}; expected the path of a Parquet or CSV trace file (a "
                              "string, relative to the workload file)"))
    return errors


def build_workload(raw: Any, source: str, base_dir: Path, labels: dict[str, str] | None = None) -> WorkloadSpec:
    """Validate a raw workload mapping; raise ConfigError listing every problem.

    ``labels``: parameter -> the ``--param`` option that set it on the command line; messages about
    it name the option over the file (``--param text (over <source>): params.<name>: ...``)."""
    labels = labels or {}
    if not isinstance(raw, dict):
        raise ConfigError(Problem(source, "", "expected a mapping with name and generator/params (or trace)"))
    errors = _shape_errors(raw, source)
    if errors:
        raise ConfigError(errors)
    name = str(raw.get("name", Path(source).stem))
    if "trace" in raw:
        if labels:
            raise ConfigError([f"{text}: {source} replays a trace file; expected no workload parameters"
                               for text in labels.values()])
        path = Path(raw["trace"])
        path = path if path.is_absolute() else base_dir / path
        return WorkloadSpec(name=name, trace_path=str(path), trace_sha256=file_sha256(path),
                            trace_file=str(path.resolve()))
    gen = raw["generator"]
    params = {} if raw.get("params") is None else raw["params"]
    if not isinstance(params, dict):
        raise ConfigError(Problem(source, "params", f"expected a mapping of {gen} arguments, got {as_written(params)}"))
    converted = _convert_params(gen, params, source, labels)
    return WorkloadSpec(name=name, generator=gen, params=converted, given=dict(params), options=dict(labels))


def _accepted(gen: str) -> dict[str, inspect.Parameter]:
    """The keyword parameters a workload may give generator ``gen`` (its signature, less ``space``)."""
    from workloads.registry import GENERATORS

    return {p.name: p for p in inspect.signature(GENERATORS[gen]).parameters.values()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "space"}


def declared_types(gen: str) -> dict[str, Any]:
    """Generator ``gen``'s parameter types as declared (its resolved annotations: a closed choice as a
    ``Literal`` of its values); {} if they do not resolve (an installed generator's may not)."""
    from workloads.registry import GENERATORS

    try:
        return typing.get_type_hints(GENERATORS[gen])
    except Exception:  # a name an installed package's annotation uses but does not import
        return {}


def generator_params(spec: WorkloadSpec) -> dict[str, Any]:
    """The parameters ``spec``'s generator runs with: those the workload gives, the generator's defaults
    for the rest (SI values)."""
    defaults = {name: p.default for name, p in _accepted(spec.generator).items() if p.default is not p.empty}
    return {**defaults, **spec.params}


def _convert_params(gen: str, params: dict, source: str, labels: dict[str, str]) -> dict[str, Any]:
    """Check every parameter against generator ``gen``'s signature and convert units; raise
    ConfigError listing every problem."""
    accepted, declared = _accepted(gen), declared_types(gen)
    errors = []
    for k in params:
        if k not in accepted:
            unknown = (f"unknown parameter of {gen}{did_you_mean(k, accepted)}; "
                       f"expected one of: {', '.join(sorted(accepted))}")
            # an option that names no parameter is the option's problem, not the file's
            errors.append(Problem("", "", unknown, option=labels[k]) if k in labels
                          else Problem(source, f"params.{k}", unknown))
    errors += [Problem(source, f"params.{p.name}", f"missing; {gen} requires it") for p in accepted.values()
               if p.default is inspect.Parameter.empty and p.name not in params]
    converted = {}
    for k, v in params.items():
        if k in accepted:
            converted[k], problem = _check_param(accepted[k], v)
            problem = problem or _choice_problem(declared.get(k), v)
            if problem:
                errors.append(Problem(source, f"params.{k}", problem, option=labels.get(k, "")))
    if errors:
        raise ConfigError(errors)
    return converted


_PLAIN_TYPES = {"int": "an integer", "float": "a number", "str": "a string", "bool": "true or false",
                "None": "null"}
_IS_TYPE = {"int": lambda v: isinstance(v, int) and not isinstance(v, bool),
            "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
            "str": lambda v: isinstance(v, str), "bool": lambda v: isinstance(v, bool),
            "None": lambda v: v is None}


def _choices(declared: Any) -> tuple | None:
    """The values a parameter declared as a closed choice takes (``Literal["a", "b"]``, or such a choice
    or null: ``Literal["a", "b"] | None``), or None for any other type."""
    if typing.get_origin(declared) is typing.Literal:
        return typing.get_args(declared)
    if typing.get_origin(declared) in (typing.Union, types.UnionType):
        parts = [_choices(a) if a is not type(None) else (None,) for a in typing.get_args(declared)]
        return None if any(p is None for p in parts) else tuple(v for p in parts for v in p)
    return None


def _choice_problem(declared: Any, value: Any) -> str | None:
    """What is wrong with ``value`` of a parameter of declared type ``declared`` if that is a closed choice
    (``_choices``): the value as written and the choices, in words; None if it is one of them or no choice."""
    choices = _choices(declared)
    if choices is None or any(value == c and type(value) is type(c) for c in choices):
        return None
    return f"{as_written(value)}; expected {plain_type(declared)}"


def _plain_kinds(parameter: inspect.Parameter) -> list[str] | None:
    """The plain types a parameter's annotation allows (``int | None`` -> ["int", "None"]), or None
    when it is absent or not made of plain types (a sequence, an alias): the generator checks those."""
    kinds = [k.strip() for k in str(parameter.annotation).split("|")]
    if parameter.annotation is inspect.Parameter.empty or not all(k in _PLAIN_TYPES for k in kinds):
        return None
    return kinds


def _dimension(parameter: inspect.Parameter) -> str | None:
    """The unit dimension of a parameter named with a unit suffix, unless the generator declares it
    as something other than a number: its declaration wins over the name (``t_s: Sequence[int]``
    is a tile size in grid points, not a time)."""
    kinds = _plain_kinds(parameter)
    declared_other = parameter.annotation is not inspect.Parameter.empty and (
        kinds is None or not set(kinds) <= {"int", "float", "None"})
    if declared_other:
        return None
    return next((dim for suffix, dim in SUFFIX_DIMENSIONS if parameter.name.endswith(suffix)), None)


def _check_param(parameter: inspect.Parameter, value: Any) -> tuple[Any, str | None]:
    """(value converted to SI, what is wrong with it or None) for one generator parameter."""
    dim = _dimension(parameter)
    kinds = _plain_kinds(parameter) or []
    if dim is not None and not (value is None and "None" in kinds):
        try:
            number = parse_quantity(value, dim)
        except UnitError as exc:
            return value, str(exc)
        whole = dim == "size" and abs(number - round(number)) < 1e-9
        converted = int(round(number)) if whole else number
    else:
        converted = exponent_number(value) if "float" in kinds else value
    if kinds and not any(_IS_TYPE[k](converted) for k in kinds):
        expected = " or ".join(_PLAIN_TYPES[k] for k in kinds)
        if dim is not None and "int" in kinds:
            expected = f"a whole number of {'bytes' if dim == 'size' else DIMENSIONS[dim].si_unit}"
        return converted, f"expected {expected}, got {as_written(value)}"
    return converted, _bound_problem(parameter.name, kinds, converted, value, dim) if kinds else None


def _bound_problem(name: str, kinds: list[str], value: Any, given: Any, dim: str | None) -> str | None:
    """Bounds every plainly typed generator parameter shares: integer parameters fit the trace's int64
    columns (sizes its byte addresses, below 2**62), numbers are finite, strings are not empty, and a unit or
    stage label (``LABEL_PARAMS``) at most ``MAX_LABEL_CHARS`` characters."""
    from workloads.trace import MAX_ADDR, MAX_LABEL_CHARS

    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int) and "int" in kinds:
        if name == "seed":  # numpy's SeedSequence takes any non-negative integer; no trace column holds it
            return None if value >= 0 else f"expected a non-negative integer, got {as_written(given)}"
        top, why = ((MAX_ADDR, "the trace's byte addresses end at 2**62") if dim == "size"
                    else (INT64_MAX, "the largest value of the trace's int64 columns"))
        if value > top:
            return f"{as_written(given)}; expected at most {top:,}{' B' if dim == 'size' else ''} ({why})"
        if value < -INT64_MAX - 1:
            return f"{as_written(given)}; expected at least {-INT64_MAX - 1:,} (the smallest value of the trace's int64 columns)"
    if ((isinstance(value, float) or (isinstance(value, int) and "int" not in kinds))
            and finite_float(value) is None):
        return f"{as_written(given)}; expected a finite number"  # inf, nan, or an integer beyond the float range
    if isinstance(value, str) and not value.strip():
        return f"{as_written(given)}; expected a non-empty string"
    if isinstance(value, str) and name in LABEL_PARAMS and len(value) > MAX_LABEL_CHARS:
        return (f"{as_written(given)}; expected at most {MAX_LABEL_CHARS} characters (a trace's unit and stage "
                "labels: workloads.trace.MAX_LABEL_CHARS)")
    return None


#: generator parameters that become a trace's unit or stage labels (``workloads.trace.MAX_LABEL_CHARS`` each)
LABEL_PARAMS = ("unit", "stage", "target")


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
            if parts[0] in labels:
                raise ConfigError(f"--param {text}: {parts[0]} set twice ({labels[parts[0]]} and --param {text}); "
                                  "expected each parameter set once")
            labels[parts[0]] = f"--param {text}"
            if "trace" in raw or not isinstance({} if raw.get("params") is None else raw["params"], dict):
                continue  # build_workload refuses --param on a trace, and reports the file's params
            raw["params"] = {**(raw.get("params") or {}), parts[0]: value}
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
        raise ConfigError(_generator_error(spec, source, str(exc))) from None
    except OverflowError as exc:  # a product of parameters beyond int64 that no check foresaw
        raise ConfigError(Problem(source, "params", f"{exc}; expected parameters whose trace fits its int64 "
                                  "columns")) from None


# the parameter names a generator's message starts with: "kind must ...", "tile_kind, t_t and t_s are ..."
_LEADING_NAMES = re.compile(r"(\w+(?:(?:, | and )\w+)*) ")


def _generator_error(spec: WorkloadSpec, source: str, text: str) -> Problem:
    """A generator's refusal as a problem naming the parameter it is about, and the ``--param``
    option if one set that parameter or is mentioned: ``X must be Y, got Z`` reads
    ``params.X: Z; expected Y``, Z as the file writes it (the value given, or the default the
    generator ran with: null, true, a list)."""
    match = _LEADING_NAMES.match(text)
    accepted = _accepted(spec.generator)
    names = [n for n in re.split(r", | and ", match.group(1)) if n in accepted] if match else []
    option = next((n for n in names if n in spec.options), None) or next(
        (k for k in spec.options if re.search(rf"\b{re.escape(k)}\b", text)), None)
    label = spec.options[option] if option else ""
    if not names:
        return Problem(source, "params", text, option=label)
    key = option if option in names else names[0]
    related = tuple(f"params.{n}" for n in names if n != key)
    rule = re.fullmatch(rf"{re.escape(key)} must be (.+), got (.+)", text, re.S)
    if rule is None or len(names) > 1:
        return Problem(source, f"params.{key}", text, related, option=label)
    ran = spec.given if key in spec.given else generator_params(spec)
    shown = as_written(ran[key]) if key in ran else rule.group(2)
    return Problem(source, f"params.{key}", f"{shown}; expected {rule.group(1)}", option=label)


@dataclass(frozen=True)
class GeneratorParameter:
    """One parameter of a workload generator as ``offsim generators`` lists it, in a config's words: its
    name, unit (by its name's suffix; "" for a plain number or other value), default as a workload writes
    it ("required" if none, "not set" for null, a size exactly), and what it accepts (a size with a unit,
    the choices of a ``Literal``, "a list of integers")."""

    name: str
    unit: str
    default: str
    accepts: str


def describe_generator(gen: str) -> tuple[str, list[GeneratorParameter]]:
    """Generator ``gen``'s one-line description and its parameters, from its signature and docstring."""
    from workloads.registry import GENERATORS

    doc = (inspect.getdoc(GENERATORS[gen]) or "").split("\n\n")[0].replace("\n", " ")
    hints = declared_types(gen)  # {} if an installed generator's do not resolve: its annotation's text then
    rows = []
    for p in _accepted(gen).values():
        dim = _dimension(p)
        unit = "B" if dim == "size" else DIMENSIONS[dim].si_unit if dim else ""
        default = "required" if p.default is p.empty else plain_value(p.default, unit)
        if dim:  # given with its unit ("8 MiB"), whatever number type the generator declares
            accepts = DIMENSIONS[dim].expected().split(" (")[0] + (" or null" if "None" in (_plain_kinds(p) or ())
                                                                  else "")
        elif p.name in hints:
            accepts = plain_type(hints[p.name])
        else:
            accepts = "" if p.annotation is p.empty else str(p.annotation)
        rows.append(GeneratorParameter(p.name, unit, default, accepts))
    return doc, rows

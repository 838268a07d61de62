"""The ``offsim`` command line.

offsim run SYSTEM.yaml WORKLOAD.yaml [--set key=value ...] [--param key=value ...] [--out DIR] [--crosscheck] [--plot]
offsim study STUDY.yaml [--out DIR] [--workers N | --scheduler ADDRESS | --dask-local N]
offsim validate FILE [FILE ...]   (a trace or workload beside SYSTEM.yaml is checked against it)
offsim keys [PREFIX]
offsim commands [KIND]
offsim reproduce TARGET [--out DIR] [--quick]
offsim models logca [ENTRY ...] [--table FILE] [--g SIZE ...] [--improve P=F ...] [--out FILE.csv]
                    [--plot FILE.png]
offsim models roofline [ENTRY ...] [--table FILE] [--intensity I ...] [--precision P] [--throughput T]
                       [--power-cap] [--system SYSTEM.yaml ...] [--out FILE.csv] [--plot FILE.png]
offsim models ulist [--machine FILE] [--q Q ...] [--placement P ...] [--variant V ...] [--n-points N]
                    [--density D] [--llc SIZE] [--blocks B] [--out FILE.csv] [--plot FILE.png]
offsim models chain [--dims P0,P1,...] [--m-elems M] [--elem-bytes B] [--out FILE.csv]
offsim models stencil [STENCIL ...] [--space S1,S2,...] [--steps T] [--kind K] [--c-iter TIME]
                      [--tile TT,TS1,... ... | --t-t RANGE --t-s RANGE ...] [--threads RANGE]
                      [--objective time|energy] [--out FILE.csv] [--plot FILE.png]
offsim bench [NAME ...]

Bad input of any kind prints one message per problem (file, key, what was
expected) to stderr and exits with code 2, leaving no output behind.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from simulator.errors import EXIT_BAD_INPUT, InputError
from simulator.arguments import OptionParser, int_arg
from simulator.units import NOT_KNOWN, format_energy, format_quantity

if TYPE_CHECKING:  # imported lazily at run time: the CLI starts without the models
    from simulator.studies.roofline import CrosscheckRow

DEFAULT_RESULTS_DIR = Path("results") / "runs"


def _print_summary(summary: dict) -> None:
    t = summary["simulated_time_s"]
    print(f"system    {summary['system_name']}  (config {summary['config_hash']})")
    print(f"workload  {summary['workload_name']}  (run {summary['run_hash']})")
    print(f"time      {format_quantity(t, 's')}  = {summary['host_cycles']:.6g} host cycles")
    print(f"energy    {format_energy(summary['energy_total_j'])}")
    unknown = [comp for comp, joules in summary["energy_by_component_j"].items() if math.isnan(joules)]
    if unknown:
        print(f"          (not known: {', '.join(unknown)}, which no declared figure prices, and so the total)")
    # largest first, the components whose energy is not known last
    for comp, joules in sorted(summary["energy_by_component_j"].items(),
                               key=lambda kv: (math.isnan(kv[1]), 0.0 if math.isnan(kv[1]) else -kv[1])):
        print(f"  {comp:<16} {format_energy(joules):>12}")
    for level, c in summary["caches"].items():
        print(f"{level:<5} accesses {c['accesses']:>12,}  hits {c['hits']:>12,}  misses {c['misses']:>12,}  "
              f"write-backs {c['writebacks']:>10,}  (lines)")
    d = summary["dram"]
    print(f"DRAM  reads {d['reads']:,} lines  writes {d['writes']:,} lines  activates {d['activates']:,} commands  "
          f"row hits {d['row_hits']:,} lines  ({format_quantity(d['bandwidth_bytes_per_s'], 'B/s')})")


def _print_columns(table: list[tuple[str, ...]], caps: tuple[int, ...] = (), indent: str = "") -> None:
    """Print rows as columns two spaces apart, each as wide as its widest cell (at most its cap, if one
    is given; a longer cell overflows rather than widening every row); the last column is not padded."""
    n = len(table[0]) - 1
    widths = [max(len(row[i]) for row in table) for i in range(n)]
    widths = [min(w, cap) for w, cap in zip(widths, caps)] + widths[len(caps):]
    for row in table:
        print((indent + "  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[-1]).rstrip())


def cmd_run(args: argparse.Namespace) -> int:
    from simulator.studies import interruption
    from simulator.config.loader import load_spec
    from simulator.config.schema import SystemSpec
    from workloads.spec import generate_trace, load_workload, run_hash
    from simulator.runner import check_run_dir_target, simulate, write_run_dir

    def checked(target: Path) -> None:
        """Say on an interruption that the run directory holds what it held (it is replaced only when done)."""
        if target.is_dir():
            interruption.keep(lambda: f"nothing written; {target} holds what it held before")

    if args.out is not None:  # '' too: refused here, not taken for "no --out"
        checked(check_run_dir_target(args.out))  # before the run, not after it
    _check_order(args.system, args.workload)
    loaded = load_spec(args.system, SystemSpec, args.set)
    workload = load_workload(args.workload, args.param)
    default_out = DEFAULT_RESULTS_DIR / f"{workload.name}-{run_hash(loaded.content_hash, workload)}"
    if args.out is None:  # the default directory is checked before the run too, in its own words
        checked(check_run_dir_target(default_out, "the default output directory (no --out)"))
    trace = generate_trace(workload, args.workload)  # names a --param its generator refuses
    given = "".join(f" --param {text}" for text in args.param)  # a refusal of the trace names them too
    source = f"{workload.trace_path or args.workload}{given and f' (with{given})'}"
    if args.crosscheck:
        from simulator.studies.crosschecks import crosscheck_for

        check = crosscheck_for(workload)
        problem = check.run_problem(loaded, workload, trace, source)
        if problem:
            raise InputError(f"--crosscheck: {problem}")
    results = simulate(loaded, workload, trace, source)
    extra = {}
    if args.crosscheck:
        from simulator.studies.roofline import crosscheck_csv

        checks = check.run_rows(results, loaded, workload)
        extra["crosscheck.csv"] = crosscheck_csv(checks)
    if args.plot:
        from simulator.studies.run_figure import run_figure_png

        extra["run.png"] = run_figure_png(results, f"{workload.name} on {loaded.spec.name}")
    out = Path(args.out) if args.out is not None else default_out
    write_run_dir(results, out, loaded, workload, extra)
    _print_summary(results.summary())
    if args.crosscheck:
        _print_crosscheck(checks)
    print(f"written   {out}")
    return 0


def _print_crosscheck(checks: list[CrosscheckRow]) -> None:
    """The time and energy rows of a cross-check, simulated beside predicted, each after its model's tag."""
    for row in checks:
        if row.model is None:
            continue
        if math.isnan(row.simulated):  # an energy priced by no declared figure
            simulated, error = NOT_KNOWN, "n/a: the simulated value is not known"
        else:
            simulated = format_quantity(row.simulated, row.unit)
            error = "n/a: the model predicts 0" if row.error is None else f"{row.error:+.1%}"
        print(f"{row.tag:<9} {row.quantity:<7} simulated {simulated:>12}  model "
              f"{format_quantity(row.model, row.unit):>12}  ({error})")


def _yaml_kind(raw: object) -> str | None:
    """'workload', 'system', 'paper study' or 'study' by a YAML mapping's telltale keys, else None."""
    if isinstance(raw, dict) and ("generator" in raw or "trace" in raw):
        return "workload"
    if isinstance(raw, dict) and "host" in raw:
        return "system"
    if isinstance(raw, dict) and "study" in raw:
        return "paper study"
    if isinstance(raw, dict) and "sweep" in raw:
        return "study"
    return None


def _validate_study(path: str, raw: dict, kind: str, max_points: int | None = None) -> str:
    """Validate a study file as its runner would before running (``max_points``: its limit, None for the
    default); return what it is."""
    from simulator.studies.plugin import STUDY_KINDS
    from simulator.studies.plugin_run import load_specialised
    from simulator.studies.sweep import load_study, prepare_points

    limit = {} if max_points is None else {"max_points": max_points}
    if kind == "paper study" and isinstance(raw["study"], str) and raw["study"] in STUDY_KINDS:
        load_specialised(path, raw["study"], **limit)
        return f"{raw['study']} study"
    study = load_study(path)  # a sweep file, or an unknown study kind (one message)
    return f"study {study.name!r}, {len(prepare_points(study, **limit))} points"


def _check_order(system: str, workload: str) -> None:
    """One message for ``offsim run`` given its two files the wrong way round (rather than every
    key of each file reported as wrong)."""
    from simulator.errors import ConfigError
    from simulator.config.yamlio import load_yaml

    if Path(system).suffix in (".yaml", ".yml") and _yaml_kind(load_yaml(system)) == "workload":
        swapped = " (the two files are swapped)" if _yaml_kind(load_yaml(workload)) == "system" else ""
        raise ConfigError(f"{system}: is a workload{swapped}; expected a system config first: "
                          "offsim run SYSTEM.yaml WORKLOAD.yaml")


def validate_file(path: str, max_points: int | None = None) -> tuple[str, object, str]:
    """Validate one config, workload or trace file (a study under the point limit ``max_points``, None for the
    default); return what it is, for a system its loaded config, for a workload or trace its trace table (else
    None), and the file a problem of that content is named by (a workload's trace file, as a run names it);
    raise InputError if bad."""
    from simulator.errors import ConfigError
    from simulator.config.loader import load_spec
    from simulator.config.schema import SystemSpec
    from workloads.spec import build_workload, generate_trace
    from simulator.config.yamlio import load_yaml

    p = Path(path)
    if p.suffix.lower() in (".parquet", ".csv"):
        from workloads.trace import TraceError, read_trace

        try:
            table = read_trace(p)
        except TraceError as exc:
            raise InputError(str(exc)) from None
        return f"trace, {table.num_rows} rows", table, path
    raw = load_yaml(p)
    kind = _yaml_kind(raw)
    if kind == "workload":  # as run would: the generator checks its values, a trace file is read
        spec = build_workload(raw, path, p.parent)
        trace = generate_trace(spec, path)
        return f"workload {spec.name!r}, {trace.num_rows} trace rows", trace, str(spec.trace_path or path)
    if kind in ("study", "paper study"):
        return _validate_study(path, raw, kind, max_points), None, path
    if kind == "system":
        loaded = load_spec(p, SystemSpec)
        return f"system {loaded.spec.name!r} (config {loaded.content_hash})", loaded, path
    raise ConfigError(f"{path}: expected a system config (with host/caches/dram), a workload (with generator or "
                      "trace), a study (with sweep, or a paper's study: kind) or a Parquet or CSV trace")


def cmd_validate(args: argparse.Namespace) -> int:
    """Validate each file; a trace or workload given beside system configs is also checked against each
    of them as a run would check it before replaying (its units, rows, commands and memory reach)."""
    from simulator.config.loader import LoadedConfig

    if args.max_points is not None:  # once, whatever the files
        from simulator.studies.sweep import check_max_points

        check_max_points(args.max_points)
    problems: list[str] = []
    checked = []
    for path in args.files:
        try:
            what, content, source = validate_file(path, args.max_points)
        except InputError as exc:
            problems.extend(exc.messages)
            continue
        checked.append((path, what, content, source))
    systems = [(path, content) for path, _, content, _ in checked if isinstance(content, LoadedConfig)]
    for path, what, content, source in checked:
        if systems and content is not None and not isinstance(content, LoadedConfig):
            from simulator.runner import check_trace_on_system  # the engine only when a trace meets a system

            try:
                for system_path, loaded in systems:
                    check_trace_on_system(loaded, content, source)
            except InputError as exc:
                problems.extend(f"{m} (checked against {system_path})" if len(systems) > 1 else m
                                for m in exc.messages)
                continue
            what += f"; its rows and commands fit {', '.join(p for p, _ in systems)}"
        print(f"{path}: ok ({what})")
    if problems:  # a trace named directly and through its workload file: its problems said once
        raise InputError(list(dict.fromkeys(problems)))
    return 0


def cmd_study(args: argparse.Namespace) -> int:
    from simulator.studies.plugin_run import run_specialised, specialised_kind
    from simulator.studies.spec import failure_lines
    from simulator.studies.sweep import run_study, study_failures

    kind = specialised_kind(args.study)
    limit = {} if args.max_points is None else {"max_points": args.max_points}
    if kind is not None:  # a paper study file: its plug-in's points and report
        return run_specialised(args.study, kind, args.out, workers=args.workers, scheduler=args.scheduler,
                               dask_local=args.dask_local, **limit)
    outcome = run_study(args.study, args.out, workers=args.workers, scheduler=args.scheduler,
                        dask_local=args.dask_local, **limit)
    print(f"study     {outcome.study.name}: {len(outcome.points)} points, {len(outcome.simulated)} simulated, "
          f"{len(outcome.reused)} reused, {len(outcome.failed)} failed")
    for line in failure_lines(study_failures(outcome), outcome.out_dir / "failed"):
        print(line)
    print(f"written   {outcome.report_path}")
    return 1 if outcome.failed else 0


def cmd_reproduce(args: argparse.Namespace) -> int:
    from simulator.studies import interruption
    from simulator.studies.reproduce import DEFAULT_OUT_DIR, reproduce, summary_line

    out = Path(args.out) if args.out is not None else DEFAULT_OUT_DIR / args.target
    interruption.keep(lambda: interruption.kept_in(out))
    path = reproduce(args.target, args.out, quick=args.quick)
    print(f"reproduce {args.target}: {summary_line(path)}")
    print(f"written   {path}")
    return 0


def cmd_models(args: argparse.Namespace) -> int:
    from simulator.studies import model_eval

    outputs = model_eval.Outputs(args.out, args.plot)
    # a file option given empty is refused as a path, not taken for its default
    table = getattr(args, "table", None)
    if args.model == "ulist":
        from simulator.studies.fmm import model_eval as ulist_eval

        machine = ulist_eval.DEFAULT_MACHINE if args.machine is None else args.machine
        lines = ulist_eval.run_ulist(machine, args.q, args.placement, args.variant, args.n_points, args.density,
                                     args.llc, args.blocks, outputs)
    elif args.model == "chain":
        from simulator.studies import chain_eval

        lines = chain_eval.run_chain(args.dims, args.m_elems, args.elem_bytes, outputs)
    elif args.model == "stencil":
        from simulator.studies.stencil import model_eval as stencil_eval

        lines = stencil_eval.run_stencil(args.entries, args.kind, args.space, args.steps, args.c_iter, args.tile,
                                         args.t_t, args.t_s, args.threads, args.objective, outputs)
    elif args.model == "logca":
        lines = model_eval.run_logca(args.entries, model_eval.LOGCA_TABLE if table is None else table, args.g, outputs,
                                     args.improve)
    else:
        lines = model_eval.run_roofline(args.entries, model_eval.ROOFLINE_TABLE if table is None else table,
                                        args.intensity, args.precision, args.throughput, args.power_cap, outputs,
                                        args.system or ())
    print("\n".join(lines))
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from simulator.studies import benchmarks

    if not args.names:
        print("\n".join(benchmarks.listing()))
        return 0
    return benchmarks.run(args.names)


def cmd_keys(args: argparse.Namespace) -> int:
    from simulator.config.fields import describe_spec
    from simulator.config.reference import named_as
    from simulator.config.schema import SystemSpec

    if args.set and not args.system:
        raise InputError("keys: --set: applies to a system's values; expected --system FILE with it")
    if args.system:
        return _print_effective_keys(args)
    rows = describe_spec(SystemSpec)
    if args.prefix:
        rows = [dataclasses.replace(r, key=named_as(r.key, args.prefix)) for r in _keys_of(rows, args.prefix,
                                                                                          "no system key")]
    header = ("key", "unit", "default", "accepts", "description")
    table = [header] + [(r.key, r.unit, r.default, r.accepts, r.doc) for r in rows]
    # a long list of choices overflows its column rather than widening it for every row
    _print_columns(table, caps=(80, 8, 12, 28))
    return 0


def _print_effective_keys(args: argparse.Namespace) -> int:
    """``offsim keys --system FILE``: the system's effective value of every key and where it came from."""
    from simulator.config.effective import effective_values

    rows = effective_values(args.system, args.set)
    if args.prefix:
        rows = _keys_of(rows, _level_by_name(args.prefix, rows), f"no key of {args.system}")
    table = [("key", "value", "from")] + [(r.key, r.value_text(), r.origin) for r in rows]
    _print_columns(table)
    return 0


def _level_by_name(prefix: str, rows: list) -> str:
    """``prefix`` with a cache level given by its index (``caches.levels.0``, as ``--set`` takes it) spelled by
    the level's name, the way the system's effective keys (``rows``, in level order) name it."""
    parts = prefix.split(".")
    if parts[:2] != ["caches", "levels"] or len(parts) < 3 or not parts[2].isdigit():
        return prefix
    names = list(dict.fromkeys(r.key.split(".")[2] for r in rows if r.key.startswith("caches.levels.")))
    index = int(parts[2])
    return ".".join([*parts[:2], names[index], *parts[3:]]) if index < len(names) else prefix


def _keys_of(rows: list, prefix: str, none: str) -> list:
    """The rows (each with a dotted ``key``) whose key is ``prefix`` or in its section, as ``--set`` spells
    keys (a level's or accelerator's name in place of the schema's ``<name>``); none: InputError starting
    ``keys: {none}``, naming the keys that exist there."""
    from simulator.config.reference import key_forms, key_in

    chosen = [r for r in rows if key_in(r.key, prefix)]
    if not chosen:
        raise InputError(f"keys: {none} is or starts with {prefix!r}; expected a dotted key or section as --set "
                         "takes it, e.g. dram.timing or caches.levels.L1D.size_bytes (a cache level's or "
                         f"accelerator's name in place of <name>); {key_forms([r.key for r in rows], prefix)}")
    return chosen


def cmd_show(args: argparse.Namespace) -> int:
    from simulator.config.loader import load_spec
    from simulator.config.schema import SystemSpec
    from simulator.system import routes, system_graph

    loaded = load_spec(args.system, SystemSpec, args.set)
    if args.png is not None:
        from simulator.config.outputs import check_output_file

        check_output_file(args.png, "--png", ".png")
    graph = system_graph(loaded.spec)
    print(f"system  {loaded.spec.name}  ({args.system})")
    print("components")
    for node, kind in graph.nodes(data="kind"):
        print(f"  {node:<28} {kind}")
    print(f"links (latency, bandwidth, energy per byte as the {loaded.spec.energy.model} energy model charges it; "
          "- where the configuration gives none or the model charges none per byte)")
    for a, b, data in graph.edges(data=True):
        cells = [format_quantity(data[k], unit) if data[k] is not None else "-"
                 for k, unit in (("latency_s", "s"), ("bandwidth_bytes_per_s", "B/s"), ("energy_j_per_byte", "J/B"))]
        print(f"  {a + ' -> ' + b:<44} " + "  ".join(f"{c:>12}" for c in cells))
    print("routes to memory")
    for requester, route in routes(graph).items():
        print(f"  {requester}: {' -> '.join(route)}")
    if args.png is not None:
        from simulator.studies.system_figure import system_figure_png

        print(f"written   {system_figure_png(graph, loaded.spec.name, args.png)}")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from simulator.studies.compare import NOT_APPLICABLE, comparison_png, comparison_table, read_runs

    if args.png is not None:
        from simulator.config.outputs import check_output_file

        check_output_file(args.png, "--png", ".png")
    runs = read_runs(args.runs)
    table = comparison_table(runs)
    _print_columns(table)
    if any(NOT_APPLICABLE in row for row in table[1:]):
        print(f"({NOT_APPLICABLE}: a component the run's system does not have)")
    if any(NOT_KNOWN in row for row in table[1:]):
        print(f"({NOT_KNOWN}: an energy the run could not price: a memory whose preset declares no currents)")
    if args.png is not None:
        print(f"written   {comparison_png(runs, args.png)}")
    return 0


def cmd_generators(args: argparse.Namespace) -> int:
    from simulator.config.fields import did_you_mean
    from simulator.studies.model_eval import refuse_repeats
    from workloads.spec import describe_generator
    from workloads.registry import GENERATORS

    names = args.names or sorted(GENERATORS)
    refuse_repeats("generators", args.names)
    unknown = [n for n in names if n not in GENERATORS]
    if unknown:
        raise InputError(f"generators: {unknown[0]!r} is not a workload generator{did_you_mean(unknown[0], GENERATORS)}; "
                         f"expected one of: {', '.join(sorted(GENERATORS))}")
    for i, name in enumerate(names):
        doc, params = describe_generator(name)
        print(("\n" if i else "") + f"{name}: {doc}")
        _print_columns([("parameter", "unit", "default", "accepts"),
                        *((p.name, p.unit, p.default, p.accepts) for p in params)], indent="  ")
    return 0


def _cmd_commands(args: argparse.Namespace) -> int:
    from simulator.accel.command_reference import cmd_commands

    return cmd_commands(args)


def _installed_version() -> str:
    """The installed offsim distribution's version, or 'unknown' when run from a tree that is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("offsim")
    except PackageNotFoundError:
        return "unknown (not installed)"


class _VersionAction(argparse.Action):
    """``--version``: looks the version up only when asked (reading the installed metadata takes
    ``importlib.metadata``, which every other command can do without)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: object) -> None:
        super().__init__(option_strings, dest=dest, default=argparse.SUPPRESS, nargs=0,
                         help="show program's version number and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        print(f"{parser.prog} {_installed_version()}")
        parser.exit()


def _model_parser(models: argparse._SubParsersAction, name: str, what: str, table: str) -> argparse.ArgumentParser:
    """The parser of ``offsim models NAME``, with the arguments every model takes: entries, --table, --out."""
    m = models.add_parser(name, help=what)
    m.add_argument("entries", nargs="*", metavar="ENTRY", help="rows of the table (none: list them)")
    m.add_argument("--table", metavar="FILE", help=table)
    m.add_argument("--out", metavar="FILE.csv", help="also write the curves to this CSV file")
    m.add_argument("--plot", metavar="FILE.png", help="also draw the curves in this PNG file")
    m.set_defaults(func=cmd_models)
    return m


def build_parser() -> argparse.ArgumentParser:
    parser = OptionParser(prog="offsim", description="Cycle-approximate host/cache/DRAM/accelerator "
                     "simulator with analytical cross-checks.")
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("run", help="simulate one workload on one system and write a run directory")
    p.add_argument("system", help="system config YAML")
    p.add_argument("workload", help="workload YAML")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a system parameter, e.g. --set 'dram.geometry.ranks_per_channel=4'")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="override a workload parameter, e.g. --param 'array_bytes=8 MiB'")
    p.add_argument("--out", help=f"run directory (default {DEFAULT_RESULTS_DIR}/<workload>-<hash>)")
    p.add_argument("--crosscheck", action="store_true",
                   help="also predict the run's time and energy, with inputs measured on the same system by micro "
                   "runs, and write crosscheck.csv: the energy roofline for a host-only workload, the U-list model "
                   "(printed and extended) for an fmm_ulist workload")
    p.add_argument("--plot", action="store_true",
                   help="also draw run.png: time by stage (compute, stall) and energy by component and category")
    p.set_defaults(func=cmd_run)
    p = sub.add_parser("study", help="run a sweep of points (resumable) and write a table, figures and a report; "
                       "a paper's study file (with a 'study:' kind) goes to its own runner")
    p.add_argument("study", help="study YAML")
    p.add_argument("--workers", type=int_arg, help="local worker processes (default: number of CPUs; at most "
                   "simulator.studies.executors.LOCAL_WORKERS_PER_CPU per CPU)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="run on a dask.distributed scheduler, e.g. tcp://host:8786")
    p.add_argument("--dask-local", type=int_arg, metavar="N",
                   help="run on a loopback Dask cluster of N worker processes (as many as --workers may be)")
    p.add_argument("--max-points", type=int_arg, metavar="N", help="refuse a study of more than N points (default: "
                   "simulator.studies.sweep.DEFAULT_MAX_POINTS, which keeps the checks before the run within seconds)")
    p.add_argument("--out", help="study directory (default results/studies/<name>, or <file stem> for a paper's "
                   "study file)")
    p.set_defaults(func=cmd_study)
    p = sub.add_parser("reproduce", help="run a paper's study and write report.md with its published figures beside ours")
    p.add_argument("target", help="asri-fmm, logca-crypto, logca-gpu, choi-roofline or prajapati-stencil")
    p.add_argument("--out", help="output directory (default results/reproduce/<target>)")
    p.add_argument("--quick", action="store_true", help="fewer / smaller points: seconds for most targets; asri-fmm "
                   "still takes about 70 s on 2 cores, for the micro runs that measure its model inputs")
    p.set_defaults(func=cmd_reproduce)
    p = sub.add_parser("models", help="evaluate an analytical model on its own, without simulating: LogCA, the "
                       "energy roofline, the FMM U-list model, a matrix chain's data movement or tiled stencils")
    models = p.add_subparsers(dest="model", required=True)
    m = _model_parser(models, "logca", "LogCA (000 ch. 4): T0, T1, speedup and bottlenecks by granularity; g1 and "
                      "g_A/2", "a LogCA table in the form of configs/presets/platforms/logca_table_4_3.yaml (default: "
                      "that file, 000 Table 4.3)")
    m.add_argument("--g", action="append", metavar="SIZE", help="a granularity, e.g. '4 KiB' (repeatable; default "
                   "16 B to 64 MiB in powers of 4)")
    m.add_argument("--improve", action="append", metavar="PARAM=FACTOR", help="also the speedup with one parameter "
                   "improved, Accelerometer's what-if (000 section 6.2): L or o divided, C or A multiplied, e.g. "
                   "o=10 or A=inf (repeatable)")
    m = _model_parser(models, "roofline", "energy roofline (001 ch. 3-4): balances; performance, energy efficiency "
                      "and power by intensity", "a platform table in the form of "
                      "configs/presets/platforms/choi_table6.yaml (default: that file, 001 Table 6)")
    m.add_argument("--intensity", action="append", metavar="FLOP/B", help="an arithmetic intensity in flop/B "
                   "(repeatable; default 1/8 to 64 in powers of 2)")
    m.add_argument("--precision", choices=("double", "single"), default="double",
                   help="which flop costs of the row (default double)")
    m.add_argument("--throughput", choices=("vendor", "sustained"), default="vendor",
                   help="peak throughputs as the vendor claims them or as measured (default vendor, as 001 "
                   "instantiates its model)")
    m.add_argument("--power-cap", action="store_true", help="cap the power at pi_0 + delta_pi (001 eqs. 32-38)")
    m.add_argument("--system", action="append", metavar="SYSTEM.yaml", help="also a simulated system, its costs "
                   "measured by two micro runs (repeatable; --precision, --throughput and --power-cap apply to table "
                   "rows only)")
    m = models.add_parser("ulist", help="the FMM U-list model (003 eqs. 2-12, printed and extended) priced with the "
                          "inputs an FMM study measured (its machine.json), for any q, N and placement, without "
                          "simulating")
    m.add_argument("--machine", metavar="FILE", help="a study's machine.json (default results/fmm/machine.json, the "
                   "default study's)")
    m.add_argument("--q", type=int_arg, action="append", help="expansion order (repeatable; default the file's: 4 6 8 "
                   "10 14)")
    m.add_argument("--placement", action="append", help="cpu or a measured LAP placement, e.g. lap-llc "
                   "(repeatable; default all)")
    m.add_argument("--variant", action="append", help="software variant, e.g. pipelining (repeatable; default "
                   "orig, blocking, pipelining; CPU-only points run orig)")
    m.add_argument("--n-points", type=int_arg, default=240_000, help="points N (default 240000, 003 Table 2)")
    m.add_argument("--density", default="table2", help="point density (default table2, the tree of 003 Table 2)")
    m.add_argument("--llc", default="8 MiB", metavar="SIZE", help="LLC capacity that sizes the blocks (default "
                   "8 MiB, 003 Table 4)")
    m.add_argument("--blocks", type=int_arg, help="b for blocked and pipelined variants (default: the study's rules)")
    m.add_argument("--out", metavar="FILE.csv", help="also write the predictions to this CSV file")
    m.add_argument("--plot", metavar="FILE.png", help="also draw each model's time against q, a panel per placement")
    m.set_defaults(func=cmd_models)
    m = models.add_parser("chain", help="off-chip data movement of a matrix chain (004 app. D): minimum-op-count "
                          "order, every product written off chip, and the optimum with Two-MM fusion")
    m.add_argument("--dims", metavar="P0,P1,...", help="the chain's dimensions, A_i is P_{i-1} x P_i (default 004's "
                   "worked example: 936,1008,552,368,1016,616,544)")
    m.add_argument("--m-elems", type=int_arg, help="fast-memory capacity M in elements (default 65536 = 256^2, the "
                   "worked example's)")
    m.add_argument("--elem-bytes", type=int_arg, default=8, help="bytes per element, for the volumes in bytes "
                   "(default 8)")
    m.add_argument("--out", metavar="FILE.csv", help="also write the figures to this CSV file")
    m.set_defaults(func=cmd_models, plot=None)  # the chain model draws no figure
    m = models.add_parser("stencil", help="tiled stencils on a GPU (004 apps. A, B): T_alg, energy and traffic of "
                          "the feasible tiles, the best and those within 10 %% of it, or of given tiles")
    m.add_argument("entries", nargs="*", metavar="STENCIL", help="stencils, e.g. heat_2d (none: list them)")
    m.add_argument("--space", metavar="S1,S2,...", help="grid points per dimension (default 8192,8192 for 2D, 004 "
                   "Figure A.6's; 65536 for 1D, 512,512,512 for 3D)")
    m.add_argument("--steps", type=int_arg, help="time steps T (default 8192; 512 for 3D)")
    m.add_argument("--kind", choices=("time_skew_1d", "hex_1d", "hhc_2d", "hhc_3d"), help="tiling (default "
                   "hex_1d, hhc_2d or hhc_3d by the stencil's dimensions)")
    m.add_argument("--c-iter", metavar="TIME", help="time of one point update per vector unit, e.g. '36.8 ns' "
                   "(default 004 Table A.4's GTX 980 value)")
    m.add_argument("--tile", action="append", metavar="TT,TS1,...", help="evaluate this tile, tT then one size "
                   "per space dimension, at its best thread count (repeatable; default: search)")
    m.add_argument("--t-t", metavar="RANGE", help="tile heights to search, N, A:B or A:B:STEP (default 2:32:2 "
                   "for hhc_2d)")
    m.add_argument("--t-s", action="append", metavar="RANGE", help="tile sizes to search, once per space "
                   "dimension, S1 first (default 2:64:2 and 32:256:32 for hhc_2d)")
    m.add_argument("--threads", metavar="RANGE", help="threads per block (default 32:1024:32)")
    m.add_argument("--objective", choices=("time", "energy"), default="time", help="rank by time (default) or "
                   "energy")
    m.add_argument("--out", metavar="FILE.csv", help="also write every ranked point to this CSV file")
    m.add_argument("--plot", metavar="FILE.png", help="also draw the best T_alg at each tile height")
    m.set_defaults(func=cmd_models)
    p = sub.add_parser("bench", help="list the benchmarks (speed and memory against their targets), or run the "
                       "named ones, each in a fresh process; needs a source checkout")
    p.add_argument("names", nargs="*", metavar="NAME", help="benchmarks to run, e.g. fmm (none: list them)")
    p.set_defaults(func=cmd_bench)
    p = sub.add_parser("validate", help="check configs, workloads and traces without running; a trace or "
                       "workload given beside system configs is checked against each of them as a run would")
    p.add_argument("files", nargs="+")
    p.add_argument("--max-points", type=int_arg, metavar="N", help="a study may have up to N points, as offsim study "
                   "--max-points N allows (default: simulator.studies.sweep.DEFAULT_MAX_POINTS)")
    p.set_defaults(func=cmd_validate)
    p = sub.add_parser("keys", help="list the system config keys: unit, default, accepted values, description "
                       "(the keys --set takes)")
    p.add_argument("prefix", nargs="?", help="only the keys of this section or key, as --set names them, e.g. "
                   "dram.timing or caches.levels.L1D.size_bytes")
    p.add_argument("--system", metavar="FILE", help="print this system's effective values instead, each with "
                   "where it came from (file, preset, --set, default)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="with --system: override a "
                   "system parameter, as offsim run takes it")
    p.set_defaults(func=cmd_keys)
    p = sub.add_parser("show", help="print a system's components, links (latency, bandwidth, energy) and each "
                       "requester's route to memory; --png draws the graph")
    p.add_argument("system", metavar="SYSTEM.yaml")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a system parameter")
    p.add_argument("--png", metavar="FILE.png", help="also draw the graph to this PNG file")
    p.set_defaults(func=cmd_show)
    p = sub.add_parser("compare", help="compare run directories: time, energy and energy by component, "
                       "as a table and (--png) as bars")
    p.add_argument("runs", nargs="+", metavar="RUN_DIR")
    p.add_argument("--png", metavar="FILE.png", help="also draw the comparison to this PNG file")
    p.set_defaults(func=cmd_compare)
    p = sub.add_parser("generators", help="list the workload generators (shipped and installed) and their "
                       "parameters: unit, default, accepted values (the keys a workload's params and --param take)")
    p.add_argument("names", nargs="*", metavar="NAME", help="only these generators, e.g. stream")
    p.set_defaults(func=cmd_generators)
    p = sub.add_parser("commands", help="list the offload command keys of each accelerator kind: type, unit, "
                       "default, accepted values, description")
    p.add_argument("kind", nargs="?", help="only this kind's, e.g. lap")
    p.set_defaults(func=_cmd_commands)
    return parser


#: the commands that start no processes and leave no files open once they return: a process of its own that
#: ran one ends there, without the interpreter's teardown, which after a run (its modules, arrays and compiled
#: kernels) takes about a second and has nothing left to save
ENDS_WITHOUT_TEARDOWN = frozenset({"run", "validate", "keys", "show", "compare", "generators", "commands", "models"})


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``offsim`` console script; returns the exit code. Without ``argv`` (the
    command line of a process of its own) Ctrl-C is also watched for while compiled code runs
    (``simulator.studies.interruption``), and a command of ``ENDS_WITHOUT_TEARDOWN`` ends the process
    when it returns."""
    from simulator.studies import interruption

    if argv is None:
        interruption.install("offsim")
    args = build_parser().parse_args(argv)
    interruption.keep(lambda: "nothing written")
    code = _run_command(args)
    if argv is None and args.command in ENDS_WITHOUT_TEARDOWN:
        _end_process(code)
    return code


def _end_process(code: int) -> None:
    """Flush standard output and error, then end the process with exit code ``code`` at once."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can reach it
            pass
    os._exit(code)


def _run_command(args: argparse.Namespace) -> int:
    """Run the parsed command; its exit code: the command's own, 2 for bad input (one message, nothing left
    behind), and the interruption's and the closed pipe's codes the handlers below return."""
    from simulator.studies import interruption

    try:
        return args.func(args)
    except InputError as exc:
        return exc.report("offsim")
    except KeyboardInterrupt:  # Ctrl-C: one line saying what was kept, no traceback
        return interruption.interrupted("offsim")
    except BrokenPipeError:  # the reader closed the pipe (``offsim keys | head``): not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 0
    except MemoryError as exc:  # e.g. a trace of 10^11 rows: too large an input, not a crash
        print(f"offsim: error: out of memory ({exc or 'allocation failed'}); expected a workload and "
              "system small enough for this machine: reduce the workload (--param) or the memory's queues and "
              "organisation (--set), or run it where more memory is free", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as exc:
        # Compiled code (numba's dispatcher) wraps a KeyboardInterrupt raised inside it in a SystemError
        if interruption.caused_by_interrupt(exc):
            return interruption.interrupted("offsim")
        if _is_broken_pool(exc):  # a study's worker was killed (by the kernel, for its memory, most often)
            print("offsim: error: a worker process ended abruptly while it ran a point (killed, most often for lack "
                  "of memory); expected points small enough for this machine: reduce the study's sizes or --workers "
                  "(the points already stored are kept; the same command resumes)", file=sys.stderr)
            return EXIT_BAD_INPUT
        raise


def _is_broken_pool(exc: BaseException) -> bool:
    """Whether ``exc`` is a process pool's report that a worker died (its module is loaded by then; not imported
    here, which would add to every command's start-up)."""
    process = sys.modules.get("concurrent.futures.process")
    return process is not None and isinstance(exc, process.BrokenProcessPool)


if __name__ == "__main__":
    sys.exit(main())

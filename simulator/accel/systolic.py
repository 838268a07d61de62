"""The systolic GEMM array unit: SCALE-Sim's folds in closed form, its DRAM traffic through the coupling.

Command ``op: "gemm"``, the LAP's (``simulator.accel.gemm_command.GemmCommand``; ``offsim commands systolic``):
``m``, ``n``, ``k``, the byte addresses ``a_addr``, ``b_addr``, ``c_addr`` of
row-major A (m x k, the input), B (k x n, the weight) and C (m x n, the output),
optional leading dimensions and ``accumulate`` (C read once per output block
before its first fold). Elements are ``word_bytes`` each.

The folds, their cycles and their SRAM and DRAM words come from
``simulator.accel.systolic_dataflow`` (SCALE-Sim v3's counts). The unit runs
them in steps, double-buffered like the LAP: a step is the run of folds during
which one half of an SRAM fills from DRAM (input or weight words fetched) or
one half of the output SRAM fills with results; the reads of step s+1 go
through the coupling while step s computes, and a step's outputs are written
back when it finishes. DRAM reads and writes are line requests on the real
addresses of the blocks (the leading share of a block's lines when only part
of it is fetched), so bandwidth stalls and contention with the host come from
the simulation. A step moves each line once: blocks of one step that share a
line, and the partial sums a ``ws``/``is`` step writes to one output block
fold after fold, are merged in its SRAMs. The word counters are the closed
forms (SCALE-Sim's counts, which write every fold's partial sums); the byte
counters are the whole lines the coupling moved, and the DRAM transfer energy
is priced on them.

A command is refused when it is checked if its steps could hold more than ``MAX_TRACE_LINES`` line numbers at
once (``steps_lines_bound``, counted without making them, where the quicker ``steps_lines_estimate`` does not
already rule it out): ``gemm_steps`` makes them all before the first step.

Counters: ``macs``, ``folds``, ``steps`` (count), ``compute_cycles`` (cycles),
``{input,weight}_sram_read_words``, ``output_sram_write_words``,
``{input,weight}_dram_read_words``, ``output_dram_read_words`` (accumulate),
``output_dram_write_words`` (words), ``bytes_read``/``bytes_written`` (B, whole
lines through the coupling).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simulator.accel.base import AcceleratorUnit, Command, CommandError
from simulator.accel.command_schema import Regions
from simulator.accel.gemm_command import GemmCommand, check_gemm_command
from simulator.accel.registry import BuildContext, register_builder, register_command
from simulator.accel.systolic_dataflow import OPERAND_DIMS, FoldPlan, first_visits, input_dram_words
from simulator.accel.systolic_kernel import step_ends, steps_lines, steps_lines_count
from simulator.config.accel_systolic import SystolicSpec
from simulator.engine import ClockDomain
from simulator.engine.limits import MAX_TRACE_LINES

#: The SRAM of each operand fills or drains in halves (double buffering).
HALVES = 2


@dataclass(frozen=True)
class SystolicStep:
    """Folds run back to back between two SRAM half refills: lines to read first, lines written after (``partial``:
    those of them written in part), cycles."""

    reads: np.ndarray
    writes: np.ndarray
    cycles: int
    partial: np.ndarray


@dataclass(frozen=True)
class GemmTraffic:
    """Per-fold words of one GEMM (int64 arrays in fold order) and its fold plan."""

    plan: FoldPlan
    input_dram: np.ndarray
    weight_dram: np.ndarray
    output_dram_read: np.ndarray
    output_dram_write: np.ndarray


def gemm_traffic(g: GemmCommand, spec: SystolicSpec) -> GemmTraffic:
    """The fold plan of a ``gemm`` command and its DRAM words per fold (closed forms)."""
    plan = FoldPlan(spec.dataflow, spec.rows, spec.cols, g.m, g.k, g.n)
    c_reads = first_visits(plan, "output") if g.accumulate else np.zeros(plan.folds, dtype=np.int64)
    return GemmTraffic(plan, input_dram_words(plan, "input", spec.sram_words("input")),
                       input_dram_words(plan, "weight", spec.sram_words("weight")), c_reads, plan.words("output"))


def _block_rows(r0: np.ndarray, r1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every row of blocks [r0[b], r1[b]), block after block: (its block, its row number)."""
    heights = r1 - r0
    block = np.repeat(np.arange(len(r0), dtype=np.int64), heights)
    return block, r0[block] + np.arange(int(heights.sum()), dtype=np.int64) - np.repeat(np.cumsum(heights) - heights,
                                                                                        heights)


def blocks_lines(base: int, ld: int, rows: tuple[np.ndarray, np.ndarray], cols: tuple[np.ndarray, np.ndarray],
                 elem_bytes: int, line_bytes: int) -> tuple[np.ndarray, np.ndarray]:
    """Line numbers of many blocks of one row-major matrix at ``base`` (bytes, leading dimension ``ld``
    elements): block b is rows [rows[0][b], rows[1][b]) x columns [cols[0][b], cols[1][b]). Returns all
    lines, block after block (each block's sorted and distinct, as ``simulator.accel.gemm_command.tile_lines``),
    and the offsets (len = blocks + 1) of each block's lines in them."""
    r0, r1 = (np.asarray(x, dtype=np.int64) for x in rows)
    c0, c1 = (np.asarray(x, dtype=np.int64) for x in cols)
    block, row = _block_rows(r0, r1)
    first = (base + (row * ld + c0[block]) * elem_bytes) // line_bytes
    last = (base + (row * ld + c1[block]) * elem_bytes - 1) // line_bytes
    same = np.zeros(len(row), dtype=bool)
    same[1:] = block[1:] == block[:-1]
    # within a block both ends grow with the row: start each row after the previous row's last line
    first[1:] = np.where(same[1:], np.maximum(first[1:], last[:-1] + 1), first[1:])
    counts = np.maximum(last - first + 1, 0)
    starts = np.cumsum(counts) - counts
    lines = np.repeat(first, counts) + (np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(starts, counts))
    offsets = np.zeros(len(r0) + 1, dtype=np.int64)
    np.add.at(offsets, block + 1, counts)
    return lines, np.cumsum(offsets)


class _BlockLines:
    """Line numbers of the blocks of one operand's matrix (blocks computed together, once): ``block[f]``, the
    block fold f works on; block b's lines ``lines[offsets[b]:offsets[b + 1]]``; its rows ``rows[0][b]`` ..
    ``rows[1][b]`` and columns ``cols[0][b]`` .. ``cols[1][b]`` (``systolic_kernel``)."""

    def __init__(self, base: int, ld: int, dims: tuple[str, str], ranges: dict, keys: np.ndarray,
                 elem_bytes: int, line_bytes: int):
        _, first, block = np.unique(keys, return_index=True, return_inverse=True)  # per fold: its block
        self.block = block.astype(np.int64)
        self.rows, self.cols = (tuple(np.asarray(ranges[d][k][first], dtype=np.int64) for k in (0, 1)) for d in dims)
        self.lines, self.offsets = blocks_lines(base, ld, self.rows, self.cols, elem_bytes, line_bytes)


def _steps_plan(g: GemmCommand, spec: SystolicSpec, traffic: GemmTraffic,
                line_bytes: int) -> tuple[np.ndarray, dict[str, _BlockLines], dict[str, np.ndarray]]:
    """(the last fold of every step, each operand's blocks, each operand's words per fold) of a command."""
    plan = traffic.plan
    ranges = plan.ranges()
    matrices = {"input": (g.a_addr, g.lda), "weight": (g.b_addr, g.ldb), "output": (g.c_addr, g.ldc)}
    blocks = {op: _BlockLines(base, ld, OPERAND_DIMS[op], ranges, plan.block_keys(op), spec.word_bytes, line_bytes)
              for op, (base, ld) in matrices.items()}
    block_words = {op: plan.words(op).astype(np.int64) for op in matrices}
    ends = step_ends(traffic.input_dram, traffic.weight_dram, traffic.output_dram_write,
                     np.array([max(1, spec.sram_words(op) // HALVES) for op in matrices], dtype=np.int64))
    return ends, blocks, block_words


def steps_lines_estimate(traffic: GemmTraffic, word_bytes: int, line_bytes: int) -> float:
    """A quick upper bound of ``steps_lines_bound`` from the closed forms alone (no block lines made): per fold
    and operand, the rows of its block times the lines a row spans at most (ceil(width x word / line) + 1), in
    the share of the block's words the fold moves (reads of A, B and C; writes of C twice, as writes and as
    partly written lines), rounded up; in floats, so that no product wraps."""
    ranges = traffic.plan.ranges()
    total = 0.0
    for op, moved in (("input", (traffic.input_dram,)), ("weight", (traffic.weight_dram,)),
                      ("output", (traffic.output_dram_read, traffic.output_dram_write, traffic.output_dram_write))):
        row_dim, col_dim = OPERAND_DIMS[op]
        rows = ranges[row_dim][1] - ranges[row_dim][0]
        width = ranges[col_dim][1] - ranges[col_dim][0]
        row_lines = np.ceil(width * word_bytes / line_bytes) + 1
        for words in moved:
            total += float(np.ceil(rows * row_lines * words / (rows * width)).sum())
    return total


def steps_lines_bound(g: GemmCommand, spec: SystolicSpec, traffic: GemmTraffic, line_bytes: int) -> int:
    """An upper bound of the line numbers ``gemm_steps`` holds at once for a command (its steps' reads, writes
    and partly written lines), counted without making them (``systolic_kernel.steps_lines_count``)."""
    ends, blocks, words = _steps_plan(g, spec, traffic, line_bytes)
    a, b, c = blocks["input"], blocks["weight"], blocks["output"]
    return int(steps_lines_count(ends, a.block, a.offsets, traffic.input_dram, words["input"],
                                 b.block, b.offsets, traffic.weight_dram, words["weight"],
                                 c.block, c.offsets, traffic.output_dram_read, traffic.output_dram_write,
                                 words["output"], *c.rows))


def gemm_steps(g: GemmCommand, spec: SystolicSpec, traffic: GemmTraffic, line_bytes: int) -> list[SystolicStep]:
    """The steps of a ``gemm`` command in execution order (module docstring); their ends and lines in compiled
    calls (``systolic_kernel``)."""
    plan = traffic.plan
    ends, blocks, block_words = _steps_plan(g, spec, traffic, line_bytes)
    a, b, c = blocks["input"], blocks["weight"], blocks["output"]
    reads, read_off, writes, write_off, partial, partial_off = steps_lines(
        ends,
        a.block, a.offsets, a.lines, traffic.input_dram, block_words["input"],
        b.block, b.offsets, b.lines, traffic.weight_dram, block_words["weight"],
        c.block, c.offsets, c.lines, traffic.output_dram_read, traffic.output_dram_write, block_words["output"],
        *c.rows, *c.cols, g.c_addr, g.ldc, spec.word_bytes, line_bytes)
    steps, start = [], 0
    for s, end in enumerate(ends.tolist()):
        cycles = (end + 1 - start) * plan.fold_cycles - (1 if end == plan.folds - 1 else 0)
        steps.append(SystolicStep(reads[read_off[s]:read_off[s + 1]], writes[write_off[s]:write_off[s + 1]], cycles,
                                  partial[partial_off[s]:partial_off[s + 1]]))
        start = end + 1
    return steps


@dataclass
class SystolicUnit(AcceleratorUnit):
    """A systolic array: executes ``gemm`` commands (module docstring); counts MACs, cycles and words."""

    COMMAND = GemmCommand
    spec: SystolicSpec | None = None
    line_bytes: int = 64

    def __post_init__(self) -> None:
        if not isinstance(self.spec, SystolicSpec):
            raise ValueError(f"SystolicUnit {self.name}: spec = {self.spec!r}: expected a SystolicSpec")
        super().__post_init__()

    def check_args(self, cmd: GemmCommand) -> None:
        """The matrices within the system's memory, the regions covering the operands (``check_gemm_command``),
        and the lines its steps hold at once within ``MAX_TRACE_LINES`` (``steps_lines_bound``)."""
        check_gemm_command(cmd, self.spec.word_bytes, self.memory_bytes)
        traffic = gemm_traffic(cmd, self.spec)
        if steps_lines_estimate(traffic, self.spec.word_bytes, self.line_bytes) <= MAX_TRACE_LINES:
            return  # the quick bound suffices: no block lines made twice for the many small commands
        lines = steps_lines_bound(cmd, self.spec, traffic, self.line_bytes)
        if lines > MAX_TRACE_LINES:
            raise CommandError(f"m, k, n = {cmd.m}, {cmd.k}, {cmd.n}: its steps move up to {lines:,} DRAM lines of "
                               f"{self.line_bytes} B, all held at once; expected at most {MAX_TRACE_LINES:,} "
                               "(simulator.engine.limits.MAX_TRACE_LINES, as many as a trace's memory rows may "
                               "touch)")

    def operand_regions(self, cmd: GemmCommand) -> tuple[Regions, Regions]:
        """A, B (and C if accumulating) in, C out, with this array's word size."""
        return cmd.operand_regions(self.spec.word_bytes)

    def execute(self, cmd: Command):
        """SimPy generator: run one ``gemm`` command in double-buffered steps (module docstring)."""
        traffic = gemm_traffic(cmd.args, self.spec)
        steps = gemm_steps(cmd.args, self.spec, traffic, self.line_bytes)
        self._count_closed_forms(traffic)
        self.count("steps", len(steps))
        yield from self.run_double_buffered(steps, lambda step: self.compute_ps(step.cycles), self._computed)

    def _computed(self, step: SystolicStep) -> None:
        self.count("compute_cycles", step.cycles)

    def _count_closed_forms(self, t: GemmTraffic) -> None:
        plan = t.plan
        self.count("macs", plan.macs)
        self.count("folds", plan.folds)
        self.count("input_sram_read_words", int(plan.words("input").sum()))
        self.count("weight_sram_read_words", int(plan.words("weight").sum()))
        self.count("output_sram_write_words", int(plan.words("output").sum()))
        self.count("input_dram_read_words", int(t.input_dram.sum()))
        self.count("weight_dram_read_words", int(t.weight_dram.sum()))
        self.count("output_dram_read_words", int(t.output_dram_read.sum()))
        self.count("output_dram_write_words", int(t.output_dram_write.sum()))

    def dynamic_energy_j(self) -> dict[str, float]:
        """Compute (MACs), SRAM (words the array reads and writes) and DRAM transfer (the words of the whole
        lines the coupling moved, ``bytes_read`` + ``bytes_written``: partial sums merged in the SRAMs are
        moved once, not once per fold as the closed-form DRAM word counters count them), J."""
        c, s = self.counts, self.spec
        sram = sum(c.get(f"{name}_words", 0) for name in
                   ("input_sram_read", "weight_sram_read", "output_sram_write"))
        moved = (c.get("bytes_read", 0) + c.get("bytes_written", 0)) // s.word_bytes
        return {"compute": c.get("macs", 0) * s.energy_per_mac_j, "sram": sram * s.sram_energy_j_per_word,
                "dram_transfer": moved * s.dram_energy_j_per_word}


register_command("systolic")(GemmCommand)


@register_builder("systolic")
def build_systolic(name: str, spec: SystolicSpec, context: BuildContext) -> SystolicUnit:
    """Build a systolic array unit clocked at ``spec.frequency_hz`` on the given interface."""
    clock = ClockDomain(name, spec.frequency_hz)
    return SystolicUnit(name=name, env=context.env, clock=clock, interface=context.interface,
                        static_power_w=spec.static_power_w, idle_power_w=spec.idle_power_w, spec=spec,
                        line_bytes=context.interface.line_bytes)

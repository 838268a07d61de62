"""The LAP GEMM accelerator unit: internal blocking, double-buffered transfers, flop-rate compute.

Command ``op: "gemm"`` (JSON params): ``m``, ``n``, ``k`` and the byte addresses
``a_addr``, ``b_addr``, ``c_addr`` of row-major matrices A (m x k), B (k x n)
and C (m x n), optional leading dimensions ``lda``/``ldb``/``ldc`` (elements;
default k, n, n) and ``accumulate`` (default true: C += A B, so C is read as
well as written, as in 003 eq. 7). ``inputs``/``outputs`` regions tell the
coupling what to flush, copy or invalidate.

Blocking (003 eq. 6-7, 003:L232-L240): C is cut into m_c x n_c sub-blocks with
m_c = min(max(m, 64), 256) and n_c = min(max(n, 64), 256), r = ceil(m/m_c)
ceil(n/n_c) of them. A sub-block needs its m_c x k panel of A, its k x n_c
panel of B and its C block. When two sets of panels and two C blocks do not fit
the local memory, the panels are streamed in k-slices of ``k_slice`` columns
that do (a rank-k_slice update per step). Steps are double-buffered: the reads
of step s+1 start when step s starts computing, a C block is written back when
its last step finishes (overlapping the next step), and a step computes its
2 m_b n_b k_s flops at the sustained rate f_L. The rule's arithmetic (``block_size``,
``k_slice``) lives with the spec in ``simulator.config.accel_lap``, so that a local memory too
small for the largest blocks is refused when the config is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simulator.accel.base import AcceleratorUnit, Command, CommandError
from simulator.accel.registry import BuildContext, register_builder
from simulator.config.accel_lap import LapSpec, block_size, k_slice
from simulator.engine import ClockDomain

def tile_lines(base: int, ld: int, r0: int, r1: int, c0: int, c1: int, elem_bytes: int,
               line_bytes: int) -> np.ndarray:
    """Sorted distinct line numbers of rows [r0, r1) x columns [c0, c1) of a row-major matrix at ``base``
    (bytes) with leading dimension ``ld`` (elements, >= 0)."""
    if ld < 0:
        raise ValueError(f"ld = {ld!r}: expected a leading dimension >= 0 elements")
    if r1 <= r0 or c1 <= c0:
        return np.zeros(0, dtype=np.int64)
    rows = np.arange(r0, r1, dtype=np.int64)
    first = (base + (rows * ld + c0) * elem_bytes) // line_bytes
    last = (base + (rows * ld + c1) * elem_bytes - 1) // line_bytes
    # Both ends grow with the row (ld >= 0), so a row's lines up to the previous row's last are
    # already listed: start each row after them, and the union comes out sorted without a sort.
    first[1:] = np.maximum(first[1:], last[:-1] + 1)
    counts = np.maximum(last - first + 1, 0)
    starts = np.cumsum(counts) - counts
    return np.repeat(first, counts) + (np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(starts, counts))


@dataclass(frozen=True)
class GemmStep:
    """One double-buffered step: lines to read, lines to write after compute, flops, local-memory bytes."""

    reads: np.ndarray
    writes: np.ndarray
    flops: int
    local_bytes: int


def _int_arg(params: dict, name: str, default: int | None = None, minimum: int = 1) -> int:
    value = params.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise CommandError(f"lap gemm command: {name} = {value!r}: expected an integer >= {minimum}")
    return value


@dataclass(frozen=True)
class GemmArgs:
    """A ``gemm`` command's arguments: C (m x n) += A (m x k) B (k x n), row-major at byte addresses
    a, b, c with leading dimensions (elements) lda, ldb, ldc; C is read first when ``accumulate``."""

    m: int
    n: int
    k: int
    a: int
    b: int
    c: int
    lda: int
    ldb: int
    ldc: int
    accumulate: bool


def gemm_args(params: dict, elem_bytes: int, memory_bytes: int) -> GemmArgs:
    """The arguments of a ``gemm`` command whose matrices end within ``memory_bytes``; CommandError
    naming the first bad one."""
    m, n, k = (_int_arg(params, x) for x in ("m", "n", "k"))
    a, b, c = (_int_arg(params, x, minimum=0) for x in ("a_addr", "b_addr", "c_addr"))
    lda = _int_arg(params, "lda", k, minimum=k)
    ldb = _int_arg(params, "ldb", n, minimum=n)
    ldc = _int_arg(params, "ldc", n, minimum=n)
    accumulate = params.get("accumulate", True)
    if not isinstance(accumulate, bool):
        raise CommandError(f"lap gemm command: accumulate = {accumulate!r}: expected true or false")
    for name, base, rows, cols, ld in (("a_addr", a, m, k, lda), ("b_addr", b, k, n, ldb), ("c_addr", c, m, n, ldc)):
        end = base + ((rows - 1) * ld + cols) * elem_bytes  # one past its last element
        if end > memory_bytes:
            raise CommandError(f"lap gemm command: {name} = {base}: the {rows} x {cols} matrix (leading dimension "
                               f"{ld}) ends at byte {end}; expected it to end within the {memory_bytes} B of the "
                               "system's memory")
    return GemmArgs(m, n, k, a, b, c, lda, ldb, ldc, accumulate)


def gemm_steps(g: GemmArgs, spec: LapSpec, line_bytes: int) -> tuple[list[GemmStep], int]:
    """The steps of a ``gemm`` command (its arguments ``g``) in execution order, and the number of
    sub-blocks r."""
    m, n, k, a, b, c = g.m, g.n, g.k, g.a, g.b, g.c
    lda, ldb, ldc, accumulate = g.lda, g.ldb, g.ldc, g.accumulate
    eb = spec.elem_bytes
    m_c, n_c = block_size(m), block_size(n)
    ks = k_slice(k, m_c, n_c, spec.local_memory_bytes, eb)
    steps: list[GemmStep] = []
    blocks = 0
    for i0 in range(0, m, m_c):
        i1 = min(m, i0 + m_c)
        for j0 in range(0, n, n_c):
            j1 = min(n, j0 + n_c)
            blocks += 1
            c_lines = tile_lines(c, ldc, i0, i1, j0, j1, eb, line_bytes)
            c_elems = (i1 - i0) * (j1 - j0)
            for k0 in range(0, k, ks):
                k1 = min(k, k0 + ks)
                parts = [tile_lines(a, lda, i0, i1, k0, k1, eb, line_bytes),
                         tile_lines(b, ldb, k0, k1, j0, j1, eb, line_bytes)]
                in_elems = (i1 - i0) * (k1 - k0) + (k1 - k0) * (j1 - j0)
                if k0 == 0 and accumulate:
                    parts.append(c_lines)
                    in_elems += c_elems
                last = k1 == k
                out_elems = c_elems if last else 0
                steps.append(GemmStep(reads=np.concatenate(parts),
                                      writes=c_lines if last else np.zeros(0, dtype=np.int64),
                                      flops=2 * (i1 - i0) * (j1 - j0) * (k1 - k0),
                                      local_bytes=(in_elems + out_elems) * eb))
    return steps, blocks


@dataclass
class LapUnit(AcceleratorUnit):
    """A LAP: executes ``gemm`` commands (see module docstring); counts flops, bytes and local-memory traffic."""

    spec: LapSpec | None = None
    line_bytes: int = 64

    def __post_init__(self) -> None:
        if not isinstance(self.spec, LapSpec):
            raise ValueError(f"LapUnit {self.name}: spec = {self.spec!r}: expected a LapSpec")
        super().__post_init__()

    def cycles_for(self, flops: int) -> float:
        """LAP cycles to compute ``flops`` at the sustained rate (peak x utilisation)."""
        return flops / (self.spec.flops_per_cycle * self.spec.utilisation)

    def check_command(self, params: dict) -> None:
        """A ``gemm`` command with valid arguments (``gemm_args``)."""
        super().check_command(params)
        if params.get("op") != "gemm":
            raise CommandError(f"lap {self.name}: op = {params.get('op')!r}: expected 'gemm'")
        gemm_args(params, self.spec.elem_bytes, self.memory_bytes)

    def execute(self, cmd: Command):
        """SimPy generator: run one ``gemm`` command, double-buffered (module docstring)."""
        args = gemm_args(cmd.params, self.spec.elem_bytes, self.memory_bytes)  # checked already: cannot fail
        steps, blocks = gemm_steps(args, self.spec, self.line_bytes)
        env, port = self.env, self.interface
        self.count("sub_blocks", blocks)
        self.count("steps", len(steps))
        ready = port.access(steps[0].reads, False, env.now)
        self._moved(steps[0].reads, False)
        yield env.timeout(max(0, ready - env.now))
        written = env.now
        for s, step in enumerate(steps):
            nxt = steps[s + 1] if s + 1 < len(steps) else None
            if nxt is not None:  # the other buffer fills while this step computes
                ready = port.access(nxt.reads, False, env.now)
                self._moved(nxt.reads, False)
            yield env.timeout(self.compute_ps(self.cycles_for(step.flops)))
            self.count("flops", step.flops)
            self.count("local_memory_bytes", step.local_bytes)
            if len(step.writes):
                written = max(written, port.access(step.writes, True, env.now))
                self._moved(step.writes, True)
            if nxt is not None:
                yield env.timeout(max(0, ready - env.now))
        yield env.timeout(max(0, written - env.now))

    def _moved(self, lines: np.ndarray, is_write: bool) -> None:
        self.count("bytes_written" if is_write else "bytes_read", len(lines) * self.line_bytes)

    def dynamic_energy_j(self) -> dict[str, float]:
        """Compute (flops x energy per flop) and local memory (bytes in/out x energy per byte), J."""
        return {"compute": self.counts.get("flops", 0) * self.spec.energy_per_flop_j,
                "local_memory": self.counts.get("local_memory_bytes", 0) * self.spec.local_memory_energy_j_per_byte}


@register_builder("lap")
def build_lap(name: str, spec: LapSpec, context: BuildContext) -> LapUnit:
    """Build a LAP unit clocked at ``spec.frequency_hz`` on the given interface."""
    clock = ClockDomain(name, spec.frequency_hz)
    return LapUnit(name=name, env=context.env, clock=clock, interface=context.interface,
                   static_power_w=spec.static_power_w, idle_power_w=spec.idle_power_w, spec=spec,
                   line_bytes=context.interface.line_bytes)

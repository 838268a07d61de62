"""The LAP GEMM accelerator unit: internal blocking, double-buffered transfers, flop-rate compute.

Command ``op: "gemm"`` (``GemmCommand``; ``offsim commands lap``): C (m x n)
(+)= A (m x k) B (k x n), row-major matrices at byte addresses ``a_addr``,
``b_addr``, ``c_addr`` with leading dimensions ``lda``/``ldb``/``ldc``
(elements; default k, n, n). ``accumulate`` (default true: C += A B, so C is
read as well as written, as in 003 eq. 7). The ``inputs``/``outputs`` regions
(what the coupling flushes, copies or invalidates) default to the operands: A,
B and (accumulating) C in, C out.

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

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from simulator.accel.base import AcceleratorUnit, Command
from simulator.accel.command_schema import Regions
from simulator.accel.gemm_command import GemmCommand, check_gemm_command, tile_lines, tile_partial_lines
from simulator.accel.registry import BuildContext, register_builder, register_command
from simulator.config.accel_lap import LapSpec, block_size, k_slice, sub_block_count
from simulator.engine import ClockDomain


@dataclass(frozen=True)
class GemmStep:
    """One double-buffered step: lines to read, lines to write after compute (``partial``: those of them it
    writes in part), flops, local-memory bytes."""

    reads: np.ndarray
    writes: np.ndarray
    flops: int
    local_bytes: int
    partial: np.ndarray


register_command("lap")(GemmCommand)


def gemm_counts(g: GemmCommand, spec: LapSpec) -> tuple[int, int]:
    """(sub-blocks r, steps) of a ``gemm`` command ``g`` (``gemm_steps``)."""
    blocks = sub_block_count(g.m, g.n)
    ks = k_slice(g.k, block_size(g.m), block_size(g.n), spec.local_memory_bytes, spec.elem_bytes)
    return blocks, blocks * -(-g.k // ks)


def gemm_steps(g: GemmCommand, spec: LapSpec, line_bytes: int) -> Iterator[GemmStep]:
    """The steps of a ``gemm`` command ``g`` in execution order, each made when it is needed (a command's
    lines grow with its matrices)."""
    m, n, k, a, b, c = g.m, g.n, g.k, g.a_addr, g.b_addr, g.c_addr
    lda, ldb, ldc, accumulate = g.lda, g.ldb, g.ldc, g.accumulate
    eb = spec.elem_bytes
    m_c, n_c = block_size(m), block_size(n)
    ks = k_slice(k, m_c, n_c, spec.local_memory_bytes, eb)
    for i0 in range(0, m, m_c):
        i1 = min(m, i0 + m_c)
        for j0 in range(0, n, n_c):
            j1 = min(n, j0 + n_c)
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
                none = np.zeros(0, dtype=np.int64)
                yield GemmStep(reads=np.concatenate(parts), writes=c_lines if last else none,
                               flops=2 * (i1 - i0) * (j1 - j0) * (k1 - k0), local_bytes=(in_elems + out_elems) * eb,
                               partial=tile_partial_lines(c, ldc, i0, i1, j0, j1, eb, line_bytes) if last else none)


@dataclass
class LapUnit(AcceleratorUnit):
    """A LAP: executes ``gemm`` commands (see module docstring); counts flops, bytes and local-memory traffic."""

    COMMAND = GemmCommand
    spec: LapSpec | None = None
    line_bytes: int = 64

    def __post_init__(self) -> None:
        if not isinstance(self.spec, LapSpec):
            raise ValueError(f"LapUnit {self.name}: spec = {self.spec!r}: expected a LapSpec")
        super().__post_init__()

    def cycles_for(self, flops: int) -> float:
        """LAP cycles to compute ``flops`` at the sustained rate (peak x utilisation)."""
        return flops / (self.spec.flops_per_cycle * self.spec.utilisation)

    def check_args(self, cmd: GemmCommand) -> None:
        """The matrices within the system's memory, the regions covering the operands (``check_gemm_command``)."""
        check_gemm_command(cmd, self.spec.elem_bytes, self.memory_bytes)

    def operand_regions(self, cmd: GemmCommand) -> tuple[Regions, Regions]:
        """A, B (and C if accumulating) in, C out, with this LAP's element size."""
        return cmd.operand_regions(self.spec.elem_bytes)

    def execute(self, cmd: Command):
        """SimPy generator: run one ``gemm`` command, double-buffered (module docstring)."""
        blocks, n_steps = gemm_counts(cmd.args, self.spec)
        self.count("sub_blocks", blocks)
        self.count("steps", n_steps)
        yield from self.run_double_buffered(gemm_steps(cmd.args, self.spec, self.line_bytes),
                                            lambda step: self.compute_ps(self.cycles_for(step.flops)), self._computed)

    def _computed(self, step: GemmStep) -> None:
        self.count("flops", step.flops)
        self.count("local_memory_bytes", step.local_bytes)

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

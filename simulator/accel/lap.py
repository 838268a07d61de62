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

from dataclasses import dataclass

import numpy as np

from simulator.accel.base import AcceleratorUnit, Command, CommandError
from simulator.accel.command_schema import Regions, command_field, first_uncovered_byte, parse_command
from simulator.accel.registry import BuildContext, register_builder, register_command
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


@register_command("lap")
@dataclass(frozen=True)
class GemmCommand:
    """A LAP command: C (m x n) (+)= A (m x k) B (k x n), row-major at byte addresses a_addr, b_addr,
    c_addr with leading dimensions (elements) lda, ldb, ldc; C is read first when ``accumulate``."""

    op: str = command_field(choices=("gemm",), doc="the operation: C (+)= A B")
    m: int = command_field(unit="elements", min=1, doc="rows of A and C")
    n: int = command_field(unit="elements", min=1, doc="columns of B and C")
    k: int = command_field(unit="elements", min=1, doc="columns of A, rows of B")
    a_addr: int = command_field(unit="B", min=0, doc="byte address of A's first element")
    b_addr: int = command_field(unit="B", min=0, doc="byte address of B's first element")
    c_addr: int = command_field(unit="B", min=0, doc="byte address of C's first element")
    lda: int = command_field(None, unit="elements", min=1, default_text="k", doc="leading dimension of A (>= k)")
    ldb: int = command_field(None, unit="elements", min=1, default_text="n", doc="leading dimension of B (>= n)")
    ldc: int = command_field(None, unit="elements", min=1, default_text="n", doc="leading dimension of C (>= n)")
    accumulate: bool = command_field(True, doc="C += A B (C is read, then written); false: C = A B")
    inputs: Regions = command_field(None, default_text="A, B (and C if accumulate)",
                                    doc="regions the coupling makes visible to the LAP before it starts")
    outputs: Regions = command_field(None, default_text="C", doc="regions the host sees fresh after its wait")

    def __post_init__(self) -> None:
        for name, cols in (("lda", self.k), ("ldb", self.n), ("ldc", self.n)):
            value = getattr(self, name)
            if value is None:
                object.__setattr__(self, name, cols)
            elif value < cols:
                raise ValueError(f"{name} = {value!r}: expected a leading dimension >= {cols} "
                                 f"(the matrix's columns)")

    def operands(self, elem_bytes: int) -> dict[str, tuple[int, int, int, int]]:
        """Name -> (byte address, rows, bytes per row, bytes between rows) of A, B and C."""
        return {"A": (self.a_addr, self.m, self.k * elem_bytes, self.lda * elem_bytes),
                "B": (self.b_addr, self.k, self.n * elem_bytes, self.ldb * elem_bytes),
                "C": (self.c_addr, self.m, self.n * elem_bytes, self.ldc * elem_bytes)}

    def matrices(self, elem_bytes: int) -> list[tuple[str, int, int]]:
        """(address key, byte address, bytes from it to one past the last element) of A, B and C."""
        return [(name, base, ((rows - 1) * ld + cols) * elem_bytes) for name, base, rows, cols, ld in
                (("a_addr", self.a_addr, self.m, self.k, self.lda), ("b_addr", self.b_addr, self.k, self.n, self.ldb),
                 ("c_addr", self.c_addr, self.m, self.n, self.ldc))]

    def operand_regions(self, elem_bytes: int) -> tuple[Regions, Regions]:
        """The GEMM's operands as regions: inputs A, B (and C if accumulating), output C."""
        (_, a, a_bytes), (_, b, b_bytes), (_, c, c_bytes) = self.matrices(elem_bytes)
        inputs = ((a, a_bytes), (b, b_bytes)) + (((c, c_bytes),) if self.accumulate else ())
        return inputs, ((c, c_bytes),)


def gemm_steps(g: GemmCommand, spec: LapSpec, line_bytes: int) -> tuple[list[GemmStep], int]:
    """The steps of a ``gemm`` command ``g`` in execution order, and the number of sub-blocks r."""
    m, n, k, a, b, c = g.m, g.n, g.k, g.a_addr, g.b_addr, g.c_addr
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


def _listed(names: str) -> str:
    """'A', 'A and B', 'A, B and C'."""
    return names if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


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
        """Every matrix ends within the system's memory, and regions given cover the operands: inputs A, B
        (and C if accumulating), outputs C (so that the coupling's flushes and invalidations reach them all)."""
        for name, base, nbytes in cmd.matrices(self.spec.elem_bytes):
            if base + nbytes > self.memory_bytes:
                raise CommandError(f"{name} = {base}: the matrix ends at byte {base + nbytes}; expected it to end "
                                   f"within the {self.memory_bytes} B of the system's memory")
        operands = cmd.operands(self.spec.elem_bytes)
        for key, regions, names in (("inputs", cmd.inputs, "AB" + ("C" if cmd.accumulate else "")),
                                    ("outputs", cmd.outputs, "C")):
            for name in names if regions is not None else ():
                byte = first_uncovered_byte(regions, *operands[name])
                if byte is not None:
                    raise CommandError(f"{key}: byte {byte} of {name} is in no region; expected regions covering "
                                       f"{_listed(names)} (or no {key}: they default to them)")

    def operand_regions(self, cmd: GemmCommand) -> tuple[Regions, Regions]:
        """A, B (and C if accumulating) in, C out, with this LAP's element size."""
        return cmd.operand_regions(self.spec.elem_bytes)

    def execute(self, cmd: Command):
        """SimPy generator: run one ``gemm`` command, double-buffered (module docstring)."""
        args = parse_command(GemmCommand, cmd.params)  # checked already: cannot fail
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

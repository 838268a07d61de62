"""Stencil engine unit: tiles copied into a scratchpad, computed on lanes, copied out, k in flight.

A ``stencil_tiles`` command (``StencilCommand``; ``offsim commands stencil``) is
one kernel call (one wavefront of a time-tiled schedule,
``workloads.stencil.engine_program``); its regions default to the union of its
tiles'; the host waits for it before
the next wavefront, so no tile runs ahead of the wavefront it depends on. Its
blocks (a block is one tile, or for hhc the prism of sub-tiles one threadblock
runs in sequence, 004 A.29) are dealt round-robin to the ``units``. Each unit
runs its blocks in rounds of k = min(max_tiles_in_flight, scratchpad / M_tile,
its block count), the last round holding the rest: a round starts when the
unit's previous round has written its last tile back (004 A.13: a round's first
read and last write overlap nothing; A.7: ceil(w / (k N_SM)) rounds).

Within a round each block has a slot that, per tile, copies the tile in, waits
for the unit's lanes (one tile computes at a time), computes
C_iter sum_rows ceil(row points / lanes) + tT barriers (004 eqs. A.10, A.16,
A.28), releases the lanes and copies the tile out, one barrier after each copy
(the 2 tau_sync of A.9). A unit has one DMA channel: its copies run one after
another in request order, so the second tile's read overlaps the first tile's
compute (004:L2174). A copy moves one box row (a region of the command) per
burst through the interface (``interface.access``), the next burst as soon as
the link has taken the previous one: bursts of different units interleave on
the shared link, so units streaming together share its bandwidth evenly rather
than whole tiles queueing behind each other, and memory latency overlaps the
stream. With compute-bound tiles a round of k tiles takes m + k c, the T_tile(k)
of 004 eq. A.13.

Energy (004 eqs. B.2-B.6): operations x their energies, u_sr scratchpad words per
point x e_sr, words copied x e_gs; static power while busy (the base class).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import simpy

from simulator.config.stencils import STENCILS
from simulator.accel.base import AcceleratorUnit, Command, CommandError, check_within
from simulator.accel.command_schema import Regions, command_field, union_regions
from simulator.accel.registry import BuildContext, register_builder, register_command
from simulator.config.accel_stencil import StencilEngineSpec
from simulator.units import format_bytes
from simulator.interconnect.interface import span_partial_lines
from simulator.engine import ClockDomain


def cycles_per_point(spec: StencilEngineSpec, stencil: str) -> float:
    """Lane cycles of one point update: flops per point / flops per lane per cycle."""
    return STENCILS[stencil].flops_per_point / spec.flops_per_lane_per_cycle


def tile_compute_cycles(spec: StencilEngineSpec, stencil: str, rows: list[int], t_t: int) -> float:
    """Cycles of one tile on one unit: cycles/point x sum ceil(row / lanes) + tT barriers (004 A.10)."""
    return (cycles_per_point(spec, stencil) * sum(-(-int(r) // spec.lanes) for r in rows)
            + t_t * spec.sync_cycles)


@dataclass(frozen=True)
class StencilTile:
    """One tile of a ``stencil_tiles`` command."""

    inputs: Regions = command_field(doc="box rows the tile reads, one burst each")
    outputs: Regions = command_field(doc="box rows the tile writes back, one burst each")
    points: int = command_field(unit="points", min=0, doc="grid points the tile updates")
    rows: tuple[int, ...] = command_field(unit="points", min=0, doc="points of each row of the tile, in order")
    block: int = command_field(None, min=0, default_text="its position among the blocks",
                               doc="the block (threadblock) the tile belongs to: a block's tiles run in sequence")

    def __post_init__(self) -> None:
        if int(self.points) != sum(int(r) for r in self.rows):
            raise ValueError(f"points = {self.points}: expected the sum of rows, {sum(int(r) for r in self.rows)} "
                             "(the tile's time follows its rows, its counts its points)")


@register_command("stencil")
@dataclass(frozen=True)
class StencilCommand:
    """A stencil engine command: one kernel call's tiles."""

    op: str = command_field(choices=("stencil_tiles",), doc="one kernel call (a wavefront of tiles)")
    stencil: str = command_field(choices=tuple(sorted(STENCILS)), doc="the stencil the tiles apply")
    t_t: int = command_field(unit="time steps", min=1, doc="tile height tT: time steps per tile")
    tiles: tuple[StencilTile, ...] = command_field(doc="the tiles, dealt by block round-robin to the units")
    m_tile_words: int = command_field(unit="words", min=1, doc="scratchpad words one tile needs (its inputs and "
                                                                "outputs fit in them)")
    inputs: Regions = command_field(None, default_text="the tiles' inputs",
                                    doc="regions made visible to the engine before the call")
    outputs: Regions = command_field(None, default_text="the tiles' outputs",
                                     doc="regions the host sees fresh after its wait")

    def operand_regions(self) -> tuple[Regions, Regions]:
        """The union of the tiles' inputs and of their outputs."""
        return union_regions(self.tiles, "inputs"), union_regions(self.tiles, "outputs")


@dataclass
class StencilEngineUnit(AcceleratorUnit):
    """Executes ``stencil_tiles`` commands (module docstring); counts points, operations and words."""

    COMMAND = StencilCommand
    spec: StencilEngineSpec | None = None
    line_bytes: int = 64

    def __post_init__(self) -> None:
        if not isinstance(self.spec, StencilEngineSpec):
            raise ValueError(f"StencilEngineUnit {self.name}: spec = {self.spec!r}: expected a StencilEngineSpec")
        super().__post_init__()
        self._lanes = [simpy.Resource(self.env, capacity=1) for _ in range(self.spec.units)]
        self._dma = [simpy.Resource(self.env, capacity=1) for _ in range(self.spec.units)]

    def slots(self, m_tile_words: int, n_tiles_on_unit: int) -> int:
        """Tiles in flight on one unit: min(max_tiles_in_flight, scratchpad / M_tile, tiles it has)."""
        fit = self.spec.scratchpad_words // max(1, int(m_tile_words))
        if fit < 1:
            raise ValueError(f"stencil {self.name}: a tile needs {m_tile_words} words; the scratchpad holds "
                             f"{self.spec.scratchpad_words}")
        return max(1, min(self.spec.max_tiles_in_flight, fit, n_tiles_on_unit))

    def check_args(self, cmd: StencilCommand) -> None:
        """The scratchpad holds a tile of ``m_tile_words``, and a tile's inputs and its outputs each fit in
        those words; every tile's regions lie within the memory."""
        if cmd.m_tile_words > self.spec.scratchpad_words:
            raise CommandError(f"m_tile_words = {cmd.m_tile_words}: expected at most the {self.spec.scratchpad_words} "
                               "words of the unit's scratchpad")
        tile_bytes = cmd.m_tile_words * self.spec.word_bytes
        for i, tile in enumerate(cmd.tiles):
            for key in ("inputs", "outputs"):
                regions = getattr(tile, key)
                check_within(regions, f"tiles[{i}].{key}", self.memory_bytes)
                moved = sum(int(size) for _, size in regions)
                if moved > tile_bytes:
                    raise CommandError(f"tiles[{i}].{key}: {format_bytes(moved)}; expected at most the tile's "
                                       f"m_tile_words = {cmd.m_tile_words} words of {self.spec.word_bytes} B "
                                       f"({format_bytes(tile_bytes)})")

    def execute(self, cmd: Command):
        """SimPy generator: run every tile of one kernel call and return when all are written back."""
        p = cmd.params  # checked by check_command before the run
        name = p["stencil"]
        t_t = int(p["t_t"])
        blocks: dict[int, list[dict]] = {}
        for tile in p["tiles"]:
            blocks.setdefault(int(tile.get("block", len(blocks))), []).append(tile)
        order = [blocks[b] for b in sorted(blocks)]
        procs = []
        for u in range(self.spec.units):
            mine = order[u::self.spec.units]
            if mine:
                k = self.slots(int(p["m_tile_words"]), len(mine))
                procs.append(self.env.process(self._unit(u, mine, k, name, t_t)))
        self.count("kernel_calls", 1)
        if procs:
            yield simpy.AllOf(self.env, procs)

    def _unit(self, unit: int, blocks: list[list[dict]], k: int, stencil: str, t_t: int):
        """One unit's blocks in rounds of k, a slot per block (004 A.7, A.13)."""
        for r in range(0, len(blocks), k):
            self.count("rounds", 1)
            yield simpy.AllOf(self.env, [self.env.process(self._slot(unit, blk, stencil, t_t))
                                         for blk in blocks[r:r + k]])

    def _copy(self, unit: int, regions: list, is_write: bool):
        """SimPy generator: move ``regions`` on the unit's DMA channel; returns the lines moved.

        One region is one burst. The channel issues the next burst once the link has taken
        the previous one (its serialisation ends), so bursts of different units interleave
        and memory latency overlaps the stream; the copy ends when its last burst has arrived.
        """
        env, lb, moved = self.env, self.line_bytes, 0
        link = self.interface.link
        if self.interface.device_memory is not None:
            link = self.interface.device_memory
        with self._dma[unit].request() as req:
            yield req
            done = env.now
            for addr, nbytes in regions:
                addr, nbytes = int(addr), int(nbytes)
                if nbytes <= 0:
                    continue
                lines = np.arange(addr // lb, (addr + nbytes - 1) // lb + 1, dtype=np.int64)
                moved += len(lines)
                partial = span_partial_lines(addr, nbytes, lb) if is_write else None
                done = max(done, self.interface.access(lines, is_write, env.now, partial))
                if link.busy_until_ps > env.now:
                    yield env.timeout(link.busy_until_ps - env.now)
            if done > env.now:
                yield env.timeout(done - env.now)
        yield env.timeout(self.compute_ps(self.spec.sync_cycles))
        return moved

    def _slot(self, unit: int, tiles: list[dict], stencil: str, t_t: int):
        env = self.env
        st = STENCILS[stencil]
        for tile in tiles:
            lines_in = yield env.process(self._copy(unit, tile["inputs"], False))
            with self._lanes[unit].request() as req:
                yield req
                yield env.timeout(self.compute_ps(tile_compute_cycles(self.spec, stencil, tile["rows"], t_t)))
            lines_out = yield env.process(self._copy(unit, tile["outputs"], True))
            points = int(tile["points"])
            words_in = sum(int(n) for _, n in tile["inputs"]) // self.spec.word_bytes
            words_out = sum(int(n) for _, n in tile["outputs"]) // self.spec.word_bytes
            self.count("tiles", 1)
            self.count("points", points)
            self.count("flops", points * st.flops_per_point)
            self.count("fadd", points * st.fadd)
            self.count("fmul", points * st.fmul)
            self.count("fother", points * st.fother)
            self.count("scratchpad_words", points * st.u_sr)
            self.count("global_words", words_in + words_out)
            self.count("bytes_read", lines_in * self.line_bytes)
            self.count("bytes_written", lines_out * self.line_bytes)

    def dynamic_energy_j(self) -> dict[str, float]:
        """Operations, scratchpad words and global words priced with the spec's energies (004 B.6), J."""
        s, c = self.spec, self.counts
        return {"compute": c.get("fadd", 0) * s.energy_fadd_j + c.get("fmul", 0) * s.energy_fmul_j
                + c.get("fother", 0) * s.energy_fother_j,
                "scratchpad": c.get("scratchpad_words", 0) * s.energy_scratchpad_j_per_word,
                "global": c.get("global_words", 0) * s.energy_global_j_per_word}


@register_builder("stencil")
def build_stencil_engine(name: str, spec: StencilEngineSpec, context: BuildContext) -> StencilEngineUnit:
    """Build a stencil engine clocked at ``spec.frequency_hz`` on the given interface."""
    return StencilEngineUnit(name=name, env=context.env, clock=ClockDomain(name, spec.frequency_hz),
                             interface=context.interface, static_power_w=spec.static_power_w,
                             idle_power_w=spec.idle_power_w, spec=spec, line_bytes=context.interface.line_bytes)


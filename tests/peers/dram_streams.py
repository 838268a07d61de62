"""Request streams and peer configurations for checking offsim's DRAM model against DRAMSim3 and Ramulator 2.

A stream is a list of 64 B line requests (line index = byte address // 64 in offsim's address
mapping), each a read or a write, with an arrival time in ps: 0 for a saturating stream (every
request waits in the driver until the controller's queue takes it) or a fixed interval for a
timed one. Streams are generated from fixed seeds, so the same code gives the same requests;
``stream_digest`` fingerprints them and the reference tables record it.

``python tests/peers/dram_streams.py OUT --config ddr3|ddr4|hbm2|ddr5|hbm3|lpddr5 [--dramsim3-configs DIR]`` writes,
for every stream of that configuration:

* ``OUT/<config>/<stream>.npz``: offsim's line-address form (``lines`` int64, ``is_write`` bool,
  ``arrival_ps`` int64);
* ``OUT/<config>/<stream>.dramsim3.trace``: DRAMSim3 trace lines ``0x<byte address> READ|WRITE
  <arrival cycle>``, then a sentinel read due at cycle 2**62 that is never sent (DRAMSim3's trace
  reader stops at the end of the file: it drops a last request the queue could not take at once,
  and after a final newline it sends the last one twice);
* ``OUT/<config>/<stream>.ramulator2.trace`` and ``<stream>.ramulator2.py``: a Ramulator 2
  ``LoadStoreTrace`` (``LD|ST 0x<byte address>``, the address re-encoded so that Ramulator's
  ``RoBaRaCoCh`` mapper finds the same rank, bank group, bank, row and column as DRAMSim3) and the
  Python configuration that runs it and writes ``<stream>.ramulator2.stats.json``;

and ``OUT/<config>/dramsim3.ini``, the DRAMSim3 configuration (``--dramsim3-configs``: the
``configs`` folder of a DRAMSim3 checkout, for the DDR4 and HBM2 configurations, which start from
one of its shipped files). DRAMSim3 has none of DDR5, HBM3 and LPDDR5: the ddr5, hbm3 and lpddr5
configurations (``RAMULATOR_ONLY``) are offsim's shipped presets as one sub-channel, pseudo-channel or
channel, their streams' fields are offsim's mapping of it, and only Ramulator 2's files are written (on
hbm3 and lpddr5, two 32 B requests a line and no timed stream). ``tests/peers/README.md`` says how the
peers run them.
"""

from __future__ import annotations

import argparse
import configparser
import hashlib
import sys
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np

LINE_BYTES = 64
GIB = 1 << 30
#: Arrival cycle of the DRAMSim3 trace's closing sentinel, never reached.
DRAMSIM3_NEVER = 1 << 62
#: Interval of the timed random-read stream, ps.
LOW_RATE_INTERVAL_PS = 200_000


@dataclass(frozen=True)
class Stream:
    """Line requests of one stream: line indices, read/write flags and arrival times (ps)."""

    name: str
    description: str
    lines: np.ndarray
    is_write: np.ndarray
    arrival_ps: np.ndarray

    @property
    def timed(self) -> bool:
        """True when requests arrive at set times (not all at 0, limited only by the queue)."""
        return bool(self.arrival_ps.any())


def _saturating(name: str, description: str, lines: np.ndarray, is_write: np.ndarray) -> Stream:
    lines = np.asarray(lines, dtype=np.int64)
    return Stream(name, description, lines, np.asarray(is_write, dtype=bool), np.zeros(lines.size, np.int64))


def _triad(n_elements: int, bases: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray]:
    """a[i] = b[i] + s * c[i] over line-sized elements: read b[i], read c[i], write a[i]."""
    a, b, c = bases
    i = np.arange(n_elements, dtype=np.int64)
    lines = np.stack([b + i, c + i, a + i], axis=1).reshape(-1)
    is_write = np.tile(np.array([False, False, True]), n_elements)
    return lines, is_write


def streams(bank_stride_lines: int) -> list[Stream]:
    """The streams of the check, over the first GiB of memory.

    bank_stride_lines: lines from one bank's first row to the next bank's (the triad puts its
    arrays in different banks by offsetting them so many lines; a multiple of the number of
    lines in one row of every bank puts them in one bank)."""
    n = 1 << 20
    rng = np.random.default_rng(40)
    random_lines = rng.integers(0, GIB // LINE_BYTES, n)
    triad_n = 1 << 18
    spread = (0, triad_n + 5 * bank_stride_lines, 2 * triad_n + 10 * bank_stride_lines)
    one_bank = (0, 4 * triad_n, 8 * triad_n)
    n_timed = 1 << 14
    timed_lines = np.random.default_rng(41).integers(0, GIB // LINE_BYTES, n_timed)
    out = [
        _saturating("seq_read", f"{n} reads of consecutive lines from 0", np.arange(n), np.zeros(n, bool)),
        _saturating("seq_write", f"{n} writes of consecutive lines from 0", np.arange(n), np.ones(n, bool)),
        _saturating("random_read", f"{n} reads of uniformly random lines of the first GiB (seed 40)",
                    random_lines, np.zeros(n, bool)),
        _saturating("triad", f"STREAM triad over {triad_n} lines per array: read b[i], read c[i], write a[i]; "
                             f"arrays at lines {spread} (different banks)", *_triad(triad_n, spread)),
        _saturating("triad_one_bank", f"the triad with its arrays at lines {one_bank} (one bank per i)",
                    *_triad(triad_n, one_bank)),
    ]
    out.append(Stream("random_read_200ns",
                      f"{n_timed} reads of uniformly random lines of the first GiB (seed 41), one every 200 ns",
                      timed_lines.astype(np.int64), np.zeros(n_timed, bool),
                      np.arange(n_timed, dtype=np.int64) * LOW_RATE_INTERVAL_PS))
    return out


def stream_digest(stream: Stream) -> str:
    """First 16 hex digits of the SHA-256 of the stream's lines, flags and arrivals."""
    h = hashlib.sha256()
    for array in (stream.lines.astype("<i8"), stream.is_write.astype(np.uint8), stream.arrival_ps.astype("<i8")):
        h.update(array.tobytes())
    return h.hexdigest()[:16]


# -- address layouts ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Layout:
    """Bit widths of the address fields above the 64 B line offset, most significant first,
    as DRAMSim3 decodes them (``ch``, ``ra``, ``bg``, ``ba``, ``ro``, ``co``)."""

    order: tuple[str, ...]
    bits: dict[str, int]

    def decode(self, lines: np.ndarray) -> dict[str, np.ndarray]:
        out, shift = {}, 0
        for name in reversed(self.order):
            out[name] = (lines >> shift) & ((1 << self.bits[name]) - 1)
            shift += self.bits[name]
        return out

    def encode(self, fields: dict[str, np.ndarray], order: tuple[str, ...]) -> np.ndarray:
        """Line indices whose fields, in ``order`` (most significant first), are ``fields``."""
        lines = np.zeros_like(fields[order[0]])
        for name in order:
            lines = (lines << self.bits[name]) | fields[name]
        return lines


def _log2(value: int) -> int:
    if value < 1 or value & (value - 1):
        raise ValueError(f"{value}: expected a power of two")
    return value.bit_length() - 1


def dramsim3_layout(ini: configparser.ConfigParser) -> Layout:
    """The address fields DRAMSim3 derives from its configuration (``Config::CalculateSize`` and
    ``Config::SetAddressMapping``: columns doubled for HBM, column bits less log2(BL), ranks from
    the channel size)."""
    s, t = ini["dram_structure"], ini["system"]
    protocol = s.get("protocol")
    columns = int(s["columns"]) * (2 if protocol.startswith("HBM") else 1)
    device_width, bl = int(s["device_width"]), int(s["BL"])
    banks = int(s["bankgroups"]) * int(s["banks_per_group"])
    devices = int(t["bus_width"]) // device_width
    megs_per_rank = columns * device_width // 8 * (int(s["rows"]) // 1024) // 1024 * banks * devices
    ranks = max(1, int(t["channel_size"]) // megs_per_rank)
    if int(t["bus_width"]) // 8 * bl != LINE_BYTES:
        raise ValueError(f"DRAMSim3 request size {int(t['bus_width']) // 8 * bl} B: expected {LINE_BYTES} B")
    mapping = t["address_mapping"]
    order = tuple(mapping[i:i + 2] for i in range(0, len(mapping), 2))
    bits = {"ch": _log2(int(t["channels"])), "ra": _log2(ranks), "bg": _log2(int(s["bankgroups"])),
            "ba": _log2(int(s["banks_per_group"])), "ro": _log2(int(s["rows"])), "co": _log2(columns) - _log2(bl)}
    return Layout(order, bits)


#: DRAMSim3's address mapping of each configuration (the DDR3 one written by ``ddr3_dramsim3_edits``, the
#: others as in the shipped file it starts from; ``dramsim3_ini`` checks).
DRAMSIM3_MAPPING = {"ddr3": "rorabgbachco", "ddr4": "rochrababgco", "hbm2": "rorabgbachco"}
#: offsim's mapping fields in DRAMSim3's: a bank's group is the low bits of its index (``DramGeometry``),
#: so the bank-group field sits below the bank field.
OFFSIM_FIELDS = {"row": ("ro",), "rank": ("ra",), "bank": ("ba", "bg"), "channel": ("ch",), "column": ("co",)}


def offsim_order(geometry) -> tuple[str, ...]:
    """The fields of offsim's mapping of ``geometry`` (a ``DramGeometry``), most significant first."""
    return tuple(f for name in geometry.mapping.split(":") for f in OFFSIM_FIELDS[name])


def offsim_layout(config: str, geometry) -> Layout:
    """The reference address fields of ``config`` (DRAMSim3's mapping, or offsim's own where only
    Ramulator 2 runs it) with the widths of offsim's ``geometry`` (a ``DramGeometry`` set up as that
    configuration)."""
    if config in DRAMSIM3_MAPPING:
        mapping = DRAMSIM3_MAPPING[config]
        order = tuple(mapping[i:i + 2] for i in range(0, len(mapping), 2))
    else:
        order = offsim_order(geometry)
    bits = {"ch": _log2(geometry.channels), "ra": _log2(geometry.ranks_per_channel),
            "bg": _log2(geometry.bank_groups), "ba": _log2(geometry.banks // geometry.bank_groups),
            "ro": _log2(geometry.rows), "co": _log2(geometry.lines_per_row)}
    return Layout(order, bits)


def offsim_lines(stream: Stream, layout: Layout, geometry) -> np.ndarray:
    """offsim line indices that its mapping of ``geometry`` decodes to the channel, rank, bank group,
    bank, row and column the reference layout finds in the stream (``layout``: ``offsim_layout``)."""
    return layout.encode(layout.decode(stream.lines), offsim_order(geometry))


#: Ramulator 2's RoBaRaCoCh mapper, most significant first; the bank-group level sits between
#: bank and rank (its levels, lowest first above the column: rank, bank group, bank, row).
RAMULATOR_ORDER = ("ro", "ba", "bg", "ra", "co")


# -- configurations -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PeerConfig:
    """One memory configuration as both peers are set up for it.

    dramsim3_base: the DRAMSim3 shipped file it starts from; dramsim3_edits: (section, key,
    value) set on top of it."""

    name: str
    dramsim3_base: str
    dramsim3_edits: tuple[tuple[str, str, str], ...]


def ddr3_dramsim3_edits() -> tuple[tuple[str, str, str], ...]:
    """DRAMSim3 keys of offsim's shipped DDR3-1600 preset (configs/presets/dram/
    ddr3_1600_mt41j256m4.yaml) with two ranks, open page, a 32-entry queue, refresh on and
    power-down off (DRAMSim3 has no power-down; its self-refresh stays off)."""
    from simulator.config.loader import load_spec
    from simulator.config.schema import SystemSpec
    from simulator.system import dram_parameters

    root = Path(__file__).resolve().parents[2]
    spec = load_spec(root / "configs" / "systems" / "i7_920_ddr3.yaml", SystemSpec,
                     ["dram.geometry.ranks_per_channel=2"]).spec
    t, c, g = dram_parameters(spec)
    if g.mapping != "row:rank:bank:channel:column" or spec.dram.geometry.page_policy != "open":
        raise ValueError(f"DDR3 preset: mapping {g.mapping!r}, page policy {spec.dram.geometry.page_policy!r}: "
                         "expected row:rank:bank:channel:column and open")
    rank_mb = g.row_bytes * g.rows * g.banks // (1 << 20)
    tck_ns = t.tck_ps / 1000
    s = [("dram_structure", k, str(v)) for k, v in (
        ("protocol", "DDR3"), ("bankgroups", 1), ("banks_per_group", g.banks), ("rows", g.rows),
        ("columns", g.columns), ("device_width", g.device_width_bits), ("BL", t.burst_length))]
    s += [("timing", k, str(v)) for k, v in (
        ("tCK", f"{tck_ns:g}"), ("AL", 0), ("CL", t.cl), ("CWL", t.cwl), ("tRCD", t.t_rcd), ("tRP", t.t_rp),
        ("tRAS", t.t_ras), ("tRFC", t.t_rfc), ("tREFI", round(t.t_refi_ps / t.tck_ps)), ("tRPRE", 0),
        ("tWPRE", 0), ("tRRD_S", t.t_rrd), ("tRRD_L", t.t_rrd), ("tWTR_S", t.t_wtr), ("tWTR_L", t.t_wtr),
        ("tFAW", t.t_faw), ("tWR", t.t_wr), ("tRTP", t.t_rtp), ("tCCD_S", t.t_ccd), ("tCCD_L", t.t_ccd),
        ("tCKE", t.t_cke), ("tXP", t.t_xp), ("tRTRS", t.t_rtrs))]
    s += [("power", k, f"{v:g}") for k, v in (
        ("VDD", c.vdd_v), ("IDD0", c.idd0_ma), ("IDD2P", c.idd2p_ma), ("IDD2N", c.idd2n_ma),
        ("IDD3P", c.idd3p_ma), ("IDD3N", c.idd3n_ma), ("IDD4W", c.idd4w_ma), ("IDD4R", c.idd4r_ma),
        ("IDD5AB", c.idd5_ma))]
    s += [("system", k, str(v)) for k, v in (
        ("channel_size", rank_mb * g.ranks_per_channel), ("channels", g.channels), ("bus_width", g.bus_width_bits),
        ("address_mapping", DRAMSIM3_MAPPING["ddr3"]), ("queue_structure", "PER_BANK"),
        ("refresh_policy", "RANK_LEVEL_STAGGERED"), ("row_buf_policy", "OPEN_PAGE"), ("cmd_queue_size", 8),
        ("trans_queue_size", spec.dram.geometry.queue_depth),
        ("enable_self_refresh", "false"))]
    return tuple(s)


#: Output settings of every DRAMSim3 run: one summary at the end, no epoch files.
DRAMSIM3_OUTPUT = (("other", "epoch_period", "2000000000"), ("other", "output_level", "1"))

CONFIGS = {
    "ddr4": PeerConfig(
        "ddr4", "DDR4_8Gb_x8_3200.ini",
        (("timing", "tCK", "0.625"),  # shipped 0.63: DDR4-3200's clock is 1600 MHz
         ("system", "enable_self_refresh", "false"))),
    "hbm2": PeerConfig(
        "hbm2", "HBM2_8Gb_x128.ini",
        (("system", "channels", "1"), ("system", "channel_size", "1024"),  # one 128-bit channel of the stack
         ("timing", "tRTP", "4"),  # the file spells tRTP_S/tRTP_L, which DRAMSim3 does not read
         ("system", "enable_self_refresh", "false"))),
}


@dataclass(frozen=True)
class RamulatorOnly:
    """A configuration only Ramulator 2 runs: offsim's shipped ``preset`` with the ``overrides`` that
    make it the organisation Ramulator 2 models, and Ramulator 2's model of it: its DRAM class
    (``standard``), org and timing presets, the tCK of that timing preset (ps), the offsim geometry
    fields its org preset has (``org``), its controller class, its controller ticks per tCK (2 where
    it ticks half cycles), its requests per 64 B line (its request is one burst) and further
    (name, value) arguments of its controller."""

    preset: str
    overrides: tuple[str, ...]
    standard: str
    org_preset: str
    timing_preset: str
    tck_ps: int
    org: dict[str, int]
    controller: str
    ticks_per_tck: int = 1
    requests_per_line: int = 1
    controller_options: tuple[tuple[str, object], ...] = ()


#: Configurations only Ramulator 2 runs (DRAMSim3 has none of these standards); Ramulator 2's presets are in
#: its python/ramulator/dram/ddr5.py, hbm3.py and lpddr5.py.
#: ddr5: one 32-bit sub-channel of a single rank (16 Gb x8, 8 bank groups x 4 banks, 65536 rows, 1024 columns)
#: at DDR5-4800AN.
#: hbm3: one 32-bit pseudo-channel of a 4 Gb HBM3 channel (4 bank groups x 4 banks, 16384 rows, 1 KiB rows) at
#: 6400 Mb/s, refreshed all-bank; Ramulator 2 moves 32 B (one BL8 burst) per request and ticks half clock cycles.
#: lpddr5: one 16-bit channel (16 Gb x16, 4 bank groups x 4 banks, 65536 rows, 1024 columns) at LPDDR5-6400,
#: 32 B per request.
RAMULATOR_ONLY = {
    "ddr5": RamulatorOnly("dram/ddr5_4800_mt60b2g8",
                          ("dram.geometry.channels=1", "dram.geometry.refresh_mode=all_bank"),
                          "DDR5", "DDR5_16Gb_x8", "DDR5_4800AN", 416,
                          {"bank_groups": 8, "banks": 32, "rows": 1 << 16, "columns": 1 << 10, "device_width_bits": 8,
                           "bus_width_bits": 32}, "GenericDDR"),
    "hbm3": RamulatorOnly("dram/hbm3_8gb_6400", ("dram.geometry.channels=1", "dram.geometry.refresh_mode=all_bank",
                                                 "dram.interface_energy_j_per_bit=20 pJ/bit"),  # unused here
                          "HBM3", "HBM3_4Gb", "HBM3_6400Mbps", 625,
                          {"bank_groups": 4, "banks": 16, "rows": 1 << 14, "columns": 256, "device_width_bits": 32,
                           "bus_width_bits": 32}, "HBM34", ticks_per_tck=2, requests_per_line=2),
    "lpddr5": RamulatorOnly("dram/lpddr5_6400_16gb_x16",
                            ("dram.geometry.channels=1", "dram.geometry.refresh_mode=all_bank",
                             "dram.interface_energy_j_per_bit=20 pJ/bit"),  # unused here
                            "LPDDR5", "LPDDR5_16Gb_x16", "LPDDR5_6400", 1250,
                            {"bank_groups": 4, "banks": 16, "rows": 1 << 16, "columns": 1 << 10,
                             "device_width_bits": 16, "bus_width_bits": 16}, "LPDDR5", requests_per_line=2,
                            # its data clock kept running: no CAS-WCK synchronisation, which offsim does not model
                            controller_options=(("wck_sync_mode", "always_on"),)),
}


#: Every configuration: ddr3 (written from offsim's preset), the DRAMSim3-based CONFIGS, the RAMULATOR_ONLY ones.
CONFIG_NAMES = ("ddr3", *CONFIGS, *RAMULATOR_ONLY)


def offsim_spec(preset: str, overrides: tuple[str, ...]):
    """offsim's system spec with main memory the DRAM ``preset`` (under configs/presets) and the
    ``overrides`` on top (the host and caches of the shipped i7-920 system, which the checks do not use)."""
    from simulator.config.loader import apply_overrides, build_spec, load_yaml, resolve_presets
    from simulator.config.schema import SystemSpec

    source = Path(__file__).resolve().parents[2] / "configs" / "systems" / "i7_920_ddr3.yaml"
    raw = dict(load_yaml(source), dram={"preset": preset})
    resolved = apply_overrides(resolve_presets(raw, str(source)), overrides, SystemSpec)
    errors: list = []
    spec = build_spec(SystemSpec, resolved, str(source), "", errors)
    if errors:
        raise ValueError(f"{preset}: " + "; ".join(str(e) for e in errors))
    return spec


def ramulator_only_parameters(config: str):
    """offsim's (DramTiming, DramGeometry) of a configuration of ``RAMULATOR_ONLY``."""
    from simulator.config.schema import dram_parameters

    peer = RAMULATOR_ONLY[config]
    timing, _, geometry = dram_parameters(offsim_spec(peer.preset, peer.overrides))
    return timing, geometry


def config_streams(config: str, layout: Layout) -> list[Stream]:
    """The streams the peers of ``config`` run (``layout``: its reference fields): all of them but, where
    Ramulator 2 takes a line as several requests, the timed one (its trace frontend sends one request per
    tick, so it cannot send a line's requests together at a fixed interval)."""
    out = streams(bank_stride_lines(layout))
    if config in RAMULATOR_ONLY and RAMULATOR_ONLY[config].requests_per_line > 1:
        out = [s for s in out if not s.timed]
    return out


def reference_layout(config: str, ini: configparser.ConfigParser | None) -> tuple[Layout, int]:
    """The address fields the peers are given and their clock period in ps: DRAMSim3's (``ini``, its
    configuration) or, for a configuration of ``RAMULATOR_ONLY``, offsim's mapping of its preset."""
    if config in RAMULATOR_ONLY:
        timing, geometry = ramulator_only_parameters(config)
        return offsim_layout(config, geometry), timing.tck_ps
    if ini is None:
        raise ValueError(f"--config {config}: expected its DRAMSim3 configuration")
    return dramsim3_layout(ini), tck_ps(ini)


def dramsim3_ini(config: str, dramsim3_configs: Path | None) -> configparser.ConfigParser:
    """The DRAMSim3 configuration of ``config``: offsim's preset for ddr3, else the shipped file
    with the recorded edits."""
    ini = configparser.ConfigParser()
    ini.optionxform = str  # DRAMSim3 keys are case-sensitive
    if config == "ddr3":
        edits = ddr3_dramsim3_edits()
    else:
        peer = CONFIGS[config]
        if dramsim3_configs is None:
            raise ValueError(f"--config {config}: expected --dramsim3-configs, the configs folder of DRAMSim3")
        ini.read(dramsim3_configs / peer.dramsim3_base)
        edits = peer.dramsim3_edits
    for section, key, value in edits + DRAMSIM3_OUTPUT:
        if not ini.has_section(section):
            ini.add_section(section)
        ini[section][key] = value
    if ini["system"]["address_mapping"] != DRAMSIM3_MAPPING[config]:
        raise ValueError(f"{config}: DRAMSim3 address_mapping {ini['system']['address_mapping']!r}: expected "
                         f"{DRAMSIM3_MAPPING[config]!r} (DRAMSIM3_MAPPING)")
    return ini


def tck_ps(ini: configparser.ConfigParser) -> int:
    """DRAMSim3's clock period in ps (its tCK is in ns)."""
    return round(float(ini["timing"]["tCK"]) * 1000)


def bank_stride_lines(layout: Layout) -> int:
    """Lines between consecutive banks in the layout (the weight of the lowest bank field's unit)."""
    shift = 0
    for name in reversed(layout.order):
        if name in ("ba", "bg") and layout.bits[name]:
            return 1 << shift
        shift += layout.bits[name]
    raise ValueError("layout has no bank field")


# -- writers ---------------------------------------------------------------------------------------------
def write_dramsim3_trace(path: Path, stream: Stream, tck: int) -> None:
    cycles = stream.arrival_ps // tck
    if (cycles * tck != stream.arrival_ps).any():
        raise ValueError(f"{stream.name}: arrivals are not whole cycles of {tck} ps")
    ops = np.where(stream.is_write, "WRITE", "READ")
    text = "".join(f"{a:#x} {o} {c}\n" for a, o, c in zip((stream.lines * LINE_BYTES).tolist(), ops, cycles.tolist()))
    path.write_text(text + f"0x0 READ {DRAMSIM3_NEVER}")  # see the module docstring


def ramulator_addresses(stream: Stream, layout: Layout, requests_per_line: int = 1) -> np.ndarray:
    """Byte addresses that Ramulator 2's RoBaRaCoCh mapper decodes to the fields the reference layout
    gives; with several requests per line, each line's requests in turn, its column's consecutive bursts."""
    if layout.bits["ch"]:
        raise ValueError("one channel expected")
    fields = layout.decode(stream.lines)
    bursts = Layout(RAMULATOR_ORDER, dict(layout.bits, co=layout.bits["co"] + _log2(requests_per_line)))
    parts = [bursts.encode(dict(fields, co=fields["co"] * requests_per_line + k), RAMULATOR_ORDER)
             for k in range(requests_per_line)]
    return np.stack(parts, axis=1).reshape(-1) * (LINE_BYTES // requests_per_line)


def ramulator_script(stream: Stream, tck: int, standard: str, dram_kwargs: dict[str, object],
                     controller: str = "GenericDDR", buffer_requests: int = 32, ticks_per_tck: int = 1,
                     controller_options: tuple[tuple[str, object], ...] = ()) -> str:
    """A Ramulator 2 Python configuration that replays the stream's trace and writes its stats.

    Timed streams need a fixed interval: the frontend then ticks once per ``interval`` of memory
    time and sends one request per tick. Ramulator 2's loop ticks the frontend once per
    ``memory_ratio`` steps and the memory once per ``frontend_ratio``, so the interval / tCK, reduced
    to ``memory_ratio / frontend_ratio``, need not be whole: the controller then takes request k in
    memory cycle ceil(k x interval / tCK). ``buffer_requests``: the controller's read and write buffers, in
    its requests; ``ticks_per_tck``: its ticks per clock cycle ``tck`` (ps); ``controller_options``: further
    (name, value) arguments of the controller."""
    if stream.timed:
        gaps = np.diff(stream.arrival_ps)
        if stream.arrival_ps[0] != 0 or (gaps != gaps[0]).any():
            raise ValueError(f"{stream.name}: timed streams need arrivals at a fixed interval from 0")
        ratio = Fraction(int(gaps[0]) * ticks_per_tck, tck)
        memory_ratio, frontend_ratio = ratio.numerator, ratio.denominator
    else:
        memory_ratio, frontend_ratio = 1, 1
    kwargs = ", ".join(f"{k}={v!r}" for k, v in dram_kwargs.items())
    options = "".join(f"\n    {k}={v!r}," for k, v in controller_options)
    return f'''"""Ramulator 2 run of stream {stream.name} (written by dram_streams.py)."""
import json
import pathlib
import ramulator

here = pathlib.Path(__file__).resolve().parent
frontend = ramulator.frontend.LoadStoreTrace(clock_ratio={frontend_ratio},
                                             path=str(here / "{stream.name}.ramulator2.trace"))
dram = ramulator.dram.{standard}({kwargs})
ctrl = ramulator.controller.{controller}(
    dram=dram,
    read_buffer_size={buffer_requests},
    write_buffer_size={buffer_requests},{options}
    scheduler=ramulator.scheduler.FRFCFS(),
    refresh_manager=ramulator.refresh_manager.AllBank(),
    row_policy=ramulator.row_policy.Open(),
    addr_mapper=ramulator.addr_mapper.RoBaRaCoCh(),
)
mem = ramulator.memory_system.GenericDRAM(clock_ratio={memory_ratio}, controllers=[ctrl],
                                          channel_mapper=ramulator.channel_mapper.CacheLineInterleave())
sim = ramulator.Simulation(frontend, mem)
sim.run()
stats = sim.stats
if stats:
    (here / "{stream.name}.ramulator2.stats.json").write_text(json.dumps(stats, indent=1))
'''


#: Ramulator 2 presets each configuration starts from; ``ramulator_dram_kwargs`` sets every timing
#: to the DRAMSim3 configuration's value on top.
RAMULATOR_PRESETS = {"ddr3": ("DDR3", "DDR3_1Gb_x4", "DDR3_1600K"), "ddr4": ("DDR4", "DDR4_8Gb_x8", "DDR4_3200AA")}


def ramulator_dram_kwargs(config: str, ini: configparser.ConfigParser, layout: Layout) -> dict[str, object]:
    """Ramulator 2 DRAM object arguments: its presets, with the rank count and every timing it
    takes set to the DRAMSim3 configuration's (tRC = tRAS + tRP, as DRAMSim3 derives it)."""
    standard, org, timing = RAMULATOR_PRESETS[config]
    t = lambda key: int(ini["timing"][key])  # noqa: E731
    out: dict[str, object] = {"org_preset": org, "timing_preset": timing, "rank": 1 << layout.bits["ra"],
                              "nCL": t("CL"), "nRCD": t("tRCD"), "nRP": t("tRP"), "nRAS": t("tRAS"),
                              "nRC": t("tRAS") + t("tRP"), "nWR": t("tWR"), "nRTP": t("tRTP"), "nCWL": t("CWL"),
                              "nFAW": t("tFAW"), "nRFC": t("tRFC"), "nREFI": t("tREFI"), "nCS": t("tRTRS")}
    if standard == "DDR3":
        out.update(nCCD=t("tCCD_S"), nRRD=t("tRRD_S"), nWTR=t("tWTR_S"))
    else:
        out.update(nCCDS=t("tCCD_S"), nCCDL=t("tCCD_L"), nRRDS=t("tRRD_S"), nRRDL=t("tRRD_L"),
                   nWTRS=t("tWTR_S"), nWTRL=t("tWTR_L"))
    return out


def ramulator_only_kwargs(config: str, timing, geometry) -> dict[str, object]:
    """Ramulator 2 DRAM arguments of a ``RAMULATOR_ONLY`` configuration with every timing it takes set to
    offsim's (``timing``, a ``DramTiming`` in tCK; ``geometry``, offsim's, checked against its org preset).
    What stays Ramulator 2's own is in the README: DDR5's two-cycle commands, nPPD (PRE to PRE, 2 tCK; offsim
    has none) and read-to-write spacing; HBM3's half-cycle row commands on their own bus, nPPD, nRREFD."""
    peer = RAMULATOR_ONLY[config]
    org = {k: getattr(geometry, k) for k in peer.org}
    if org != peer.org:
        raise ValueError(f"offsim's {config} organisation {org}: expected Ramulator 2's {peer.org_preset}, {peer.org}")
    if timing.tck_ps != peer.tck_ps:
        raise ValueError(f"offsim's {config} tCK {timing.tck_ps} ps: expected {peer.timing_preset}'s {peer.tck_ps} ps")
    t = timing
    n_bl = t.burst_ps // t.tck_ps
    out: dict[str, object] = {
        "org_preset": peer.org_preset, "timing_preset": peer.timing_preset, "nBL": n_bl, "nCL": t.cl, "nRP": t.t_rp,
        "nRAS": t.t_ras, "nRC": t.t_rc, "nWR": t.t_wr, "nRTP": t.t_rtp, "nCWL": t.cwl, "nCCDS": t.t_ccd_s,
        "nCCDL": t.t_ccd_l, "nRRDS": t.t_rrd_s, "nRRDL": t.t_rrd_l, "nWTRS": t.t_wtr_s, "nWTRL": t.t_wtr_l,
        "nFAW": t.t_faw, "nRFC": t.t_rfc, "nREFI": round(t.t_refi_ps / t.tck_ps)}
    if peer.standard == "DDR5":
        out.update(rank=geometry.ranks_per_channel, nRCD=t.t_rcd, nCCDS_WR=t.t_ccd_s, nCCDL_WR=t.t_ccd_l_wr,
                   nCS=t.t_rtrs)
    elif peer.standard == "LPDDR5":  # one tRP before an all-bank precharge too; no tCCD_L_WR of its own
        del out["nBL"]
        out.update(rank=geometry.ranks_per_channel, nBL_min=n_bl, nRCD=t.t_rcd, nRPab=t.t_rp, nCCDS_WR=t.t_ccd_s,
                   nCCDL_WR=t.t_ccd_l, nRFCpb=t.t_rfc_pb, nCS=t.t_rtrs)
    else:  # HBM3: one pseudo-channel; offsim's one tRCD for reads and writes, its read-to-write bus bubble of 2 tCK
        out.update(pseudochannel=1, nRCDRD=t.t_rcd, nRCDWR=t.t_rcd, nRTW=t.cl + n_bl + 2 - t.cwl, nRFCpb=t.t_rfc_pb)
    return out


def write_all(out: Path, config: str, dramsim3_configs: Path | None) -> None:
    peer = RAMULATOR_ONLY.get(config)
    if peer is not None:
        ini = None
        layout, tck = reference_layout(config, None)
        standard, dram_kwargs = peer.standard, ramulator_only_kwargs(config, *ramulator_only_parameters(config))
    else:
        ini = dramsim3_ini(config, dramsim3_configs)
        layout, tck = reference_layout(config, ini)
        standard = RAMULATOR_PRESETS[config][0] if config in RAMULATOR_PRESETS else None
        dram_kwargs = ramulator_dram_kwargs(config, ini, layout) if standard else None
    folder = out / config
    folder.mkdir(parents=True, exist_ok=True)
    if ini is not None:
        with open(folder / "dramsim3.ini", "w") as f:
            ini.write(f)
    per_line = peer.requests_per_line if peer else 1
    for stream in config_streams(config, layout):
        np.savez(folder / f"{stream.name}.npz", lines=stream.lines, is_write=stream.is_write,
                 arrival_ps=stream.arrival_ps)
        if ini is not None:
            write_dramsim3_trace(folder / f"{stream.name}.dramsim3.trace", stream, tck)
        if dram_kwargs is not None:
            addresses = ramulator_addresses(stream, layout, per_line)
            ops = np.repeat(np.where(stream.is_write, "ST", "LD"), per_line)
            (folder / f"{stream.name}.ramulator2.trace").write_text(
                "".join(f"{o} {a:#x}\n" for o, a in zip(ops, addresses.tolist())))
            (folder / f"{stream.name}.ramulator2.py").write_text(ramulator_script(
                stream, tck, standard, dram_kwargs, peer.controller if peer else "GenericDDR", 32 * per_line,
                peer.ticks_per_tck if peer else 1, peer.controller_options if peer else ()))
        print(f"{config}/{stream.name}: {stream.lines.size} requests, digest {stream_digest(stream)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="folder to write the streams and configurations into")
    parser.add_argument("--config", choices=CONFIG_NAMES, default="ddr3")
    parser.add_argument("--dramsim3-configs", type=Path, help="DRAMSim3's configs folder (ddr4, hbm2)")
    args = parser.parse_args(argv)
    try:
        write_all(args.out, args.config, args.dramsim3_configs)
    except (OSError, ValueError, KeyError) as exc:
        print(f"dram_streams: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

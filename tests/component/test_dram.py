"""DRAM channel model: latencies by hand, bandwidth, row-buffer behaviour, refresh, a JEDEC
protocol check of the command log, and exact background/refresh energy accounting."""

import dataclasses

import numpy as np
import pytest

from simulator.memory import dram_kernel as k
from simulator.memory import power
from simulator.memory.dram import DramSystem
from tests.conftest import ddr3_preset

# DDR3-1600 Micron MT41J256M4 (003 Table 4 at 003:L327-L328): the shipped preset, one rank
TIMING, CURRENTS, GEOMETRY = ddr3_preset()
TCK = TIMING.tck_ps
PEAK_BYTES_PER_S = 12.8e9
LINES_PER_ROW = 256
LINES_PER_BANK_STRIDE = 256  # mapping row:rank:bank:channel:column, one channel and rank
ROW_STRIDE = 8 * 256


def make(geometry=GEOMETRY, **kw):
    return DramSystem(TIMING, CURRENTS, geometry, **kw)


def line(row, bank, col=0):
    return row * ROW_STRIDE + bank * LINES_PER_BANK_STRIDE + col


# -- latencies by hand -----------------------------------------------------------------------
def test_isolated_read_latencies():
    d = make()
    a = 1000
    assert d.service(np.array([line(5, 3)]), False, a) == a + (11 + 11 + 4) * TCK  # tRCD + CL + burst
    a = 1_000_000
    assert d.service(np.array([line(5, 3, 7)]), False, a) == a + (11 + 4) * TCK  # row hit: CL + burst
    a = 2_000_000
    assert d.service(np.array([line(9, 3)]), False, a) == a + (11 + 11 + 11 + 4) * TCK  # conflict: + tRP
    c = d.counters()
    assert (c["row_misses"], c["row_hits"], c["row_conflicts"], c["activates"], c["precharges"]) == (1, 1, 1, 2, 1)


def test_conflict_waits_for_tras():
    d = make()
    # ACT at 0; the PRE for the second row waits for tRAS (28), then tRP, tRCD, CL, burst
    assert d.service(np.array([line(1, 0), line(2, 0)]), False, 0) == (28 + 11 + 11 + 11 + 4) * TCK


def test_write_hit_latency_and_write_to_read_turnaround():
    d = make()
    d.service(np.array([line(1, 2)]), True, 0)
    a = 1_000_000
    assert d.service(np.array([line(1, 2, 1)]), True, a) == a + (8 + 4) * TCK  # CWL + burst
    # read right after a write in the same rank waits tWTR after the write data
    out = d.service_lines(np.array([line(1, 2, 2), line(1, 2, 3)]), np.array([True, False]), 2_000_000)
    assert out[1] == out[0] + (6 + 11 + 4) * TCK


# -- bandwidth and row buffer ----------------------------------------------------------------
def test_stream_runs_close_to_peak_bandwidth():
    n = 1 << 18
    d = make()
    end = d.service(np.arange(n), False, 0)
    bw = n * 64 / (end * 1e-12)
    assert 0.85 * PEAK_BYTES_PER_S <= bw <= PEAK_BYTES_PER_S
    c = d.counters()
    hit_ratio = c["row_hits"] / c["reads"]
    # one miss per row, plus a few rows reopened after refreshes
    assert 1 - 1 / LINES_PER_ROW - 0.01 <= hit_ratio <= 1 - 1 / LINES_PER_ROW + 1e-12
    assert c["bytes_read"] == n * 64 and c["writes"] == 0


def test_random_lines_are_mostly_misses_and_much_slower():
    n = 1 << 16
    rng = np.random.default_rng(7)
    d_rand, d_seq = make(), make()
    t_rand = d_rand.service(rng.integers(0, (1 << 30) // 64, n), False, 0)
    t_seq = d_seq.service(np.arange(n), False, 0)
    c = d_rand.counters()
    assert (c["row_misses"] + c["row_conflicts"]) / n > 0.97
    assert t_rand > 2.5 * t_seq


def test_bank_parallelism():
    n = 4096
    rng = np.random.default_rng(3)
    rows = rng.integers(0, 16384, n)
    one_bank = make().service(line(rows, 0), False, 0)
    eight_banks = make().service(line(rows, rng.integers(0, 8, n)), False, 0)
    assert one_bank > 2.0 * eight_banks
    # one bank: every access costs at least tRC
    assert one_bank >= (n - 1) * TIMING.t_rc * TCK


def test_adaptive_open_page_closes_a_row_no_queued_request_wants():
    """DRAMSim2's open page: a bank precharges once nothing queued wants its row, at its earliest
    legal time; a request queued before then still hits."""
    d = make(page_policy="open_adaptive", command_log_capacity=100)
    t0 = d.service(np.array([line(5, 3)]), False, 0)  # ACT 0, RD at tRCD: earliest PRE at tRAS = 28 tCK
    assert t0 == (11 + 11 + 4) * TCK
    hit = 20 * TCK  # queued before the earliest PRE: the row is still open
    assert d.service(np.array([line(5, 3, 1)]), False, hit) == hit + (11 + 4) * TCK
    late = 1_000_000  # nothing wanted the row after its last read: closed, so tRCD again (no tRP)
    assert d.service(np.array([line(5, 3, 2)]), False, late) == late + (11 + 11 + 4) * TCK
    c = d.counters()
    assert (c["row_hits"], c["row_misses"], c["row_conflicts"], c["precharges"]) == (1, 2, 0, 1)
    log = d.command_log()
    pres = log[log[:, 1] == k.CMD_PRE]
    assert pres[:, 0].tolist() == [28 * TCK]  # tRAS after the ACT (the hit's tRTP ends at 26 tCK)
    # open time: [ACT, PRE) twice; the second row too closes tRAS after its ACT, nothing queued wanting it
    end = 2_000_000
    assert d.background_times_ps(end)["open"] == 28 * TCK + 28 * TCK
    # the plain open page keeps the row: both later requests hit
    o = make()
    o.service(np.array([line(5, 3)]), False, 0)
    o.service(np.array([line(5, 3, 1)]), False, hit)
    assert o.service(np.array([line(5, 3, 2)]), False, late) == late + (11 + 4) * TCK
    assert o.counters()["row_hits"] == 2


def test_closed_page_policy_never_hits():
    n = 4096
    d = make(page_policy="closed")
    end = d.service(np.arange(n), False, 0)
    c = d.counters()
    assert c["row_hits"] == 0 and c["activates"] == n and c["precharges"] == n
    assert end > make().service(np.arange(n), False, 0)


def test_two_channels_double_the_stream_bandwidth():
    g = dataclasses.replace(GEOMETRY, channels=2, mapping="row:rank:bank:column:channel")
    n = 1 << 16
    end2 = make(g).service(np.arange(n), False, 0)
    end1 = make().service(np.arange(n), False, 0)
    assert 1.8 < end1 / end2 <= 2.05
    assert n * 64 / (end2 * 1e-12) <= 2 * PEAK_BYTES_PER_S


def test_three_channels_interleave_lines_modulo_three():
    # a non-power-of-two channel count: line i goes to channel i % 3 (mapping ...:column:channel)
    g = dataclasses.replace(GEOMETRY, channels=3, mapping="row:rank:bank:column:channel")
    assert g.capacity_lines == 3 * GEOMETRY.capacity_lines
    d = make(g)
    d.service(np.array([0, 3, 6]), False, 0)  # three lines of channel 0, one row: one activate
    assert (d.counters()["activates"], d.counters()["row_hits"]) == (1, 2)
    n = 3 << 15
    end3 = make(g).service(np.arange(n), False, 0)
    end1 = make().service(np.arange(n), False, 0)
    assert 2.7 < end1 / end3 <= 3.05
    assert n * 64 / (end3 * 1e-12) <= 3 * PEAK_BYTES_PER_S
    d = make(g)  # the last line of the memory is addressable
    assert d.service(np.array([g.capacity_lines - 1]), False, 0) > 0


# -- ordering, bounds, determinism -------------------------------------------------------------
def random_chunks(seed, n_chunks=60, ranks=2):
    rng = np.random.default_rng(seed)
    arrival = 0
    for _ in range(n_chunks):
        arrival += int(rng.integers(0, 3_000_000))
        size = int(rng.integers(1, 400))
        if rng.random() < 0.5:
            lines = rng.integers(0, ranks * (1 << 25), size)
        else:
            lines = int(rng.integers(0, ranks * (1 << 25) - 1000)) + np.arange(size)
        yield arrival, lines, rng.random(size) < 0.3


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_no_early_completion_and_order_across_calls(seed):
    g = dataclasses.replace(GEOMETRY, ranks_per_channel=2)
    d = make(g)
    prev_max = -1
    min_read = (TIMING.cl + 4) * TCK
    min_write = (TIMING.cwl + 4) * TCK
    for arrival, lines, wr in random_chunks(seed):
        out = d.service_lines(lines, wr, arrival)
        assert np.all(out >= arrival + np.where(wr, min_write, min_read))
        assert out.min() > prev_max  # one channel: bursts leave in arrival order
        assert np.all(np.diff(out) > 0)
        prev_max = out.max()


def test_determinism():
    g = dataclasses.replace(GEOMETRY, ranks_per_channel=2)
    a, b = make(g), make(g)
    outs = [[], []]
    for sys_, out in ((a, outs[0]), (b, outs[1])):
        for arrival, lines, wr in random_chunks(11):
            out.append(sys_.service_lines(lines, wr, arrival))
    assert a.counters() == b.counters()
    assert all(np.array_equal(x, y) for x, y in zip(*outs))
    end = int(max(o.max() for o in outs[0]))
    assert a.energy_j(end) == b.energy_j(end)


def test_input_validation():
    d = make()
    d.service(np.array([1]), False, 5000)
    with pytest.raises(ValueError, match="arrival_ps"):
        d.service(np.array([1]), False, 4000)
    with pytest.raises(ValueError, match=rf"lines span \[3, {GEOMETRY.capacity_lines}\]"):
        d.service(np.array([3, GEOMETRY.capacity_lines, 5]), False, 6000)
    with pytest.raises(ValueError, match=r"lines span \[-1, 7\]"):
        d.service(np.array([7, -1], dtype=np.int64), False, 6000)
    with pytest.raises(ValueError, match="is_write"):
        d.service(np.array([1, 2]), np.array([True]), 6000)
    with pytest.raises(ValueError, match="lines has dtype float64"):  # not rounded down to a line
        d.service(np.array([1.9, 2.7]), False, 6000)
    with pytest.raises(ValueError, match="is_write has dtype float64"):
        d.service(np.array([1, 2]), np.array([0.4, 1.6]), 6000)
    with pytest.raises(ValueError, match="end_ps"):
        d.energy_j(4000)
    with pytest.raises(ValueError, match="end_ps"):  # after the arrival, before its data burst ends
        d.energy_j(d.last_completion_ps - 1)
    assert d.energy_j(d.last_completion_ps)["read"] > 0


# -- protocol check of the command log -------------------------------------------------------------
def check_protocol(log, timing, ranks_per_channel):
    """Independent check of DDR3 timing rules on a command log; returns the number of checks."""
    tck = timing.tck_ps
    t = {name: getattr(timing, name) * tck for name in
         ("t_rcd", "t_rp", "t_ras", "t_rc", "t_rrd", "t_ccd", "t_wr", "t_wtr", "t_rtp", "t_rfc", "t_faw", "cl", "cwl")}
    burst = timing.burst_ps
    order = np.lexsort((np.arange(len(log)), log[:, 0]))
    banks = {}
    acts, cols, bursts, refs = {}, {}, {}, {}
    last_wr_end = {}
    checks = 0
    for time, cmd, rank, bank, row in log[order].tolist():
        if cmd == k.CMD_REF:
            for (r, _), s in banks.items():
                if r == rank:
                    assert s["row"] < 0, "REF with an open bank"
                    assert time >= s["pre"] + t["t_rp"]
            refs.setdefault(rank, []).append(time)
            checks += 1
            continue
        s = banks.setdefault((rank, bank), {"row": -1, "act": -10**15, "pre": -10**15, "rd": -10**15,
                                            "wr_end": -10**15})
        if cmd == k.CMD_ACT:
            assert s["row"] < 0, "ACT to an open bank"
            assert time >= s["pre"] + t["t_rp"] and time >= s["act"] + t["t_rc"]
            s["row"], s["act"] = row, time
            acts.setdefault(rank, []).append(time)
        elif cmd == k.CMD_PRE:
            assert s["row"] >= 0, "PRE to a closed bank"
            assert time >= s["act"] + t["t_ras"]
            assert time >= s["rd"] + t["t_rtp"] and time >= s["wr_end"] + t["t_wr"]
            s["row"], s["pre"] = -1, time
        else:
            assert s["row"] == row, "column command to a row that is not open"
            assert time >= s["act"] + t["t_rcd"]
            cols.setdefault(rank, []).append(time)
            if cmd == k.CMD_RD:
                assert time >= last_wr_end.get(rank, -10**15) + t["t_wtr"]
                s["rd"] = time
                start = time + t["cl"]
            else:
                start = time + t["cwl"]
                s["wr_end"] = start + burst
                last_wr_end[rank] = start + burst
            bursts.setdefault(rank // ranks_per_channel, []).append((start, start + burst))
        checks += 1
    for rank, times in acts.items():
        a = np.array(times)
        assert np.all(np.diff(a) >= t["t_rrd"])
        assert np.all(a[4:] - a[:-4] >= t["t_faw"]) if len(a) > 4 else True
    for rank, times in cols.items():
        assert np.all(np.diff(np.array(times)) >= t["t_ccd"])
    for ch, spans in bursts.items():
        spans = sorted(spans)
        assert all(b[0] >= a[1] for a, b in zip(spans, spans[1:])), "overlapping data bursts"
    for rank, starts in refs.items():
        busy = np.concatenate([acts.get(rank, []), cols.get(rank, [])])
        for r0 in starts:
            assert not np.any((busy >= r0) & (busy < r0 + t["t_rfc"])), "command during tRFC"
    return checks


def open_time_from_log(log, n_ranks, end_ps):
    """Union over [0, end_ps) of bank open intervals [ACT, PRE), summed over ranks."""
    total = 0
    for rank in range(n_ranks):
        intervals = []
        opened = {}
        for time, cmd, r, bank, _ in log[np.lexsort((np.arange(len(log)), log[:, 0]))].tolist():
            if r != rank:
                continue
            if cmd == k.CMD_ACT:
                opened[bank] = time
            elif cmd == k.CMD_PRE:
                intervals.append((opened.pop(bank), time))
        intervals += [(s, end_ps) for s in opened.values()]
        covered = 0
        for s, e in sorted((max(s, 0), min(e, end_ps)) for s, e in intervals):
            if e <= covered:
                continue
            total += e - max(s, covered)
            covered = e
    return total


# page policy, scheduler, power-down, per-bank command queue depth: the controller settings the command-log tests
# run under
CONTROLLER_SETTINGS = [
    ("open", "in_order", False, 0), ("closed", "in_order", False, 0), ("open", "frfcfs", False, 0),
    ("closed", "frfcfs", False, 0), ("open", "frfcfs", True, 0), ("closed", "in_order", True, 0),
    ("open_adaptive", "in_order", False, 0), ("open_adaptive", "frfcfs", True, 0), ("open", "ready_first", True, 0),
    ("closed", "ready_first", False, 0), ("open_adaptive", "ready_first", False, 0), ("open", "ready_first", False, 8),
    ("open", "ready_first", True, 2), ("closed", "ready_first", False, 8), ("open_adaptive", "ready_first", True, 4)]


@pytest.mark.parametrize("policy,scheduler,power_down,command_queue_depth", CONTROLLER_SETTINGS)
def test_command_log_observes_and_never_steers(policy, scheduler, power_down, command_queue_depth):
    # the serve loop skips its log calls once the log is full (or off): timing, counters and
    # energy must not depend on the log, and a short log is the start of a long one
    g = dataclasses.replace(GEOMETRY, ranks_per_channel=2)
    runs = []
    for capacity in (0, 50, 200_000):
        d = make(g, page_policy=policy, command_log_capacity=capacity, scheduler=scheduler, power_down=power_down,
                 command_queue_depth=command_queue_depth)
        done = [d.service_lines(lines, wr, arrival) for arrival, lines, wr in random_chunks(7)]
        end = d.last_completion_ps + 10**7
        runs.append((np.concatenate(done), d.counters(), d.energy_j(end), d.command_log()))
    for done, counters, energy, _ in runs[1:]:
        assert np.array_equal(done, runs[0][0])
        assert counters == runs[0][1] and energy == runs[0][2]
    short, full = runs[1][3], runs[2][3]
    assert len(runs[0][3]) == 0 and len(short) == 50 and len(full) > 50
    assert np.array_equal(short, full[:50])


@pytest.mark.parametrize("policy,scheduler,power_down,command_queue_depth", CONTROLLER_SETTINGS)
def test_command_log_obeys_ddr3_timing(policy, scheduler, power_down, command_queue_depth):
    g = dataclasses.replace(GEOMETRY, ranks_per_channel=2)
    d = make(g, page_policy=policy, command_log_capacity=200_000, scheduler=scheduler, power_down=power_down,
             command_queue_depth=command_queue_depth)
    for arrival, lines, wr in random_chunks(5):
        d.service_lines(lines, wr, arrival)
    log = d.command_log()
    assert len(log) < 200_000
    assert check_protocol(log, TIMING, 2) == len(log)
    c = d.counters()
    assert np.sum(log[:, 1] == k.CMD_ACT) == c["activates"]
    assert np.sum(log[:, 1] == k.CMD_REF) == c["refreshes"] > 0


# -- refresh and background energy -------------------------------------------------------------------
def test_idle_refresh_count():
    g = dataclasses.replace(GEOMETRY, ranks_per_channel=2)
    d = make(g)
    one_ms = 1_000_000_000
    times = d.background_times_ps(one_ms)
    assert times["refreshes"] == 2 * (one_ms // TIMING.t_refi_ps) == 256
    assert times["open"] == 0 and times["precharged"] == 2 * one_ms
    e = d.energy_j(one_ms)
    cmd = power.command_energies_j(TIMING, CURRENTS, g)
    assert e["refresh"] == pytest.approx(256 * cmd["refresh"], rel=1e-12)
    # refreshes due strictly before end_ps
    assert make().background_times_ps(2 * TIMING.t_refi_ps)["refreshes"] == 1
    assert make().background_times_ps(2 * TIMING.t_refi_ps + 1)["refreshes"] == 2
    assert d.counters()["refreshes"] == 0  # energy_j does not change the system


def test_staggered_refresh_spreads_the_ranks_over_trefi():
    g = dataclasses.replace(GEOMETRY, ranks_per_channel=4)
    d = make(g, refresh="staggered", command_log_capacity=64)
    refi = TIMING.t_refi_ps
    end_ps = 2 * refi + 1
    times = d.background_times_ps(end_ps)
    d.idle_until(end_ps)
    log = d.command_log()
    refs = log[log[:, 1] == k.CMD_REF]
    # rank r at (r + 1) * tREFI / 4, then tREFI later: idle ranks refresh when due
    expected = sorted(((r + 1) * refi // 4 + n * refi, r) for r in range(4) for n in range(2))
    expected = [(t, r) for t, r in expected if t < end_ps]
    assert sorted(zip(refs[:, 0].tolist(), refs[:, 2].tolist())) == expected
    assert times["refreshes"] == len(expected) == 8
    # the simultaneous default: every rank at tREFI and 2 tREFI
    assert make(g).background_times_ps(end_ps)["refreshes"] == 8
    assert make(g).background_times_ps(0)["refreshes"] == make(g, refresh="staggered").background_times_ps(0)[
        "refreshes"] == 0
    assert make(g, refresh="staggered").background_times_ps(refi // 4)["refreshes"] == 0
    assert make(g, refresh="staggered").background_times_ps(refi // 4 + 1)["refreshes"] == 1


def test_staggered_refresh_keeps_the_protocol_and_its_accounting():
    g = dataclasses.replace(GEOMETRY, ranks_per_channel=2)
    d = make(g, refresh="staggered", command_log_capacity=200_000, scheduler="ready_first")
    last = 0
    for arrival, lines, wr in random_chunks(9):
        last = max(last, d.service(lines, wr, arrival))
    end_ps = last + 50_000_000
    times = d.background_times_ps(end_ps)
    d.idle_until(end_ps)
    log = d.command_log()
    assert check_protocol(log, TIMING, 2) == len(log)
    assert times["open"] == open_time_from_log(log, 2, end_ps)
    assert int(np.sum(log[:, 1] == k.CMD_REF)) == times["refreshes"] > 0


def test_open_time_by_hand():
    d = make()
    d.service(np.array([line(3, 1)]), False, 0)  # ACT at 0, row stays open until the first refresh
    one_ms = 1_000_000_000
    times = d.background_times_ps(one_ms)
    assert times["open"] == TIMING.t_refi_ps
    assert times["precharged"] == one_ms - TIMING.t_refi_ps


@pytest.mark.parametrize("policy", ["open", "open_adaptive", "closed"])
def test_background_and_refresh_energy_exact(policy):
    g = dataclasses.replace(GEOMETRY, ranks_per_channel=2)
    d = make(g, page_policy=policy, command_log_capacity=200_000)
    last = 0
    for arrival, lines, wr in random_chunks(9):
        last = max(last, d.service(lines, wr, arrival))
    end_ps = last + 50_000_000
    times = d.background_times_ps(end_ps)
    energy = d.energy_j(end_ps)
    d.idle_until(end_ps)  # performs the remaining refreshes, so the log holds every PRE
    log = d.command_log()
    t_open = open_time_from_log(log, 2, end_ps)
    assert times["open"] == t_open
    assert times["open"] + times["precharged"] == 2 * end_ps
    n_ref = int(np.sum(log[:, 1] == k.CMD_REF))
    assert n_ref == times["refreshes"] == 2 * ((end_ps - 1) // TIMING.t_refi_ps)
    vdd, n_dev, s = 1.5, 16, 1e-12
    expected = (vdd * (0.067 * t_open + 0.070 * (2 * end_ps - t_open)) * s * n_dev
                + n_ref * vdd * (0.260 - 0.067) * TIMING.t_rfc * TCK * s * n_dev)
    got = energy["background_active"] + energy["background_precharge"] + energy["refresh"]
    assert got == pytest.approx(expected, rel=1e-12)
    c = d.counters()
    assert energy["activate_precharge"] == pytest.approx(c["activates"] * 16 * 1.985625e-9, rel=1e-12)
    assert energy["read"] == pytest.approx(c["reads"] * 16 * 1.3725e-9, rel=1e-12)


# -- power-down (DRAMSim2 USE_LOW_POWER) -------------------------------------------------------------
PD_W = 1.5 * 0.045 * 16  # W per rank powered down: IDD3P = IDD2P = 45 mA, 16 x4 devices, 1.5 V


def test_power_down_by_hand():
    d = make(power_down=True)
    t0 = d.service(np.array([line(5, 3)]), False, 0)
    assert t0 == (11 + 11 + 4) * TCK  # nothing to wake from yet
    a = 1_000_000
    t1 = d.service(np.array([line(5, 3, 7)]), False, a)
    assert t1 == a + (5 + 11 + 4) * TCK  # idle since t0 + tCK (tRDPDEN): tXP before the row hit's CL + burst
    # a request a tCK after the rank powered down (a tCK after the last burst) finds the exit waiting for tCKE
    t2 = d.service(np.array([line(5, 3, 8)]), False, t1 + 2 * TCK)
    assert t2 == t1 + TCK + (4 + 5 + 11 + 4) * TCK
    end = 3_000_000  # before the first refresh (7.8 us)
    times = d.background_times_ps(end)
    # row 5 of bank 3 stays open; each idle spell starts a tCK after the last burst
    assert times["power_down_open"] == (a - t0 - TCK) + TCK + (end - t2 - TCK)
    assert times["power_down_precharged"] == 0
    e = d.energy_j(end)
    assert e["background_power_down"] == pytest.approx(PD_W * times["power_down_open"] * 1e-12, rel=1e-12)
    assert e["background_active"] == pytest.approx(1.5 * 0.067 * 16 * (end - times["power_down_open"]) * 1e-12,
                                                   rel=1e-12)
    assert e["background_precharge"] == 0


def test_power_down_waits_for_write_recovery():
    """A rank powers down no sooner than tWR after a write's data (JEDEC's tWRPDEN = WL + BL/2 + tWR): a row-hit
    write arriving within it issues at once, without tCKE or tXP."""
    d = make(power_down=True)
    t0 = d.service(np.array([line(5, 3)]), True, 0)
    assert t0 == (11 + 8 + 4) * TCK  # tRCD + CWL + burst
    t1 = d.service(np.array([line(5, 3, 1)]), True, t0 + 2 * TCK)  # within tWR (12 tCK): not powered down
    assert t1 == t0 + 2 * TCK + (8 + 4) * TCK
    end = t1 + 1000 * TCK
    assert d.background_times_ps(end)["power_down_open"] == end - (t1 + 12 * TCK)


def test_power_down_wakes_for_refresh_and_then_idles_precharged():
    d = make(power_down=True, command_log_capacity=100)
    t0 = d.service(np.array([line(2, 1)]), True, 0)
    end = TIMING.t_refi_ps + 1_000_000
    times = d.background_times_ps(end)
    d.idle_until(end)
    log = d.command_log()
    pre = log[log[:, 1] == k.CMD_PRE][0, 0]
    ref = log[log[:, 1] == k.CMD_REF][0, 0]
    refi = TIMING.t_refi_ps
    assert pre == refi + 5 * TCK  # woken at tREFI, tXP before closing the open row
    assert ref == pre + 11 * TCK
    t_end = ref + TIMING.t_rfc * TCK
    assert times["power_down_open"] == refi - t0 - TIMING.t_wr * TCK  # powered down tWR after the write's data
    assert times["power_down_precharged"] == end - t_end
    assert times["refreshes"] == 1
    e = make(power_down=True)
    e.service(np.array([line(2, 1)]), True, 0)
    assert e.energy_j(end)["background_power_down"] == pytest.approx(
        PD_W * (times["power_down_open"] + times["power_down_precharged"]) * 1e-12, rel=1e-12)


def test_power_down_off_changes_nothing_and_on_saves_background():
    g = dataclasses.replace(GEOMETRY, ranks_per_channel=2)
    off, on, plain = make(g, power_down=False), make(g, power_down=True), make(g)
    for arrival, lines, wr in random_chunks(11):
        a = off.service_lines(lines, wr, arrival)
        assert np.array_equal(a, plain.service_lines(lines, wr, arrival))
        on.service_lines(lines, wr, arrival)
    end = max(off.last_completion_ps, on.last_completion_ps) + 1_000_000
    t_off, t_on = off.background_times_ps(end), on.background_times_ps(end)
    assert t_off["power_down_open"] == t_off["power_down_precharged"] == 0
    assert 0 < t_on["power_down_open"] <= t_on["open"]
    assert 0 < t_on["power_down_precharged"] <= t_on["precharged"]
    assert off.counters()["reads"] == on.counters()["reads"]
    e_off, e_on = off.energy_j(end), on.energy_j(end)
    assert e_off["background_power_down"] == 0 < e_on["background_power_down"]
    assert sum(e_on.values()) < sum(e_off.values())  # IDD2P/IDD3P (45 mA) < IDD2N/IDD3N (70/67 mA)


def test_power_down_is_validated():
    with pytest.raises(ValueError, match="power_down"):
        make(power_down=1)
    with pytest.raises(ValueError, match="idd3p_ma"):
        DramSystem(TIMING, dataclasses.replace(CURRENTS, idd3p_ma=None), GEOMETRY, power_down=True)


# -- first-ready scheduling ------------------------------------------------------------------------
def _bank_and_row(d, lines):
    """Global bank (rank-major) and row of each line."""
    dec = d._decode
    rank = (lines // dec[1, 0]) % dec[1, 1]
    bank = (lines // dec[2, 0]) % dec[2, 1]
    return rank * dec[2, 1] + bank, (lines // dec[3, 0]) % dec[3, 1]


def test_frfcfs_order_by_hand():
    d = make()
    # window of 8: a write, then reads to bank 0 row 1, bank 0 row 2, bank 0 row 1 again, bank 1 row 5
    lines = np.array([line(7, 3), line(1, 0, 0), line(2, 0, 0), line(1, 0, 1), line(5, 1, 0)], dtype=np.int64)
    wr = np.array([1, 0, 0, 0, 0], dtype=np.uint8)
    closed = np.full(8, -1, dtype=np.int64)
    order = k.frfcfs_order(lines, wr, d._decode, 8, closed)
    # reads first; round 0: bank 0 row 1 (both requests, in arrival order), bank 1 row 5; round 1: bank 0 row 2
    assert order.tolist() == [1, 3, 4, 2, 0]
    assert closed.tolist() == [2, 5, -1, 7, -1, -1, -1, -1]  # the rows the banks are left with
    # bank 0 already holds row 2: that row's request is a hit and goes first
    open_rows = np.full(8, -1, dtype=np.int64)
    open_rows[0] = 2
    assert k.frfcfs_order(lines, wr, d._decode, 8, open_rows).tolist() == [2, 4, 1, 3, 0]
    assert open_rows[0] == 1


def test_frfcfs_order_invariants_on_random_chunks():
    d = make(dataclasses.replace(GEOMETRY, ranks_per_channel=2))
    for _, lines, wr in random_chunks(3):
        wr = np.broadcast_to(np.asarray(wr, dtype=np.uint8), lines.shape)
        window = 16
        order = k.frfcfs_order(lines, wr, d._decode, window, np.full(16, -1, dtype=np.int64))
        assert sorted(order.tolist()) == list(range(len(lines)))  # a permutation
        for s in range(0, len(lines), window):
            part = order[s:s + window]
            assert part.min() >= s and part.max() < s + window  # nothing leaves its window
            w = wr[part]
            assert np.all(np.diff(w.astype(int)) >= 0)  # reads before writes
            bank, row = _bank_and_row(d, lines[part])
            keys = list(zip(w.tolist(), bank.tolist(), row.tolist()))
            seen = set()
            for i, key in enumerate(keys):  # one row's requests back to back, in arrival order
                if i and key != keys[i - 1]:
                    assert key not in seen
                seen.add(key)
            for key in set(keys):
                idx = [int(part[i]) for i in range(len(keys)) if keys[i] == key]
                assert idx == sorted(idx)


def test_frfcfs_serves_conflicting_streams_faster_with_more_hits():
    # write-backs of 16 interleaved row streams that share 8 banks (two rows per bank): in arrival order
    # every access conflicts; a first-ready controller groups each row's lines
    lines = np.array([line(10 + s // 8, s % 8, c) for c in range(16) for s in range(16)], dtype=np.int64)
    results = {}
    for scheduler in ("in_order", "frfcfs"):
        d = make(scheduler=scheduler)
        out = d.service_lines(lines, True, 0)
        results[scheduler] = (int(out.max()), d.counters())
    t_in, c_in = results["in_order"]
    t_fr, c_fr = results["frfcfs"]
    # one conflict per bank per 32-request window is left (two rows per bank in every window)
    assert c_in["row_conflicts"] > 200 and c_fr["row_conflicts"] <= 8 * len(lines) // 32
    assert c_fr["row_hits"] > c_in["row_hits"]
    assert t_fr < 0.75 * t_in  # measured: 1.30 us against 1.94 us
    assert c_fr["writes"] == c_in["writes"] == len(lines)  # same work, another order


def test_frfcfs_returns_times_in_request_order():
    d = make(scheduler="frfcfs")
    d.service(np.array([line(1, 0)]), False, 0)  # bank 0 holds row 1
    a = 1_000_000
    # the conflict arrives first, the hit second: the hit is served first and finishes first
    out = d.service_lines(np.array([line(2, 0), line(1, 0, 5)]), False, a)
    assert out[1] == a + (11 + 4) * TCK  # row hit: CL + burst
    assert out[0] > out[1]


def test_scheduler_is_validated():
    with pytest.raises(ValueError, match="scheduler"):
        make(scheduler="fifo")

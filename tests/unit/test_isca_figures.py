"""The LogCA paper's (002) report rows and claims: break-even interpolation, beta and Table 5 rows, claim verdicts."""

from __future__ import annotations

import math

import pytest

from models.logca import LogCAParams
from simulator.studies.logca.crypto import SimulatedSpeedup
from simulator.studies.logca.isca_figures import (TABLE4, TABLE5_GPU, beta_rows, break_even_bytes, crypto_claims,
                                                  gpu_claims, gpu_table5_rows, host_beta, region_claims)
from simulator.studies.references import ReferenceRow, index_rows, load_reference


def _sweep(speedups: dict[int, float], c: float = 3.0, beta: float = 1.0) -> list[SimulatedSpeedup]:
    """Points with T0 = c g^beta and T1 = T0 / speedup."""
    return [SimulatedSpeedup(g, 1, 1, c * g**beta, c * g**beta / s) for g, s in sorted(speedups.items())]


def test_break_even_interpolates_in_log_log_between_the_crossing_buffers():
    pts = _sweep({256: 0.5, 512: 2.0, 1024: 4.0})
    # log2 speedup goes -1 -> +1 over log2 g 8 -> 9: the crossing is half way, sqrt(256 * 512) B
    assert break_even_bytes(pts) == pytest.approx(math.sqrt(256 * 512))
    assert break_even_bytes(_sweep({16: 1.5, 32: 3.0})) == 16.0  # already past it at the smallest buffer
    assert break_even_bytes(_sweep({16: 0.1, 32: 0.9})) is None  # never reached
    assert break_even_bytes([]) is None


def test_host_beta_recovers_the_exponent_of_t0():
    assert host_beta(_sweep({g: 1.0 for g in (1024, 2048, 4096, 8192)}, beta=1.7)) == pytest.approx(1.7)


def test_beta_rows_key_each_kernel_to_its_table_4_entry():
    ref = index_rows([ReferenceRow(TABLE4, "aes", "beta", "1.01", "", "002 Table 4 (002:L950)")])
    rows = beta_rows(ref, {"aes": ("t2", _sweep({1024: 2.0, 4096: 3.0}, beta=1.05)),
                           "unlisted": ("t2", _sweep({1024: 2.0, 4096: 3.0}))})
    assert len(rows) == 1 and rows[0].key == (TABLE4, "aes", "beta")
    assert rows[0].ours == pytest.approx(1.05) and rows[0].deviation == pytest.approx(1.05 / 1.01 - 1)


def test_table5_rows_take_l_and_c_from_the_fits_and_the_host_runs():
    ref = index_rows(load_reference("logca_gpu"))
    fitted = {name: LogCAParams(latency=0.5, overhead_cycles=1e6, c_cycles_per_byte_beta=0.001, acceleration=30.0,
                                beta=1.7, latency_per_byte=True) for name in ("discrete", "apu")}
    fft = _sweep({1024: 1.0, 4096: 1.0}, c=0.2, beta=1.2)
    rows = {c.key[1:]: c for c in gpu_table5_rows(ref, fitted, {"fft": fft})}
    assert {k for k in index_rows(load_reference("logca_gpu")) if k[0] == TABLE5_GPU} == \
        {(TABLE5_GPU, *k) for k in rows}  # every Table 5 entry gets a row
    assert rows[("discrete", "L")].ours == 0.5 and rows[("apu", "C gemm")].ours == 0.001
    assert rows[("discrete", "C fft")].ours == pytest.approx(0.2)
    assert rows[("discrete", "C radix_sort")].ours is None  # no host runs of it given: not produced


def test_crypto_claims_report_whether_each_holds():
    curves = {"card": _sweep({16: 0.01, 2**20: 0.6}),
              "ultrasparc_t2": _sweep({128: 0.4, 512: 1.5, 2**20: 18.0}),
              "sparc_t3": _sweep({128: 1.2, 512: 1.5}),
              "sparc_t4_engine": _sweep({16: 0.5, 32: 2.0}),
              "sandy_bridge_aesni": _sweep({16: 1.1, 2**20: 25.0})}
    verdicts = {c.claim: c.holds for c in crypto_claims(curves, "card")}
    assert verdicts["the PCIe card never breaks even"] is True
    assert verdicts["the UltraSPARC T2 and SPARC T3 give no gain at 128 B"] is False  # the T3 gains there
    assert verdicts["sparc_t4_engine breaks even at a smaller buffer than the UltraSPARC T2"] is True
    assert verdicts["the UltraSPARC T2 gives higher speedups than Sandy Bridge"] is False
    assert all("002:L" in c.sentence() and c.sentence().endswith(("holds.", "does not hold.", "not run."))
               for c in crypto_claims(curves, "card"))
    ours = {c.claim: c.ours for c in crypto_claims(curves, "card")}
    # a platform past break-even at its smallest buffer has g1 at or below it: said as a bound, not a crossing
    assert ours["sandy_bridge_aesni breaks even at a smaller buffer than the UltraSPARC T2"] == (
        "simulated break-even g1 at most 16 B (speedup 1.1 at the smallest buffer) against 335 B")
    assert "at most" not in ours["sparc_t4_engine breaks even at a smaller buffer than the UltraSPARC T2"]
    # two bounds at the same smallest buffer decide nothing
    both = {**curves, "ultrasparc_t2": _sweep({16: 1.2, 2**20: 18.0})}
    assert {c.claim: c.holds for c in crypto_claims(both, "card")}[
        "sandy_bridge_aesni breaks even at a smaller buffer than the UltraSPARC T2"] is None


def test_gpu_claims_compare_at_the_largest_common_buffer():
    n1 = {"gemm": _sweep({2**20: 5.0, 2**26: 20.0}), "fft": _sweep({2**20: 1.0, 2**26: 16.0}),
          "radix_sort": _sweep({2**20: 3.0, 2**26: 12.0})}
    verdicts = {c.claim: c.holds for c in gpu_claims(n1, acceleration=30.0)}
    assert verdicts["g_A/2 does not exist for FFT"] is False  # 16 > A / 2
    assert verdicts["GEMM, of higher complexity, achieves a higher speedup than sort and FFT"] is True


def test_region_claims_read_the_accelerometer_rule_on_the_grid():
    grid = [2**k for k in range(4, 27)]
    on_chip = LogCAParams(latency=4.0, overhead_cycles=100.0, c_cycles_per_byte_beta=30.0, acceleration=12.0,
                          beta=1.0, latency_per_byte=False)
    pcie = LogCAParams(latency=5.0, overhead_cycles=1e6, c_cycles_per_byte_beta=3.0, acceleration=30.0, beta=1.0,
                       latency_per_byte=True)
    claims = region_claims({"chip": on_chip, "card": pcie}, {}, grid, ("chip",), (("card", "oL", "002:L1201"),),
                           "002:L1190", "the chip")
    assert [c.holds for c in claims] == [True, True]  # card: o limits the small buffers, L (C / L = 0.6) the large
    claims = region_claims({"card": pcie}, {"card": on_chip}, grid, ("card",), (), "002:L1190", "the card")
    # L limits from 64 KiB: 11 of 23 buffers; the printed parameters, given beside, put it nowhere
    assert claims[0].holds is False and "card 48% (printed parameters: 0%)" in claims[0].ours

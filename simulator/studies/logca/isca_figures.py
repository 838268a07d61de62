"""The LogCA paper's (002, ISCA 2017) own figures that the thesis-based report sections do not cover.

002 is the short form of 000's LogCA chapters: most of its numbers are 000's and are compared under 000's
citation (one row a figure; ``results/logca/README.md``, "The LogCA paper (002): inventory", lists each). What
remains are its Table 4 complexities beta (000 Table 4.2 prints the same), its Table 5 GPU latencies and
computational indices (000 Table 4.3 prints the same), and claims of its text that give a threshold rather than
a value. The sections here set ours beside them:

- ``beta_rows``: Table 4's beta of a kernel beside the beta fitted to our simulated host runs (log T0 against
  log g, 002 section 4, ``models.calibrate.fit_complexity``); the host runs C g^beta with that beta, so these
  are inputs the report counts apart.
- ``gpu_table5_rows``: Table 5's GPU L (host cycles per byte; the GPUs' latency is granularity dependent,
  002:L1032-1033) and C (host cycles per byte^beta) beside the L and C of our simulated sweeps.
- ``crypto_claims`` / ``gpu_claims`` / ``region_claims``: thresholds the text states rather than values (no
  break-even, no gain at 128 B, one platform breaking even before another, no g_A/2, latency absent from or
  filling the optimisation regions), each with the simulated value it is about and
  whether it holds; the reports list them as notes, not as counted rows.

Break-even granularities of a simulated sweep (``break_even_bytes``) are interpolated between the two powers
of two where the speedup crosses 1, linearly in log g and log speedup; bytes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from models.accelerometer import bottlenecks
from models.calibrate import fit_complexity
from models.logca import LogCAParams
from simulator.studies.comparisons import Comparison, Section, published
from simulator.studies.logca.crypto import SimulatedSpeedup
from simulator.studies.references import ReferenceRow

TABLE4 = "002 Table 4"  # the reference table of the kernels' beta
TABLE5_GPU = "002 Table 5 GPU"  # the reference table of the GPUs' L and C
CLAIM_SMALL_BYTES = 128  # 002:L1222-1224: the buffer at which the T2 and T3 "do not even provide any gains"


def host_beta(points: Sequence[SimulatedSpeedup]) -> float:
    """beta of C g^beta fitted to the simulated host times T0 of ``points`` (002 section 4's regression)."""
    return fit_complexity([p.g_bytes for p in points], [p.t0_cycles for p in points]).beta


def host_c(points: Sequence[SimulatedSpeedup]) -> float:
    """C (host cycles per byte^beta) fitted with beta to the simulated host times T0 of ``points``."""
    return fit_complexity([p.g_bytes for p in points], [p.t0_cycles for p in points]).c_cycles_per_byte_beta


def break_even_bytes(points: Sequence[SimulatedSpeedup]) -> float | None:
    """Smallest buffer at which the simulated speedup reaches 1 (bytes; interpolated in log-log between the
    two buffers around the crossing), None if it never does; the smallest buffer if the speedup is >= 1 there."""
    pts = sorted(points, key=lambda p: p.g_bytes)
    if not pts:
        return None
    if pts[0].speedup >= 1:
        return float(pts[0].g_bytes)
    for lo, hi in zip(pts, pts[1:]):
        if hi.speedup >= 1 > lo.speedup:
            x0, x1 = math.log(lo.g_bytes), math.log(hi.g_bytes)
            y0, y1 = math.log(lo.speedup), math.log(hi.speedup)
            return math.exp(x0 + (x1 - x0) * (0.0 - y0) / (y1 - y0))
    return None


def beta_rows(ref: Mapping[tuple[str, str, str], ReferenceRow],
              sweeps: Mapping[str, tuple[str, Sequence[SimulatedSpeedup]]]) -> tuple[Comparison, ...]:
    """002 Table 4's beta of each kernel in ``sweeps`` ({kernel: (platform, its simulated points)}) beside the
    beta fitted to those points' host times; kernels without a Table 4 entry are skipped."""
    rows = []
    for kernel, (platform, points) in sweeps.items():
        r = ref.get((TABLE4, kernel, "beta"))
        if r is not None:
            rows.append(published(r, f"{kernel} beta", host_beta(points),
                                  f"fitted to the simulated host times on {platform}, "
                                  f"{points[0].g_bytes} B .. {points[-1].g_bytes} B"))
    return tuple(rows)


def gpu_table5_rows(ref: Mapping[tuple[str, str, str], ReferenceRow], fitted: Mapping[str, LogCAParams],
                    host_sweeps: Mapping[str, Sequence[SimulatedSpeedup]]) -> tuple[Comparison, ...]:
    """002 Table 5's GPU entries beside ours: L of a platform against the L of its simulated link (``fitted``:
    {platform: LogCAParams of the GEMM sweep}), C of GEMM against that fit's C, C of another kernel against C
    fitted to the discrete GPU's simulated host times of it (``host_sweeps``: {kernel: points})."""
    rows = []
    for (table, platform, column), r in ref.items():
        if table != TABLE5_GPU:
            continue
        if column == "L":
            ours, note = fitted[platform].latency, "the simulated link's bytes per input byte over its bandwidth"
        else:
            kernel = column.split(" ", 1)[1]
            if kernel == "gemm":
                ours, note = fitted[platform].c_cycles_per_byte_beta, "LogCA fitted to our simulated GEMM sweep"
            elif platform == "discrete" and kernel in host_sweeps:
                ours, note = host_c(host_sweeps[kernel]), "fitted to the simulated host times of the n = 1 runs"
            else:
                ours, note = None, "the study does not run this kernel on this platform"
        rows.append(published(r, f"{platform} {column}", ours, note))
    return tuple(rows)


@dataclass(frozen=True)
class Claim:
    """A threshold 002's text states, the simulated value it is about, and whether the claim holds (None: not
    run)."""

    claim: str
    source: str
    ours: str
    holds: bool | None

    def sentence(self) -> str:
        """The claim, its citation, ours and the verdict in one line."""
        verdict = "not run" if self.holds is None else ("holds" if self.holds else "does not hold")
        return f"002's claim \"{self.claim}\" ({self.source}): {self.ours}; {verdict}."


def _g(g_bytes: float | None) -> str:
    return "none" if g_bytes is None else f"{g_bytes:.3g} B"


def _bound(points: Sequence[SimulatedSpeedup], g1: float | None) -> bool:
    """Whether :func:`break_even_bytes` ``g1`` of ``points`` is only a bound: the smallest buffer already gains."""
    first = min(points, key=lambda p: p.g_bytes, default=None)
    return g1 is not None and first is not None and first.speedup >= 1


def _g1(points: Sequence[SimulatedSpeedup], g1: float | None) -> str:
    """:func:`break_even_bytes` ``g1`` of ``points`` in words: a bound when the smallest buffer already gains."""
    if _bound(points, g1):
        return f"at most {_g(g1)} (speedup {min(points, key=lambda p: p.g_bytes).speedup:.3g} at the smallest buffer)"
    return _g(g1)


def crypto_claims(curves: Mapping[str, Sequence[SimulatedSpeedup]], card: str) -> tuple[Claim, ...]:
    """002's statements about the AES sweeps (``curves``: {platform: points}; ``card``: the PCIe card's name)."""
    claims = []
    card_pts = curves.get(card, ())
    if card_pts:
        best = max(p.speedup for p in card_pts)
        claims.append(Claim("the PCIe card never breaks even", "002:L1088",
                            f"largest simulated speedup {best:.3g} over {card_pts[0].g_bytes} B .. "
                            f"{card_pts[-1].g_bytes} B", best < 1))
    small = {name: {p.g_bytes: p.speedup for p in curves.get(name, ())}.get(CLAIM_SMALL_BYTES)
             for name in ("ultrasparc_t2", "sparc_t3")}
    claims.append(Claim(f"the UltraSPARC T2 and SPARC T3 give no gain at {CLAIM_SMALL_BYTES} B", "002:L1224",
                        ", ".join(f"{n} speedup {'-' if s is None else f'{s:.3g}'}" for n, s in small.items()),
                        None if None in small.values() else all(s < 1 for s in small.values())))
    g1 = {name: break_even_bytes(pts) for name, pts in curves.items()}
    t2 = g1.get("ultrasparc_t2")
    for name, source in (("sparc_t4_engine", "002:L64"), ("sparc_t4_instructions", "002:L64"),
                         ("sandy_bridge_aesni", "002:L1060")):
        if name in g1 and "ultrasparc_t2" in g1:
            claims.append(Claim(f"{name} breaks even at a smaller buffer than the UltraSPARC T2", source,
                                f"simulated break-even g1 {_g1(curves[name], g1[name])} against "
                                f"{_g1(curves['ultrasparc_t2'], t2)}",
                                None if g1[name] is None or t2 is None or _bound(curves["ultrasparc_t2"], t2)
                                else g1[name] < t2))
    if "sandy_bridge_aesni" in curves and "ultrasparc_t2" in curves:
        sb, t2_best = (max(p.speedup for p in curves[n]) for n in ("sandy_bridge_aesni", "ultrasparc_t2"))
        claims.append(Claim("the UltraSPARC T2 gives higher speedups than Sandy Bridge", "002:L1059",
                            f"largest simulated speedup {t2_best:.3g} against {sb:.3g}", t2_best > sb))
    return tuple(claims)


def gpu_claims(n1_curves: Mapping[str, Sequence[SimulatedSpeedup]], acceleration: float) -> tuple[Claim, ...]:
    """002's statements about the discrete GPU's kernels (``n1_curves``: {kernel: points of one-stage offload};
    ``acceleration``: the device's A)."""
    claims = []
    fft = n1_curves.get("fft", ())
    if fft:
        best = max(p.speedup for p in fft)
        claims.append(Claim("g_A/2 does not exist for FFT", "002:L1146",
                            f"largest simulated one-stage speedup {best:.3g} over {fft[0].g_bytes} B .. "
                            f"{fft[-1].g_bytes} B against A / 2 = {acceleration / 2:g}", best < acceleration / 2))
    top = {k: max(pts, key=lambda p: p.g_bytes) for k, pts in n1_curves.items() if pts}
    others = [k for k in ("fft", "radix_sort") if k in top and "gemm" in top and top[k].g_bytes == top["gemm"].g_bytes]
    if others:
        g = top["gemm"].g_bytes
        claims.append(Claim("GEMM, of higher complexity, achieves a higher speedup than sort and FFT", "002:L1138",
                            f"simulated one-stage speedup at {g} B: gemm {top['gemm'].speedup:.3g}, "
                            + ", ".join(f"{k} {top[k].speedup:.3g}" for k in others),
                            all(top["gemm"].speedup > top[k].speedup for k in others)))
    return tuple(claims)


def _share_limited_by(p: LogCAParams, parameters: str, g_grid: Sequence[int]) -> float:
    """Fraction of the buffers ``g_grid`` at which one of ``parameters`` (letters of L, o, C, A) is a bottleneck
    by the Accelerometer rule (a 10x improvement gains >= 20 %)."""
    sets = bottlenecks(p, list(g_grid))
    return sum(bool(set(parameters) & b) for b in sets) / len(sets)


def region_claims(fitted: Mapping[str, LogCAParams], printed: Mapping[str, LogCAParams], g_grid: Sequence[int],
                  latency_free: Sequence[str], latency_bound: Sequence[tuple[str, str, str]], source_free: str,
                  what_free: str) -> tuple[Claim, ...]:
    """002's statements about which parameters occupy the optimisation regions, read on the parameters fitted to
    our sweeps (``fitted``) over ``g_grid`` (bytes), with the share the source's own printed parameters give
    beside it where ``printed`` has them: latency limits none of the buffers of the platforms ``latency_free``
    (``what_free`` names them, ``source_free`` cites the claim), and for each (platform, letters, source) of
    ``latency_bound`` those parameters limit most of them."""
    def share(name: str, letters: str) -> tuple[float, str]:
        ours = _share_limited_by(fitted[name], letters, g_grid)
        theirs = (f" (printed parameters: {_share_limited_by(printed[name], letters, g_grid):.0%})"
                  if name in printed else "")
        return ours, f"{name} {ours:.0%}{theirs}"

    free = [share(n, "L") for n in latency_free if n in fitted]
    claims = [Claim(f"latency is absent from the optimisation regions of {what_free}", source_free,
                    f"share of the buffers {g_grid[0]} B .. {g_grid[-1]} B where L limits: "
                    + ", ".join(text for _, text in free), all(v == 0 for v, _ in free))] if free else []
    for name, letters, source in latency_bound:
        if name in fitted:
            value, text = share(name, letters)
            what = f"{' and '.join(letters)} occupy" if len(letters) > 1 else f"{letters} occupies"
            claims.append(Claim(f"{what} most of the optimisation regions of {name}", source,
                                f"share of the buffers {g_grid[0]} B .. {g_grid[-1]} B where "
                                f"{' or '.join(letters)} limits: {text}",
                                value > 0.5))
    return tuple(claims)


def crypto_section(ref: Mapping[tuple[str, str, str], ReferenceRow],
                   aes_curves: Mapping[str, Sequence[SimulatedSpeedup]], beta_platform: str,
                   sha_points: Sequence[SimulatedSpeedup]) -> Section:
    """The crypto report's 002 section: Table 4's AES and SHA beta on ``beta_platform``'s host, over the buffers
    of the SHA sweep ``sha_points`` (the LogCA fit's)."""
    calib = [p for p in aes_curves[beta_platform] if p.g_bytes >= sha_points[0].g_bytes]
    betas = beta_rows(ref, {"aes": (beta_platform, calib), "sha": (beta_platform, sha_points)})
    return Section("002 Table 4: the kernels' complexity beta vs beta fitted to our simulated host runs", betas,
                   "002 section 4 fits C and beta to host runs from 16 B to 32 MB; ours: the same regression on "
                   "the simulated host times over the buffers of the LogCA fit. 000 Table 4.2 prints the same "
                   "values.")


def gpu_sections(ref: Mapping[tuple[str, str, str], ReferenceRow], fitted: Mapping[str, LogCAParams],
                 gemm_points: Sequence[SimulatedSpeedup],
                 n1_curves: Mapping[str, Sequence[SimulatedSpeedup]]) -> tuple[Section, ...]:
    """The GPU report's 002 sections: Table 4's beta and Table 5's L and C (discrete GPU runs)."""
    host = {k: pts for k, pts in n1_curves.items() if len(pts) > 1}
    sweeps = {"gemm": ("discrete", gemm_points)} | {k: ("discrete", pts) for k, pts in host.items() if k != "gemm"}
    return (Section("002 Table 4: the GPU kernels' complexity beta vs beta fitted to our simulated host runs",
                    beta_rows(ref, sweeps), "Ours: log T0 against log g over the simulated host times (GEMM: the "
                    "case-study sweep; FFT and radix sort: the one-stage runs of Tables 4.6-4.7). 000 Table 4.2 "
                    "prints the same values."),
            Section("002 Table 5 (GPU rows): L and C vs our simulated sweeps", gpu_table5_rows(ref, fitted, host),
                    "L in host cycles per byte (granularity-dependent latency, 002:L1032-1033); C in host cycles "
                    "per byte^beta. 000 Table 4.3 prints the same values; its o and A are compared above."))

"""Shared test fixtures: paths of the shipped configs."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "configs"
DEFAULT_SYSTEM = CONFIGS / "systems" / "i7_920_ddr3.yaml"


@pytest.fixture
def default_system() -> Path:
    """The default system config (i7-920 + DDR3-1600)."""
    return DEFAULT_SYSTEM


def ddr3_preset(ranks_per_channel: int = 1):
    """(DramTiming, DramCurrents, DramGeometry) of the shipped DDR3-1600 MT41J256M4 preset, one channel."""
    from simulator.config.loader import load_spec
    from simulator.config.schema import SystemSpec
    from simulator.system import dram_parameters

    spec = load_spec(DEFAULT_SYSTEM, SystemSpec, [f"dram.geometry.ranks_per_channel={ranks_per_channel}"]).spec
    return dram_parameters(spec)


def refused(argv: list[str], capsys: pytest.CaptureFixture, out: Path) -> list[str]:
    """Run ``offsim argv``; check that it exits 2 (bad input) and leaves no ``out`` behind; return its
    error lines."""
    from simulator.cli import main

    assert main(argv) == 2
    assert not Path(out).exists()
    return capsys.readouterr().err.strip().splitlines()


def parse_refused(argv: list[str], capsys: pytest.CaptureFixture, main=None) -> str:
    """Run ``offsim argv`` (or the program ``main``); check that its argument parser refuses the command line
    (SystemExit 2, as argparse exits); return what it wrote to stderr."""
    if main is None:
        from simulator.cli import main
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    return capsys.readouterr().err


def offload_trace(target: str, params: dict):
    """A trace in which the host computes, offloads one command ``params`` to ``target`` (row 1) and waits."""
    from workloads.trace import TraceBuilder

    tb = TraceBuilder()
    tb.compute("host", "init", cycles=10)
    tb.offload("host", "k", target, **params)
    tb.wait("host", "k", target)
    return tb.to_table()

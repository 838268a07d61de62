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

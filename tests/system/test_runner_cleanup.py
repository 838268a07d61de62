"""A paper study that stops before its points run (here: an error while planning them) leaves no output
directory behind; one interrupted while running keeps its stored points (tests/unit/test_study_plugin.py)."""

from __future__ import annotations

import pytest

import simulator.studies.fmm.placement as fmm_study


def test_the_fmm_study_that_stops_while_planning_leaves_no_directory(tmp_path, monkeypatch):
    def fail(*args, **kwargs):
        raise RuntimeError("injected")

    monkeypatch.setattr(fmm_study, "grid", fail)  # called while planning the points, before the directory is made
    out = tmp_path / "new" / "out"
    with pytest.raises(RuntimeError, match="injected"):
        fmm_study.main(["--quick", "--workers", "1", "--out", str(out)])
    assert not (tmp_path / "new").exists()

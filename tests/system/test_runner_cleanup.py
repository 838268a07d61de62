"""A paper runner that stops past its load-time checks (an error, an interrupt) removes the output
directory it created, so that a failed run leaves no partial output; a directory that was there
before stays."""

from __future__ import annotations

import pytest

import simulator.studies.fmm.placement as fmm_study
import simulator.studies.logca.gpu as logca_gpu_study
import simulator.studies.logca.crypto as logca_study


def _fail_after_writing(name):
    def fail(spec, out, *args, **kwargs):
        (out / name).write_bytes(b"half")
        raise KeyboardInterrupt  # an interrupt too, not only an error
    return fail


@pytest.mark.parametrize("module, function, argv", [
    (logca_gpu_study, "gpu_study", []),
    (logca_study, "crypto_study", []),
])
def test_a_logca_runner_that_stops_removes_its_new_directory(tmp_path, monkeypatch, module, function, argv):
    monkeypatch.setattr(module, function, _fail_after_writing("gpu_figures.csv"))
    out = tmp_path / "new" / "out"
    with pytest.raises(KeyboardInterrupt):
        module.main([*argv, "--out", str(out)])
    assert not (tmp_path / "new").exists()
    kept = tmp_path / "kept"
    kept.mkdir()
    with pytest.raises(KeyboardInterrupt):
        module.main([*argv, "--out", str(kept)])
    assert kept.is_dir()  # there before: the runner does not remove it


def test_the_fmm_runner_that_stops_removes_its_new_directory(tmp_path, monkeypatch):
    def fail(*args, **kwargs):
        raise RuntimeError("injected")

    monkeypatch.setattr(fmm_study, "grid", fail)  # called once the directory is made
    out = tmp_path / "new" / "out"
    with pytest.raises(RuntimeError, match="injected"):
        fmm_study.main(["--quick", "--workers", "1", "--out", str(out)])
    assert not (tmp_path / "new").exists()

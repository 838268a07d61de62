"""Atomic output files: a failed write leaves nothing behind, and files get the umask's mode."""

from __future__ import annotations

import os
import stat

import pytest

from simulator.config import files


def test_a_failed_write_leaves_neither_the_file_nor_a_temporary(tmp_path):
    target = tmp_path / "sub" / "out.csv"

    def half_then_fail(tmp):
        tmp.write_text("half a fil")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        files.write_atomic(target, half_then_fail)
    assert list((tmp_path / "sub").iterdir()) == []


def test_a_failed_rewrite_keeps_the_old_file_whole(tmp_path):
    target = files.write_atomic(tmp_path / "out.csv", lambda tmp: tmp.write_text("old,complete\n"))

    def fail(tmp):
        tmp.write_text("new,par")
        raise KeyboardInterrupt  # an interrupt too: BaseException, not only Exception

    with pytest.raises(KeyboardInterrupt):
        files.write_atomic(target, fail)
    assert target.read_text() == "old,complete\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.csv"]


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_the_file_gets_the_mode_an_ordinary_open_would(tmp_path, mask, mode):
    old = os.umask(mask)
    try:
        out = files.write_atomic(tmp_path / "f.txt", lambda tmp: tmp.write_text("x"))
        assert files.umask() == mask
    finally:
        os.umask(old)
    assert stat.S_IMODE(out.stat().st_mode) == mode


def test_umask_is_read_without_proc_too(monkeypatch):
    def no_proc(*args, **kwargs):
        raise OSError("no /proc here")

    old = os.umask(0o027)
    try:
        monkeypatch.setattr(files, "open", no_proc, raising=False)
        assert files.umask() == 0o027
        assert os.umask(0o027) == 0o027  # and the mask is left as it was
    finally:
        os.umask(old)

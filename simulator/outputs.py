"""Output directories and files of the study and reproduce commands.

A command's ``--out DIR`` may name a new path, an empty directory or a previous
output of the same command (``check_output_target``, with the command's own
rule for recognising its outputs); anything else is refused before any work.
Files written atomically (``write_atomic``) get the usual permissions under the
process umask, not the private 0600 of a temporary file.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from simulator.config.errors import InputError


def check_output_dir(path: str | Path, option: str = "--out") -> Path:
    """``path`` as a Path, creating nothing; raise InputError naming ``option`` if it is an
    existing file."""
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise InputError(f"{option} {path}: exists and is not a directory; expected a directory path")
    return out


def check_output_target(path: str | Path, foreign: Callable[[Path], str | None], expected: str,
                        option: str = "--out") -> Path:
    """``path`` as a Path if a command may write there, creating nothing: a new path, an empty
    directory, or a directory for which ``foreign(dir)`` is None (a previous output of the same
    command). Otherwise raise InputError naming ``option``, the directory, what ``foreign``
    found (e.g. ``"holds notes.txt"``) and ``expected`` (what a previous output looks like)."""
    out = check_output_dir(path, option)
    if not out.is_dir() or not any(out.iterdir()):
        return out
    problem = foreign(out)
    if problem is not None:
        raise InputError(f"{option} {path}: {problem}; expected a new path, an empty directory or {expected}")
    return out


def listing(names: list[str], most: int = 3) -> str:
    """``a, b, c ...``: the first ``most`` of ``names`` (sorted) for a message."""
    names = sorted(names)
    return ", ".join(names[:most]) + (" ..." if len(names) > most else "")


def first_missing(path: str | Path) -> Path | None:
    """The outermost directory that creating ``path`` (with its parents) would make, or None if
    ``path`` exists: what to remove to undo the creation."""
    out = Path(path).absolute()
    if out.exists():
        return None
    while not out.parent.exists() and out.parent != out:
        out = out.parent
    return out


def remove_created(top: Path | None) -> None:
    """Undo ``make_output_dir``: remove ``top`` (from ``first_missing``, taken before creating) and
    what is under it; nothing if ``top`` is None (the directory existed before)."""
    if top is not None:
        shutil.rmtree(top, ignore_errors=True)


def make_output_dir(path: str | Path, option: str = "--out") -> Path:
    """Create directory ``path`` (and its parents) if missing and return it; raise InputError
    naming ``option`` if it is an existing file or cannot be created."""
    out = check_output_dir(path, option)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"{option} {path}: cannot be created ({exc.strerror}); expected a writable directory "
                         f"path") from None
    return out


def umask() -> int:
    """The process's file-creation mask (read from the kernel where it says; else set and restored)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomic(path: str | Path, write: Callable[[Path], object]) -> Path:
    """Write ``path`` through ``write(temp path)`` on a hidden file beside it, renamed into place once
    complete, so a reader never sees half a file. The file gets the mode an ordinary ``open`` would
    give it under the umask (0644 with umask 022), not mkstemp's private 0600. Returns ``path``."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{out.name}.tmp-", dir=out.parent)
    tmp = Path(name)
    try:
        try:
            os.fchmod(fd, 0o666 & ~umask())
        finally:
            os.close(fd)
        write(tmp)
        os.replace(tmp, out)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return out


def load_with_output_dir(load: Callable[[str], Any], study: str, out: str | Path) -> tuple[Any, Path]:
    """A paper runner's start: its study file read by ``load`` and its ``--out`` directory made
    (``make_output_dir``); InputError for either, with nothing written if the file is bad."""
    spec = load(study)
    return spec, make_output_dir(out)

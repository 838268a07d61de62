"""Output directories and files of the study and reproduce commands.

A command's ``--out DIR`` may name a new path, an empty directory or a previous
output of the same command (``check_output_target``, with the command's own
rule for recognising its outputs); anything else is refused before any work.
Files are written atomically with ``simulator.config.files.write_atomic``.

Every command writes only inside the directory its ``--out`` names, apart from the hidden folders it makes
beside it while it works and removes when done (a run's ``.<name>.tmp-*``, the ``.offsim-probe-*`` of
``check_writable_parent``). The path is
taken lexically: a ``..`` part removes the part before it (``results/new/..`` is
``results``, checked as such), so that no missing directory can hide where a
``..`` leads. The directory itself may not be a symbolic link, for every command
alike: a run directory is replaced by a rename, which would replace the link and
not what it points to, and a link could lead a study's writes outside the path
that was checked. Its parents may be links.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from simulator.errors import InputError


def check_path_name(path: str | Path, option: str = "--out", what: str = "a directory path") -> Path:
    """``path`` as a Path if the system can name it: not empty, each part within the file-name limit
    and the whole within the path limit of the filesystem it would be on (255 and 4096 bytes on
    Linux). Otherwise raise InputError naming ``option``, before anything runs or is created."""
    text = str(path)
    if not text.strip():
        raise InputError(f"{option} {text!r}: empty; expected {what}")
    out = lexical(path)
    ancestor = out.absolute()
    while not _exists(ancestor) and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    name_max, path_max = _name_limits(ancestor)
    for part in out.parts:
        if len(os.fsencode(part)) > name_max:
            raise InputError(f"{option} {text[:60]}...: a part of {len(os.fsencode(part))} bytes ({part[:20]}...); "
                             f"expected at most {name_max} bytes per file name")
    if len(os.fsencode(str(out.absolute()))) >= path_max:
        raise InputError(f"{option} {text[:60]}...: {len(os.fsencode(str(out.absolute())))} bytes as an absolute "
                         f"path; expected fewer than {path_max}")
    return out


def lexical(path: str | Path) -> Path:
    """``path`` with its ``.`` and ``..`` parts resolved lexically (``a/new/..`` is ``a``), as every
    output path is taken (see the module docstring)."""
    return Path(os.path.normpath(path))


def _exists(path: Path) -> bool:
    """Whether ``path`` exists; False too where the system cannot even look it up (a name too long)."""
    try:
        return path.exists()
    except OSError:
        return False


def _name_limits(directory: Path) -> tuple[int, int]:
    """(longest file name, longest path) in bytes on the filesystem of ``directory``."""
    try:
        return os.pathconf(directory, "PC_NAME_MAX"), os.pathconf(directory, "PC_PATH_MAX")
    except (OSError, ValueError, AttributeError):  # no pathconf here: the POSIX minimums are too strict to use
        return 255, 4096


def check_writable_parent(out: Path, option: str, given: str | Path) -> None:
    """InputError naming ``option`` and the path as ``given`` unless something can be made beside ``out``: its
    nearest existing ancestor must be a directory in which we can create (and remove) a directory. Probed,
    since permission bits do not tell for every user and filesystem; nothing is left behind."""
    ancestor = out.parent
    while not _exists(ancestor) and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise InputError(f"{option} {given}: {ancestor} is a file; expected a path whose parents are directories")
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".offsim-probe-", dir=ancestor))
    except OSError as exc:
        raise InputError(f"{option} {given}: cannot write in {ancestor} ({exc.strerror}); expected a writable "
                         "location") from None


def check_output_file(path: str | Path, option: str, suffix: str) -> Path:
    """``path`` as a Path a command may write one file to (its missing directories are made): nameable, ending
    in ``suffix`` (e.g. ".png"; any case), not a directory, under directories that can be written. InputError
    naming ``option`` otherwise, before any work."""
    out = check_path_name(path, option, f"a {suffix} file path")
    if out.is_dir():
        raise InputError(f"{option} {path}: is a directory; expected a {suffix} file path, e.g. "
                         f"{out / ('model' + suffix)}")
    if out.suffix.lower() != suffix:
        raise InputError(f"{option} {path}: expected a file name ending in {suffix}")
    check_writable_parent(out, option, path)
    return out


def check_output_dir(path: str | Path, option: str = "--out") -> Path:
    """``path`` as a Path, creating nothing; raise InputError naming ``option`` if the system cannot
    name it (``check_path_name``) or it is an existing file."""
    out = check_path_name(path, option)
    if out.is_symlink():
        raise InputError(f"{option} {path}: is a symbolic link (to {os.readlink(out)}); expected a new path or a "
                         "directory, not a link to one: give the directory it points to")
    if out.exists() and not out.is_dir():
        raise InputError(f"{option} {path}: exists and is not a directory; expected a directory path")
    return out


def check_output_target(path: str | Path, foreign: Callable[[Path], str | None], expected: str,
                        option: str = "--out") -> Path:
    """``path`` as a Path if a command may write there, creating nothing: a new path whose parent can be
    written (``check_writable_parent``), an empty directory, or a directory for which ``foreign(dir)`` is None (a
    previous output of the same command). Otherwise raise InputError naming ``option``, the directory, what ``foreign``
    found (e.g. ``"holds notes.txt"``) and ``expected`` (what a previous output looks like)."""
    out = check_output_dir(path, option)
    if not out.is_dir():  # a new path: something must be creatable where it goes
        check_writable_parent(out, option, path)
        return out
    if not any(out.iterdir()):
        return out
    problem = foreign(out)
    if problem is not None:
        raise InputError(f"{option} {path}: {problem}; expected a new path, an empty directory or {expected}")
    return out


def check_owned_output(path: str | Path, patterns: tuple[str, ...], command: str,
                       option: str = "--out") -> Path:
    """``check_output_target`` for a command whose outputs are the files named by ``patterns``
    (shell globs such as ``"gpu_*.png"``): a non-empty directory is accepted only if every entry
    matches one of them; InputError naming ``option``, the entries that do not and ``command``
    otherwise. Creates nothing."""
    def foreign(out: Path) -> str | None:
        other = [p.name for p in out.iterdir()
                 if not (p.is_file() and any(fnmatch.fnmatchcase(p.name, pat) for pat in patterns))]
        return f"holds {listing(other)}, which is not {command}'s" if other else None

    return check_output_target(path, foreign, f"a previous output of {command} (files named "
                               f"{', '.join(patterns)})", option)


def listing(names: list[str], most: int = 3) -> str:
    """``a, b, c ...``: the first ``most`` of ``names`` (sorted) for a message."""
    names = sorted(names)
    return ", ".join(names[:most]) + (" ..." if len(names) > most else "")


def first_missing(path: str | Path) -> Path | None:
    """The outermost directory that creating ``path`` (with its parents) would make, or None if
    ``path`` exists: what to remove to undo the creation."""
    out = lexical(Path(path).absolute())
    if _exists(out):
        return None
    while not _exists(out.parent) and out.parent != out:
        out = out.parent
    return out


def remove_created(top: Path | None) -> None:
    """Undo ``make_output_dir``: remove ``top`` (from ``first_missing``, taken before creating) and
    what is under it; nothing if ``top`` is None (the directory existed before)."""
    if top is not None:
        shutil.rmtree(top, ignore_errors=True)


@contextmanager
def removed_if_failed(path: str | Path) -> Iterator[None]:
    """Around a command that may create output directory ``path``: if the block raises (an error, an
    interrupt), remove what creating ``path`` made, so that a failed run leaves no partial output in
    a new directory (an existing one is left as it is)."""
    top = first_missing(path)
    try:
        yield
    except BaseException:
        remove_created(top)
        raise


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


def load_with_output_dir(load: Callable[[str], Any], study: str, out: str | Path, patterns: tuple[str, ...],
                         command: str) -> tuple[Any, Path]:
    """A paper runner's start: its study file read by ``load``, its ``--out`` checked to be new,
    empty or a previous output of ``command`` (``check_owned_output`` with its file ``patterns``)
    and then made (``make_output_dir``); InputError for any, with nothing written if one fails."""
    spec = load(study)
    check_owned_output(out, patterns, command)
    return spec, make_output_dir(out)

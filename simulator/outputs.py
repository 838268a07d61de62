"""Output directories of the study and reproduce commands."""

from __future__ import annotations

from pathlib import Path

from simulator.config.errors import InputError


def check_output_dir(path: str | Path, option: str = "--out") -> Path:
    """``path`` as a Path, creating nothing; raise InputError naming ``option`` if it is an
    existing file."""
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise InputError(f"{option} {path}: exists and is not a directory; expected a directory path")
    return out


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

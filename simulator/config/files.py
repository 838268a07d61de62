"""Files offsim writes: atomically, with the permissions the process umask gives.

A reader never sees half a file (``write_atomic`` renames a complete temporary file into
place), and that file gets the mode an ordinary ``open`` would (0644 under umask 022), not
the private 0600 of ``tempfile.mkstemp``. Here, in ``simulator.config``, so that the
workload generators (which may import only ``simulator.config`` and the modules below it,
``simulator.units``, ``simulator.errors`` and ``simulator.kernel_cache``) write their traces the same
way as the simulator writes its results.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path


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


#: Bytes read at a time by ``file_sha256``: a trace file is hashed without holding it in memory.
DIGEST_BLOCK_BYTES = 1 << 20


def file_sha256(path: str | Path) -> str | None:
    """SHA-256 (64 hex digits) of the bytes of file ``path``, read in blocks of DIGEST_BLOCK_BYTES; None if it
    cannot be read (missing, a directory, no permission), left for its reader to report."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            while block := fh.read(DIGEST_BLOCK_BYTES):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()

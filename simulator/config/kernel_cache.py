"""Where numba keeps offsim's compiled kernels: one folder per version of the kernels' source.

numba checks a cached kernel against its own source file only. A kernel that calls kernels of other
modules (the host chunk kernel calls the cache and DRAM kernels, the command-queue controller calls
the DRAM kernel) is compiled with their code inlined, so after an edit of one of those modules its
cached copy would run the old code without a word. Every kernel module therefore takes ``njit``
from here: before any kernel is declared, numba's cache folder is set to one named by a digest of
the source of all ``KERNEL_MODULES``, so an edit of any of them compiles every kernel afresh.

The folder is ``__pycache__/kernels-<digest>`` in the ``simulator`` package, or, where the user
sets ``NUMBA_CACHE_DIR``, ``offsim-kernels-<digest>`` inside it. numba falls back to its own
locations if the folder cannot be written.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numba
from numba import njit

__all__ = ["KERNEL_MODULES", "kernel_digest", "njit"]

_ROOT = Path(__file__).resolve().parents[2]

#: the modules that declare compiled kernels, relative to the project root (a test checks that
#: every module importing this one is listed)
KERNEL_MODULES = (
    "simulator/accel/gemm_command.py",
    "simulator/memory/array_kernel.py",
    "simulator/memory/cache_kernel.py",
    "simulator/memory/chunk_kernel.py",
    "simulator/memory/dram_command_queues.py",
    "simulator/memory/dram_kernel.py",
    "simulator/memory/dram_ready_first.py",
    "workloads/line_kernel.py",
    "workloads/tree_kernel.py",
)

DIGEST_CHARS = 16


def kernel_digest(root: Path = _ROOT) -> str:
    """The first ``DIGEST_CHARS`` hex digits of a SHA-256 over the kernel modules' source bytes."""
    h = hashlib.sha256()
    for name in KERNEL_MODULES:
        h.update(name.encode())
        h.update((root / name).read_bytes())
    return h.hexdigest()[:DIGEST_CHARS]


def _cache_folder() -> Path:
    user = os.environ.get("NUMBA_CACHE_DIR")
    digest = kernel_digest()
    if user:
        return Path(user) / f"offsim-kernels-{digest}"
    return _ROOT / "simulator" / "__pycache__" / f"kernels-{digest}"


numba.config.CACHE_DIR = str(_cache_folder())

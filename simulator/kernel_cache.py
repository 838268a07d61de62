"""Where numba keeps offsim's compiled kernels: one folder per version of the kernels' source.

numba checks a cached kernel against its own source file only. A kernel that calls kernels of other
modules (the host chunk kernel calls the cache and DRAM kernels, the command-queue controller calls
the DRAM kernel) is compiled with their code inlined, and the DRAM kernels compile in the parameter
layout of ``dram_params.py``; after an edit of one of those modules a cached copy would run the old
code without a word. Every kernel module therefore takes ``njit`` from here. Each kernel it declares
is cached in a folder named by a digest of the source of all ``KERNEL_MODULES`` and
``COMPILED_IN``, so an edit of any of them compiles every kernel afresh; numba's own cache setting
is put back after each declaration, so other numba code in the process keeps its folders.

The folder is ``__pycache__/kernels-<digest>`` in the ``simulator`` package, or, where the user
sets ``NUMBA_CACHE_DIR``, ``offsim-kernels-<digest>`` inside it. Folders of older digests are left
for the user to delete. Where the folder cannot be written, numba falls back to its own locations,
and with them to checking each kernel against its own file only (the DRAM kernels still refuse a
parameter layout other than their own).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, Callable

import numba

__all__ = ["COMPILED_IN", "KERNEL_MODULES", "kernel_digest", "njit"]

_ROOT = Path(__file__).resolve().parents[1]

#: the modules that declare compiled kernels, relative to the project root (a test checks that
#: every module importing this one is listed)
KERNEL_MODULES = (
    "simulator/accel/gemm_command.py",
    "simulator/accel/systolic_kernel.py",
    "simulator/memory/array_kernel.py",
    "simulator/memory/cache_kernel.py",
    "simulator/memory/chunk_kernel.py",
    "simulator/memory/dram_command_queues.py",
    "simulator/memory/dram_kernel.py",
    "simulator/memory/dram_ready_first.py",
    "workloads/line_kernel.py",
    "workloads/tree_kernel.py",
)
#: modules whose constants the kernels compile in
COMPILED_IN = ("simulator/memory/dram_params.py",)

DIGEST_CHARS = 16


def kernel_digest(root: Path = _ROOT) -> str:
    """The first ``DIGEST_CHARS`` hex digits of a SHA-256 over the source bytes of the kernel modules and
    the modules they compile in."""
    h = hashlib.sha256()
    for name in KERNEL_MODULES + COMPILED_IN:
        h.update(name.encode())
        h.update((root / name).read_bytes())
    return h.hexdigest()[:DIGEST_CHARS]


def cache_folder() -> Path:
    """The folder this version of the kernels is cached in."""
    user = os.environ.get("NUMBA_CACHE_DIR")
    if user:
        return Path(user) / f"offsim-kernels-{_DIGEST}"
    return _ROOT / "simulator" / "__pycache__" / f"kernels-{_DIGEST}"


def _declared(declare: Callable[[Any], Any], func: Any) -> Any:
    """``declare(func)`` with numba's cache folder set to ``cache_folder()`` (numba picks a kernel's cache
    location as it is declared), then put back."""
    before = numba.config.CACHE_DIR
    numba.config.CACHE_DIR = str(cache_folder())
    try:
        return declare(func)
    finally:
        numba.config.CACHE_DIR = before


def njit(*args: Any, **kwargs: Any) -> Any:
    """``numba.njit``, whose kernels are cached in ``cache_folder()``: ``@njit``, ``@njit(...)`` or
    ``njit(func, ...)``."""
    if args and callable(args[0]):
        return _declared(lambda f: numba.njit(f, *args[1:], **kwargs), args[0])
    declare = numba.njit(*args, **kwargs)
    return lambda func: _declared(declare, func)


_DIGEST = kernel_digest()

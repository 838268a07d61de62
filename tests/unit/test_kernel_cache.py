"""The compiled kernels' cache folder follows their source: every kernel module is listed, takes its
``njit`` from ``simulator.kernel_cache``, and an edit of any of them names another folder."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from simulator.kernel_cache import COMPILED_IN, KERNEL_MODULES, cache_folder, kernel_digest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("simulator", "workloads", "models")


def _modules_matching(pattern: str) -> set[str]:
    found = set()
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if re.search(pattern, path.read_text(), re.MULTILINE):
                found.add(path.relative_to(ROOT).as_posix())
    return found


def test_every_kernel_module_is_listed_and_none_takes_njit_from_numba_itself():
    assert _modules_matching(r"^from simulator\.kernel_cache import njit$") == set(KERNEL_MODULES)
    direct = r"^\s*(from numba import (.*\W)?njit\b|import numba\b)|\bnumba\.njit\b"
    assert _modules_matching(direct) == {"simulator/kernel_cache.py"}


def test_an_edit_of_any_kernel_module_or_what_they_compile_in_changes_the_digest(tmp_path):
    sources = KERNEL_MODULES + COMPILED_IN
    for name in sources:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / name, tmp_path / name)
    base = kernel_digest(tmp_path)
    assert base == kernel_digest(ROOT)
    seen = {base}
    for name in sources:
        original = (tmp_path / name).read_bytes()
        (tmp_path / name).write_bytes(original + b"\n")
        seen.add(kernel_digest(tmp_path))
        (tmp_path / name).write_bytes(original)
    assert len(seen) == len(sources) + 1
    assert kernel_digest(tmp_path) == base


def test_kernels_are_cached_in_the_folder_of_their_digest_and_numba_keeps_its_setting(monkeypatch):
    import numba

    from simulator.memory import chunk_kernel, dram_kernel

    for kernel in (dram_kernel.serve, chunk_kernel.access_and_serve):
        assert cache_folder().name in Path(kernel._cache.cache_path).parts
    assert numba.config.CACHE_DIR != str(cache_folder())  # put back after each declaration
    monkeypatch.setenv("NUMBA_CACHE_DIR", "/elsewhere")
    assert cache_folder() == Path("/elsewhere") / f"offsim-kernels-{kernel_digest()}"
    monkeypatch.delenv("NUMBA_CACHE_DIR")
    assert cache_folder().name == f"kernels-{kernel_digest()}"

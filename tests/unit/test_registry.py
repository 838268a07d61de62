"""The generator registry: the shipped names are their modules' generators, and a lookup imports only the
module of the generator looked up; a refused plugin is loaded once."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from workloads.registry import GENERATORS, SHIPPED


def test_the_shipped_names_are_the_generators_of_their_modules() -> None:
    by_module: dict[str, set[str]] = {}
    for name, module in SHIPPED.items():
        by_module.setdefault(module, set()).add(name)
        assert GENERATORS[name] is importlib.import_module(module).GENERATORS[name]
    for module, names in by_module.items():
        assert set(importlib.import_module(module).GENERATORS) == names, module
    assert list(GENERATORS)[:len(SHIPPED)] == list(SHIPPED)
    assert "fmm_ulist" in GENERATORS and "no_such_generator" not in GENERATORS and ["stream"] not in GENERATORS


def test_a_lookup_imports_only_its_generators_module() -> None:
    probe = ("import json, sys; from workloads.registry import GENERATORS; GENERATORS['stream']; "
             "print(json.dumps(sorted(m for m in sys.modules if m.startswith('workloads.'))))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    loaded = set(json.loads(out))
    assert "workloads.micro" in loaded
    assert not loaded & {"workloads.aes", "workloads.fmm_ulist", "workloads.stencil", "workloads.gemm_tiled"}


def test_a_refused_plugin_is_loaded_once_and_refused_at_every_lookup(monkeypatch) -> None:
    from simulator.config.plugins import PluginError
    from workloads import registry

    calls = []

    def broken(group):
        calls.append(group)
        return {"stream": lambda: None}  # a shipped name: refused

    monkeypatch.setattr(registry, "load_entry_points", broken)
    registry._load_installed.cache_clear()
    try:
        for _ in range(2):
            with pytest.raises(PluginError, match="generator 'stream' exists already"):
                "not_a_generator" in registry.GENERATORS
        assert calls == [registry.ENTRY_POINT_GROUP]
        assert "stream" in registry.GENERATORS  # a shipped name needs no plugin
    finally:
        registry._load_installed.cache_clear()

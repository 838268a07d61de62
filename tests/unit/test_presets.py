"""Presets outside the package: by a path relative to the file that names them, and on $OFFSIM_PRESET_PATH."""

from __future__ import annotations

from pathlib import Path

import pytest

from simulator.errors import ConfigError
from simulator.config.loader import PRESETS_DIR, load_spec
from simulator.config.schema import SystemSpec

SHIPPED_DRAM = PRESETS_DIR / "dram" / "ddr3_1600_mt41j256m4.yaml"


def _system(directory: Path, dram_preset: str) -> Path:
    path = directory / "system.yaml"
    path.write_text("name: mine\nhost: {preset: cpu/i7_920}\ncaches: {preset: caches/i7_920}\n"
                    f"dram: {{preset: {dram_preset}}}\n")
    return path


def _my_dram(directory: Path) -> Path:
    """The shipped DDR3 preset with two channels: a part of the user's own."""
    directory.mkdir(parents=True, exist_ok=True)
    text = SHIPPED_DRAM.read_text()
    assert "channels: 1" in text
    path = directory / "my_ddr3.yaml"
    path.write_text(text.replace("channels: 1", "channels: 2"))
    return path


def test_a_preset_named_by_a_path_relative_to_the_system_file(tmp_path):
    _my_dram(tmp_path / "parts")
    loaded = load_spec(_system(tmp_path, "parts/my_ddr3.yaml"), SystemSpec)
    assert loaded.spec.dram.geometry.channels == 2


def test_a_preset_on_the_search_path(tmp_path, monkeypatch):
    _my_dram(tmp_path / "presets" / "dram")
    monkeypatch.setenv("OFFSIM_PRESET_PATH", str(tmp_path / "presets"))
    loaded = load_spec(_system(tmp_path, "dram/my_ddr3"), SystemSpec)
    assert loaded.spec.dram.geometry.channels == 2
    shipped = load_spec(_system(tmp_path, "dram/ddr3_1600_mt41j256m4"), SystemSpec)  # still found
    assert shipped.spec.dram.geometry.channels == 1


def test_a_missing_preset_names_the_file_the_key_and_where_it_looked(tmp_path, monkeypatch):
    system = _system(tmp_path, "parts/nothing.yaml")
    with pytest.raises(ConfigError) as exc:
        load_spec(system, SystemSpec)
    assert f"{system}: dram.preset: no file" in str(exc.value) and "relative to the file" in str(exc.value)
    monkeypatch.setenv("OFFSIM_PRESET_PATH", str(tmp_path))
    with pytest.raises(ConfigError) as exc:
        load_spec(_system(tmp_path, "dram/nothing"), SystemSpec)
    assert "no preset 'dram/nothing' (searched $OFFSIM_PRESET_PATH" in str(exc.value)


def test_offsim_validates_and_runs_a_system_with_the_users_own_dram_preset(tmp_path, capsys):
    from simulator.cli import main

    _my_dram(tmp_path / "parts")
    system = _system(tmp_path, "parts/my_ddr3.yaml")
    workload = Path(__file__).resolve().parents[2] / "configs" / "workloads" / "stream_read.yaml"
    assert main(["validate", str(system)]) == 0
    assert main(["run", str(system), str(workload), "--param", "array_bytes=64 KiB", "--out", str(tmp_path / "run")]) == 0
    assert "channels: 2" in (tmp_path / "run" / "config.resolved.yaml").read_text()


def test_a_preset_cycle_names_the_first_file_its_key_and_the_chain(tmp_path):
    path = tmp_path / "system.yaml"
    path.write_text("name: loop\nhost: {preset: system.yaml}\ncaches: {preset: caches/i7_920}\n"
                    "dram: {preset: dram/ddr3_1600_mt41j256m4}\n")
    with pytest.raises(ConfigError) as err:
        load_spec(path, SystemSpec)
    (message,) = err.value.messages
    assert message.startswith(f"{path}: host.preset: the chain ") and message.endswith(
        "names itself again; expected presets that end without a cycle")


def test_presets_nested_deeper_than_the_limit_are_refused(tmp_path):
    from simulator.config.loader import MAX_PRESET_DEPTH

    for i in range(MAX_PRESET_DEPTH + 1):  # p0 names p1, ..., the last names the shipped core
        inner = f"p{i + 1}.yaml" if i < MAX_PRESET_DEPTH else "cpu/i7_920"
        (tmp_path / f"p{i}.yaml").write_text(f"preset: {inner}\n")
    path = _system(tmp_path, "dram/ddr3_1600_mt41j256m4")
    path.write_text(path.read_text().replace("cpu/i7_920", "p0.yaml"))
    with pytest.raises(ConfigError, match=rf"host.preset: the chain .* nests more than {MAX_PRESET_DEPTH} presets deep"):
        load_spec(path, SystemSpec)

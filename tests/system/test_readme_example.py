"""The simulator guide's Python example runs as written (from the project root, as its paths assume)."""

from __future__ import annotations

import re

from tests.conftest import ROOT


def test_the_guide_python_example_runs(monkeypatch):
    text = (ROOT / "simulator" / "README.md").read_text()
    blocks = re.findall(r"From Python:\n\n```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) == 1, "expected one Python example after 'From Python:'"
    monkeypatch.chdir(ROOT)
    names: dict = {}
    exec(compile(blocks[0], "simulator/README.md", "exec"), names)  # noqa: S102 -- our own documentation
    rows = {row.quantity: row for row in names["checks"]}
    assert rows["time"].model > 0 and rows["energy"].model > 0
    assert names["png"].startswith(b"\x89PNG")
    assert names["r"].summary()["simulated_time_s"] == rows["time"].simulated


def test_the_workloads_guide_trace_example_runs(monkeypatch, tmp_path):
    """The trace written by workloads/README.md's example validates and replays as a trace workload."""
    import simulator

    text = (ROOT / "workloads" / "README.md").read_text()
    blocks = re.findall(r"## Bringing your own trace\n.*?```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) == 1, "expected one Python example under 'Bringing your own trace'"
    monkeypatch.chdir(tmp_path)
    exec(compile(blocks[0], "workloads/README.md", "exec"), {})  # noqa: S102 -- our own documentation
    (tmp_path / "mine.yaml").write_text("name: mine\ntrace: my_trace.parquet\n")
    summary = simulator.run(ROOT / "configs" / "systems" / "i7_920_ddr3.yaml", tmp_path / "mine.yaml").summary()
    assert summary["host"]["flops"] == (1 << 20) + 10**6
    assert summary["dram"]["bytes_read"] >= 8 << 20

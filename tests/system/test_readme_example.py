"""The README's Python example runs as written (from the project root, as the README's paths assume)."""

from __future__ import annotations

import re

from tests.conftest import ROOT


def test_the_readme_python_example_runs(monkeypatch):
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"From Python:\n\n```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) == 1, "expected one Python example after 'From Python:'"
    monkeypatch.chdir(ROOT)
    names: dict = {}
    exec(compile(blocks[0], "README.md", "exec"), names)  # noqa: S102 -- our own documentation
    rows = {row.quantity: row for row in names["checks"]}
    assert rows["time"].model > 0 and rows["energy"].model > 0
    assert names["png"].startswith(b"\x89PNG")
    assert names["r"].summary()["simulated_time_s"] == rows["time"].simulated

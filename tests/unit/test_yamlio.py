"""Strict YAML reading: every malformed or unreadable file is one ConfigError naming the file."""

from __future__ import annotations

import pytest

from simulator.config.errors import ConfigError
from simulator.config.yamlio import load_yaml


@pytest.mark.parametrize("text, says", [
    ("? [a, b]\n: 1\n", "line 1: found unhashable key"),  # a list as a key
    ("a:\n  ? {x: 1}\n  : 2\n", "line 2: found unhashable key"),  # a mapping as a key, one level down
    ("name: " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
    ("a: 1\na: 2\n", "a: duplicate key at line 2 (first at line 1)"),
])
def test_malformed_yaml_is_one_message_naming_file_and_line(tmp_path, text, says):
    path = tmp_path / "f.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_yaml(path)
    (message,) = err.value.messages
    assert message.startswith(f"{path}: ") and says in message and "expected" in message


def test_paths_the_system_refuses_are_one_message_naming_the_path(tmp_path):
    (tmp_path / "afile").write_text("a: 1\n")
    (tmp_path / "loop1").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop1")
    for path, reason in ((tmp_path / "afile" / "x.yaml", "Not a directory"),
                         (tmp_path / ("b" * 300 + ".yaml"), "File name too long"),
                         (tmp_path / "loop1", "symbolic links"),
                         (tmp_path, "Is a directory")):
        with pytest.raises(ConfigError) as err:
            load_yaml(path)
        (message,) = err.value.messages
        assert message.startswith(f"{path}: cannot read (") and reason in message and "expected" in message

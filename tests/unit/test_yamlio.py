"""Strict YAML reading: every malformed or unreadable file is one ConfigError naming the file."""

from __future__ import annotations

import pytest

from simulator.errors import ConfigError
from simulator.config.yamlio import load_yaml


@pytest.mark.parametrize("text, says", [
    ("? [a, b]\n: 1\n", "line 1: found unhashable key"),  # a list as a key
    ("a:\n  ? {x: 1}\n  : 2\n", "line 2: found unhashable key"),  # a mapping as a key, one level down
    ("name: " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
    ("a: 1\na: 2\n", "a: duplicate key at line 2, column 1 (first at line 1, column 1)"),
    # two keys of one flow mapping: told apart by their columns
    ("x:\n  lap: {preset: a, preset: b}\n", "preset: duplicate key at line 2, column 20 (first at line 2, column 9)"),
    # one key to Python however written: named as each is written
    ("1: a\ntrue: b\n", "true: duplicate key at line 2, column 1 (first at line 1, column 1, written 1)"),
    ("&k x: 1\n*k : 2\n", "x: duplicate key at line 1, column 1 (first at line 1, column 1)"),  # an alias of a key
    ("a: 1\nb:\n  c: " + "9" * 4301 + "\n", "line 3: an integer of 4301 digits"),  # beyond Python's int parsing
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


def test_aliases_within_the_budget_load_as_written(tmp_path):
    path = tmp_path / "f.yaml"
    path.write_text("base: &b {x: 1, y: [1, 2, 3]}\nfirst: *b\nsecond: *b\n")
    assert load_yaml(path) == {"base": {"x": 1, "y": [1, 2, 3]}, "first": {"x": 1, "y": [1, 2, 3]},
                               "second": {"x": 1, "y": [1, 2, 3]}}


def test_alias_expansion_budget_counts_the_added_nodes(tmp_path, monkeypatch):
    import simulator.config.yamlio as yamlio

    path = tmp_path / "f.yaml"
    path.write_text("a: &a [1, 2, 3]\nb: [*a, *a]\n")  # each alias adds the list and its 3 items
    monkeypatch.setattr(yamlio, "MAX_ALIAS_EXPANSION_NODES", 8)
    assert load_yaml(path) == {"a": [1, 2, 3], "b": [[1, 2, 3], [1, 2, 3]]}
    monkeypatch.setattr(yamlio, "MAX_ALIAS_EXPANSION_NODES", 7)
    with pytest.raises(ConfigError, match=r"aliases expand 8 nodes to 16; expected at most 7 nodes added"):
        load_yaml(path)


@pytest.mark.parametrize("text", ["a: &a [*a]\n", "a: &a {b: [1, {c: *a}]}\n"])
def test_recursive_alias_is_one_message(tmp_path, text):
    path = tmp_path / "f.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_yaml(path)
    (message,) = err.value.messages
    assert message.startswith(f"{path}: invalid YAML: recursive alias: the anchor at line 1") and "expected" in message


def test_a_config_must_be_a_regular_file_within_the_size_cap(tmp_path):
    import os

    from simulator.config.yamlio import MAX_CONFIG_BYTES

    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    big = tmp_path / "big.yaml"
    big.write_text("a: " + "x" * MAX_CONFIG_BYTES + "\n")
    for path, says in (("/dev/zero", "not a regular file"), (fifo, "not a regular file"),
                       (big, f"{MAX_CONFIG_BYTES + 4:,} B or more; expected a config file of at most")):
        with pytest.raises(ConfigError) as err:
            load_yaml(path)
        (message,) = err.value.messages
        assert message.startswith(f"{path}: ") and says in message


def test_a_document_read_again_is_data_of_its_own_and_follows_the_file(tmp_path):
    path = tmp_path / "f.yaml"
    path.write_text("a: {b: [1, 2]}\n")
    first = load_yaml(path)
    first["a"]["b"].append(3)  # a caller changing its data (overrides do)
    assert load_yaml(path) == {"a": {"b": [1, 2]}}
    path.write_text("a: {b: [4]}\n")
    assert load_yaml(path) == {"a": {"b": [4]}}


@pytest.mark.parametrize("written, read", [
    # YAML 1.1's surprises stay text, as YAML 1.2 reads them: a field then refuses the text as written
    ("yes", "yes"), ("no", "no"), ("on", "on"), ("Off", "Off"), ("y", "y"), ("N", "N"),
    ("1:30", "1:30"), ("1:00:00", "1:00:00"), ("1:30.5", "1:30.5"),  # base 60 (90, 3600, 90.5 in YAML 1.1)
    ("010", "010"), ("-07", "-07"),  # a leading zero (octal 8 and -7 in YAML 1.1)
    ("2024-01-01", "2024-01-01"), ("2024-01-01 10:00:00", "2024-01-01 10:00:00"),  # dates
    # what they mean in both versions stays
    ("true", True), ("False", False), ("TRUE", True), ("10", 10), ("-3", -3), ("0", 0), ("0x10", 16),
    ("0b101", 5), ("1_000", 1000), ("2.5", 2.5), ("2.4e+5", 2.4e5), (".5", 0.5), (".inf", float("inf")),
    ("-.inf", float("-inf")), ("~", None), ("null", None), ("", None), ("2.4e5", "2.4e5"),  # (a unit parser's)
])
def test_plain_scalars_read_as_yaml_1_2_reads_them(tmp_path, written, read):
    path = tmp_path / "f.yaml"
    path.write_text(f"a: {written}\n")
    value = load_yaml(path)["a"]
    assert value == read and type(value) is type(read)


def test_an_override_written_as_yaml_1_1_reads_it_is_refused_as_written():
    from simulator.config.loader import load_spec
    from simulator.config.schema import SystemSpec
    from tests.conftest import DEFAULT_SYSTEM

    for override, says in (("caches.prefetcher.enabled=on", "expected true or false, got 'on'"),
                           ("host.max_outstanding_misses=1:00", "expected an integer, got '1:00'"),
                           ("caches.levels.L2.ways=010", "expected an integer, got '010'")):
        with pytest.raises(ConfigError) as err:
            load_spec(DEFAULT_SYSTEM, SystemSpec, (override,))
        assert says in str(err.value), err.value

"""Strict YAML reading: duplicate keys are errors, not silent overwrites.

PyYAML's safe loader keeps the last of two equal keys; offsim refuses the file
and names both lines.
"""

from __future__ import annotations

from collections.abc import Hashable
from pathlib import Path
from typing import Any

import yaml

from simulator.config.errors import ConfigError


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that records duplicate mapping keys instead of overwriting."""

    def __init__(self, stream: Any, source: str):
        super().__init__(stream)
        self.source = source
        self.problems: list[str] = []

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            if not isinstance(key, Hashable):  # a list or mapping as a key: super() refuses it with its line
                continue
            if key in seen:
                self.problems.append(
                    f"{self.source}: {key}: duplicate key at line {line} (first at line {seen[key]}); expected each key once"
                )
            else:
                seen[key] = line
        return super().construct_mapping(node, deep=deep)


def load_yaml(path: str | Path) -> Any:
    """Read one YAML file strictly; raise ConfigError naming the file on any problem."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{source}: file not found; expected an existing YAML file") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{source}: cannot read ({exc.__class__.__name__}); expected a readable UTF-8 YAML file") from None
    except OSError as exc:  # a directory, no permission, a path through a file, a name too long, a link loop
        reason = exc.strerror or exc.__class__.__name__
        raise ConfigError(f"{source}: cannot read ({reason}); expected a readable UTF-8 YAML file") from None
    loader = None
    try:
        loader = _StrictLoader(text, source)  # the reader rejects non-printable characters here
        data = loader.get_single_data()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" at line {mark.line + 1}" if mark else ""
        if isinstance(exc, yaml.reader.ReaderError):  # a binary or corrupt file
            problem = f"character #x{exc.character:04x} at offset {exc.position} ({exc.reason})"
        else:
            problem = getattr(exc, "problem", None) or exc
        raise ConfigError(f"{source}: invalid YAML{line}: {problem}; expected a YAML mapping") from None
    except RecursionError:
        raise ConfigError(f"{source}: invalid YAML: nested too deeply to read; expected a config file's few "
                          "levels of nesting") from None
    finally:
        if loader is not None:
            loader.dispose()
    if loader.problems:
        raise ConfigError(loader.problems)
    return data

"""Errors raised for bad input: configs, workloads, traces.

Every message names the file, the key (a dotted path) and what was expected.
The CLI turns any ``InputError`` into exit code 2 with nothing written.
"""

from __future__ import annotations


class InputError(Exception):
    """Bad user input; ``messages`` holds one line per problem found."""

    def __init__(self, messages: list[str] | str):
        self.messages = [messages] if isinstance(messages, str) else list(messages)
        super().__init__("\n".join(self.messages))


class ConfigError(InputError):
    """One or more problems in a config file (all collected before raising)."""


def where(source: str, key: str) -> str:
    """Prefix of an error message: ``file: key``."""
    return f"{source}: {key}" if key else source

"""Errors raised for bad input: configs, workloads, traces.

Every message names the file, the key (a dotted path) and what was expected.
The CLI turns any ``InputError`` into exit code 2 with nothing written.
"""

from __future__ import annotations

import sys

EXIT_BAD_INPUT = 2


class InputError(Exception):
    """Bad user input; ``messages`` holds one line per problem found."""

    def __init__(self, messages: list[str] | str):
        self.messages = [messages] if isinstance(messages, str) else list(messages)
        super().__init__("\n".join(self.messages))

    def report(self, program: str) -> int:
        """Print each message as ``<program>: error: ...`` on stderr; return the bad-input exit code."""
        for message in self.messages:
            print(f"{program}: error: {message}", file=sys.stderr)
        return EXIT_BAD_INPUT


class ConfigError(InputError):
    """One or more problems in a config file (all collected before raising)."""


def where(source: str, key: str) -> str:
    """Prefix of an error message: ``file: key``."""
    return f"{source}: {key}" if key else source

"""Errors raised for bad input: configs, workloads, traces.

Every message names the file, the key (a dotted path) and what was expected.
A check across keys raises ``FieldError``, which carries the key it refuses and
the other keys its rule reads; the spec builder turns it into a ``Problem`` of
the file, so that reports name keys without reading them back out of text.
The CLI turns any ``InputError`` into exit code 2 with nothing written.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Callable

EXIT_BAD_INPUT = 2


def overlaps(a: str, b: str) -> bool:
    """Whether dotted keys ``a`` and ``b`` are one key, or one is a section (or list) holding the other."""
    return a == b or any(longer.startswith(shorter + sep) for longer, shorter in ((a, b), (b, a)) for sep in ".[")


def join_key(section: str, key: str) -> str:
    """The dotted key ``key`` of a section ``section`` ("" for the top level) as the file spells it."""
    return f"{section}.{key}" if section and key else section or key


class FieldError(ValueError):
    """A value that a check across fields refused.

    key: the refused field, dotted, relative to the spec (or model) that checked it; detail: the
    value given and what was expected; related: the other fields the rule reads, relative to the
    same spec. ``owner`` (a model's class name) only prefixes the text.
    """

    def __init__(self, key: str, detail: str, related: tuple[str, ...] = (), owner: str = ""):
        self.key, self.detail, self.related, self.owner = key, detail, tuple(related), owner
        super().__init__(f"{join_key(owner, key)}: {detail}")

    def __reduce__(self) -> tuple:
        # rebuilt from its fields, so that it crosses a process pool intact (its args hold the text alone)
        return type(self), (self.key, self.detail, self.related, self.owner)

    def renamed(self, name: Callable[[str], str]) -> FieldError:
        """The same problem with its keys spelled by ``name``: its detail is kept, its owner (a prefix of the text
        only) dropped, as the keys now say where."""
        return FieldError(name(self.key), self.detail, tuple(name(r) for r in self.related))

    def within(self, section: str) -> FieldError:
        """The same problem as the spec holding this one at ``section`` sees it."""
        return self.renamed(lambda key: join_key(section, key))


@dataclass(frozen=True)
class Problem:
    """One problem in an input file: ``source`` (the file), ``key`` (dotted; "" for the whole file),
    ``detail`` (the value given and what was expected), ``related`` (the other keys its rule reads: a
    cross-key rule such as a cache line of one DRAM burst) and ``option``, the command-line option that
    gave the value over the file ("" if the file did)."""

    source: str
    key: str
    detail: str
    related: tuple[str, ...] = ()
    option: str = ""

    def __str__(self) -> str:
        option = one_line(self.option)  # an option's value as typed: on one line, cut if long
        head = f"{option} (over {self.source})" if option and self.source else option or self.source
        return f"{where(head, self.key)}: {self.detail}"


class InputError(Exception):
    """Bad user input: one line per problem found in ``messages``; ``entries`` holds the same problems
    with their file and key where they have one."""

    def __init__(self, messages: list[str | Problem] | str | Problem):
        #: every problem as found: a ``Problem`` (file, key, detail) or, where none is keyed, its text
        self.entries = [messages] if isinstance(messages, (str, Problem)) else list(messages)
        self.messages = [str(m) for m in self.entries]
        super().__init__("\n".join(self.messages))

    def __reduce__(self) -> tuple:
        # rebuilt from its entries, so that a worker's keyed problems reach the driver as problems
        return type(self), (self.entries,)

    @property
    def problems(self) -> list[Problem]:
        """The keyed problems among ``entries``."""
        return [m for m in self.entries if isinstance(m, Problem)]

    def report(self, program: str) -> int:
        """Print each message as ``<program>: error: ...`` on stderr; return the bad-input exit code."""
        for message in self.messages:
            print(f"{program}: error: {message}", file=sys.stderr)
        return EXIT_BAD_INPUT


class ConfigError(InputError):
    """One or more problems in a config file (all collected before raising)."""


class TableError(ValueError):
    """The problems of a model's table (a LogCA or roofline platform table), each naming the file and the
    entry (``problems``); its text joins them."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("; ".join(self.problems))

    def __reduce__(self) -> tuple:
        return type(self), (self.problems,)


def where(source: str, key: str) -> str:
    """Prefix of an error message: ``file: key``."""
    return f"{source}: {key}" if key else source


def one_line(what: object, limit: int = 200, escape: bool = True) -> str:
    """A value or a library's error text as a message quotes it: on one line (whitespace runs made one space),
    at most ``limit`` characters, cut with "..." (Parquet readers report several lines of decoder state; a
    trace row's params or a machine file's value may be long); characters that do not print (a binary file's
    bytes a reader quotes) as escapes, unless ``escape`` is False (a caller that quotes the text with ``repr``,
    which escapes them itself)."""
    text = " ".join(str(what).split())
    if escape and not text.isprintable():
        text = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)
    return _cut(text, limit)


def _cut(text: str, limit: int) -> str:
    """``text`` if it has at most ``limit`` characters, else its first ``limit - 3`` and "..."."""
    return text if len(text) <= limit else text[:limit - 3] + "..."


#: the most characters of a value a message quotes (``as_written``): a 300-digit number or a pasted file is cut
AS_WRITTEN_LIMIT = 200


def as_written(value: object) -> str:
    """A value a message quotes, spelled as a YAML or JSON file writes it: null, true and false (not Python's
    None, True and False), inside lists and mappings too; anything else as ``repr`` writes it; at most
    ``AS_WRITTEN_LIMIT`` characters, cut with "..."."""
    return _cut(_written(value), AS_WRITTEN_LIMIT)


def _written(value: object) -> str:
    """``as_written``'s spelling of ``value``, whole."""
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_written(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_written(k)}: {_written(v)}" for k, v in value.items()) + "}"
    return repr(value)


def quoted(what: object, limit: int = 200) -> str:
    """``what`` on one line (``one_line``) in quotes, as ``repr`` writes a string: what does not print escaped
    once, by ``repr``."""
    return repr(one_line(what, limit, escape=False))

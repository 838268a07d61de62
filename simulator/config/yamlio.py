"""Strict YAML reading: duplicate keys are errors, not silent overwrites; input stays small.

PyYAML's safe loader keeps the last of two equal keys; offsim refuses the file
and names both lines. A config input must be a regular file of at most
``MAX_CONFIG_BYTES`` (a device such as ``/dev/zero`` or a FIFO would be read
forever), and its aliases may not expand it beyond ``MAX_ALIAS_EXPANSION_NODES``
extra nodes nor refer to themselves: a "billion laughs" file of a few hundred
bytes expands to 9^9 nodes that every later walk over the config would visit,
and a self-referential alias makes a structure without end. A process keeps the data of the documents it
has read (``KEPT_DOCUMENTS``) and hands each caller a copy.
"""

from __future__ import annotations

import copy
import functools
import os
import re
import stat
import sys
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import yaml

from simulator.errors import ConfigError

#: Largest config file read, bytes. Shipped configs are at most some 10 KB; a config ten times
#: the largest study file is still well below this, and reading it stays within milliseconds.
MAX_CONFIG_BYTES = 1024 * 1024
#: Most nodes that aliases may add to a document when expanded (each ``*name`` counts the nodes
#: of what it names). Configs need few or no aliases; this many keep every walk over the
#: expanded config (presets, overrides, validation, hashing) within a fraction of a second.
MAX_ALIAS_EXPANSION_NODES = 10_000
#: Documents whose parsed data a process keeps (by text, source and alias budget), and the longest text kept
#: (characters):
#: the runs of a study or a reproduction read the same system and preset files again and again (one
#: reproduction parses some 1,400 documents), and the pure-Python parser is a large share of their time.
KEPT_DOCUMENTS = 256
MAX_KEPT_TEXT_CHARS = 64 * 1024


class _AliasProblem(Exception):
    """A document whose aliases refer to themselves or expand beyond the budget."""


class AliasError(ConfigError):
    """A YAML document refused for its aliases (recursive, or expanding beyond the budget)."""


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that records duplicate mapping keys instead of overwriting."""

    def __init__(self, stream: Any, source: str):
        super().__init__(stream)
        self.source = source
        self.problems: list[str] = []

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        """An integer, or ConfigError naming the line for one too long for Python to read (over 4300 digits)."""
        try:
            return super().construct_yaml_int(node)
        except ValueError:
            digits = sum(c.isdigit() for c in str(node.value))
            raise ConfigError(f"{self.source}: line {node.start_mark.line + 1}: an integer of {digits} digits; "
                              f"expected a number of at most {sys.get_int_max_str_digits()} digits") from None

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: dict[Any, tuple[int, yaml.Node]] = {}
        for i, (key_node, _) in enumerate(node.value):
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, Hashable):  # a list or mapping as a key: super() refuses it with its line
                continue
            j, first = seen.setdefault(key, (i, key_node))
            # the same key once read, however written (1 and true are one to Python), or an alias of an earlier
            # key (the alias is the anchor's own node: the entries' positions tell them apart)
            if j != i:
                written = getattr(key_node, "value", key)
                as_first = "" if getattr(first, "value", key) == written else f", written {first.value}"
                self.problems.append(f"{self.source}: {written}: duplicate key at {_place(key_node)} (first at "
                                     f"{_place(first)}{as_first}); expected each key once")
        return super().construct_mapping(node, deep=deep)


def _place(node: yaml.Node) -> str:
    """Where ``node`` starts: its line, and its column too (two keys of one line, in a flow mapping)."""
    return f"line {node.start_mark.line + 1}, column {node.start_mark.column + 1}"


_StrictLoader.add_constructor("tag:yaml.org,2002:int", _StrictLoader.construct_yaml_int)

# The plain scalars YAML 1.1 reads as something other than what most writers mean: yes/no/on/off/y/n as booleans,
# base-60 numbers (1:30 is 90), leading-zero octals (010 is 8) and dates. They stay strings, so that a field
# refuses them naming the text as written; only true and false (in three spellings each) are booleans, as in
# YAML 1.2. Decimal, binary (0b) and hexadecimal (0x) integers (with YAML 1.1's underscores) and its floats stay.
_BOOL = "tag:yaml.org,2002:bool"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_StrictLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in (_BOOL, _INT, _FLOAT, _TIMESTAMP)]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
_StrictLoader.add_implicit_resolver(_BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
_StrictLoader.add_implicit_resolver(_INT, re.compile(r"""^(?:[-+]?0b[0-1_]+
                                                         |[-+]?(?:0|[1-9][0-9_]*)
                                                         |[-+]?0x[0-9a-fA-F_]+)$""", re.X),
                                    list("-+0123456789"))
_StrictLoader.add_implicit_resolver(_FLOAT, re.compile(r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
                                                           |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
                                                           |[-+]?\.(?:inf|Inf|INF)
                                                           |\.(?:nan|NaN|NAN))$""", re.X),
                                    list("-+0123456789."))


def _expanded_nodes(node: yaml.Node, sizes: dict[int, int], open_nodes: set[int]) -> int:
    """Nodes of ``node`` with every alias expanded (``sizes`` memoises shared nodes); _AliasProblem
    if a node contains itself (``open_nodes``: the nodes being counted)."""
    key = id(node)
    if key in sizes:
        return sizes[key]
    if key in open_nodes:
        raise _AliasProblem(f"recursive alias: the anchor at line {node.start_mark.line + 1} is used inside its "
                            "own value; expected each alias to name a value that does not contain it")
    if isinstance(node, yaml.ScalarNode):
        return 1
    open_nodes.add(key)
    children = (node.value if isinstance(node, yaml.SequenceNode)
                else [item for pair in node.value for item in pair])
    size = 1
    for child in children:
        size += _expanded_nodes(child, sizes, open_nodes)
        if size > 2**62:  # stop adding up a bomb long before Python integers grow large
            break
    open_nodes.discard(key)
    sizes[key] = size
    return size


def _check_aliases(root: yaml.Node | None, budget: int) -> None:
    """Refuse a document whose aliases refer to themselves or add more than ``budget`` nodes."""
    if root is None:
        return
    sizes: dict[int, int] = {}
    expanded = _expanded_nodes(root, sizes, set())
    distinct = _distinct_nodes(root)
    extra = expanded - distinct
    if extra > budget:
        shown = f"{expanded:,}" if expanded <= 2**62 else "more than 2**62"
        raise _AliasProblem(f"aliases expand {distinct:,} nodes to {shown}; expected at most "
                            f"{budget:,} nodes added by aliases")


def _distinct_nodes(root: yaml.Node) -> int:
    """Nodes of the document as written (an aliased node once)."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            stack.extend(item for pair in node.value for item in pair)
    return len(seen)


def _read_config_text(path: str | Path, source: str, what: str) -> str:
    """The text of a config file: a regular file of at most MAX_CONFIG_BYTES bytes, UTF-8."""
    expected = f"expected a readable UTF-8 {what}"
    with open(path, "rb", opener=lambda p, flags: os.open(p, flags | os.O_NONBLOCK)) as fh:  # a FIFO: no wait
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(f"{source}: not a regular file (a device, pipe or socket); {expected} of at most "
                              f"{MAX_CONFIG_BYTES:,} B")
        data = fh.read(MAX_CONFIG_BYTES + 1)  # a file growing while read stops here too
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{source}: {max(info.st_size, len(data)):,} B or more; expected a config file of at "
                          f"most {MAX_CONFIG_BYTES:,} B")
    return data.decode("utf-8")


def config_text(path: str | Path, what: str = "YAML file") -> str:
    """The text of an input file (a config, a table, a JSON record; ``what`` names it in messages): a
    regular UTF-8 file of at most MAX_CONFIG_BYTES; ConfigError naming the file otherwise."""
    source = str(path)
    try:
        return _read_config_text(path, source, what)
    except FileNotFoundError:
        raise ConfigError(f"{source}: file not found; expected an existing {what}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{source}: cannot read ({exc.__class__.__name__}); expected a readable UTF-8 {what}") \
            from None
    except OSError as exc:  # a directory, no permission, a path through a file, a name too long, a link loop
        reason = exc.strerror or exc.__class__.__name__
        raise ConfigError(f"{source}: cannot read ({reason}); expected a readable UTF-8 {what}") from None


def check_aliases(text: str, source: str) -> None:
    """AliasError if YAML ``text`` has a recursive alias or aliases that add more than
    MAX_ALIAS_EXPANSION_NODES nodes; syntax errors are left to the reader that loads it."""
    try:
        _check_aliases(yaml.compose(text, Loader=yaml.SafeLoader), MAX_ALIAS_EXPANSION_NODES)
    except _AliasProblem as exc:
        raise AliasError(f"{source}: invalid YAML: {exc}") from None
    except (yaml.YAMLError, RecursionError):
        pass


def load_yaml(path: str | Path) -> Any:
    """Read one YAML file strictly; raise ConfigError naming the file on any problem."""
    return load_yaml_text(config_text(path), str(path))


def load_yaml_text(text: str, source: str) -> Any:
    """Read YAML ``text`` strictly (as ``load_yaml``); messages start with ``source``. Each call returns data of
    its own, which the caller may change."""
    if len(text) > MAX_KEPT_TEXT_CHARS:
        return _parse(text, source, MAX_ALIAS_EXPANSION_NODES)
    return copy.deepcopy(_kept_parse(text, source, MAX_ALIAS_EXPANSION_NODES))


@functools.lru_cache(maxsize=KEPT_DOCUMENTS)
def _kept_parse(text: str, source: str, alias_budget: int) -> Any:
    """``_parse``, kept for the next call with the same text, source and alias budget (a refused text is
    parsed again)."""
    return _parse(text, source, alias_budget)


def _parse(text: str, source: str, alias_budget: int) -> Any:
    """The data of YAML ``text`` (``load_yaml_text``); ``alias_budget``: the nodes its aliases may add."""
    loader = None
    try:
        loader = _StrictLoader(text, source)  # the reader rejects non-printable characters here
        root = loader.get_single_node()
        _check_aliases(root, alias_budget)
        data = None if root is None else loader.construct_document(root)
    except _AliasProblem as exc:
        raise AliasError(f"{source}: invalid YAML: {exc}") from None
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

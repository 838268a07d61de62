"""Command-line parsing shared by ``offsim`` and the study programs (``python -m simulator.studies...``).

``OptionParser`` is argparse's parser with one rule more: an option that takes one value, given twice
(``--out a --out b``), is refused naming the option (exit 2), where argparse keeps the last value without a word.
Repeatable options (``action="append"``) and positionals are unchanged. ``int_arg`` is the type of an integer
option: ASCII digits only, as config numbers are read (``units.ascii_integer``).
"""

from __future__ import annotations

import argparse
from typing import Any

from simulator.units import ascii_integer

__all__ = ["OptionParser", "int_arg"]


def int_arg(text: str) -> int:
    """An integer option (an argparse ``type``): :func:`units.ascii_integer`, whose refusal argparse reports
    naming the option (exit 2)."""
    try:
        return ascii_integer(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


class _StoreOnce(argparse.Action):
    """argparse's ``store`` for an option of one value, refused when given a second time."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        given = namespace.__dict__.setdefault("_given_once", {})
        if option_string is not None and self.dest in given:
            parser.error(f"argument {option_string}: given twice ({given[self.dest]!r}, then {values!r}); expected "
                         "it once")
        given[self.dest] = values
        setattr(namespace, self.dest, values)


class OptionParser(argparse.ArgumentParser):
    """argparse's parser whose options of one value are refused when given twice (module docstring); its
    subcommands' parsers, which argparse makes of the same class, too."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.register("action", None, _StoreOnce)
        self.register("action", "store", _StoreOnce)

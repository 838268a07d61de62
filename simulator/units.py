"""Physical quantities with units: parsing and formatting.

Every number in a config is written with its unit ("2 GHz", "12.8 GB/s",
"8 MiB", "20 pJ/bit", "1.25 ns", "95 mA") and converted here to SI base
values: hertz, seconds, bytes, bytes per second, joules, joules per bit,
joules per byte, watts, amperes, volts. Decimal (kB, MB, GB) and binary
(KiB, MiB, GiB) prefixes stay distinct: "8 MB" is 8e6 bytes, "8 MiB" is
8388608 bytes. Bandwidths use decimal prefixes on bytes per second, as the
datasheets do ("12.8 GB/s" = 12.8e9 B/s).

Simulated time is kept as integer picoseconds (``PS_PER_S``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from simulator.errors import as_written

PS_PER_S = 10**12

_DECIMAL = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_SMALL = {"": 1.0, "m": 1e-3, "u": 1e-6, "µ": 1e-6, "n": 1e-9, "p": 1e-12, "f": 1e-15}
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}


@dataclass(frozen=True)
class Dimension:
    """A physical dimension: its name, SI unit symbol and accepted spellings."""

    name: str
    si_unit: str
    units: dict[str, float]  # spelling -> factor to the SI unit

    def expected(self) -> str:
        """A short human description of what is accepted, for error messages."""
        examples = ", ".join(list(self.units)[:6])
        article = "an" if self.name[0] in "aeiou" else "a"
        return f"{article} {self.name} with a unit ({examples}, ...)"


def _prefixed(base: str, prefixes: dict[str, float]) -> dict[str, float]:
    return {p + base: f for p, f in prefixes.items()}


_BYTES = {**_prefixed("B", _DECIMAL), **{p + "B": float(f) for p, f in _BINARY.items()}}
_BYTES.update({"bytes": 1.0, "byte": 1.0})
_BITS = {"bit": 1 / 8, "bits": 1 / 8, "Kbit": 1e3 / 8, "Mbit": 1e6 / 8, "Gbit": 1e9 / 8}
_BITS.update({"Kibit": 2**10 / 8, "Mibit": 2**20 / 8, "Gibit": 2**30 / 8, "Gb": 1e9 / 8, "Mb": 1e6 / 8})

DIMENSIONS: dict[str, Dimension] = {
    "frequency": Dimension("frequency", "Hz", _prefixed("Hz", _DECIMAL)),
    "time": Dimension(
        "time", "s", {**_prefixed("s", _SMALL), "min": 60.0, "h": 3600.0}
    ),
    "size": Dimension("size", "B", {**_BYTES, **_BITS}),
    "bandwidth": Dimension(
        "bandwidth",
        "B/s",
        {
            **{p + "B/s": f for p, f in _DECIMAL.items()},
            **{p + "B/s": float(f) for p, f in _BINARY.items()},
            **{p + "bit/s": f / 8 for p, f in _DECIMAL.items()},
            **{p + "b/s": f / 8 for p, f in _DECIMAL.items()},
        },
    ),
    "energy": Dimension("energy", "J", _prefixed("J", _SMALL)),
    "energy_per_bit": Dimension("energy per bit", "J/bit", {p + "J/bit": f for p, f in _SMALL.items()}),
    "energy_per_byte": Dimension("energy per byte", "J/B", {p + "J/B": f for p, f in _SMALL.items()}),
    "energy_per_flop": Dimension("energy per flop", "J/flop", {p + "J/flop": f for p, f in _SMALL.items()}),
    "power": Dimension("power", "W", {**_prefixed("W", _SMALL), **_prefixed("W", {"k": 1e3})}),
    "current": Dimension("current", "A", _prefixed("A", _SMALL)),
    "voltage": Dimension("voltage", "V", _prefixed("V", _SMALL)),
    "flop_rate": Dimension(
        "compute rate", "flop/s", {p + "FLOP/s": f for p, f in _DECIMAL.items()} | {p + "flop/s": f for p, f in _DECIMAL.items()}
    ),
}

#: a number and its unit; ASCII digits only (``\d`` and ``float`` take other scripts' digits too: "１２ MiB")
_NUMBER = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(\S.*?)?\s*$", re.ASCII)


class UnitError(ValueError):
    """A quantity string that does not parse as the expected dimension."""


def parse_quantity(value: object, dimension: str) -> float:
    """Parse ``value`` (e.g. "12.8 GB/s") as ``dimension`` and return SI units.

    Raises UnitError when the text has no unit, an unknown unit, or a unit of
    another dimension. Bare numbers are refused: a config must say its unit.
    """
    dim = DIMENSIONS[dimension]
    if isinstance(value, bool) or not isinstance(value, str):
        bare = " (a bare number has no unit)" if isinstance(value, (int, float)) and not isinstance(value, bool) else ""
        raise UnitError(f"expected {dim.expected()}, got {as_written(value)}{bare}")
    match = _NUMBER.match(value)
    if not match:
        raise UnitError(f"expected {dim.expected()}, got {value!r}")
    number, unit = float(match.group(1)), (match.group(2) or "").replace(" ", "")
    if not unit:
        raise UnitError(f"expected {dim.expected()}, got {value!r} (no unit)")
    if unit not in dim.units:
        other = [d.name for d in DIMENSIONS.values() if unit in d.units]
        hint = f": '{unit}' is a {other[0]} unit" if other else f": unknown unit '{unit}'"
        raise UnitError(f"expected {dim.expected()}, got {value!r}{hint}")
    result = number * dim.units[unit]
    if not math.isfinite(result):
        raise UnitError(f"expected a finite {dim.name}, got {value!r}")
    return result


def seconds_to_ps(seconds: float) -> int:
    """Seconds -> integer picoseconds (rounded to nearest)."""
    return int(round(seconds * PS_PER_S))


def ps_to_seconds(ps: int) -> float:
    """Integer picoseconds -> seconds."""
    return ps / PS_PER_S


#: a number in exponent form without a dot ("1e-3"): YAML 1.1, which PyYAML reads, takes it for a string
_EXPONENT_NUMBER = re.compile(r"[-+]?(\d+(\.\d*)?|\.\d+)[eE][-+]?\d+", re.ASCII)

#: the largest integer a config value may hold: the simulator's int64 arrays and clock
INT64_MAX = 2**63 - 1


#: an integer as a command line writes it: ASCII digits only (``int`` takes other scripts' digits too: "٤")
_ASCII_INTEGER = re.compile(r"\s*[-+]?[0-9]+\s*")


def ascii_integer(text: str) -> int:
    """``text`` as an integer if it is one written in ASCII digits (an optional sign, surrounding spaces); else
    ValueError, as configs refuse numbers in other scripts' digits."""
    if not _ASCII_INTEGER.fullmatch(text):
        raise ValueError(f"expected an integer in digits 0-9, got {text!r}")
    return int(text)


def exponent_number(value: object) -> object:
    """``value`` as a float if it is a string PyYAML left unparsed only for lack of a dot ("1e-3"),
    else unchanged: a plain-number field takes ``1e-3`` as YAML 1.2 and every user would."""
    if isinstance(value, str) and _EXPONENT_NUMBER.fullmatch(value.strip()):
        return float(value)
    return value


def finite_float(value: object) -> float | None:
    """``value`` as a float if it is a real number (not a bool) whose float is finite, else None: an integer
    beyond the float range (a YAML or JSON ``1`` with 400 zeros) is None, not an OverflowError."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def is_power_of_two(n: float) -> bool:
    """True if ``n`` is a positive integral power of two (a size in bytes, a set count, an alignment)."""
    if isinstance(n, float) and not math.isfinite(n):
        return False
    n_int = int(n)
    return n_int == n and n_int > 0 and n_int & (n_int - 1) == 0


#: binary size prefixes, largest first, for sizes in bytes
BINARY_PREFIXES = ((2**40, "Ti"), (2**30, "Gi"), (2**20, "Mi"), (2**10, "Ki"))
_SI_PREFIXES = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""), (1e-3, "m"), (1e-6, "u"), (1e-9, "n"), (1e-12, "p"), (1e-15, "f")]


#: units of plain counts (config fields without a dimension that count clock cycles or data beats): printed as
#: whole numbers with the unit word, never with a prefix ("1,700 tCK", not "1.7 ktCK")
COUNT_UNITS = ("tCK", "cycles", "beats")


def format_count(value: float, unit: str) -> str:
    """A count of ``unit`` (one of ``COUNT_UNITS``): "1,700 tCK", "29,000 cycles", "2.5 cycles"."""
    return f"{value:,.10g} {unit}"


def format_quantity(value: float, unit: str, digits: int = 4) -> str:
    """Format an SI value with an engineering prefix, e.g. 1.28e10, "B/s" -> "12.8 GB/s"."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g} {unit}"
    for factor, prefix in _SI_PREFIXES:
        if abs(value) >= factor:
            return f"{value / factor:.{digits}g} {prefix}{unit}"
    return f"{value:.{digits}g} {unit}"


#: the decimal prefixes of a size in bytes, largest first (``_DECIMAL``'s, as ``parse_quantity`` reads them)
DECIMAL_BYTE_PREFIXES = tuple((int(_DECIMAL[p]), p) for p in ("T", "G", "M", "k"))


#: how an energy (or any figure) reads that a run could not price: NaN (a memory without declared currents, a unit
#: without declared energies)
NOT_KNOWN = "not known"


def format_energy(value: float) -> str:
    """An energy in J with an engineering prefix ("12.3 mJ"), or ``NOT_KNOWN`` for NaN."""
    return NOT_KNOWN if math.isnan(value) else format_quantity(value, "J")


def format_bytes(value: float) -> str:
    """A size in bytes that reads back (``parse_quantity``) to the same number: a whole size in the exact form of
    fewest digits, a whole binary multiple ("16 KiB"), a whole decimal one ("1000 TB", not "976562500000 KiB";
    only where it has fewer digits than the binary form), bytes ("1500 B") or, for a size beyond a few
    petabytes, the float's own digits ("1e+308 B"); a fractional one in bytes with every digit ("1500.5 B")."""
    if not float(value).is_integer():
        return f"{float(value)!r} B"
    n = int(value)
    forms = []
    for prefixes in (BINARY_PREFIXES, DECIMAL_BYTE_PREFIXES):
        size, prefix = next(((size, prefix) for size, prefix in prefixes if abs(n) >= size and n % size == 0),
                            (1, ""))
        forms.append(f"{n // size} {prefix}B")
    if float(n) == n:  # a float's own digits where they are fewer: 1e+308 B, not 309 of them
        forms.append(f"{float(n)!r} B")
    return min(forms, key=lambda form: len(form.split()[0]))  # fewest digits; binary, then decimal, among equals


def format_size(value: float, digits: int = 4) -> str:
    """A computed size in bytes, to read beside configured ones: a whole binary or decimal multiple as
    ``format_bytes`` gives it ("64 MiB", "1 GB"), any other in the largest binary unit it reaches, to ``digits``
    significant digits ("7.992 GiB"), or exactly where those digits would read as a whole size it is not
    ("67109000 B" as "67109 kB", not "64 MiB")."""
    exact = format_bytes(value)
    if not exact.endswith(" B") or abs(value) < BINARY_PREFIXES[-1][0] or "e" in exact:  # whole, small or 1e+20 B
        return exact
    size, prefix = next((size, prefix) for size, prefix in BINARY_PREFIXES if abs(value) >= size)
    shown = f"{value / size:.{digits}g}"
    return f"{shown} {prefix}B" if "." in shown else exact


def format_exact(value: float, si_unit: str) -> str:
    """A config value in SI unit ``si_unit`` as messages and listings show it: a size in bytes exactly
    (``format_bytes``: 8 MiB, not 8.389 MB), any other quantity with an engineering prefix."""
    return format_bytes(value) if si_unit == "B" else format_quantity(value, si_unit)

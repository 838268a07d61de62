"""Quantities with units: every config number goes through ``parse_quantity``, so its prefixes,
its refusals and its messages are pinned here."""

from __future__ import annotations

import numpy as np
import pytest

from simulator.units import (
    ascii_integer,
    PS_PER_S,
    UnitError,
    exponent_number,
    format_bytes,
    format_size,
    format_quantity,
    is_power_of_two,
    parse_quantity,
    ps_to_seconds,
    seconds_to_ps,
)
from tests.conftest import parse_refused


@pytest.mark.parametrize("text, dimension, expected", [
    ("2 GHz", "frequency", 2e9),
    ("2.66GHz", "frequency", 2.66e9),
    ("8 MB", "size", 8e6),                    # decimal prefix
    ("8 MiB", "size", 8 * 2**20),             # binary prefix
    ("64 B", "size", 64.0),
    ("512 bit", "size", 64.0),
    ("4 Gb", "size", 5e8),                    # a DRAM die's 4 Gbit, in bytes
    ("12.8 GB/s", "bandwidth", 12.8e9),       # datasheet bandwidths are decimal
    ("8 Gbit/s", "bandwidth", 1e9),
    ("1.25 ns", "time", 1.25e-9),
    ("7.8 us", "time", 7.8e-6),
    ("20 pJ/bit", "energy_per_bit", 20e-12),
    ("160 pJ/B", "energy_per_byte", 160e-12),
    ("4 pJ/flop", "energy_per_flop", 4e-12),
    ("95 mA", "current", 0.095),
    ("1.5 V", "voltage", 1.5),
    ("130 W", "power", 130.0),
    ("1e3 nJ", "energy", 1e-6),
    ("1.2 GFLOP/s", "flop_rate", 1.2e9),
])
def test_quantities_convert_to_si_base_units(text, dimension, expected):
    assert parse_quantity(text, dimension) == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize("value, dimension, message", [
    (8, "size", "a bare number has no unit"),
    (True, "size", r"got true$"),  # as the file writes it, not Python's True
    (None, "size", r"got null$"),
    ("8", "size", "no unit"),
    ("8 furlongs", "size", "unknown unit 'furlongs'"),
    ("1.25 ns", "size", "'ns' is a time unit"),
    ("12.8 GB", "bandwidth", "'GB' is a size unit"),
    ("fast GHz", "frequency", "expected a frequency with a unit"),
    ("1e400 GHz", "frequency", "expected a finite frequency"),
    ("３２ KiB", "size", "expected a size with a unit"),  # digits of other scripts, which float() reads
    ("٣ GHz", "frequency", "expected a frequency with a unit"),
])
def test_bad_quantities_are_refused_with_what_was_expected(value, dimension, message):
    with pytest.raises(UnitError, match=message):
        parse_quantity(value, dimension)


def test_picosecond_conversion_round_trips_and_rounds_to_nearest():
    assert seconds_to_ps(1.25e-9) == 1250
    assert seconds_to_ps(0.4e-12) == 0 and seconds_to_ps(0.6e-12) == 1
    assert ps_to_seconds(seconds_to_ps(3.0)) == 3.0
    assert seconds_to_ps(1.0) == PS_PER_S


@pytest.mark.parametrize("n", [1, 2, 64, 2**40, np.int64(4096), 8.0])
def test_powers_of_two(n):
    assert is_power_of_two(n)


@pytest.mark.parametrize("n", [0, -2, 3, 6, 96, 2**40 + 1, 2.5, 0.5, float("inf"), float("nan")])
def test_not_powers_of_two(n):
    assert not is_power_of_two(n)


@pytest.mark.parametrize("value, unit, expected", [
    (1.28e10, "B/s", "12.8 GB/s"),
    (1.25e-9, "s", "1.25 ns"),
    (0.0, "J", "0 J"),
    (-3.5e-3, "W", "-3.5 mW"),
    (float("inf"), "s", "inf s"),
])
def test_quantities_format_with_an_engineering_prefix(value, unit, expected):
    assert format_quantity(value, unit) == expected


@pytest.mark.parametrize("value, expected", [
    (16, "16 B"), (1000, "1 kB"), (4096, "4 KiB"), (3 * 2**20, "3 MiB"), (1536, "1536 B"), (2**40, "1 TiB"),
    (1500.5, "1500.5 B"), (0, "0 B"), (1500, "1500 B"),
    # the exact form of fewest digits: decimal where the binary one has more, binary where they have as many
    (10**15, "1000 TB"), (12.8e9, "12800 MB"), (2048000, "2000 KiB"), (1000 * 2**20, "1000 MiB"),
    (125000 * 2**20, "125000 MiB"),
    (5**15, "30517578125 B"),
    # beyond a few petabytes the float's own digits, where shorter: never hundreds of digits
    (1e308, "1e+308 B"), (1e16, "10000 TB"), (1e17, "1e+17 B"),
])
def test_whole_sizes_format_in_their_exact_form_of_fewest_digits(value, expected):
    assert format_bytes(value) == expected


@pytest.mark.parametrize("value, expected", [
    (2**26, "64 MiB"), (8581566992, "7.992 GiB"), (52800000008.0, "49.17 GiB"), (1000, "1 kB"),
    # a size its digits would show as whole (64 MiB, 1 TiB) is given exactly: it may exceed a limit by bytes
    (2**26 + 136, "67109 kB"), (2**40 + 5, "1099511627781 B"), (1e308, "1e+308 B"),
])
def test_a_computed_size_reads_in_binary_units_and_never_as_a_whole_size_it_is_not(value, expected):
    assert format_size(value) == expected


@pytest.mark.parametrize("value", [32768, 8 * 2**20, 2**32, 1000, 1500.5, 3 * 2**30 + 1, 0.125, 10**15, 2048000, 1e308])
def test_a_formatted_size_reads_back_to_the_same_number_of_bytes(value):
    assert parse_quantity(format_bytes(value), "size") == value


def test_only_ascii_digits_make_an_exponent_number():
    assert exponent_number("1e3") == 1000.0
    assert exponent_number("１e3") == "１e3"  # left as written: the field then refuses a string


@pytest.mark.parametrize("text, value", [("4", 4), ("-3", -3), ("+7", 7), (" 12 ", 12), ("007", 7)])
def test_an_ascii_integer_reads_as_int_does(text, value):
    assert ascii_integer(text) == value


@pytest.mark.parametrize("text", ["٤", "１０", "²", "4x", "", "4.0", "1e3", "4_0"])
def test_an_integer_in_other_digits_or_forms_is_refused(text):
    with pytest.raises(ValueError, match="expected an integer in digits 0-9"):
        ascii_integer(text)


@pytest.mark.parametrize("argv, option", [(["models", "ulist", "--q", "٤"], "--q"),
                                          (["study", "x.yaml", "--workers", "２"], "--workers"),
                                          (["models", "chain", "--m-elems", "６"], "--m-elems")])
def test_an_int_arg_in_other_digits_is_refused_naming_the_option(argv, option, capsys):
    assert f"argument {option}: expected an integer in digits 0-9" in parse_refused(argv, capsys)


def test_the_fmm_study_program_and_models_stencil_take_ascii_digits_only(capsys):
    from simulator.errors import InputError
    from simulator.studies.fmm.placement import main as fmm_main
    from simulator.studies.stencil.model_eval import parse_sizes

    for option in ("--workers", "--dask-local"):
        err = parse_refused([option, "２"], capsys, fmm_main)
        assert f"argument {option}: expected an integer in digits 0-9, got '２'" in err
    assert parse_sizes("8192,8192", "--space", "sizes") == (8192, 8192)
    with pytest.raises(InputError, match="--space '٨١٩٢,٨١٩٢': expected sizes as positive integers"):
        parse_sizes("٨١٩٢,٨١٩٢", "--space", "sizes")

"""Errors cross a process pool intact: a study's worker that raises one must not surface as a broken pool."""

from __future__ import annotations

import pickle

import pytest

from simulator.accel.command_schema import CommandError
from simulator.errors import ConfigError, FieldError, InputError, Problem, TableError
from simulator.config.jsonio import RepeatedKey
from simulator.config.plugins import PluginError
from simulator.units import UnitError
from simulator.config.yamlio import AliasError
from simulator.energy import ConservationError
from simulator.engine.limits import SimulatedTimeLimit
from simulator.memory.dram import AddressOutOfRange
from simulator.studies.reproduce import TargetUnavailable
from workloads.trace import TraceError

KEYED = Problem("sys.yaml", "dram.timing.t_ras", "28 tCK; expected >= t_rcd (40 tCK)", ("dram.timing.t_rcd",))

ERRORS = [
    TraceError("<memory>", "offload to crypto: engines = 16: expected at most 8", row=1, column="params"),
    TraceError("t.csv", "no rows"),
    FieldError("t_ras", "28 tCK; expected >= t_rcd", ("t_rcd",), owner="DramTiming"),
    InputError([KEYED, "a problem with no key"]),
    ConfigError(KEYED),
    AliasError("a.yaml: aliases refer to themselves"),
    PluginError("entry point x: not a generator"),
    TargetUnavailable("target x not available"),
    TableError(["t.yaml: row 1: C: expected > 0", "t.yaml: row 2: A: expected > 0"]),
    RepeatedKey("m"),
    CommandError("offload to lap: m: expected >= 1"),
    UnitError("'3 GHz': expected bytes"),
    ConservationError("energy does not add up"),
    SimulatedTimeLimit(650.0),
    AddressOutOfRange("line 2**40 beyond the memory"),
]


@pytest.mark.parametrize("error", ERRORS, ids=lambda e: type(e).__name__)
def test_an_error_pickles_back_with_its_text_and_fields(error):
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is type(error) and str(back) == str(error)
    fields = ("source", "expected", "row", "column", "key", "detail", "related", "owner", "entries", "problems")
    for name in fields:
        if hasattr(error, name):
            assert getattr(back, name) == getattr(error, name), name

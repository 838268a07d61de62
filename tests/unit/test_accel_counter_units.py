"""Units of the accelerator counters reported in results (component accel/<name>)."""

from __future__ import annotations

import pytest

from simulator.accel.base import counter_unit


@pytest.mark.parametrize("counter, unit", [
    ("bytes_read", "B"), ("bytes_written", "B"), ("local_memory_bytes", "B"),
    ("global_words", "words"), ("scratchpad_words", "words"),
    ("work_host_cycles", "cycles"), ("compute_s", "s"),
    ("flops", "flop"), ("fadd", "flop"), ("fmul", "flop"), ("fother", "flop"),
    ("blocks", "count"), ("sub_blocks", "count"), ("requests", "count"), ("points", "count"),
    ("kernel_calls", "count"), ("rounds", "count"), ("steps", "count"), ("tiles", "count"),
])
def test_counter_units(counter, unit):
    assert counter_unit(counter) == unit

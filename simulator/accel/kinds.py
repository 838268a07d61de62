"""The shipped accelerator kinds: importing this module imports each kind's module, which registers its
builder and command schema (``simulator.accel.registry``). ``BUILDERS`` and ``COMMANDS`` are read from here,
so that whoever reads them finds the shipped kinds in them (an installed package's kind registers as
``AcceleratorSpec.load_kinds`` imports it)."""
from simulator.accel import crypto, kernel, lap, stencil, systolic  # noqa: F401 -- each registers on import
from simulator.accel.registry import BUILDERS, COMMANDS

__all__ = ["BUILDERS", "COMMANDS"]

"""The shipped accelerator kinds' specs: importing this module imports each kind's spec module, which
registers it (``register_kind``). ``schema`` imports it, so the shipped kinds are registered wherever a system
can be loaded; the kinds of installed packages are loaded at first use (``AcceleratorSpec.load_kinds``)."""
from simulator.config import accel_crypto, accel_kernel, accel_lap, accel_stencil, accel_systolic  # noqa: F401

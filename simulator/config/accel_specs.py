"""Imports every shipped kind-specific accelerator spec module so that its kind is registered
(the kinds of installed packages are loaded at first use: ``AcceleratorSpec.load_kinds``)."""
from simulator.config import accel_lap  # noqa: F401
from simulator.config import accel_crypto  # noqa: F401
from simulator.config import accel_stencil  # noqa: F401
from simulator.config import accel_kernel  # noqa: F401
from simulator.config import accel_systolic  # noqa: F401

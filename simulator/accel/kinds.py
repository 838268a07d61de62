"""Imports every accelerator kind module so that its builder is registered."""
from simulator.accel import lap  # noqa: F401
from simulator.accel import crypto  # noqa: F401
from simulator.accel import stencil  # noqa: F401
from simulator.accel import kernel  # noqa: F401
from simulator.accel import systolic  # noqa: F401

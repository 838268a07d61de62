"""Runnable examples of traces written by hand (each module runs as ``python -m workloads.examples.<name>``)."""

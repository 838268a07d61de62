"""Imports every kind-specific accelerator spec module so that its kind is registered."""

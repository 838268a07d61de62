"""Imports every accelerator kind module so that its builder is registered."""

"""The FMM U-list accelerator-placement study (003): the grid, its cross-check with the U-list model, and model evaluation from a study's measured inputs."""

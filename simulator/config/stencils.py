"""Stencil kernels: operation counts per point update, shared by workloads, models and the stencil engine.

The definitions are data (like a preset): ``workloads.stencil`` emits sweeps of
them, ``models.stencil`` predicts their time and energy, and the stencil engine
prices their compute; each of those imports this table.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Stencil:
    """A first-order stencil: operation counts per point update.

    ``points`` grid values read per update (words per point from the fast memory),
    ``fadd``/``fmul``/``fother`` floating-point adds (incl. subtracts), multiplies and
    other operations (divide, square root) per update, ``u_sr`` shared->register words per
    update of the energy model (B.6), ``source`` where the counts come from.
    """

    name: str
    dims: int
    points: int
    fadd: int
    fmul: int
    fother: int = 0
    u_sr: int = 0
    source: str = ""

    def __post_init__(self) -> None:
        if self.dims not in (1, 2, 3):
            raise ValueError(f"dims must be 1, 2 or 3, got {self.dims!r}")
        for f in ("points", "fadd", "fmul", "fother", "u_sr"):
            if getattr(self, f) < 0:
                raise ValueError(f"{f} must be >= 0, got {getattr(self, f)!r}")

    @property
    def flops_per_point(self) -> int:
        """Floating-point operations per point update."""
        return self.fadd + self.fmul + self.fother

    @property
    def words_per_point(self) -> int:
        """Words touched per point update: ``points`` reads and one write."""
        return self.points + 1


_ASSUMED = "form not printed in 004; standard form assumed"
STENCILS: dict[str, Stencil] = {s.name: s for s in (
    # 004 §B.3.2 (004:L2889-L2897): A'(i) = 1/3 (A(i-1) + A(i) + A(i+1))
    Stencil("jacobi_1d", 1, 3, 2, 1, 0, 4, "004 B.3.2"),
    # 004 §B.3.3 (004:L2900-L2908): A'(i,j) = 0.2 (5 points); u_sr = 6 (004:L3290)
    Stencil("jacobi_2d", 2, 5, 4, 1, 0, 6, "004 B.3.3, u_sr B.6"),
    Stencil("jacobi_3d", 3, 7, 6, 1, 0, 8, "3D analogue of 004 B.3.3; " + _ASSUMED),
    # heat: c + a (sum of neighbours - 2d c)
    Stencil("heat_2d", 2, 5, 5, 2, 0, 6, _ASSUMED),
    Stencil("heat_3d", 3, 7, 7, 2, 0, 8, _ASSUMED),
    # laplacian: sum of neighbours - 2d c
    Stencil("laplacian_2d", 2, 5, 4, 1, 0, 6, _ASSUMED),
    Stencil("laplacian_3d", 3, 7, 6, 1, 0, 8, _ASSUMED),
    # gradient: c + 1 / sqrt(eps + sum over 4 neighbours of (c - n)^2): sqrt and divide as fother
    Stencil("gradient_2d", 2, 5, 9, 4, 2, 6, _ASSUMED),
)}

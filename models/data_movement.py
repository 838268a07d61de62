"""Off-chip data movement of GEMMs and matrix chains with a fast memory of M elements (004 app. D).

All volumes are in elements (words) moved between slow and fast memory; ``m_elems`` is
the fast-memory capacity M in elements. Matrix ``A_i`` of a chain is ``P[i-1] x P[i]``.

Single GEMM ``R (P0 x P2) = A1 (P0 x P1) A2 (P1 x P2)`` with 3D blocking (004 §D.2):

* R kept on chip, x = y = sqrt(M):            h_R  = 2 P0 P1 P2 / sqrt(M) + P0 P2          (D.3)
* A1 kept on chip, x = sqrt(M/2), z = 2x:     h_A1 = 2 sqrt(2) P0 P1 P2 / sqrt(M) + P0 P1 - P0 P2 (D.5)
* A2 kept on chip, x = sqrt(M/2), y = 2x:     h_A2 = 2 sqrt(2) P0 P1 P2 / sqrt(M) + P1 P2 - P0 P2 (D.6)

Two fused GEMMs (the intermediate never leaves the chip, 004 §D.3):

* left  ``(A1 A2) A3``: alpha = P3 / P1, alpha' = (1 + 2 alpha) / (1 + alpha),
  h = 2 P0 P1 P2 (1 + alpha) sqrt(alpha') / sqrt(M) - P0 P3, x = sqrt(M / alpha'), y = sqrt(M alpha') (D.10)
* right ``A1 (A2 A3)``: beta = P0 / P2, beta' = (1 + 2 beta) / (1 + beta),
  h = 2 P1 P2 P3 (1 + beta) sqrt(beta') / sqrt(M) - P0 P3, x = sqrt(M beta'), y = sqrt(M / beta') (D.14)

Matrix chains (004 §D.4-D.6): the classic minimum-op-count DP (Algorithm 10), the data
movement S of its tree with every product written off chip (D.18), and the hyper-node
optimum F over the same tree (D.19-D.26), whose total is F(1, n) + P0 Pn.

Which ratio the chain recurrences use: 004 prints alpha = P_j / P_k in D.21 and
beta = P_{i-1} / P_k in D.22. Its worked example (004 §D.7, 004:L5302-L5330: total
8,392,058 at 004:L5330; Fig. D.11's tile sizes (312, 210) and (220, 296) at
004:L5315-L5316) is reproduced with the printed beta and with alpha = P_j / P_{k1}, which
is the alpha = P3 / P1 of the derivation D.8; these are the defaults.
``alpha_mode``/``beta_mode`` select the other readings.

Arithmetic: every term that contains 1 / sqrt(M) is rounded down to whole elements; when
M is a perfect square and the division is exact the term is computed in integers, so the
results are exact integers whenever 004's are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal, Sequence

AlphaMode = Literal["derived", "printed"]
BetaMode = Literal["printed", "derived"]


def _check_dims(**dims: int) -> None:
    for name, v in dims.items():
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be an integer >= 1 (elements), got {v!r}")


def _floor_over_sqrt_m(numerator: int | float, m_elems: int, factor: float = 1.0) -> int:
    """floor(numerator * factor / sqrt(M)), exact in integers when factor == 1 and M is a square."""
    s = math.isqrt(m_elems)
    if factor == 1.0 and s * s == m_elems and isinstance(numerator, int):
        return int(Fraction(numerator, s).__floor__())
    value = numerator * factor / math.sqrt(m_elems)
    nearest = round(value)
    if abs(value - nearest) <= 1e-12 * max(1.0, abs(value)):  # float noise around an integer
        return int(nearest)
    return math.floor(value)


# ---- single GEMM (004 §D.2, Table D.2) ---------------------------------------------

@dataclass(frozen=True)
class GemmIO:
    """Data movement (elements) and tile sizes (elements, unrounded) of one blocked GEMM."""

    words: int
    tile_x: float
    tile_y: float


def gemm_io(p0: int, p1: int, p2: int, m_elems: int,
            on_chip: Literal["output", "input1", "input2"] = "output") -> GemmIO:
    """Off-chip elements moved by ``R = A1 A2`` keeping one operand on chip (D.3, D.5, D.6).

    ``on_chip="output"`` keeps R (tiles x = y = sqrt(M)); ``"input1"`` keeps A1
    (x = sqrt(M/2), z = 2x); ``"input2"`` keeps A2 (x = sqrt(M/2), y = 2x). The forms
    assume every matrix is larger than the fast memory (004:L4553).
    """
    _check_dims(p0=p0, p1=p1, p2=p2, m_elems=m_elems)
    cube = 2 * p0 * p1 * p2
    root_m = math.sqrt(m_elems)
    if on_chip == "output":
        return GemmIO(_floor_over_sqrt_m(cube, m_elems) + p0 * p2, root_m, root_m)
    if on_chip == "input1":
        return GemmIO(_floor_over_sqrt_m(cube, m_elems, math.sqrt(2.0)) + p0 * p1 - p0 * p2,
                      math.sqrt(m_elems / 2), math.sqrt(2.0 * m_elems))
    if on_chip == "input2":
        return GemmIO(_floor_over_sqrt_m(cube, m_elems, math.sqrt(2.0)) + p1 * p2 - p0 * p2,
                      math.sqrt(m_elems / 2), math.sqrt(2.0 * m_elems))
    raise ValueError(f"on_chip must be 'output', 'input1' or 'input2', got {on_chip!r}")


def _prime(ratio: float) -> float:
    return (1.0 + 2.0 * ratio) / (1.0 + ratio)


def fused_left_io(p0: int, p1: int, p2: int, p3: int, m_elems: int) -> GemmIO:
    """``R = (A1 A2) A3`` with the intermediate kept on chip, D.10 (elements)."""
    _check_dims(p0=p0, p1=p1, p2=p2, p3=p3, m_elems=m_elems)
    alpha = p3 / p1
    ap = _prime(alpha)
    words = _floor_over_sqrt_m(2 * p0 * p1 * p2, m_elems, (1 + alpha) * math.sqrt(ap)) - p0 * p3
    return GemmIO(words, math.sqrt(m_elems / ap), math.sqrt(m_elems * ap))


def fused_right_io(p0: int, p1: int, p2: int, p3: int, m_elems: int) -> GemmIO:
    """``R = A1 (A2 A3)`` with the intermediate kept on chip, D.14 (elements)."""
    _check_dims(p0=p0, p1=p1, p2=p2, p3=p3, m_elems=m_elems)
    beta = p0 / p2
    bp = _prime(beta)
    words = _floor_over_sqrt_m(2 * p1 * p2 * p3, m_elems, (1 + beta) * math.sqrt(bp)) - p0 * p3
    return GemmIO(words, math.sqrt(m_elems * bp), math.sqrt(m_elems / bp))


# ---- matrix chains ---------------------------------------------------------------------

@dataclass(frozen=True)
class ChainOrder:
    """Minimum-op-count parenthesisation (004 Algorithm 10).

    ``op_count`` counts multiply-adds (P[i-1] P[k] P[j] per product); ``split[(i, j)]``
    is the k of the optimal split of ``A_i..A_j`` (1-based, inclusive).
    """

    dims: tuple[int, ...]
    op_count: int
    split: dict[tuple[int, int], int]

    @property
    def n(self) -> int:
        return len(self.dims) - 1

    def tree(self, i: int = 1, j: int | None = None) -> str:
        """Parenthesised tree, e.g. ``((A1(A2A3))((A4A5)A6))``."""
        j = self.n if j is None else j
        if i == j:
            return f"A{i}"
        k = self.split[(i, j)]
        return f"({self.tree(i, k)}{self.tree(k + 1, j)})"

    def nodes(self) -> list[tuple[int, int]]:
        """Intermediate nodes (i, j), children before parents (post-order)."""
        out: list[tuple[int, int]] = []

        def walk(i: int, j: int) -> None:
            if i == j:
                return
            k = self.split[(i, j)]
            walk(i, k)
            walk(k + 1, j)
            out.append((i, j))

        walk(1, self.n)
        return out


def min_op_count(dims: Sequence[int]) -> ChainOrder:
    """Classic O(n^3) matrix-chain ordering DP (004 Algorithm 10); ties keep the smallest k."""
    dims = tuple(dims)
    if len(dims) < 2:
        raise ValueError(f"dims must hold at least 2 sizes (one matrix), got {dims!r}")
    for idx, v in enumerate(dims):
        _check_dims(**{f"dims[{idx}]": v})
    n = len(dims) - 1
    cost: dict[tuple[int, int], int] = {(i, i): 0 for i in range(1, n + 1)}
    split: dict[tuple[int, int], int] = {}
    for length in range(1, n):
        for i in range(1, n - length + 1):
            j = i + length
            best, best_k = None, None
            for k in range(i, j):
                c = cost[(i, k)] + cost[(k + 1, j)] + dims[i - 1] * dims[k] * dims[j]
                if best is None or c < best:
                    best, best_k = c, k
            cost[(i, j)] = best  # type: ignore[assignment]
            split[(i, j)] = best_k  # type: ignore[assignment]
    return ChainOrder(dims, cost[(1, n)], split)


def compulsory_words(dims: Sequence[int]) -> int:
    """The elements a chain of ``dims`` moves however it is blocked: every input read once and the result
    written once. A model volume below it means tiles of sqrt(M) elements larger than the matrices, outside
    the blocking model's range (004 app. D)."""
    dims = tuple(dims)
    return sum(p * q for p, q in zip(dims, dims[1:])) + dims[0] * dims[-1]


def unfused_data_movement(order: ChainOrder, m_elems: int) -> int:
    """S(1, n) of D.18: every product of the tree kept-output blocked and written off chip.

    S(i, j) = S(i, k) + S(k+1, j) + 2 P[i-1] P[k] P[j] / sqrt(M) + P[i-1] P[j] (elements).
    """
    _check_dims(m_elems=m_elems)
    p = order.dims
    s: dict[tuple[int, int], int] = {}
    for (i, j) in order.nodes():
        k = order.split[(i, j)]
        s[(i, j)] = (s.get((i, k), 0) + s.get((k + 1, j), 0)
                     + _floor_over_sqrt_m(2 * p[i - 1] * p[k] * p[j], m_elems) + p[i - 1] * p[j])
    return s.get((1, order.n), 0)


@dataclass(frozen=True)
class NodeCost:
    """Local and subtree costs of one intermediate node (004 Fig. D.11), elements.

    ``h_left``/``h_right`` and ``f_left``/``f_right`` are None where that fusion is not
    possible (the child is a leaf). ``choice`` is "none", "left" or "right"; the tile
    sizes are those of the chosen kernel (unrounded).
    """

    i: int
    j: int
    h_none: int
    h_left: int | None
    h_right: int | None
    f_none: int
    f_left: int | None
    f_right: int | None
    f_best: int
    choice: str
    tile_x: float
    tile_y: float


@dataclass(frozen=True)
class FusedPlan:
    """Hyper-node optimum over a minimum-op-count tree (004 §D.6).

    ``total_words`` is F(1, n) + P0 Pn (elements), the final result's write included;
    ``nodes`` holds the costs of every intermediate node of the tree.
    """

    total_words: int
    nodes: dict[tuple[int, int], NodeCost]
    split: dict[tuple[int, int], int]
    n: int

    def kernels(self) -> list[tuple[tuple[int, int], str]]:
        """Kernels actually executed, root first: nodes not absorbed into a fused parent.

        Each entry is ((i, j), choice); a fused node's absorbed child does not appear.
        """
        out: list[tuple[tuple[int, int], str]] = []

        def visit(i: int, j: int) -> None:
            if i == j:
                return
            node = self.nodes[(i, j)]
            out.append(((i, j), node.choice))
            k = self.split[(i, j)]
            if node.choice == "left":
                k1 = self.split[(i, k)]
                parts = [(i, k1), (k1 + 1, k), (k + 1, j)]
            elif node.choice == "right":
                k2 = self.split[(k + 1, j)]
                parts = [(i, k), (k + 1, k2), (k2 + 1, j)]
            else:
                parts = [(i, k), (k + 1, j)]
            for a, b in parts:
                visit(a, b)

        visit(1, self.n)
        return out


def fused_data_movement(order: ChainOrder, m_elems: int, alpha_mode: AlphaMode = "derived",
                        beta_mode: BetaMode = "printed") -> FusedPlan:
    """Minimum data movement over ``order``'s tree with Two-MM fusion, D.19-D.26 (elements).

    w(i, j) = P[i-1] P[j] for an intermediate node, 0 for a leaf (D.19);
    h0 = w(i,k) + w(k+1,j) + 2 P[i-1] P[k] P[j] / sqrt(M) (D.20);
    h_l = w(i,k1) + w(k1+1,k) + w(k+1,j) + [D.10 cubic term] - 2 w(i,j) (D.21);
    h_r = w(k+1,k2) + w(k2+1,j) + w(i,k) + [D.14 cubic term] - 2 w(i,j) (D.22);
    F0 = F(i,k) + F(k+1,j) + h0; F_l = F(i,k1) + F(k1+1,k) + F(k+1,j) + h_l;
    F_r = F(i,k) + F(k+1,k2) + F(k2+1,j) + h_r; F = min of the legal ones (D.23-D.26).
    """
    _check_dims(m_elems=m_elems)
    if alpha_mode not in ("derived", "printed"):
        raise ValueError(f"alpha_mode must be 'derived' or 'printed', got {alpha_mode!r}")
    if beta_mode not in ("derived", "printed"):
        raise ValueError(f"beta_mode must be 'derived' or 'printed', got {beta_mode!r}")
    p = order.dims
    sp = order.split
    root_m = math.sqrt(m_elems)

    def w(i: int, j: int) -> int:
        return 0 if i == j else p[i - 1] * p[j]

    f: dict[tuple[int, int], int] = {}
    nodes: dict[tuple[int, int], NodeCost] = {}

    def fval(i: int, j: int) -> int:
        return 0 if i == j else f[(i, j)]

    for (i, j) in order.nodes():
        k = sp[(i, j)]
        h0 = w(i, k) + w(k + 1, j) + _floor_over_sqrt_m(2 * p[i - 1] * p[k] * p[j], m_elems)
        f0 = fval(i, k) + fval(k + 1, j) + h0
        hl = fl = hr = fr = None
        tiles = {"none": (root_m, root_m)}
        if k > i:  # left child is an intermediate node
            k1 = sp[(i, k)]
            alpha = p[j] / (p[k1] if alpha_mode == "derived" else p[k])
            ap = _prime(alpha)
            hl = (w(i, k1) + w(k1 + 1, k) + w(k + 1, j)
                  + _floor_over_sqrt_m(2 * p[i - 1] * p[k1] * p[k], m_elems, (1 + alpha) * math.sqrt(ap))
                  - 2 * w(i, j))
            fl = fval(i, k1) + fval(k1 + 1, k) + fval(k + 1, j) + hl
            tiles["left"] = (math.sqrt(m_elems / ap), math.sqrt(m_elems * ap))
        if k + 1 < j:  # right child is an intermediate node
            k2 = sp[(k + 1, j)]
            beta = p[i - 1] / (p[k] if beta_mode == "printed" else p[k2])
            bp = _prime(beta)
            hr = (w(k + 1, k2) + w(k2 + 1, j) + w(i, k)
                  + _floor_over_sqrt_m(2 * p[k] * p[k2] * p[j], m_elems, (1 + beta) * math.sqrt(bp))
                  - 2 * w(i, j))
            fr = fval(i, k) + fval(k + 1, k2) + fval(k2 + 1, j) + hr
            tiles["right"] = (math.sqrt(m_elems * bp), math.sqrt(m_elems / bp))
        candidates = [("none", f0), ("left", fl), ("right", fr)]
        choice, best = min(((c, v) for c, v in candidates if v is not None), key=lambda cv: cv[1])
        f[(i, j)] = best
        tx, ty = tiles[choice]
        nodes[(i, j)] = NodeCost(i, j, h0, hl, hr, f0, fl, fr, best, choice, tx, ty)
    total = fval(1, order.n) + p[0] * p[order.n]
    return FusedPlan(total, nodes, dict(sp), order.n)

"""Adaptive octree and U-lists of the volume FMM (geometry only).

Builds the leaf boxes of an adaptive, 2:1-balanced octree over the unit cube
from a seeded point sample, lists every leaf's U-list (itself and every leaf it
touches through a face, an edge or a corner) and classifies each interaction by
its relative position (003 §3.1, 003:L89):

* a *kind* is the relative position of the source box to the target box: the
  level difference ``d = level(source) - level(target)`` in {-1, 0, +1} and the
  offset of the centres in half-edges of the smaller box.  Same level:
  offsets in {-2, 0, 2}^3 (27 kinds, the target itself included); source one
  level finer: offsets in {-3, -1, 1, 3}^3 without the 8 inside the target
  (56 kinds); source one level coarser: the same 56 offsets.  27 + 56 + 56 =
  139, the paper's number of distinct U-list blocks.
* a *class* is an orbit of kinds under the cube's 48 symmetries (signed axis
  permutations), which keep the level difference: the sorted absolute offsets
  identify it.  Same level: self, face, edge, corner (4); each of the two
  level differences: one, two or three offsets of 3 (3 + 3); 4 + 3 + 3 = 10,
  the paper's number of precomputed matrices Â_j.  Every kind carries the
  signed permutation that maps its class representative onto it and the edge
  ratio source/target ``2**d`` (the scale factor of the level difference; a
  kernel homogeneous of degree -1 integrated over a box of edge h scales the
  whole block by h**2; 003:L89 states the scale invariance up to a constant factor, not the factor).

All geometry is integer: positions are coordinates on a 2**MAX_DEPTH grid and
boxes are keyed by the Morton (Z-order) code of their lower corner, so a sorted
code array and ``searchsorted`` answer "which leaf contains this point".

The paper keeps the problem size N fixed by adjusting the number of leaves
(003:L127), so each leaf of its volume FMM holds N_q discretisation points and
N = N_oct N_q (Table 2, 003:L176-L180: 6917 x 35 = 242 095, ..., 358 x 680 = 243 440).
:func:`build_octree` is the plain adaptive rule (refine a box holding more than
a given number of sample points); :func:`volume_fmm_tree` picks that bound so
that N_oct N_q comes closest to N, which is how the Table 2 trees are
reproduced (see :func:`table2_stats`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

import numpy as np

from workloads import tree_kernel

MAX_DEPTH = 20  # grid of 2**20 cells per axis; Morton codes use 60 bits
_GRID = 1 << MAX_DEPTH

DensityKind = Literal["uniform", "plummer", "gaussian"]


#: The lowest Chebyshev degree q of a tree, its generator, studies and model (dimensionless): degree 0 is one
#: value per leaf box, a degenerate expansion that runs like any other.
MIN_ORDER = 0


def leaf_points(q: int) -> int:
    """N_q = (q+1)(q+2)(q+3)/6, the values per leaf box of a Chebyshev expansion of degree ``q`` (003 Table 1,
    003:L166)."""
    if int(q) != q or q < MIN_ORDER:
        raise ValueError(f"q must be an integer >= {MIN_ORDER}, got {q!r}")
    q = int(q)
    return (q + 1) * (q + 2) * (q + 3) // 6


# --------------------------------------------------------------------------- points


@dataclass(frozen=True)
class Density:
    """A point density on the unit cube.

    ``kind``: "uniform"; "plummer" (``n_clusters`` Plummer spheres of core radius
    ``scale``, centres drawn uniformly in [0.25, 0.75]^3); "gaussian"
    (``n_clusters`` isotropic Gaussians of standard deviation ``scale``, same
    centres).  Points falling outside the cube are redrawn.  Lengths are in
    units of the cube edge.
    """

    kind: DensityKind = "uniform"
    n_clusters: int = 1
    scale: float = 0.1

    def __post_init__(self) -> None:
        if self.kind not in ("uniform", "plummer", "gaussian"):
            raise ValueError(
                f"kind must be 'uniform', 'plummer' or 'gaussian', got {self.kind!r}"
            )
        if self.n_clusters < 1:
            raise ValueError(f"n_clusters must be >= 1, got {self.n_clusters!r}")
        if not (0.0 < self.scale <= 1.0):
            raise ValueError(f"scale must be in (0, 1] (cube edges), got {self.scale!r}")


#: Points drawn, converted or looked up per step of the tree's array work, so that its temporaries stay
#: a few MiB whatever the number of points.
CHUNK_POINTS = 1 << 16


def _cluster_offsets(kind: str, n: int, scale: float, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """``n`` offsets from a cluster centre (unit-cube lengths), :data:`CHUNK_POINTS` rows at a time. The
    generator's draws are those of whole-array calls (a uniform for every point, then three normals for
    every point), which it hands out in the same order in pieces."""
    if kind == "gaussian":
        for lo in range(0, n, CHUNK_POINTS):
            yield rng.normal(0.0, scale, size=(min(CHUNK_POINTS, n - lo), 3))
        return
    # Plummer: enclosed mass fraction u = r^3 / (r^2 + a^2)^(3/2)  ->  r = a / sqrt(u^(-2/3) - 1)
    u = rng.uniform(1e-12, 1.0 - 1e-12, size=n)
    for lo in range(0, n, CHUNK_POINTS):
        r = scale / np.sqrt(u[lo:lo + CHUNK_POINTS] ** (-2.0 / 3.0) - 1.0)
        v = rng.normal(size=(r.size, 3))
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        yield v * r[:, None]


def sample_points(n_points: int, density: Density = Density(), seed: int = 0) -> np.ndarray:
    """``n_points`` x 3 array of positions in [0, 1)^3 drawn from ``density`` (deterministic in ``seed``)."""
    out = np.empty((n_points, 3))
    kept = 0
    for points in _point_chunks(n_points, density, seed):
        out[kept:kept + len(points)] = points
        kept += len(points)
    return out


def sample_codes(n_points: int, density: Density = Density(), seed: int = 0) -> np.ndarray:
    """:func:`point_codes` of :func:`sample_points`, drawn and converted a chunk at a time, so that the
    positions are never held all at once."""
    codes = np.empty(n_points, dtype=np.uint64)
    kept = 0
    for points in _point_chunks(n_points, density, seed):
        codes[kept:kept + len(points)] = morton_codes(grid_coords(points))
        kept += len(points)
    codes.sort()
    return codes


def _point_chunks(n_points: int, density: Density, seed: int) -> Iterator[np.ndarray]:
    """The positions :func:`sample_points` returns, in order, a few thousand at a time (points outside the
    cube are redrawn in further rounds)."""
    if n_points < 1:
        raise ValueError(f"n_points must be >= 1, got {n_points!r}")
    rng = np.random.default_rng(seed)
    if density.kind == "uniform":  # one uniform per coordinate, drawn in the order of a whole-array call
        for lo in range(0, n_points, CHUNK_POINTS):
            yield rng.random((min(CHUNK_POINTS, n_points - lo), 3))
        return
    centres = rng.uniform(0.25, 0.75, size=(density.n_clusters, 3))
    kept = 0
    while kept < n_points:
        need = n_points - kept
        which = rng.integers(0, density.n_clusters, size=need)
        lo = 0
        for offsets in _cluster_offsets(density.kind, need, density.scale, rng):
            p = centres[which[lo:lo + len(offsets)]] + offsets
            lo += len(offsets)
            p = p[np.all((p >= 0.0) & (p < 1.0), axis=1)]
            kept += len(p)
            yield p


# --------------------------------------------------------------------------- Morton codes


def morton_codes(coords: np.ndarray) -> np.ndarray:
    """Morton codes (uint64) of integer grid coordinates ``coords`` (..., 3), x in the lowest bit."""
    c = np.asarray(coords, dtype=np.int64)
    if c.ndim == 0 or c.shape[-1] != 3:
        raise ValueError(f"coords must have shape (..., 3), got {c.shape}")
    return tree_kernel.morton_codes(np.ascontiguousarray(c.reshape(-1, 3))).reshape(c.shape[:-1])


def point_codes(points: np.ndarray) -> np.ndarray:
    """Sorted Morton codes (uint64) of the grid cells of positions ``points`` (n x 3, in [0, 1)^3), converted
    :data:`CHUNK_POINTS` points at a time."""
    p = np.asarray(points, dtype=float)
    if p.ndim != 2 or p.shape[1] != 3:
        raise ValueError(f"points must have shape (n, 3), got {p.shape}")
    codes = np.empty(len(p), dtype=np.uint64)
    for lo in range(0, len(p), CHUNK_POINTS):
        codes[lo:lo + CHUNK_POINTS] = morton_codes(grid_coords(p[lo:lo + CHUNK_POINTS]))
    codes.sort()
    return codes


def grid_coords(points: np.ndarray) -> np.ndarray:
    """Integer cell coordinates (int64, n x 3) of positions in [0, 1)^3 on the 2**MAX_DEPTH grid."""
    p = np.asarray(points, dtype=float)
    if p.ndim != 2 or p.shape[1] != 3:
        raise ValueError(f"points must have shape (n, 3), got {p.shape}")
    if np.any(p < 0.0) or np.any(p >= 1.0):
        raise ValueError("points must lie in [0, 1)^3")
    return np.minimum((p * _GRID).astype(np.int64), _GRID - 1)


# --------------------------------------------------------------------------- octree


@dataclass(frozen=True)
class Octree:
    """Leaves of an octree over the unit cube, sorted by Morton code of the lower corner.

    ``levels``: level of each leaf (root = 0, edge 2**-level); ``corners``: lower
    corner in grid cells (int64, n x 3); ``codes``: Morton code of the corner;
    ``counts``: sample points inside each leaf.
    """

    levels: np.ndarray
    corners: np.ndarray
    codes: np.ndarray
    counts: np.ndarray

    @property
    def n_leaves(self) -> int:
        """Number of leaf boxes (N_oct)."""
        return int(self.levels.size)

    def sizes(self) -> np.ndarray:
        """Edge of each leaf in grid cells."""
        return np.left_shift(np.int64(1), (MAX_DEPTH - self.levels).astype(np.int64))


_CHILD = np.array([[i & 1, (i >> 1) & 1, (i >> 2) & 1] for i in range(8)], dtype=np.int64)

# Fine shell: the 56 boxes of half the edge that surround a box (4^3 minus its own 2^3 children),
# in units of the half edge relative to the box's corner.
_SHELL = np.array(
    [
        (i, j, k)
        for i in (-1, 0, 1, 2)
        for j in (-1, 0, 1, 2)
        for k in (-1, 0, 1, 2)
        if not (i in (0, 1) and j in (0, 1) and k in (0, 1))
    ],
    dtype=np.int64,
)


def _children(levels: np.ndarray, corners: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    half = np.left_shift(np.int64(1), (MAX_DEPTH - levels - 1).astype(np.int64))
    c = corners[:, None, :] + _CHILD[None, :, :] * half[:, None, None]
    return np.repeat(levels + 1, 8), c.reshape(-1, 3)


def _count(sorted_codes: np.ndarray, levels: np.ndarray, codes: np.ndarray) -> np.ndarray:
    span = np.left_shift(np.uint64(1), (3 * (MAX_DEPTH - levels)).astype(np.uint64))
    lo = np.searchsorted(sorted_codes, codes, side="left")
    hi = np.searchsorted(sorted_codes, codes + span, side="left")
    return (hi - lo).astype(np.int64)


def _sorted(levels: np.ndarray, corners: np.ndarray, sorted_codes: np.ndarray) -> Octree:
    codes = morton_codes(corners)
    order = np.argsort(codes, kind="stable")
    lv, cr, cd = levels[order], corners[order], codes[order]
    return Octree(lv, cr, cd, _count(sorted_codes, lv, cd))


def _shell_lookup(tree: Octree, periodic: bool, lo: int = 0,
                  hi: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each leaf of ``lo:hi`` (default: all) and each of its 56 fine-shell boxes: index of the leaf
    holding the box's corner (-1 where the box lies outside a non-periodic cube), whether it is valid, and
    the shift (grid cells, n x 56 x 3) from the wrapped to the unwrapped position (zero unless ``periodic``)."""
    levels, corners = tree.levels[lo:hi], tree.corners[lo:hi]
    half = np.left_shift(np.int64(1), (MAX_DEPTH - levels - 1).astype(np.int64))
    q = corners[:, None, :] + _SHELL[None, :, :] * half[:, None, None]
    if periodic:
        wrapped = np.mod(q, _GRID)
        inside = np.ones(q.shape[:2], dtype=bool)
    else:
        wrapped = np.clip(q, 0, _GRID - 1)
        inside = np.all((q >= 0) & (q < _GRID), axis=2)
    idx = np.searchsorted(tree.codes, morton_codes(wrapped), side="right") - 1
    return np.where(inside, idx, -1), inside, q - wrapped


def balance(tree: Octree, sorted_codes: np.ndarray, periodic: bool = False) -> Octree:
    """Refine leaves until every two touching leaves (face, edge or corner; across the
    faces of the cube too if ``periodic``) differ by at most one level."""
    levels, corners = tree.levels, tree.corners
    while True:
        refine = tree_kernel.needs_refinement(tree.levels, tree.corners, tree.codes, _SHELL, MAX_DEPTH, periodic)
        if not refine.any():
            return tree
        cl, cc = _children(levels[refine], corners[refine])
        levels = np.concatenate([levels[~refine], cl])
        corners = np.concatenate([corners[~refine], cc])
        tree = _sorted(levels, corners, sorted_codes)
        levels, corners = tree.levels, tree.corners


def build_octree(
    points: np.ndarray,
    max_points_per_leaf: int,
    max_level: int = 12,
    balanced: bool = True,
    periodic: bool = False,
) -> Octree:
    """Adaptive octree: refine every box holding more than ``max_points_per_leaf`` of ``points``
    (positions in [0, 1)^3) down to ``max_level``, then 2:1-balance it (corner neighbours
    included; across the cube's faces too if ``periodic``)."""
    if max_points_per_leaf < 1:
        raise ValueError(f"max_points_per_leaf must be >= 1, got {max_points_per_leaf!r}")
    if not (1 <= max_level < MAX_DEPTH):
        raise ValueError(f"max_level must be in [1, {MAX_DEPTH - 1}], got {max_level!r}")
    sorted_codes = point_codes(points)
    tree = _build_sorted(sorted_codes, int(max_points_per_leaf), int(max_level))
    return balance(tree, sorted_codes, periodic) if balanced else tree


def _build_sorted(sorted_codes: np.ndarray, cap: int, max_level: int) -> Octree:
    lv = np.zeros(1, dtype=np.int64)
    cr = np.zeros((1, 3), dtype=np.int64)
    leaf_lv, leaf_cr = [], []
    while lv.size:
        cnt = _count(sorted_codes, lv, morton_codes(cr))
        split = (cnt > cap) & (lv < max_level)
        leaf_lv.append(lv[~split])
        leaf_cr.append(cr[~split])
        lv, cr = _children(lv[split], cr[split]) if split.any() else (lv[:0], cr[:0])
    return _sorted(np.concatenate(leaf_lv), np.concatenate(leaf_cr), sorted_codes)


def volume_fmm_tree(
    points: np.ndarray, n_q: int, n_total: int, max_level: int = 12, periodic: bool = False
) -> tuple[Octree, int]:
    """Balanced adaptive octree whose leaf count N_oct makes N_oct * n_q closest to ``n_total``.

    The refinement rule is that of :func:`build_octree`; the bound on sample
    points per leaf is the one (searched by bisection; the balanced leaf count
    falls monotonically as the bound grows) giving the leaf count nearest to
    ``n_total / n_q``.  This is the paper's "problem size fixed at N by adjusting
    the number of leaf nodes" (003:L127).  Returns the tree and the bound.
    """
    return volume_fmm_tree_of_codes(point_codes(points), n_q, n_total, max_level, periodic)


def volume_fmm_tree_of_codes(
    sorted_codes: np.ndarray, n_q: int, n_total: int, max_level: int = 12, periodic: bool = False,
    max_leaves: int | None = None,
) -> tuple[Octree, int]:
    """:func:`volume_fmm_tree` of the points whose sorted Morton codes are ``sorted_codes``
    (:func:`point_codes`), so that a caller need not keep the points themselves. With ``max_leaves``, the search
    stops with TooManyLeaves as soon as a tree it has built shows that the one it returns would have more leaves
    (a tree of fewer leaves than the target bounds the result from below: the search only moves to smaller caps,
    which give more leaves)."""
    if n_q < 1 or n_total < n_q:
        raise ValueError(f"need 1 <= n_q <= n_total, got n_q={n_q!r}, n_total={n_total!r}")
    if not (1 <= max_level < MAX_DEPTH):
        raise ValueError(f"max_level must be in [1, {MAX_DEPTH - 1}], got {max_level!r}")
    target = n_total / n_q
    lo, hi = 1, len(sorted_codes)  # leaves(lo) >= leaves(hi)
    cache: dict[int, Octree] = {}  # the trees of the bounds lo and hi, as far as built

    def tree_for(cap: int) -> Octree:
        if cap not in cache:
            raw = _build_sorted(sorted_codes, cap, max_level)
            cache[cap] = balance(raw, sorted_codes, periodic)
        return cache[cap]

    if tree_for(hi).n_leaves >= target:
        return tree_for(hi), hi
    while hi - lo > 1:  # leaves(hi) < target; leaves(lo) >= target unless lo == 1
        mid = (lo + hi) // 2
        if tree_for(mid).n_leaves >= target:
            lo = mid
        else:
            hi = mid
            if max_leaves is not None and tree_for(hi).n_leaves > max_leaves:
                raise TooManyLeaves(max_leaves)
        for cap in [c for c in cache if c not in (lo, hi)]:  # a bound passed over is not needed again
            del cache[cap]
    best = min((lo, hi), key=lambda c: (abs(tree_for(c).n_leaves - target), c))  # lo only if needed
    return tree_for(best), best


# --------------------------------------------------------------------------- kinds and classes


@dataclass(frozen=True)
class Kind:
    """One relative position (target box, source box) of a U-list interaction.

    ``level_diff``: level(source) - level(target); ``offset``: centre of the source
    minus centre of the target, in half-edges of the smaller box; ``class_id``: the
    symmetry class 0..9; ``perm``/``signs``: the signed permutation with
    ``offset[i] = signs[i] * representative[perm[i]]``; ``edge_ratio``: source edge /
    target edge = 2**(-level_diff).
    """

    level_diff: int
    offset: tuple[int, int, int]
    class_id: int
    perm: tuple[int, int, int]
    signs: tuple[int, int, int]
    edge_ratio: float


def _class_key(level_diff: int, offset: tuple[int, int, int]) -> tuple[int, tuple[int, ...]]:
    return level_diff, tuple(sorted(abs(o) for o in offset))


def _enumerate_kinds() -> tuple[tuple[Kind, ...], tuple[tuple[int, tuple[int, ...]], ...]]:
    same = [(0, (a, b, c)) for a in (-2, 0, 2) for b in (-2, 0, 2) for c in (-2, 0, 2)]
    ring = [
        (a, b, c)
        for a in (-3, -1, 1, 3)
        for b in (-3, -1, 1, 3)
        for c in (-3, -1, 1, 3)
        if max(abs(a), abs(b), abs(c)) == 3
    ]
    raw = same + [(1, o) for o in ring] + [(-1, o) for o in ring]
    keys = sorted({_class_key(d, o) for d, o in raw}, key=lambda k: (abs(k[0]), -k[0], k[1]))
    kinds = []
    for d, o in raw:
        a = [abs(v) for v in o]
        order = sorted(range(3), key=lambda i: (a[i], i))  # representative[j] = a[order[j]]
        perm = tuple(order.index(i) for i in range(3))
        signs = tuple(-1 if v < 0 else 1 for v in o)
        kinds.append(Kind(d, o, keys.index(_class_key(d, o)), perm, signs, 2.0 ** (-d)))
    return tuple(kinds), tuple(keys)


KINDS, CLASS_KEYS = _enumerate_kinds()
"""All 139 relative positions and the 10 class keys (level_diff, sorted |offset|)."""

_KIND_INDEX = np.full(3 * 7 * 7 * 7, -1, dtype=np.int64)
for _i, _k in enumerate(KINDS):
    _KIND_INDEX[((_k.level_diff + 1) * 7 + _k.offset[0] + 3) * 49 + (_k.offset[1] + 3) * 7 + _k.offset[2] + 3] = _i
_KIND_CLASS = np.array([k.class_id for k in KINDS], dtype=np.int64)


# --------------------------------------------------------------------------- U-lists


@dataclass(frozen=True)
class UList:
    """All U-list interactions of a tree: parallel arrays, one entry per (target, source) pair.

    ``target``/``source``: leaf indices; ``kind``: index into :data:`KINDS`;
    ``class_id``: 0..9 (int32 each).
    """

    target: np.ndarray
    source: np.ndarray
    kind: np.ndarray
    class_id: np.ndarray


#: Target leaves whose U-lists are listed per step (their 56 shell boxes' lookups take about 2 MiB).
CHUNK_LEAVES = 1024


class TooManyLeaves(ValueError):
    """``volume_fmm_tree_of_codes`` stopped: its tree would hold more than ``max_leaves`` (``args[0]``)."""


class TooManyInteractions(ValueError):
    """``u_lists`` stopped: the U-lists hold more than the ``max_interactions`` asked for (``args[0]``)."""


def u_lists(tree: Octree, periodic: bool = False, max_interactions: int | None = None) -> UList:
    """U-list of every leaf of a 2:1-balanced ``tree``: itself and every leaf it touches
    (through the cube's faces too if ``periodic``; a leaf met at two different relative
    positions through the periodic wrap counts once per position). The interactions are
    sorted by target, then source, then kind; the arrays are int32 (leaf indices and kinds
    fit), listed :data:`CHUNK_LEAVES` targets at a time. Past ``max_interactions`` it stops, raising
    TooManyInteractions, so that a caller with a budget does not list all of them."""
    parts, listed = [], 0
    for lo in range(0, tree.n_leaves, CHUNK_LEAVES):
        parts.append(list(_u_list_part(tree, periodic, lo, min(lo + CHUNK_LEAVES, tree.n_leaves))))
        listed += len(parts[-1][0])
        if max_interactions is not None and listed > max_interactions:
            raise TooManyInteractions(max_interactions)
    fields = []
    for f in range(4):  # one field at a time, its parts dropped once joined
        fields.append(np.concatenate([p[f] for p in parts]) if parts else np.zeros(0, np.int32))
        for p in parts:
            p[f] = None
    return UList(*fields)


def _u_list_part(tree: Octree, periodic: bool, lo: int, hi: int) -> tuple[np.ndarray, ...]:
    """(target, source, kind, class_id) of the interactions of target leaves ``lo:hi``, sorted (``u_lists``)."""
    idx, inside, shift = _shell_lookup(tree, periodic, lo, hi)
    if np.any(inside & (tree.levels[np.maximum(idx, 0)] > tree.levels[lo:hi, None] + 1)):
        raise ValueError("tree is not 2:1 balanced; call balance() with the same periodic flag")
    n = tree.n_leaves
    row, col = np.nonzero(inside)
    own = np.arange(lo, hi)
    tgt = np.concatenate([own, lo + row])
    src = np.concatenate([own, idx[row, col]])
    sft = np.concatenate([np.zeros((hi - lo, 3), dtype=np.int64), shift[row, col]])

    size = tree.sizes()
    centre2 = 2 * tree.corners + size[:, None]  # doubled centres, grid cells
    small = np.minimum(size[tgt], size[src])
    off = (centre2[src] + 2 * sft - centre2[tgt]) // small[:, None]
    d = tree.levels[src] - tree.levels[tgt]
    if np.any(np.abs(d) > 1) or np.any(np.abs(off) > 3):
        raise ValueError("interaction outside the 139 U-list positions")
    code = ((d + 1) * 7 + off[:, 0] + 3) * 49 + (off[:, 1] + 3) * 7 + off[:, 2] + 3
    kind = _KIND_INDEX[code]
    if np.any(kind < 0):
        raise ValueError("interaction outside the 139 U-list positions")
    key = np.unique((tgt * n + src) * len(KINDS) + kind)  # every target of the part is in lo:hi
    kind = key % len(KINDS)
    pair = key // len(KINDS)
    return ((pair // n).astype(np.int32), (pair % n).astype(np.int32), kind.astype(np.int32),
            _KIND_CLASS[kind].astype(np.int32))


@dataclass(frozen=True)
class UListStats:
    """Summary of a tree's U-list (003 Table 1-2, 003:L162-L181).

    ``n_oct``: leaf boxes; ``n_u``: U-list interactions (self included);
    ``class_counts``: interactions per class 0..9; ``kinds_used``: distinct
    relative positions that occur (<= 139).
    """

    n_q: int
    n_oct: int
    n_u: int
    class_counts: tuple[int, ...]
    kinds_used: int

    @property
    def gemm_n(self) -> int:
        """Average GEMM width n = N_U / 10 (003 Table 2)."""
        return self.n_u // 10


def ulist_stats(tree: Octree, n_q: int, periodic: bool = False) -> UListStats:
    """Counts of the U-list of ``tree`` for leaves of ``n_q`` points."""
    ul = u_lists(tree, periodic)
    counts = np.bincount(ul.class_id, minlength=len(CLASS_KEYS))
    return UListStats(
        n_q=int(n_q),
        n_oct=tree.n_leaves,
        n_u=int(ul.target.size),
        class_counts=tuple(int(c) for c in counts),
        kinds_used=int(np.unique(ul.kind).size),
    )


TABLE2_DENSITY = Density("plummer", n_clusters=1, scale=0.1)
"""Density used to reproduce 003 Table 2: one Plummer sphere of core radius 0.1."""

TABLE2_PERIODIC = True
"""Domain used to reproduce 003 Table 2: periodic (see :func:`table2_stats`)."""


def table2_stats(
    q: int,
    n_total: int = 240_000,
    density: Density = TABLE2_DENSITY,
    periodic: bool = TABLE2_PERIODIC,
    seed: int = 0,
) -> UListStats:
    """U-list statistics of the volume FMM tree for order ``q`` and problem size ``n_total``
    (``n_total`` samples of ``density``; N_oct N_q closest to ``n_total``).

    Choice of domain: 003 does not state its boundary condition.  Its N_U / N_oct
    stays at 23.2-23.8 from 183 to 6917 leaves (Table 2).  In a free-space cube
    the leaves on the boundary lose neighbours and the ratio falls with the leaf
    count (about 20.6 at 358 leaves for this density), so N_U is 10-20 % low for
    q >= 14; with a periodic domain the ratio stays at 23.4-25 for every density
    tried (uniform, Plummer, Gaussian) and N_U is within 5 % of Table 2 for q = 4..18.
    """
    n_q = leaf_points(q)
    pts = sample_points(n_total, density, seed)
    tree, _ = volume_fmm_tree(pts, n_q, n_total, periodic=periodic)
    return ulist_stats(tree, n_q, periodic)

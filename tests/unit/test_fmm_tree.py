"""Tests of the FMM octree generator, U-lists and the 139-kind / 10-class classification."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from simulator.studies.references import reference_table
from workloads.fmm_tree import (
    CLASS_KEYS,
    KINDS,
    _SHELL,
    MAX_DEPTH,
    Density,
    Octree,
    TooManyInteractions,
    TooManyLeaves,
    build_octree,
    leaf_points,
    morton_codes,
    sample_points,
    table2_stats,
    u_lists,
    ulist_stats,
    point_codes,
    volume_fmm_tree,
    volume_fmm_tree_of_codes,
)
from workloads.tree_kernel import needs_refinement

# 003 Table 2: q -> (N_q, N_oct, N_U), from the cited reference table (results/reference/asri_fmm.csv)
TABLE2 = {q: tuple(int(v) for v in row)
          for q, row in reference_table("asri_fmm", "003 Table 2", ("N_q", "N_oct", "N_U")).items()}


# --------------------------------------------------------------------------- N_q


@pytest.mark.parametrize("q", sorted(TABLE2))
def test_leaf_points_matches_table2(q: int) -> None:
    assert leaf_points(q) == TABLE2[q][0]


@pytest.mark.parametrize("q", range(0, 12))
def test_leaf_points_counts_monomials_of_degree_at_most_q(q: int) -> None:
    n = sum(1 for i, j, k in itertools.product(range(q + 1), repeat=3) if i + j + k <= q)
    assert leaf_points(q) == n


@pytest.mark.parametrize("bad", [-1, 2.5])
def test_leaf_points_rejects_bad_order(bad: float) -> None:
    with pytest.raises(ValueError, match="q must be"):
        leaf_points(bad)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- points and Morton codes


def test_sampling_is_seeded_and_inside_cube() -> None:
    d = Density("plummer", n_clusters=3, scale=0.05)
    a = sample_points(5000, d, seed=7)
    assert a.shape == (5000, 3)
    assert np.all((a >= 0) & (a < 1))
    np.testing.assert_array_equal(a, sample_points(5000, d, seed=7))
    assert not np.array_equal(a, sample_points(5000, d, seed=8))


def test_clustered_density_is_more_concentrated_than_uniform() -> None:
    u = sample_points(20000, Density("uniform"), 1)
    c = sample_points(20000, Density("gaussian", 1, 0.05), 1)
    # fraction of points in the fullest of the 512 level-3 cells
    def peak(p: np.ndarray) -> float:
        cells = np.floor(p * 8).astype(int) @ np.array([64, 8, 1])
        return np.bincount(cells, minlength=512).max() / len(p)

    assert peak(c) > 20 * peak(u)


def test_density_validation() -> None:
    with pytest.raises(ValueError, match="kind"):
        Density("cubic")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="n_clusters"):
        Density("plummer", 0)
    with pytest.raises(ValueError, match="scale"):
        Density("plummer", 1, 0.0)


def test_morton_codes_interleave_bits() -> None:
    rng = np.random.default_rng(0)
    c = rng.integers(0, 1 << MAX_DEPTH, size=(200, 3))
    got = morton_codes(c)
    for (x, y, z), code in zip(c, got):
        want = 0
        for bit in range(MAX_DEPTH):
            want |= ((int(x) >> bit) & 1) << (3 * bit)
            want |= ((int(y) >> bit) & 1) << (3 * bit + 1)
            want |= ((int(z) >> bit) & 1) << (3 * bit + 2)
        assert int(code) == want
    # any leading shape (the U-list lookup passes leaves x 56 x 3) keeps its shape
    np.testing.assert_array_equal(morton_codes(c.reshape(4, 50, 3)), got.reshape(4, 50))
    assert morton_codes(c[0]).shape == ()
    with pytest.raises(ValueError, match=r"shape \(\.\.\., 3\), got \(5, 2\)"):
        morton_codes(np.zeros((5, 2), dtype=np.int64))


# --------------------------------------------------------------------------- tree invariants


def _boxes(tree: Octree) -> tuple[np.ndarray, np.ndarray]:
    size = tree.sizes()
    return tree.corners, tree.corners + size[:, None]


def _touching_pairs(tree: Octree, periodic: bool) -> set[tuple[int, int]]:
    """Brute force: ordered pairs of distinct leaves whose closed boxes intersect (or the
    box of one intersects a periodic image of the other)."""
    lo, hi = _boxes(tree)
    grid = 1 << MAX_DEPTH
    shifts = [np.zeros(3, dtype=np.int64)]
    if periodic:
        shifts = [np.array(s, dtype=np.int64) * grid for s in itertools.product((-1, 0, 1), repeat=3)]
    pairs = set()
    for sh in shifts:
        ok = np.all(
            (lo[:, None, :] <= hi[None, :, :] + sh) & (lo[None, :, :] + sh <= hi[:, None, :]), axis=2
        )
        for t, s in zip(*np.nonzero(ok)):
            if t != s:
                pairs.add((int(t), int(s)))
    return pairs


@pytest.fixture(scope="module")
def small_points() -> np.ndarray:
    return sample_points(3000, Density("plummer", 2, 0.05), seed=3)


def test_leaves_partition_the_cube(small_points: np.ndarray) -> None:
    tree = build_octree(small_points, 20)
    volume = np.sum(tree.sizes().astype(float) ** 3) / float(1 << MAX_DEPTH) ** 3
    assert volume == pytest.approx(1.0, abs=0)
    # sorted Morton ranges are contiguous: each leaf starts where the previous ends
    span = np.left_shift(np.uint64(1), (3 * (MAX_DEPTH - tree.levels)).astype(np.uint64))
    assert tree.codes[0] == 0
    np.testing.assert_array_equal(tree.codes[1:], tree.codes[:-1] + span[:-1])
    assert tree.counts.sum() == len(small_points)
    assert (tree.n_leaves - 1) % 7 == 0  # every refinement turns one leaf into eight


def test_unbalanced_tree_respects_capacity_and_is_minimal(small_points: np.ndarray) -> None:
    cap = 20
    tree = build_octree(small_points, cap, balanced=False)
    assert tree.counts.max() <= cap
    # every leaf's parent held more than cap points (otherwise it would not have been split)
    parent_size = 2 * tree.sizes()
    parent_corner = tree.corners - tree.corners % parent_size[:, None]
    p = np.floor(small_points * (1 << MAX_DEPTH)).astype(np.int64)
    for corner, size in zip(parent_corner[:50], parent_size[:50]):
        inside = np.all((p >= corner) & (p < corner + size), axis=1).sum()
        assert inside > cap


@pytest.mark.parametrize("periodic", [False, True])
def test_balance_and_ulists_match_brute_force(small_points: np.ndarray, periodic: bool) -> None:
    tree = build_octree(small_points, 20, periodic=periodic)
    pairs = _touching_pairs(tree, periodic)
    assert all(abs(int(tree.levels[t]) - int(tree.levels[s])) <= 1 for t, s in pairs)
    unbalanced = build_octree(small_points, 20, balanced=False)
    assert tree.n_leaves > unbalanced.n_leaves  # balancing had work to do on this density

    ul = u_lists(tree, periodic)
    got = {(int(t), int(s)) for t, s in zip(ul.target, ul.source) if t != s}
    assert got == pairs
    assert np.sum(ul.target == ul.source) == tree.n_leaves  # every leaf interacts with itself once


@pytest.mark.parametrize("periodic", [False, True])
def test_refinement_check_finds_exactly_the_leaves_touching_a_much_finer_one(
        small_points: np.ndarray, periodic: bool) -> None:
    tree = build_octree(small_points, 20, balanced=False)
    expected = np.zeros(tree.n_leaves, dtype=bool)
    for t, s in _touching_pairs(tree, periodic):
        if tree.levels[s] > tree.levels[t] + 1:
            expected[t] = True
    assert 0 < expected.sum() < tree.n_leaves  # both answers occur on this density
    got = needs_refinement(tree.levels, tree.corners, tree.codes, _SHELL, MAX_DEPTH, periodic)
    np.testing.assert_array_equal(got, expected)


def test_ulists_refuse_unbalanced_tree(small_points: np.ndarray) -> None:
    tree = build_octree(small_points, 5, balanced=False)
    with pytest.raises(ValueError, match="balanced"):
        u_lists(tree)


@pytest.mark.parametrize("k", [4, 8])
def test_uniform_grid_interaction_counts(k: int) -> None:
    # one point per cell of a k^3 grid and capacity 1 give the uniform level-log2(k) tree
    ax = (np.arange(k) + 0.5) / k
    pts = np.array(list(itertools.product(ax, ax, ax)))
    tree = build_octree(pts, 1)
    assert tree.n_leaves == k**3 and np.all(tree.levels == int(np.log2(k)))
    assert ulist_stats(tree, 1).n_u == (3 * k - 2) ** 3  # free space: per axis 3k-2 (target, source) pairs
    assert ulist_stats(tree, 1, periodic=True).n_u == 27 * k**3


# --------------------------------------------------------------------------- kinds and classes


def test_139_kinds_in_10_classes() -> None:
    assert len(KINDS) == 139
    assert len({(k.level_diff, k.offset) for k in KINDS}) == 139
    assert len(CLASS_KEYS) == 10
    sizes = np.bincount([k.class_id for k in KINDS])
    # same level: self, 6 faces, 12 edges, 8 corners; each level difference: 24, 24, 8
    assert sorted(sizes.tolist()) == sorted([1, 6, 12, 8, 24, 24, 8, 24, 24, 8])
    assert sum(1 for k in KINDS if k.level_diff == 0) == 27
    assert sum(1 for k in KINDS if k.level_diff == 1) == 56


def test_classes_are_orbits_of_the_48_cube_symmetries() -> None:
    group = [
        (perm, signs)
        for perm in itertools.permutations(range(3))
        for signs in itertools.product((-1, 1), repeat=3)
    ]
    assert len(group) == 48
    by_pos = {(k.level_diff, k.offset): k for k in KINDS}
    for k in KINDS:
        orbit = {
            (k.level_diff, tuple(s[i] * k.offset[p[i]] for i in range(3))) for p, s in group
        }
        assert orbit == {(o.level_diff, o.offset) for o in KINDS if o.class_id == k.class_id}
        assert all(by_pos[x].class_id == k.class_id for x in orbit)


def test_kind_metadata_maps_representative_onto_kind() -> None:
    for k in KINDS:
        rep = CLASS_KEYS[k.class_id][1]
        assert tuple(k.signs[i] * rep[k.perm[i]] for i in range(3)) == k.offset
        assert sorted(k.perm) == [0, 1, 2]
        assert k.edge_ratio == 2.0 ** (-k.level_diff)


def test_interaction_kinds_agree_with_geometry(small_points: np.ndarray) -> None:
    tree = build_octree(small_points, 20)
    ul = u_lists(tree)
    size = tree.sizes().astype(float)
    centre = tree.corners + size[:, None] / 2
    for t, s, kind in list(zip(ul.target, ul.source, ul.kind))[::7]:
        k = KINDS[kind]
        half_small = min(size[t], size[s]) / 2
        np.testing.assert_array_equal((centre[s] - centre[t]) / half_small, k.offset)
        assert tree.levels[s] - tree.levels[t] == k.level_diff


# --------------------------------------------------------------------------- Table 2


@pytest.fixture(scope="module")
def table2() -> dict[int, object]:
    return {q: table2_stats(q) for q in TABLE2}


@pytest.mark.parametrize("q", sorted(TABLE2))
def test_table2_reproduced_within_10_percent(table2: dict, q: int) -> None:
    n_q, n_oct, n_u = TABLE2[q]
    s = table2[q]
    assert s.n_q == n_q
    assert s.n_oct == pytest.approx(n_oct, rel=0.10)
    assert s.n_u == pytest.approx(n_u, rel=0.10)
    assert sum(s.class_counts) == s.n_u
    assert s.class_counts[0] == s.n_oct  # the self interaction
    assert s.kinds_used <= 139
    assert sum(c > 0 for c in s.class_counts) == 10


def test_volume_tree_keeps_problem_size(table2: dict) -> None:
    for q, s in table2.items():
        assert s.n_oct * s.n_q == pytest.approx(240_000, rel=0.05)


def test_free_space_domain_loses_interactions_on_small_trees() -> None:
    # documented in table2_stats: without periodicity N_U falls short at q = 18
    s = table2_stats(18, periodic=False)
    assert s.n_u < 0.9 * TABLE2[18][2]
    s4 = table2_stats(6, periodic=False)
    assert s4.n_u == pytest.approx(TABLE2[6][2], rel=0.10)


def test_plain_rule_with_nq_points_per_leaf_overshoots_leaf_count() -> None:
    # N sample points and at most N_q per leaf: leaves are partly filled, so N_oct > N / N_q
    pts = sample_points(240_000, Density("plummer", 1, 0.1), 0)
    tree = build_octree(pts, leaf_points(8))
    assert tree.counts.max() <= leaf_points(8)
    assert tree.n_leaves > 2 * TABLE2[8][1]


def test_volume_tree_validation(small_points: np.ndarray) -> None:
    with pytest.raises(ValueError, match="n_q"):
        volume_fmm_tree(small_points, 0, 100)
    with pytest.raises(ValueError, match="max_points_per_leaf"):
        build_octree(small_points, 0)
    with pytest.raises(ValueError, match="points"):
        build_octree(np.array([[0.5, 0.5, 1.0]]), 1)


@pytest.mark.parametrize("periodic", [False, True])
@pytest.mark.parametrize("cap", [1, 20, 400])
def test_every_leaf_of_a_tree_of_several_has_at_least_eight_interactions(small_points, periodic, cap) -> None:
    """The bound the FMM generator refuses a tree by before listing its U-lists: itself and at least one leaf in
    each of its parent box's seven other octants."""
    tree = build_octree(small_points, cap, periodic=periodic)
    ul = u_lists(tree, periodic)
    assert tree.n_leaves > 1 and np.bincount(ul.target, minlength=tree.n_leaves).min() >= 8


def test_a_budget_stops_the_listing_and_the_tree_search_only_past_it(small_points, monkeypatch) -> None:
    from workloads import fmm_tree

    tree = build_octree(small_points, 20)
    n_u = len(u_lists(tree).target)
    assert len(u_lists(tree, max_interactions=n_u).target) == n_u
    with pytest.raises(TooManyInteractions):
        u_lists(tree, max_interactions=n_u - 1)
    # in chunks of 16 targets, a budget of half the interactions stops the listing near half way
    listed = []
    real = fmm_tree._u_list_part
    monkeypatch.setattr(fmm_tree, "CHUNK_LEAVES", 16)
    monkeypatch.setattr(fmm_tree, "_u_list_part", lambda *args: listed.append(args[2]) or real(*args))
    with pytest.raises(TooManyInteractions):
        u_lists(tree, max_interactions=n_u // 2)
    assert 0 < len(listed) < 0.75 * -(-tree.n_leaves // 16)
    codes = point_codes(small_points)
    tree, cap = volume_fmm_tree_of_codes(codes, 20, len(small_points))
    assert volume_fmm_tree_of_codes(codes, 20, len(small_points), max_leaves=tree.n_leaves)[1] == cap
    with pytest.raises(TooManyLeaves):
        volume_fmm_tree_of_codes(codes, 20, len(small_points), max_leaves=tree.n_leaves // 2)

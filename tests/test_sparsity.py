"""Sparsity by serial-chain segments (SKO.md §13): predicted patterns of ℰ_φ, φ and ℳ against
the tree relations, the dense operators and Algorithm 4.2."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given

import sko.algorithms as alg
from sko.graphs import SKOError, TreeDigraph

from .strategies import random_model, sko_models, trees


def _node_blocks(model, A, slices) -> np.ndarray:
    return np.array([[bool(np.any(A[a, b] != 0)) for b in slices] for a in slices], dtype=bool)


@given(trees(max_bodies=20))
def test_node_pattern_matches_tree_relations(tree):
    """The segment-derived node pattern equals the tree's own relations: ℰ_φ(i, j) iff i = ℘(j),
    φ(i, j) iff i = j or i is an ancestor of j, ℳ(i, j) iff related."""
    pattern = alg.node_pattern(tree)
    bodies = tree.bodies
    assert pattern.labels == bodies
    for r, i in enumerate(bodies):
        for c, j in enumerate(bodies):
            assert pattern.E[r, c] == (tree.parent(j) == i and tree.parent(j) is not None)
            assert pattern.phi[r, c] == (i == j or tree.is_ancestor(i, j))
            assert pattern.mass_matrix[r, c] == tree.related(i, j)


@given(trees(max_bodies=20))
def test_segment_pattern_structure(tree):
    """Diagonal ℰ_φ segment blocks exactly for multi-body segments, one connector per branch arc;
    φ upper (ancestor) and ℳ related at segment level; a node pattern aggregates to them."""
    segs = tree.segments()
    branches = tree.branch_tree()
    seg = alg.segment_pattern(tree)
    node = alg.node_pattern(tree)
    off_diagonal = seg.E & ~np.eye(len(segs), dtype=bool)
    assert off_diagonal.sum() == sum(branches.parent(s) is not None for s in range(len(segs)))
    assert np.array_equal(np.diag(seg.E), [len(s) > 1 for s in segs])
    assert np.array_equal(alg.segment_blocks(tree, node.E), seg.E)
    assert np.array_equal(alg.segment_blocks(tree, node.phi), seg.phi)
    assert np.array_equal(alg.segment_blocks(tree, node.mass_matrix), seg.mass_matrix)
    order = alg.segment_order(tree)
    assert sorted(map(repr, order)) == sorted(map(repr, tree.bodies))
    positions = {k: n for n, k in enumerate(order)}
    for s in segs:  # segments are contiguous, base → tip
        assert [positions[k] for k in s] == list(range(positions[s[0]], positions[s[0]] + len(s)))


@given(sko_models(singular=False))
def test_predicted_pattern_equals_dense_operators(model):
    """With full-rank generic weights the dense ℰ_φ, φ and ℳ have exactly the predicted block pattern."""
    d = model.dense()
    pattern = alg.node_pattern(model.tree)
    ns, ds = model.node_slices, model.dof_slices
    assert np.array_equal(_node_blocks(model, d.E, ns), pattern.E)
    assert np.array_equal(_node_blocks(model, d.phi, ns), pattern.phi)
    assert np.array_equal(_node_blocks(model, d.mass_matrix, ds), pattern.mass_matrix)
    for level in ("node", "segment"):
        comparison = alg.compare_mass_matrix_pattern(model, level)
        assert comparison.matches, (comparison.unexpected, comparison.missing)


@given(sko_models())
def test_dense_mass_matrix_never_fills_a_predicted_zero(model):
    """With singular weights some related blocks may vanish, but never the other way round: the
    nonzero blocks of the dense ``H φ M φ* H*`` (computed independently of Algorithm 4.2, which
    only ever writes related blocks) lie inside the predicted pattern."""
    comparison = alg.compare_mass_matrix_pattern(model)
    assert comparison.unexpected == ()
    assert np.array_equal(comparison.computed, alg.mass_matrix_pattern(model))
    dense = alg.mass_matrix_pattern(model, model.dense().mass_matrix)
    assert np.array_equal(dense, _node_blocks(model, model.dense().mass_matrix, model.dof_slices))
    assert not np.any(dense & ~comparison.predicted)
    assert np.array_equal(comparison.predicted, alg.node_pattern(model.tree).mass_matrix)


def test_zero_weight_is_reported_as_missing():
    tree = TreeDigraph.from_parents({"a": None, "b": "a"})
    model = random_model(tree, 0, node_dim=2, singular=False)
    from sko import SKOModel

    zero = SKOModel(tree, {"b": np.zeros((2, 2))}, dict(model.H), dict(model.M))
    comparison = alg.compare_mass_matrix_pattern(zero)
    assert not comparison.matches and comparison.unexpected == ()
    assert set(comparison.missing) == {("a", "b"), ("b", "a")}
    with pytest.raises(SKOError, match="level"):
        alg.compare_mass_matrix_pattern(zero, "body")

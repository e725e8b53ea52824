"""Regular and canonical renumberings, parent arrays and the expanded parent array.

RBDA Table 6.4 exactly; then on random trees (forests, arbitrary labels and stacking order) and
random hinge dimensions: ``λ'(k) < k``, the dof tree's ancestry against the body tree's, the
positions of the dofs in an SKO model's stacked hinge vector, and the branch-induced sparsity of
the dense mass matrix ``ℳ = H φ M φ* H*`` (SPARSE.md).
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sko.graphs import (
    DimensionError,
    NotATreeError,
    TreeDigraph,
    UnknownNodeError,
    canonical_renumbering,
    check_parent_array,
    dof_parent_array,
    dof_tree,
    expanded_parent_array,
    is_canonical,
    is_regular,
    parent_array,
    regular_renumbering,
)
from tests.strategies import random_model, trees

TABLE_6_4_PARENTS = (0, 1, 1, 2, 2, 3)
TABLE_6_4_DOFS = (1, 3, 1, 1, 1, 1)
TABLE_6_4_EXPANDED = (0, 1, 2, 3, 1, 4, 4, 5)


def _chain_of(parents, k):
    """``λ'(k), λ'(λ'(k)), …`` (1-based, 0 excluded)."""
    found = []
    while parents[k - 1]:
        k = parents[k - 1]
        found.append(k)
    return found


# ----------------------------------------------------------------------------- Table 6.4


def test_table_6_4_expanded_parent_array():
    """λ = (0, 1, 1, 2, 2, 3), joint 2 with three dofs → λ' = (0, 1, 2, 3, 1, 4, 4, 5)."""
    assert expanded_parent_array(TABLE_6_4_PARENTS, TABLE_6_4_DOFS) == TABLE_6_4_EXPANDED


def test_table_6_4_from_a_tree_digraph():
    """The same example through a TreeDigraph with per-body hinge dimensions, and its dof tree:
    joint 2's three dofs occupy q̈ entries 2, 3, 4 and form a chain."""
    tree = TreeDigraph.from_parents({i: (p or None) for i, p in enumerate(TABLE_6_4_PARENTS, start=1)})
    dims = dict(zip(tree.bodies, TABLE_6_4_DOFS))
    assert parent_array(tree) == TABLE_6_4_PARENTS
    assert dof_parent_array(tree, dims) == TABLE_6_4_EXPANDED
    dofs = dof_tree(tree, dims)
    assert dofs.bodies == ((1, 0), (2, 0), (2, 1), (2, 2), (3, 0), (4, 0), (5, 0), (6, 0))
    assert parent_array(dofs) == TABLE_6_4_EXPANDED
    assert dofs.parent((4, 0)) == (2, 2) and dofs.parent((3, 0)) == (1, 0)
    # the text's map array (0, 1, 4, 5, 6, 7, 8): joint i owns dofs map(i-1)+1 … map(i)
    assert tuple(np.cumsum((0,) + TABLE_6_4_DOFS)) == (0, 1, 4, 5, 6, 7, 8)


def test_single_dof_joints_leave_the_array_unchanged():
    assert expanded_parent_array(TABLE_6_4_PARENTS, (1,) * 6) == TABLE_6_4_PARENTS


def test_zero_dof_joint_passes_its_children_up():
    """A weld (no dof) adds no edge: the children of joint 2 hang from joint 1's last dof."""
    assert expanded_parent_array((0, 1, 2, 2), (2, 0, 1, 1)) == (0, 1, 2, 2)
    assert expanded_parent_array((0, 1), (0, 2)) == (0, 1)


# ----------------------------------------------------------------------------- renumbering


def test_renumberings_small():
    tree = TreeDigraph.from_parents({"c": "b", "d": "a", "a": None, "b": "a"})
    assert not is_regular(tree) and not is_canonical(tree)
    regular = regular_renumbering(tree)
    assert regular.bodies == ("a", "d", "b", "c") and is_regular(regular)
    canonical = canonical_renumbering(tree)
    assert canonical.bodies == ("c", "d", "b", "a") and is_canonical(canonical)
    assert parent_array(regular) == (0, 1, 1, 3)


@given(trees(max_bodies=15))
def test_renumberings_properties(tree):
    for renumber, check in ((regular_renumbering, is_regular), (canonical_renumbering, is_canonical)):
        new = renumber(tree)
        assert check(new)
        assert new.root == tree.root
        assert sorted(map(repr, new.bodies)) == sorted(map(repr, tree.bodies))
        assert all(new.parent(k) == tree.parent(k) for k in tree.bodies)
        assert renumber(new).bodies == new.bodies  # a numbering with the property is kept
    lam = parent_array(regular_renumbering(tree))
    assert all(0 <= p < i for i, p in enumerate(lam, start=1))
    assert sum(p == 0 for p in lam) == len(tree.base_bodies())


def test_renumbering_keeps_a_custom_root():
    G = nx.DiGraph()
    G.add_nodes_from(["d", "ground", "c"])
    G.add_edges_from([("ground", "c"), ("c", "d")])
    tree = TreeDigraph.from_networkx(G, "ground")
    assert tree.bodies == ("d", "c")
    for renumbered, bodies in ((regular_renumbering(tree), ("c", "d")), (canonical_renumbering(tree), ("d", "c"))):
        assert renumbered.root == "ground" and renumbered.bodies == bodies
        assert renumbered.parent("d") == "c" and renumbered.parent("c") is None


# ----------------------------------------------------------------------------- dof trees


@given(trees(max_bodies=12), st.integers(0, 2**32 - 1))
def test_expanded_parent_array_matches_the_body_ancestry(tree, seed):
    """``λ'(k) < k``; dof j is an ancestor of dof k iff their bodies are related that way, or
    they belong to the same body with j < k."""
    rng = np.random.default_rng(seed)
    tree = regular_renumbering(tree)
    dims = {k: int(rng.integers(0, 4)) for k in tree.bodies}
    lam = dof_parent_array(tree, dims)
    owner = [k for k in tree.bodies for _ in range(dims[k])]
    assert len(lam) == sum(dims.values())
    assert all(0 <= p < k for k, p in enumerate(lam, start=1))
    for k in range(1, len(lam) + 1):
        ancestors = set(_chain_of(lam, k))
        for j in range(1, len(lam) + 1):
            a, b = owner[j - 1], owner[k - 1]
            expected = tree.is_ancestor(a, b) or (a == b and j < k)
            assert (j in ancestors) == expected, (j, k, a, b)
    dofs = dof_tree(tree, dims)
    assert parent_array(dofs) == lam
    assert expanded_parent_array(parent_array(tree), [dims[k] for k in tree.bodies]) == lam


@given(trees(max_bodies=10), st.integers(0, 2**32 - 1))
def test_dof_tree_of_any_numbering_matches_the_model(tree, seed):
    """For any stacking order the dof tree stacks dof ``(k, r)`` where the SKO model's stacked
    hinge vector has it, and its ancestry is the body tree's."""
    model = random_model(tree, seed)
    dofs = dof_tree(tree, model.dof_dims())
    assert len(dofs) == model.dof_size
    for k in tree.bodies:
        for r in range(model.dof_dim(k)):
            assert dofs.index((k, r)) == model.dof_slice(k).start + r
    for (a, r) in dofs.bodies:
        for (b, s) in dofs.bodies:
            expected = tree.is_ancestor(a, b) or (a == b and r < s)
            assert dofs.is_ancestor((a, r), (b, s)) == expected


@given(trees(max_bodies=10), st.integers(0, 2**32 - 1))
def test_branch_induced_sparsity_of_the_mass_matrix(tree, seed):
    """``ℳ(k, j) ≠ 0`` below the diagonal only for ``j`` on the ``λ'`` chain of ``k``, and on a
    generic model every such entry is non-zero (SPARSE.md)."""
    model = random_model(regular_renumbering(tree), seed, singular=False)
    lam = dof_parent_array(model.tree, model.dof_dims())
    mass = model.dense().mass_matrix
    scale = np.abs(mass).max()
    for k in range(1, len(lam) + 1):
        chain = set(_chain_of(lam, k))
        for j in range(1, k):
            if j in chain:
                assert abs(mass[k - 1, j - 1]) > 1e-12 * scale
            else:
                assert mass[k - 1, j - 1] == 0


# ----------------------------------------------------------------------------- errors


def test_parent_array_needs_a_regular_tree():
    tree = TreeDigraph.from_parents({"b": "a", "a": None})
    with pytest.raises(NotATreeError, match="body 'b' .* stacked before its parent 'a'"):
        parent_array(tree)
    with pytest.raises(NotATreeError, match="not regular"):
        dof_parent_array(tree, {"a": 1, "b": 1})


def test_check_parent_array():
    assert check_parent_array(np.array([0, 1, 1])) == (0, 1, 1)
    with pytest.raises(NotATreeError, match=r"λ\(3\) = 3 breaks"):
        check_parent_array((0, 1, 3))
    with pytest.raises(NotATreeError, match=r"λ\(2\) = -1 breaks"):
        check_parent_array((0, -1))
    with pytest.raises(NotATreeError, match=r"λ\(2\) = 1.0 is not an integer"):
        check_parent_array((0, 1.0))


def test_expanded_parent_array_errors():
    with pytest.raises(DimensionError, match="2 dof counts for 3 joints"):
        expanded_parent_array((0, 1, 1), (1, 1))
    with pytest.raises(DimensionError, match="joint 2 has dof count -1"):
        expanded_parent_array((0, 1), (1, -1))
    with pytest.raises(NotATreeError, match=r"λ\(2\) = 2"):
        expanded_parent_array((0, 2), (1, 1))


def test_hinge_dimension_errors():
    tree = TreeDigraph.from_parents({"a": None, "b": "a"})
    with pytest.raises(UnknownNodeError, match="'z'"):
        dof_tree(tree, {"a": 1, "b": 1, "z": 1})
    with pytest.raises(DimensionError, match=r"missing for bodies \['b'\]"):
        dof_parent_array(tree, {"a": 1})
    with pytest.raises(DimensionError, match="body 'b' has hinge dimension 1.5"):
        dof_tree(tree, {"a": 1, "b": 1.5})
    with pytest.raises(DimensionError, match="mapping"):
        dof_tree(tree, [1, 1])

"""BWA matrices, nilpotency and 1-resolvents (SKO.md §2)."""

import numpy as np
import pytest
import sympy
from hypothesis import given
from hypothesis import strategies as st

from sko.graphs import DimensionError, NonFiniteError, NotATreeError, SKOError, TreeDigraph, UnknownNodeError, bwa_matrix, check_weights, nilpotency_index, one_resolvent
from sko.graphs import block_offsets

from .strategies import model_data, random_tree, trees
from .util import assert_close


def path_product(tree, weights, i, j, m):
    """φ(i, j) = φ(i, c1) φ(c1, c2) ⋯ φ(c_r, j) along the path, I on the diagonal."""
    block = np.eye(m[j])
    for child in reversed(tree.path(i, j)[1:]):
        block = weights[child] @ block
    return block


@given(trees(max_bodies=14), st.integers(0, 2**32 - 1))
def test_resolvent_blocks_are_path_products(tree, seed):
    phi, _, M = model_data(tree, seed)
    m = {k: M[k].shape[0] for k in tree.bodies}
    E = bwa_matrix(tree, m, phi)
    off = block_offsets(tree, m)
    Phi = one_resolvent(E)
    assert_close(Phi, np.linalg.inv(np.eye(E.shape[0]) - E), rtol=1e-9)
    blk = lambda A, i, j: A[off[tree.index(i)] : off[tree.index(i) + 1], off[tree.index(j)] : off[tree.index(j) + 1]]
    for i in tree.bodies:
        for j in tree.bodies:
            if i == j or tree.is_ancestor(i, j):
                assert_close(blk(Phi, i, j), path_product(tree, phi, i, j, m), rtol=1e-12, scale=max(1.0, np.abs(Phi).max()))
            else:
                assert not blk(Phi, i, j).any()  # unrelated or descendant: exactly zero
            if tree.parent(j) == i:
                assert np.array_equal(blk(E, i, j), phi[j])
            else:
                assert not blk(E, i, j).any()


@given(trees(max_bodies=14), st.integers(0, 2**32 - 1))
def test_nilpotency_index_is_height_plus_one(tree, seed):
    phi, _, M = model_data(tree, seed, singular=False)
    E = bwa_matrix(tree, {k: M[k].shape[0] for k in tree.bodies}, phi)
    assert nilpotency_index(E) == tree.height + 1 == tree.nilpotency_index()


def test_sparse_and_symbolic_assembly():
    tree = random_tree(9, seed=3, shape="forest")
    phi, _, M = model_data(tree, 4)
    m = {k: M[k].shape[0] for k in tree.bodies}
    E = bwa_matrix(tree, m, phi)
    Es = bwa_matrix(tree, m, phi, sparse=True)
    assert np.array_equal(Es.toarray(), E)
    assert np.allclose(one_resolvent(Es).toarray(), one_resolvent(E))
    assert nilpotency_index(Es) == nilpotency_index(E)
    x = sympy.symbols("x0:6")
    sym_tree = random_tree(3, seed=0, shape="chain", labels="str")
    a, b, c = sym_tree.scatter_order()
    Esym = bwa_matrix(sym_tree, {a: 1, b: 2, c: 1}, {b: np.array([[x[0], x[1]]], dtype=object), c: np.array([[x[2]], [x[3]]], dtype=object)})
    Phi = one_resolvent(Esym)
    product = sympy.Matrix(Phi) * (sympy.eye(4) - sympy.Matrix(Esym))
    assert sympy.simplify(product - sympy.eye(4)) == sympy.zeros(4, 4)
    with pytest.raises(SKOError, match="object"):
        bwa_matrix(sym_tree, {a: 1, b: 2, c: 1}, {b: np.array([[x[0], x[1]]], dtype=object), c: np.array([[x[2]], [x[3]]], dtype=object)}, sparse=True)


def test_cyclic_matrices_have_no_resolvent():
    E = np.array([[0.0, 1.0], [1.0, 0.0]])
    with pytest.raises(NotATreeError, match="not nilpotent"):
        nilpotency_index(E)
    with pytest.raises(NotATreeError, match="no 1-resolvent"):
        one_resolvent(E)


def test_weight_validation_names_the_body_and_shapes():
    tree = random_tree(3, seed=0, shape="chain", labels="str")
    a, b, c = tree.scatter_order()
    dims = {a: 2, b: 3, c: 1}
    good = {b: np.ones((2, 3)), c: np.ones((3, 1))}
    with pytest.raises(DimensionError, match=rf"{c!r}.*\(2, 1\).*\(3, 1\)"):
        bwa_matrix(tree, dims, {**good, c: np.ones((2, 1))})
    with pytest.raises(DimensionError, match=rf"missing.*{b!r}"):
        bwa_matrix(tree, dims, {c: good[c]})
    with pytest.raises(DimensionError, match=rf"base body {a!r}"):
        bwa_matrix(tree, dims, {**good, a: np.ones((2, 2))})
    with pytest.raises(UnknownNodeError, match="'zz'"):
        bwa_matrix(tree, dims, {**good, "zz": np.ones((1, 1))})
    with pytest.raises(DimensionError, match="no dimension"):
        bwa_matrix(tree, {a: 2, b: 3}, good)
    with pytest.raises(DimensionError, match="non-negative integer"):
        bwa_matrix(tree, {**dims, c: 1.5}, good)
    with pytest.raises(DimensionError, match=rf"weight phi\({b!r}, {c!r}\) of body {c!r} is not an array"):
        bwa_matrix(tree, dims, {**good, c: [[1.0], [1.0, 2.0], [1.0]]})
    with pytest.raises(NonFiniteError, match=rf"of body {c!r}"):
        bwa_matrix(tree, dims, {**good, c: np.full((3, 1), np.nan)})


def test_checked_weights_are_read_only_copies():
    tree = TreeDigraph.from_parents({"a": None, "b": "a"})
    W = np.ones((1, 2), dtype=int)
    out = check_weights(tree, {"a": 1, "b": 2}, {"b": W})
    assert out["b"].dtype == float and not out["b"].flags.writeable
    W[0, 0] = 5
    assert out["b"][0, 0] == 1.0

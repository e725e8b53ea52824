"""Forward and backward Lyapunov recursions, composite inertias and Algorithm 4.2
(SKO.md §6, §7) against the dense operator expressions."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given
from hypothesis import strategies as st

import sko.algorithms as alg
from sko.graphs import DimensionError, SKOError, TreeDigraph, UnknownNodeError, bwa_matrix, one_resolvent
from sko import SKOModel

from .strategies import ill_conditioned_models, random_model, random_tree, random_weights, sko_models, trees
from .util import assert_close


def _scale(*arrays) -> float:
    return max(np.abs(a).max(initial=0.0) for a in arrays)


def _blocks(model, seed, symmetric=False) -> dict:
    rng = np.random.default_rng(seed)
    X = {k: rng.standard_normal((model.node_dim(k),) * 2) for k in model.bodies}
    return {k: A @ A.T for k, A in X.items()} if symmetric else X


def _dense_setup(model, seed):
    """Random block-diagonal X, a second SPO's weights, and the dense X, φ1 (the model's), φ2."""
    X = _blocks(model, seed)
    W2 = random_weights(model, seed, singular=True)
    Xd = scipy.linalg.block_diag(*[X[k] for k in model.bodies])
    phi1 = model.dense().phi
    phi2 = one_resolvent(bwa_matrix(model.tree, model.node_dims(), W2))
    return X, W2, Xd, phi1, phi2


def _dense_block(model, Z, i, j):
    return Z[model.node_slice(i), model.node_slice(j)]


@given(sko_models(), st.integers(0, 2**32 - 1))
def test_forward_lyapunov_against_dense(model, seed):
    """``Y`` solves Eq. 12 block-diagonally, ``Z = φ1 X φ2* = Y + φ̃1 Y + Y φ̃2*`` (Eq. 11), every
    block by Eq. 15, unrelated blocks exactly zero."""
    X, W2, Xd, phi1, phi2 = _dense_setup(model, seed)
    result = alg.forward_lyapunov(model, X, weights2=W2)
    Z = phi1 @ Xd @ phi2.T
    Y = scipy.linalg.block_diag(*[result.Y[k] for k in model.bodies])
    E1 = model.dense().E
    E2 = bwa_matrix(model.tree, model.node_dims(), W2)
    scale = _scale(phi1) * _scale(phi2) * _scale(Xd) * Z.shape[0]
    assert_close(E1 @ Y @ E2.T + Xd, Y, 1e-11, scale)
    I = np.eye(Z.shape[0])
    assert_close(Y + (phi1 - I) @ Y + Y @ (phi2 - I).T, Z, 1e-11, scale)
    assert_close(result.matrix(), Z, 1e-11, scale)
    tree = model.tree
    for i in model.bodies:
        for j in model.bodies:
            block = result.block(i, j)
            assert_close(block, _dense_block(model, Z, i, j), 1e-11, scale)
            if not tree.related(i, j):
                assert not np.any(block) and not np.any(_dense_block(model, result.matrix(), i, j))


@given(sko_models(), st.integers(0, 2**32 - 1))
def test_backward_lyapunov_against_dense(model, seed):
    """``Y`` solves Eq. 22, every block of ``Z = φ1* X φ2`` by the four cases of Lemma 5
    (through the nearest common ancestor), zero across separate trees of a forest."""
    X, W2, Xd, phi1, phi2 = _dense_setup(model, seed)
    result = alg.backward_lyapunov(model, X, weights2=W2)
    Z = phi1.T @ Xd @ phi2
    Y = scipy.linalg.block_diag(*[result.Y[k] for k in model.bodies])
    E1 = model.dense().E
    E2 = bwa_matrix(model.tree, model.node_dims(), W2)
    mask = scipy.linalg.block_diag(*[np.ones((model.node_dim(k),) * 2) for k in model.bodies])
    scale = _scale(phi1) * _scale(phi2) * _scale(Xd) * Z.shape[0]
    assert_close(Xd + mask * (E1.T @ Y @ E2), Y, 1e-11, scale)
    assert_close(result.matrix(), Z, 1e-11, scale)
    tree = model.tree
    for i in model.bodies:
        for j in model.bodies:
            block = result.block(i, j)
            assert_close(block, _dense_block(model, Z, i, j), 1e-11, scale)
            if tree.nearest_common_ancestor(i, j) is None:
                assert not np.any(block)


@given(sko_models(tree_strategy=trees(shapes=("chain",))), st.integers(0, 2**32 - 1))
def test_backward_lyapunov_serial_chain_has_no_R(model, seed):
    """Lemma 6: on a serial chain every pair is related, ``φ1* X φ2 = Y + φ̃1* Y + Y φ̃2``."""
    X, W2, Xd, phi1, phi2 = _dense_setup(model, seed)
    result = alg.backward_lyapunov(model, X, weights2=W2)
    Y = scipy.linalg.block_diag(*[result.Y[k] for k in model.bodies])
    I = np.eye(Y.shape[0])
    scale = _scale(phi1) * _scale(phi2) * _scale(Xd) * Y.shape[0]
    assert_close(Y + (phi1 - I).T @ Y + Y @ (phi2 - I), phi1.T @ Xd @ phi2, 1e-11, scale)


def test_backward_lyapunov_is_fully_populated_on_a_branching_tree():
    """Unlike ``φ X φ*``, ``φ* X φ`` fills the unrelated blocks (through the common ancestor)."""
    tree = TreeDigraph.from_parents({"r": None, "a": "r", "b": "r"})
    model = random_model(tree, 0, singular=False)
    X = _blocks(model, 1, symmetric=True)
    assert np.any(alg.backward_lyapunov(model, X).block("a", "b"))
    assert not np.any(alg.forward_lyapunov(model, X).block("a", "b"))


@given(st.one_of(sko_models(), sko_models(hinge="zero-some")))
def test_composite_inertias_and_mass_matrix(model):
    """Algorithm 4.1 solves Eq. 18; Algorithm 4.2 equals ``H φ M φ* H*`` and Eq. 17, and leaves
    the blocks of unrelated pairs exactly zero."""
    d = model.dense()
    R = alg.composite_inertias(model)
    Rd = scipy.linalg.block_diag(*[R[k] for k in model.bodies])
    scale = _scale(d.phi) ** 2 * _scale(d.M) * d.M.shape[0]
    assert_close(d.E @ Rd @ d.E.T + d.M, Rd, 1e-11, scale)
    Mm = alg.mass_matrix(model)
    expected = d.mass_matrix
    mscale = scale * _scale(d.H) ** 2
    assert_close(Mm, expected, 1e-11, mscale)
    phi_t = d.phi_tilde
    assert_close(d.H @ Rd @ d.H.T + d.H @ phi_t @ Rd @ d.H.T + d.H @ Rd @ phi_t.T @ d.H.T, expected, 1e-11, mscale)
    assert_close(Mm, Mm.T, 1e-12, mscale)
    tree = model.tree
    for i in model.bodies:
        for j in model.bodies:
            if not tree.related(i, j):
                assert not np.any(Mm[model.dof_slice(i), model.dof_slice(j)])


@given(sko_models(max_node_dim=5))
def test_mass_matrix_columns_from_newton_euler(model):
    """Column ``c`` of ℳ is the inverse dynamics of the unit acceleration ``e_c`` (no ``a``, ``b``)."""
    Mm = alg.mass_matrix(model)
    E = np.eye(model.dof_size)
    columns = np.column_stack([alg.inverse_dynamics(model, E[:, c]) for c in range(model.dof_size)])
    assert_close(Mm, columns, 1e-11)


@given(ill_conditioned_models())
def test_mass_matrix_ill_conditioned(model):
    d = model.dense()
    scale = _scale(d.phi) ** 2 * _scale(d.M) * _scale(d.H) ** 2 * d.M.shape[0]
    assert_close(alg.mass_matrix(model), d.mass_matrix, 1e-11, scale)


def test_mass_matrix_of_a_fork():
    """A closed-form case: a base with two 1-dof children, all unit scalars."""
    tree = TreeDigraph.from_parents({0: None, 1: 0, 2: 0})
    model = SKOModel(tree, phi={1: [[1.0]], 2: [[2.0]]}, H={k: [[1.0]] for k in tree.bodies},
                     M={k: [[1.0]] for k in tree.bodies})
    np.testing.assert_array_equal(alg.mass_matrix(model), [[6.0, 1.0, 2.0], [1.0, 1.0, 0.0], [2.0, 0.0, 1.0]])


def test_lyapunov_input_errors():
    model = random_model(random_tree(4, 0, "chain", "str"), 0)
    X = _blocks(model, 0)
    k = model.bodies[0]
    with pytest.raises(DimensionError, match=repr(k)):
        alg.forward_lyapunov(model, {j: v for j, v in X.items() if j != k})
    with pytest.raises(DimensionError, match=repr(k)):
        alg.backward_lyapunov(model, {**X, k: np.zeros((model.node_dim(k) + 1,) * 2)})
    with pytest.raises(DimensionError, match="not bodies"):
        alg.forward_lyapunov(model, {**X, "nobody": np.eye(1)})
    with pytest.raises(SKOError, match="mapping"):
        alg.forward_lyapunov(model, [X[j] for j in model.bodies])
    with pytest.raises(DimensionError):
        alg.backward_lyapunov(model, X, weights1={j: np.eye(7) for j in model.bodies[1:]})
    with pytest.raises(UnknownNodeError):
        alg.forward_lyapunov(model, X).block(k, "nobody")
    X_before = {j: v.copy() for j, v in X.items()}
    alg.forward_lyapunov(model, X)
    alg.backward_lyapunov(model, X)
    assert all(np.array_equal(X[j], X_before[j]) for j in X)


@given(sko_models())
def test_forward_lyapunov_with_psi_gives_articulated_inertias(model):
    """Eq. 41: ``φ M ψ* = P + φ̃ P + P ψ̃*`` and ``ψ M ψ* = P + ψ̃ P + P ψ̃*``, so the forward
    Lyapunov recursion with ``X = M`` and ψ weights returns ``Y = P``."""
    ab = alg.articulated_inertias(model)
    mixed = alg.forward_lyapunov(model, model.M, weights2=ab.psi)
    both = alg.forward_lyapunov(model, model.M, weights1=ab.psi, weights2=ab.psi)
    cond = max(max(np.linalg.cond(D) for D in ab.D.values()), 100.0)  # P inherits every child's
    for k in model.bodies:
        scale = _scale(ab.P[k]) * cond * len(model.bodies)
        assert_close(mixed.Y[k], ab.P[k], 1e-13, scale)
        assert_close(both.Y[k], ab.P[k], 1e-13, scale)

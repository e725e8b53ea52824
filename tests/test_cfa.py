"""The constraint force algorithm (CFA.md) against the dense operators it implements, the AB
forward dynamics and Newton–Euler, on random models: forests, chains, fans, non-square and
singular weights, hinge dimensions 1..m_k (``n_k = m_k`` leaves ``W(k)`` empty)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.linalg
import sympy
from hypothesis import given
from hypothesis import strategies as st

import sko.algorithms as alg
from sko.graphs import DimensionError, SKOError, TreeDigraph
from sko import SKOModel

from .strategies import random_model, random_tree, sko_models, trees, vectors
from .util import assert_close

models = sko_models(max_node_dim=6)


def _dense(model):
    """Dense ``φ^{-1}``, ``M^{-1}``, ``W``, ``H⁺`` of the model (checking only)."""
    d = model.dense()
    split = alg.force_split(model)
    L = np.eye(d.E.shape[0]) - d.E
    W = scipy.linalg.block_diag(*split.W_by_index) if model.bodies else np.zeros((0, 0))
    Hp = scipy.linalg.block_diag(*split.H_plus_by_index)
    W = W.reshape(model.node_size, split.constraint_size)
    Hp = Hp.reshape(model.node_size, model.dof_size)
    Omega = L.T @ np.linalg.inv(d.M) @ L
    return d, split, W, Hp, Omega


def _cond(model) -> float:
    return np.linalg.cond(model.dense().mass_matrix)


@given(models)
def test_split_of_the_inter_node_force(model):
    """``H W = 0``, ``W* W = I``, ``H H⁺ = I``, ``W* H⁺ = 0``; any ``f`` splits and recombines."""
    split = alg.force_split(model)
    for k in model.bodies:
        Hk, Wk, Hp = model.H[k], split.W[k], split.H_plus[k]
        assert Wk.shape == (model.node_dim(k), model.node_dim(k) - model.dof_dim(k))
        assert split.constraint_dim(k) == Wk.shape[1]
        assert_close(Hk @ Wk, np.zeros((Hk.shape[0], Wk.shape[1])), 1e-12, np.abs(Hk).max())
        assert_close(Wk.T @ Wk, np.eye(Wk.shape[1]), 1e-12, 1.0)
        assert_close(Hk @ Hp, np.eye(Hk.shape[0]), 1e-13 * np.linalg.cond(Hk) * Hk.shape[1], 1.0)
        assert_close(Hp, Hk.T @ np.linalg.inv(Hk @ Hk.T), 1e-12 * np.linalg.cond(Hk) ** 2)
    f = vectors(model, 1, "node")
    F_T, F_S = alg.H_apply(model, f), alg.W_star_apply(split, f)
    assert_close(alg.H_plus_apply(split, F_T) + alg.W_apply(split, F_S), f, 1e-9 * max(np.linalg.cond(h) for h in model.H.values()))
    x = vectors(model, 2, "dof")
    assert_close(alg.W_star_apply(split, alg.H_plus_apply(split, x)), np.zeros(split.constraint_size), 1e-10, np.abs(x).max())
    assert_close(alg.H_plus_star_apply(split, f), np.concatenate([split.H_plus_by_index[i].T @ f[s] for i, s in enumerate(model.node_slices)]), 1e-14)


@given(models, st.integers(0, 2**32 - 1))
def test_phi_inverse_products(model, seed):
    d = model.dense()
    x = vectors(model, seed, "node")
    L = np.eye(model.node_size) - d.E
    assert_close(alg.phi_inverse_apply(model, x), L @ x, 1e-13)
    assert_close(alg.phi_inverse_star_apply(model, x), L.T @ x, 1e-13)
    assert_close(alg.phi_apply(model, alg.phi_inverse_apply(model, x)), x, 1e-9, np.abs(d.phi).max() * np.abs(L).max() * np.abs(x).max())


@given(models)
def test_A_equals_dense_and_is_spd(model):
    d, split, W, Hp, Omega = _dense(model)
    A = alg.constraint_matrix(model, split)
    expected = W.T @ Omega @ W
    assert A.shape == expected.shape == (split.constraint_size,) * 2
    assert_close(A.toarray(), expected, 1e-11)
    if split.constraint_size:
        np.linalg.cholesky(A.toarray())


def _block_pattern(model, split, A):
    cs, bodies = split.constraint_slices, model.bodies
    return {(bodies[i], bodies[j]) for i, a in enumerate(cs) for j, b in enumerate(cs)
            if a.stop > a.start and b.stop > b.start and np.any(A[a, b] != 0)}


@given(st.one_of(sko_models(max_node_dim=6, singular=False), sko_models(trees(shapes=("fan", "binary", "forest")), max_node_dim=4, singular=False)))
def test_pattern_of_A_is_the_four_kinds_exactly(model):
    """Stored blocks = predicted blocks = nonzero blocks of the dense ``W* φ^{-*} M^{-1} φ^{-1} W``
    (generic weights, so no structural block cancels), and each kind is what the tree says."""
    d, split, W, Hp, Omega = _dense(model)
    predicted = alg.constraint_pattern(model, split)
    tree = model.tree
    for (i, j), kind in predicted.items():
        assert kind == ("node" if i == j else "parent" if tree.parent(i) == j else "child" if tree.parent(j) == i else "sibling")
        if kind == "sibling":
            assert tree.parent(i) == tree.parent(j) is not None
    assert _block_pattern(model, split, W.T @ Omega @ W) == set(predicted)
    stored = alg.constraint_matrix(model, split)
    structure = stored.copy()
    structure.data[:] = 1.0
    assert _block_pattern(model, split, structure.toarray()) == set(predicted)
    assert stored.nnz == sum(split.constraint_dim(i) * split.constraint_dim(j) for i, j in predicted)


@given(models)
def test_dense_is_zero_outside_the_pattern(model):
    """With singular (even zero) weights some predicted blocks vanish, none outside appears."""
    d, split, W, Hp, Omega = _dense(model)
    predicted = set(alg.constraint_pattern(model, split))
    assert _block_pattern(model, split, W.T @ Omega @ W) <= predicted


@given(models, st.integers(0, 2**32 - 1))
def test_B_and_C_products(model, seed):
    d, split, W, Hp, Omega = _dense(model)
    x = vectors(model, seed, "dof")
    y = np.random.default_rng(seed).standard_normal(split.constraint_size)
    f = vectors(model, seed + 1, "node")
    assert_close(alg.constraint_operator_apply(model, f, split), Omega @ f, 1e-11)
    assert_close(alg.B_apply(model, x, split), W.T @ Omega @ Hp @ x, 1e-10)
    assert_close(alg.B_star_apply(model, y, split), Hp.T @ Omega @ W @ y, 1e-10)
    assert_close(alg.C_apply(model, x, split), Hp.T @ Omega @ Hp @ x, 1e-10)
    # θ̈ = (C − B* A^{-1} B) F_T = ℳ^{-1} F_T (CFA.md).
    A, B, C = W.T @ Omega @ W, W.T @ Omega @ Hp, Hp.T @ Omega @ Hp
    Minv = C - B.T @ np.linalg.solve(A, B) if split.constraint_size else C
    assert_close(Minv, np.linalg.inv(d.mass_matrix), 1e-9 * np.linalg.cond(d.mass_matrix) * np.linalg.cond(A if A.size else np.eye(1)))


@given(models, st.integers(0, 2**32 - 1))
def test_cfa_equals_forward_dynamics_and_dense(model, seed):
    """General and serialized CFA: θ̈ = forward_dynamics = dense ℳ^{-1}(T − 𝒞); A F_S = −B F_T."""
    d, split, W, Hp, Omega = _dense(model)
    T = vectors(model, seed, "dof")
    a, b = vectors(model, seed + 1, "node"), vectors(model, seed + 2, "node")
    F_T = T - d.bias(a, b)
    expected = np.linalg.solve(d.mass_matrix, F_T)
    cond = _cond(model)
    general = alg.constraint_force_algorithm(model, T, a, b, split)
    serial = alg.serialized_constraint_force_algorithm(model, T, a, b, split)
    A = W.T @ Omega @ W
    condA = np.linalg.cond(A) if A.size else 1.0
    for r in (general, serial):
        assert_close(r.F_T, F_T, 1e-10)
        assert_close(r.qdd, expected, 1e-10 * cond * condA)
        assert_close(r.qdd, alg.forward_dynamics(model, T, a, b), 1e-10 * cond * condA)
        assert_close(A @ r.F_S, -W.T @ Omega @ Hp @ F_T, 1e-10 * condA, np.abs(A).max(initial=0) * np.abs(r.F_S).max(initial=0) + np.abs(F_T).max())
        assert_close(r.f, Hp @ F_T + W @ r.F_S, 1e-12)
        # Eq. 28 term by term: θ̈ = C F_T + B* F_S.
        assert_close(r.qdd, alg.C_apply(model, r.F_T, split) + alg.B_star_apply(model, r.F_S, split), 1e-10 * condA,
                     np.abs(r.qdd).max() + np.abs(Omega).max() * np.abs(r.f).max() * max(np.abs(Hp).max(), 1.0))
    assert_close(serial.F_S, general.F_S, 1e-10 * condA)


@given(st.one_of(sko_models(trees(min_bodies=2, max_bodies=30, shapes=("chain",)), max_node_dim=4),
                 sko_models(trees(max_bodies=25), max_node_dim=4)), st.integers(0, 2**32 - 1))
def test_serialized_rounds_and_gathered_system(model, seed):
    """At most ⌈log₂ L⌉ rounds on a segment of L constrained nodes; the gathered system holds
    every kept node (branching nodes and their children) with constraints, plus at most two
    rows per segment."""
    split = alg.force_split(model)
    T = vectors(model, seed, "dof")
    r = alg.serialized_constraint_force_algorithm(model, T, split=split)
    segments = model.tree.segments()
    if not split.constraint_size:
        return
    assert len(r.rounds) == len(segments)
    kept = set(alg.kept_nodes(model))
    for segment, rounds in zip(segments, r.rounds):
        L = sum(1 for k in segment if split.constraint_dim(k))
        assert rounds <= (math.ceil(math.log2(L)) if L > 1 else 0)
        gathered = [k for k in r.gathered if k in segment]
        assert {k for k in segment if k in kept and split.constraint_dim(k)} <= set(gathered)
        assert len([k for k in gathered if k not in kept]) <= 2
    assert_close(r.F_S, alg.constraint_force_algorithm(model, T, split=split).F_S, 1e-9)


def test_serialized_on_a_long_chain_uses_cyclic_reduction():
    tree = random_tree(64, 3, "chain")
    model = random_model(tree, 4, node_dim=3, hinge="one", singular=False)
    T = vectors(model, 5, "dof")
    r = alg.serialized_constraint_force_algorithm(model, T)
    assert r.rounds == (6,) and len(r.gathered) == 1
    assert_close(r.qdd, alg.forward_dynamics(model, T), 1e-8)


@given(models, st.integers(0, 2**32 - 1))
def test_physical_constraint_forces(model, seed):
    """``W^+ f`` of Newton–Euler at the CFA's θ̈ equals the dense computation and
    ``F_S_equivalent + W^+ φ (M φ* a + b)``; ``H f = T``."""
    d, split, W, Hp, Omega = _dense(model)
    T = vectors(model, seed, "dof")
    a, b = vectors(model, seed + 1, "node"), vectors(model, seed + 2, "node")
    cond = _cond(model)
    A = W.T @ Omega @ W
    condA = np.linalg.cond(A) if A.size else 1.0
    for method in ("serialized", "general"):
        c = alg.constraint_forces(model, T, a, b, split, method=method)
        qdd = np.linalg.solve(d.mass_matrix, T - d.bias(a, b))
        f = d.phi @ (d.M @ d.phi.T @ (d.H.T @ qdd + a) + b)
        scale = np.abs(f).max(initial=0) + np.abs(d.phi).max() * (np.abs(d.M).max() * np.abs(d.phi).max() * np.abs(a).max(initial=0) + np.abs(b).max(initial=0))
        assert_close(c.f, f, 1e-9 * cond * condA, scale)
        assert_close(c.F_S, W.T @ f, 1e-9 * cond * condA, scale)
        assert_close(c.bias, W.T @ d.phi @ (d.M @ d.phi.T @ a + b), 1e-11)
        assert_close(c.F_S, c.F_S_equivalent + c.bias, 1e-9 * condA, scale)
        assert_close(alg.H_apply(model, c.f), T, 1e-9 * cond, scale)


def test_fully_actuated_model_has_no_constraints():
    """``n_k = m_k`` everywhere: every ``W(k)`` is empty, ``A`` is 0 × 0, θ̈ = C F_T."""
    tree = random_tree(7, 1, "random")
    model = random_model(tree, 2, hinge="full")
    split = alg.force_split(model)
    assert split.constraint_size == 0 and alg.constraint_matrix(model, split).shape == (0, 0)
    assert alg.constraint_pattern(model, split) == {}
    T = vectors(model, 3, "dof")
    for solve in (alg.constraint_force_algorithm, alg.serialized_constraint_force_algorithm):
        r = solve(model, T, split=split)
        assert r.F_S.shape == (0,)
        assert_close(r.qdd, alg.forward_dynamics(model, T), 1e-9 * _cond(model))
    assert_close(alg.C_apply(model, T, split), alg.forward_dynamics(model, T), 1e-9 * _cond(model))


def _small_model():
    tree = TreeDigraph.from_parents({"a": None, "b": "a"})
    return SKOModel(tree, phi={"b": np.eye(3)}, H={"a": [[1.0, 0, 0]], "b": [[0, 1.0, 0]]}, M={"a": np.eye(3), "b": 2 * np.eye(3)})


def test_bad_input_errors():
    model = _small_model()
    split = alg.force_split(model)
    with pytest.raises(DimensionError, match="T has length 3"):
        alg.constraint_force_algorithm(model, np.ones(3))
    with pytest.raises(DimensionError, match="length 5"):
        alg.serialized_constraint_force_algorithm(model, np.ones(2), a=np.ones(5))
    with pytest.raises(DimensionError, match="F_S has length 3"):
        alg.W_apply(split, np.ones(3))
    with pytest.raises(SKOError, match="NaN"):
        alg.B_apply(model, [np.nan, 1.0], split)
    with pytest.raises(SKOError, match="ForceSplit of this very model"):
        alg.constraint_force_algorithm(_small_model(), np.ones(2), split=split)
    with pytest.raises(SKOError, match="method must be one of"):
        alg.constraint_forces(model, np.ones(2), method="dense")
    symbolic = SKOModel(model.tree, phi={"b": np.eye(3, dtype=object)}, H=dict(model.H),
                        M={"a": np.eye(3), "b": np.diag([sympy.Symbol("m", positive=True)] * 3)})
    with pytest.raises(SKOError, match="real floating-point"):
        alg.force_split(symbolic)
    complex_model = SKOModel(model.tree, phi=dict(model.phi), H=dict(model.H), M={"a": np.eye(3) + 0j, "b": np.eye(3)})
    with pytest.raises(SKOError, match="dtype complex128"):
        alg.constraint_force_algorithm(complex_model, np.ones(2))


def test_inputs_not_mutated():
    model = random_model(random_tree(9, 7, "forest"), 8, max_node_dim=5)
    T = vectors(model, 1, "dof")
    a, b = vectors(model, 2, "node"), vectors(model, 3, "node")
    copies = T.copy(), a.copy(), b.copy()
    alg.constraint_forces(model, T, a, b)
    alg.constraint_force_algorithm(model, T, a, b)
    for x, y in zip((T, a, b), copies):
        assert np.array_equal(x, y)

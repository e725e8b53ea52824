"""SPO recursions (Lemmas 1, 2, Corollary 3.1) and Newton–Euler (Algorithm 3.1) against the
dense operator expressions they implement."""

import numpy as np
import pytest
import sympy
from hypothesis import given
from hypothesis import strategies as st

from sko.engine import algorithms as alg
from sko.engine import use_backend
from sko.graphs import TreeDigraph, bwa_matrix, one_resolvent
from sko import DimensionError, SKOModel

from .strategies import model_data, random_model, random_tree, sko_models, vectors
from .util import assert_close

seeds = st.integers(0, 2**32 - 1)


@given(st.one_of(sko_models(), sko_models(hinge="zero-some")), seeds)
def test_spo_products_equal_dense(model, seed):
    ops = model.dense()
    x = vectors(model, seed)
    for apply, dense in ((alg.phi_apply, ops.phi), (alg.phi_star_apply, ops.phi.T),
                         (alg.phi_tilde_apply, ops.phi_tilde), (alg.phi_tilde_star_apply, ops.phi_tilde.T)):
        expected = dense @ x
        assert_close(apply(model, x), expected, rtol=1e-11, scale=np.abs(dense).max() * np.abs(x).max())


@given(st.one_of(sko_models(), sko_models(hinge="zero-some")), seeds)
def test_spo_products_with_other_weights(model, seed):
    """The same recursions apply any SPO of the digraph, e.g. ψ."""
    rng = np.random.default_rng(seed)
    other = {k: rng.standard_normal(W.shape) for k, W in model.phi.items()}
    Psi = one_resolvent(bwa_matrix(model.tree, model.node_dims(), other))
    x = vectors(model, seed + 1)
    scale = np.abs(Psi).max() * np.abs(x).max()
    assert_close(alg.phi_apply(model, x, other), Psi @ x, rtol=1e-11, scale=scale)
    assert_close(alg.phi_star_apply(model, x, other), Psi.T @ x, rtol=1e-11, scale=scale)
    assert_close(alg.phi_tilde_apply(model, x, other), (Psi - np.eye(len(x))) @ x, rtol=1e-11, scale=scale)


@given(st.one_of(sko_models(), sko_models(hinge="zero-some")), seeds)
def test_newton_euler_equals_equation_1(model, seed):
    ops = model.dense()
    rng = np.random.default_rng(seed)
    qd, qdd = rng.standard_normal((2, model.dof_size))
    a, b = rng.standard_normal((2, model.node_size))
    ne = alg.newton_euler(model, qdd, qd, a, b)
    V = ops.phi.T @ ops.H.T @ qd
    alpha = ops.phi.T @ (ops.H.T @ qdd + a)
    f = ops.phi @ (ops.M @ alpha + b)
    for got, want in ((ne.V, V), (ne.alpha, alpha), (ne.f, f), (ne.T, ops.H @ f)):
        assert_close(got, want, rtol=1e-10)
    T = ops.mass_matrix @ qdd + ops.bias(a, b)
    assert_close(ne.T, T, rtol=1e-9)
    assert_close(alg.inverse_dynamics(model, qdd, qd, a, b), T, rtol=1e-9)


def test_inverse_dynamics_skips_the_velocity_pass(monkeypatch):
    """Velocity terms enter through ``a`` and ``b``; ``θ̇`` only gives 𝒱, which ``T`` does not
    need: inverse dynamics runs one φ* pass (for α), not two, and ``θ̇`` does not change ``T``."""
    import importlib

    ne = importlib.import_module("sko.algorithms.newton_euler")  # the module, not the function of that name

    model = random_model(random_tree(6, seed=1), 1)
    rng = np.random.default_rng(1)
    qd, qdd = rng.standard_normal((2, model.dof_size))
    a, b = rng.standard_normal((2, model.node_size))
    calls = []
    original = ne.phi_star_apply
    monkeypatch.setattr(ne, "phi_star_apply", lambda *args: calls.append(1) or original(*args))
    with use_backend("reference"):  # the pass structure of the reference code
        T = alg.inverse_dynamics(model, qdd, qd, a, b)
        assert len(calls) == 1
        assert np.array_equal(T, alg.inverse_dynamics(model, qdd, None, a, b))
        assert np.array_equal(T, alg.newton_euler(model, qdd, qd, a, b).T)
    with pytest.raises(DimensionError, match="qd has length"):
        alg.inverse_dynamics(model, qdd, np.ones(model.dof_size + 1), a, b)


@given(st.one_of(sko_models(max_node_dim=4), sko_models(max_node_dim=4, hinge="zero-some")))
def test_mass_matrix_columns_by_unit_accelerations(model):
    columns = np.column_stack([alg.inverse_dynamics(model, e) for e in np.eye(model.dof_size)])
    assert_close(columns, model.dense().mass_matrix, rtol=1e-10)


def test_complex_step_flows_through():
    """A complex perturbation of a weight gives the exact derivative of φ x."""
    tree = random_tree(8, seed=5, shape="forest")
    phi, H, M = model_data(tree, 6)
    k = next(k for k in tree.bodies if tree.parent(k) is not None)
    direction = np.random.default_rng(0).standard_normal(phi[k].shape)
    h = 1e-30
    model_c = SKOModel(tree, {**phi, k: phi[k] + 1j * h * direction}, H, M)
    x = vectors(model_c, 1)
    derivative = alg.phi_apply(model_c, x).imag / h
    eps = 1e-6
    plus = alg.phi_apply(SKOModel(tree, {**phi, k: phi[k] + eps * direction}, H, M), x)
    minus = alg.phi_apply(SKOModel(tree, {**phi, k: phi[k] - eps * direction}, H, M), x)
    assert_close(derivative, (plus - minus) / (2 * eps), rtol=1e-7)


def test_symbolic_models_give_exact_results():
    w = sympy.symbols("w0:8")
    m1, m2, m3, m4 = sympy.symbols("m1:5", positive=True)
    h = sympy.symbols("h0:4")
    obj = lambda rows: np.array(rows, dtype=object)
    tree = TreeDigraph.from_parents({"c": "a", "a": None, "b": None, "d": "a"})
    model = SKOModel(
        tree,
        phi={"c": obj([[w[0], w[1], w[2]], [w[3], w[4], w[5]]]), "d": obj([[w[6]], [w[7]]])},
        H={"a": obj([[1, h[0]]]), "b": obj([[h[1]]]), "c": obj([[1, 0, h[2]]]), "d": obj([[h[3]]])},
        M={"a": obj([[m1, 0], [0, m2]]), "b": obj([[m3]]), "c": obj(np.diag([m1, m2, m4])), "d": obj([[m4]])},
    )
    x = obj(sympy.symbols("x0:7"))
    ops = model.dense()
    for apply, dense in ((alg.phi_apply, ops.phi), (alg.phi_star_apply, ops.phi.T),
                         (alg.phi_tilde_apply, ops.phi_tilde), (alg.phi_tilde_star_apply, ops.phi_tilde.T)):
        diff = sympy.Matrix(apply(model, x) - dense @ x)
        assert diff.expand() == sympy.zeros(7, 1)
    qdd = obj(sympy.symbols("u0:4"))
    T = alg.inverse_dynamics(model, qdd)
    assert (sympy.Matrix(T - ops.mass_matrix @ qdd)).expand() == sympy.zeros(4, 1)


def test_vectors_are_checked_and_not_mutated():
    model = random_model(random_tree(4, seed=9), seed=3)
    x = vectors(model, 2)
    saved = x.copy()
    alg.phi_apply(model, x)
    alg.newton_euler(model, vectors(model, 1, "dof"), a=x, b=x)
    assert np.array_equal(x, saved)
    with pytest.raises(DimensionError, match=f"length {model.node_size + 1}"):
        alg.phi_apply(model, np.ones(model.node_size + 1))
    with pytest.raises(DimensionError, match="qdd"):
        alg.inverse_dynamics(model, np.ones(model.dof_size + 2))
    bad = {k: np.ones((1, 1)) for k in model.phi}
    if bad:
        with pytest.raises(DimensionError, match="shape"):
            alg.phi_apply(model, x, bad)

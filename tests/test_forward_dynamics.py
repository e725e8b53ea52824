"""Articulated body forward dynamics, ``ℳ^{-1}`` and ``det ℳ`` (SKO.md §10, §11) against dense
``ℳ^{-1}(T − 𝒞)``, Newton–Euler round trips, complex-step and symbolic data."""

from __future__ import annotations

import numpy as np
import pytest
import sympy
from hypothesis import given
from hypothesis import strategies as st

import sko.algorithms as alg
from sko.graphs import DimensionError, NonFiniteError, TreeDigraph
from sko import SKOModel

from .strategies import ill_conditioned_models, model_data, random_tree, sko_models, vectors
from .util import EPS, assert_close


def _scale(*arrays) -> float:
    return max(np.abs(a).max(initial=0.0) for a in arrays)


MAX_COND = 1e8  # above it a forward-error bound says little; the residual is still checked


def _residual_rtol(model: SKOModel) -> float:
    """``1e-13 max(cond D(k), 10)``: the recursions' backward error (see :func:`assert_solves`)."""
    D = alg.articulated_inertias(model).D.values()
    return 1e-13 * max([np.linalg.cond(Dk) for Dk in D if Dk.size] + [10.0])


def _bias_magnitude(d, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``|H| |φ| (|M| |φ|* |a| + |b|)``: the magnitudes ``𝒞 = H φ (M φ* a + b)`` is summed from, which
    bound its rounding (``𝒞`` itself may be far smaller: its terms can cancel)."""
    H, phi, M = np.abs(d.H), np.abs(d.phi), np.abs(d.M)
    return H @ phi @ (M @ phi.T @ np.abs(a) + np.abs(b))


def assert_solves(model: SKOModel, Mm: np.ndarray, x: np.ndarray, r: np.ndarray, *parts: np.ndarray) -> None:
    """``x`` solves ``ℳ x = r``.

    ``parts`` are the magnitudes ``r`` was formed from (``T``, :func:`_bias_magnitude`): their
    rounding is in ``r``, up to ``ε`` times their size even where ``r`` is small because they
    cancel. Residual: within ``1e-13 max(cond D(k), 10)`` of ``‖ℳ‖ ‖x‖ + ‖r‖`` and the parts. The
    recursions invert the ``D(k)``, so their backward error scales with those, not with
    ``cond(ℳ)``; this check is meaningful at any conditioning of ``ℳ``. Forward error, when
    ``cond(ℳ) ≤ MAX_COND`` (so that bound is at most ``1e-5``): within ``1e-13`` of
    ``cond(ℳ) ‖x‖`` (the solve) plus ``‖ℳ^{-1}‖`` times the parts (the rounding of ``r``, which a
    solve carries to ``x`` unchanged however well conditioned ``ℳ`` is)."""
    assert_close(Mm @ x, r, _residual_rtol(model), _scale(Mm) * _scale(x) * Mm.shape[0] + _scale(r, *parts))
    cond = np.linalg.cond(Mm)
    if cond <= MAX_COND:
        expected = np.linalg.solve(Mm, r)
        data = np.linalg.norm(np.linalg.inv(Mm), 2) * _scale(r, *parts) if Mm.size else 0.0
        assert_close(x, expected, 1e-13, cond * _scale(x, expected) + data)


@given(st.one_of(sko_models(), sko_models(hinge="zero-some")), st.integers(0, 2**32 - 1))
def test_forward_dynamics_against_dense(model, seed):
    """``θ̈ = ℳ^{-1}(T − 𝒞)`` (Eq. 54) with ``a``, ``b``, and the Newton–Euler round trip."""
    d = model.dense()
    T = vectors(model, seed, "dof")
    a, b = vectors(model, seed + 1, "node"), vectors(model, seed + 2, "node")
    Mm = d.mass_matrix
    qdd = alg.forward_dynamics(model, T, a, b)
    assert_solves(model, Mm, qdd, T - d.bias(a, b), T, _bias_magnitude(d, a, b))
    # Newton–Euler of the result gives T back: a residual, bounded by the data, not by cond(ℳ).
    assert_close(alg.inverse_dynamics(model, qdd, a=a, b=b), T, _residual_rtol(model),
                 _scale(T) + _scale(d.bias(a, b)) + _scale(Mm) * _scale(qdd) * Mm.shape[0])
    # Without a and b: the mass matrix solve.
    assert_solves(model, Mm, alg.forward_dynamics(model, T), T)


@given(st.one_of(sko_models(), sko_models(hinge="zero-some")), st.integers(0, 2**32 - 1))
def test_inverse_then_forward_round_trip(model, seed):
    qdd = vectors(model, seed, "dof")
    a, b = vectors(model, seed + 1, "node"), vectors(model, seed + 2, "node")
    T = alg.inverse_dynamics(model, qdd, a=a, b=b)
    d = model.dense()
    Mm = d.mass_matrix
    back = alg.forward_dynamics(model, T, a, b)
    assert_solves(model, Mm, back, T - d.bias(a, b), T, _bias_magnitude(d, a, b))
    if np.linalg.cond(Mm) <= MAX_COND:
        # T − 𝒞 cancels when the bias dominates, and 𝒞 is summed from larger terms (as in
        # assert_solves), so the data's scale is |ℳ^{-1}| (|T| + |H| |φ| (|M| |φ|* |a| + |b|)).
        bias = _bias_magnitude(d, a, b)
        scale = np.abs(qdd).max() + np.linalg.norm(np.linalg.inv(Mm), 2) * (np.abs(T).max() + bias.max(initial=0.0))
        assert_close(back, qdd, 1e-13 * np.linalg.cond(Mm), scale)


@given(st.one_of(sko_models(), sko_models(hinge="zero-some")), st.integers(0, 2**32 - 1))
def test_mass_matrix_solve_and_inverse(model, seed):
    """``ℳ^{-1} y`` for a vector and for several columns, and ``ℳ^{-1}`` (Eq. 51) without
    inverting ``ℳ``; one Riccati result reused for all."""
    ab = alg.articulated_inertias(model)
    Mm = model.dense().mass_matrix
    cond = np.linalg.cond(Mm)
    y = vectors(model, seed, "dof")
    assert_solves(model, Mm, alg.mass_matrix_solve(model, y, ab), y)
    Y = np.random.default_rng(seed).standard_normal((model.dof_size, 3))
    X = alg.mass_matrix_solve(model, Y, ab)
    for c in range(Y.shape[1]):
        assert_solves(model, Mm, X[:, c], Y[:, c])
    Minv = alg.mass_matrix_inverse(model, ab)
    assert_close(Mm @ Minv, np.eye(model.dof_size), _residual_rtol(model), _scale(Mm) * _scale(Minv) * Mm.shape[0])
    if cond <= MAX_COND:
        assert_close(Minv, np.linalg.inv(Mm), 1e-13 * cond)
    assert_close(Minv, Minv.T, 1e-13 * cond)


@given(sko_models(max_node_dim=5))
def test_logdet_and_det_against_slogdet(model):
    Mm = model.dense().mass_matrix
    sign, logdet = np.linalg.slogdet(Mm)
    assert sign == 1
    rtol = 1e-14 * model.dof_size * max(np.linalg.cond(Mm), 100.0) + 1e-12 * abs(logdet)
    assert abs(alg.mass_matrix_logdet(model) - logdet) <= rtol
    assert abs(alg.mass_matrix_det(model) - np.linalg.det(Mm)) <= 2 * rtol * abs(np.linalg.det(Mm))


@given(ill_conditioned_models(), st.integers(0, 2**32 - 1))
def test_ill_conditioned_models(model, seed):
    """Valid but ill-conditioned models (cond ℳ up to ~1e8 and beyond) agree with the dense
    computation within a tolerance scaled by the condition number."""
    d = model.dense()
    Mm = d.mass_matrix
    cond = np.linalg.cond(Mm)
    T = vectors(model, seed, "dof")
    a = vectors(model, seed + 1, "node")
    qdd = alg.forward_dynamics(model, T, a)
    expected = np.linalg.solve(Mm, T - d.bias(a))
    assert_close(qdd, expected, 100 * EPS * cond * model.dof_size)
    # The residual is small relative to the data, up to the spread of the node inertias: the
    # Riccati gather adds a child's articulated inertia to its parent's, so a parent inertia far
    # below its children's loses digits in D (found on M(k) norms 0.04 below 1.4e4: 2e-11).
    norms = [np.abs(Mk).max() for Mk in model.M.values()]
    spread = max(norms) / min(norms)
    assert_close(Mm @ qdd, T - d.bias(a), 1e3 * EPS * model.dof_size * spread, _scale(Mm) * _scale(qdd) + _scale(T))
    sign, logdet = np.linalg.slogdet(Mm)
    # d log det ℳ = tr(ℳ^{-1} dℳ): either value is only good to about n · cond · eps.
    assert abs(alg.mass_matrix_logdet(model) - logdet) <= 1e-8 * (abs(logdet) + model.dof_size) + 100 * EPS * cond * model.dof_size


@given(sko_models(max_node_dim=5), st.integers(0, 2**32 - 1))
def test_complex_step_derivative(model, seed):
    """Complex-step data flows through Riccati and Algorithm 6.1 without conjugation:
    ``d θ̈ / d h`` for ``M(k) + h S`` equals the finite-difference-free derivative
    ``−ℳ^{-1} (dℳ/dh) θ̈`` from the dense mass matrix."""
    rng = np.random.default_rng(seed)
    k = model.bodies[int(rng.integers(len(model.bodies)))]
    A = rng.standard_normal((model.node_dim(k),) * 2)
    S = A + A.T
    h = 1e-30
    M = dict(model.M)
    M[k] = M[k] + 1j * h * S
    perturbed = SKOModel(model.tree, dict(model.phi), dict(model.H), M)
    T = vectors(model, seed, "dof")
    derivative = alg.forward_dynamics(perturbed, T).imag / h
    d = model.dense()
    Mm = d.mass_matrix
    dM = np.zeros_like(d.M)
    dM[model.node_slice(k), model.node_slice(k)] = S
    dMm = d.H @ d.phi @ dM @ d.phi.T @ d.H.T
    qdd = np.linalg.solve(Mm, T)
    expected = -np.linalg.solve(Mm, dMm @ qdd)
    cond = np.linalg.cond(Mm)
    assert_close(derivative, expected, 1e-9 * cond**2)


def test_input_errors_and_no_mutation():
    tree = random_tree(5, 2, "forest")
    phi, H, M = model_data(tree, 2)
    model = SKOModel(tree, phi, H, M)
    T = np.ones(model.dof_size)
    with pytest.raises(DimensionError, match="T"):
        alg.forward_dynamics(model, np.ones(model.dof_size + 1))
    with pytest.raises(DimensionError, match="a"):
        alg.forward_dynamics(model, T, a=np.ones(model.node_size - 1))
    with pytest.raises(NonFiniteError):
        alg.forward_dynamics(model, np.full(model.dof_size, np.nan))
    with pytest.raises(DimensionError, match="y"):
        alg.mass_matrix_solve(model, np.ones((model.dof_size + 1, 2)))
    T_before = T.copy()
    alg.forward_dynamics(model, T)
    alg.mass_matrix_solve(model, T)
    assert np.array_equal(T, T_before)


def test_closed_form_double_pendulum_like_chain():
    """Two scalar nodes: ℳ = [[m0 + m1, m1], [m1, m1]] with m0 = 2, m1 = 4."""
    tree = TreeDigraph.from_parents({0: None, 1: 0})
    model = SKOModel(tree, phi={1: [[1.0]]}, H={0: [[1.0]], 1: [[1.0]]}, M={0: [[2.0]], 1: [[4.0]]})
    np.testing.assert_allclose(alg.forward_dynamics(model, [6.0, 4.0]), [1.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(alg.mass_matrix_inverse(model), np.linalg.inv([[6.0, 4.0], [4.0, 4.0]]), rtol=1e-14)
    assert alg.mass_matrix_logdet(model) == pytest.approx(np.log(8.0), rel=1e-14)


def test_symbolic_riccati_and_forward_dynamics():
    """dtype=object sympy data: Riccati, ``det ℳ`` and Algorithm 6.1 equal the dense expressions."""
    m0, m1, l, t0, t1, g = sympy.symbols("m0 m1 l t0 t1 g", positive=True)
    tree = TreeDigraph.from_parents({"base": None, "link": "base"})
    model = SKOModel(
        tree,
        phi={"link": np.array([[1, l], [0, 1]], dtype=object)},
        H={"base": np.array([[0, 1]], dtype=object), "link": np.array([[1, 0]], dtype=object)},
        M={"base": np.array([[m0, 0], [0, 1]], dtype=object), "link": np.array([[m1, 0], [0, 2]], dtype=object)},
    )
    assert model.dtype == object
    ab = alg.articulated_inertias(model)
    T = np.array([t0, t1], dtype=object)
    a = np.array([0, g, 0, 0], dtype=object)
    qdd = alg.forward_dynamics(model, T, a=a, articulated=ab)
    d = model.dense()
    Mm = sympy.Matrix(d.mass_matrix)
    expected = Mm.inv() * (sympy.Matrix(T) - sympy.Matrix(d.bias(a)))
    assert all(sympy.simplify(q - e) == 0 for q, e in zip(qdd, expected))
    assert sympy.simplify(alg.mass_matrix_det(model, ab) - Mm.det()) == 0
    assert (sympy.Matrix(alg.mass_matrix(model)) - Mm).applyfunc(sympy.simplify) == sympy.zeros(2, 2)
    # The Riccati equation holds exactly (Eq. 36 in the ψ form).
    P = sympy.diag(*[sympy.Matrix(ab.P[k]) for k in model.bodies])
    from sko.graphs import bwa_matrix

    E_psi = sympy.Matrix(bwa_matrix(tree, model.node_dims(), dict(ab.psi)))
    residual = P - E_psi * P * E_psi.T - sympy.Matrix(d.M)
    assert residual.applyfunc(sympy.simplify) == sympy.zeros(*residual.shape)


@given(sko_models(max_node_dim=5), st.integers(0, 2**32 - 1))
def test_welded_bodies_without_hinge_coordinates(model, seed):
    """Bodies with ``n_k = 0`` (welded to their parent) drop out of ``θ̈`` but keep their inertia."""
    rng = np.random.default_rng(seed)
    H = {k: (np.zeros((0, model.node_dim(k))) if rng.random() < 0.4 else model.H[k]) for k in model.bodies}
    welded = SKOModel(model.tree, dict(model.phi), H, dict(model.M))
    if welded.dof_size == 0:
        assert alg.forward_dynamics(welded, np.zeros(0)).shape == (0,)
        return
    d = welded.dense()
    T = vectors(welded, seed, "dof")
    a = vectors(welded, seed + 1, "node")
    Mm = d.mass_matrix
    cond = np.linalg.cond(Mm)
    assert_close(alg.forward_dynamics(welded, T, a), np.linalg.solve(Mm, T - d.bias(a)), 1e-10 * cond)
    assert_close(alg.mass_matrix(welded), Mm, 1e-12)
    assert abs(alg.mass_matrix_logdet(welded) - np.linalg.slogdet(Mm)[1]) <= 1e-12 * welded.dof_size * max(cond, 100.0)

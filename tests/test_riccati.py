"""The Riccati recursion (SKO.md §8, Eq. 31–36) against the dense Riccati equation."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import sko.algorithms as alg
from sko.graphs import NotPositiveDefiniteError, SKOError, TreeDigraph
from sko import SKOModel

from .strategies import random_model, random_tree, sko_models
from .test_identities import dense_riccati
from .util import assert_close


def _scale(*arrays) -> float:
    return max(np.abs(a).max(initial=0.0) for a in arrays)


@given(st.one_of(sko_models(), sko_models(hinge="zero-some")))
def test_P_solves_the_riccati_equation(model):
    """``P = ℰ_φ [P − P H* D^{-1} H P] ℰ_φ* + M`` (Eq. 31) with the operators of Eq. 32."""
    ab = alg.articulated_inertias(model)
    d = dense_riccati(model, ab)
    D_inv = np.linalg.inv(d.D)
    inner = d.P - d.P @ d.H.T @ D_inv @ d.H @ d.P
    scale = _scale(d.E) ** 2 * _scale(d.P) * d.P.shape[0] + _scale(d.M)
    rtol = 1e-13 * max(np.linalg.cond(d.D), 100.0)  # the dense D^{-1} costs cond(D) digits
    assert_close(d.E @ inner @ d.E.T + d.M, d.P, rtol, scale)
    assert_close(d.D, d.H @ d.P @ d.H.T, 1e-12, _scale(d.H) ** 2 * _scale(d.P) * d.P.shape[0])
    assert_close(d.G, d.P @ d.H.T @ D_inv, rtol, _scale(d.G) + 1)
    assert_close(d.tau_bar, np.eye(d.P.shape[0]) - d.G @ d.H, 1e-12, _scale(d.tau_bar) + 1)
    # Eq. 36 and its mixed form.
    assert_close(d.P - d.E_psi @ d.P @ d.E_psi.T, d.M, 1e-10, scale)
    assert_close(d.P - d.E_psi @ d.P @ d.E.T, d.M, 1e-10, scale)


@given(st.one_of(sko_models(), sko_models(hinge="zero-some")))
def test_per_node_quantities(model):
    """``P`` SPD, ``P⁺ = τ̄ P`` symmetric PSD, ``D`` SPD, ``K = φ G`` and ``ψ = φ τ̄`` per arc;
    ``K`` and ``psi`` exactly for the non-base bodies."""
    ab = alg.articulated_inertias(model)
    tree = model.tree
    non_base = {k for k in model.bodies if tree.parent(k) is not None}
    assert set(ab.K) == set(ab.psi) == non_base
    assert set(ab.P) == set(ab.D) == set(ab.G) == set(ab.tau_bar) == set(ab.P_plus) == set(model.bodies)
    for k in model.bodies:
        P, Pp, D = ab.P[k], ab.P_plus[k], ab.D[k]
        cond_D = np.linalg.cond(D) if D.size else 1.0  # D is 0 × 0 on a welded node
        s = _scale(P) * max(cond_D, 100.0)  # P⁺ loses cond(D) digits
        assert_close(P, P.T, 1e-13, s)
        assert np.linalg.eigvalsh(P).min() > 0
        assert_close(Pp, ab.tau_bar[k] @ P, 1e-13, s * (1 + _scale(ab.tau_bar[k])))
        assert_close(Pp, Pp.T, 1e-13, s)
        assert np.linalg.eigvalsh((Pp + Pp.T) / 2).min() >= -1e-13 * s
        assert np.linalg.eigvalsh(D).min(initial=np.inf) > 0
        assert_close(ab.D_inverse[k] @ D, np.eye(D.shape[0]), 1e-9, cond_D)
        if k in non_base:
            W = model.phi[k]
            assert_close(ab.K[k], W @ ab.G[k], 1e-12, _scale(W) * _scale(ab.G[k]) * W.shape[1])
            assert_close(ab.psi[k], W @ ab.tau_bar[k], 1e-12, _scale(W) * (1 + _scale(ab.G[k]) * _scale(model.H[k])) * W.shape[1])
            # ψ(℘(k), k) is singular: it annihilates P H*(k).
            assert_close(ab.psi[k] @ P @ model.H[k].T, np.zeros((W.shape[0], model.dof_dim(k))), 1e-10,
                         _scale(W) * _scale(P) * _scale(model.H[k]) * W.shape[1] ** 2)


@given(sko_models(max_node_dim=4))
def test_results_are_read_only(model):
    ab = alg.articulated_inertias(model)
    k = model.bodies[0]
    with pytest.raises(ValueError):
        ab.P[k][0, 0] = 1.0
    with pytest.raises(TypeError):
        ab.P[k] = np.eye(2)


def _with_inertia(model: SKOModel, k, Mk) -> SKOModel:
    """A copy of ``model`` whose ``M(k)`` is replaced without validation (to reach the error path
    of the recursion on data that no valid model can hold)."""
    broken = copy.copy(model)
    i = model.tree.index(k)
    broken.M_by_index = tuple(Mk if j == i else M for j, M in enumerate(model.M_by_index))
    return broken


def test_non_positive_definite_D_names_the_node():
    tree = TreeDigraph.from_parents({"base": None, "tip": "base"})
    model = SKOModel(tree, phi={"tip": np.eye(2)}, H={"base": [[1.0, 0.0]], "tip": [[0.0, 1.0]]},
                     M={"base": np.eye(2), "tip": np.eye(2)})
    broken = _with_inertia(model, "tip", -np.eye(2))
    with pytest.raises(NotPositiveDefiniteError, match="'tip'"):
        alg.articulated_inertias(broken)
    # The complex-step path checks the real part.
    model_c = SKOModel(tree, phi={"tip": np.eye(2)}, H={"base": [[1.0, 0.0]], "tip": [[0.0, 1.0]]},
                       M={"base": np.eye(2), "tip": np.eye(2) + 1e-20j * np.ones((2, 2))})
    assert model_c.dtype.kind == "c"
    broken_c = _with_inertia(model_c, "tip", -np.eye(2) + 1e-20j * np.ones((2, 2)))
    with pytest.raises(NotPositiveDefiniteError, match="'tip'"):
        alg.articulated_inertias(broken_c)


def test_articulated_result_of_another_model_is_rejected():
    tree = random_tree(5, 3)
    a, b = random_model(tree, 1), random_model(tree, 2)
    with pytest.raises(SKOError, match="articulated"):
        alg.forward_dynamics(a, np.zeros(a.dof_size), articulated=alg.articulated_inertias(b))


def test_closed_form_two_body_chain():
    """A planar double pendulum-like chain of 1×1 nodes: P(1) = m1, P⁺(1) = 0, P(0) = m0,
    ψ = 0 (both joints free) — the textbook articulated inertias."""
    tree = TreeDigraph.from_parents({0: None, 1: 0})
    model = SKOModel(tree, phi={1: [[1.0]]}, H={0: [[1.0]], 1: [[1.0]]}, M={0: [[2.0]], 1: [[4.0]]})
    ab = alg.articulated_inertias(model)
    assert ab.P[1][0, 0] == 4.0 and ab.P_plus[1][0, 0] == 0.0 and ab.P[0][0, 0] == 2.0
    assert ab.psi[1][0, 0] == 0.0 and ab.K[1][0, 0] == 1.0


def test_overflow_is_an_error_not_a_nan_result():
    tree = TreeDigraph.from_parents({"base": None, "tip": "base"})
    model = SKOModel(tree, phi={"tip": np.eye(2)}, H={"base": [[1.0, 0.0]], "tip": [[10.0, 0.0]]},
                     M={"base": np.eye(2), "tip": 1e308 * np.eye(2)})
    with pytest.raises(SKOError, match="'tip'"):
        alg.articulated_inertias(model)
    with warnings.catch_warnings():  # the error is the report: no numpy overflow warning besides
        warnings.simplefilter("error")
        with pytest.raises(SKOError, match="'tip'"):
            alg.articulated_inertias(model)

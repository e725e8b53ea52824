"""Operational space compliance and inertia (SKO.md §12) against ``J ℳ^{-1} J*``."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given
from hypothesis import strategies as st

from sko.engine import algorithms as alg
from sko.engine import use_backend
from sko.graphs import DimensionError, RankDeficientError, SKOError, TreeDigraph, UnknownNodeError
from sko import SKOModel

from .strategies import random_model, random_tree, sko_models
from .test_identities import dense_riccati
from .util import assert_close


def _pick_off(model, nodes, transforms=None) -> np.ndarray:
    """Dense ``ℬ``: node_size × Σ t_k, the blocks of the task nodes through their transforms."""
    transforms = transforms or {}
    columns = []
    for k in nodes:
        T = transforms.get(k, np.eye(model.node_dim(k)))
        B = np.zeros((model.node_size, T.shape[1]))
        B[model.node_slice(k), :] = T
        columns.append(B)
    return np.hstack(columns)


@st.composite
def tasks(draw, with_transforms: bool = False):
    model = draw(sko_models(max_node_dim=6))
    count = draw(st.integers(1, min(4, len(model.bodies))))
    picks = draw(st.permutations(range(len(model.bodies))))[:count]
    nodes = [model.bodies[i] for i in picks]
    transforms = None
    if with_transforms:
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        transforms = {k: rng.standard_normal((model.node_dim(k), int(rng.integers(1, model.node_dim(k) + 1))))
                      for k in nodes if rng.random() < 0.7}
    return model, nodes, transforms


@given(tasks(with_transforms=True))
def test_compliance_against_dense(task):
    """``ℬ* Ω ℬ`` with ``Ω = φ* H* ℳ^{-1} H φ = ψ* H* D^{-1} H ψ`` (Eq. 59, 60) = ``J ℳ^{-1} J*``."""
    model, nodes, transforms = task
    ab = alg.articulated_inertias(model)
    d = dense_riccati(model, ab)
    B = _pick_off(model, nodes, transforms)
    Mm = d.mass_matrix
    J = B.T @ d.phi.T @ d.H.T
    expected = J @ np.linalg.solve(Mm, J.T)
    Omega_psi = d.psi.T @ d.H.T @ np.linalg.inv(d.D) @ d.H @ d.psi
    C = alg.operational_space_compliance(model, nodes, transforms)
    cond = np.linalg.cond(Mm)
    assert_close(C, expected, 1e-10 * cond)
    assert_close(C, B.T @ Omega_psi @ B, 1e-10 * cond)
    assert_close(alg.operational_space_compliance(model, nodes, transforms, articulated=ab), C, 1e-14)


@given(tasks())
def test_inertia_is_the_inverse_compliance(task):
    """``Λ = (J ℳ^{-1} J*)^{-1}`` when the task Jacobian has full row rank; RankDeficientError otherwise."""
    model, nodes, _ = task
    d = model.dense()
    J = _pick_off(model, nodes).T @ d.phi.T @ d.H.T
    C = J @ np.linalg.solve(d.mass_matrix, J.T)
    if np.linalg.matrix_rank(J) < J.shape[0]:
        with pytest.raises(RankDeficientError):
            alg.operational_space_inertia(model, nodes)
        return
    Lambda = alg.operational_space_inertia(model, nodes)
    cond = np.linalg.cond(C) * np.linalg.cond(d.mass_matrix)
    assert_close(Lambda @ C, np.eye(C.shape[0]), 1e-10 * cond, 1.0)


def test_inertia_of_a_full_rank_task():
    """A free 6-dof base and a 6-dof link: a task on the link has Λ = (J ℳ^{-1} J*)^{-1}."""
    tree = TreeDigraph.from_parents({"base": None, "link": "base"})
    model = random_model(tree, 4, node_dim=6, hinge="full", singular=False)
    d = model.dense()
    J = _pick_off(model, ["link"]).T @ d.phi.T @ d.H.T
    expected = np.linalg.inv(J @ np.linalg.solve(d.mass_matrix, J.T))
    assert_close(alg.operational_space_inertia(model, ["link"]), expected, 1e-9)


def test_symbolic_compliance_runs():
    import sympy

    m = sympy.Symbol("m", positive=True)
    tree = TreeDigraph.from_parents({0: None, 1: 0})
    model = SKOModel(tree, phi={1: np.array([[1]], dtype=object)}, H={0: np.array([[1]], dtype=object), 1: np.array([[1]], dtype=object)},
                     M={0: np.array([[m]], dtype=object), 1: np.array([[1]], dtype=object)})
    C = alg.operational_space_compliance(model, [1])
    # J = [1, 1], ℳ = [[m + 1, 1], [1, 1]]: J ℳ^{-1} J* = 1.
    assert sympy.simplify(C[0, 0] - 1) == 0
    assert sympy.simplify(alg.operational_space_inertia(model, [1])[0, 0] - 1) == 0


def test_task_node_errors():
    tree = random_tree(5, 1, "random", "str")
    model = random_model(tree, 1)
    k = model.bodies[0]
    with pytest.raises(UnknownNodeError, match="nobody"):
        alg.operational_space_compliance(model, [k, "nobody"])
    with pytest.raises(SKOError, match="repeated"):
        alg.operational_space_compliance(model, [k, k])
    with pytest.raises(SKOError, match="no task nodes"):
        alg.operational_space_inertia(model, [])
    with pytest.raises(SKOError):
        alg.operational_space_compliance(model, k)  # a single label, not a sequence
    with pytest.raises(DimensionError, match=repr(k)):
        alg.operational_space_compliance(model, [k], {k: np.eye(model.node_dim(k) + 1)})
    with pytest.raises(UnknownNodeError):
        alg.operational_space_compliance(model, [k], {model.bodies[1]: np.eye(model.node_dim(model.bodies[1]))})


def test_rank_deficient_task():
    """A 1-dof chain cannot move a 3-dimensional task node independently."""
    tree = TreeDigraph.from_parents({0: None, 1: 0})
    model = random_model(tree, 0, node_dim=3, hinge="one")
    with pytest.raises(RankDeficientError, match="full row rank"):
        alg.operational_space_inertia(model, [1])
    # The compliance itself is fine (and singular).
    C = alg.operational_space_compliance(model, [1])
    assert np.linalg.matrix_rank(C) <= 2
    assert scipy.linalg.issymmetric(C, rtol=1e-10)


@given(tasks(with_transforms=True))
def test_compiled_compliance_equals_reference(task):
    """The compiled blocks (Υ on the task nodes' ancestors only, then ``ψ*(l, i) Υ(l) ψ(l, j)``)
    equal the generic backward Lyapunov scatter over every body, for float64 and complex128."""
    model, nodes, transforms = task
    for dtype in (np.float64, np.complex128):
        m = model if dtype is np.float64 else SKOModel(
            model.tree, {k: W * (1 + 0.1j) for k, W in model.phi.items()}, model.H,
            {k: Mk * (1 + 1e-3j) for k, Mk in model.M.items()})
        C = alg.operational_space_compliance(m, nodes, transforms)
        with use_backend("reference"):
            R = alg.operational_space_compliance(m, nodes, transforms)
        assert C.dtype == R.dtype == dtype
        assert_close(C, R, 1e-10 * np.linalg.cond(model.dense().mass_matrix))

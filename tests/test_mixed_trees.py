"""Trees that mix a fan, long chains of equal and of varying dimensions and a second base body,
on both paths (compiled and reference), against the dense ``ℳ`` and the dense Riccati equation."""

from __future__ import annotations

import numpy as np
import pytest

from sko.engine import algorithms as alg
from sko.engine import use_backend
from sko.graphs import SKOError, TreeDigraph
from sko import SKOModel

from .strategies import model_data, vectors
from .util import assert_close


def _chains_under_a_fan(chain_lengths: list[int]) -> TreeDigraph:
    """A base body with one chain per entry of ``chain_lengths`` hanging from it, plus a second
    base body carrying a chain."""
    parents = {"base": None, "other": None}
    for c, length in enumerate(chain_lengths):
        parent = "base"
        for j in range(length):
            parents[(c, j)] = parent
            parent = (c, j)
    parent = "other"
    for j in range(25):
        parents[("other", j)] = parent
        parent = ("other", j)
    return TreeDigraph.from_parents(parents)


def _models():
    tree = _chains_under_a_fan([3, 8, 30, 40])
    yield SKOModel(tree, *model_data(tree, 1, node_dim=6, hinge="one", singular=False))  # uniform: stacked and single
    yield SKOModel(tree, *model_data(tree, 2, max_node_dim=5, hinge="zero-some"))  # mixed dims, welded bodies


@pytest.mark.parametrize("backend", ["compiled", "reference"])
@pytest.mark.parametrize("model", list(_models()))
def test_mixed_trees_against_dense(model, backend):
    with use_backend(backend):
        _check_against_dense(model)


def _check_against_dense(model):
    d = model.dense()
    Mm = d.mass_matrix
    ab = alg.articulated_inertias(model)
    # P solves the Riccati equation (Eq. 31): P = ℰ_ψ P ℰ_ψ* + M with ℰ_ψ = ℰ_φ τ̄ (Eq. 34, 41).
    P = np.zeros((model.node_size, model.node_size))
    E_psi = np.zeros_like(P)
    for k in model.bodies:
        P[model.node_slice(k), model.node_slice(k)] = ab.P[k]
        if k in ab.psi:
            E_psi[model.node_slice(model.tree.parent(k)), model.node_slice(k)] = ab.psi[k]
    assert_close(E_psi @ P @ E_psi.T + d.M, P, 1e-10, np.abs(P).max())
    # det ℳ = Π det D(k) (Eq. 52) and Algorithm 6.1 against the dense solves.
    assert_close(alg.mass_matrix_logdet(model, ab), np.linalg.slogdet(Mm)[1], 1e-10, abs(np.linalg.slogdet(Mm)[1]))
    T = vectors(model, 3, "dof")
    a, b = vectors(model, 4, "node"), vectors(model, 5, "node")
    cond = np.linalg.cond(Mm)
    assert_close(alg.forward_dynamics(model, T, a, b, ab), np.linalg.solve(Mm, T - d.bias(a, b)), 1e-13 * cond)
    Y = np.random.default_rng(6).standard_normal((model.dof_size, 3))
    assert_close(alg.mass_matrix_solve(model, Y, ab), np.linalg.solve(Mm, Y), 1e-13 * cond)
    assert_close(alg.mass_matrix_inverse(model, ab) @ Mm, np.eye(model.dof_size), 1e-13 * cond)
    # Complex data (complex step) through both paths: the derivative of θ̈ along T.
    dT = vectors(model, 7, "dof")
    h = 1e-30
    assert_close(alg.forward_dynamics(model, T + 1j * h * dT, a, b).imag / h, np.linalg.solve(Mm, dT), 1e-13 * cond)


@pytest.mark.parametrize("backend", ["compiled", "reference"])
def test_overflow_in_a_long_chain_names_the_body(backend):
    tree = TreeDigraph.from_parents({k: (k - 1 if k else None) for k in range(40)})
    phi, H, M = model_data(tree, 8, node_dim=3, hinge="one", singular=False)
    M[20] = 1e308 * np.eye(3)
    H[20] = 10.0 * H[20]
    with use_backend(backend), pytest.raises(SKOError, match="body 20 "):
        alg.articulated_inertias(SKOModel(tree, phi, H, M))

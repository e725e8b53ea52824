"""Constraint embedding against the Lagrange-multiplier (KKT) solution of the spanning tree
with its constraints (EMBEDDING.md §3), on random trees with random clusters."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from sko.bodies.cluster import LoopClosureError
from sko.examples.embedding import four_bar, four_bar_chain, mimic_gripper
from tests.embedding.random_clusters import drawn_clustered_system


def kkt_residuals(system, q, v, rng, forward: bool = True) -> dict:
    """Relative residuals of ℳ = Gᵀ ℳ_sp G, 𝒞 = Gᵀ(𝒞_sp + ℳ_sp Ġ v), K G = 0, forward dynamics
    against KKT, inverse dynamics T = Gᵀ T_sp, and Ġ v against a complex-step derivative of G.
    ``forward=False`` (a singular ℳ: massless bodies) checks the inverse dynamics at a random
    acceleration, ``T = Gᵀ(ℳ_sp (G v̇ + Ġ v) + 𝒞_sp)``, instead of the forward dynamics."""
    spanning = system.spanning_system()
    theta = system.spanning_configuration(q)
    G, Gdv, K, Kdv = system.constraint_matrices(q, v)
    thetad = G @ v
    M_sp, C_sp = spanning.mass_matrix(theta), spanning.bias_forces(theta, thetad)
    M, C = system.mass_matrix(q), system.bias_forces(q, v)
    scale = max(1.0, np.abs(M_sp).max(initial=0.0) * max(1.0, np.abs(G).max(initial=0.0)) ** 2)
    T_sp = rng.normal(size=len(theta)) * scale
    tau = G.T @ T_sp
    h = 1e-30
    Gc = system.constraint_matrices(q + 1j * h * v, v)[0]
    bias_scale = max(scale, np.abs(C_sp).max(initial=0.0) * np.abs(G).max(initial=0.0))
    out = {
        "M": np.abs(M - G.T @ M_sp @ G).max(initial=0.0) / scale,
        "C": np.abs(C - G.T @ (C_sp + M_sp @ Gdv)).max(initial=0.0) / bias_scale,
        "KG": np.abs(K @ G).max(initial=0.0) / max(1.0, np.abs(K).max(initial=0.0) * np.abs(G).max(initial=0.0)),
        "Gdot": np.abs((Gc.imag / h) @ v - Gdv).max(initial=0.0) / max(1.0, np.abs(Gdv).max(initial=0.0)),
    }
    if not forward:
        dv = rng.normal(size=system.nv)
        tau = G.T @ (M_sp @ (G @ dv + Gdv) + C_sp)
        out["ID"] = np.abs(system.inverse_dynamics(q, v, dv) - tau).max(initial=0.0) / max(bias_scale, np.abs(tau).max(initial=0.0))
        return out
    dv = system.forward_dynamics(q, v, tau)
    n, m = len(theta), K.shape[0]
    kkt = np.block([[M_sp, K.T], [K, np.zeros((m, m))]])
    sol = np.linalg.solve(kkt, np.concatenate([T_sp - C_sp, -Kdv]))
    out["FD"] = np.abs(sol[:n] - (G @ dv + Gdv)).max(initial=0.0) / max(1.0, np.abs(sol[:n]).max(initial=0.0))
    out["ID"] = np.abs(system.inverse_dynamics(q, v, dv) - tau).max(initial=0.0) / max(1.0, np.abs(tau).max(initial=0.0))
    return out


@given(st.integers(0, 2**32 - 1))
@settings(max_examples=40)
def test_random_clusters_match_the_kkt_solution(seed):
    system = drawn_clustered_system(seed)
    rng = np.random.default_rng(seed)
    q = system.neutral_configuration() + 0.02 * rng.normal(size=system.nq)
    try:
        system.mass_matrix(q)
    except LoopClosureError:
        assume(False)
    v = rng.normal(size=system.nv)
    residuals = kkt_residuals(system, q, v, rng)
    assert max(residuals.values()) < 1e-9, residuals


def _stacked():
    from tests.embedding.test_backends import _stacked_clusters

    return _stacked_clusters()


@pytest.mark.parametrize("factory", [four_bar, mimic_gripper, lambda: four_bar_chain(4), _stacked])
def test_examples_match_the_kkt_solution(factory):
    system = factory()
    rng = np.random.default_rng(0)
    for _ in range(3):
        q = system.neutral_configuration() + 0.1 * rng.normal(size=system.nq)
        residuals = kkt_residuals(system, q, rng.normal(size=system.nv), rng)
        assert max(residuals.values()) < 1e-11, residuals


def test_determinant_is_the_product_of_the_cluster_pivots():
    import sko.algorithms as alg

    system = four_bar_chain(3)
    q = system.neutral_configuration()
    model, _, _ = system.sko_model(q)
    assert np.isclose(np.linalg.det(system.mass_matrix(q)), alg.mass_matrix_det(model), rtol=1e-10)

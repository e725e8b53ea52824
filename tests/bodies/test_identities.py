"""SKO.md identities on models built from mixed body types (weights of varying, non-square
shape): the generic recursions against the dense operator expressions they implement."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
import scipy.linalg

import sko.algorithms as alg
from sko.graphs import bwa_matrix, one_resolvent
from sko.examples.bodies import flexible_examples, random_system
from tests.util import assert_close

from .helpers import random_state

SYSTEMS = [("random", seed) for seed in range(6)] + [("example", name) for name in sorted(flexible_examples())]


def _system(kind, key):
    if kind == "example":
        return flexible_examples()[key]()
    return random_system(key, n_bodies=8, shape=["chain", "fan", "random", "forest"][key % 4])


def _dense_gain(model, K):
    """Dense ``K = ℰ_φ G``: block (℘(k), k) = K(℘(k), k), rows by node, columns by hinge."""
    out = np.zeros((model.node_size, model.dof_size))
    for k, Kk in K.items():
        out[model.node_slice(model.tree.parent(k)), model.dof_slice(k)] = Kk
    return out


@pytest.fixture(params=SYSTEMS, ids=[f"{a}-{b}" for a, b in SYSTEMS])
def state(request):
    system = _system(*request.param)
    rng = np.random.default_rng(11)
    q, qd = random_state(system, rng)
    model, a, b = system.sko_model(q, qd)
    return system, q, qd, model, a, b, rng


def test_equations_of_motion(state):
    """Eq. 1–3: ℳ (Algorithm 4.2) = H φ M φ* H*; T = ℳ θ̈ + 𝒞 with 𝒞 = H φ (M φ* a + b);
    𝒱 = φ* H* θ̇ equals each body's own node velocity; energy = ½ θ̇* ℳ θ̇ + potential."""
    system, q, qd, model, a, b, rng = state
    ops = model.dense()
    M = alg.mass_matrix(model)
    assert_close(M, ops.mass_matrix, 1e-12)
    qdd = rng.standard_normal(model.dof_size)
    ne = alg.newton_euler(model, qdd, qd, a, b)
    assert_close(ne.T, ops.mass_matrix @ qdd + ops.bias(a, b), 1e-12)
    nodes = system.node_states(q, qd)
    assert_close(ne.V, np.concatenate([nodes[k].V for k in model.bodies]), 1e-12)
    assert_close(ne.V, ops.phi.T @ ops.H.T @ qd, 1e-12)
    potential = sum(s.potential for s in nodes.values())
    assert system.energy(q, qd) == pytest.approx(0.5 * qd @ M @ qd + potential, rel=1e-12, abs=1e-12)


def test_articulated_body_identities(state):
    """Eq. 46 (H ψ M ψ* H* = D), φ M φ* = P + φ̃P + Pφ̃* + φKDK*φ*, Eq. 49 (innovations
    factorization), Eq. 51, 53 and forward dynamics (Algorithm 6.1) = ℳ^{-1}(T − 𝒞)."""
    system, q, qd, model, a, b, rng = state
    ops = model.dense()
    ab = alg.articulated_inertias(model)
    dims = model.node_dims()
    psi = one_resolvent(bwa_matrix(model.tree, dims, ab.psi))
    D = ops.H @ psi @ ops.M @ psi.T @ ops.H.T
    Dblocks = scipy.linalg.block_diag(*[ab.D[k] for k in model.bodies])
    assert_close(D, Dblocks, 1e-10)
    P = scipy.linalg.block_diag(*[ab.P[k] for k in model.bodies])
    K = _dense_gain(model, ab.K)
    phi, phit = ops.phi, ops.phi_tilde
    assert_close(phi @ ops.M @ phi.T, P + phit @ P + P @ phit.T + phi @ K @ Dblocks @ K.T @ phi.T, 1e-10)
    L = np.eye(model.dof_size) + ops.H @ phi @ K
    assert_close(L @ Dblocks @ L.T, ops.mass_matrix, 1e-10)
    assert_close(alg.mass_matrix_inverse(model), np.linalg.inv(ops.mass_matrix), 1e-8)
    assert alg.mass_matrix_logdet(model) == pytest.approx(np.linalg.slogdet(ops.mass_matrix)[1], rel=1e-10, abs=1e-10)
    tau = rng.standard_normal(model.dof_size)
    expected = np.linalg.solve(ops.mass_matrix, tau - ops.bias(a, b))
    assert_close(alg.forward_dynamics(model, tau, a, b), expected, 1e-9)


@settings(max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 12), shape=st.sampled_from(["chain", "fan", "random", "forest"]))
def test_hypothesis_mixed_models(seed, n, shape):
    """Random mixed trees of any size: Algorithm 4.2, 3.1 and 6.1 against the dense operators,
    and the recursion's node velocities against the bodies' own."""
    system = random_system(seed, n_bodies=n, shape=shape)
    rng = np.random.default_rng(seed)
    q, qd = random_state(system, rng)
    model, a, b = system.sko_model(q, qd)
    ops = model.dense()
    assert_close(alg.mass_matrix(model), ops.mass_matrix, 1e-12)
    tau = rng.standard_normal(model.dof_size)
    assert_close(alg.forward_dynamics(model, tau, a, b), np.linalg.solve(ops.mass_matrix, tau - ops.bias(a, b)), 1e-8)
    states = system.node_states(q, qd)
    assert_close(ops.phi.T @ ops.H.T @ qd, np.concatenate([states[k].V for k in model.bodies]), 1e-12)

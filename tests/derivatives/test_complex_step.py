"""Derivatives of the dynamics by complex step (sko.systems.derivatives): the worked example of
the theory guide to 12 digits, central differences along ``integrate`` on random forests of
every joint and on every built-in kind of system (flexible, geared rotors, coupled and closed
loops), batches equal to single states, and the errors on bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sko.bodies import Revolute
from sko.examples.bodies import flexible_examples, geared_rotor_chain
from sko.examples.embedding import four_bar, mimic_gripper
from sko.examples.rigid import example_systems
from sko.graphs.errors import DimensionError, NonFiniteError, SKOError
from sko.spatial import pose_transform
from sko.systems import SystemBuilder
from tests.rigid.random_systems import random_rigid_system


def three_link_pendulum():
    """The worked example (E) of the theory guide's derivatives section."""
    b = SystemBuilder(gravity=[0.0, 0.0, -9.81])
    parent = None
    for k, (x, length, mass) in enumerate(((0.0, 1.0, 2.0), (1.0, 0.8, 1.5), (0.8, 0.6, 1.0)), start=1):
        inertia = np.diag([0.01, mass * length**2 / 12, mass * length**2 / 12])
        b.add_body(f"l{k}", parent, Revolute([0.0, 1.0, 0.0]), pose_transform([x, 0.0, 0.0]), mass=mass,
                   com=[length / 2, 0.0, 0.0], inertia_com=inertia)
        parent = f"l{k}"
    return b.build()


def test_the_worked_example_to_twelve_digits():
    system = three_link_pendulum()
    q, v, a = np.array([0.3, -0.6, 0.9]), np.array([0.5, -0.8, 1.2]), np.array([0.3, -0.4, 0.7])
    dq, dv, M = system.inverse_dynamics_derivatives(q, v, a)
    np.testing.assert_allclose(system.inverse_dynamics(q, v, a), [-47.1728905888, -15.377159358, -2.24681719315],
                               rtol=1e-11)
    np.testing.assert_allclose(M, [[7.42918106666, 2.82044359238, 0.555787339123],
                                   [2.82044359238, 1.37837278477, 0.269186392385],
                                   [0.555787339123, 0.269186392385, 0.12]], rtol=1e-11)
    np.testing.assert_allclose(dq, [[7.74975457663, -2.29424363477, 1.22004238156],
                                    [-2.39693171909, -1.82586099696, 1.50538278561],
                                    [1.6617427992, 1.70679621729, 1.73902283843]], rtol=1e-11)
    np.testing.assert_allclose(dv, [[-1.78692028995, -1.08507688919, -0.497978136556],
                                    [-1.1530397007, -0.451196299945, -0.338397224959],
                                    [-0.024143012988, -0.112799074986, 0.0]], rtol=1e-11, atol=1e-13)


def _central(f, x, directions, h=1e-5):
    """Fourth-order central differences of ``f`` along each ``step(x, ±h e)``."""
    def column(step):
        return (8 * (f(step(h)) - f(step(-h))) - (f(step(2 * h)) - f(step(-2 * h)))) / (12 * h)

    return np.column_stack([column(lambda t, d=d: d(x, t)) for d in directions])


def _check_against_differences(system, seed: int, rtol: float = 1e-6):
    rng = np.random.default_rng(seed)
    q = system.random_configuration(rng)
    v, a, tau = rng.normal(size=(3, system.nv))
    basis = np.eye(system.nv)
    along_q = [lambda x, t, e=e: system.integrate(x, t * e) for e in basis]
    along_v = [lambda x, t, e=e: x + t * e for e in basis]
    dq, dv, M = system.inverse_dynamics_derivatives(q, v, a)
    fq = _central(lambda x: system.inverse_dynamics(x, v, a), q, along_q)
    fv = _central(lambda x: system.inverse_dynamics(q, x, a), v, along_v)
    scale = max(np.abs(fq).max(), np.abs(fv).max(), 1.0)
    assert np.abs(dq - fq).max() <= rtol * scale and np.abs(dv - fv).max() <= rtol * scale
    np.testing.assert_allclose(M, system.mass_matrix(q), rtol=1e-12, atol=1e-12 * np.abs(M).max())
    ddq, ddv, Minv = system.forward_dynamics_derivatives(q, v, tau)
    gq = _central(lambda x: system.forward_dynamics(x, v, tau), q, along_q)
    gv = _central(lambda x: system.forward_dynamics(q, x, tau), v, along_v)
    scale = max(np.abs(gq).max(), np.abs(gv).max(), 1.0)
    assert np.abs(ddq - gq).max() <= rtol * scale and np.abs(ddv - gv).max() <= rtol * scale
    np.testing.assert_allclose(Minv @ M, np.eye(system.nv), atol=1e-9)


@settings(max_examples=15)
@given(st.integers(0, 2**32 - 1))
def test_random_forests_of_every_joint_agree_with_central_differences(seed):
    _check_against_differences(random_rigid_system(seed), seed)


@settings(max_examples=30)
@given(st.integers(0, 2**32 - 1))
def test_the_tangent_columns_are_the_qdot_map(seed):
    """``qdot_matrix(q) v = qdot(q, v)`` (each joint's closed form, or its map column by column)."""
    system = random_rigid_system(seed)
    rng = np.random.default_rng(seed)
    q, v = system.random_configuration(rng), rng.normal(size=system.nv)
    np.testing.assert_allclose(system.qdot_matrix(q) @ v, system.qdot(q, v), rtol=1e-14, atol=1e-14)
    for k in system.bodies:
        joint = system.body_joint(k)
        qk, vk = q[system.q_slices[k]], v[system.dof_slices[k]]
        np.testing.assert_allclose(joint.qdot_matrix(qk) @ vk, joint.qdot(qk, vk), rtol=1e-14, atol=1e-14)


SYSTEMS = {**{name: make for name, make in example_systems().items()}, **flexible_examples(),
           "geared rotor chain": geared_rotor_chain, "mimic gripper": mimic_gripper, "four-bar": four_bar}


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_every_kind_of_system_agrees_with_central_differences(name):
    _check_against_differences(SYSTEMS[name](), 7)


def test_a_batch_equals_its_states_and_inputs_stay_unchanged():
    system = example_systems()["humanoid"]()
    rng = np.random.default_rng(3)
    Q = np.array([system.random_configuration(rng) for _ in range(4)])
    V, A = rng.normal(size=(2, 4, system.nv))
    before = [x.copy() for x in (Q, V, A)]
    for method in (system.inverse_dynamics_derivatives, system.forward_dynamics_derivatives):
        batch = method(Q, V, A)
        for s in range(4):
            # a batch of rigid bodies takes the lanes (another frame, another factorization of ℳ):
            # equal to rounding, forward dynamics' amplified by ℳ's condition
            slack = 1e-13
            if method == system.forward_dynamics_derivatives:
                slack += system.nv * np.linalg.cond(system.mass_matrix(Q[s])) * np.finfo(float).eps
            for together, alone in zip(batch, method(Q[s], V[s], A[s])):
                np.testing.assert_allclose(together[s], alone, rtol=0, atol=slack * np.abs(alone).max())
    for x, y in zip((Q, V, A), before):
        np.testing.assert_array_equal(x, y)


def test_external_forces_enter_the_derivatives():
    system = example_systems()["humanoid"]()
    rng = np.random.default_rng(5)
    q = system.random_configuration(rng)
    v, a = rng.normal(size=(2, system.nv))
    forces = {system.bodies[-1]: rng.normal(size=6)}
    dq, _, _ = system.inverse_dynamics_derivatives(q, v, a, external_forces=forces)
    fq = _central(lambda x: system.inverse_dynamics(x, v, a, forces), q,
                  [lambda x, t, e=e: system.integrate(x, t * e) for e in np.eye(system.nv)])
    assert np.abs(dq - fq).max() <= 1e-6 * np.abs(fq).max()
    assert np.abs(dq - system.inverse_dynamics_derivatives(q, v, a).dtau_dq).max() > 1e-3


def test_bad_input_gets_the_project_errors():
    system = example_systems()["humanoid"]()
    q = system.random_configuration(0)
    with pytest.raises(DimensionError, match="q has length"):
        system.inverse_dynamics_derivatives(q[:-1])
    with pytest.raises(DimensionError, match="must be real"):
        system.inverse_dynamics_derivatives(q + 0j)
    with pytest.raises(DimensionError, match="same leading batch axis"):
        system.forward_dynamics_derivatives(q[None], np.zeros(system.nv))
    with pytest.raises(NonFiniteError):
        system.inverse_dynamics_derivatives(q, np.full(system.nv, np.nan))
    V = np.zeros((2, system.nv))
    V[1] = 1e200  # velocity products overflow: named as state 1 of the caller's batch
    with pytest.raises(SKOError, match="state 1"):
        system.inverse_dynamics_derivatives(np.array([q, q]), V)

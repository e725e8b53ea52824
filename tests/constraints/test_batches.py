"""Batches and constraint sets at their edges, the same on both paths (CONSTRAINTS.md §3): no
constraint is the free dynamics, a batch of no states gives empty results, every vector is named
in its errors, and a vector without the batch axis of ``q`` is refused as the systems' requests
refuse it."""

import numpy as np
import pytest

import sko

from sko.constraints import (PointContact, constrained_operational_space_inertia, constraint_compliance,
                             constraint_drift, constraint_error, constraint_jacobian)
from sko.constraints.dynamics import reference_constrained_dynamics, reference_impulse_dynamics
from sko.engine.dispatch import use_backend
from sko.examples.rigid import planar_chain
from sko.graphs.errors import DimensionError, NonFiniteError

BACKENDS = ("compiled", "reference")


def _state():
    return planar_chain(3), np.array([0.3, 0.2, -0.1]), np.array([0.5, -0.4, 0.2]), np.array([0.1, 0.0, -0.2])


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_constraint_is_the_free_dynamics(backend):
    system, q, v, tau = _state()
    with use_backend(backend):
        dv, lam = system.constrained_dynamics(q, v, tau, [])
        np.testing.assert_allclose(dv, system.forward_dynamics(q, v, tau), rtol=1e-12, atol=1e-12)
        assert lam.shape == (0,)
        v_plus, impulses = system.impulse_dynamics(q, v, [])
        np.testing.assert_array_equal(v_plus, v)
        assert impulses.shape == (0,)
        assert constraint_jacobian(system, q, []).shape == (0, 3)
        assert constraint_drift(system, q, v, []).shape == (0,)
        assert constraint_error(system, q, []).shape == (0,)
        assert constraint_compliance(system, q, []).shape == (0, 0)
        d = system.constrained_dynamics_derivatives(q, v, tau, [])
        assert d.ddv_dq.shape == (3, 3) and d.dlam_dq.shape == (0, 3)
        Q = np.stack([q, q])
        assert constraint_jacobian(system, Q, []).shape == (2, 0, 3)
        rollout = sko.rollout(system, q, v, dt=1e-3, steps=2, constraints=[])
        assert rollout.q.shape == (3, 3) and rollout.forces.shape == (2, 0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_batch_of_no_states_gives_empty_results(backend):
    system = planar_chain(3)
    C = [PointContact("tip")]
    Z = np.zeros((0, 3))
    with use_backend(backend):
        dv, lam = system.constrained_dynamics(Z, Z, Z, C)
        assert dv.shape == (0, 3) and lam.shape == (0, 3)
        v_plus, impulses = system.impulse_dynamics(Z, Z, C)
        assert v_plus.shape == (0, 3) and impulses.shape == (0, 3)
    assert constraint_jacobian(system, Z, C).shape == (0, 3, 3)
    assert constraint_drift(system, Z, Z, C).shape == (0, 3)
    assert constraint_error(system, Z, C).shape == (0, 3)
    assert constraint_compliance(system, Z, C).shape == (0, 3, 3)
    assert constrained_operational_space_inertia(system, Z, C).shape == (0, 3, 3)
    d = system.constrained_dynamics_derivatives(Z, Z, Z, C)
    assert d.ddv_dq.shape == (0, 3, 3) and d.dlam_dtau.shape == (0, 3, 3)
    with pytest.raises(DimensionError, match="tau"):
        reference_constrained_dynamics(system, Z, Z, np.zeros((0, 2)), C)


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_vector_is_named_and_batches_agree(backend):
    system, q, v, tau = _state()
    C = [PointContact("tip")]
    with use_backend(backend):
        with pytest.raises(DimensionError, match="tau has length 2"):
            system.constrained_dynamics(q, v, tau[:2], C)
        with pytest.raises(NonFiniteError, match="tau"):
            system.constrained_dynamics(q, v, np.full(3, np.inf), C)
        with pytest.raises(DimensionError, match="v has shape"):
            system.constrained_dynamics(np.stack([q, q]), v, tau, C)
        with pytest.raises(DimensionError, match="tau has shape"):
            system.constrained_dynamics(np.stack([q, q]), np.stack([v, v]), tau, C)
        with pytest.raises(DimensionError, match="v has shape"):
            system.impulse_dynamics(np.stack([q, q]), v, C)
        with pytest.raises(NonFiniteError, match=r"tau .*index \[1, 0\]"):
            system.constrained_dynamics(np.stack([q, q]), np.stack([v, v]), np.stack([tau, np.full(3, np.nan)]), C)
    with pytest.raises(DimensionError, match="tau has length 2"):
        reference_constrained_dynamics(system, q, v, tau[:2], C)
    with pytest.raises(DimensionError, match="v has length 2"):
        reference_impulse_dynamics(system, q, v[:2], C)


def test_the_derivatives_of_a_batch_are_named_fields():
    system, q, v, tau = _state()
    d = system.constrained_dynamics_derivatives(np.stack([q, q]), np.stack([v, v]), np.stack([tau, tau]),
                                                [PointContact("tip")])
    assert d.ddv_dq.shape == (2, 3, 3) and d.dlam_dv.shape == (2, 3, 3)

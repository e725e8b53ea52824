"""The constrained rollout checks its inputs as :func:`sko.rollout` does (one set of checks):
sizes, real and finite states, and the shape of held forces (a ``(B, nv)`` array is not read as
per-step forces)."""

import numpy as np
import pytest

import sko
from sko.constraints import PointContact
from sko.examples.rigid import planar_chain
from sko.graphs.errors import DimensionError, NonFiniteError

C = [PointContact("tip")]


def _chain():
    return planar_chain(3), np.array([0.3, 0.2, -0.1]), np.zeros(3)


@pytest.mark.parametrize("constraints", [None, C])
@pytest.mark.parametrize("bad, error, match", [
    (dict(q0=np.zeros(2)), DimensionError, "q0 has length 2"),
    (dict(v0=np.zeros(2)), DimensionError, "v0 has length 2"),
    (dict(q0=np.array([0.3, 0.2, -0.1]) + 0.5j), DimensionError, "q0 must be real"),
    (dict(v0=np.array([0.0, np.nan, 0.0])), NonFiniteError, "v0"),
    (dict(q0=np.zeros((3, 3)), v0=np.zeros((2, 3))), DimensionError, "v0 has 2 states but q0 has 3"),
    (dict(q0=np.zeros((3, 3)), v0=np.zeros((3, 3)), tau=np.diag([5.0, 0.0, 0.0])), DimensionError,
     r"tau has shape \(3, 3\), expected \(3, 3, 3\)"),
    (dict(tau=np.zeros((3, 3)) + 1j), DimensionError, "tau must be real"),
    (dict(tau=object()), sko.SKOError, "tau must be an array or a callable"),
])
def test_bad_inputs_are_named_with_and_without_constraints(constraints, bad, error, match):
    system, q0, v0 = _chain()
    args = dict(q0=q0, v0=v0, tau=None) | bad
    with pytest.raises(error, match=match):
        sko.rollout(system, args["q0"], args["v0"], dt=1e-3, steps=3, tau=args["tau"], constraints=constraints)


def test_a_held_vector_is_every_step_s_forces():
    system, q0, v0 = _chain()
    tau = np.array([0.5, -0.2, 0.1])
    held = sko.rollout(system, q0, v0, dt=1e-3, steps=3, tau=tau, constraints=C)
    per_step = sko.rollout(system, q0, v0, dt=1e-3, steps=3, tau=np.tile(tau, (3, 1)), constraints=C)
    np.testing.assert_array_equal(held.v, per_step.v)
    batch = sko.rollout(system, np.stack([q0, q0]), np.stack([v0, v0]), dt=1e-3, steps=3, tau=tau, constraints=C)
    np.testing.assert_array_equal(batch.v[1], held.v)


def _complex(t, q, v):
    return np.zeros(np.shape(v)) + 1e-3j


def _symbolic(t, q, v):
    import sympy

    out = np.zeros(np.shape(v), dtype=object)
    out[...] = sympy.Symbol("f")
    return out


def _text(t, q, v):
    return np.full(np.shape(v), "1.0")


@pytest.mark.parametrize("constraints", [None, C])
@pytest.mark.parametrize("controller, match", [
    (_complex, r"tau\(t, .*\) must return real numbers, got complex128"),
    (_symbolic, r"tau\(t, .*\) must return real numbers, got object"),
    (_text, r"tau\(t, .*\) must return numbers, got dtype <U3"),
])
def test_a_controller_returning_other_than_real_numbers_is_named(constraints, controller, match):
    """A complex controller lost its imaginary part to a ComplexWarning (the rollout ran on the
    real part), a symbolic or text one raised numpy's or sympy's error."""
    system, q0, v0 = _chain()
    with pytest.raises(DimensionError, match=match):
        sko.rollout(system, q0, v0, dt=1e-3, steps=3, tau=controller, constraints=constraints)


def _damping(t, q, v):
    return -0.5 * np.asarray(v)


def _meddling(t, q, v):
    out = _damping(t, q, v)
    q[...] = 99.0  # the controller writes what it was given: the rollout's own state must not change
    v[...] = 99.0
    return out


@pytest.mark.parametrize("constraints", [None, C])
def test_a_controller_cannot_change_the_state_it_is_given(constraints):
    system, q0, v0 = _chain()
    kept = sko.rollout(system, q0, v0 + 0.1, dt=1e-3, steps=3, tau=_damping, constraints=constraints)
    meddled = sko.rollout(system, q0, v0 + 0.1, dt=1e-3, steps=3, tau=_meddling, constraints=constraints)
    np.testing.assert_array_equal(meddled.q, kept.q)
    np.testing.assert_array_equal(meddled.v, kept.v)


@pytest.mark.parametrize("constraints", [None, C])
def test_trajectories_memory_cannot_hold_are_named(constraints):
    """numpy's MemoryError ("Unable to allocate 14.6 TiB") came from allocating the results."""
    system, q0, v0 = _chain()
    with pytest.raises(DimensionError, match=r"rollout: the trajectories of shapes \(1, 1000000000001, 3\).* need "
                                             r".* GiB, more than memory can hold"):
        sko.rollout(system, q0, v0, dt=1e-300, steps=10**12, constraints=constraints)

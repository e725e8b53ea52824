"""Hostile input on the compiled path of the systems' methods: the same answers and the same
project errors as the reference path, for one state and for batches (an empty batch, external
forces of another scalar type than the state, states whose terms overflow)."""

import re
import warnings

import numpy as np
import pytest

from sko.examples.rigid import arm7, humanoid
from sko.graphs.errors import DimensionError, NonFiniteError
from sko.engine.dispatch import engine, use_backend
from tests.rigid.random_systems import random_rigid_system

BACKENDS = ["compiled", "reference"]


def _by_configuration(system):
    frame = list(system.frames)[-1]
    return {
        "mass_matrix": system.mass_matrix,
        "mass_matrix_inverse": system.mass_matrix_inverse,
        "gravity_forces": system.gravity_forces,
        "potential_energy": system.potential_energy,
        "center_of_mass": system.center_of_mass,
        "center_of_mass_jacobian": system.center_of_mass_jacobian,
        "jacobian": lambda q: system.jacobian(q, frame),
    }


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("method", sorted(_by_configuration(arm7())))
def test_an_empty_batch_of_the_wrong_width_is_refused(method, backend):
    """A batch of no state still has the width of a state: (0, 0) is not a batch of q."""
    system = arm7()
    call = _by_configuration(system)[method]
    with use_backend(backend):
        assert call(np.zeros((0, system.nq))).shape[0] == 0
        with pytest.raises(DimensionError, match="expected nq = 7"):
            call(np.zeros((0, 0)))
        with pytest.raises(DimensionError, match="expected nv = 7"):
            system.inverse_dynamics(np.zeros((0, system.nq)), np.zeros((0, 3)))


def _overflowing_calls(system, q, v):
    return {
        "inverse_dynamics": lambda: system.inverse_dynamics(q, v),
        "forward_dynamics": lambda: system.forward_dynamics(q, v),
        "bias_forces": lambda: system.bias_forces(q, v),
        "kinetic_energy": lambda: system.kinetic_energy(q, v),
        "energy": lambda: system.energy(q, v),
        "batched_bias_forces": lambda: system.bias_forces(np.array([q, q]), np.array([v / 1e300, v])),
    }


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("method", sorted(_overflowing_calls(None, None, None)))
def test_a_python_state_body_that_overflows_is_reported_without_numpy_warnings(method, backend):
    """A body type with no compiled state (a custom joint) runs its Python ``at_state`` on the
    compiled path too: its overflow is the project's NonFiniteError, never a numpy warning (an
    error under ``-W error``)."""
    system = random_rigid_system(3)
    assert not engine(system).layout.all_compiled
    rng = np.random.default_rng(0)
    q, v = system.random_configuration(rng), rng.normal(size=system.nv) * 1e300
    with use_backend(backend), warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(NonFiniteError):
            _overflowing_calls(system, q, v)[method]()


@pytest.mark.parametrize("method", ["mass_matrix", "mass_matrix_inverse"])
def test_a_mass_matrix_that_overflows_is_reported_without_numpy_warnings(method):
    system = random_rigid_system(3)
    q = system.random_configuration(np.random.default_rng(0)) * 1e300
    for backend in BACKENDS:
        with use_backend(backend), warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(NonFiniteError):
                getattr(system, method)(q)


def _force_calls(system, forces):
    return {
        "inverse_dynamics": lambda q, v, x: system.inverse_dynamics(q, v, x, external_forces=forces),
        "forward_dynamics": lambda q, v, x: system.forward_dynamics(q, v, x, external_forces=forces),
        "bias_forces": lambda q, v, x: system.bias_forces(q, v, external_forces=forces),
        "b of sko_model": lambda q, v, x: system.sko_model(q, v, external_forces=forces)[2],
    }


@pytest.mark.parametrize("kind", ["complex", "object"])
@pytest.mark.parametrize("method", sorted(_force_calls(None, None)))
def test_external_forces_of_another_scalar_type_than_the_state(method, kind):
    """A complex (complex-step) or object force on a float state promotes the result as the
    reference path does, for one state and a batch, instead of failing to cast inside numpy."""
    system = humanoid()
    rng = np.random.default_rng(2)
    f = np.arange(1.0, 7.0) + 1e-20j * np.arange(6) if kind == "complex" else np.arange(1, 7).astype(object)
    call = _force_calls(system, {"right_foot": f})[method]
    Q = np.array([system.random_configuration(rng) for _ in range(3)])
    V, X = rng.normal(size=(2, 3, system.nv))
    batches = [(Q[0], V[0], X[0])] + ([] if method == "b of sko_model" else [(Q, V, X)])
    for q, v, x in batches:
        got = call(q, v, x)
        with use_backend("reference"):
            want = call(q, v, x)
        assert got.shape == want.shape
        assert got.dtype.kind == want.dtype.kind == ("c" if kind == "complex" else "O")
        np.testing.assert_allclose(np.asarray(got, dtype=complex), np.asarray(want, dtype=complex), atol=1e-9)
        if kind == "complex":  # the perturbation of the force reaches the result
            assert np.abs(np.asarray(got).imag).max() > 0


def test_a_complex_force_on_a_real_state_leaves_the_model_real():
    system = humanoid()
    q = system.random_configuration(np.random.default_rng(2))
    forces = {"right_foot": np.arange(1.0, 7.0) + 1e-20j}
    for backend in BACKENDS:
        with use_backend(backend):
            model, a, b = system.sko_model(q, None, forces)
            assert model.dtype == np.float64 and a.dtype == np.float64 and b.dtype == np.complex128


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_bad_force_on_a_batch_is_not_blamed_on_state_zero(backend):
    system = humanoid()
    Q = np.array([system.neutral_configuration()] * 2)
    with use_backend(backend), pytest.raises(DimensionError) as info:
        system.bias_forces(Q, None, external_forces={"right_foot": np.zeros(5)})
    assert "right_foot" in str(info.value) and "state 0" not in str(info.value)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("number", ["Fraction", "Decimal", "int"])
def test_a_state_of_plain_python_numbers_is_a_float_state(number, backend):
    """``Fraction``, ``Decimal`` and big Python ints in an object array are numbers: the answer is
    the float64 one (numpy has no cosine for them), for one state and a batch; an int beyond the
    float range is a NonFiniteError naming q."""
    from decimal import Decimal
    from fractions import Fraction

    system = humanoid()
    q = system.random_configuration(np.random.default_rng(4))
    make = {"Fraction": lambda x: Fraction(x).limit_denominator(10**6), "Decimal": lambda x: Decimal(float(x)),
            "int": lambda x: int(round(x))}[number]
    exact = np.array([make(x) for x in q], dtype=object)
    as_float = np.array(exact, dtype=float)
    with use_backend(backend):
        for got, want in ((system.mass_matrix(exact), system.mass_matrix(as_float)),
                          (system.forward_dynamics(np.array([exact, exact])), system.forward_dynamics(np.array([as_float] * 2))),
                          (system.energy(list(exact)), system.energy(as_float))):
            assert np.asarray(got).dtype == np.float64
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        with pytest.raises(NonFiniteError, match="q .*beyond the floating-point range"):
            system.mass_matrix(np.array([10**400] * system.nq, dtype=object))


@pytest.mark.parametrize("method", ["inverse_dynamics", "forward_dynamics"])
def test_accelerations_and_torques_are_checked_alike_on_both_paths(method):
    """``qdd``/``tau`` of plain numbers in an object array give the float64 answer, and a wrong
    length the same error, on both paths."""
    system = arm7()
    q, x = system.random_configuration(np.random.default_rng(1)), np.arange(7.0)
    call = getattr(system, method)
    want = call(q, None, x)
    for backend in BACKENDS:
        with use_backend(backend):
            got = call(q, None, x.astype(object))
            assert got.dtype == np.float64
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
            with pytest.raises(DimensionError, match="has length 6, expected nv = 7"):
                call(q, None, x[:6])


@pytest.mark.parametrize("dtype", [np.float64, np.complex128, object])
def test_an_empty_batch_keeps_the_scalar_type_on_both_paths(dtype):
    system = arm7()
    Q, V = np.zeros((0, system.nq), dtype=dtype), np.zeros((0, system.nv), dtype=dtype)
    for backend in BACKENDS:
        with use_backend(backend):
            assert system.mass_matrix(Q).dtype == dtype and system.mass_matrix(Q).shape == (0, 7, 7)
            assert system.inverse_dynamics(Q, V).dtype == dtype and system.energy(Q, V).shape == (0,)


@pytest.mark.parametrize("joint", ["free", "spherical"])
def test_qdot_at_a_zero_quaternion_is_a_joint_error_not_nan(joint):
    """``q̇`` of a free joint rotates the linear velocity by the quaternion's rotation: at a zero
    quaternion that was NaN passed on (through the system's coordinate maps too)."""
    from sko.errors import JointError

    system = humanoid()
    q = system.random_configuration(np.random.default_rng(0))
    q[system.q_slice("pelvis" if joint == "free" else "left_thigh")][:4] = 0
    with pytest.raises(JointError, match="zero norm"):
        system.qdot(q, np.ones(system.nv))
    body = "pelvis" if joint == "free" else "left_thigh"
    with pytest.raises(JointError, match="zero norm"):
        system.body(body).joint.qdot(q[system.q_slice(body)][:system.body(body).joint.nq], np.ones(system.body(body).joint.nv))


def test_an_empty_acceleration_is_not_read_as_none_given():
    """An empty ``dv`` from the caller is a wrong length, not a request for the bias forces
    (the one-state kernel once read an empty ``x`` as "no accelerations")."""
    system = arm7()
    q = system.random_configuration(np.random.default_rng(0))
    for backend in BACKENDS:
        with use_backend(backend):
            for qdd in (np.zeros(0), np.zeros(0)[::-1], []):
                with pytest.raises(DimensionError, match="dv has length 0, expected nv = 7"):
                    system.inverse_dynamics(q, np.ones(7), qdd)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_clustered_batch_with_a_nan_is_refused_alike_on_both_paths(backend):
    """The SKO model is one state's: a batch is refused as such, before its NaN is looked at; the
    Jacobian takes batches, and names the NaN's place in the batch."""
    from sko.examples.embedding import mimic_gripper

    system = mimic_gripper()
    Q = np.array([system.neutral_configuration()] * 3)
    Q[1, 0] = np.nan
    with use_backend(backend):
        with pytest.raises(DimensionError, match="must be 1-D"):
            system.sko_model(Q)
        with pytest.raises(NonFiniteError, match=re.escape("q (shape (3, 4)) contains NaN or infinity, first at index [1, 0]")):
            system.jacobian(Q, list(system.frames)[-1])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("batched", [False, True])
def test_a_body_s_python_code_cannot_write_the_callers_state(batched, backend):
    """A body type with no compiled state runs its Python code on the compiled path too; it gets
    read-only states there as on the reference path, so a joint that wraps its angle in place
    cannot change the caller's ``q``."""
    from sko.bodies.joints import CustomJoint, Revolute
    from sko.examples.rigid import box_inertia
    from sko.spatial import rot, rx
    from sko.systems import SystemBuilder

    def kinematics(q, v):
        q[0] = q[0] % (2 * np.pi)
        S = np.zeros((6, 1))
        S[0, 0] = 1.0
        return rot(rx(q[0])), S, np.zeros(6)

    b = SystemBuilder()
    b.add_body("a", None, Revolute([0, 0, 1], name="j1"), mass=1.0, inertia_com=box_inertia(1.0, [0.1, 0.2, 0.3]))
    b.add_body("b", "a", CustomJoint(1, 1, kinematics, name="wrap"), mass=1.0, inertia_com=box_inertia(1.0, [0.1, 0.2, 0.3]))
    system = b.build()
    q = np.array([[0.3, 10.0]] * 2) if batched else np.array([0.3, 10.0])
    with use_backend(backend), pytest.raises(ValueError, match="read-only"):
        system.mass_matrix(q)
    assert (q[..., 1] == 10.0).all()

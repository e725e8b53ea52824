"""The physics checks of :mod:`sko.verify.physics`: they pass on every built-in system and catch
body types whose operators are consistent with the recursions but wrong as mechanics."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from sko.bodies import FlexibleBody, GearedRotorLink, RigidBody
from sko.bodies.beam import flexible_beam
from sko.bodies.hinge import hinge_state
from sko.bodies.joints import Free, Revolute, Spherical
from sko.spatial import pose_transform, spatial_inertia
from sko.systems import MultibodySystem
from sko.verify import REGISTRY, run, run_check
from sko.verify.models import model_names
from sko.verify.physics import tangent_derivative

PHYSICS = ["christoffel", "conservative_forces", "power_balance", "mass_from_energy"]


def _inertia(mass, com, diag):
    return spatial_inertia(mass, np.asarray(com, dtype=float), np.diag(diag))


# --------------------------------------------------------------------------- broken body types
class DroppedGyroscopic(GearedRotorLink):
    """A gyrostat whose rotor's gyroscopic term ω_o × I_r w is missing from b."""

    def at_state(self, q, qd, inboard, gravity):
        s = super().at_state(q, qd, inboard, gravity)
        b = s.b.copy()
        b[6:] = 0.0
        return dataclasses.replace(s, b=b)


class WrongSignA(RigidBody):
    """A rigid body whose a(k) has the wrong sign on v × S θ̇."""

    def at_state(self, q, qd, inboard, gravity):
        s = super().at_state(q, qd, inboard, gravity)
        h = hinge_state(self.joint, self.placement, q, qd, inboard)
        return dataclasses.replace(s, a=s.a - 2 * h.v_cross @ (h.S @ qd))


class WrongModalCoupling(FlexibleBody):
    """A flexible body that drops the Coriolis coupling 2 ω × Φ η̇ from b (keeps half of it)."""

    def at_state(self, q, qd, inboard, gravity):
        s = super().at_state(q, qd, inboard, gravity)
        nq, nv = self.joint.nq, self.joint.nv
        eta, etad = q[nq:], qd[nv:]
        B = self._B(self.positions + self.modes @ eta)
        omega = s.V[:3]
        extra = np.einsum("i,iaj,ia->j", self.masses, B, np.cross(omega, self.modes @ etad))
        return dataclasses.replace(s, b=s.b - extra)


class WrongPotential(FlexibleBody):
    """A flexible body whose potential counts the elastic energy twice."""

    def at_state(self, q, qd, inboard, gravity):
        s = super().at_state(q, qd, inboard, gravity)
        eta = q[self.joint.nq:]
        return dataclasses.replace(s, potential=s.potential + 0.5 * eta @ self.stiffness @ eta)


class OwnKineticEnergy(RigidBody):
    """A rigid body offering its own kinetic energy (``right``: ½ vᵀ I v; else one that forgets
    the rotational part)."""

    def __init__(self, *args, right: bool = True, **kwargs):
        super().__init__(*args, **kwargs)
        self.right = right

    def kinetic_energy(self, q, qd, inboard):
        h = hinge_state(self.joint, self.placement, q, qd, inboard)
        I = self.inertia if self.right else np.diag([0, 0, 0, 1, 1, 1]) * self.inertia
        return 0.5 * h.v @ I @ h.v


def _gyrostat(cls=GearedRotorLink):
    base = RigidBody("base", None, Spherical(), _inertia(2.0, [0.1, 0.0, 0.2], [0.3, 0.2, 0.25]))
    link = cls("link", "base", Revolute([0.0, 1.0, 0.0]), _inertia(1.0, [0.3, 0.0, 0.0], [0.02, 0.05, 0.05]),
               rotor_axis=[0.0, 0.3, 1.0], gear_ratio=30.0, axial_inertia=2e-3, transverse_inertia=1e-3,
               rotor_centre=[0.1, 0.0, 0.0], placement=pose_transform([0.2, 0.1, 0.0], [0.1, 0.2, 0.3]))
    return MultibodySystem([base, link])


def _rigid_chain(cls=RigidBody):
    a = RigidBody("a", None, Revolute([0.0, 0.0, 1.0]), _inertia(1.0, [0.4, 0.0, 0.0], [0.01, 0.04, 0.04]))
    b = cls("b", "a", Revolute([0.0, 1.0, 0.0]), _inertia(0.8, [0.3, 0.1, 0.0], [0.01, 0.03, 0.03]),
            placement=pose_transform([0.5, 0.0, 0.0], [0.2, 0.0, 0.0]))
    c = RigidBody("c", "b", Revolute([1.0, 0.0, 0.0]), _inertia(0.5, [0.2, 0.0, 0.1], [0.01, 0.02, 0.02]),
                  placement=pose_transform([0.4, 0.0, 0.1]))
    return MultibodySystem([a, b, c])


def _flexible(cls=FlexibleBody):
    beam = flexible_beam("beam", None, Revolute([0.0, 1.0, 0.0]), 1.0, 1.0, 20.0, 2, directions=("z", "y"),
                         damping_ratio=0.02)
    bent = cls("beam", None, beam.joint, beam.masses, beam.positions, beam.modes, beam.stiffness, beam.damping,
               {k: (n.position, n.translation, n.rotation) for k, n in beam.nodes.items()})
    tip = RigidBody("tip", "beam", Revolute([1.0, 0.0, 0.0]), _inertia(0.3, [0.05, 0.0, 0.0], [1e-3, 2e-3, 2e-3]),
                    attach="tip")
    return MultibodySystem([bent, tip])


def _results(system):
    return {r.name: r for r in run(models=[system], checks=PHYSICS)}


# --------------------------------------------------------------------------- the tests
def test_physics_checks_are_registered_and_need_a_system():
    for name in PHYSICS:
        assert REGISTRY.get(name).system
    names = {r.name for r in run(models=["chain"])}
    assert not names & set(PHYSICS)  # a bare SKO model has no energies to compare with


def test_physics_checks_pass_on_every_built_in_system():
    systems = [n for n in model_names(symbolic=False, builtin=False)]
    results = run(models=systems, checks=PHYSICS)
    assert len(results) == 4 * len(systems) and len(systems) >= 8
    failed = [(r.model, r.name, r.residual, r.detail) for r in results if not r.passed]
    assert not failed


@pytest.mark.parametrize("build", [_gyrostat, _rigid_chain, _flexible])
def test_physics_checks_pass_on_correct_body_types(build):
    results = _results(build())
    assert all(r.passed for r in results.values()), {n: (r.residual, r.detail) for n, r in results.items()}


def test_christoffel_uses_hamel_term_for_quaternions():
    """A single tumbling free body: ℳ is constant in body coordinates, so all its velocity
    products (ω × Iω) come from Hamel's term, and the check must still pass."""
    body = RigidBody("b", None, Free(), _inertia(2.0, [0.1, 0.2, 0.0], [0.1, 0.2, 0.3]))
    system = MultibodySystem([body], gravity=np.zeros(3))
    result = run_check("christoffel", system)
    assert result.passed, result
    q, v = system.random_configuration(1), np.array([1.0, -2.0, 0.5, 0.3, 0.0, 0.1])
    assert np.abs(system.bias_forces(q, v)).max() > 0.1  # there is something to check


def test_dropped_gyroscopic_term_is_caught():
    results = _results(_gyrostat(DroppedGyroscopic))
    assert not results["christoffel"].passed
    assert results["christoffel"].residual > 1e-3
    assert results["conservative_forces"].passed  # gravity is unaffected


def test_wrong_sign_in_a_is_caught():
    results = _results(_rigid_chain(WrongSignA))
    assert not results["christoffel"].passed
    assert not results["power_balance"].passed


def test_wrong_modal_coupling_is_caught():
    results = _results(_flexible(WrongModalCoupling))
    assert not results["christoffel"].passed
    assert not results["power_balance"].passed


def test_wrong_potential_is_caught():
    results = _results(_flexible(WrongPotential))
    assert not results["conservative_forces"].passed
    assert not results["power_balance"].passed
    assert results["christoffel"].passed and results["mass_from_energy"].passed


def test_mass_matrix_from_own_kinetic_energy():
    assert _results(_rigid_chain(OwnKineticEnergy))["mass_from_energy"].passed
    wrong = _rigid_chain(lambda *a, **k: OwnKineticEnergy(*a, right=False, **k))
    result = _results(wrong)["mass_from_energy"]
    assert not result.passed and result.residual > 1e-3


def test_physics_checks_run_on_user_systems_by_name_free_run():
    from sko.verify import resolve_cases

    (case,) = resolve_cases([_rigid_chain()])
    assert case.system is not None and case.q is not None


def test_tangent_derivative_falls_back_when_float_arrays_drop_the_imaginary_part():
    def float_filled(x):  # a researcher's function filling np.zeros (float): drops Im with a warning
        out = np.zeros(2)
        out[:] = [np.sin(x[0]), x[0] * x[1]]
        return out

    x, w = np.array([0.3, 2.0]), np.array([1.0, 0.5])
    d = tangent_derivative(float_filled, x, w)
    assert np.allclose(d, [np.cos(0.3), 0.5 * 0.3 + 2.0], rtol=1e-10)

    def real_part(x):  # silently takes .real
        return np.array([np.sin(np.real(x[0])) + x[1] * 0])

    assert np.allclose(tangent_derivative(real_part, x, w), [np.cos(0.3)], rtol=1e-10)


def test_complex_step_is_used_where_supported():
    f = lambda x: np.array([np.exp(x[0])])  # noqa: E731
    d = tangent_derivative(f, np.array([1.0]), np.array([1.0]))
    assert abs(d[0] - np.e) < 1e-14 * np.e

"""A body type that drops the imaginary part of a complex state (``.real``, ``np.real``,
``astype(float)``, ``abs``, ``float()``, in ``at_state`` or ``hinge_force``) is named before its
complex-step derivatives could come out wrong (sko.systems.complex_carry); a body that keeps
them gives the derivatives of central differences."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from sko.bodies import Revolute
from sko.bodies.contract import BodyError
from sko.bodies.rotor import GearedRotorLink
from sko.engine.bodies import rigid as rigid_kernels
from sko.engine.state_kernels import Row, StateKernel, numeric_state
from sko.spatial import pose_transform, spatial_inertia
from sko.systems import MultibodySystem
from tests.bodies.test_paper import _load

TUTORIAL = _load("tutorial_body_type")


def _dropping(where: str, drop):
    """The tutorial's bead, with ``drop`` applied to ``q`` in ``where`` (its Python state)."""

    class Dropping(TUTORIAL.Bead):
        def at_state(self, q, qd, inboard, gravity):
            return super().at_state(drop(q) if where == "at_state" else q, qd, inboard, gravity)

        def hinge_force(self, q, qd):
            return super().hinge_force(drop(q) if where == "hinge_force" else q, qd)

    return Dropping


def _system(bead):
    original = TUTORIAL.Bead
    TUTORIAL.Bead = bead
    try:
        return TUTORIAL.build()
    finally:
        TUTORIAL.Bead = original


DROPS = {
    ".real": lambda q: np.asarray(q).real,
    "np.real": np.real,
    "astype(float)": lambda q: np.asarray(q).astype(float),
    "abs": lambda q: np.abs(q) * np.sign(np.real(q)),
    "float()": lambda q: np.array([float(q[0])]),
    "float() of the real part": lambda q: np.array([float(np.real(q[0]))]),
    "a list of floats": lambda q: np.array([float(x.real) for x in q]),
}


@pytest.mark.parametrize("where", ["at_state", "hinge_force"])
@pytest.mark.parametrize("drop", list(DROPS))
def test_a_body_dropping_the_imaginary_part_is_named(where, drop):
    system = _system(_dropping(where, DROPS[drop]))
    rng = np.random.default_rng(1)
    q, v, dv = system.random_configuration(rng), rng.normal(size=system.nv), rng.normal(size=system.nv)
    with pytest.raises(BodyError, match=r"body 'bead-on-(pendulum|beam)' \(Dropping\): its .*(drops the imaginary "
                                        r"part|fails on a complex state).*keep complex numbers through"):
        system.inverse_dynamics_derivatives(q, v, dv, method="complex_step")


def test_a_body_keeping_complex_numbers_gives_the_differences():
    system = _system(_dropping("nowhere", DROPS[".real"]))  # a Python state, nothing dropped
    rng = np.random.default_rng(2)
    q, v, dv = system.random_configuration(rng), rng.normal(size=system.nv), rng.normal(size=system.nv)
    dq, _, _ = system.inverse_dynamics_derivatives(q, v, dv, method="complex_step")
    h = 1e-6
    for i in range(system.nv):
        e = np.zeros(system.nv)
        e[i] = h
        column = (system.inverse_dynamics(system.integrate(q, e), v, dv)
                  - system.inverse_dynamics(system.integrate(q, -e), v, dv)) / (2 * h)
        np.testing.assert_allclose(dq[:, i], column, rtol=1e-5, atol=1e-6 * (1 + np.abs(column).max()))


def test_a_compiled_kernel_dropping_the_imaginary_part_is_named():
    """A bead whose compiled state kernel reads ``s`` as a real number, its ``at_state`` kept."""
    from sko.bodies.contract import CompiledState
    from sko.engine.state_kernels import state_kernel, views

    @state_kernel
    def real_bead_state(arena, row, reals, terms, constants):
        c, q, v, inboard, out, _ = views(arena, row, reals)
        s = q[0].real  # the imaginary part dropped
        p = (c[2] + s * c[5], c[3] + s * c[6], c[4] + s * c[7])
        for i in range(3):
            out.H[0, i] = c[5 + i]
            out.V[i] = c[5 + i] * v[0]
            out.a[i] = 0.0 * v[0]
            out.b[i] = 0.0 * v[0]
            for j in range(3):
                out.M[i, j] = c[0] if i == j else 0.0
                out.E[i, 3 + j] = 1.0 if i == j else 0.0
        out.E[0, 0], out.E[0, 1], out.E[0, 2] = 0.0, p[2], -p[1]
        out.E[1, 0], out.E[1, 1], out.E[1, 2] = -p[2], 0.0, p[0]
        out.E[2, 0], out.E[2, 1], out.E[2, 2] = p[1], -p[0], 0.0
        for i in range(3):
            for j in range(6):
                out.V[i] += out.E[i, j] * inboard.velocity[j]
                out.a[i] += out.E[i, j] * inboard.gamma[j]
        out.potential[0] = 0.5 * c[1] * s * s
        return True

    class RealKernelBead(TUTORIAL.Bead):
        def compiled_state(self):
            return CompiledState(real_bead_state, np.concatenate([[self.mass, self.spring], self.start, self.direction]))

    system = _system(RealKernelBead)
    rng = np.random.default_rng(3)
    q, v = system.random_configuration(rng), rng.normal(size=system.nv)
    with pytest.raises(BodyError, match=r"compiled state kernel of body 'bead-on-(pendulum|beam)' \(RealKernelBead\)"):
        system.inverse_dynamics_derivatives(q, v, method="complex_step")


_LIBRARY_ROTOR = njit(rigid_kernels._rotor)  # the library's rotor kernel, called from one of a user's own


def _rotor_dropping_E(arena, row, reals, terms, constants):
    """The library's rotor state, then ``E``'s imaginary parts dropped (a kernel's slip)."""
    ok = _LIBRARY_ROTOR(arena, row, reals, terms, constants)
    e, er, ec = row[Row.E], row[Row.E_ROW], row[Row.E_COLUMN]
    for i in range(row[Row.NODE_DIM]):
        for j in range(6):
            arena[e + i * er + j * ec] = arena[e + i * er + j * ec].real
    return ok


_DROPPING_ROTOR = StateKernel(_rotor_dropping_E, own_frame_identity=True, name="rotor dropping Im E",
                              constants=rigid_kernels.RotorConstants, calls_hinge=True)


class _DroppingRotor(GearedRotorLink):
    """A library body type whose subclass overrides its compiled state alone."""

    def compiled_state(self):
        return numeric_state(_DROPPING_ROTOR, rigid_kernels.pack_rotor(self).constants,
                             rigid_kernels.HingeWork.SIZE + rigid_kernels.RotorWork.SIZE)


def test_a_library_subclass_with_a_kernel_of_its_own_is_checked():
    """A subclass of a library body type overriding only ``compiled_state`` runs a user's kernel:
    one that drops the imaginary part is named before the derivatives or the centroidal rate
    (complex steps) come out wrong."""
    rotor = dict(gear_ratio=50.0, axial_inertia=1e-4, transverse_inertia=6e-5, rotor_mass=0.2)
    system = MultibodySystem([_DroppingRotor(f"link{j}", None if j == 0 else f"link{j - 1}", Revolute([0.3, 0.2, 0.9]),
                                             spatial_inertia(1.0, [0.25, 0.0, 0.0], 0.02 * np.eye(3)), [0.0, 1.0, 0.0],
                                             placement=None if j == 0 else pose_transform([0.5, 0.0, 0.0]), **rotor)
                              for j in range(3)])
    rng = np.random.default_rng(0)
    q, v = system.random_configuration(rng), rng.normal(size=system.nv)
    for call in (lambda: system.inverse_dynamics_derivatives(q, v, method="complex_step"),
                 lambda: system.centroidal_momentum_matrix_rate(q, v)):
        with pytest.raises(BodyError, match=r"compiled state kernel of body 'link0' \(_DroppingRotor\)"):
            call()


def test_a_state_whose_differences_round_away_blames_no_body():
    """At a joint angle of 10³⁰ a real difference of 10⁻⁶ is lost to rounding and would read a
    zero derivative: the check does not judge there (nor record the system as checked), so the
    tutorial's bodies, which keep complex numbers, are not blamed."""
    system = TUTORIAL.build()
    rng = np.random.default_rng(0)
    q, v = system.random_configuration(rng), rng.normal(size=system.nv)
    q[0] = 1e30
    system.inverse_dynamics_derivatives(q, v, method="complex_step")
    assert not system._complex_carried

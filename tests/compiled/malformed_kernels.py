"""Small variants of the tutorial's bead kernel (papers/tutorial_body_type.py), each with one
mistake a researcher makes, and systems carrying a good bead first and the faulty one second
(so an error that blames the first is seen).

The variants call the tutorial's kernel and then break one thing; ``bead_kernel(variant)`` gives
the registered kernel, ``system_with(kernel)`` the system: a rigid pendulum with two
:class:`KernelBead` on it, ``bead`` (the tutorial's kernel) and ``bead2`` (``kernel``).
"""

from __future__ import annotations

import math

import numpy as np

from papers.tutorial_body_type import Bead, bead_state
from sko.bodies import Attachment, BodyType, CompiledState, NodeState, Revolute, RigidBody
from sko.engine.hooks import hinge_force_kernel
from sko.engine.state_kernels import Row, record, state_kernel, views
from sko.spatial import spatial_inertia
from sko.systems import MultibodySystem

BEAD = bead_state.dispatcher  # the tutorial's kernel, callable from other kernels
#: the tutorial's kernel with its constants declared: mass, spring, p₀ (3), e (3)
DECLARED = state_kernel(bead_state.py_func, constants=8, name="declared bead")


class KernelBead(Bead):
    """The tutorial's bead with a kernel and packed constants of the test's choice."""

    def __init__(self, name, parent, kernel=bead_state, packed=None, **options):
        options = {"mass": 0.3, "start": [0.1, 0.0, -0.4], "direction": [0.0, 0.3, 1.0], "spring": 4.0} | options
        super().__init__(name, parent, **options)
        self.kernel, self.packed = kernel, packed

    def compiled_state(self):
        packed = np.concatenate([[self.mass, self.spring], self.start, self.direction])
        return CompiledState(self.kernel, packed if self.packed is None else self.packed)


class SpringlessBead(KernelBead):
    """A bead with no hinge force (its rollouts take the compiled loop)."""

    hinge_force = BodyType.hinge_force


class FramedBead(KernelBead):
    """A bead offering its own frame (``Γ = [0; I₃]``: the frame translates with the bead)."""

    @property
    def attachment_names(self):
        return (None,)

    def at_state(self, q, qd, inboard, gravity):
        s = super().at_state(q, qd, inboard, gravity)
        p = self.start + q[0] * self.direction
        Gamma = np.vstack([np.zeros((3, 3)), np.eye(3)])
        frame = Attachment(Gamma=Gamma, gamma=np.zeros(6), rotation=inboard.rotation,
                           position=inboard.position + inboard.rotation @ p, velocity=Gamma @ s.V)
        return NodeState(s.E, s.H, s.M, s.a, s.b, s.V, {None: frame}, s.potential)


def system_with(kernel, packed=None, second=KernelBead, first=KernelBead) -> MultibodySystem:
    """A pendulum carrying ``bead`` (good) and ``bead2`` (``kernel``, ``packed`` constants)."""
    pendulum = RigidBody("pendulum", None, Revolute([0, 1, 0]), spatial_inertia(2.0, [0.0, 0.0, -0.5], 0.05 * np.eye(3)))
    good_kernel = framed_state if first is FramedBead else bead_state
    return MultibodySystem([pendulum, first("bead", "pendulum", good_kernel),
                            second("bead2", "pendulum", kernel, packed, start=[0.0, 0.1, -0.8])])


# ----------------------------------------------------------------------------- the variants
@state_kernel
def framed_state(arena, row, reals, terms, constants):
    """The bead and the record of its own frame (:class:`FramedBead`)."""
    BEAD(arena, row, reals, terms, constants)
    c, q, v, inboard, out, _ = views(arena, row, reals)
    rec = record(out.records, 0)
    p = (c[2] + q[0] * c[5], c[3] + q[0] * c[6], c[4] + q[0] * c[7])
    for i in range(6):
        rec.gamma[i] = 0.0
        for j in range(3):
            rec.Gamma[i, j] = 1.0 if i == j + 3 else 0.0
    for i in range(3):
        rec.velocity[i], rec.velocity[3 + i] = 0.0, out.V[i]
        x = inboard.position[i]
        for j in range(3):
            rec.rotation[i, j] = inboard.rotation[i, j]
            x += inboard.rotation[i, j] * p[j]
        rec.position[i] = x
    return True


@state_kernel
def unframed_state(arena, row, reals, terms, constants):
    """Offers its own frame but never writes its record."""
    return BEAD(arena, row, reals, terms, constants)


@state_kernel
def returns_none(arena, row, reals, terms, constants):
    """A forgotten ``return True``."""
    BEAD(arena, row, reals, terms, constants)


@state_kernel
def returns_one(arena, row, reals, terms, constants):
    BEAD(arena, row, reals, terms, constants)
    return 1


@state_kernel
def returns_float(arena, row, reals, terms, constants):
    BEAD(arena, row, reals, terms, constants)
    return 1.0


@state_kernel
def asymmetric_mass(arena, row, reals, terms, constants):
    BEAD(arena, row, reals, terms, constants)
    arena[row[Row.M] + 1] = 0.1  # M[0, 1], not M[1, 0]
    return True


@state_kernel
def indefinite_mass(arena, row, reals, terms, constants):
    BEAD(arena, row, reals, terms, constants)
    arena[row[Row.M] + 8] = -arena[row[Row.M] + 8]  # M[2, 2] = −m
    return True


@state_kernel
def zero_joint_map(arena, row, reals, terms, constants):
    BEAD(arena, row, reals, terms, constants)
    for i in range(3):
        arena[row[Row.H] + i] = 0.0
    return True


@state_kernel
def writes_past(arena, row, reals, terms, constants):
    """One entry past its node velocity ``V`` (3 entries)."""
    BEAD(arena, row, reals, terms, constants)
    arena[row[Row.VELOCITY] + 3] = 0.5
    return True


@state_kernel
def not_finite(arena, row, reals, terms, constants):
    """``b`` NaN at every state."""
    BEAD(arena, row, reals, terms, constants)
    arena[row[Row.B] + 1] = np.nan
    return True


@state_kernel
def not_finite_far(arena, row, reals, terms, constants):
    """``b`` NaN beyond ``s = 5`` (random states stay within |s| ≤ 1)."""
    BEAD(arena, row, reals, terms, constants)
    if arena[row[Row.Q]].real > 5.0:
        arena[row[Row.B] + 1] = np.nan
    return True


@state_kernel
def raises_far(arena, row, reals, terms, constants):
    """Raises with its own message beyond ``s = 5``."""
    if arena[row[Row.Q]].real > 5.0:
        raise ValueError("the bead left its wire")
    return BEAD(arena, row, reals, terms, constants)


@state_kernel
def rejects_far(arena, row, reals, terms, constants):
    """Returns False beyond ``s = 5``, where its at_state has no objection."""
    if arena[row[Row.Q]].real > 5.0:
        return False
    return BEAD(arena, row, reals, terms, constants)


@state_kernel
def three_parameters(arena, row, reals):
    """The wrong signature."""
    return True


@state_kernel
def real_square_root(arena, row, reals, terms, constants):
    """``math.sqrt`` of the state: types for float64 arenas only."""
    BEAD(arena, row, reals, terms, constants)
    arena[row[Row.POTENTIAL]] += 0.0 * math.sqrt(arena[row[Row.Q]] ** 2 + 1.0)
    return True


@state_kernel
def stiffer_spring(arena, row, reals, terms, constants):
    """The bead with a spring 3× its at_state's (in its potential): differs from at_state by one constant."""
    BEAD(arena, row, reals, terms, constants)
    s = arena[row[Row.Q]]
    arena[row[Row.POTENTIAL]] += reals[row[Row.CONSTANTS] + 1] * s * s  # ½ (3κ − κ) s²
    return True


@state_kernel
def reads_past(arena, row, reals, terms, constants):
    """Reads one constant past the eight it packs."""
    BEAD(arena, row, reals, terms, constants)
    arena[row[Row.POTENTIAL]] += reals[row[Row.CONSTANTS] + 8] * 0.0
    return True


class RaisingBead(KernelBead):
    """A bead whose ``compiled_state()`` raises."""

    def compiled_state(self):
        raise ValueError("no kernel for this wire")


@state_kernel
def skips_E_at_structure(arena, row, reals, terms, constants):
    """Leaves ``E`` as the last call wrote it when asked for ``Terms.STRUCTURE`` (what the mass
    matrix reads): a misreading of the terms contract."""
    c, q, v, inboard, out, _ = views(arena, row, reals)
    keep = out.E.copy()
    ok = BEAD(arena, row, reals, terms, constants)
    if terms == 0:
        for i in range(out.E.shape[0]):
            for j in range(6):
                out.E[i, j] = keep[i, j]
    return ok


@state_kernel(rates=True)
def keeps_b_at_rates(arena, row, reals, terms, constants):
    """Declares ``rates`` but leaves ``b`` as the last call wrote it when asked for
    ``Terms.RATES``, though ``b`` depends on the velocities that call changes."""
    c, q, v, inboard, out, _ = views(arena, row, reals)
    keep = out.b.copy()
    ok = BEAD(arena, row, reals, terms, constants)
    if terms == 3:  # Terms.RATES
        for i in range(out.b.shape[0]):
            out.b[i] = keep[i]
    return ok


@state_kernel
def accumulates_in_scratch(arena, row, reals, terms, constants):
    """Sums its mass into a scratch entry it takes for zero: its ``M`` depends on the last call."""
    c, q, v, inboard, out, scratch = views(arena, row, reals)
    ok = BEAD(arena, row, reals, terms, constants)
    scratch[0] += c[0]
    for i in range(out.M.shape[0]):
        out.M[i, i] = scratch[0]
    return ok


class ScratchBead(KernelBead):
    """A bead whose kernel takes one scratch entry."""

    def compiled_state(self):
        packed = np.concatenate([[self.mass, self.spring], self.start, self.direction])
        return CompiledState(self.kernel, packed, scratch=1)


@state_kernel
def writes_far_past(arena, row, reals, terms, constants):
    """Writes its scratch far past the end of the arena (a wild index)."""
    c, q, v, inboard, out, scratch = views(arena, row, reals)
    ok = BEAD(arena, row, reals, terms, constants)
    for i in range(scratch.shape[0] + 64_000):
        scratch[i] = 1.0
    return ok


@hinge_force_kernel
def triple_spring(q, v, constants, out):
    """``3 κ s``: a compiled hinge force three times the bead's Python ``hinge_force`` (``κ s``)."""
    out[0] = 3.0 * constants[1] * q[0]
    return True


class TripleSpringBead(KernelBead):
    """A bead whose compiled hinge force is :func:`triple_spring`."""

    def compiled_state(self):
        packed = np.concatenate([[self.mass, self.spring], self.start, self.direction])
        return CompiledState(self.kernel, packed, hinge_force=triple_spring)

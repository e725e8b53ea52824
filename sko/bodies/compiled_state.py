"""Compiled node states of the library body types (BODIES.md; RIGID.md, *The SKO model in body
coordinates*): the same ``NodeState`` as :meth:`~sko.bodies.contract.BodyType.at_state`, written
by numba kernels into one flat per-state buffer (the *arena*) instead of Python objects.

Layout. A system packs, once, an integer table ``ints`` (one row per body, a parent's row before
its children's, columns named by the constants below; *body* ``k`` is the body of row ``k``) and
a float vector ``reals`` (``reals[0:3]`` is gravity ``g``; each body's constants start at
``reals[ints[k, RO]]``). For a batch of ``B`` states the arena ``A`` is a ``(B, L)`` array of
the state's scalar type; for body ``k`` and state ``s`` the kernels write

* ``A[s, W: W + m_℘ m_k]``: the weight ``φ(℘(k), k) = (E_k Γ_o)*`` (row-major, ``m_℘ × m_k``),
* ``A[s, HB: …]``: ``H(k)`` (``n_k × m_k``), ``A[s, MB: …]``: ``M(k)`` (``m_k × m_k``),
* ``A[s, AO: AO + m_k]``, ``A[s, BO: …]``, ``A[s, NV_: …]``: ``a(k)``, ``b(k)``, ``𝒱(k)``,
* ``A[s, POT]``: the body's potential energy,
* at ``A[s, ATT:]``, one record per attachment frame the body offers (its own frame first, then
  its nodes): ``Γ_o`` (6 × m_k, row-major), ``γ_o`` (6), the world axes ``R`` (3 × 3,
  row-major), origin ``p`` (3) and velocity ``v_o`` (6): ``6 m_k + 24`` numbers. A child reads
  its parent's record at ``IN_ATT`` (``-1``: the inertial frame, ``Γ`` empty, ``γ = −a_g``).

Every kernel takes ``(ints, reals, k, q, qd, a, work, terms, constants)`` for one state:

* ``q``, ``qd``: the system's stacked vectors; ``a``: the state's arena row; ``work``: the views
  of :func:`work_views`;
* ``terms``: which of the state's terms a request reads, :data:`STRUCTURE`, :data:`MOTION` or
  :data:`POSE`, each with the ones before. Only those asked for are meaningful; a rigid body's
  hinge writes the others as zeros, and a body's terms computed from them (a flexible body's
  ``b``, a rotor's) are finite but not the state's: nothing is read from unwritten scratch;
* ``constants``: whether to write the terms no state changes (a rigid body's and a rotor link's
  ``M``, their frame's ``Γ = [I, 0]`` and ``γ = 0``; for a rigid body on a revolute, helical or
  prismatic joint, not reversed, on the inertial frame or a rigid parent, also ``H``, the zero
  block of its weight and the zeros of the terms not asked for: :func:`_single_axis_state`), which a caller filling the same arena again for the same
  ``terms`` has written already.

Each returns False when the state is outside the joint's domain (a quaternion of zero norm); a quaternion of
any other finite size gives its rotation (:func:`~sko.bodies.compiled_joints.joint_kinematics`
scales it by its largest entry first).
:func:`fill_states` runs the library kernels over bodies and a batch of states.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from sko.algorithms.compiled.borrow import borrowed, matrix_view
from sko.algorithms.compiled.kernels import _dot6
from sko.bodies.compiled_joints import HELICAL, PRISMATIC, PYTHON, joint_kinematics_at, pack_joint
from sko.bodies.contract import CompiledState
from sko.spatial import plucker_translation

__all__ = ["RIGID", "ROTOR", "FLEXIBLE", "CLUSTER", "STRUCTURE", "MOTION", "POSE", "COLUMNS", "WORK", "CHUNK",
           "record_size", "fill_states", "library_state", "work_views", "pack_rigid", "pack_rotor", "pack_flexible",
           "pack_cluster"]

# integer columns of a body's row (PARENT: the parent's row, -1 for a base body)
(PARENT, KIND, JOINT, REVERSE, QO, NQ, VO, NV, JNQ, JNV, DIM, IN_ATT, IN_DIM, ATT, W, HB, MB, AO, BO, NV_, POT, RO,
 X1, X2, X3) = range(25)
COLUMNS = 25
#: kinds with a compiled state in this module (any other body type: -1, its Python ``at_state``)
RIGID, ROTOR, FLEXIBLE, CLUSTER = range(4)
#: the terms a state kernel computes: the model's weights, ``H`` and ``M`` (what ℳ and ℳ^{-1}
#: read); with ``a``, ``b``, ``𝒱`` and the records' ``γ_o``, ``v_o`` (the dynamics); with the
#: records' poses and the potential (energies, frames, Jacobians)
STRUCTURE, MOTION, POSE = range(3)
#: constants of a rigid body: joint parameters (10), the placement X_T = rot(E) xlt(r) as E
#: (row-major) and r (12), inertia (36), mass, centre of mass
JP, XT, INERTIA, MASS, COM = 0, 10, 22, 58, 59
RIGID_REALS = 62
PLACEMENT = 12  #: constants of a placement


def record_size(m: int) -> int:
    """Size of one attachment record of a body with node dimension ``m``."""
    return 6 * m + 24


def _placement_reals(X) -> np.ndarray:
    """``(E, r)`` of a placement ``X = rot(E) xlt(r)`` (checked by
    :func:`~sko.spatial.checked_transform`), :data:`PLACEMENT` numbers."""
    X = np.asarray(X, dtype=float)
    return np.concatenate([X[:3, :3].ravel(), plucker_translation(X)])


def _hinge_reals(body) -> tuple[list, int, bool] | None:
    code, reverse, params = pack_joint(body.joint)
    if code == PYTHON:
        return None
    return [params, _placement_reals(body.placement)], code, reverse


def pack_rigid(body) -> CompiledState | None:
    """The compiled state of a :class:`~sko.bodies.rigid.RigidBody` (``None``: user-defined joint)."""
    hinge = _hinge_reals(body)
    if hinge is None:
        return None
    parts, code, reverse = hinge
    reals = np.concatenate(parts + [body.inertia.ravel(), [body._mass], body._com])
    return CompiledState(RIGID, reals, code, reverse, body.joint.nq, body.joint.nv)


def pack_rotor(body) -> CompiledState | None:
    """The compiled state of a :class:`~sko.bodies.rotor.GearedRotorLink`."""
    hinge = _hinge_reals(body)
    if hinge is None:
        return None
    parts, code, reverse = hinge
    reals = np.concatenate(parts + [body.inertia.ravel(), [body._mass], body._com, [body.gear_ratio], body.rotor_axis,
                                    body.rotor_inertia.ravel()])
    return CompiledState(ROTOR, reals, code, reverse, 1, 1)


def pack_flexible(body) -> CompiledState | None:
    """The compiled state of a :class:`~sko.bodies.flexible.FlexibleBody`."""
    hinge = _hinge_reals(body)
    if hinge is None:
        return None
    parts, code, reverse = hinge
    nodes = [np.concatenate([d.position, d.translation.ravel(), d.rotation.ravel()]) for d in body.nodes.values()]
    reals = np.concatenate(parts + [body.masses, body.positions.ravel(), body.modes.ravel(), body.stiffness.ravel(),
                                    body.damping.ravel(), *nodes])
    return CompiledState(FLEXIBLE, reals, code, reverse, body.joint.nq, body.joint.nv,
                         (body.masses.shape[0], body.r, len(body.nodes)))


#: a cluster member's block: joint code, reversed, nq, nv, parent member (−1: the cluster's
#: inboard frame), first column in θ_C, then a rigid body's constants (RIGID_REALS)
MEMBER_META = 6
MEMBER_REALS = MEMBER_META + RIGID_REALS


def pack_cluster(body) -> CompiledState | None:
    """The compiled state of a :class:`~sko.bodies.cluster.RigidCluster` with couplings only
    (``θ_C = G θ_ind + d``, EMBEDDING.md §4) and library joints; ``None`` otherwise (closed
    loops are solved by Newton's method in Python).

    ``reals``: ``c``, ``n_sp``, ``n_ind``, ``G`` (row-major), ``d``, then one
    :data:`MEMBER_REALS` block per member (parents first)."""
    if body.loops:
        return None
    G = np.asarray(body._G, dtype=float)
    d = np.asarray(body.closed_coordinates(np.zeros(body.q_size)), dtype=float)
    parts = [np.array([body.c, body.n_sp, body.q_size], dtype=float), G.ravel(), d]
    for i, member in enumerate(body.members):
        code, reverse, params = pack_joint(member.joint)
        if code == PYTHON:
            return None
        parent = body._parent_index[i]
        mass, com = body._mass_com[i]
        parts += [np.array([code, reverse, member.joint.nq, member.joint.nv, -1 if parent is None else parent,
                            body._cols[i].start], dtype=float),
                  params, _placement_reals(body._placement[i]), body._inertia[i].ravel(), [mass], com]
    return CompiledState(CLUSTER, np.concatenate(parts))


# ---------------------------------------------------------------------------- the hinge
@njit(cache=True, inline="always")
def _hinge(ints, reals, k, q, qd, a, work, terms) -> bool:
    """The joint terms of body ``k`` (Python: :func:`sko.bodies.hinge.hinge_state`), those
    beyond ``X`` and ``S`` as asked by ``terms`` (zero otherwise).

    Leaves ``X = ᵏX_o = X_J X_T`` in ``work[3]`` and, in ``t = work[4]``: ``v_J = S θ̇`` at
    ``t[0:6]``, ``v`` at ``t[6:12]``, the velocity-product acceleration at ``t[12:18]``, the
    body's world axes ``R`` (row-major) at ``t[18:27]`` and origin ``p`` at ``t[27:30]``;
    ``S`` stays in ``work[1]``. Transforms are products of rotations and translations
    (Featherstone §2.8): ``rot(E_J) xlt(r_J) rot(E_T) xlt(r_T) = rot(E_J E_T) xlt(E_Tᵀ r_J + r_T)``,
    and ``X [w; u] = [E w; E (u − r × w)]``."""
    XJ, S, c, X, t = work
    ro, qo, vo, nv = ints[k, RO], ints[k, QO], ints[k, VO], ints[k, JNV]
    if not joint_kinematics_at(ints[k, JOINT], ints[k, REVERSE] != 0, reals, ro + JP, q, qo, qd, vo, XJ, S, c):
        return False
    xt = ro + XT  # E_T (row-major), r_T: read once (a store to X could alias them for the compiler)
    t00, t01, t02, t10, t11, t12, t20, t21, t22 = (reals[xt], reals[xt + 1], reals[xt + 2], reals[xt + 3],
                                                   reals[xt + 4], reals[xt + 5], reals[xt + 6], reals[xt + 7],
                                                   reals[xt + 8])
    j0, j1, j2 = XJ[0, 3], XJ[1, 3], XJ[2, 3]
    r0 = reals[xt + 9] + t00 * j0 + t10 * j1 + t20 * j2
    r1 = reals[xt + 10] + t01 * j0 + t11 * j1 + t21 * j2
    r2 = reals[xt + 11] + t02 * j0 + t12 * j1 + t22 * j2
    for i in range(3):  # X = [[E, 0], [−E r×, E]], E = E_J E_T
        a0, a1, a2 = XJ[i, 0], XJ[i, 1], XJ[i, 2]
        e0 = a0 * t00 + a1 * t10 + a2 * t20
        e1 = a0 * t01 + a1 * t11 + a2 * t21
        e2 = a0 * t02 + a1 * t12 + a2 * t22
        X[i, 0], X[i, 1], X[i, 2] = e0, e1, e2
        X[i, 3] = X[i, 4] = X[i, 5] = 0
        X[i + 3, 0], X[i + 3, 1], X[i + 3, 2] = e2 * r1 - e1 * r2, e0 * r2 - e2 * r0, e1 * r0 - e0 * r1
        X[i + 3, 3], X[i + 3, 4], X[i + 3, 5] = e0, e1, e2
    if terms == STRUCTURE:
        for i in range(30):
            t[i] = 0
        return True
    pose = terms == POSE
    for i in range(6):
        s = 0 * XJ[0, 0]
        for j in range(nv):
            s += S[i, j] * qd[vo + j]
        t[i] = s
    o = ints[k, IN_ATT]
    if o < 0:  # the inertial frame: v_o = 0, γ_o = −a_g = [0; −g], identity pose
        g0, g1, g2 = reals[0], reals[1], reals[2]
        for i in range(3):
            t[6 + i], t[9 + i] = t[i], t[3 + i]
            t[12 + i] = c[i]
            t[15 + i] = c[3 + i] - (X[i, 0] * g0 + X[i, 1] * g1 + X[i, 2] * g2)
            if pose:
                for j in range(3):
                    t[18 + 3 * i + j] = X[j, i]  # R = Eᵀ
        if pose:
            t[27], t[28], t[29] = r0, r1, r2
    else:
        go = o + 6 * ints[k, IN_DIM]  # γ_o, then R_o, p_o, v_o
        E = ((X[0, 0], X[0, 1], X[0, 2]), (X[1, 0], X[1, 1], X[1, 2]), (X[2, 0], X[2, 1], X[2, 2]))
        v = _transform(E, r0, r1, r2, a, go + 18, (t[0], t[1], t[2], t[3], t[4], t[5]))  # X v_o + v_J
        acc = _transform(E, r0, r1, r2, a, go, (c[0], c[1], c[2], c[3], c[4], c[5]))  # X γ_o + c_J
        for i in range(6):
            t[6 + i], t[12 + i] = v[i], acc[i]
        for i in range(3 if pose else 0):
            R0, R1, R2 = a[go + 6 + 3 * i], a[go + 7 + 3 * i], a[go + 8 + 3 * i]
            for j in range(3):
                t[18 + 3 * i + j] = R0 * X[j, 0] + R1 * X[j, 1] + R2 * X[j, 2]  # R = R_o Eᵀ
            t[27 + i] = a[go + 15 + i] + R0 * r0 + R1 * r1 + R2 * r2  # p = p_o + R_o r
    if not pose:
        for i in range(18, 30):
            t[i] = 0
    cross = _motion_cross((t[6], t[7], t[8], t[9], t[10], t[11]), (t[0], t[1], t[2], t[3], t[4], t[5]))
    for i in range(6):
        t[12 + i] += cross[i]  # a += v × v_J
    return True


@njit(cache=True, inline="always")
def _transform(E, r0, r1, r2, a, o, add):
    """``add + X x`` for ``X = rot(E) xlt(r)`` (``E`` as three rows) and ``x = a[o: o + 6]``, six
    numbers: ``X [w; u] = [E w; E (u − r × w)]``."""
    w0, w1, w2 = a[o], a[o + 1], a[o + 2]
    u0, u1, u2 = a[o + 3] - (r1 * w2 - r2 * w1), a[o + 4] - (r2 * w0 - r0 * w2), a[o + 5] - (r0 * w1 - r1 * w0)
    (e00, e01, e02), (e10, e11, e12), (e20, e21, e22) = E
    return (add[0] + e00 * w0 + e01 * w1 + e02 * w2, add[1] + e10 * w0 + e11 * w1 + e12 * w2,
            add[2] + e20 * w0 + e21 * w1 + e22 * w2, add[3] + e00 * u0 + e01 * u1 + e02 * u2,
            add[4] + e10 * u0 + e11 * u1 + e12 * u2, add[5] + e20 * u0 + e21 * u1 + e22 * u2)


@njit(cache=True, inline="always")
def _motion_cross(v, x):
    """``v × x = crm(v) x`` for motion vectors ``v = [ω; u]``, ``x``, six numbers each."""
    w0, w1, w2, u0, u1, u2 = v
    x0, x1, x2, x3, x4, x5 = x
    return (w1 * x2 - w2 * x1, w2 * x0 - w0 * x2, w0 * x1 - w1 * x0, u1 * x2 - u2 * x1 + w1 * x5 - w2 * x4,
            u2 * x0 - u0 * x2 + w2 * x3 - w0 * x5, u0 * x1 - u1 * x0 + w0 * x4 - w1 * x3)


@njit(cache=True, inline="always")
def _bias(reals, io, v):
    """``v ×* I v = [ω × n + u × f; ω × f]`` with ``[n; f] = I v`` (RIGID.md) for ``v = [ω; u]``,
    six numbers, and ``I`` the 6 × 6 inertia at ``reals[io:]`` (row-major)."""
    w0, w1, w2, u0, u1, u2 = v
    n0, n1, n2 = (_dot6(reals, io, 1, w0, w1, w2, u0, u1, u2), _dot6(reals, io + 6, 1, w0, w1, w2, u0, u1, u2),
                  _dot6(reals, io + 12, 1, w0, w1, w2, u0, u1, u2))
    f0, f1, f2 = (_dot6(reals, io + 18, 1, w0, w1, w2, u0, u1, u2), _dot6(reals, io + 24, 1, w0, w1, w2, u0, u1, u2),
                  _dot6(reals, io + 30, 1, w0, w1, w2, u0, u1, u2))
    return (w1 * n2 - w2 * n1 + u1 * f2 - u2 * f1, w2 * n0 - w0 * n2 + u2 * f0 - u0 * f2,
            w0 * n1 - w1 * n0 + u0 * f1 - u1 * f0, w1 * f2 - w2 * f1, w2 * f0 - w0 * f2, w0 * f1 - w1 * f0)


@njit(cache=True, inline="always")
def _bias_force(reals, io, t, a, bo):
    """:func:`_bias` into ``a[bo: bo + 6]`` for ``v`` at ``t[6:12]`` (:func:`_hinge`)."""
    b = _bias(reals, io, (t[6], t[7], t[8], t[9], t[10], t[11]))
    for i in range(6):
        a[bo + i] = b[i]


@njit(cache=True, inline="always")
def _rigid_terms(ints, reals, k, a, work, m, terms, constants):
    """Writes the parts a rigid body and a rotor link share: the first 6 columns of the weight
    (``(ᵏX_o Γ_o)*``), ``a``, ``b``, ``𝒱`` (first 6 entries), the body-frame attachment record
    and the potential; with ``constants``, ``M``'s upper 6 × 6 block and the record's ``Γ = [I, 0]``,
    ``γ = 0``."""
    XJ, S, c, X, t = work
    ro = ints[k, RO]
    wo, o, mp = ints[k, W], ints[k, IN_ATT], ints[k, IN_DIM]
    if o >= 0:
        if ints[ints[k, PARENT], KIND] == RIGID:  # Γ_o = I
            for j in range(6):
                for i in range(6):
                    a[wo + j * m + i] = X[i, j]
        else:
            for j in range(mp):
                for i in range(6):
                    s = 0 * X[0, 0]
                    for l in range(6):
                        s += X[i, l] * a[o + l * mp + j]
                    a[wo + j * m + i] = s
    ao, bo, vo_, mo = ints[k, AO], ints[k, BO], ints[k, NV_], ints[k, MB]
    for i in range(6):
        a[ao + i] = t[12 + i]
        a[vo_ + i] = t[6 + i]
    if constants:
        for i in range(6):
            for j in range(6):
                a[mo + i * m + j] = reals[ro + INERTIA + 6 * i + j]
    if terms == STRUCTURE:
        for i in range(6):
            a[bo + i] = 0
    else:
        _bias_force(reals, ro + INERTIA, t, a, bo)
    # own frame: Γ = [I, 0] (6 × m), γ = 0, pose, velocity
    at = ints[k, ATT]
    g = at + 6 * m
    if constants:
        for i in range(6):
            for j in range(m):
                a[at + i * m + j] = 1.0 if i == j else 0.0
            a[g + i] = 0
    for i in range(6):
        a[g + 18 + i] = t[6 + i]
    for i in range(12):
        a[g + 6 + i] = t[18 + i]
    # potential −m g · (p + R c)
    pot = 0 * X[0, 0]
    for i in range(3 if terms == POSE else 0):
        ci = t[27 + i]
        for j in range(3):
            ci += t[18 + 3 * i + j] * reals[ro + COM + j]
        pot -= reals[i] * ci
    a[ints[k, POT]] = reals[ro + MASS] * pot


@njit(cache=True, inline="always")
def _single_axis_state(ints, reals, k, q, qd, a, terms, constants) -> bool:
    """:func:`rigid_state` for a revolute (helical) or prismatic joint, not reversed, on the
    inertial frame or a rigid parent (``Γ_o = I``), ``terms`` below :data:`POSE`: the same numbers
    with ``ᵏX_o = rot(E) xlt(r)`` as ``(E, r)`` and every 6-vector in registers, no ``X_J``,
    ``S`` or 6 × 6 ``X`` stored. What no state of such a joint changes is written with the
    ``constants`` only: ``H = S* = [s_ω; s_v]*``, the zero block of ``φ`` and the zeros of the
    terms not asked for. The joint (:func:`~sko.bodies.compiled_joints.joint_kinematics_at`):
    ``E_J = R_u(θ)ᵀ``, ``r_J = h θ u``, ``S = [u; h u]`` (pitch ``h``) or ``E_J = I``,
    ``r_J = θ u``, ``S = [0; u]``, and ``c_J = 0``."""
    ro, o = ints[k, RO], ints[k, IN_ATT]
    jp, xt = ro + JP, ro + XT
    x, y, z = reals[jp], reals[jp + 1], reals[jp + 2]
    theta = q[ints[k, QO]]
    if ints[k, JOINT] == HELICAL:
        c, s, lin = np.cos(theta), np.sin(theta), reals[jp + 3] * theta
        sw0, sw1, sw2, sv0, sv1, sv2 = x, y, z, reals[jp + 3] * x, reals[jp + 3] * y, reals[jp + 3] * z
    else:
        c, s, lin = 1.0 + 0 * theta, 0 * theta, theta
        sw0, sw1, sw2, sv0, sv1, sv2 = 0.0, 0.0, 0.0, x, y, z
    d = 1 - c  # E_J = I − s K + (1 − c) K², K = u× (Rodrigues)
    j00, j01, j02 = 1 + d * (x * x - 1), s * z + d * x * y, -s * y + d * x * z
    j10, j11, j12 = -s * z + d * x * y, 1 + d * (y * y - 1), s * x + d * y * z
    j20, j21, j22 = s * y + d * x * z, -s * x + d * y * z, 1 + d * (z * z - 1)
    rj0, rj1, rj2 = lin * x, lin * y, lin * z
    t00, t01, t02, t10, t11, t12, t20, t21, t22 = (reals[xt], reals[xt + 1], reals[xt + 2], reals[xt + 3],
                                                   reals[xt + 4], reals[xt + 5], reals[xt + 6], reals[xt + 7],
                                                   reals[xt + 8])
    r0 = reals[xt + 9] + t00 * rj0 + t10 * rj1 + t20 * rj2  # E = E_J E_T, r = r_T + E_Tᵀ r_J
    r1 = reals[xt + 10] + t01 * rj0 + t11 * rj1 + t21 * rj2
    r2 = reals[xt + 11] + t02 * rj0 + t12 * rj1 + t22 * rj2
    E = ((j00 * t00 + j01 * t10 + j02 * t20, j00 * t01 + j01 * t11 + j02 * t21, j00 * t02 + j01 * t12 + j02 * t22),
         (j10 * t00 + j11 * t10 + j12 * t20, j10 * t01 + j11 * t11 + j12 * t21, j10 * t02 + j11 * t12 + j12 * t22),
         (j20 * t00 + j21 * t10 + j22 * t20, j20 * t01 + j21 * t11 + j22 * t21, j20 * t02 + j21 * t12 + j22 * t22))
    wo = ints[k, W]
    if o >= 0:  # φ = (ᵏX_o)*: row j of φ is column j of X = [[E, 0], [−E r×, E]]
        for i in range(3):
            e0, e1, e2 = E[i]
            a[wo + i], a[wo + 6 + i], a[wo + 12 + i] = e0, e1, e2
            a[wo + 3 + i], a[wo + 9 + i], a[wo + 15 + i] = e2 * r1 - e1 * r2, e0 * r2 - e2 * r0, e1 * r0 - e0 * r1
            a[wo + 21 + i], a[wo + 27 + i], a[wo + 33 + i] = e0, e1, e2
            if constants:
                a[wo + 18 + i] = a[wo + 24 + i] = a[wo + 30 + i] = 0
    at, ao, bo, vo_ = ints[k, ATT], ints[k, AO], ints[k, BO], ints[k, NV_]
    g = at + 36  # the own frame's record: Γ = I, γ = 0, pose R, p (zeros: not asked for), v_o
    if constants:
        mo, hb = ints[k, MB], ints[k, HB]
        for i in range(36):
            a[mo + i] = reals[ro + INERTIA + i]
            a[at + i] = 1.0 if i % 7 == 0 else 0.0
        for i in range(18):
            a[g + i] = 0
        a[hb], a[hb + 1], a[hb + 2], a[hb + 3], a[hb + 4], a[hb + 5] = sw0, sw1, sw2, sv0, sv1, sv2
        a[ints[k, POT]] = 0
        for i in range(6 if terms == STRUCTURE else 0):
            a[ao + i] = a[bo + i] = a[vo_ + i] = a[g + 18 + i] = 0
    if terms == STRUCTURE:
        return True
    td = qd[ints[k, VO]]
    vj = (sw0 * td, sw1 * td, sw2 * td, sv0 * td, sv1 * td, sv2 * td)
    zero = 0 * td
    if o < 0:  # v = v_J, X γ_o = X (−a_g) = [0; −E g]
        g0, g1, g2 = reals[0], reals[1], reals[2]
        v = vj
        acc = (zero, zero, zero, -(E[0][0] * g0 + E[0][1] * g1 + E[0][2] * g2),
               -(E[1][0] * g0 + E[1][1] * g1 + E[1][2] * g2), -(E[2][0] * g0 + E[2][1] * g1 + E[2][2] * g2))
    else:
        go = o + 6 * ints[k, IN_DIM]  # the parent's record: γ_o, then R_o, p_o, v_o
        v = _transform(E, r0, r1, r2, a, go + 18, vj)
        acc = _transform(E, r0, r1, r2, a, go, (zero, zero, zero, zero, zero, zero))
    cross = _motion_cross(v, vj)
    b = _bias(reals, ro + INERTIA, v)
    for i in range(6):
        a[ao + i] = acc[i] + cross[i]
        a[vo_ + i] = a[g + 18 + i] = v[i]
        a[bo + i] = b[i]
    return True


@njit(cache=True, inline="always")
def rigid_state(ints, reals, k, q, qd, a, work, terms, constants) -> bool:
    """A :class:`~sko.bodies.rigid.RigidBody`: ``φ = (ᵏX_o Γ_o)*``, ``H = S*``, ``M = I_k`` (a constant),
    ``a = ᵏX_o γ_o + c_J + v × S θ̇``, ``b = v ×* I_k v`` (RIGID.md); without the poses, on a
    revolute, helical or prismatic joint and the inertial frame or a rigid parent, by
    :func:`_single_axis_state`."""
    joint = ints[k, JOINT]
    if (terms != POSE and (joint == HELICAL or joint == PRISMATIC) and ints[k, REVERSE] == 0
            and (ints[k, IN_ATT] < 0 or ints[ints[k, PARENT], KIND] == RIGID)):
        return _single_axis_state(ints, reals, k, q, qd, a, terms, constants)
    return _rigid_any_joint(ints, reals, k, q, qd, a, work, terms, constants)


@njit(cache=True)
def _rigid_any_joint(ints, reals, k, q, qd, a, work, terms, constants) -> bool:
    """:func:`rigid_state` on any joint of the library, through :func:`_hinge`. Called, not
    inlined: the kinematics of every joint are then compiled once, not again inside each request
    (whose compilation time and memory grow faster than its code), for a call per body that costs
    nothing measurable."""
    if not _hinge(ints, reals, k, q, qd, a, work, terms):
        return False
    _rigid_terms(ints, reals, k, a, work, 6, terms, constants)
    S = work[1]
    hb = ints[k, HB]
    for j in range(ints[k, JNV]):
        for i in range(6):
            a[hb + 6 * j + i] = S[i, j]
    return True


#: rotor constants after the rigid ones: gear ratio, axis u (3), rotor inertia I_r (9)
RATIO, AXIS, ROTOR_INERTIA = RIGID_REALS, RIGID_REALS + 1, RIGID_REALS + 4
ROTOR_REALS = RIGID_REALS + 13


@njit(cache=True)
def rotor_state(ints, reals, k, q, qd, a, work, terms, constants) -> bool:
    """A :class:`~sko.bodies.rotor.GearedRotorLink` (module docstring of :mod:`sko.bodies.rotor`):
    ``E_k = [[ᵏX_o], [I₃, 0]]``, ``H = [S*, N uᵀ]``, ``M = diag(I_k, I_r)``,
    ``a = [ᵏX_o γ_o + c_J + v × S θ̇; γ_o(ω)]``, ``b = [v ×* I_k v; ω_o × I_r w]``."""
    if not _hinge(ints, reals, k, q, qd, a, work, terms):
        return False
    _rigid_terms(ints, reals, k, a, work, 9, terms, constants)
    XJ, S, c, X, t = work
    row = ints[k]
    ro, o, mp, wo, m = row[RO], row[IN_ATT], row[IN_DIM], row[W], 9
    N = reals[ro + RATIO]
    go = 0
    if o >= 0:  # weight columns 6..8: rows 0..2 of Γ_o
        for j in range(mp):
            for i in range(3):
                a[wo + j * m + 6 + i] = a[o + i * mp + j]
        go = o + 6 * mp
    hb, mo = row[HB], row[MB]
    for i in range(6):
        a[hb + i] = S[i, 0]
    for i in range(3):
        a[hb + 6 + i] = N * reals[ro + AXIS + i]
    for i in range(9 if constants else 0):
        for j in range(9):
            if i >= 6 or j >= 6:
                a[mo + 9 * i + j] = reals[ro + ROTOR_INERTIA + 3 * (i - 6) + j - 6] if (i >= 6 and j >= 6) else 0.0
    # ω_o, w = ω_o + N u θ̇, a[6:] = γ_o[:3], b[6:] = ω_o × I_r w
    qd0 = qd[row[VO]]
    for i in range(3):
        wo_i = a[go + 18 + i] if o >= 0 else 0 * X[0, 0]
        t[36 + i] = wo_i
        t[39 + i] = wo_i + N * reals[ro + AXIS + i] * qd0
        a[row[AO] + 6 + i] = a[go + i] if o >= 0 else 0 * X[0, 0]
        a[row[NV_] + 6 + i] = t[39 + i]
    for i in range(3):
        s = 0 * X[0, 0]
        for j in range(3):
            s += reals[ro + ROTOR_INERTIA + 3 * i + j] * t[39 + j]
        t[42 + i] = s
    bo = row[BO] + 6
    a[bo] = t[37] * t[44] - t[38] * t[43]
    a[bo + 1] = t[38] * t[42] - t[36] * t[44]
    a[bo + 2] = t[36] * t[43] - t[37] * t[42]
    return True


# ---------------------------------------------------------------------------- flexible bodies
_SERIES_TERMS = 20


@njit(cache=True)
def exp_map_coefficients(s):
    """``A, B, C, dB/ds, dC/ds`` of :func:`sko.bodies.flexible.exp_map_coefficients`."""
    if abs(s) <= 4.0:
        A = B = C = dB = dC = 0 * s
        fact = np.empty(2 * _SERIES_TERMS + 4)
        fact[0] = 1.0
        for j in range(1, fact.size):
            fact[j] = fact[j - 1] * j
        for n in range(_SERIES_TERMS - 1, -1, -1):
            sign = -1.0 if n % 2 else 1.0
            A = A * s + sign / fact[2 * n + 1]
            B = B * s + sign / fact[2 * n + 2]
            C = C * s + sign / fact[2 * n + 3]
            if n >= 1:
                dB = dB * s + sign * n / fact[2 * n + 2]
                dC = dC * s + sign * n / fact[2 * n + 3]
        return A, B, C, dB, dC
    th = np.sqrt(s)
    sin, cos = np.sin(th), np.cos(th)
    return (sin / th, (1 - cos) / s, (th - sin) / (s * th),
            (th * sin / 2 - (1 - cos)) / s**2, ((1 - cos) * th - 3 * (th - sin)) / (2 * th**5))


@njit(cache=True)
def _mv(A, x, dt):
    """``A x`` for arrays of different scalar types (numba's ``@`` needs one)."""
    out = np.zeros(A.shape[0], dt)
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            out[i] += A[i, j] * x[j]
    return out


@njit(cache=True)
def _mm(A, B, dt):
    """``A B`` for arrays of different scalar types."""
    out = np.zeros((A.shape[0], B.shape[1]), dt)
    for i in range(A.shape[0]):
        for l in range(A.shape[1]):
            for j in range(B.shape[1]):
                out[i, j] += A[i, l] * B[l, j]
    return out


@njit(cache=True)
def _cross(x, y):
    return np.array([x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2], x[0] * y[1] - x[1] * y[0]])


@njit(cache=True)
def _skew(x):
    return np.array([[0 * x[0], -x[2], x[1]], [x[2], 0 * x[0], -x[0]], [-x[1], x[0], 0 * x[0]]])


@njit(cache=True)
def flexible_state(ints, reals, k, q, qd, a, work, terms, constants) -> bool:
    """A :class:`~sko.bodies.flexible.FlexibleBody` (module docstring of
    :mod:`sko.bodies.flexible`): ``E_k = [ᵏX_o; 0]``, ``H = diag(S*, I_r)``,
    ``M = Σ μ_i B_i* B_i``, ``a = [hinge a; 0]``,
    ``b = Σ μ_i B_i* (ω × (Φ_i η̇ + u_i)) + [0; K η + C η̇]`` and the modal node attachments."""
    if not _hinge(ints, reals, k, q, qd, a, work, terms):
        return False
    XJ, S, c, X, t = work
    row = ints[k]
    ro, o, mp, wo = row[RO], row[IN_ATT], row[IN_DIM], row[W]
    n, r, nn = row[X1], row[X2], row[X3]
    m = 6 + r
    jnv = row[JNV]
    dt = X.dtype
    eta = q[row[QO] + row[JNQ]: row[QO] + row[JNQ] + r]
    etad = qd[row[VO] + jnv: row[VO] + jnv + r]
    base = ro + XT + PLACEMENT
    mu = reals[base: base + n]
    P = reals[base + n: base + 4 * n].reshape((n, 3))
    Phi = reals[base + 4 * n: base + 4 * n + 3 * n * r].reshape((n, 3, r))
    Kst = reals[base + 4 * n + 3 * n * r: base + 4 * n + 3 * n * r + r * r].reshape((r, r))
    Cd = reals[base + 4 * n + 3 * n * r + r * r: base + 4 * n + 3 * n * r + 2 * r * r].reshape((r, r))
    nodes = base + 4 * n + 3 * n * r + 2 * r * r
    v = t[6:12].copy()
    omega = v[:3]
    V = np.zeros(m, dt)
    V[:6] = v
    V[6:] = etad
    # weight (E Γ_o)*: columns 0..5 as a rigid body, the modal columns zero
    if o >= 0:
        for j in range(mp):
            for i in range(m):
                s = 0 * X[0, 0]
                if i < 6:
                    for l in range(6):
                        s += X[i, l] * a[o + l * mp + j]
                a[wo + j * m + i] = s
    hb, mo, ao, bo, vo_ = row[HB], row[MB], row[AO], row[BO], row[NV_]
    nk = jnv + r
    for i in range(nk * m):
        a[hb + i] = 0
    for j in range(jnv):
        for i in range(6):
            a[hb + j * m + i] = S[i, j]
    for j in range(r):
        a[hb + (jnv + j) * m + 6 + j] = 1
    for i in range(m):
        a[ao + i] = t[12 + i] if i < 6 else 0 * X[0, 0]
        a[vo_ + i] = V[i]
    Mk = np.zeros((m, m), dt)
    b = np.zeros(m, dt)
    Bi = np.zeros((3, m), dt)
    world = np.zeros(3, dt)
    R = t[18:27].copy().reshape((3, 3))
    p = t[27:30].copy()
    y = np.zeros(3, dt)
    for i in range(n):
        # r_i = p_i + Φ_i η and Φ_i η̇; B_i = [−r_i×, I, Φ_i]
        Bi[:, :] = 0
        for c in range(3):
            rc = P[i, c] + 0 * X[0, 0]
            pc = 0 * X[0, 0]
            for j in range(r):
                rc += Phi[i, c, j] * eta[j]
                pc += Phi[i, c, j] * etad[j]
                Bi[c, 6 + j] = Phi[i, c, j]
            t[36 + c], t[39 + c] = rc, pc
        r0, r1, r2 = t[36], t[37], t[38]
        Bi[0, 1], Bi[0, 2], Bi[1, 2] = r2, -r1, r0
        Bi[1, 0], Bi[2, 0], Bi[2, 1] = -r2, r1, -r0
        Bi[0, 3] = Bi[1, 4] = Bi[2, 5] = 1
        # u_i = B_i 𝒱 = ω × r_i + v + Φ_i η̇;  y = ω × (Φ_i η̇ + u_i)
        w0, w1, w2 = omega[0], omega[1], omega[2]
        u0 = w1 * r2 - w2 * r1 + v[3] + 2 * t[39]
        u1 = w2 * r0 - w0 * r2 + v[4] + 2 * t[40]
        u2 = w0 * r1 - w1 * r0 + v[5] + 2 * t[41]
        y[0], y[1], y[2] = w1 * u2 - w2 * u1, w2 * u0 - w0 * u2, w0 * u1 - w1 * u0
        mi = mu[i]
        for j in range(m):  # b += μ B_iᵀ y, M += μ B_iᵀ B_i
            b[j] += mi * (Bi[0, j] * y[0] + Bi[1, j] * y[1] + Bi[2, j] * y[2])
            for l in range(j, m):
                Mk[j, l] += mi * (Bi[0, j] * Bi[0, l] + Bi[1, j] * Bi[1, l] + Bi[2, j] * Bi[2, l])
        for c in range(3):
            world[c] += mi * (p[c] + R[c, 0] * r0 + R[c, 1] * r1 + R[c, 2] * r2)
    for j in range(m):
        for l in range(j):
            Mk[j, l] = Mk[l, j]
    if r > 0:
        b[6:] += _mv(Kst, eta, dt) + _mv(Cd, etad, dt)
    for i in range(m):
        a[bo + i] = b[i]
        for j in range(m):
            a[mo + i * m + j] = Mk[i, j]
    # own frame: Γ = [I, 0], γ = 0
    at = row[ATT]
    for i in range(6):
        for j in range(m):
            a[at + i * m + j] = 1.0 if i == j else 0.0
    g = at + 6 * m
    for i in range(6):
        a[g + i] = 0
        a[g + 18 + i] = v[i]
    for i in range(12):
        a[g + 6 + i] = t[18 + i]
    pot = -(world[0] * reals[0] + world[1] * reals[1] + world[2] * reals[2])
    if r > 0:
        pot += 0.5 * np.sum(eta * _mv(Kst, eta, dt))
    a[row[POT]] = pot
    # modal nodes (BODIES.md): Γ_o = [ᵒX_k, Π_o], γ_o = Γ̇_o 𝒱(k)
    rec = 6 * m + 24
    for node in range(nn):
        nb = nodes + node * (3 + 6 * r)
        po = reals[nb: nb + 3]
        Phio = reals[nb + 3: nb + 3 + 3 * r].reshape((3, r))
        Psio = reals[nb + 3 + 3 * r: nb + 3 + 6 * r].reshape((3, r))
        psi = _mv(Psio, eta, dt)
        psid = _mv(Psio, etad, dt)
        A_, B_, C_, dB, dC = exp_map_coefficients(np.sum(psi * psi))
        K = _skew(psi)
        K2 = _mm(K, K, dt)
        Ro = np.eye(3).astype(dt) + A_ * K + B_ * K2
        Jr = np.eye(3).astype(dt) - B_ * K + C_ * K2
        ro_ = po + _mv(Phio, eta, dt)
        Xo = np.zeros((6, 6), dt)
        Et = Ro.T.copy()
        Xo[:3, :3] = Et
        Xo[3:, 3:] = Et
        Xo[3:, :3] = -_mm(Et, _skew(ro_), dt)
        Pi = np.zeros((6, r), dt)
        Pi[:3] = _mm(Jr, Psio, dt)
        Pi[3:] = _mm(Et, Phio, dt)
        v_rel = _mv(Pi, etad, dt)
        sdot = 2 * np.sum(psi * psid)
        k_psid = _cross(psi, psid)
        Jr_dot = -dB * sdot * k_psid + dC * sdot * _cross(psi, k_psid) + C_ * _cross(psid, k_psid)
        Xv = _mv(Xo, v, dt)
        # γ = −(v_rel ×) Xv + [J̇_r Ψ η̇; −ω_rel × v_rel_lin]
        w_, l_ = v_rel[:3], v_rel[3:]
        gamma = np.zeros(6, dt)
        gamma[:3] = -_cross(w_, Xv[:3]) + Jr_dot
        gamma[3:] = -(_cross(l_, Xv[:3]) + _cross(w_, Xv[3:])) - _cross(w_, l_)
        ra = at + (node + 1) * rec
        for i in range(6):
            for j in range(m):
                a[ra + i * m + j] = Xo[i, j] if j < 6 else Pi[i, j - 6]
        ga = ra + 6 * m
        Rw = _mm(R, Ro, dt)
        pw = p + _mv(R, ro_, dt)
        for i in range(6):
            a[ga + i] = gamma[i]
            a[ga + 18 + i] = Xv[i] + v_rel[i]
        for i in range(3):
            for j in range(3):
                a[ga + 6 + 3 * i + j] = Rw[i, j]
            a[ga + 15 + i] = pw[i]
    return True


# ---------------------------------------------------------------------------- clusters
@njit(cache=True)
def cluster_state(ints, reals, k, q, qd, a, work, terms, constants) -> bool:
    """A :class:`~sko.bodies.cluster.RigidCluster` with couplings only (EMBEDDING.md §4; Python:
    its ``at_state``): ``θ_C = G θ_ind + d``, ``θ̇_C = G θ̇_ind`` (``Ġ = 0``); each member's hinge
    from its parent member's record (the cluster's inboard for the first ones), then
    ``φ(℘, k) = (Φ B Γ_o)*``, ``H* = Φ S G``, ``a = Φ a_int``, ``M = diag(I_j)``, ``b``, the
    member records ``Γ_j = [0 … I … 0]``, ``γ_j = 0`` (the first member's also as the cluster's own)."""
    XJ, S, cJ, X, t = work
    row = ints[k]
    ro, m, qo, vo = row[RO], row[DIM], row[QO], row[VO]
    c, n_sp, n_ind = int(reals[ro]), int(reals[ro + 1]), int(reals[ro + 2])
    go, do = ro + 3, ro + 3 + n_sp * n_ind
    theta = np.empty(n_sp, a.dtype)
    thetad = np.empty(n_sp, a.dtype)
    for i in range(n_sp):
        s, sd = reals[do + i], 0.0  # 0.0, not 0 · X[0, 0] (X is not written yet): numba widens it
        for j in range(n_ind):
            s += reals[go + i * n_ind + j] * q[qo + j]
            sd += reals[go + i * n_ind + j] * qd[vo + j]
        theta[i], thetad[i] = s, sd
    Phi = np.zeros((m, m), a.dtype)  # φ_int*: block (j, i) = ʲX_i for i on the path of j
    E = np.zeros((m, 6), a.dtype)  # Φ B
    SG = np.zeros((m, n_ind), a.dtype)  # S G
    a_int = np.empty(m, a.dtype)
    for i in range(m * m):  # the arena is not zeroed: M's off-diagonal blocks
        a[row[MB] + i] = 0
    mrow = np.zeros((1, COLUMNS), np.int64)
    size = 6 * m + 24
    rec0 = row[ATT] + size  # the first member's record (the cluster's own frame's comes first)
    pot = 0.0
    for j in range(c):
        mo = ro + 3 + n_sp * n_ind + n_sp + j * MEMBER_REALS
        parent, col, nv = int(reals[mo + 4]), int(reals[mo + 5]), int(reals[mo + 3])
        r = mrow[0]
        r[JOINT], r[REVERSE], r[JNQ], r[JNV] = int(reals[mo]), int(reals[mo + 1]), int(reals[mo + 2]), nv
        r[QO], r[VO], r[RO] = col, col, mo + MEMBER_META
        if parent < 0:
            r[IN_ATT], r[IN_DIM] = row[IN_ATT], row[IN_DIM]
        else:
            r[IN_ATT], r[IN_DIM] = rec0 + parent * size, m
        if not _hinge(mrow, reals, 0, theta, thetad, a, work, terms):
            return False
        rj = 6 * j
        for i in range(6):
            Phi[rj + i, rj + i] = 1.0
        if parent < 0:
            for i in range(6):
                for l in range(6):
                    E[rj + i, l] = X[i, l]
        else:
            rp = 6 * parent
            for i in range(6):
                for col2 in range(m):
                    s = 0.0
                    for l in range(6):
                        s += X[i, l] * Phi[rp + l, col2]
                    Phi[rj + i, col2] += s
        for i in range(6):
            for l in range(nv):
                Sil = S[i, l]
                for p in range(n_ind):
                    SG[rj + i, p] += Sil * reals[go + (col + l) * n_ind + p]
            a_int[rj + i] = t[12 + i]
            a[row[NV_] + rj + i] = t[6 + i]
        # b_j = v ×* I v, M's diagonal block, the member's record, its potential
        io = mo + MEMBER_META + INERTIA
        _bias_force(reals, io, t, a, row[BO] + rj)
        for i in range(6):
            for l in range(6):
                a[row[MB] + (rj + i) * m + rj + l] = reals[io + 6 * i + l]
        for copy in range(2 if j == 0 else 1):
            at = rec0 + j * size if copy == 0 else row[ATT]
            for i in range(6):
                for l in range(m):
                    a[at + i * m + l] = 1.0 if l == rj + i else 0.0
            g = at + 6 * m
            for i in range(6):
                a[g + i] = 0
                a[g + 18 + i] = t[6 + i]
            for i in range(12):
                a[g + 6 + i] = t[18 + i]
        cm = 0.0
        for i in range(3):
            ci = t[27 + i]
            for l in range(3):
                ci += t[18 + 3 * i + l] * reals[mo + MEMBER_META + COM + l]
            cm -= reals[i] * ci
        pot += reals[mo + MEMBER_META + MASS] * cm
    a[row[POT]] = pot
    # H = (Φ S G)*, a = Φ a_int, the weight (Φ B Γ_o)*
    hb, ao = row[HB], row[AO]
    for i in range(m):
        sa = 0.0
        for l in range(m):
            sa += Phi[i, l] * a_int[l]
        a[ao + i] = sa
        for p in range(n_ind):
            s = 0.0
            for l in range(m):
                s += Phi[i, l] * SG[l, p]
            a[hb + p * m + i] = s
    o = row[IN_ATT]
    if o >= 0:
        mp, wo = row[IN_DIM], row[W]
        PB = np.zeros((m, 6), a.dtype)
        for i in range(m):
            for l in range(6):
                s = 0.0
                for r2 in range(m):
                    s += Phi[i, r2] * E[r2, l]
                PB[i, l] = s
        for jp in range(mp):
            for i in range(m):
                s = 0.0
                for l in range(6):
                    s += PB[i, l] * a[o + l * mp + jp]
                a[wo + jp * m + i] = s
    return True


# ---------------------------------------------------------------------------- dispatch
@njit(cache=True, inline="always")
def library_state(ints, reals, k, q, qd, a, work, terms, constants) -> bool:
    """The state of body ``k`` by its kind (:data:`RIGID`, :data:`ROTOR`, :data:`CLUSTER`, :data:`FLEXIBLE`),
    the ``terms`` asked for (and the ``constants``: module docstring)."""
    kind = ints[k, KIND]
    if kind == RIGID:
        return rigid_state(ints, reals, k, q, qd, a, work, terms, constants)
    if kind == ROTOR:
        return rotor_state(ints, reals, k, q, qd, a, work, terms, constants)
    if kind == CLUSTER:
        return cluster_state(ints, reals, k, q, qd, a, work, terms, constants)
    return flexible_state(ints, reals, k, q, qd, a, work, terms, constants)


@njit(cache=True)
def _fill_one(ints, reals, bodies, q, qd, a, work) -> int:
    for k in bodies:
        if not library_state(ints, reals, k, q, qd, a, work, POSE, True):
            return k
    return -1


WORK = 36 + 36 + 6 + 36 + 64  #: scratch entries of the state kernels: X_J, S, c_J, X, t
CHUNK = 16  #: states per task of a parallel batch (the systems' requests too)


@njit(cache=True, inline="always")
def work_views(buf, o):
    """The state kernels' scratch ``(X_J, S, c_J, X, t)`` as views of ``buf[o: o + WORK]``."""
    return (matrix_view(buf, o, 6, 6), matrix_view(buf, o + 36, 6, 6), buf[o + 72: o + 78],
            matrix_view(buf, o + 78, 6, 6), buf[o + 114: o + WORK])


@njit(cache=True)
def _fill_serial(ints, reals, bodies, Q, QD, A, status, buffers):
    ints, reals, bodies = borrowed(ints), borrowed(reals), borrowed(bodies)
    Q, QD, A = borrowed(Q), borrowed(QD), borrowed(A)
    status, work = borrowed(status), work_views(borrowed(buffers)[0], 0)
    for s in range(Q.shape[0]):
        status[s] = _fill_one(ints, reals, bodies, Q[s], QD[s], A[s], work)


@njit(cache=True, parallel=True)
def _fill_parallel(ints, reals, bodies, Q, QD, A, status, buffers):
    ints, reals, bodies = borrowed(ints), borrowed(reals), borrowed(bodies)
    Q, QD, A = borrowed(Q), borrowed(QD), borrowed(A)
    status, buffers = borrowed(status), borrowed(buffers)
    for c in prange(buffers.shape[0]):
        work = work_views(buffers[c], 0)
        for s in range(CHUNK * c, min(Q.shape[0], CHUNK * c + CHUNK)):
            status[s] = _fill_one(ints, reals, bodies, Q[s], QD[s], A[s], work)


def fill_states(ints, reals, bodies, Q, QD, A, status) -> None:
    """Library states of the bodies of rows ``bodies`` (in that order, parents first), every term
    (:data:`POSE`), for every state ``s`` of the batch: ``A[s]`` from ``Q[s]``, ``QD[s]``.
    ``status[s]`` becomes the row of the first body whose joint rejected the state (a zero
    quaternion), or ``-1``. Batches of more
    than two chunks run in parallel over chunks of :data:`CHUNK` states (numba's threads)."""
    parallel = Q.shape[0] > 2 * CHUNK
    buffers = np.zeros((-(-Q.shape[0] // CHUNK) if parallel else 1, WORK), dtype=A.dtype)
    (_fill_parallel if parallel else _fill_serial)(ints, reals, bodies, Q, QD, A, status, buffers)

"""The regressors of a rigid tree, compiled (IDENTIFICATION.md, *The compiled recursion*).

Two requests of the catalogue (:data:`~sko.engine.requests.REQUESTS`), for systems whose bodies
are all plain :class:`~sko.bodies.rigid.RigidBody` with a compiled state (:func:`applies`):

``joint_torque_regressor``
    ``Y`` (nv × 10 N) with ``τ − T_hinge = Y π`` at ``(q, θ̇, θ̈)`` (IDENTIFICATION.md, Eq. 3);
``energy_regressors``
    ``[y_T; y_V]`` (2 × 10 N) with ``T = y_T · π`` and ``V = y_V · π`` at ``(q, θ̇)``.

Both read the state's arena as the other requests do (:func:`~sko.engine.request_views.fill_arena`),
the dynamics' terms only (``Terms.MOTION``: the bodies' kernels take their fast paths): each
body's ``H``, weight ``φ(℘(k), k)``, ``a``, node velocity ``𝒱`` (body coordinates) and
``ᵏX_o = [[E, 0], [−E r×, E]]``, from which a first pass (:func:`world_poses`) composes every
body's world pose ``(R, p)`` (a plain rigid body hangs from its parent's own frame). A second
pass from the base to the tips does the rest: the node acceleration ``α = φ* α(℘) + H* θ̈ + a``
(gravity in the base's ``a``; any joint, its ``c_J`` in ``a``), the body's 6 × 10 force regressor ``F(𝒱, α)`` (:func:`~sko.bodies.rigid_parameters.rigid_force_regressor`)
moved to world coordinates about the world origin, ``⁰X_k^* F``, where every hinge column is a
world 6-vector ``s = ⁰X_k H*`` computed once; the body's block on the rows of an ancestor ``i``
is then ``sᵀ (⁰X_k^* F)`` per column ``s`` of ``i`` — no transform carried along the walk, 60
products per (column, body) pair: O(N·d). The columns of body ``k`` are ``10 k`` onwards in the
system's body order (the flat layout's ``BODY``), as :meth:`inertial_parameters` orders them.

The system methods are made from the requests' declarations (:mod:`sko.systems.catalogue`):
the engine answers them as any request (the prepared one-state call, else
:meth:`~sko.engine.dispatch.Engine.run`: checks, batches in parallel chunks, a state whose result
is not finite retried on the reference path, which names the overflow) where :func:`applies`,
and :mod:`sko.systems.regressors` appends the joint columns the options ask for.
"""

from __future__ import annotations

from sko.engine.borrow import borrowed, matrix_view
from sko.engine.layout import Flat
from sko.engine.jit import kernel, register
from sko.engine.state_kernels import Record, Row, Terms
from sko.engine.fields import columns, offsets
from sko.engine.request_views import Header, buffer, fill_arena, request_views

__all__ = ["TorqueWork", "EnergyWork", "Pose", "torque_buffers", "energy_buffers", "applies", "world_poses",
           "torque_regressor", "energy_rows", "torque_regressor_request", "energy_regressors_request"]


#: The workspace of :func:`torque_regressor_request`: ``α`` (6 N), the world hinge columns ``S``
#: (6 nv), one body's block ``F`` (6 × 10), the world poses (:data:`Pose` per body).
TorqueWork = columns("TorqueWork", "ALPHA", "S", "F", "POSES")
#: The workspace of :func:`energy_regressors_request`: the world poses (:data:`Pose` per body).
EnergyWork = columns("EnergyWork", "POSES")
#: A body's world pose in :func:`world_poses`: ``R`` (row-major), then ``p``.
Pose = offsets("Pose", rotation=9, position=3)


def torque_buffers(s) -> tuple:
    """:data:`TorqueWork` (``s``: :class:`~sko.engine.requests.Sizes`)."""
    return 6 * s.n, 6 * s.nv, 60, Pose.SIZE * s.n


def energy_buffers(s) -> tuple:
    """:data:`EnergyWork`."""
    return (Pose.SIZE * s.n,)


def applies(system) -> bool:
    """Whether the compiled regressors take ``system``: every body a plain
    :class:`~sko.bodies.rigid.RigidBody` (not a subclass: its parameters or node may differ) with a
    compiled state (no user-defined joint): its layout's
    :attr:`~sko.engine.state_layout.StateLayout.plain_rigid`, found once with the layout."""
    layout = system._engine.layout
    return layout is not None and layout.plain_rigid


# ----------------------------------------------------------------------------- the kernels
@register
def _pose(src, ro, po):
    """``(R row-major, p)``: the numbers of a pose (:data:`Pose`) at ``src[ro]``, ``src[po]``."""
    return (src[ro], src[ro + 1], src[ro + 2], src[ro + 3], src[ro + 4], src[ro + 5], src[ro + 6], src[ro + 7],
            src[ro + 8], src[po], src[po + 1], src[po + 2])


@kernel
def world_poses(rows, arena, P):
    """``P[Pose.SIZE k:]``: the world pose ``(R, p)`` of every body's own frame (parents first), from
    its ``ᵏX_o = [[E, 0], [−E r×, E]]`` in the arena (``E`` at ``Row.E`` with its strides):
    ``R = R_o Eᵀ``, ``p = p_o + R_o r`` with ``r× = −Eᵀ (−E r×)``, ``o`` the parent's own frame
    (``P`` of the parent) or, for a base body, the inertial frame's record it hangs from."""
    for k in range(rows.shape[0]):
        eo, er, ec, parent = rows[k, Row.E], rows[k, Row.E_ROW], rows[k, Row.E_COLUMN], rows[k, Row.PARENT]
        if parent >= 0:
            o = _pose(P, Pose.SIZE * parent + Pose.rotation, Pose.SIZE * parent + Pose.position)
        else:
            io = rows[k, Row.INBOARD]
            o = _pose(arena, io + Record.rotation, io + Record.position)
        e00, e01, e02 = arena[eo], arena[eo + ec], arena[eo + 2 * ec]
        e10, e11, e12 = arena[eo + er], arena[eo + er + ec], arena[eo + er + 2 * ec]
        e20, e21, e22 = arena[eo + 2 * er], arena[eo + 2 * er + ec], arena[eo + 2 * er + 2 * ec]
        lo = eo + 3 * er
        r0 = -(e02 * arena[lo + ec] + e12 * arena[lo + er + ec] + e22 * arena[lo + 2 * er + ec])
        r1 = -(e00 * arena[lo + 2 * ec] + e10 * arena[lo + er + 2 * ec] + e20 * arena[lo + 2 * er + 2 * ec])
        r2 = -(e01 * arena[lo] + e11 * arena[lo + er] + e21 * arena[lo + 2 * er])
        ro, po = Pose.SIZE * k + Pose.rotation, Pose.SIZE * k + Pose.position
        for i in range(3):
            a0, a1, a2 = o[Pose.rotation + 3 * i], o[Pose.rotation + 3 * i + 1], o[Pose.rotation + 3 * i + 2]
            P[ro + 3 * i] = a0 * e00 + a1 * e01 + a2 * e02
            P[ro + 3 * i + 1] = a0 * e10 + a1 * e11 + a2 * e12
            P[ro + 3 * i + 2] = a0 * e20 + a1 * e21 + a2 * e22
            P[po + i] = o[Pose.position + i] + a0 * r0 + a1 * r1 + a2 * r2


@kernel
def _world_column(R, ro, po, n0, n1, n2, f0, f1, f2, out, o, t):
    """``out[o + t·i] = (⁰X_k^* [n; f])_i`` (``i = 0 … 5``) for the frame ``(R, p)`` at ``R[ro]``,
    ``R[po]``: ``[R n + p × R f; R f]``."""
    g0 = R[ro] * f0 + R[ro + 1] * f1 + R[ro + 2] * f2
    g1 = R[ro + 3] * f0 + R[ro + 4] * f1 + R[ro + 5] * f2
    g2 = R[ro + 6] * f0 + R[ro + 7] * f1 + R[ro + 8] * f2
    x0, x1, x2 = R[po], R[po + 1], R[po + 2]
    out[o] = R[ro] * n0 + R[ro + 1] * n1 + R[ro + 2] * n2 + x1 * g2 - x2 * g1
    out[o + t] = R[ro + 3] * n0 + R[ro + 4] * n1 + R[ro + 5] * n2 + x2 * g0 - x0 * g2
    out[o + 2 * t] = R[ro + 6] * n0 + R[ro + 7] * n1 + R[ro + 8] * n2 + x0 * g1 - x1 * g0
    out[o + 3 * t], out[o + 4 * t], out[o + 5 * t] = g0, g1, g2


@kernel
def _body_block(arena, vo, alpha, ao, P, ro, po, F):
    """``F`` (6 × 10, row-major): ``⁰X_k^* F(𝒱, α)``, the body's force regressor
    (``I α + 𝒱 ×* I 𝒱 = F π``, π in Pinocchio's order) moved to world coordinates about the
    world origin; ``𝒱`` at ``arena[vo]``, ``α`` at ``alpha[ao]``, the pose at ``P[ro]``, ``P[po]``."""
    w0, w1, w2, u0, u1, u2 = arena[vo], arena[vo + 1], arena[vo + 2], arena[vo + 3], arena[vo + 4], arena[vo + 5]
    d0, d1, d2 = alpha[ao], alpha[ao + 1], alpha[ao + 2]
    c0 = alpha[ao + 3] + w1 * u2 - w2 * u1  # a' = v̇ + ω × v
    c1 = alpha[ao + 4] + w2 * u0 - w0 * u2
    c2 = alpha[ao + 5] + w0 * u1 - w1 * u0
    z = 0.0 * w0
    ww = w0 * w0 + w1 * w1 + w2 * w2
    _world_column(P, ro, po, z, z, z, c0, c1, c2, F, 0, 10)  # m: [0; a']
    # m c_i: [e_i × a'; ω̇ × e_i + ω × (ω × e_i)], ω × (ω × e_i) = ω ω_i − |ω|² e_i
    _world_column(P, ro, po, z, -c2, c1, w0 * w0 - ww, d2 + w1 * w0, -d1 + w2 * w0, F, 1, 10)
    _world_column(P, ro, po, c2, z, -c0, -d2 + w0 * w1, w1 * w1 - ww, d0 + w2 * w1, F, 2, 10)
    _world_column(P, ro, po, -c1, c0, z, d1 + w0 * w2, -d0 + w1 * w2, w2 * w2 - ww, F, 3, 10)
    # I_ab: S ω̇ + ω × (S ω) for S = e_a e_bᵀ + e_b e_aᵀ (a = b: e_a e_aᵀ), zero force
    _world_column(P, ro, po, d0, w2 * w0, -w1 * w0, z, z, z, F, 4, 10)  # xx: S x = [x0, 0, 0]
    _world_column(P, ro, po, d1 - w2 * w0, d0 + w2 * w1, w0 * w0 - w1 * w1, z, z, z, F, 5, 10)  # xy: [x1, x0, 0]
    _world_column(P, ro, po, -w2 * w1, d1, w0 * w1, z, z, z, F, 6, 10)  # yy: [0, x1, 0]
    _world_column(P, ro, po, d2 + w1 * w0, w2 * w2 - w0 * w0, d0 - w1 * w2, z, z, z, F, 7, 10)  # xz: [x2, 0, x0]
    _world_column(P, ro, po, w1 * w1 - w2 * w2, d2 - w0 * w1, d1 + w0 * w2, z, z, z, F, 8, 10)  # yz: [0, x2, x1]
    _world_column(P, ro, po, w1 * w2, -w0 * w2, d2, z, z, z, F, 9, 10)  # zz: [0, 0, x2]


@kernel
def torque_regressor(rows, layout, arena, v0, qdd, alpha, S, F, P, Y):
    """``Y`` (nv × 10 N, zero on entry) at the state of the filled ``arena`` and ``θ̈`` (module
    docstring); ``v0``: where ``θ̇`` starts in the arena. Buffers: ``alpha`` (6 N), ``S`` (the
    world hinge columns, 6 nv), ``F`` (60), ``P`` (the world poses, :data:`Pose` per body)."""
    rows, layout, arena, qdd = borrowed(rows), borrowed(layout), borrowed(arena), borrowed(qdd)
    alpha, S, F, P, Y = borrowed(alpha), borrowed(S), borrowed(F), borrowed(P), borrowed(Y)
    world_poses(rows, arena, P)
    for k in range(rows.shape[0]):
        p, h, d, ho = rows[k, Row.PARENT], rows[k, Row.NV], rows[k, Row.V] - v0, rows[k, Row.H]
        ao, ko = rows[k, Row.A], 6 * k
        ro, po = Pose.SIZE * k + Pose.rotation, Pose.SIZE * k + Pose.position
        for i in range(6):  # α = φ* α(℘) + H* θ̈ + a
            x = arena[ao + i]
            for c in range(h):
                x += arena[ho + 6 * c + i] * qdd[d + c]
            alpha[ko + i] = x
        if p >= 0:
            wo = rows[k, Row.WEIGHT]
            for i in range(6):
                x = alpha[ko + i]
                for r in range(6):
                    x += arena[wo + 6 * r + i] * alpha[6 * p + r]
                alpha[ko + i] = x
        for c in range(h):  # s = ⁰X_k H*(k) e_c
            so = ho + 6 * c
            _world_column(P, ro, po, arena[so + 3], arena[so + 4], arena[so + 5], arena[so], arena[so + 1],
                          arena[so + 2], S, 6 * (d + c), 1)
            o = 6 * (d + c)  # _world_column maps forces [n; f]; a motion [ω; v] is [v; ω] there
            S[o], S[o + 1], S[o + 2], S[o + 3], S[o + 4], S[o + 5] = S[o + 3], S[o + 4], S[o + 5], S[o], S[o + 1], \
                S[o + 2]
        _body_block(arena, rows[k, Row.VELOCITY], alpha, ko, P, ro, po, F)
        col = 10 * layout[k, Flat.BODY]
        i = k
        while i >= 0:  # the rows of k and its ancestors: sᵀ (⁰X_k^* F)
            di = rows[i, Row.V] - v0
            for c in range(rows[i, Row.NV]):
                so = 6 * (di + c)
                s0, s1, s2, s3, s4, s5 = S[so], S[so + 1], S[so + 2], S[so + 3], S[so + 4], S[so + 5]
                for j in range(10):
                    Y[di + c, col + j] = (s0 * F[j] + s1 * F[10 + j] + s2 * F[20 + j] + s3 * F[30 + j]
                                          + s4 * F[40 + j] + s5 * F[50 + j])
            i = rows[i, Row.PARENT]


@kernel
def energy_rows(rows, layout, arena, gravity, P, out):
    """``out = [y_T; y_V]`` (2 × 10 N, zero on entry) at the state of the filled ``arena``:
    ``y_T`` of ``½ 𝒱ᵀ I 𝒱`` (body coordinates) and ``y_V`` of ``−m g·(p + R c)``, the poses
    by :func:`world_poses` into the buffer ``P`` (:data:`Pose` per body)."""
    rows, layout, arena, gravity, P, out = (borrowed(rows), borrowed(layout), borrowed(arena), borrowed(gravity),
                                            borrowed(P), borrowed(out))
    world_poses(rows, arena, P)
    g0, g1, g2 = gravity[0], gravity[1], gravity[2]
    for k in range(rows.shape[0]):
        vo, col = rows[k, Row.VELOCITY], 10 * layout[k, Flat.BODY]
        ro, po = Pose.SIZE * k + Pose.rotation, Pose.SIZE * k + Pose.position
        w0, w1, w2, u0, u1, u2 = arena[vo], arena[vo + 1], arena[vo + 2], arena[vo + 3], arena[vo + 4], arena[vo + 5]
        T, V = out[0], out[1]
        T[col] = 0.5 * (u0 * u0 + u1 * u1 + u2 * u2)
        T[col + 1], T[col + 2], T[col + 3] = u1 * w2 - u2 * w1, u2 * w0 - u0 * w2, u0 * w1 - u1 * w0  # v × ω
        T[col + 4], T[col + 5], T[col + 6] = 0.5 * w0 * w0, w0 * w1, 0.5 * w1 * w1
        T[col + 7], T[col + 8], T[col + 9] = w0 * w2, w1 * w2, 0.5 * w2 * w2
        V[col] = -(g0 * P[po] + g1 * P[po + 1] + g2 * P[po + 2])
        for a in range(3):  # −Rᵀ g
            V[col + 1 + a] = -(P[ro + a] * g0 + P[ro + 3 + a] * g1 + P[ro + 6 + a] * g2)


# ----------------------------------------------------------------------------- the requests
@kernel
def torque_regressor_request(w, x, out):
    """The ``joint_torque_regressor`` request: :func:`torque_regressor` at ``θ̈ = x``."""
    w, x, out = borrowed(w), borrowed(x), borrowed(out)
    words, rows, layout, roff, reals, arena, ws, at = request_views(w)
    status = fill_arena(words, rows, reals, arena, Terms.MOTION)
    if status >= 0:
        return status
    nv, n = words[Header.NV], words[Header.N]
    torque_regressor(rows, layout, arena, words[Header.V], x, buffer(ws, at, TorqueWork.ALPHA),
                     buffer(ws, at, TorqueWork.S), buffer(ws, at, TorqueWork.F), buffer(ws, at, TorqueWork.POSES),
                     matrix_view(out, 0, nv, 10 * n))
    return -1


@kernel
def energy_regressors_request(w, x, out):
    """The ``energy_regressors`` request: :func:`energy_rows`."""
    w, x, out = borrowed(w), borrowed(x), borrowed(out)
    words, rows, layout, roff, reals, arena, ws, at = request_views(w)
    status = fill_arena(words, rows, reals, arena, Terms.MOTION)
    if status >= 0:
        return status
    energy_rows(rows, layout, arena, reals[:3], buffer(ws, at, EnergyWork.POSES),
                matrix_view(out, 0, 2, 10 * words[Header.N]))
    return -1

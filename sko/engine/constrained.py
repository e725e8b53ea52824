"""Constrained and impulse dynamics at frames, compiled: O(N + m·d + m³) per state
(CONSTRAINTS.md §3–§6, Eq. 4–7).

One request kernel of the form of :mod:`sko.engine.requests` (``kernel(w, x, out) ->
status``, run by its drivers ``evaluate_one`` and ``evaluate_batch``), :func:`constrained`, for
both requests: the constrained dynamics when its request reads a third input (``τ``,
``Header.X``), an impact when it reads none (one kernel: each would hold a copy of all the
kernels it calls, optimized and generated again). Its request vector has the buffers of the articulated-body passes (``r``, the
Riccati scratch, ``z``, the right-hand side) and then a *plan* of the constraints, packed once
per constraint set by :mod:`sko.constraints.compiled`: integers (:data:`Plan`, one row of
:data:`ConstraintRow` per constraint, the constrained nodes and their ancestors with the rows of the
constraints below each, :data:`Active`), numbers (:data:`Numbers`: the condition bound and the
restitution, then per constraint :data:`Gains`: ``kp``, ``kd`` and the two placements) and the
work buffers. ``out`` holds ``v̇`` (or ``v⁺``) and then ``λ`` (or the impulses), ``m`` rows.

Per state (``d`` the depth of the constrained nodes):

1. the arena (every term), the Riccati gather and, for the dynamics, the gather of the
   articulated-body passes with ``τ`` minus the bodies' compiled hinge forces (``ν`` of the free
   accelerations, kept) and their scatter over the constrained nodes and their ancestors only:
   the node accelerations ``α`` there (Algorithm 6.1; gravity enters as the base's
   acceleration);
2. each constraint frame's pose, twist ``Γ_o 𝒱`` and acceleration ``Γ_o α + γ_o`` from the
   attachment record of its body (:mod:`sko.engine.state_kernels`), moved to the constraint's
   placement, gravity taken out (the uniform field ``−a_g`` of the base); from them the rows
   ``J v`` and ``J v̇_free + γ`` with the drift conventions of :mod:`sko.constraints.kinematics`
   (CONSTRAINTS.md §2) and the position error ``e``: ``r = a_ref − γ − J v̇_free`` (Eq. 3, 4), or
   ``r = −(1 + e) J v⁻`` for an impact (Eq. 6);
3. ``Ω = Σ_k ε*(k) D⁻¹(k) ε(k)`` (Eq. 7): the gather of Algorithm 6.1 on the ``m`` columns of
   unit constraint forces, over the constrained nodes and their ancestors only, each node with
   the columns of the constraints below it; each node's ``D⁻¹ ε`` is kept, the ``ν`` of the unit
   forces;
4. ``Ω = L D Lᵀ`` and ``λ = Ω⁻¹ r`` when no row is idle (:data:`IDLE_ROW`: its ``Ω_ii`` is
   rounding noise, a direction no joint can move) and ``tr Ω · tr Ω⁻¹``, which bounds the
   condition number of ``Ω`` from above, is below the plan's bound; otherwise the status
   :data:`RANK_DEFICIENT` (the caller answers that state by the reference path, §5);
5. ``v̇ = v̇_free + ℳ⁻¹ Jᵀ λ`` by one scatter of Algorithm 6.1 over all nodes on ``ν`` of the free
   accelerations plus ``Σ_c λ_c ν_c`` (the gather is linear in the node forces: that of the
   constraint forces is the unit forces' combined by ``λ``); for an impact, the scatter on
   ``Σ_c Λ_c ν_c`` alone without ``a`` gives ``v⁺ − v⁻``.

The statuses are those of :mod:`sko.engine.requests`, and :data:`RANK_DEFICIENT`.
"""

from __future__ import annotations

import numpy as np

from sko.engine import aba
from sko.engine import rigid_blocks as rb
from sko.engine.borrow import borrowed, matrix_view
from sko.engine.fields import columns, offsets
from sko.engine.layout import Flat, Riccati
from sko.engine.jit import kernel, register
from sko.engine.hooks import add_hinge_forces
from sko.engine.state_kernels import Record, Terms
from sko.engine.bodies.rigid import Placement
from sko.engine.request_views import Header, buffer, fill_arena, request_views

__all__ = ["ConstrainedWork", "Plan", "ConstraintRow", "Active", "Numbers", "Gains", "Frame", "LOCAL", "WORLD",
           "LOCAL_WORLD_ALIGNED",
           "RANK_DEFICIENT", "constrained", "log_coefficient"]

#: The workspace of both request kernels: the articulated-body passes' (the Riccati buffer, its
#: scratch, ``z``, the right-hand sides; one column), then the plan's integers (:data:`Plan`), its
#: numbers (:data:`Numbers`) and its work region.
ConstrainedWork = columns("ConstrainedWork", "RICCATI", "SCRATCH", "Z", "RHS", "PLAN", "NUMBERS", "WORK")
#: The integers of a plan: counts, then where its tables and work buffers start (words from the
#: plan's start; work buffers: entries from the work region's start).
Plan = columns(
    "Plan",
    "CONSTRAINTS", "ROWS", "ACTIVE",  # constraints, rows m, nodes in Active
    "TABLE", "NODES", "POOL",  # the ConstraintRow table, the Active table, the pool of their columns
    "FRAMES", "MAPS", "TEMP", "VELOCITY", "RHS", "UNIT", "EPS", "NORMS", "OMEGA", "BOUND", "SOLVE", "COLUMNS", "NU",  # work
    "WORK",  # the work region's length
)
#: One constraint: its first row and dimension, reference frame, point flag, directions, and for
#: each side the arena offset of its attachment record (−1: fixed in the world), flat node, ``m``.
ConstraintRow = columns("ConstraintRow", "ROW", "DIM", "REFERENCE", "POINT", "D0", "D1", "D2", "D3", "D4", "D5",
              "RECORD1", "NODE1", "DIM1", "RECORD2", "NODE2", "DIM2")
#: One node of the gather of step 3 (module docstring), children before parents: its flat index,
#: and where its columns (constraint rows) start in the pool and how many.
Active = columns("Active", "NODE", "FIRST", "COUNT")
#: The plan's numbers: the bound on ``tr Ω · tr Ω⁻¹`` of the direct solve, the restitution.
Numbers = offsets("Numbers", condition=1, restitution=1)
#: Per constraint, after :data:`Numbers`: ``kp``, ``kd``, and the placements of its two frames
#: (rotation row-major, translation) in their attachment frames (the second: its world pose when
#: fixed in the world).
Gains = offsets("Gains", kp=1, kd=1, first=Placement.SIZE, second=Placement.SIZE)
#: A constraint frame in the work buffer: world rotation, origin, twist and acceleration (own axes,
#: ``[ω; v]``, gravity out).
Frame = offsets("Frame", rotation=9, position=3, velocity=6, acceleration=6)
#: The reference frames (:data:`sko.constraints.REFERENCES` in this order).
LOCAL, WORLD, LOCAL_WORLD_ALIGNED = 0, 1, 2
#: Status of a state whose ``Ω`` is singular or too ill-conditioned for the direct solve.
RANK_DEFICIENT = -6
#: A row whose ``Ω_ii`` is at most this times its rounding bound ``Ω̄_ii`` (the same sum in
#: norms, as if the joint maps did not cancel) is one no joint can move: its ``J`` row is
#: rounding noise (CONSTRAINTS.md §5), and no solve may divide by it.
IDLE_ROW = 1e-13
_MAP = 36  #: one side's 6 × 6 map in the work buffer


@register
def _cross(a0, a1, a2, b0, b1, b2):
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@register
def _times(A, ao, x0, x1, x2):
    """``R x`` for the row-major 3 × 3 ``R`` at ``A[ao:]``."""
    return (A[ao] * x0 + A[ao + 1] * x1 + A[ao + 2] * x2, A[ao + 3] * x0 + A[ao + 4] * x1 + A[ao + 5] * x2,
            A[ao + 6] * x0 + A[ao + 7] * x1 + A[ao + 8] * x2)


@register
def _transpose_times(A, ao, x0, x1, x2):
    """``Rᵀ x`` for the row-major 3 × 3 ``R`` at ``A[ao:]``."""
    return (A[ao] * x0 + A[ao + 3] * x1 + A[ao + 6] * x2, A[ao + 1] * x0 + A[ao + 4] * x1 + A[ao + 7] * x2,
            A[ao + 2] * x0 + A[ao + 5] * x1 + A[ao + 8] * x2)

@register
def _expressed(F, r1, p1, reference, l0, l1, l2, o0, o1, o2, out):
    """``out[0:6] = [v; ω]`` of the motion ``(l, o)`` given in the axes of frame 1 (rotation at
    ``F[r1:]``, origin at ``F[p1:]``), expressed in ``reference``: unchanged when local, rotated
    by ``R1`` otherwise, and with ``p1 × ω`` added about the world origin."""
    if reference != LOCAL:
        l0, l1, l2 = _times(F, r1, l0, l1, l2)
        o0, o1, o2 = _times(F, r1, o0, o1, o2)
        if reference == WORLD:
            e0, e1, e2 = _cross(F[p1], F[p1 + 1], F[p1 + 2], o0, o1, o2)
            l0, l1, l2 = l0 + e0, l1 + e1, l2 + e2
    out[0], out[1], out[2], out[3], out[4], out[5] = l0, l1, l2, o0, o1, o2



@register
def _placed_motion(P, po, src, so, dst, do):
    """A motion ``[ω; v]`` of an attachment frame (``src[so:]``) as the motion of the frame placed
    at ``(R_t, t)`` (``P[po:]``) in it, ``[R_tᵀ ω; R_tᵀ (v + ω × t)]``, into ``dst[do:]`` (may be
    ``src``)."""
    w0, w1, w2, v0, v1, v2 = src[so], src[so + 1], src[so + 2], src[so + 3], src[so + 4], src[so + 5]
    pt = po + Placement.translation
    c0, c1, c2 = _cross(w0, w1, w2, P[pt], P[pt + 1], P[pt + 2])
    a0, a1, a2 = _transpose_times(P, po, w0, w1, w2)
    b0, b1, b2 = _transpose_times(P, po, v0 + c0, v1 + c1, v2 + c2)
    dst[do], dst[do + 1], dst[do + 2], dst[do + 3], dst[do + 4], dst[do + 5] = a0, a1, a2, b0, b1, b2


@register
def _fixed(P, po, F, fo):
    """A constraint frame fixed in the world at ``P[po: po + 12]`` into ``F[fo:]``, at rest."""
    for a in range(12):
        F[fo + a] = P[po + a]
    rb.zero(F, fo + 12, fo + Frame.SIZE)


@kernel
def _side(arena, layout, z, g, o, j, m, P, po, accelerations, F, fo):
    """The constraint frame placed at ``P[po: po + 12]`` in the attachment frame of the record at
    ``arena[o:]`` of flat node ``j`` (``m`` its node dimension) into ``F[fo:]`` (:data:`Frame`):
    ``R = R_o R_t``, ``p = p_o + R_o t``, the twist and (if ``accelerations``) the acceleration
    ``Γ_o α(j) + γ_o`` placed, plus ``Rᵀ g`` (gravity out). ``o < 0``: fixed in the world at
    ``P[po:]``, at rest."""
    if o < 0:
        _fixed(P, po, F, fo)
        return
    rb.zero(F, fo, fo + Frame.SIZE)
    ro, fr = o + Record.rotation, fo + Frame.rotation
    for a in range(3):
        for c in range(3):
            F[fr + 3 * a + c] = (arena[ro + 3 * a] * P[po + c] + arena[ro + 3 * a + 1] * P[po + 3 + c]
                                 + arena[ro + 3 * a + 2] * P[po + 6 + c])
    pt = po + Placement.translation
    x0, x1, x2 = _times(arena, ro, P[pt], P[pt + 1], P[pt + 2])
    po_ = o + Record.position
    F[fo + Frame.position], F[fo + Frame.position + 1], F[fo + Frame.position + 2] = (
        arena[po_] + x0, arena[po_ + 1] + x1, arena[po_ + 2] + x2)
    _placed_motion(P, po, arena, o + Record.velocity, F, fo + Frame.velocity)
    if not accelerations:
        return
    fa, go, no = fo + Frame.acceleration, o + Record.SIZE, layout[j, Flat.NODE]
    for i in range(6):
        s = arena[o + Record.gamma + i]
        for c in range(m):
            s += arena[go + i * m + c] * z[no + c, 0]
        F[fa + i] = s
    _placed_motion(P, po, F, fa, F, fa)
    y0, y1, y2 = _transpose_times(F, fr, g[0], g[1], g[2])
    F[fa + 3] += y0
    F[fa + 4] += y1
    F[fa + 5] += y2


@kernel
def _maps(F, f1, f2, reference, point, sides, M, mo):
    """The 6 × 6 maps from each constraint frame's twist (own axes, ``[ω; v]``) to the
    constraint's six rows ``[v; ω]`` in the reference frame (CONSTRAINTS.md Eq. 1), the first at
    ``M[mo:]``, the second's after it when ``sides`` is 2 (with 1, the second frame is fixed in
    the world: it does not move and has no map)."""
    r1, r2, p1, p2 = f1 + Frame.rotation, f2 + Frame.rotation, f1 + Frame.position, f2 + Frame.position
    rb.zero(M, mo, mo + sides * _MAP)
    m2 = mo + _MAP
    for a in range(3):
        for c in range(3):
            M[mo + 6 * a + 3 + c] = F[r1 + 3 * a + c]  # lin = R1 v1
            M[mo + 6 * (a + 3) + c] = F[r1 + 3 * a + c]  # ang = R1 ω1
    if sides == 2:
        d0, d1, d2 = F[p1] - F[p2], F[p1 + 1] - F[p2 + 1], F[p1 + 2] - F[p2 + 2]
        for a in range(3):
            for c in range(3):
                M[m2 + 6 * a + 3 + c] = -F[r2 + 3 * a + c]  # lin −= R2 v2
                M[m2 + 6 * (a + 3) + c] = -F[r2 + 3 * a + c]  # ang −= R2 ω2
        if not point:  # lin += (p1 − p2) × R2 ω2: column c is (p1 − p2) × R2[:, c]
            for c in range(3):
                e0, e1, e2 = _cross(d0, d1, d2, F[r2 + c], F[r2 + 3 + c], F[r2 + 6 + c])
                M[m2 + c] += e0
                M[m2 + 6 + c] += e1
                M[m2 + 12 + c] += e2
    for s in range(sides):
        ms = mo + s * _MAP
        for c in range(6):
            l0, l1, l2 = M[ms + c], M[ms + 6 + c], M[ms + 12 + c]
            a0, a1, a2 = M[ms + 18 + c], M[ms + 24 + c], M[ms + 30 + c]
            if reference == LOCAL:
                l0, l1, l2 = _transpose_times(F, r1, l0, l1, l2)
                a0, a1, a2 = _transpose_times(F, r1, a0, a1, a2)
            elif reference == WORLD:  # lin + p1 × ang
                e0, e1, e2 = _cross(F[p1], F[p1 + 1], F[p1 + 2], a0, a1, a2)
                l0, l1, l2 = l0 + e0, l1 + e1, l2 + e2
            M[ms + c], M[ms + 6 + c], M[ms + 12 + c] = l0, l1, l2
            M[ms + 18 + c], M[ms + 24 + c], M[ms + 30 + c] = a0, a1, a2


@register
def _at_first(F, f1, f2, W, d0, d1, d2):
    """A motion ``W`` (a 6-offset into ``F``) of the second frame, at the first frame's origin in
    its axes: ``[R1ᵀ R2 ω; R1ᵀ (R2 v + R2 ω × (p1 − p2))]``."""
    w0, w1, w2 = _times(F, f2 + Frame.rotation, F[W], F[W + 1], F[W + 2])
    v0, v1, v2 = _times(F, f2 + Frame.rotation, F[W + 3], F[W + 4], F[W + 5])
    c0, c1, c2 = _cross(w0, w1, w2, d0, d1, d2)
    a0, a1, a2 = _transpose_times(F, f1 + Frame.rotation, w0, w1, w2)
    b0, b1, b2 = _transpose_times(F, f1 + Frame.rotation, v0 + c0, v1 + c1, v2 + c2)
    return a0, a1, a2, b0, b1, b2


@kernel
def _accelerations(F, f1, f2, reference, point, out):
    """The six rows ``[v; ω]`` of the constraint acceleration ``J v̇ + γ`` from the frames'
    twists and accelerations (:mod:`sko.constraints.kinematics`: the classical acceleration
    ``p̈1 − p̈2`` of a point constraint, else the local relative acceleration, expressed in the
    reference with its axes held) into ``out[0:6]``."""
    V1, A1, V2, A2 = f1 + Frame.velocity, f1 + Frame.acceleration, f2 + Frame.velocity, f2 + Frame.acceleration
    r1, p1, p2 = f1 + Frame.rotation, f1 + Frame.position, f2 + Frame.position
    if point:
        c0, c1, c2 = _cross(F[V1], F[V1 + 1], F[V1 + 2], F[V1 + 3], F[V1 + 4], F[V1 + 5])
        g0, g1, g2 = _times(F, r1, F[A1 + 3] + c0, F[A1 + 4] + c1, F[A1 + 5] + c2)
        c0, c1, c2 = _cross(F[V2], F[V2 + 1], F[V2 + 2], F[V2 + 3], F[V2 + 4], F[V2 + 5])
        h0, h1, h2 = _times(F, f2 + Frame.rotation, F[A2 + 3] + c0, F[A2 + 4] + c1, F[A2 + 5] + c2)
        g0, g1, g2 = g0 - h0, g1 - h1, g2 - h2
        if reference == LOCAL:
            g0, g1, g2 = _transpose_times(F, r1, g0, g1, g2)
        out[0], out[1], out[2], out[3], out[4], out[5] = g0, g1, g2, 0.0 * g0, 0.0 * g0, 0.0 * g0
        return
    d0, d1, d2 = F[p1] - F[p2], F[p1 + 1] - F[p2 + 1], F[p1 + 2] - F[p2 + 2]
    x0, x1, x2, x3, x4, x5 = _at_first(F, f1, f2, V2, d0, d1, d2)
    y0, y1, y2, y3, y4, y5 = _at_first(F, f1, f2, A2, d0, d1, d2)
    w0, w1, w2 = F[V1], F[V1 + 1], F[V1 + 2]
    a0, a1, a2 = _cross(w0, w1, w2, x0, x1, x2)
    b0, b1, b2 = _cross(w0, w1, w2, x3, x4, x5)
    c0, c1, c2 = _cross(F[V1 + 3], F[V1 + 4], F[V1 + 5], x0, x1, x2)
    o0, o1, o2 = F[A1] - y0 + a0, F[A1 + 1] - y1 + a1, F[A1 + 2] - y2 + a2  # local ω̇
    l0, l1, l2 = F[A1 + 3] - y3 + b0 + c0, F[A1 + 4] - y4 + b1 + c1, F[A1 + 5] - y5 + b2 + c2  # local v̇
    _expressed(F, r1, p1, reference, l0, l1, l2, o0, o1, o2, out)


@kernel
def _rotation_vector(F, f1, f2):
    """``log(R2ᵀ R1)``, the rotation vector (real parts; exact near 0 and π, as
    :func:`sko.constraints.kinematics.constraint_error_rows`)."""
    r1, r2 = f1 + Frame.rotation, f2 + Frame.rotation
    R = np.empty((3, 3))
    for a in range(3):
        for c in range(3):
            s = 0.0
            for k in range(3):
                s += F[r2 + 3 * k + a].real * F[r1 + 3 * k + c].real
            R[a, c] = s
    w0, w1, w2 = R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]
    s = 0.5 * np.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
    c = 0.5 * (R[0, 0] + R[1, 1] + R[2, 2] - 1.0)
    angle = np.arctan2(s, c)
    if s > 1e-6:
        k = angle / (2 * s)
        return k * w0, k * w1, k * w2
    if c > 0:
        k = 0.5 * (1 + angle ** 2 / 6)
        return k * w0, k * w1, k * w2
    i = 0
    for a in range(1, 3):
        if R[a, a] > R[i, i]:
            i = a
    n = np.sqrt(0.5 * (R[i, i] + 1.0))
    a0, a1, a2 = 0.5 * (R[0, i] + (i == 0)) / n, 0.5 * (R[1, i] + (i == 1)) / n, 0.5 * (R[2, i] + (i == 2)) / n
    if a0 * w0 + a1 * w1 + a2 * w2 < 0:
        a0, a1, a2 = -a0, -a1, -a2
    return np.pi * a0, np.pi * a1, np.pi * a2


def log_coefficient(theta):
    """``k(θ) = (1 − θ sin θ / (2 (1 − cos θ))) / θ²`` of the SE(3) logarithm's
    ``V(ω)⁻¹ = I − ½ ω× + k ω×²`` (CONSTRAINTS.md §2), free of cancellation: with ``x = θ/2``,
    ``k = (1 − x cot x) / θ²``, and below ``θ = 1/4`` its series ``Σ_n |B_2n| θ^(2n−2) / (2n)!``
    (``B`` the Bernoulli numbers; the first omitted term is below 1e-17 of ``k``). The reference
    path calls it as it is (complex steps go through), the kernels inline it."""
    s = theta * theta
    if theta.real < 0.25:
        return 1.0 / 12.0 + s * (1.0 / 720.0 + s * (1.0 / 30240.0 + s * (1.0 / 1209600.0 + s / 47900160.0)))
    x = 0.5 * theta
    return (1.0 - x * np.cos(x) / np.sin(x)) / s


_log_coefficient = register(log_coefficient)


@kernel
def _errors(F, f1, f2, reference, point, out):
    """The six rows ``[v; ω]`` of the position error ``e`` (point: ``p1 − p2``; frame: the SE(3)
    logarithm of ``c2 → c1`` in ``c1``'s axes), expressed in the reference, into ``out[0:6]``."""
    r1, r2, p1, p2 = f1 + Frame.rotation, f2 + Frame.rotation, f1 + Frame.position, f2 + Frame.position
    d0, d1, d2 = F[p1] - F[p2], F[p1 + 1] - F[p2 + 1], F[p1 + 2] - F[p2 + 2]
    if point:
        if reference == LOCAL:
            d0, d1, d2 = _transpose_times(F, r1, d0, d1, d2)
        out[0], out[1], out[2], out[3], out[4], out[5] = d0, d1, d2, 0.0 * d0, 0.0 * d0, 0.0 * d0
        return
    w0, w1, w2 = _rotation_vector(F, f1, f2)
    t0, t1, t2 = _transpose_times(F, r2, d0, d1, d2)
    k = _log_coefficient(np.sqrt(w0 * w0 + w1 * w1 + w2 * w2))
    a0, a1, a2 = _cross(w0, w1, w2, t0, t1, t2)
    b0, b1, b2 = _cross(w0, w1, w2, a0, a1, a2)
    l0, l1, l2 = t0 - 0.5 * a0 + k * b0, t1 - 0.5 * a1 + k * b1, t2 - 0.5 * a2 + k * b2
    o0, o1, o2 = w0 + 0.0 * l0, w1 + 0.0 * l0, w2 + 0.0 * l0
    _expressed(F, r1, p1, reference, l0, l1, l2, o0, o1, o2, out)


@kernel
def _rows(arena, layout, z, g, plan, numbers, work, impulse):
    """Step 2 of the module docstring for every constraint: the frames (``FRAMES``), the maps of
    each side's record twist to the selected rows (``MAPS``: ``G X_t``, ``X_t`` the motion
    transform to the placed frame), ``J v`` (``VELOCITY``) and the right-hand side ``r``
    (``RHS``)."""
    table = plan[plan[Plan.TABLE]:]
    fo0, mo0, to, vo, xo = plan[Plan.FRAMES], plan[Plan.MAPS], plan[Plan.TEMP], plan[Plan.VELOCITY], plan[Plan.RHS]
    zero = 0.0 * work[0]
    for c in range(plan[Plan.CONSTRAINTS]):
        t = table[c * ConstraintRow.WIDTH:]
        row0, dim, reference, point = t[ConstraintRow.ROW], t[ConstraintRow.DIM], t[ConstraintRow.REFERENCE], t[ConstraintRow.POINT] != 0
        go = Numbers.SIZE + c * Gains.SIZE
        f1, f2 = fo0 + 2 * c * Frame.SIZE, fo0 + (2 * c + 1) * Frame.SIZE
        _side(arena, layout, z, g, t[ConstraintRow.RECORD1], t[ConstraintRow.NODE1], t[ConstraintRow.DIM1], numbers, go + Gains.first,
              not impulse, work, f1)
        sides = 2 if t[ConstraintRow.RECORD2] >= 0 else 1  # a frame fixed in the world is at rest
        if sides == 2:
            _side(arena, layout, z, g, t[ConstraintRow.RECORD2], t[ConstraintRow.NODE2], t[ConstraintRow.DIM2], numbers,
                  go + Gains.second, not impulse, work, f2)
        else:
            _fixed(numbers, go + Gains.second, work, f2)
        _maps(work, f1, f2, reference, point, sides, work, to)
        for r in range(dim):  # J v = G1 V1 + G2 V2
            d, s = t[ConstraintRow.D0 + r], zero
            for side in range(sides):
                fv = (f1 if side == 0 else f2) + Frame.velocity
                for k in range(6):
                    s += work[to + side * _MAP + 6 * d + k] * work[fv + k]
            work[vo + row0 + r] = s
        for side in range(sides):  # G X_t, X_t = [R_tᵀ, 0; −R_tᵀ t×, R_tᵀ]: a row [g_ω, g_v] maps to
            P = go + (Gains.first if side == 0 else Gains.second)  # [g_ω R_tᵀ − u × t, u], u = g_v R_tᵀ
            ms = mo0 + (2 * c + side) * _MAP
            for r in range(dim):
                gs = to + side * _MAP + 6 * t[ConstraintRow.D0 + r]
                u0, u1, u2 = _times(numbers, P, work[gs + 3], work[gs + 4], work[gs + 5])
                a0, a1, a2 = _times(numbers, P, work[gs], work[gs + 1], work[gs + 2])
                pt = P + Placement.translation
                e0, e1, e2 = _cross(u0, u1, u2, numbers[pt], numbers[pt + 1], numbers[pt + 2])
                work[ms + 6 * r], work[ms + 6 * r + 1], work[ms + 6 * r + 2] = a0 - e0, a1 - e1, a2 - e2
                work[ms + 6 * r + 3], work[ms + 6 * r + 4], work[ms + 6 * r + 5] = u0, u1, u2
        if impulse:
            e = numbers[Numbers.restitution]
            for r in range(dim):
                work[xo + row0 + r] = -(1.0 + e) * work[vo + row0 + r]
            continue
        _accelerations(work, f1, f2, reference, point, work[to:])
        kp, kd = numbers[go + Gains.kp], numbers[go + Gains.kd]
        for r in range(dim):  # r = a_ref − (J v̇_free + γ), a_ref = −kp e − kd J v
            work[xo + row0 + r] = -kd * work[vo + row0 + r] - work[to + t[ConstraintRow.D0 + r]]
        if kp.real != 0:
            _errors(work, f1, f2, reference, point, work[to:])
            for r in range(dim):
                work[xo + row0 + r] -= kp * work[to + t[ConstraintRow.D0 + r]]


@kernel
def _unit_forces(arena, layout, plan, work, Z):
    """``Z(·, k) −= (G X_t Γ_o)`` at each constrained node ``k``: the unit constraint forces, one
    row of ``Z`` (``m`` × the node size) per constraint row."""
    table = plan[plan[Plan.TABLE]:]
    for c in range(plan[Plan.CONSTRAINTS]):
        t = table[c * ConstraintRow.WIDTH:]
        row0, dim = t[ConstraintRow.ROW], t[ConstraintRow.DIM]
        for side in range(2):
            rec = t[ConstraintRow.RECORD1 + 3 * side]
            if rec < 0:
                continue
            md, no = t[ConstraintRow.DIM1 + 3 * side], layout[t[ConstraintRow.NODE1 + 3 * side], Flat.NODE]
            ms, go = plan[Plan.MAPS] + (2 * c + side) * _MAP, rec + Record.SIZE
            for r in range(dim):
                for i in range(md):
                    s = 0.0 * work[0]
                    for k in range(6):
                        s += work[ms + 6 * r + k] * arena[go + k * md + i]
                    Z[row0 + r, no + i] -= s


@register
def _rigid_columns(data, layout, roff, ric, j, p, Z, cols, count, E, Y, work, om, bound, m):
    """:func:`_compliance` at a rigid body on a 1-dof hinge (:func:`~sko.engine.rigid_blocks.rigid_step`):
    per column ``z`` (in registers) ``ε = −H z``, ``Y = D⁻¹ ε``, the bound, ``z(℘) += φ (z + G ε)``;
    then ``Ω += ε* Y`` on the lower triangle."""
    ho, no, go, d = layout[j, Flat.H], layout[j, Flat.NODE], roff[j, Riccati.G], ric[roff[j, Riccati.D_INVERSE]]
    factor = 0.0
    for i in range(6):
        factor += data[ho + i].real ** 2
    factor *= abs(d)
    for q in range(count):
        col = cols[q]
        z = Z[col]
        z0, z1, z2, z3, z4, z5 = z[no], z[no + 1], z[no + 2], z[no + 3], z[no + 4], z[no + 5]
        e = -rb.dot6(data, ho, 1, z0, z1, z2, z3, z4, z5)
        E[q], Y[q] = e, d * e
        work[bound + col] += (abs(z0) ** 2 + abs(z1) ** 2 + abs(z2) ** 2 + abs(z3) ** 2 + abs(z4) ** 2
                              + abs(z5) ** 2) * factor
        if p >= 0:
            y = rb.times(data, layout[j, Flat.W], (z0 + ric[go] * e, z1 + ric[go + 1] * e, z2 + ric[go + 2] * e,
                                                   z3 + ric[go + 3] * e, z4 + ric[go + 4] * e, z5 + ric[go + 5] * e))
            npo = layout[p, Flat.NODE]
            for i in range(6):
                z[npo + i] += y[i]
    for q1 in range(count):
        r1, y1 = om + m * cols[q1], Y[q1]
        for q2 in range(q1 + 1):
            work[r1 + cols[q2]] += y1 * E[q2]


@register
def _six_columns(data, ho, ric, dio, Z, no, cols, count, E, Y):
    """``ε = −H z`` and ``Y = D⁻¹ ε`` of :func:`_compliance` at a node of six dimensions and six
    degrees of freedom (a floating base), per column in registers."""
    for q in range(count):
        z = Z[cols[q]]
        z0, z1, z2, z3, z4, z5 = z[no], z[no + 1], z[no + 2], z[no + 3], z[no + 4], z[no + 5]
        e0, e1 = -rb.dot6(data, ho, 1, z0, z1, z2, z3, z4, z5), -rb.dot6(data, ho + 6, 1, z0, z1, z2, z3, z4, z5)
        e2, e3 = -rb.dot6(data, ho + 12, 1, z0, z1, z2, z3, z4, z5), -rb.dot6(data, ho + 18, 1, z0, z1, z2, z3, z4, z5)
        e4, e5 = -rb.dot6(data, ho + 24, 1, z0, z1, z2, z3, z4, z5), -rb.dot6(data, ho + 30, 1, z0, z1, z2, z3, z4, z5)
        E[q], E[count + q], E[2 * count + q], E[3 * count + q], E[4 * count + q], E[5 * count + q] = e0, e1, e2, e3, e4, e5
        for u in range(6):
            Y[u * count + q] = rb.dot6(ric, dio + 6 * u, 1, e0, e1, e2, e3, e4, e5)


@kernel
def _compliance(data, layout, roff, ric, plan, work, ns):
    """Step 3 of the module docstring: the lower triangle of ``Ω`` (``OMEGA``) by the gather
    ``ε = −H z``, ``z⁺ = z + G ε``, ``z(℘) += φ z⁺`` of the unit constraint forces over the
    active nodes (each on its own rows of ``Z``, one per constraint row), ``Ω += ε* D⁻¹ ε``
    (Eq. 7); ``D⁻¹ ε`` of each active node and column (``COLUMNS``: ``ν`` of the unit forces,
    which step 5 combines by ``λ``); and the rounding bound of ``Ω``'s diagonal (``BOUND``,
    :data:`IDLE_ROW`), the same sum on ``‖H_u‖ ‖z‖`` and ``|D⁻¹|``: the size ``ε`` would have if
    the joints did not cancel ``z``."""
    m = plan[Plan.ROWS]
    nodes, pool = plan[plan[Plan.NODES]:], plan[plan[Plan.POOL]:]
    Z = matrix_view(work, plan[Plan.UNIT], m, ns)
    E, norms, om, bound = work[plan[Plan.EPS]:], work[plan[Plan.NORMS]:], plan[Plan.OMEGA], plan[Plan.BOUND]
    rb.zero(work, om, om + m * m)
    rb.zero(work, bound, bound + m)
    for a in range(plan[Plan.ACTIVE]):
        at = a * Active.WIDTH
        j, cols = nodes[at + Active.NODE], pool[nodes[at + Active.FIRST]:]
        no, mj = layout[j, Flat.NODE], layout[j, Flat.NODE_DIM]
        for q in range(nodes[at + Active.COUNT]):
            rb.zero(Z[cols[q]], no, no + mj)
    _unit_forces(data, layout, plan, work, Z)
    yo = plan[Plan.COLUMNS]
    for a in range(plan[Plan.ACTIVE]):
        at = a * Active.WIDTH
        j, cols, count = nodes[at + Active.NODE], pool[nodes[at + Active.FIRST]:], nodes[at + Active.COUNT]
        p, mj, h = layout[j, Flat.PARENT], layout[j, Flat.NODE_DIM], layout[j, Flat.HINGE_DIM]
        ho, no, go, dio = layout[j, Flat.H], layout[j, Flat.NODE], roff[j, Riccati.G], roff[j, Riccati.D_INVERSE]
        Y = work[yo:]
        yo += h * count
        if rb.rigid_step(layout, j, p):
            _rigid_columns(data, layout, roff, ric, j, p, Z, cols, count, E, Y, work, om, bound, m)
            continue
        if h == 6 and mj == 6:
            _six_columns(data, ho, ric, dio, Z, no, cols, count, E, Y)
        else:
            for u in range(h):  # ε = −H z
                for q in range(count):
                    z, s = Z[cols[q]], 0.0 * work[0]
                    for i in range(mj):
                        s -= data[ho + u * mj + i] * z[no + i]
                    E[u * count + q] = s
            for u in range(h):  # Y = D⁻¹ ε
                for q in range(count):
                    s = 0.0 * work[0]
                    for v in range(h):
                        s += ric[dio + u * h + v] * E[v * count + q]
                    Y[u * count + q] = s
        for q1 in range(count):  # Ω += ε* Y, lower triangle (a node's columns ascend)
            r1 = om + m * cols[q1]
            for q2 in range(q1 + 1):
                s = 0.0 * work[0]
                for u in range(h):
                    s += Y[u * count + q1] * E[u * count + q2]
                work[r1 + cols[q2]] += s
        for u in range(h):  # Ω̄_ii += ‖z_i‖² Σ_uv |D⁻¹_uv| ‖H_u‖ ‖H_v‖
            s = 0.0
            for i in range(mj):
                s += data[ho + u * mj + i].real ** 2
            norms[u] = np.sqrt(s)
        factor = 0.0
        for u in range(h):
            for v in range(h):
                factor += abs(ric[dio + u * h + v]) * norms[u].real * norms[v].real
        for q in range(count):
            z, zz = Z[cols[q]], 0.0
            for i in range(mj):
                zz += abs(z[no + i]) ** 2
            work[bound + cols[q]] += zz * factor
        if p < 0:
            continue
        for i in range(mj):  # z⁺ = z + G ε (in place)
            for q in range(count):
                s = 0.0 * work[0]
                for u in range(h):
                    s += ric[go + i * h + u] * E[u * count + q]
                Z[cols[q], no + i] += s
        mp, wo, npo = layout[p, Flat.NODE_DIM], layout[j, Flat.W], layout[p, Flat.NODE]
        for q in range(count):  # z(℘) += φ z⁺
            z = Z[cols[q]]
            for i in range(mp):
                s = 0.0 * work[0]
                for k in range(mj):
                    s += data[wo + i * mj + k] * z[no + k]
                z[npo + i] += s


@kernel
def _add_constraint_forces(layout, plan, work, lam, nu):
    """``ν += Σ_c λ_c ν_c`` at the active nodes (``ν_c``: ``COLUMNS`` of :func:`_compliance`):
    the gather of Algorithm 6.1 for the node forces ``−Γ_oᵀ (G X_t)ᵀ λ``, by linearity."""
    nodes, pool = plan[plan[Plan.NODES]:], plan[plan[Plan.POOL]:]
    yo = plan[Plan.COLUMNS]
    for a in range(plan[Plan.ACTIVE]):
        at = a * Active.WIDTH
        j, cols, count = nodes[at + Active.NODE], pool[nodes[at + Active.FIRST]:], nodes[at + Active.COUNT]
        h, do = layout[j, Flat.HINGE_DIM], layout[j, Flat.DOF]
        for u in range(h):
            s = 0.0 * work[0]
            for q in range(count):
                s += work[yo + u * count + q] * lam[cols[q]]
            nu[do + u, 0] += s
        yo += h * count


@kernel
def _solve(plan, numbers, work, lam):
    """Step 4 of the module docstring: ``Ω = L D Lᵀ`` in place on the lower triangle (no
    conjugation: complex steps go through), ``λ = Ω⁻¹ r`` into ``lam``; False (nothing solved)
    when a row is idle (:data:`IDLE_ROW`), a pivot is not positive or ``tr Ω · tr Ω⁻¹`` (real
    parts) is not below the bound."""
    m, A, y = plan[Plan.ROWS], work[plan[Plan.OMEGA]:], work[plan[Plan.SOLVE]:]
    x = work[plan[Plan.RHS]:]
    bound, trace = work[plan[Plan.BOUND]:], 0.0
    for i in range(m):
        if not (A[i * m + i].real > IDLE_ROW * bound[i].real):  # a row no joint moves
            return False
        trace += A[i * m + i].real
    for j in range(m):
        d = A[j * m + j]
        for k in range(j):
            d -= A[j * m + k] * A[j * m + k] * A[k * m + k]
        if not (d.real > 0) or not (abs(d) < np.inf):
            return False
        A[j * m + j] = d
        for i in range(j + 1, m):
            s = A[i * m + j]
            for k in range(j):
                s -= A[i * m + k] * A[j * m + k] * A[k * m + k]
            A[i * m + j] = s / d
    inverse = 0.0  # tr Ω⁻¹ = Σ_i ‖L⁻¹ e_i‖²_{D⁻¹}
    for i in range(m):
        for k in range(i, m):
            s = 1.0 if k == i else 0.0
            for l in range(i, k):
                s -= A[k * m + l].real * y[l].real
            y[k] = s
            inverse += s * s / A[k * m + k].real
    if not (trace * inverse < numbers[Numbers.condition].real):
        return False
    for k in range(m):  # L y = r, y ← D⁻¹ y, Lᵀ λ = y
        s = x[k]
        for l in range(k):
            s -= A[k * m + l] * y[l]
        y[k] = s
    for k in range(m):
        y[k] = y[k] / A[k * m + k]
    for k in range(m - 1, -1, -1):
        s = y[k]
        for l in range(k + 1, m):
            s -= A[l * m + k] * lam[l]
        lam[k] = s
    return True


@kernel
def _scatter(layout, data, roff, r, z, nu, with_ab, plan, active):
    """The scatter of Algorithm 6.1 (:func:`~sko.engine.aba.articulated_scatter_step`) over every
    node, or with ``active`` over the plan's active nodes only (parents first: the
    accelerations ``α`` of the constrained nodes)."""
    nodes, count = plan[plan[Plan.NODES]:], plan[Plan.ACTIVE] if active else layout.shape[0]
    for a in range(count):
        j = nodes[(count - 1 - a) * Active.WIDTH + Active.NODE] if active else a
        aba.articulated_scatter_step(layout, data, roff, r, z, nu, with_ab, j)


@kernel
def constrained(w, x, out):
    """``(v̇, λ)`` under the plan's constraints at the state in ``w``'s arena, ``x = τ``; for a
    request without a third input, ``(v⁺, Λ)`` of an impact at ``(q, v⁻)`` (``x`` not read)
    (module docstring): −1, or the status of a rejected state."""
    w, x, out = borrowed(w), borrowed(x), borrowed(out)
    words, rows, layout, roff, reals, arena, ws, at = request_views(w)
    impulse = words[Header.X] == 0
    n, nv, ns = words[Header.N], words[Header.NV], words[Header.NS]
    plan = words[(words[Header.WORKSPACE] + at[ConstrainedWork.PLAN]) * (w.itemsize // 8):]
    numbers, work = buffer(ws, at, ConstrainedWork.NUMBERS), buffer(ws, at, ConstrainedWork.WORK)
    status = fill_arena(words, rows, reals, arena, Terms.POSE)
    if status >= 0:
        return status
    ric, scratch = buffer(ws, at, ConstrainedWork.RICCATI), buffer(ws, at, ConstrainedWork.SCRATCH)
    bad, _ = aba.riccati(layout, arena, roff, ric, scratch, False)
    if bad >= 0:
        return n + layout[bad, Flat.BODY]
    z, nu = matrix_view(ws, at[ConstrainedWork.Z], ns, 1), matrix_view(out, 0, nv, 1)
    free = plan[Plan.NU]
    if not impulse:  # ν of the free accelerations, then α at the active nodes
        rhs = matrix_view(ws, at[ConstrainedWork.RHS], nv, 1)
        for i in range(nv):
            rhs[i, 0] = x[i]
        if words[Header.HINGES] != 0:
            bad = add_hinge_forces(rows, reals, arena, words[Header.V], buffer(ws, at, ConstrainedWork.RHS), -1.0)
            if bad >= 0:
                return 2 * n + bad
        aba.articulated_gather(layout, arena, roff, ric, rhs, True, z, nu, scratch)
        for i in range(nv):
            work[free + i] = out[i]
        _scatter(layout, arena, roff, ric, z, nu, True, plan, True)
    _rows(arena, layout, z, reals[:3], plan, numbers, work, impulse)
    _compliance(arena, layout, roff, ric, plan, work, ns)
    m = plan[Plan.ROWS]
    lam = out[nv: nv + m]
    if not _solve(plan, numbers, work, lam):
        return RANK_DEFICIENT
    for i in range(nv):  # ν of the free accelerations (none for an impact) and of the constraint forces
        out[i] = 0.0 if impulse else work[free + i]
    _add_constraint_forces(layout, plan, work, lam, nu)
    _scatter(layout, arena, roff, ric, z, nu, not impulse, plan, False)  # v̇, or the velocity change
    if impulse:
        v0 = words[Header.V]
        for i in range(nv):
            out[i] += arena[v0 + i]
    return -1


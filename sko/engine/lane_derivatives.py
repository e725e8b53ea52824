"""The derivatives of inverse and forward dynamics of a batch of states of a rigid tree with the
states innermost (DERIVATIVES.md §4–§5, Eq. 3, 10–13): the recursion of
:mod:`sko.engine.derivatives`, run on :data:`~sko.engine.lanes.LANES` states at once in the lane
buffers of :mod:`sko.engine.lanes`, for the float64 batches of the requests
``inverse_dynamics_derivatives`` and ``forward_dynamics_derivatives`` of a system both take
(:data:`RUNS`, beside :data:`sko.engine.lanes.REQUESTS`; :func:`sko.engine.lanes.evaluate` runs both).

The lanes' fill gives each node its rigid weight ``φ(℘(k), k) = [[Eᵀ, Bᵀ], [0, Eᵀ]]`` (``B =
−E r×``), ``H = S*``, the body-frame inertia ``M`` and, at a base, its own-frame ``v`` and ``a``,
in the lanes. The recursion of Eq. 10–13 is written with cross products, inertias and pairings
of motions with forces only, so it holds in any one frame: where the state-by-state kernel takes
the world frame, the lanes take each tree's base frame, so a base's pose is the identity and
every other body's comes from its parent's and its ``φ`` (``R(k) = R(℘) Eᵀ``, ``p(k) = p(℘) +
R(℘) r``), whatever the base's joint. At a base, ``𝒱⁺ = 0`` and ``α⁺ = −a_g`` in its own frame:
``a − v × v_J`` of the fill. Per node, in the lanes: the columns ``s_ι``, ``v``, ``α``, the
seeds ``σ``, ``ϱ`` (Eq. 10), ``ℐ``, ``f = ℐ α + v ×* ℐ v`` and ``𝔅 = ½[Q + Q* + crfb(ℐ v)]``
(:func:`_scatter`); then ``f``, ``ℛ``, ``𝔅`` summed into the parents (:func:`_gather`); then the
ancestor walks of Eq. 11–12 (:func:`_walks`) give ``∂T/∂θ``, ``∂T/∂θ̇`` and ``ℳ``. Forward
dynamics (Eq. 3, :func:`forward_derivatives_block`) solves with the sparse ``Lᵀ D L`` of ``ℳ``
(SPARSE.md) in the lanes, as the one-state kernel does. A state's result equals its one-state
call's to rounding (the base frame's products and sums are not the world frame's; forward
dynamics' solves amplify that rounding by ``ℳ``'s condition), and so does its status: a joint's
rejection, a pivot of ``ℳ`` that is not positive (``N + k``, the body owning that column), a
result that is not finite (−3).
"""

from __future__ import annotations

import numpy as np

from sko.engine import rigid_blocks as rb
from sko.engine.bodies.rigid import force_cross, motion_cross
from sko.engine.borrow import borrowed
from sko.engine.derivatives import Inertias, Node
from sko.engine.jit import kernel, register
from sko.engine.layout import Flat
from sko.engine import mass_matrix as MM
from sko.engine.lanes import (LANES, _fill, _six, _three, block_rows, borrowed_buffers, positive, put_lanes,
                              put_turned, row, set_row, settle, splat)
from sko.engine.request_views import Header, request_views

__all__ = ["POSE", "RUNS", "inverse_derivatives_block", "forward_derivatives_block"]

POSE = 12  #: lane rows per node of the pose buffer: ``R`` (row-major, body axes in the base frame), ``p``
_CHUNK = 8  #: right-hand sides a solve holds in registers at once (:func:`_ltdl_solve`)
_COLUMNS = 4  #: the seeds' blocks of ``6 nv`` rows: ``s``, ``σ_θ``, ``ϱ_θ``, ``ϱ_θ̇`` (Eq. 10; ``σ_θ̇ = s``)


@register
def _put(X, o, x):
    """Rows ``o … o + 5`` of ``X`` ← the six lane numbers ``x``."""
    for i in range(6):
        set_row(X, o + i, x[i])


@register
def _plus(x, y):
    return x[0] + y[0], x[1] + y[1], x[2] + y[2], x[3] + y[3], x[4] + y[4], x[5] + y[5]


@register
def _scaled(x, a):
    return x[0] * a, x[1] * a, x[2] * a, x[3] * a, x[4] * a, x[5] * a


@kernel
def _poses(layout, data, pose):
    """Each node's pose in its tree's base frame, parents first: a base's the identity, else
    ``R = R(℘) Eᵀ`` (``Eᵀ`` the upper-left block of ``φ``) and ``p = p(℘) + R(℘) r`` with ``r×
    = −Eᵀ B`` (``Bᵀ`` the upper-right block of ``φ``): :func:`sko.engine.mass_matrix.child_pose`."""
    layout, data, pose = borrowed(layout), borrowed(data), borrowed(pose)
    one, zero = splat(1.0), splat(0.0)
    for j in range(layout.shape[0]):
        p, wo, o = layout[j, Flat.PARENT], layout[j, Flat.W], POSE * j
        if p < 0:
            R, x = (one, zero, zero, zero, one, zero, zero, zero, one), (zero, zero, zero)
        else:
            po = POSE * p
            R, x = MM.child_pose(_three(pose, po) + _six(pose, po + 3), _three(pose, po + 9),
                                 _three(data, wo) + _three(data, wo + 6) + _three(data, wo + 12),
                                 _three(data, wo + 3) + _three(data, wo + 9) + _three(data, wo + 15))
        for i in range(9):
            set_row(pose, o + i, R[i])
        for i in range(3):
            set_row(pose, o + 9 + i, x[i])


@register
def _world_inertia(data, mo, pose, o, inertias, io):
    """``ℐ`` (6 × 6 at row ``io`` of ``inertias``): the body inertia at row ``mo`` of ``data``
    (``[[Ī, h×], [h×*, m]]`` about the body origin) in the base frame, for the pose at row ``o``
    (as :func:`sko.engine.derivatives._world_inertia`): ``Ī ← R Ī R*``, ``h ← R h``, then the
    parallel-axis shift to the origin."""
    m = row(data, mo + 35)
    hb0, hb1, hb2 = row(data, mo + 16), row(data, mo + 5), row(data, mo + 9)
    R = (row(pose, o), row(pose, o + 1), row(pose, o + 2), row(pose, o + 3), row(pose, o + 4), row(pose, o + 5),
         row(pose, o + 6), row(pose, o + 7), row(pose, o + 8))
    p = (row(pose, o + 9), row(pose, o + 10), row(pose, o + 11))
    h = (R[0] * hb0 + R[1] * hb1 + R[2] * hb2, R[3] * hb0 + R[4] * hb1 + R[5] * hb2,
         R[6] * hb0 + R[7] * hb1 + R[8] * hb2)
    hp, pp = h[0] * p[0] + h[1] * p[1] + h[2] * p[2], p[0] * p[0] + p[1] * p[1] + p[2] * p[2]
    for r in range(3):
        ri = (R[3 * r] * row(data, mo) + R[3 * r + 1] * row(data, mo + 6) + R[3 * r + 2] * row(data, mo + 12),
              R[3 * r] * row(data, mo + 1) + R[3 * r + 1] * row(data, mo + 7) + R[3 * r + 2] * row(data, mo + 13),
              R[3 * r] * row(data, mo + 2) + R[3 * r + 1] * row(data, mo + 8) + R[3 * r + 2] * row(data, mo + 14))
        for c in range(3):  # (R Ī R*)(r, c) − p h* − h p* − m p p* (+ 2 h·p + m p·p on the diagonal)
            s = ri[0] * R[3 * c] + ri[1] * R[3 * c + 1] + ri[2] * R[3 * c + 2]
            s = s - (p[r] * h[c] + h[r] * p[c] + m * p[r] * p[c])
            if r == c:
                s = s + (2.0 * hp + m * pp)
            set_row(inertias, io + 6 * r + c, s)
    zero = 0.0 * m
    g0, g1, g2 = h[0] + m * p[0], h[1] + m * p[1], h[2] + m * p[2]
    for r in range(3):
        for c in range(3):
            set_row(inertias, io + 6 * (r + 3) + c + 3, m if r == c else zero)
    cross = ((zero, zero - g2, g1), (g2, zero, zero - g0), (zero - g1, g0, zero))  # g× and its transpose
    for r in range(3):
        for c in range(3):
            set_row(inertias, io + 6 * r + c + 3, cross[r][c])
            set_row(inertias, io + 6 * (c + 3) + r, cross[r][c])


@kernel
def _scatter(layout, data, vel, pose, rates, nodes, inertias, cols, nv):
    """Bases to tips, per node, in the base frames: the columns ``s``, ``v``, ``α``, the seeds
    (Eq. 10), ``ℐ``, ``ℐ v``, ``f = ℐ α + v ×* ℐ v`` and ``𝔅 = ½[Q + Q* + crfb(ℐ v)]`` with ``Q =
    crf(v) ℐ`` (as :func:`sko.engine.derivatives.scatter`); ``rates``: ``θ̇`` then ``θ̈`` (``nv``
    rows each)."""
    layout, data, vel, pose, rates = borrowed(layout), borrowed(data), borrowed(vel), borrowed(pose), borrowed(rates)
    nodes, inertias, cols = borrowed(nodes), borrowed(inertias), borrowed(cols)
    zero = splat(0.0)
    zeros = (zero, zero, zero, zero, zero, zero)
    c6 = 6 * nv
    for j in range(layout.shape[0]):
        p, h, do, ho = layout[j, Flat.PARENT], layout[j, Flat.HINGE_DIM], layout[j, Flat.DOF], layout[j, Flat.H]
        o, no, io = POSE * j, Node.SIZE * j, Inertias.SIZE * j
        R = (row(pose, o), row(pose, o + 1), row(pose, o + 2), row(pose, o + 3), row(pose, o + 4), row(pose, o + 5),
             row(pose, o + 6), row(pose, o + 7), row(pose, o + 8))
        x0, x1, x2 = row(pose, o + 9), row(pose, o + 10), row(pose, o + 11)
        vJ, aJ = zeros, zeros
        for c in range(h):  # s = [R s_ω; R s_v + p × R s_ω]
            S = _six(data, ho + 6 * c)
            w0 = R[0] * S[0] + R[1] * S[1] + R[2] * S[2]
            w1 = R[3] * S[0] + R[4] * S[1] + R[5] * S[2]
            w2 = R[6] * S[0] + R[7] * S[1] + R[8] * S[2]
            s = (w0, w1, w2, R[0] * S[3] + R[1] * S[4] + R[2] * S[5] + (x1 * w2 - x2 * w1),
                 R[3] * S[3] + R[4] * S[4] + R[5] * S[5] + (x2 * w0 - x0 * w2),
                 R[6] * S[3] + R[7] * S[4] + R[8] * S[5] + (x0 * w1 - x1 * w0))
            _put(cols, 6 * (do + c), s)
            vJ = _plus(vJ, _scaled(s, row(rates, do + c)))
            aJ = _plus(aJ, _scaled(s, row(rates, nv + do + c)))
        if p >= 0:  # 𝒱⁺ = v(℘), α⁺ = α(℘)
            V = _six(nodes, Node.SIZE * p + Node.v)
            A = _six(nodes, Node.SIZE * p + Node.alpha)
        else:  # 𝒱⁺ = 0, α⁺ = −a_g: the fill's a − v × v_J in the base's own frame
            V = zeros
            A = _plus(_six(data, layout[j, Flat.A]), _scaled(motion_cross(_six(vel, 6 * j), vJ), -1.0))
        v = _plus(V, vJ)
        alpha = _plus(_plus(A, aJ), motion_cross(v, vJ))
        _put(nodes, no + Node.v, v)
        _put(nodes, no + Node.alpha, alpha)
        for c in range(h):  # the seeds (Eq. 10)
            oc = 6 * (do + c)
            s = _six(cols, oc)
            sq = motion_cross(V, s)  # σ_θ = 𝒱⁺ × s
            _put(cols, c6 + oc, sq)
            _put(cols, 2 * c6 + oc, _plus(motion_cross(A, s), motion_cross(V, sq)))  # ϱ_θ = α⁺ × s + 𝒱⁺ × σ_θ
            _put(cols, 3 * c6 + oc, motion_cross(_plus(v, V), s))  # ϱ_θ̇ = (v + 𝒱⁺) × s (σ_θ̇ = s)
        _world_inertia(data, layout[j, Flat.M], pose, o, inertias, io)
        Iv = (rb.dot(_six(inertias, io), v), rb.dot(_six(inertias, io + 6), v), rb.dot(_six(inertias, io + 12), v),
              rb.dot(_six(inertias, io + 18), v), rb.dot(_six(inertias, io + 24), v), rb.dot(_six(inertias, io + 30), v))
        Ia = (rb.dot(_six(inertias, io), alpha), rb.dot(_six(inertias, io + 6), alpha),
              rb.dot(_six(inertias, io + 12), alpha), rb.dot(_six(inertias, io + 18), alpha),
              rb.dot(_six(inertias, io + 24), alpha), rb.dot(_six(inertias, io + 30), alpha))
        _put(nodes, no + Node.Iv, Iv)
        _put(nodes, no + Node.f, _plus(Ia, force_cross(v, Iv)))  # f = ℐ α + v ×* ℐ v
        Bo = io + Inertias.B
        n0, n1, n2, f0, f1, f2 = _scaled(Iv, 0.5)
        cr = ((zero, n2, zero - n1, zero, f2, zero - f1), (zero - n2, zero, n0, zero - f2, zero, f0),
              (n1, zero - n0, zero, f1, zero - f0, zero), (zero, f2, zero - f1, zero, zero, zero),
              (zero - f2, zero, f0, zero, zero, zero), (f1, zero - f0, zero, zero, zero, zero))
        for i in range(6):  # ½ crfb(ℐ v) = ½ [[−n×, −f×], [−f×, 0]]
            _put(inertias, Bo + 6 * i, cr[i])
        for c in range(6):  # + ½ (Q + Q*), column c of Q = v ×* ℐ e_c (ℐ symmetric: its row c)
            q = _scaled(force_cross(v, _six(inertias, io + 6 * c)), 0.5)
            for i in range(6):
                set_row(inertias, Bo + 6 * i + c, row(inertias, Bo + 6 * i + c) + q[i])
                set_row(inertias, Bo + 6 * c + i, row(inertias, Bo + 6 * c + i) + q[i])


@kernel
def _gather(layout, nodes, inertias):
    """Tips to bases: ``f``, ``ℛ`` and ``𝔅`` of every node summed into its parent's (Eq. 10, one
    frame per tree: plain sums)."""
    layout, nodes, inertias = borrowed(layout), borrowed(nodes), borrowed(inertias)
    for j in range(layout.shape[0] - 1, -1, -1):
        p = layout[j, Flat.PARENT]
        if p < 0:
            continue
        for i in range(6):
            o = Node.f + i
            set_row(nodes, Node.SIZE * p + o, row(nodes, Node.SIZE * p + o) + row(nodes, Node.SIZE * j + o))
        for i in range(Inertias.SIZE):
            set_row(inertias, Inertias.SIZE * p + i, row(inertias, Inertias.SIZE * p + i)
                    + row(inertias, Inertias.SIZE * j + i))


@register
def _rows_times(X, o, x):
    """``A x`` for the row-major 6 × 6 ``A`` at row ``o`` of the lane buffer ``X``."""
    return (rb.dot(_six(X, o), x), rb.dot(_six(X, o + 6), x), rb.dot(_six(X, o + 12), x),
            rb.dot(_six(X, o + 18), x), rb.dot(_six(X, o + 24), x), rb.dot(_six(X, o + 30), x))


@register
def _columns_times(X, o, x):
    """``A* x`` for the row-major 6 × 6 ``A`` at row ``o`` of the lane buffer ``X``."""
    return (_column_dot(X, o, x), _column_dot(X, o + 1, x), _column_dot(X, o + 2, x), _column_dot(X, o + 3, x),
            _column_dot(X, o + 4, x), _column_dot(X, o + 5, x))


@register
def _column_dot(X, o, x):
    """The column of a row-major 6 × 6 starting at row ``o`` of ``X``, dotted with ``x``."""
    return (row(X, o) * x[0] + row(X, o + 6) * x[1] + row(X, o + 12) * x[2] + row(X, o + 18) * x[3]
            + row(X, o + 24) * x[4] + row(X, o + 30) * x[5])


@kernel
def _walks(layout, nodes, inertias, cols, result, nv, mass, partials):
    """``∂T/∂θ``, ``∂T/∂θ̇`` (with ``partials``) and ``ℳ`` (with ``mass``), ``nv × nv`` rows each,
    in this order, of ``result``, from the composites and seeds (Eq. 11–12, as
    :func:`sko.engine.derivatives.walks`): each hinge column of a node against its own node's and
    its ancestors' columns and the other way round, its ``Y``, ``Z``, ``g_θ``, ``g_θ̇`` held
    through its walk. Each entry of a node's column and an ancestor's (or its own) gets one
    product, written; the other entries, zero by the tree's sparsity, are never written (zeros
    from :func:`_lane_buffers`). At a base ``σ_θ = 0`` (``𝒱⁺ = 0``) and ``σ_θ̇ = s``: their
    products are not taken."""
    layout, nodes, inertias, cols, result = borrowed(layout), borrowed(nodes), borrowed(inertias), borrowed(cols), \
        borrowed(result)
    c6, n2 = 6 * nv, nv * nv
    zero = splat(0.0)
    zeros = (zero, zero, zero, zero, zero, zero)
    for i in range(layout.shape[0]):
        h, di, base = layout[i, Flat.HINGE_DIM], layout[i, Flat.DOF], layout[i, Flat.PARENT] < 0
        Ro, Bo, fo = Inertias.SIZE * i + Inertias.R, Inertias.SIZE * i + Inertias.B, Node.SIZE * i + Node.f
        for c in range(h):  # Y = ℛ s, Z = 2 𝔅* s, g_θ = ℛ ϱ_θ + 2 𝔅 σ_θ + s ×* f, g_θ̇ = ℛ ϱ_θ̇ + 2 𝔅 s
            o = 6 * (di + c)
            s = _six(cols, o)
            Y = _rows_times(inertias, Ro, s)
            Z, gq, gv = zeros, zeros, zeros
            if partials:
                Z = _scaled(_columns_times(inertias, Bo, s), 2.0)
                gq = _plus(_rows_times(inertias, Ro, _six(cols, 2 * c6 + o)), force_cross(s, _six(nodes, fo)))
                if not base:
                    gq = _plus(gq, _scaled(_rows_times(inertias, Bo, _six(cols, c6 + o)), 2.0))
                gv = _plus(_rows_times(inertias, Ro, _six(cols, 3 * c6 + o)),
                           _scaled(_rows_times(inertias, Bo, s), 2.0))
            j = i
            while j >= 0:
                hj, dj, above = layout[j, Flat.HINGE_DIM], layout[j, Flat.DOF], layout[j, Flat.PARENT] >= 0
                for cj in range(hj):
                    oj = 6 * (dj + cj)
                    sj = _six(cols, oj)
                    if mass:
                        m = rb.dot(sj, Y)
                        set_row(result, 2 * n2 + (di + c) * nv + dj + cj, m)
                        set_row(result, 2 * n2 + (dj + cj) * nv + di + c, m)
                    if not partials:
                        continue
                    x_q = rb.dot(Y, _six(cols, 2 * c6 + oj))
                    if above:
                        x_q = x_q + rb.dot(Z, _six(cols, c6 + oj))
                    x_v = rb.dot(Y, _six(cols, 3 * c6 + oj)) + rb.dot(Z, sj)
                    e = (di + c) * nv + dj + cj
                    set_row(result, e, x_q)
                    set_row(result, n2 + e, x_v)
                    if j != i:  # rows of the strict ancestors, columns of i
                        e = (dj + cj) * nv + di + c
                        set_row(result, e, rb.dot(sj, gq))
                        set_row(result, n2 + e, rb.dot(sj, gv))
                j = layout[j, Flat.PARENT]


@kernel
def _sweeps(layout, data, vel, lane, nv, partials):
    """The result of :func:`_walks` into the lane buffer ``result``, at the poses,
    ``θ̇`` and ``θ̈`` in ``lane``: :func:`_scatter`, :func:`_gather`, :func:`_walks`."""
    layout, data, vel = borrowed(layout), borrowed(data), borrowed(vel)
    pose, rates, nodes, inertias, cols, result, factor, rhs, flag, bodies, delta = lane
    _scatter(layout, data, vel, pose, rates, nodes, inertias, cols, nv)
    _gather(layout, nodes, inertias)
    _walks(layout, nodes, inertias, cols, result, nv, True, partials)


@register
def _state_rows(M, rates, o, nv, first, count):
    """Rows ``o … o + nv − 1`` of the lane buffer ``rates`` ← each lane's state's row of ``M``
    (the tail's lanes: the block's last state's)."""
    for l in range(LANES):
        s = first + min(l, count - 1)
        for i in range(nv):
            rates[(o + i) * LANES + l] = M[s, i]


@register
def _lanes_out(result, out, status, first, count, size):
    """Each lane's ``size`` entries of ``result`` into its state's row of ``out``, the four rows
    in one sweep of ``result``, four entries at a time (:func:`~sko.engine.lanes.put_turned`),
    every entry written (:func:`~sko.engine.lanes.settle`: −3 where one is not finite, ``0 · x``
    summed in four vector sums as the entries are written)."""
    rows = block_rows(out, first, count)
    zero = splat(0.0)
    s0, s1, s2, s3 = zero, zero, zero, zero
    quarter = size // 4
    for k in range(quarter):
        o = 4 * k
        y0, y1, y2, y3 = row(result, o), row(result, o + 1), row(result, o + 2), row(result, o + 3)
        s0 = s0 + 0.0 * y0
        s1 = s1 + 0.0 * y1
        s2 = s2 + 0.0 * y2
        s3 = s3 + 0.0 * y3
        put_turned(rows, o, y0, y1, y2, y3)
    for i in range(4 * quarter, size):
        y = row(result, i)
        s0 = s0 + 0.0 * y
        put_lanes(rows, i, y)
    settle(out, status, (s0 + s1) + (s2 + s3), first, count, size)


@kernel
def inverse_derivatives_block(local, work, lane, tree, Q, QD, X, out, status, first, count):
    """``(∂T/∂θ, ∂T/∂θ̇, ℳ)`` at ``θ̈ = X`` of the states ``first … first + count − 1`` (``count ≤
    LANES``) into the same rows of ``out`` (``3 nv²`` each) and ``status``, on the request vector
    ``local``, the lanes' buffers ``work`` (:func:`sko.engine.lanes.buffers`, borrowed) and this
    module's ``lane`` (:func:`_lane_buffers`): the lanes' fill, then :func:`_poses` and
    :func:`_sweeps` once, each lane's result and status out (−3 where it is not finite)."""
    local, Q, QD, X, out, status = borrowed(local), borrowed(Q), borrowed(QD), borrowed(X), borrowed(out), \
        borrowed(status)
    lwords, rows, layout, roff, reals, arena, ws, at = request_views(local)
    pose, rates, nodes, inertias, cols, result, factor, rhs, flag, bodies, delta = lane
    data, _, _, _, _, _, _, _, _, vel, _, _, _, _ = work  # the lanes' buffers (lanes.buffers)
    nv = lwords[Header.NV]
    _fill(lwords, rows, layout, reals, arena, work, Q, QD, status, first, count)
    _state_rows(QD, rates, 0, nv, first, count)
    _state_rows(X, rates, nv, nv, first, count)
    _poses(layout, data, pose)
    _sweeps(layout, data, vel, lane, nv, True)
    _lanes_out(result, out, status, first, count, 3 * nv * nv)


# ----------------------------------------------------------------------------- forward dynamics
@kernel
def _tree_positions(layout, perm, lam, owner, last):
    """The hinge columns in the nodes' order (parents first), where the sparse ``Lᵀ D L`` of ``ℳ``
    runs (SPARSE.md; :func:`sko.engine.derivatives.tree_positions`): ``perm[u]`` is the column at
    position ``u``, ``lam[u]`` the position of its parent column (−1 at a base) and ``owner[u]``
    its node; ``last[k]``: the last column at or above node ``k``."""
    u = 0
    for k in range(layout.shape[0]):
        p, h, d = layout[k, Flat.PARENT], layout[k, Flat.HINGE_DIM], layout[k, Flat.DOF]
        above = last[p] if p >= 0 else -1
        for c in range(h):
            perm[u], lam[u], owner[u] = d + c, above if c == 0 else u - 1, k
            u += 1
        last[k] = u - 1 if h > 0 else above


@kernel
def _related(perm, lam, nv, related):
    """``related[k nv + u]``: 1 where position ``u`` is an ancestor, a descendant or the position
    of a column of the ``k``-th :data:`_CHUNK` of the ``3 nv`` right-hand sides of forward
    dynamics (``[∂T/∂θ | ∂T/∂θ̇ | 1]``, column ``c`` of hinge column ``c mod nv``), else 0: the
    positions where a chunk's rows are not zeros by the tree's sparsity
    (SPARSE.md, *Branch-induced sparsity*: ``∂T/∂θ``, ``∂T/∂θ̇`` and ``ℳ`` couple ancestors and
    descendants only) nor become so in the first sweep of :func:`_ltdl_solve`, which carries rows
    to ancestors."""
    related = borrowed(related)
    for i in range(related.shape[0]):
        related[i] = 0
    for k in range(related.shape[0] // nv):
        for c in range(k * _CHUNK, (k + 1) * _CHUNK):
            u = 0
            while perm[u] != c % nv:
                u += 1
            for v in range(nv):  # u and its descendants: v whose ancestors include u
                w = v
                while w > u:
                    w = lam[w]
                if w == u:
                    related[k * nv + v] = 1
            w = lam[u]
            while w >= 0:
                related[k * nv + w] = 1
                w = lam[w]


@kernel
def _ltdl(A, lam, nv, flag, bad):
    """``A = Lᵀ D L`` in place in every lane (``nv × nv`` rows at positions; as
    :func:`sko.engine.derivatives.ltdl`, dividing by the pivot's reciprocal): ``bad[l]`` is the
    first position (from the last) whose pivot is not positive and finite in lane ``l``, or −1."""
    A, lam, flag, bad = borrowed(A), borrowed(lam), borrowed(flag), borrowed(bad)
    for l in range(LANES):
        bad[l] = -1
    for k in range(nv - 1, -1, -1):
        d = row(A, k * nv + k)
        set_row(flag, 0, positive(d))  # not admissible(d): an infinite pivot passes, as in ltdl
        for l in range(LANES):
            if flag[l] == 0.0 and bad[l] < 0:
                bad[l] = k
        di = 1.0 / d
        i = lam[k]
        while i >= 0:
            a = row(A, k * nv + i) * di
            j = i
            while j >= 0:
                set_row(A, i * nv + j, row(A, i * nv + j) - a * row(A, k * nv + j))
                j = lam[j]
            set_row(A, k * nv + i, a)
            i = lam[i]


@register
def _chunk(X, o):
    """Rows ``o … o + 7`` of the lane buffer ``X`` (:data:`_CHUNK` of them)."""
    return (row(X, o), row(X, o + 1), row(X, o + 2), row(X, o + 3), row(X, o + 4), row(X, o + 5), row(X, o + 6),
            row(X, o + 7))


@register
def _put_chunk(X, o, x):
    """Rows ``o … o + 7`` of ``X`` ← the :data:`_CHUNK` lane numbers ``x``."""
    for k in range(_CHUNK):
        set_row(X, o + k, x[k])


@register
def _minus_times(x, a, y):
    """``x − a y`` for :data:`_CHUNK` lane numbers ``x``, ``y`` and one ``a``."""
    x0, x1, x2, x3, x4, x5, x6, x7 = x
    y0, y1, y2, y3, y4, y5, y6, y7 = y
    return x0 - a * y0, x1 - a * y1, x2 - a * y2, x3 - a * y3, x4 - a * y4, x5 - a * y5, x6 - a * y6, x7 - a * y7


# _chunk and _minus_times spell out their tuples; another _CHUNK would silently solve wrong columns
assert _CHUNK == 8, "_chunk and _minus_times spell out 8 entries: rewrite them for the new _CHUNK"


@kernel
def _ltdl_solve(A, lam, X, nv, m, columns, related):
    """``X ← ℳ⁻¹ X`` in every lane from the factor of :func:`_ltdl` (as
    :func:`sko.engine.derivatives.ltdl_solve`): ``X`` has rows at positions, ``m`` lane rows
    apart, of which the first ``columns`` are solved. :data:`_CHUNK` columns at a time, a
    position's row of them held in registers (:func:`_chunk`) while its ancestors' rows are read
    or updated; the remaining columns one at a time. Each column's operations and their order are
    those of a solve of it alone, but for the first sweep's at a position whose rows of a chunk
    are zeros by the tree's sparsity (``related``, :func:`_related`: ``x − a · 0 = x``)."""
    A, lam, X, related = borrowed(A), borrowed(lam), borrowed(X), borrowed(related)
    whole = columns - columns % _CHUNK
    for c0 in range(0, whole, _CHUNK):
        k = c0 // _CHUNK
        for i in range(nv - 1, -1, -1):
            if related[k * nv + i] == 0:
                continue
            x = _chunk(X, i * m + c0)
            j = lam[i]
            while j >= 0:
                _put_chunk(X, j * m + c0, _minus_times(_chunk(X, j * m + c0), row(A, i * nv + j), x))
                j = lam[j]
        for i in range(nv):
            a = 1.0 / row(A, i * nv + i)
            for c in range(c0, c0 + _CHUNK):
                set_row(X, i * m + c, row(X, i * m + c) * a)
        for i in range(nv):
            x = _chunk(X, i * m + c0)
            j = lam[i]
            while j >= 0:
                x = _minus_times(x, row(A, i * nv + j), _chunk(X, j * m + c0))
                j = lam[j]
            _put_chunk(X, i * m + c0, x)
    for i in range(nv - 1, -1, -1):
        j = lam[i]
        while j >= 0:
            a = row(A, i * nv + j)
            for c in range(whole, columns):
                set_row(X, j * m + c, row(X, j * m + c) - a * row(X, i * m + c))
            j = lam[j]
    for i in range(nv):
        a = 1.0 / row(A, i * nv + i)
        for c in range(whole, columns):
            set_row(X, i * m + c, row(X, i * m + c) * a)
    for i in range(nv):
        j = lam[i]
        while j >= 0:
            a = row(A, i * nv + j)
            for c in range(whole, columns):
                set_row(X, i * m + c, row(X, i * m + c) - a * row(X, j * m + c))
            j = lam[j]


@kernel
def _accelerate(layout, cols, rates, bodies, nodes, delta, nv):
    """The sweeps of :func:`_scatter` and :func:`_gather` at ``θ̈ = 0`` carried to the ``θ̈`` in
    ``rates``: of their terms, only ``α``, ``f`` and ``ϱ_θ`` depend on ``θ̈``, linearly (Eq. 10).
    Parents first ``Δα = Δα(℘) + Σ s θ̈`` and ``ϱ_θ += Δα(℘) × s``; then children first ``Δf =
    ℐ Δα`` (``bodies``: each body's own ``ℐ``) summed over the subtree and added to the gathered
    ``f``. ``delta``: ``Δα`` and the subtree's ``Δf`` per node."""
    layout, cols, rates, bodies = borrowed(layout), borrowed(cols), borrowed(rates), borrowed(bodies)
    nodes, delta = borrowed(nodes), borrowed(delta)
    zero = splat(0.0)
    zeros = (zero, zero, zero, zero, zero, zero)
    c6 = 6 * nv
    for j in range(layout.shape[0]):
        p, h, do = layout[j, Flat.PARENT], layout[j, Flat.HINGE_DIM], layout[j, Flat.DOF]
        A = _six(delta, 12 * p) if p >= 0 else zeros
        d = A
        for c in range(h):
            oc = 6 * (do + c)
            S = _six(cols, oc)
            d = _plus(d, _scaled(S, row(rates, nv + do + c)))
            _put(cols, 2 * c6 + oc, _plus(_six(cols, 2 * c6 + oc), motion_cross(A, S)))
        _put(delta, 12 * j, d)
        _put(delta, 12 * j + 6, zeros)
    for j in range(layout.shape[0] - 1, -1, -1):
        p, bo, d = layout[j, Flat.PARENT], 36 * j, _six(delta, 12 * j)
        g = (rb.dot(_six(bodies, bo), d), rb.dot(_six(bodies, bo + 6), d), rb.dot(_six(bodies, bo + 12), d),
             rb.dot(_six(bodies, bo + 18), d), rb.dot(_six(bodies, bo + 24), d), rb.dot(_six(bodies, bo + 30), d))
        g = _plus(g, _six(delta, 12 * j + 6))
        fo = Node.SIZE * j + Node.f
        _put(nodes, fo, _plus(_six(nodes, fo), g))
        if p >= 0:
            _put(delta, 12 * p + 6, _plus(_six(delta, 12 * p + 6), g))


@kernel
def forward_derivatives_block(local, work, lane, tree, Q, QD, X, out, status, first, count):
    """``(∂θ̈/∂θ, ∂θ̈/∂θ̇, ℳ⁻¹)`` at ``θ̈ = FD(q, θ̇, T)`` for ``T = X`` (DERIVATIVES.md, Eq. 3) of
    the states ``first … first + count − 1`` (as :func:`inverse_derivatives_block`), as the
    one-state kernel computes them, in every lane: the sweeps at ``θ̈ = 0`` give the bias and
    ``ℳ``; its sparse ``Lᵀ D L`` (:func:`_ltdl`, positions of :func:`_tree_positions` in
    ``tree``) gives ``θ̈``, to which the sweeps are carried (:func:`_accelerate`, where the
    one-state kernel runs them again) for ``∂T/∂θ``, ``∂T/∂θ̇``; one solve with
    ``3 nv`` right-hand sides gives ``−ℳ⁻¹ ∂T/∂θ``, ``−ℳ⁻¹ ∂T/∂θ̇`` and ``ℳ⁻¹``. A lane whose
    ``ℳ`` has a pivot that is not positive gets the status ``N + k`` of the body owning that column."""
    local, Q, QD, X, out, status = borrowed(local), borrowed(Q), borrowed(QD), borrowed(X), borrowed(out), \
        borrowed(status)
    lwords, rows, layout, roff, reals, arena, ws, at = request_views(local)
    pose, rates, nodes, inertias, cols, result, A, B, flag, bodies, delta = lane
    perm, lam, owner, last, bad, related = tree
    data, _, _, _, _, _, _, _, _, vel, _, _, _, _ = work  # the lanes' buffers (lanes.buffers)
    nv, N = lwords[Header.NV], lwords[Header.N]
    n2, m = nv * nv, 3 * nv
    _fill(lwords, rows, layout, reals, arena, work, Q, QD, status, first, count)
    _state_rows(QD, rates, 0, nv, first, count)
    for i in range(nv * LANES):
        rates[nv * LANES + i] = 0.0
    _state_rows(X, rates, 2 * nv, nv, first, count)
    _poses(layout, data, pose)
    _scatter(layout, data, vel, pose, rates, nodes, inertias, cols, nv)
    for j in range(layout.shape[0]):  # each body's own ℐ, before the gather sums them
        for i in range(36 * LANES):
            bodies[36 * LANES * j + i] = inertias[Inertias.SIZE * LANES * j + i]
    _gather(layout, nodes, inertias)
    _walks(layout, nodes, inertias, cols, result, nv, True, False)
    for u in range(nv):  # T − 𝒞 at positions, 𝒞 = H f at θ̈ = 0; ℳ at positions
        pu = perm[u]
        set_row(B, u * m, row(rates, 2 * nv + pu) - rb.dot(_six(cols, 6 * pu),
                                                             _six(nodes, Node.SIZE * owner[u] + Node.f)))
        for c in range(nv):
            set_row(A, u * nv + c, row(result, 2 * n2 + pu * nv + perm[c]))
    _ltdl(A, lam, nv, flag, bad)
    _ltdl_solve(A, lam, B, nv, m, 1, related)
    for u in range(nv):
        set_row(rates, nv + perm[u], row(B, u * m))
    _accelerate(layout, cols, rates, bodies, nodes, delta, nv)
    _walks(layout, nodes, inertias, cols, result, nv, False, True)
    one, zero = splat(1.0), splat(0.0)
    for u in range(nv):  # rows at positions: [∂T/∂θ | ∂T/∂θ̇ | 1]
        pu = perm[u]
        for c in range(nv):
            set_row(B, u * m + c, row(result, pu * nv + c))
            set_row(B, u * m + nv + c, row(result, n2 + pu * nv + c))
            set_row(B, u * m + 2 * nv + c, one if c == pu else zero)
    _ltdl_solve(A, lam, B, nv, m, m, related)
    for l in range(count):
        s = first + l
        if status[s] < 0 and bad[l] >= 0:  # ℳ not positive definite: the body of that column, as D(k) names it
            status[s] = N + layout[owner[bad[l]], Flat.BODY]
    dest = block_rows(out, first, count)  # the solved rows, from positions, straight into out
    f0, f1, f2 = zero, zero, zero
    quarter = nv // 4
    for u in range(nv):
        bu, e = u * m, perm[u] * nv
        for k in range(quarter):
            c = bu + 4 * k
            a0, a1, a2, a3 = zero - row(B, c), zero - row(B, c + 1), zero - row(B, c + 2), zero - row(B, c + 3)
            b0, b1, b2, b3 = (zero - row(B, c + nv), zero - row(B, c + nv + 1), zero - row(B, c + nv + 2),
                              zero - row(B, c + nv + 3))
            d0, d1, d2, d3 = row(B, c + 2 * nv), row(B, c + 2 * nv + 1), row(B, c + 2 * nv + 2), row(B, c + 2 * nv + 3)
            f0 = f0 + 0.0 * a0 + 0.0 * a1 + 0.0 * a2 + 0.0 * a3
            f1 = f1 + 0.0 * b0 + 0.0 * b1 + 0.0 * b2 + 0.0 * b3
            f2 = f2 + 0.0 * d0 + 0.0 * d1 + 0.0 * d2 + 0.0 * d3
            put_turned(dest, e + 4 * k, a0, a1, a2, a3)
            put_turned(dest, n2 + e + 4 * k, b0, b1, b2, b3)
            put_turned(dest, 2 * n2 + e + 4 * k, d0, d1, d2, d3)
        for c in range(4 * quarter, nv):
            y0, y1, y2 = zero - row(B, bu + c), zero - row(B, bu + nv + c), row(B, bu + 2 * nv + c)
            f0 = f0 + 0.0 * y0
            f1 = f1 + 0.0 * y1
            f2 = f2 + 0.0 * y2
            put_lanes(dest, e + c, y0)
            put_lanes(dest, n2 + e + c, y1)
            put_lanes(dest, 2 * n2 + e + c, y2)
    settle(out, status, (f0 + f1) + f2, first, count, 3 * n2)


@register
def _lane_buffers(lwords, forward):
    """This module's lane buffers for the request vector's sizes: the poses, ``θ̇``, ``θ̈`` and
    ``T``, the nodes (:data:`~sko.engine.derivatives.Node`), the inertias
    (:data:`~sko.engine.derivatives.Inertias`), the seeds' columns, the result's ``3 nv²``
    entries (zeros the walks leave, :func:`_walks`); for ``forward`` dynamics also
    the factor of ``ℳ``, the ``nv × 3 nv`` right-hand sides, a row of flags, each body's own
    ``ℐ`` and the ``Δα``, ``Δf`` of :func:`_accelerate`. Then the tree's
    positions (:func:`_tree_positions`), each lane's first bad pivot and the positions of each
    chunk of the solve's right-hand sides (:func:`_related`)."""
    nv, n = lwords[Header.NV], lwords[Header.N]
    f = 1 if forward else 0
    lane = (np.zeros(POSE * n * LANES), np.zeros(3 * nv * LANES), np.zeros(Node.SIZE * n * LANES),
            np.zeros(Inertias.SIZE * n * LANES), np.zeros(_COLUMNS * 6 * nv * LANES),
            np.zeros(3 * nv * nv * LANES), np.zeros(f * nv * nv * LANES),
            np.zeros(f * 3 * nv * nv * LANES), np.zeros(LANES), np.zeros(f * 36 * n * LANES),
            np.zeros(f * 12 * n * LANES))
    tree = (np.zeros(nv, dtype=np.int64), np.zeros(nv, dtype=np.int64), np.zeros(nv, dtype=np.int64),
            np.zeros(n, dtype=np.int64), np.zeros(LANES, dtype=np.int64),
            np.zeros(f * (3 * nv // _CHUNK) * nv, dtype=np.int64))
    return lane, tree


@kernel
def _inverse_derivatives_run(local, work, Q, QD, X, out, status, first, stop):
    """The blocks ``first … stop − 1`` of a batch of inverse dynamics derivatives, each by
    :func:`inverse_derivatives_block`, on a thread's own request vector and lane buffers (as
    :func:`sko.engine.lanes._forward_run`). Returns −1."""
    lane, tree = _lane_buffers(local.view(np.int64), False)
    work = borrowed_buffers(work)
    for b in range(first, stop):
        inverse_derivatives_block(local, work, lane, tree, Q, QD, X, out, status, b * LANES,
                                  min(LANES, Q.shape[0] - b * LANES))
    return -1


@kernel
def _forward_derivatives_run(local, work, Q, QD, X, out, status, first, stop):
    """:func:`_inverse_derivatives_run` of the forward dynamics derivatives, each block by
    :func:`forward_derivatives_block` (``X`` holds ``T``)."""
    lwords = local.view(np.int64)
    lane, tree = _lane_buffers(lwords, True)
    perm, lam, owner, last, bad, related = tree
    _tree_positions(request_views(local)[2], perm, lam, owner, last)
    _related(perm, lam, lwords[Header.NV], related)
    work = borrowed_buffers(work)
    for b in range(first, stop):
        forward_derivatives_block(local, work, lane, tree, Q, QD, X, out, status, b * LANES,
                                  min(LANES, Q.shape[0] - b * LANES))
    return -1


#: the run kernels of this module, by request name, for :func:`sko.engine.lanes.evaluate`
#: (:data:`sko.engine.dispatch.LANE_RUNS` holds them beside the lanes' own)
RUNS = {"inverse_dynamics_derivatives": _inverse_derivatives_run,
        "forward_dynamics_derivatives": _forward_derivatives_run}

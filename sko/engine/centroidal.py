"""The request kernels of centroidal dynamics (CENTROIDAL.md), declared in the catalogue of
:mod:`sko.engine.requests` as ``centroidal_terms``, ``centroidal_momentum_matrix`` and
``centroidal_momentum_matrix_rate``.

:func:`centroidal` writes one state's packed result of :mod:`sko.systems.centroidal` (its
reference function, :func:`~sko.systems.centroidal.reference_centroidal`), or ``A_G`` alone (the
request ``centroidal_momentum_matrix``, a result of ``6 nv`` entries): the maps ``Ψ(k)`` base
to tips (Eq. 1) about a base body's origin ``o`` (:func:`origin_row`; §3: a base body's ``Ψ = E ⁰X_o``,
so ``I_0``'s digits go as the system's size, not as its distance from the world origin), the gather ``Y(k) = Ψ*(k) ℛ(k)`` tips to base writing ``A_0`` and the locked
inertia ``I_0`` (Eq. 3), then the shift to the centre of mass (Eq. 4). It reads the contract's
``E``, ``φ``, ``H`` and ``M`` only, so it takes every body type. Buffers: ``Ψ`` (``m_k × 6`` at
``6·NODE(k)``), ``Y`` (``6 × m_k``, same offsets), ``I_0``, ``X_G^*``, and a 6 × 6 product.

:func:`centroidal_rate` writes ``Ȧ_G`` (6 × nv) of a tree of rigid bodies on joints of constant
``S`` by the body-coordinate gather of Eq. 6 (``ℛ`` and ``𝒟`` together) and Eq. 5. Buffers:
``Ψ``, ``ℛ``, ``𝒟`` (36 per body), ``A_0`` (6 × nv), ``I_0``, four 6-vectors and a 6 × 6 product.
"""

from __future__ import annotations

from sko.engine.borrow import borrowed, matrix_view
from sko.engine.fields import columns, offsets
from sko.engine.layout import Flat
from sko.engine.jit import inline_kernel, kernel, register
from sko.engine.state_kernels import Row, Terms
from sko.engine.request_views import Header, fill_arena, request_views

__all__ = ["Result", "CentroidalWork", "RateWork", "centroidal", "centroidal_rate", "centroidal_buffers", "origin_row",
           "rate_buffers"]

#: The columns of :func:`centroidal`'s result after the ``nv`` of ``A_G`` (those of
#: :class:`sko.systems.centroidal.Packed`): ``I_G``, ``h_G``, then ``(c, m, 0, 0)``.
Result = offsets("Result", inertia=6, momentum=1, center=1)
#: :func:`centroidal`'s workspace: ``Ψ``, ``Y``, ``I_0``, ``X_G^*``, a 6 × 6 product.
CentroidalWork = columns("CentroidalWork", "PSI", "Y", "I0", "X", "PRODUCT")
#: :func:`centroidal_rate`'s workspace: ``Ψ``, ``ℛ``, ``𝒟``, ``A_0``, ``I_0``, four 6-vectors, a 6 × 6 product.
RateWork = columns("RateWork", "PSI", "R", "D", "A0", "I0", "VECTORS", "PRODUCT")


def centroidal_buffers(s) -> tuple:
    """:data:`CentroidalWork` (``s``: :class:`~sko.engine.requests.Sizes`)."""
    return 6 * s.ns, 6 * s.ns, 36, 36, 36


def rate_buffers(s) -> tuple:
    """:data:`RateWork`: ``Ψ``, ``ℛ``, ``𝒟`` of every (6-dimensional) node, ``A_0``, ``I_0``, four
    6-vectors, a 6 × 6 product."""
    return 36 * s.n, 36 * s.n, 36 * s.n, 6 * max(s.nv, 1), 36, 24, 36


@inline_kernel
def _product(A, B, C, transpose_b):
    """``C = A B`` (or ``A Bᵀ``) of small matrices."""
    for r in range(C.shape[0]):
        for c in range(C.shape[1]):
            s = 0.0 * A[0, 0]
            for i in range(A.shape[1]):
                s += A[r, i] * (B[c, i] if transpose_b else B[i, c])
            C[r, c] = s


@inline_kernel
def _tn66(A, B, C):
    """``C = Aᵀ B`` (6 × 6; constant trip counts, unrolled)."""
    for r in range(6):
        for c in range(6):
            s = A[0, r] * B[0, c]
            for i in range(1, 6):
                s += A[i, r] * B[i, c]
            C[r, c] = s


@inline_kernel
def _nt66_add(A, B, C):
    """``C += A Bᵀ`` (6 × 6)."""
    for r in range(6):
        for c in range(6):
            s = C[r, c]
            for i in range(6):
                s += A[r, i] * B[c, i]
            C[r, c] = s


@register
def origin_row(layout, arena):
    """The row of the base body whose frame's origin is the point ``o`` (CENTROIDAL.md §3): the
    first of six rows or more with a positive mass ``M₅₅``, else the first of six rows or more
    (a massless marker at the world origin is passed over); −1 for none (any point serves)."""
    first = -1
    for j in range(layout.shape[0]):
        m = layout[j, Flat.NODE_DIM]
        if layout[j, Flat.PARENT] < 0 and m >= 6:
            if arena[layout[j, Flat.M] + 5 * m + 5].real > 0:
                return j
            if first < 0:
                first = j
    return first


@register
def _point(rows, layout, arena):
    """``o`` (real parts): the world position of the frame of the base body of :func:`origin_row`,
    from its ``E = ᵏX_0``'s first six rows ``[[R, 0], [−R o×, R]]`` (``o× = −Rᵀ B``); zero
    where there is none."""
    j = origin_row(layout, arena)
    e, er, ec = rows[max(j, 0), Row.E], rows[max(j, 0), Row.E_ROW], rows[max(j, 0), Row.E_COLUMN]
    o0, o1, o2 = 0.0, 0.0, 0.0
    for k in range(3 if j >= 0 else 0):  # o = (o×[2, 1], o×[0, 2], o×[1, 0]) of o× = −Rᵀ B
        R, B = e + k * er, e + (3 + k) * er
        o0 -= (arena[R + 2 * ec] * arena[B + ec]).real
        o1 -= (arena[R] * arena[B + 2 * ec]).real
        o2 -= (arena[R + ec] * arena[B]).real
    return o0, o1, o2


@register
def _base_map(rows, arena, j, m, o, Psi):
    """``Ψ(k) = E ⁰X_o`` of the base body of row ``j`` (CENTROIDAL.md §3): ``E``'s columns along
    ``ω`` gain ``E_v o×``, ``E_v`` its columns along ``v`` (a motion given at ``o``, seen at the
    world origin, ``⁰X_o = [[1, 0], [o×, 1]]``). ``E``'s first six rows ``[[R, 0], [−R p×, R]]``
    give ``[[R, 0], [−R (p − o)×, R]]`` by blocks, ``p − o`` a difference of positions: formed as
    ``−R p× + R o×`` it would cancel digits in proportion to ``|o|``."""
    e, er, ec = rows[j, Row.E], rows[j, Row.E_ROW], rows[j, Row.E_COLUMN]
    o0, o1, o2 = o
    d0, d1, d2 = -o0, -o1, -o2  # p − o, p = (p×[2, 1], p×[0, 2], p×[1, 0]) of p× = −Rᵀ B
    for k in range(3 if m >= 6 else 0):
        R, B = e + k * er, e + (3 + k) * er
        d0 -= arena[R + 2 * ec] * arena[B + ec]
        d1 -= arena[R] * arena[B + 2 * ec]
        d2 -= arena[R + ec] * arena[B]
    for r in range(m):
        v0, v1, v2 = arena[e + r * er + 3 * ec], arena[e + r * er + 4 * ec], arena[e + r * er + 5 * ec]
        if 3 <= r < 6:  # −R (p − o)×, R's row in E_v
            Psi[r, 0], Psi[r, 1], Psi[r, 2] = v2 * d1 - v1 * d2, v0 * d2 - v2 * d0, v1 * d0 - v0 * d1
        else:
            Psi[r, 0] = arena[e + r * er] + v1 * o2 - v2 * o1
            Psi[r, 1] = arena[e + r * er + ec] + v2 * o0 - v0 * o2
            Psi[r, 2] = arena[e + r * er + 2 * ec] + v0 * o1 - v1 * o0
        Psi[r, 3], Psi[r, 4], Psi[r, 5] = v0, v1, v2


@register
def _to_center(I0, nv, out, width):
    """``m`` and ``c`` from ``I_0`` (its upper right block is ``m c×``), and ``A ← X_G^* A`` for
    the first ``nv`` columns of ``out`` (rows of ``width`` entries); returns ``(m, c_x, c_y, c_z)``."""
    m = I0[5, 5]
    cx, cy, cz = I0[2, 4] / m, I0[0, 5] / m, I0[1, 3] / m
    for col in range(nv):
        b0_, b1, b2 = out[3 * width + col], out[4 * width + col], out[5 * width + col]
        out[col] -= cy * b2 - cz * b1
        out[width + col] -= cz * b0_ - cx * b2
        out[2 * width + col] -= cx * b1 - cy * b0_
    return m, cx, cy, cz


@kernel
def centroidal(w, x, out):
    """One state's packed ``[A_G | I_G | h_G | (c, m, 0, 0)]``, or ``A_G`` alone for a result of
    ``6 nv`` entries (module docstring)."""
    w, x, out = borrowed(w), borrowed(x), borrowed(out)
    words, rows, layout, roff, reals, arena, ws, at = request_views(w)
    status = fill_arena(words, rows, reals, arena, Terms.STRUCTURE)
    if status >= 0:
        return status
    nv, n = words[Header.NV], layout.shape[0]
    packed = out.shape[0] > 6 * nv
    width = nv + Result.SIZE if packed else nv
    psi, ys = at[CentroidalWork.PSI], at[CentroidalWork.Y]  # where Ψ and Y start
    point = _point(rows, layout, arena)
    for j in range(n):  # Ψ(k), Eq. 1, about the point; Y(k) = Ψ*(k) M(k)
        m, p, o = layout[j, Flat.NODE_DIM], layout[j, Flat.PARENT], 6 * layout[j, Flat.NODE]
        Psi = matrix_view(ws, psi + o, m, 6)
        if p < 0:
            _base_map(rows, arena, j, m, point, Psi)
        else:
            mp = layout[p, Flat.NODE_DIM]
            phi, Pp = matrix_view(arena, layout[j, Flat.W], mp, m), matrix_view(ws, psi + 6 * layout[p, Flat.NODE], mp, 6)
            if m == 6 and mp == 6:
                _tn66(phi, Pp, Psi)
            else:
                _product(phi.T, Pp, Psi, False)
        M, Y = matrix_view(arena, layout[j, Flat.M], m, m), matrix_view(ws, ys + o, 6, m)
        if m == 6:
            _tn66(Psi, M, Y)
        else:
            _product(Psi.T, M, Y, False)
    I0 = matrix_view(ws, at[CentroidalWork.I0], 6, 6)
    I0[:, :] = 0.0
    for j in range(n - 1, -1, -1):  # Eq. 3: A_0(:, k) = Y(k) H*(k); Y(℘) += Y(k) φ*(℘, k)
        m, p, o, h, d = (layout[j, Flat.NODE_DIM], layout[j, Flat.PARENT], 6 * layout[j, Flat.NODE],
                         layout[j, Flat.HINGE_DIM], layout[j, Flat.DOF])
        Y, H = matrix_view(ws, ys + o, 6, m), matrix_view(arena, layout[j, Flat.H], h, m)
        for r in range(6):
            for c in range(h):
                s = 0.0 * Y[0, 0]
                for i in range(m):
                    s += Y[r, i] * H[c, i]
                out[r * width + d + c] = s
        if p < 0:
            Psi = matrix_view(ws, psi + o, m, 6)
            for r in range(6):
                for c in range(6):
                    s = 0.0 * Y[0, 0]
                    for i in range(m):
                        s += Y[r, i] * Psi[i, c]
                    I0[r, c] += s
        else:
            mp = layout[p, Flat.NODE_DIM]
            phi, Yp = matrix_view(arena, layout[j, Flat.W], mp, m), matrix_view(ws, ys + 6 * layout[p, Flat.NODE], 6, mp)
            if m == 6 and mp == 6:
                _nt66_add(Y, phi, Yp)
                continue
            for r in range(6):
                for c in range(mp):
                    s = 0.0 * Y[0, 0]
                    for i in range(m):
                        s += Y[r, i] * phi[c, i]
                    Yp[r, c] += s
    if not I0[5, 5].real > 0:  # no centre of mass: the reference path names it (of a complex step too)
        return -3
    mass, cx, cy, cz = _to_center(I0, nv, out, width)
    if not packed:
        return -1
    X, T = matrix_view(ws, at[CentroidalWork.X], 6, 6), matrix_view(ws, at[CentroidalWork.PRODUCT], 6, 6)
    # Eq. 4: I_G = X_G^* I_0 X_G^*ᵀ
    X[:, :] = 0.0
    for i in range(6):
        X[i, i] = 1.0
    X[0, 4], X[0, 5], X[1, 3], X[1, 5], X[2, 3], X[2, 4] = cz, -cy, -cz, cx, cy, -cx  # −c×
    _product(X, I0, T, False)
    _product(T, X, matrix_view(out, 0, 6, width)[:, nv + Result.inertia: nv + Result.momentum], True)
    v0 = words[Header.V]
    for r in range(6):
        s = 0.0 * mass
        for c in range(nv):
            s += out[r * width + c] * arena[v0 + c]
        out[r * width + nv + Result.momentum] = s
    tail = nv + Result.center
    out[tail], out[width + tail], out[2 * width + tail] = cx + point[0], cy + point[1], cz + point[2]
    out[3 * width + tail] = mass
    return -1


@register
def _cross_motion(V, vo, s, t):
    """``t = 𝒱 × s`` (``crm``) of the 6-vector at ``V[vo:]`` and ``s``."""
    w0, w1, w2, u0, u1, u2 = V[vo], V[vo + 1], V[vo + 2], V[vo + 3], V[vo + 4], V[vo + 5]
    t[0], t[1], t[2] = w1 * s[2] - w2 * s[1], w2 * s[0] - w0 * s[2], w0 * s[1] - w1 * s[0]
    t[3] = w1 * s[5] - w2 * s[4] + u1 * s[2] - u2 * s[1]
    t[4] = w2 * s[3] - w0 * s[5] + u2 * s[0] - u0 * s[2]
    t[5] = w0 * s[4] - w1 * s[3] + u0 * s[1] - u1 * s[0]


@register
def _congruence_add(phi, A, P, T):
    """``P += φ A φᵀ`` (6 × 6), by ``T = A φᵀ`` first."""
    for r in range(6):
        for c in range(6):
            s = A[r, 0] * phi[c, 0]
            for k in range(1, 6):
                s += A[r, k] * phi[c, k]
            T[r, c] = s
    for r in range(6):
        for c in range(6):
            s = P[r, c]
            for i in range(6):
                s += phi[r, i] * T[i, c]
            P[r, c] = s


@kernel
def centroidal_rate(w, x, out):
    """``Ȧ_G`` of a rigid tree on joints of constant ``S`` (module docstring; Eq. 5, Eq. 6)."""
    w, x, out = borrowed(w), borrowed(x), borrowed(out)
    words, rows, layout, roff, reals, arena, ws, at = request_views(w)
    status = fill_arena(words, rows, reals, arena, Terms.MOTION)
    if status >= 0:
        return status
    nv, n, v0 = words[Header.NV], layout.shape[0], words[Header.V]
    vectors = matrix_view(ws, at[RateWork.VECTORS], 4, 6)
    psi, rs, ds = at[RateWork.PSI], at[RateWork.R], at[RateWork.D]  # where Ψ, ℛ and 𝒟 start
    s6, t6, RS, DS = vectors[0], vectors[1], vectors[2], vectors[3]
    point = _point(rows, layout, arena)
    for j in range(n):  # Ψ(k) = φᵀ Ψ(℘), about the point; ℛ(k) = M(k); 𝒟(k) = C + Cᵀ with C = 𝒱(k)×* M(k)
        p, o = layout[j, Flat.PARENT], 36 * j
        Psi = matrix_view(ws, psi + o, 6, 6)
        if p < 0:
            _base_map(rows, arena, j, 6, point, Psi)
        else:
            _tn66(matrix_view(arena, layout[j, Flat.W], 6, 6), matrix_view(ws, psi + 36 * p, 6, 6), Psi)
        M, R, D = matrix_view(arena, layout[j, Flat.M], 6, 6), matrix_view(ws, rs + o, 6, 6), matrix_view(ws, ds + o, 6, 6)
        vo = rows[j, Row.VELOCITY]
        w0, w1, w2, u0, u1, u2 = arena[vo], arena[vo + 1], arena[vo + 2], arena[vo + 3], arena[vo + 4], arena[vo + 5]
        for c in range(6):  # column c of C = [ω×n + v×f; ω×f] of the force (n, f) = M(:, c)
            n0, n1, n2, f0, f1, f2 = M[0, c], M[1, c], M[2, c], M[3, c], M[4, c], M[5, c]
            D[0, c] = w1 * n2 - w2 * n1 + u1 * f2 - u2 * f1
            D[1, c] = w2 * n0 - w0 * n2 + u2 * f0 - u0 * f2
            D[2, c] = w0 * n1 - w1 * n0 + u0 * f1 - u1 * f0
            D[3, c] = w1 * f2 - w2 * f1
            D[4, c] = w2 * f0 - w0 * f2
            D[5, c] = w0 * f1 - w1 * f0
        for r in range(6):
            R[r, r] = M[r, r]
            for c in range(r):
                R[r, c], R[c, r] = M[r, c], M[c, r]
                D[r, c], D[c, r] = D[r, c] + D[c, r], D[c, r] + D[r, c]
            D[r, r] = 2 * D[r, r]
    A0, I0 = matrix_view(ws, at[RateWork.A0], 6, max(nv, 1)), matrix_view(ws, at[RateWork.I0], 6, 6)
    T = matrix_view(ws, at[RateWork.PRODUCT], 6, 6)
    I0[:, :] = 0.0
    for j in range(n - 1, -1, -1):  # Eq. 6, tips to base
        p, o, h, d = layout[j, Flat.PARENT], 36 * j, layout[j, Flat.HINGE_DIM], layout[j, Flat.DOF]
        Psi, R, D = matrix_view(ws, psi + o, 6, 6), matrix_view(ws, rs + o, 6, 6), matrix_view(ws, ds + o, 6, 6)
        H = matrix_view(arena, layout[j, Flat.H], h, 6)
        vo = rows[j, Row.VELOCITY]
        for c in range(h):
            for i in range(6):
                s6[i] = H[c, i]
            _cross_motion(arena, vo, s6, t6)
            for i in range(6):  # RS ← ℛ S, DS ← 𝒟 S + ℛ (𝒱 × S)
                a, e = 0.0 * R[0, 0], 0.0 * R[0, 0]
                for k in range(6):
                    a += R[i, k] * s6[k]
                    e += D[i, k] * s6[k] + R[i, k] * t6[k]
                RS[i], DS[i] = a, e
            for r in range(6):
                a, e = 0.0 * R[0, 0], 0.0 * R[0, 0]
                for k in range(6):
                    a += Psi[k, r] * RS[k]
                    e += Psi[k, r] * DS[k]
                A0[r, d + c], out[r * nv + d + c] = a, e
        if p < 0:  # I_0 += Ψᵀ ℛ Ψ
            _congruence_add(Psi.T, R, I0, T)
        else:
            phi = matrix_view(arena, layout[j, Flat.W], 6, 6)
            _congruence_add(phi, R, matrix_view(ws, rs + 36 * p, 6, 6), T)
            _congruence_add(phi, D, matrix_view(ws, ds + 36 * p, 6, 6), T)
    m = I0[5, 5]
    if not m.real > 0:  # no centre of mass: the reference path names it
        return -3
    cx, cy, cz = I0[2, 4] / m, I0[0, 5] / m, I0[1, 3] / m
    l0, l1, l2 = 0.0 * m, 0.0 * m, 0.0 * m  # ċ = l / m
    for c in range(nv):
        l0 += A0[3, c] * arena[v0 + c]
        l1 += A0[4, c] * arena[v0 + c]
        l2 += A0[5, c] * arena[v0 + c]
    dx, dy, dz = l0 / m, l1 / m, l2 / m
    for c in range(nv):  # Eq. 5: top rows −= c × Ȧ_0(bottom) + ċ × A_0(bottom)
        e0, e1, e2 = out[3 * nv + c], out[4 * nv + c], out[5 * nv + c]
        a0, a1, a2 = A0[3, c], A0[4, c], A0[5, c]
        out[c] -= cy * e2 - cz * e1 + dy * a2 - dz * a1
        out[nv + c] -= cz * e0 - cx * e2 + dz * a0 - dx * a2
        out[2 * nv + c] -= cx * e1 - cy * e0 + dx * a1 - dy * a0
    return -1

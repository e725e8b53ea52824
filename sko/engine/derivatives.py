"""The derivatives of inverse dynamics of a rigid tree, compiled (DERIVATIVES.md §4–§5, Eq. 10–13):
the kernel twin of :mod:`sko.systems.rigid_derivatives`, in world coordinates (Eq. 13).

It takes a state table (:data:`~sko.engine.state_kernels.Row`) of rigid bodies on joints of constant
``S`` with ``c_J = 0`` (:func:`~sko.systems.rigid_derivatives.compiled`), whose arena holds each
body's ``H = S*``, body-frame inertia ``M`` and own frame's world pose ``(R, p)``. In world
coordinates every quantity of every body is taken about the world origin, so the weights are
identities: the composites ``ℛ`` and ``𝔅`` and the gathered forces are plain sums over the
subtree, and the ancestor walks of Eq. 11–12 are dot products with no transform carried. Rows
come parent first (the fill order): a scatter runs them forwards, a gather backwards.

Per body ``k`` (``j`` its row), the buffers hold

``nodes[j]`` (:data:`Node`, 24 entries)
    ``v_k``, ``α_k``, ``f_k`` (gathered) and ``ℐ_k v_k``, world coordinates;
``inertias[j]`` (:data:`Inertias`, 72 entries)
    ``ℛ(k)`` then ``𝔅(k)`` (row-major 6 × 6);
``columns`` (5 rows × 6 nv)
    per hinge column ``ι`` the 6-vectors ``s_ι`` (world), ``σ`` and ``ϱ`` of the ``θ``-column,
    ``σ`` and ``ϱ`` of the ``θ̇``-column (Eq. 10).
"""

from __future__ import annotations

from sko.engine.borrow import borrowed
from sko.engine.fields import columns, offsets
from sko.engine.jit import kernel
from sko.engine.state_kernels import Record, Row

__all__ = ["Columns", "Node", "Inertias", "ScatterWork", "WalkColumn", "scratch_size", "sweeps", "scatter", "gather", "walks", "joint_forces", "tree_positions", "ltdl",
           "ltdl_solve", "row_of_column"]

#: The rows of the column buffer (module docstring).
Columns = columns("Columns", "S", "SIGMA_Q", "RHO_Q", "SIGMA_V", "RHO_V")
#: One body's entries of the node buffer (module docstring).
Node = offsets("Node", v=6, alpha=6, f=6, Iv=6)
#: One body's entries of the inertia buffer: ``ℛ(k)``, ``𝔅(k)`` (row-major 6 × 6).
Inertias = offsets("Inertias", R=36, B=36)
#: The scratch of :func:`scatter`: ``v_J``, ``a_J``, ``𝒱⁺``, ``α⁺``, a column of ``ℐ``, ``v ×*`` it.
ScatterWork = offsets("ScatterWork", vJ=6, aJ=6, V_plus=6, alpha_plus=6, column=6, product=6)
#: The scratch of :func:`walks` per hinge column: ``Y = ℛ s``, ``Z = 2 𝔅* s``, ``g_θ``, ``g_θ̇``.
WalkColumn = offsets("WalkColumn", Y=6, Z=6, gq=6, gv=6)


def scratch_size(max_hinge: int) -> int:
    """The scratch ``t`` of :func:`sweeps` and :func:`walks` for hinges of up to ``max_hinge`` columns."""
    return max(int(ScatterWork.SIZE), int(WalkColumn.SIZE) * max_hinge)


@kernel
def _motion_cross(x, xo, y, yo, z, zo, sign):
    """``z[zo:zo+6] += sign · (x × y)`` for motions ``x = [ω; v]``: ``[ω × y_ω; v × y_ω + ω × y_v]``."""
    w0, w1, w2, v0, v1, v2 = x[xo], x[xo + 1], x[xo + 2], x[xo + 3], x[xo + 4], x[xo + 5]
    a0, a1, a2, b0, b1, b2 = y[yo], y[yo + 1], y[yo + 2], y[yo + 3], y[yo + 4], y[yo + 5]
    z[zo] += sign * (w1 * a2 - w2 * a1)
    z[zo + 1] += sign * (w2 * a0 - w0 * a2)
    z[zo + 2] += sign * (w0 * a1 - w1 * a0)
    z[zo + 3] += sign * (v1 * a2 - v2 * a1 + w1 * b2 - w2 * b1)
    z[zo + 4] += sign * (v2 * a0 - v0 * a2 + w2 * b0 - w0 * b2)
    z[zo + 5] += sign * (v0 * a1 - v1 * a0 + w0 * b1 - w1 * b0)


@kernel
def _force_cross(x, xo, y, yo, z, zo):
    """``z[zo:zo+6] += x ×* y`` for a motion ``x = [ω; v]`` and a force ``y = [n; f]``:
    ``[ω × n + v × f; ω × f]``."""
    w0, w1, w2, v0, v1, v2 = x[xo], x[xo + 1], x[xo + 2], x[xo + 3], x[xo + 4], x[xo + 5]
    n0, n1, n2, f0, f1, f2 = y[yo], y[yo + 1], y[yo + 2], y[yo + 3], y[yo + 4], y[yo + 5]
    z[zo] += w1 * n2 - w2 * n1 + v1 * f2 - v2 * f1
    z[zo + 1] += w2 * n0 - w0 * n2 + v2 * f0 - v0 * f2
    z[zo + 2] += w0 * n1 - w1 * n0 + v0 * f1 - v1 * f0
    z[zo + 3] += w1 * f2 - w2 * f1
    z[zo + 4] += w2 * f0 - w0 * f2
    z[zo + 5] += w0 * f1 - w1 * f0


@kernel
def _world_inertia(arena, mo, ro, po, I, io):
    """``ℐ`` (6 × 6 at ``I[io]``): the body inertia at ``arena[mo]`` (``[[Ī, h×], [h×*, m]]``
    about the body origin) about the world origin in world axes, for the body frame's world
    axes ``R`` (``arena[ro]``, row-major) and origin ``p`` (``arena[po]``): ``Ī ← R Ī R*``,
    ``h ← R h``, then the parallel-axis shift to the origin, ``Ī − p h* − h p* + 2 (h·p) 1 −
    m (p p* − (p·p) 1)`` and ``h + m p``."""
    m = arena[mo + 35]
    hb0, hb1, hb2 = arena[mo + 16], arena[mo + 5], arena[mo + 9]  # h× = I[:3, 3:]: h = (I₂₄, I₀₅, I₁₃)
    h = (arena[ro] * hb0 + arena[ro + 1] * hb1 + arena[ro + 2] * hb2,
         arena[ro + 3] * hb0 + arena[ro + 4] * hb1 + arena[ro + 5] * hb2,
         arena[ro + 6] * hb0 + arena[ro + 7] * hb1 + arena[ro + 8] * hb2)
    p = (arena[po], arena[po + 1], arena[po + 2])
    hp, pp = h[0] * p[0] + h[1] * p[1] + h[2] * p[2], p[0] * p[0] + p[1] * p[1] + p[2] * p[2]
    for r in range(3):
        for c in range(3):  # (R Ī)(r, c) then (R Ī R*)(r, c) in one pass over Ī
            s = 0.0 * m
            for a in range(3):
                ra = arena[ro + 3 * r + a]
                for b in range(3):
                    s += ra * arena[mo + 6 * a + b] * arena[ro + 3 * c + b]
            s -= p[r] * h[c] + h[r] * p[c] + m * p[r] * p[c]
            if r == c:
                s += 2.0 * hp + m * pp
            I[io + 6 * r + c] = s
    g0, g1, g2 = h[0] + m * p[0], h[1] + m * p[1], h[2] + m * p[2]
    for r in range(3):
        for c in range(3):
            I[io + 6 * (r + 3) + c + 3] = m if r == c else 0.0 * m
    I[io + 3], I[io + 4], I[io + 5] = 0.0 * m, -g2, g1  # h× and its transpose
    I[io + 9], I[io + 10], I[io + 11] = g2, 0.0 * m, -g0
    I[io + 15], I[io + 16], I[io + 17] = -g1, g0, 0.0 * m
    for r in range(3):
        for c in range(3):
            I[io + 6 * (c + 3) + r] = I[io + 6 * r + c + 3]


@kernel
def scatter(rows, arena, v0, gravity, qd, qdd, nodes, inertias, cols, t):
    """Base to tips, per body: the world ``s_ι``, ``v``, ``α`` and the seeds (Eq. 10), ``ℐ``,
    ``ℐ v``, ``f = ℐ α + v ×* ℐ v`` and the body Coriolis matrix ``B = ½[Q + Q* + crfb(ℐ v)]``
    with ``Q = crf(v) ℐ`` (``B v = v ×* ℐ v``); ``v0``: where ``θ̇`` starts in the arena.
    ``cols`` zero on entry (:func:`sweeps` zeroes them); ``t``: the scratch :data:`ScatterWork`."""
    rows, arena, gravity, qd, qdd = borrowed(rows), borrowed(arena), borrowed(gravity), borrowed(qd), borrowed(qdd)
    nodes, inertias, cols, t = borrowed(nodes), borrowed(inertias), borrowed(cols), borrowed(t)
    S = cols[Columns.S]
    for k in range(rows.shape[0]):
        p, h, d = rows[k, Row.PARENT], rows[k, Row.NV], rows[k, Row.V] - v0
        ho, rec, no, io = rows[k, Row.H], rows[k, Row.RECORDS], Node.SIZE * k, Inertias.SIZE * k
        ro, po = rec + Record.rotation, rec + Record.position
        for i in range(ScatterWork.column):
            t[i] = 0.0
        for c in range(h):  # s = ⁰X_k S e_c = [R s_ω; R s_v + p × R s_ω]; t = v_J, a_J
            so, o = ho + 6 * c, 6 * (d + c)
            for i in range(3):
                r0, r1, r2 = arena[ro + 3 * i], arena[ro + 3 * i + 1], arena[ro + 3 * i + 2]
                S[o + i] = r0 * arena[so] + r1 * arena[so + 1] + r2 * arena[so + 2]
                S[o + 3 + i] = r0 * arena[so + 3] + r1 * arena[so + 4] + r2 * arena[so + 5]
            x0, x1, x2 = arena[po], arena[po + 1], arena[po + 2]
            S[o + 3] += x1 * S[o + 2] - x2 * S[o + 1]
            S[o + 4] += x2 * S[o] - x0 * S[o + 2]
            S[o + 5] += x0 * S[o + 1] - x1 * S[o]
            for i in range(6):
                t[ScatterWork.vJ + i] += S[o + i] * qd[d + c]
                t[ScatterWork.aJ + i] += S[o + i] * qdd[d + c]
        if p >= 0:  # 𝒱⁺ = v_℘, α⁺ = α_℘ (world coordinates: no transform)
            for i in range(6):
                t[ScatterWork.V_plus + i] = nodes[Node.SIZE * p + Node.v + i]
                t[ScatterWork.alpha_plus + i] = nodes[Node.SIZE * p + Node.alpha + i]
        else:  # 𝒱⁺ = 0, α⁺ = −a_g (its linear part)
            for i in range(3):
                t[ScatterWork.alpha_plus + 3 + i] = -gravity[i]
        vo, ao = no + Node.v, no + Node.alpha
        for i in range(6):  # v = 𝒱⁺ + v_J, α = α⁺ + a_J + v × v_J
            nodes[vo + i] = t[ScatterWork.V_plus + i] + t[ScatterWork.vJ + i]
            nodes[ao + i] = t[ScatterWork.alpha_plus + i] + t[ScatterWork.aJ + i]
        _motion_cross(nodes, vo, t, ScatterWork.vJ, nodes, ao, 1.0)
        for c in range(h):  # the seeds (Eq. 10)
            o = 6 * (d + c)
            _motion_cross(t, ScatterWork.V_plus, S, o, cols[Columns.SIGMA_Q], o, 1.0)  # σ_θ = 𝒱⁺ × s
            _motion_cross(t, ScatterWork.alpha_plus, S, o, cols[Columns.RHO_Q], o, 1.0)  # ϱ_θ = α⁺ × s + 𝒱⁺ × σ_θ
            _motion_cross(t, ScatterWork.V_plus, cols[Columns.SIGMA_Q], o, cols[Columns.RHO_Q], o, 1.0)
            for i in range(6):
                cols[Columns.SIGMA_V, o + i] = S[o + i]  # σ_θ̇ = s
            _motion_cross(nodes, vo, S, o, cols[Columns.RHO_V], o, 1.0)  # ϱ_θ̇ = (v + 𝒱⁺) × s
            _motion_cross(t, ScatterWork.V_plus, S, o, cols[Columns.RHO_V], o, 1.0)
        _world_inertia(arena, rows[k, Row.M], ro, po, inertias, io)
        fo, Io = no + Node.f, no + Node.Iv
        for r in range(6):  # ℐ v, ℐ α
            x, y = 0.0 * t[0], 0.0 * t[0]
            for c in range(6):
                x += inertias[io + 6 * r + c] * nodes[vo + c]
                y += inertias[io + 6 * r + c] * nodes[ao + c]
            nodes[Io + r], nodes[fo + r] = x, y
        _force_cross(nodes, vo, nodes, Io, nodes, fo)  # f = ℐ α + v ×* ℐ v
        Bo = io + Inertias.B
        n0, n1, n2, f0, f1, f2 = (0.5 * nodes[Io], 0.5 * nodes[Io + 1], 0.5 * nodes[Io + 2], 0.5 * nodes[Io + 3],
                                  0.5 * nodes[Io + 4], 0.5 * nodes[Io + 5])
        for i in range(36):  # ½ crfb(ℐ v) = ½ [[−n×, −f×], [−f×, 0]]
            inertias[Bo + i] = 0.0 * t[0]
        for (r0, c0, x0, x1, x2) in ((0, 0, n0, n1, n2), (0, 3, f0, f1, f2), (3, 0, f0, f1, f2)):
            b = Bo + 6 * r0 + c0
            inertias[b + 1], inertias[b + 2] = x2, -x1
            inertias[b + 6], inertias[b + 8] = -x2, x0
            inertias[b + 12], inertias[b + 13] = x1, -x0
        for c in range(6):  # + ½ (Q + Q*), column c of Q = v ×* ℐ e_c
            for i in range(6):
                t[ScatterWork.column + i] = inertias[io + 6 * i + c]
                t[ScatterWork.product + i] = 0.0 * t[0]
            _force_cross(nodes, vo, t, ScatterWork.column, t, ScatterWork.product)
            for i in range(6):
                inertias[Bo + 6 * i + c] += 0.5 * t[ScatterWork.product + i]
                inertias[Bo + 6 * c + i] += 0.5 * t[ScatterWork.product + i]


@kernel
def sweeps(rows, arena, v0, gravity, qd, qdd, nodes, inertias, cols, t):
    """The seeds and composites at one state: :func:`scatter` (from zeroed columns), then
    :func:`gather`."""
    for r in range(cols.shape[0]):
        for i in range(cols.shape[1]):
            cols[r, i] = 0.0
    scatter(rows, arena, v0, gravity, qd, qdd, nodes, inertias, cols, t)
    gather(rows, nodes, inertias)


@kernel
def gather(rows, nodes, inertias):
    """Tips to base: ``f``, ``ℛ`` and ``𝔅`` of every body summed into its parent's (Eq. 10, world
    coordinates)."""
    rows, nodes, inertias = borrowed(rows), borrowed(nodes), borrowed(inertias)
    for k in range(rows.shape[0] - 1, -1, -1):
        p = rows[k, Row.PARENT]
        if p >= 0:
            for i in range(6):
                nodes[Node.SIZE * p + Node.f + i] += nodes[Node.SIZE * k + Node.f + i]
            for i in range(Inertias.SIZE):
                inertias[Inertias.SIZE * p + i] += inertias[Inertias.SIZE * k + i]


@kernel
def walks(rows, v0, nodes, inertias, cols, t, dq, dv, M, partials):
    """``∂T/∂θ`` (``dq``), ``∂T/∂θ̇`` (``dv``) and ``ℳ`` (``nv × nv``, ``dq``, ``dv`` zero on
    entry) from the composites and seeds (Eq. 11–12): each body's columns against its own and
    its ancestors' rows and the other way round; ``t``: :data:`WalkColumn` per column of ``k``. Without
    ``partials``, ``ℳ`` only (Eq. 14)."""
    rows, nodes, inertias, cols, t = borrowed(rows), borrowed(nodes), borrowed(inertias), borrowed(cols), borrowed(t)
    dq, dv, M = borrowed(dq), borrowed(dv), borrowed(M)
    S, sq, rq, sv, rv = cols[Columns.S], cols[Columns.SIGMA_Q], cols[Columns.RHO_Q], cols[Columns.SIGMA_V], \
        cols[Columns.RHO_V]
    for i in range(rows.shape[0]):
        h, di = rows[i, Row.NV], rows[i, Row.V] - v0
        Ro, Bo, fo = Inertias.SIZE * i + Inertias.R, Inertias.SIZE * i + Inertias.B, Node.SIZE * i + Node.f
        for c in range(h):  # per column c of i: Y = ℛ s, Z = 2 𝔅* s, gq = ℛ ϱ_θ + 2 𝔅 σ_θ + s ×* f, gv
            o, w = 6 * (di + c), WalkColumn.SIZE * c
            for k in range(6):
                y, z, gq, gv = 0.0 * S[o], 0.0 * S[o], 0.0 * S[o], 0.0 * S[o]
                for r in range(6):
                    Rkr, Bkr, Brk = inertias[Ro + 6 * k + r], inertias[Bo + 6 * k + r], inertias[Bo + 6 * r + k]
                    y += Rkr * S[o + r]
                    z += Brk * S[o + r]
                    gq += Rkr * rq[o + r] + 2.0 * Bkr * sq[o + r]
                    gv += Rkr * rv[o + r] + 2.0 * Bkr * sv[o + r]
                t[w + WalkColumn.Y + k], t[w + WalkColumn.Z + k] = y, 2.0 * z
                t[w + WalkColumn.gq + k], t[w + WalkColumn.gv + k] = gq, gv
            _force_cross(S, o, nodes, fo, t, w + WalkColumn.gq)
        j = i
        while j >= 0:
            hj, dj = rows[j, Row.NV], rows[j, Row.V] - v0
            for c in range(h):
                w = WalkColumn.SIZE * c
                for cj in range(hj):
                    oj = 6 * (dj + cj)
                    m = 0.0 * S[oj]
                    for k in range(6):
                        m += S[oj + k] * t[w + WalkColumn.Y + k]
                    M[di + c, dj + cj] = m
                    M[dj + cj, di + c] = m
                    if not partials:
                        continue
                    x_q, x_v = 0.0 * S[oj], 0.0 * S[oj]
                    for k in range(6):
                        y, z = t[w + WalkColumn.Y + k], t[w + WalkColumn.Z + k]
                        x_q += y * rq[oj + k] + z * sq[oj + k]
                        x_v += y * rv[oj + k] + z * sv[oj + k]
                    dq[di + c, dj + cj] += x_q
                    dv[di + c, dj + cj] += x_v
                    if j != i:  # rows of the strict ancestors, columns of i
                        g_q, g_v = 0.0 * S[oj], 0.0 * S[oj]
                        for k in range(6):
                            g_q += S[oj + k] * t[w + WalkColumn.gq + k]
                            g_v += S[oj + k] * t[w + WalkColumn.gv + k]
                        dq[dj + cj, di + c] += g_q
                        dv[dj + cj, di + c] += g_v
            j = rows[j, Row.PARENT]


# ----------------------------------------------------------------------------- forward dynamics
@kernel
def joint_forces(rows, v0, nodes, cols, T):
    """``T = H f``: each hinge column's ``s · f`` of its body's gathered force (world coordinates)."""
    rows, nodes, cols, T = borrowed(rows), borrowed(nodes), borrowed(cols), borrowed(T)
    S = cols[Columns.S]
    for k in range(rows.shape[0]):
        d, fo = rows[k, Row.V] - v0, Node.SIZE * k + Node.f
        for c in range(rows[k, Row.NV]):
            x = 0.0 * S[0]
            for i in range(6):
                x += S[6 * (d + c) + i] * nodes[fo + i]
            T[d + c] = x


@kernel
def tree_positions(rows, v0, last, perm, lam):
    """The hinge columns in the rows' order (parent first), where the sparse ``Lᵀ D L`` of ``ℳ``
    runs (SPARSE.md): ``perm[u]`` is the column at position ``u`` and ``lam[u]`` the position of
    its parent column (the previous column of its body, else the last column of its nearest
    ancestor with one; −1 at a base), both as numbers of the workspace's type; ``last[k]``: that
    last column at or above the body of row ``k``."""
    rows, last, perm, lam = borrowed(rows), borrowed(last), borrowed(perm), borrowed(lam)
    u = 0
    for k in range(rows.shape[0]):
        p, h, d = rows[k, Row.PARENT], rows[k, Row.NV], rows[k, Row.V] - v0
        above = last[p] if p >= 0 else -1.0
        for c in range(h):
            perm[u] = d + c
            lam[u] = above if c == 0 else u - 1
            u += 1
        last[k] = u - 1 if h > 0 else above


@kernel
def ltdl(A, lam):
    """``A = Lᵀ D L`` in place (``A`` at positions; ``L`` strictly below the diagonal, ``D`` on
    it), the sparse factorization along the parent columns ``lam`` (SPARSE.md): −1, or the
    position whose pivot is not positive."""
    A, lam = borrowed(A), borrowed(lam)
    for k in range(A.shape[0] - 1, -1, -1):
        if not A[k, k].real > 0:
            return k
        i = int(lam[k].real)
        while i >= 0:
            a = A[k, i] / A[k, k]
            j = i
            while j >= 0:
                A[i, j] -= a * A[k, j]
                j = int(lam[j].real)
            A[k, i] = a
            i = int(lam[i].real)
    return -1


@kernel
def row_of_column(rows, v0, column):
    """The row of the body whose hinge holds ``column`` (of ``θ̇``)."""
    for k in range(rows.shape[0]):
        d = rows[k, Row.V] - v0
        if d <= column < d + rows[k, Row.NV]:
            return k
    return -1


@kernel
def ltdl_solve(A, lam, X):
    """``X ← ℳ⁻¹ X`` from the factor of :func:`ltdl` (rows of ``X`` at positions, any number of
    columns): ``L⁻¹ D⁻¹ L⁻ᵀ X`` by row operations along the parent columns, each a loop over
    the columns of ``X``."""
    A, lam, X = borrowed(A), borrowed(lam), borrowed(X)
    n, m = X.shape[0], X.shape[1]
    for i in range(n - 1, -1, -1):
        j = int(lam[i].real)
        while j >= 0:
            a = A[i, j]
            for c in range(m):
                X[j, c] -= a * X[i, c]
            j = int(lam[j].real)
    for i in range(n):
        a = 1.0 / A[i, i]
        for c in range(m):
            X[i, c] *= a
    for i in range(n):
        j = int(lam[i].real)
        while j >= 0:
            a = A[i, j]
            for c in range(m):
                X[i, c] -= a * X[j, c]
            j = int(lam[j].real)

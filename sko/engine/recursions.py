"""numba kernels of the O(N) recursions on a flat model (layout in :mod:`sko.engine.layout`).

Every kernel takes the ``layout`` table and a ``data`` buffer (float64 or complex128; the
stacked vectors have the same scalar type) and runs the gather (``j = N−1 … 0``) and scatter
(``j = 0 … N−1``) passes of SKO.md as written there, on blocks of any shape stored row-major at
the layout's offsets (:mod:`sko.engine.blocks`). Each body is visited once per pass: O(N). A rigid body on
a 1-dof hinge takes the register forms of :mod:`sko.engine.rigid_blocks` (``rigid_step``). Every kernel
works on :func:`~.borrow.borrowed` views of its array arguments, so the per-body steps count no
references. The Riccati results live in a second buffer ``r`` (:func:`~sko.engine.layout.riccati_layout`);
the system requests' articulated-body passes read only ``P``, ``D^{-1}`` and ``G``: without
:func:`riccati`'s ``full``, ``ψ`` and a rigid step's ``P⁺`` are not written.
"""

from __future__ import annotations

import numpy as np

from sko.engine import blocks as bl
from sko.engine import rigid_blocks as rb
from sko.engine.borrow import borrowed, matrix_view
from sko.engine.fields import offsets
from sko.engine.layout import Flat, Riccati
from sko.engine.jit import kernel, register

__all__ = ["RiccatiScratch", "spo", "joint_map", "newton_euler", "composite_inertias", "mass_matrix", "riccati",
           "riccati_scratch", "articulated_body", "gain_apply", "hinge_blocks", "max_dims"]


#: The scratch of a Riccati step of any dimensions, in blocks of ``mx × mx`` entries (``mx`` the
#: largest node or hinge dimension): ``H P``, ``L``, ``L^{-1}``, ``Y = L^{-1} H P`` and four for ``T1``.
RiccatiScratch = offsets("RiccatiScratch", HP=1, L=1, Li=1, Y=1, T1=4)

@register
def _largest(layout, column):
    """The largest entry of a layout column, at least 1 (scratch sizes; empty models too)."""
    out = 1
    for j in range(layout.shape[0]):
        out = max(out, layout[j, column])
    return out


def max_dims(layout) -> tuple[int, int]:
    """``(max m_k, max n_k)``, each at least 1."""
    return (max(1, int(layout[:, Flat.NODE_DIM].max(initial=0))),
            max(1, int(layout[:, Flat.HINGE_DIM].max(initial=0))))


# ----------------------------------------------------------------------------- SPO products
@kernel(entry=True)
def spo(layout, wdata, woff, x, y, star, tilde):
    """``y = φ x`` (gather), ``φ* x`` (scatter), ``φ̃ x``, ``φ̃* x`` (Lemmas 1, 2, Cor. 3.1) for the
    weights at offsets ``woff`` of ``wdata``. ``y`` is zero on entry."""
    layout, wdata, woff, x, y = borrowed(layout), borrowed(wdata), borrowed(woff), borrowed(x), borrowed(y)
    n = layout.shape[0]
    if not tilde:
        for i in range(x.shape[0]):
            y[i] = x[i]
    if not star:
        for j in range(n - 1, -1, -1):  # gather: y(℘(j)) += φ(℘(j), j) [y(j) (+ x(j))]
            p = layout[j, Flat.PARENT]
            if p >= 0:
                mp, m, o = layout[p, Flat.NODE_DIM], layout[j, Flat.NODE_DIM], woff[j]
                bl.mv(wdata, o, mp, m, y, layout[j, Flat.NODE], y, layout[p, Flat.NODE])
                if tilde:
                    bl.mv(wdata, o, mp, m, x, layout[j, Flat.NODE], y, layout[p, Flat.NODE])
    else:
        for j in range(n):  # scatter: y(j) (+)= φ*(℘(j), j) [y(℘(j)) (+ x(℘(j)))]
            p = layout[j, Flat.PARENT]
            if p >= 0:
                mp, m, o = layout[p, Flat.NODE_DIM], layout[j, Flat.NODE_DIM], woff[j]
                bl.mtv(wdata, o, mp, m, y, layout[p, Flat.NODE], y, layout[j, Flat.NODE])
                if tilde:
                    bl.mtv(wdata, o, mp, m, x, layout[p, Flat.NODE], y, layout[j, Flat.NODE])


@kernel(entry=True)
def joint_map(layout, data, x, y, star):
    """``y = H x`` (node → hinge) or ``y = H* x`` (hinge → node); ``y`` zero on entry."""
    layout, data, x, y = borrowed(layout), borrowed(data), borrowed(x), borrowed(y)
    for j in range(layout.shape[0]):
        h, m = layout[j, Flat.HINGE_DIM], layout[j, Flat.NODE_DIM]
        if star:
            bl.mtv(data, layout[j, Flat.H], h, m, x, layout[j, Flat.DOF], y, layout[j, Flat.NODE])
        else:
            bl.mv(data, layout[j, Flat.H], h, m, x, layout[j, Flat.NODE], y, layout[j, Flat.DOF])


# ----------------------------------------------------------------------------- Newton–Euler
@kernel(entry=True)
def newton_euler(layout, data, qdd, qd, nodes, T, with_V):
    """Algorithm 3.1 with ``a``, ``b`` from the data buffer: ``nodes[0] = 𝒱`` (if ``with_V``),
    ``nodes[1] = α``, ``nodes[2] = f``, ``T = H f``. Outputs are zero on entry."""
    layout, data, qdd, qd, nodes, T = (borrowed(layout), borrowed(data), borrowed(qdd), borrowed(qd), borrowed(nodes),
                                       borrowed(T))
    V, alpha, f = nodes[0], nodes[1], nodes[2]
    n = layout.shape[0]
    for j in range(n):  # scatter: α = φ* α(℘) + H* θ̈ + a, f = M α + b (𝒱 = φ* 𝒱(℘) + H* θ̇)
        p, m, h, no, do = (layout[j, Flat.PARENT], layout[j, Flat.NODE_DIM], layout[j, Flat.HINGE_DIM],
                           layout[j, Flat.NODE], layout[j, Flat.DOF])
        if not with_V and rb.rigid_step(layout, j, p):
            rb.newton_euler_scatter_6_1(layout, data, qdd, alpha, f, j, p)
            continue
        if p >= 0:
            mp, npo = layout[p, Flat.NODE_DIM], layout[p, Flat.NODE]
            bl.mtv(data, layout[j, Flat.W], mp, m, alpha, npo, alpha, no)
            if with_V:
                bl.mtv(data, layout[j, Flat.W], mp, m, V, npo, V, no)
        bl.mtv(data, layout[j, Flat.H], h, m, qdd, do, alpha, no)
        if with_V:
            bl.mtv(data, layout[j, Flat.H], h, m, qd, do, V, no)
        ao, bo = layout[j, Flat.A], layout[j, Flat.B]
        for i in range(m):
            alpha[no + i] += data[ao + i]
            f[no + i] = data[bo + i]
        bl.mv(data, layout[j, Flat.M], m, m, alpha, no, f, no)
    for j in range(n - 1, -1, -1):  # gather: T(j) = H f(j), f(℘) += φ f(j)
        p, m, no = layout[j, Flat.PARENT], layout[j, Flat.NODE_DIM], layout[j, Flat.NODE]
        if rb.rigid_step(layout, j, p):  # f(j) in registers
            f0, f1, f2, f3, f4, f5 = f[no], f[no + 1], f[no + 2], f[no + 3], f[no + 4], f[no + 5]
            T[layout[j, Flat.DOF]] += rb.dot6(data, layout[j, Flat.H], 1, f0, f1, f2, f3, f4, f5)
            if p >= 0:
                y, npo = rb.times(data, layout[j, Flat.W], (f0, f1, f2, f3, f4, f5)), layout[p, Flat.NODE]
                for i in range(6):
                    f[npo + i] += y[i]
            continue
        bl.mv(data, layout[j, Flat.H], layout[j, Flat.HINGE_DIM], m, f, no, T, layout[j, Flat.DOF])
        if p >= 0:
            bl.mv(data, layout[j, Flat.W], layout[p, Flat.NODE_DIM], m, f, no, f, layout[p, Flat.NODE])


# ----------------------------------------------------------------------------- composite inertias, CRBA
@kernel(entry=True)
def composite_inertias(layout, data, R, tmp):
    """``ℛ(k) = Σ_{j ∈ C(k)} φ(k, j) ℛ(j) φ*(k, j) + M(k)`` (Algorithm 4.1) at the ``M`` offsets
    of ``R`` (a buffer of the data's length); ``tmp`` holds ``max m_k²`` entries."""
    layout, data, R, tmp = borrowed(layout), borrowed(data), borrowed(R), borrowed(tmp)
    n = layout.shape[0]
    for j in range(n):
        m = layout[j, Flat.NODE_DIM]
        bl.copy_block(data, layout[j, Flat.M], R, layout[j, Flat.M], m * m)
    for j in range(n - 1, -1, -1):
        p = layout[j, Flat.PARENT]
        if p >= 0:
            mp, m, wo = layout[p, Flat.NODE_DIM], layout[j, Flat.NODE_DIM], layout[j, Flat.W]
            if mp == 6 and m == 6:
                rb.congruence66(data, wo, R, layout[j, Flat.M], R, layout[p, Flat.M])  # ℛ(℘) += φ ℛ(j) φ*
            else:
                bl.ab(data, wo, R, layout[j, Flat.M], tmp, 0, mp, m, m)  # φ ℛ(j)
                bl.abt_add(tmp, 0, data, wo, R, layout[p, Flat.M], mp, m, mp)


@kernel(entry=True)
def mass_matrix(layout, data, R, out, F, Y):
    """Algorithm 4.2 from the composite inertias ``R``, ``ℳ(j, k) = H(j) φ(j, k) ℛ(k) H*(k)`` for
    ``k`` in the subtree of ``j``, in block form: a gather (``k = N−1 … 0``) keeps the columns
    ``φ(k, i) ℛ(i) H*(i)`` of every ``i`` in the subtree of ``k`` in ``F`` (``max m × nv``, the
    hinge columns in the preorder of the layout's ``COL``, so a subtree is one range of columns);
    at ``k`` it adds ``k``'s own columns ``ℛ(k) H*(k)``, writes the row ``H(k) F`` of the subtree
    and carries the range to the parent, ``F ← φ(℘(k), k) F``: the columns of a step are
    independent, where a column walked alone up its ancestors is one chain of dependent products.
    ``Y`` is scratch of ``F``'s size; only blocks of related pairs are written."""
    layout, data, R, out, F, Y = (borrowed(layout), borrowed(data), borrowed(R), borrowed(out), borrowed(F),
                                  borrowed(Y))
    nv = out.shape[0]
    for k in range(layout.shape[0] - 1, -1, -1):
        m, h, ck, sub = layout[k, Flat.NODE_DIM], layout[k, Flat.HINGE_DIM], layout[k, Flat.COL], layout[k, Flat.SUB]
        if sub == 0:
            continue
        ho, ro = layout[k, Flat.H], layout[k, Flat.M]
        dk, first, last = layout[k, Flat.DOF], layout[k, Flat.PRE], layout[k, Flat.PRE] + layout[k, Flat.SUBN]
        if m == 6:  # rows of H(k) in registers
            for c in range(h):  # F(:, own) = ℛ(k) H*(k)
                h0, h1, h2, h3, h4, h5 = rb.row6(data, ho + 6 * c)
                for r in range(6):
                    F[r * nv + ck + c] = rb.dot6(R, ro + 6 * r, 1, h0, h1, h2, h3, h4, h5)
            for r in range(h):  # ℳ(k, i) = H(k) F(:, i), and its transpose
                h0, h1, h2, h3, h4, h5 = rb.row6(data, ho + 6 * r)
                for at in range(first, last):
                    i = layout[at, Flat.PREORDER]
                    col, di = layout[i, Flat.COL], layout[i, Flat.DOF]
                    for c in range(layout[i, Flat.HINGE_DIM]):
                        s = rb.dot6(F, col + c, nv, h0, h1, h2, h3, h4, h5)
                        out[dk + r, di + c] = s
                        out[di + c, dk + r] = s
        else:
            for r in range(m):  # F(:, own) = ℛ(k) H*(k)
                for c in range(h):
                    s = 0.0  # widened to complex on the complex path; F is stale from the last call
                    for i in range(m):
                        s += R[ro + r * m + i] * data[ho + c * m + i]
                    F[r * nv + ck + c] = s
            for at in range(first, last):  # ℳ(k, i) = H(k) F(:, i), and its transpose
                i = layout[at, Flat.PREORDER]
                for c in range(layout[i, Flat.HINGE_DIM]):
                    col, di = layout[i, Flat.COL] + c, layout[i, Flat.DOF] + c
                    for r in range(h):
                        s = 0.0
                        for l in range(m):
                            s += data[ho + r * m + l] * F[l * nv + col]
                        out[dk + r, di] = s
                        out[di, dk + r] = s
        p = layout[k, Flat.PARENT]
        if p < 0:
            continue
        mp, wo = layout[p, Flat.NODE_DIM], layout[k, Flat.W]
        if mp == 6 and m == 6:
            rb.carry66(data, wo, F, nv, ck, ck + sub)
        else:  # F(:, subtree) ← φ(℘(k), k) F(:, subtree), through Y
            for r in range(mp):
                for c in range(ck, ck + sub):
                    s = 0.0
                    for l in range(m):
                        s += data[wo + r * m + l] * F[l * nv + c]
                    Y[r * nv + c] = s
            for r in range(mp):
                for c in range(ck, ck + sub):
                    F[r * nv + c] = Y[r * nv + c]


# ----------------------------------------------------------------------------- Riccati
@kernel(entry=True)
def riccati(layout, data, roff, r, scratch, full):
    """The Riccati gather (Eq. 33) into ``r`` (:func:`~sko.engine.layout.riccati_layout`); ``ψ(℘(k), k)`` only
    if ``full``, and ``P⁺(k)`` of a rigid body on a 1-dof hinge too: Algorithm 6.1 reads neither.

    ``D(k)`` is factored by Cholesky without conjugation (complex-step data: the pivots' real
    parts decide definiteness). Returns ``(j, log det ℳ)``: ``j`` is −1, or the flat node whose
    ``D`` is not positive definite or not finite (the caller reports it). ``scratch`` holds
    :func:`riccati_scratch` entries."""
    layout, data, roff, r, scratch = (borrowed(layout), borrowed(data), borrowed(roff), borrowed(r),
                                      borrowed(scratch))
    logdet = 0.0  # not scratch[0] * 0: the scratch holds the last call's values
    mx = 0  # the blocks' size in the scratch (RiccatiScratch): found at the first node that needs it
    for j in range(layout.shape[0]):  # P(k) starts as M(k)
        m = layout[j, Flat.NODE_DIM]
        bl.copy_block(data, layout[j, Flat.M], r, roff[j, Riccati.P], m * m)
    for j in range(layout.shape[0] - 1, -1, -1):
        if rb.rigid_step(layout, j, layout[j, Flat.PARENT]):
            d = rb.riccati_6_1(layout, data, roff, r, j, full)
            if not (d.real > 0) or not (abs(d) < np.inf):
                return j, logdet
            logdet += np.log(d)
        else:
            if mx == 0:
                mx = max(_largest(layout, Flat.NODE_DIM), _largest(layout, Flat.HINGE_DIM))
            ok, step = _riccati_step(layout, data, roff, r, scratch, mx, j, full)
            if not ok:
                return j, logdet
            logdet += step
    return -1, logdet


@kernel
def _riccati_step(layout, data, roff, r, scratch, mx, j, full):
    """The step of :func:`riccati` at node ``j`` of any dimensions: ``D = H P H*``, its
    Cholesky factor ``L`` and ``L^{-1}``, ``D^{-1}``, ``G = P H* D^{-1}``, ``P⁺ = P − G H P``, and
    ``P(℘) += φ P⁺ φ*`` (``ψ = φ − φ G H`` if ``full``); the scratch's blocks (:data:`RiccatiScratch`)
    are ``mx × mx``. Returns ``(ok, log det D)``."""
    p, m, h, ho = layout[j, Flat.PARENT], layout[j, Flat.NODE_DIM], layout[j, Flat.HINGE_DIM], layout[j, Flat.H]
    q = mx * mx
    HP, L = scratch[RiccatiScratch.HP * q: RiccatiScratch.L * q], scratch[RiccatiScratch.L * q: RiccatiScratch.Li * q]
    Li, Y = scratch[RiccatiScratch.Li * q: RiccatiScratch.Y * q], scratch[RiccatiScratch.Y * q: RiccatiScratch.T1 * q]
    T1 = scratch[RiccatiScratch.T1 * q: RiccatiScratch.SIZE * q]
    Po, Do, DIo = roff[j, Riccati.P], roff[j, Riccati.D], roff[j, Riccati.D_INVERSE]
    Go, PPo = roff[j, Riccati.G], roff[j, Riccati.P_PLUS]
    logdet = 0.0
    bl.ab(data, ho, r, Po, HP, 0, h, m, m)  # H P
    for a_ in range(h):  # D = (H P) H*
        for b_ in range(h):
            s = 0.0
            for i in range(m):
                s += HP[a_ * m + i] * data[ho + b_ * m + i]
            r[Do + a_ * h + b_] = s
    for a_ in range(h):  # Cholesky D = L L* (lower, no conjugation)
        for b_ in range(a_ + 1):
            s = r[Do + a_ * h + b_]
            for i in range(b_):
                s -= L[a_ * h + i] * L[b_ * h + i]
            if a_ == b_:
                if not (s.real > 0) or not (abs(s) < np.inf):
                    return False, logdet
                L[a_ * h + a_] = np.sqrt(s)
            else:
                L[a_ * h + b_] = s / L[b_ * h + b_]
        for b_ in range(a_ + 1, h):
            L[a_ * h + b_] = 0
        logdet += 2 * np.log(L[a_ * h + a_])
    for a_ in range(h):  # Li = L^{-1} (lower)
        for b_ in range(h):
            Li[a_ * h + b_] = 0
        Li[a_ * h + a_] = 1 / L[a_ * h + a_]
        for b_ in range(a_):
            s = 0.0
            for i in range(b_, a_):
                s += L[a_ * h + i] * Li[i * h + b_]
            Li[a_ * h + b_] = -s / L[a_ * h + a_]
    for a_ in range(h):  # D^{-1} = Li* Li
        for b_ in range(h):
            s = 0.0
            for i in range(max(a_, b_), h):
                s += Li[i * h + a_] * Li[i * h + b_]
            r[DIo + a_ * h + b_] = s
    bl.ab(Li, 0, HP, 0, Y, 0, h, h, m)  # Y = Li H P
    for c in range(m):  # G = (Li* Y)*, m × h
        for a_ in range(h):
            s = 0.0
            for i in range(a_, h):
                s += Li[i * h + a_] * Y[i * m + c]
            r[Go + c * h + a_] = s
    for a_ in range(m):  # P⁺ = P − Y* Y
        for b_ in range(m):
            s = r[Po + a_ * m + b_]
            for i in range(h):
                s -= Y[i * m + a_] * Y[i * m + b_]
            r[PPo + a_ * m + b_] = s
    if p >= 0:
        mp, wo, so = layout[p, Flat.NODE_DIM], layout[j, Flat.W], roff[j, Riccati.PSI]
        if full:
            bl.ab(data, wo, r, Go, T1, 0, mp, m, h)  # K = φ G, m_℘ × h
            for a_ in range(mp):  # ψ = φ − K H
                for b_ in range(m):
                    s = data[wo + a_ * m + b_]
                    for i in range(h):
                        s -= T1[a_ * h + i] * data[ho + i * m + b_]
                    r[so + a_ * m + b_] = s
        bl.ab(data, wo, r, PPo, T1, 0, mp, m, m)  # φ P⁺
        bl.abt_add(T1, 0, data, wo, r, roff[p, Riccati.P], mp, m, mp)  # P(℘) += φ P⁺ φ*
    return True, logdet


def riccati_scratch(layout, dtype) -> np.ndarray:
    """The scratch buffer of :func:`riccati` for this layout."""
    mx = max(max_dims(layout))
    return np.zeros(RiccatiScratch.SIZE * mx * mx, dtype=dtype)


# ----------------------------------------------------------------------------- Algorithm 6.1
@kernel(entry=True)
def articulated_body(layout, data, roff, r, T, with_ab, z, out, eps):
    """The gather and scatter of Algorithm 6.1 (Eq. 58) for 2-D ``T`` (columns = right-hand
    sides), ``a``, ``b`` from the data buffer if ``with_ab``; ``z`` (node_size × r) and ``out``
    are zero on entry. ``out`` receives ν in the gather and θ̈ in the scatter; ``z`` is reused
    for α; ``eps`` is scratch for one ε(k) (at least ``max n_k × r`` entries). With one right-hand
    side, a rigid body on a 1-dof hinge takes the register steps of :mod:`sko.engine.rigid_blocks`."""
    layout, data, roff, r, T, z, out = (borrowed(layout), borrowed(data), borrowed(roff), borrowed(r), borrowed(T),
                                        borrowed(z), borrowed(out))
    n, nr = layout.shape[0], T.shape[1]
    if with_ab:
        for j in range(n):  # z(k) = P(k) a(k) + b(k)
            m, no, ao, bo = layout[j, Flat.NODE_DIM], layout[j, Flat.NODE], layout[j, Flat.A], layout[j, Flat.B]
            Po = roff[j, Riccati.P]
            if nr == 1 and m == 6:
                Pa = rb.times(r, Po, (data[ao], data[ao + 1], data[ao + 2], data[ao + 3], data[ao + 4], data[ao + 5]))
                for a_ in range(6):
                    z[no + a_, 0] = data[bo + a_] + Pa[a_]
                continue
            for a_ in range(m):
                s = data[bo + a_]
                for i in range(m):
                    s += r[Po + a_ * m + i] * data[ao + i]
                for q in range(nr):
                    z[no + a_, q] = s
    eps = matrix_view(borrowed(eps), 0, _largest(layout, Flat.HINGE_DIM), nr)
    for j in range(n - 1, -1, -1):  # gather: ε = T − H z, ν = D^{-1} ε, z(℘) += φ (z + G ε)
        p, m, h = layout[j, Flat.PARENT], layout[j, Flat.NODE_DIM], layout[j, Flat.HINGE_DIM]
        no, do = layout[j, Flat.NODE], layout[j, Flat.DOF]
        if nr == 1 and rb.rigid_step(layout, j, p):
            rb.articulated_gather_6_1(layout, data, roff, r, T, z, out, j, p)
            continue
        for a_ in range(h):
            for q in range(nr):
                eps[a_, q] = T[do + a_, q]
        bl.mv2(data, layout[j, Flat.H], h, m, z, no, eps, 0, -1.0)  # ε = T − H z
        bl.mv2(r, roff[j, Riccati.D_INVERSE], h, h, eps, 0, out, do, 1.0)  # ν = D^{-1} ε
        bl.mv2(r, roff[j, Riccati.G], m, h, eps, 0, z, no, 1.0)  # z⁺ = z + G ε
        if p >= 0:
            bl.mv2(data, layout[j, Flat.W], layout[p, Flat.NODE_DIM], m, z, no, z, layout[p, Flat.NODE], 1.0)
    for j in range(n):  # scatter: α⁺ = φ* α(℘), θ̈ = ν − G* α⁺, α = α⁺ + H* θ̈ (+ a)
        p, m, h = layout[j, Flat.PARENT], layout[j, Flat.NODE_DIM], layout[j, Flat.HINGE_DIM]
        no, do = layout[j, Flat.NODE], layout[j, Flat.DOF]
        if nr == 1 and rb.rigid_step(layout, j, p):
            rb.articulated_scatter_6_1(layout, data, roff, r, z, out, with_ab, j, p)
            continue
        for a_ in range(m):
            for q in range(nr):
                z[no + a_, q] = 0
        if p >= 0:
            bl.mtv2(data, layout[j, Flat.W], layout[p, Flat.NODE_DIM], m, z, layout[p, Flat.NODE], z, no, 1.0)
        bl.mtv2(r, roff[j, Riccati.G], m, h, z, no, out, do, -1.0)
        bl.mtv2(data, layout[j, Flat.H], h, m, out, do, z, no, 1.0)
        if with_ab:
            ao = layout[j, Flat.A]
            for a_ in range(m):
                for q in range(nr):
                    z[no + a_, q] += data[ao + a_]


# ----------------------------------------------------------------------------- innovations
@kernel(entry=True)
def gain_apply(layout, data, roff, r, x, y, t, star):
    """``y = K x`` (``y(℘(k)) += φ(℘(k), k) G(k) x(k)``, hinge → node) or ``y = K* x``
    (``y(k) = G*(k) φ*(℘(k), k) x(℘(k))``, node → hinge); ``y`` zero on entry, ``t`` scratch of
    ``max m_k`` entries."""
    layout, data, roff, r, x, y, t = (borrowed(layout), borrowed(data), borrowed(roff), borrowed(r), borrowed(x),
                                      borrowed(y), borrowed(t))
    for j in range(layout.shape[0]):
        p = layout[j, Flat.PARENT]
        if p < 0:
            continue
        m, h, mp = layout[j, Flat.NODE_DIM], layout[j, Flat.HINGE_DIM], layout[p, Flat.NODE_DIM]
        for i in range(m):
            t[i] = 0
        if star:
            bl.mtv(data, layout[j, Flat.W], mp, m, x, layout[p, Flat.NODE], t, 0)
            bl.mtv(r, roff[j, Riccati.G], m, h, t, 0, y, layout[j, Flat.DOF])
        else:
            bl.mv(r, roff[j, Riccati.G], m, h, x, layout[j, Flat.DOF], t, 0)
            bl.mv(data, layout[j, Flat.W], mp, m, t, 0, y, layout[p, Flat.NODE])


@kernel(entry=True)
def hinge_blocks(layout, r, offs, x, y):
    """``y = diag(X(k)) x`` for ``n_k × n_k`` blocks of ``r`` at ``offs`` (e.g. ``D``, ``D^{-1}``)."""
    layout, r, offs, x, y = borrowed(layout), borrowed(r), borrowed(offs), borrowed(x), borrowed(y)
    for j in range(layout.shape[0]):
        h, do = layout[j, Flat.HINGE_DIM], layout[j, Flat.DOF]
        bl.mv(r, offs[j], h, h, x, do, y, do)

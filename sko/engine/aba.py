"""numba kernels of the articulated body algorithm on a flat model: the Riccati gather of ``P``,
``D``, ``G``, ``K`` and ``ψ`` (SKO.md §8, Lemmas 7, 8), the articulated-body passes of forward
dynamics (§11, Algorithm 6.1) and the innovations products with the gains (§10). The Riccati
results live in a second buffer ``r`` (:func:`~sko.engine.layout.riccati_layout`); the system
requests' articulated-body passes read only ``P``, ``D^{-1}`` and ``G``: without
:func:`riccati`'s ``full``, ``ψ``, ``log det ℳ`` and a base body's ``G`` and ``P⁺`` are not
computed.

The conventions of every recursion kernel are those of :mod:`sko.engine` (*The recursions*).
"""

from __future__ import annotations

import numpy as np

from sko.engine import blocks as bl
from sko.engine import rigid_blocks as rb
from sko.engine.borrow import borrowed, matrix_view
from sko.engine.fields import offsets
from sko.engine.layout import Flat, Riccati, max_dims
from sko.engine.jit import kernel, register

__all__ = ["RiccatiScratch", "riccati", "riccati_scratch", "articulated_body", "articulated_gather",
           "articulated_scatter_step", "gain_apply", "hinge_blocks"]


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


@kernel(entry=True)
def riccati(layout, data, roff, r, scratch, full):
    """The Riccati gather (Eq. 33) into ``r`` (:func:`~sko.engine.layout.riccati_layout`); only if
    ``full``: ``ψ(℘(k), k)``, ``log det ℳ``, ``P⁺(k)`` of a rigid body on a 1-dof hinge at a root
    and ``G``, ``P⁺`` of a base body, none of which Algorithm 6.1 reads (a base body's ``G``
    multiplies ``α(℘) = 0``). Rigid bodies on 1-dof hinges, and without ``full`` a floating base
    (``H = I``), take the register steps of :mod:`sko.engine.rigid_blocks`.

    ``D(k)`` is factored by Cholesky without conjugation (complex-step data: the pivots' real
    parts decide definiteness). Returns ``(j, log det ℳ)`` (``0`` unless ``full``): ``j`` is −1,
    or the flat node whose ``D`` is not positive definite or not finite (the caller reports it).
    ``scratch`` holds :func:`riccati_scratch` entries."""
    layout, data, roff, r, scratch = (borrowed(layout), borrowed(data), borrowed(roff), borrowed(r),
                                      borrowed(scratch))
    logdet = 0.0  # not scratch[0] * 0: the scratch holds the last call's values
    mx = 0  # the blocks' size in the scratch (RiccatiScratch): found at the first node that needs it
    for j in range(layout.shape[0]):  # P(k) starts as M(k), slice to slice (a vector copy)
        size, mo, Po = layout[j, Flat.NODE_DIM] ** 2, layout[j, Flat.M], roff[j, Riccati.P]
        P, M = r[Po: Po + size], data[mo: mo + size]
        for i in range(size):
            P[i] = M[i]
    for j in range(layout.shape[0] - 1, -1, -1):
        p = layout[j, Flat.PARENT]
        if rb.rigid_step(layout, j, p):
            d = rb.riccati_6_1(layout, data, roff, r, j, full)
            if not (d.real > 0) or not (abs(d) < np.inf):
                return j, logdet
            if full:
                logdet += np.log(d)
        elif not full and rb.base_step(layout, j, p) and _identity(data, layout[j, Flat.H], 6):
            if not rb.riccati_6_6(r, roff[j, Riccati.P], roff[j, Riccati.D], roff[j, Riccati.D_INVERSE], scratch):
                return j, logdet
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
    """The step of :func:`riccati` at node ``j`` of any dimensions: ``D = H P H*`` (``P`` itself
    for ``H = I``, a free joint's), its Cholesky factor ``L`` and ``L^{-1}``, ``D^{-1}``, then
    (below a parent, or if ``full``) ``G = P H* D^{-1}``, ``P⁺ = P − G H P``, and
    ``P(℘) += φ P⁺ φ*`` (``ψ = φ − φ G H`` if ``full``); the scratch's blocks (:data:`RiccatiScratch`)
    are ``mx × mx``. Returns ``(ok, log det D)`` (``0`` unless ``full``)."""
    p, m, h, ho = layout[j, Flat.PARENT], layout[j, Flat.NODE_DIM], layout[j, Flat.HINGE_DIM], layout[j, Flat.H]
    q = mx * mx
    HP, L = scratch[RiccatiScratch.HP * q: RiccatiScratch.L * q], scratch[RiccatiScratch.L * q: RiccatiScratch.Li * q]
    Li, Y = scratch[RiccatiScratch.Li * q: RiccatiScratch.Y * q], scratch[RiccatiScratch.Y * q: RiccatiScratch.T1 * q]
    T1 = scratch[RiccatiScratch.T1 * q: RiccatiScratch.SIZE * q]
    Po, Do, DIo = roff[j, Riccati.P], roff[j, Riccati.D], roff[j, Riccati.D_INVERSE]
    Go, PPo = roff[j, Riccati.G], roff[j, Riccati.P_PLUS]
    logdet = 0.0
    identity = h == m and _identity(data, ho, m)
    if identity:  # D = P
        for i in range(m * m):
            r[Do + i] = r[Po + i]
    else:
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
        if full:
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
    if p < 0 and not full:
        return True, logdet
    if identity:  # H P = P
        for i in range(m * m):
            HP[i] = r[Po + i]
    bl.ab(Li, 0, HP, 0, Y, 0, h, h, m)  # Y = Li H P
    for c in range(m):  # G = (Li* Y)*, m × h
        for a_ in range(h):
            s = 0.0
            for i in range(a_, h):
                s += Li[i * h + a_] * Y[i * m + c]
            r[Go + c * h + a_] = s
    for a_ in range(m):  # P⁺ = P − Y* Y, a row of P⁺ less a multiple of each row of Y
        row, Pa = r[PPo + a_ * m: PPo + (a_ + 1) * m], r[Po + a_ * m: Po + (a_ + 1) * m]
        for b_ in range(m):
            row[b_] = Pa[b_]
        for i in range(h):
            y, Yi = Y[i * m + a_], Y[i * m: (i + 1) * m]
            for b_ in range(m):
                row[b_] -= y * Yi[b_]
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


@register
def _identity(A, ao, m) -> bool:
    """Whether the ``m × m`` block of ``A`` at ``ao`` is the identity."""
    for a_ in range(m):
        for b_ in range(m):
            if A[ao + a_ * m + b_] != (1 if a_ == b_ else 0):
                return False
    return True


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
    side, a rigid body on a 1-dof hinge and a base body on a 6-dof hinge take the register steps
    of :mod:`sko.engine.rigid_blocks`."""
    articulated_gather(layout, data, roff, r, T, with_ab, z, out, eps)
    layout, data, roff, r, z, out = borrowed(layout), borrowed(data), borrowed(roff), borrowed(r), borrowed(z), borrowed(out)
    for j in range(layout.shape[0]):
        articulated_scatter_step(layout, data, roff, r, z, out, with_ab, j)


@kernel
def articulated_gather(layout, data, roff, r, T, with_ab, z, out, eps):
    """The gather of :func:`articulated_body`: ``z(k) = P(k) a(k) + b(k)`` if ``with_ab``, then
    children first ``ε = T − H z``, ``ν = D^{-1} ε`` (into ``out``), ``z(℘) += φ (z + G ε)``."""
    layout, data, roff, r, T, z, out = (borrowed(layout), borrowed(data), borrowed(roff), borrowed(r), borrowed(T),
                                        borrowed(z), borrowed(out))
    n, nr = layout.shape[0], T.shape[1]
    if with_ab:
        for j in range(n):  # z(k) = P(k) a(k) + b(k)
            m, no, ao, bo = layout[j, Flat.NODE_DIM], layout[j, Flat.NODE], layout[j, Flat.A], layout[j, Flat.B]
            Po = roff[j, Riccati.P]
            if nr == 1 and m == 6:
                rb.articulated_bias_6(r, Po, data, ao, bo, z, no)
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
        if nr == 1 and rb.base_step(layout, j, p):
            rb.articulated_gather_6_6(layout, data, roff, r, T, z, out, j)
            continue
        for a_ in range(h):
            for q in range(nr):
                eps[a_, q] = T[do + a_, q]
        bl.mv2(data, layout[j, Flat.H], h, m, z, no, eps, 0, -1.0)  # ε = T − H z
        bl.mv2(r, roff[j, Riccati.D_INVERSE], h, h, eps, 0, out, do, 1.0)  # ν = D^{-1} ε
        if p >= 0:
            bl.mv2(r, roff[j, Riccati.G], m, h, eps, 0, z, no, 1.0)  # z⁺ = z + G ε
            bl.mv2(data, layout[j, Flat.W], layout[p, Flat.NODE_DIM], m, z, no, z, layout[p, Flat.NODE], 1.0)


@register
def articulated_scatter_step(layout, data, roff, r, z, out, with_ab, j):
    """The scatter of :func:`articulated_body` at flat node ``j``, its parent's ``α`` done:
    ``α⁺ = φ* α(℘)``, ``θ̈ = ν − G* α⁺`` (``ν`` read from ``out``, ``θ̈`` written there),
    ``α = α⁺ + H* θ̈ (+ a)`` into ``z``."""
    p, m, h = layout[j, Flat.PARENT], layout[j, Flat.NODE_DIM], layout[j, Flat.HINGE_DIM]
    no, do = layout[j, Flat.NODE], layout[j, Flat.DOF]
    if z.shape[1] == 1 and rb.rigid_step(layout, j, p):
        rb.articulated_scatter_6_1(layout, data, roff, r, z, out, with_ab, j, p)
        return
    if z.shape[1] == 1 and rb.base_step(layout, j, p):
        rb.articulated_scatter_6_6(layout, data, z, out, with_ab, j)
        return
    for a_ in range(m):
        for q in range(z.shape[1]):
            z[no + a_, q] = 0
    if p >= 0:  # a base body's α⁺ is zero
        bl.mtv2(data, layout[j, Flat.W], layout[p, Flat.NODE_DIM], m, z, layout[p, Flat.NODE], z, no, 1.0)
        bl.mtv2(r, roff[j, Riccati.G], m, h, z, no, out, do, -1.0)
    bl.mtv2(data, layout[j, Flat.H], h, m, out, do, z, no, 1.0)
    if with_ab:
        ao = layout[j, Flat.A]
        for a_ in range(m):
            for q in range(z.shape[1]):
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

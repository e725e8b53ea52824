"""The O(N) recursions of a system on its arena (:mod:`sko.systems.state_layout`), compiled.

For one state, with the arena row ``a`` holding ``φ(℘(k), k)`` (row-major ``m_℘ × m_k``),
``H(k)``, ``M(k)``, ``a(k)``, ``b(k)`` at the offsets of the body table ``ints``, these are the
recursions of :mod:`sko.algorithms` written as one loop per pass over ``order`` (parents before
children) — the scalar type is the arena's (float64 or complex128):

* :func:`newton_euler` — Algorithm 3.1: ``α(k) = φ*(℘(k), k) α(℘(k)) + H*(k) θ̈(k) + a(k)``
  outwards, ``f(k) = Σ_c φ(k, c) f(c) + M(k) α(k) + b(k)``, ``T(k) = H(k) f(k)`` inwards;
* :func:`composite_mass_matrix` — Algorithm 4.2: ``R(k) = M(k) + Σ_c φ(k, c) R(c) φ*(k, c)``,
  ``ℳ(j, k) = H(j) φ(j, k) R(k) H*(k)`` along the path to the root;
* :func:`articulated_body` — Riccati (Algorithm 6.1): ``P(k) = M(k) + Σ_c φ(k, c) P⁺(c) φ*(k, c)``,
  ``D = H P H*``, ``G = P H* D^{-1}``, ``P⁺ = P − G H P``; then the gather of ``z``, ``ε``, ``ν``
  and the scatter of ``α``, ``θ̈`` (SKO.md §11, Eq. 58).

Scratch: ``w`` is an array of the arena's size and type (``P``, ``R`` at the ``M`` offsets,
``α`` at the ``a`` offsets, ``f`` or ``z`` at the ``b`` offsets, ``G`` at the ``H`` offsets),
``Dinv`` holds ``D^{-1}(k)`` at ``n_max · (θ̇ offset)``, ``t`` is a vector of ``2 m_max²``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from sko.bodies.compiled_state import AO, BO, DIM, HB, MB, NV, PARENT, VO, W

__all__ = ["newton_euler", "composite_mass_matrix", "articulated_body", "sizes"]


@njit(cache=True)
def sizes(ints) -> tuple:
    """``(m_max, n_max)`` of the table."""
    mm = nn = 1
    for k in range(ints.shape[0]):
        mm = max(mm, ints[k, DIM])
        nn = max(nn, ints[k, NV])
    return mm, nn


@njit(cache=True)
def newton_euler(ints, order, a, qdd, w, out):
    """``out = T = H φ (M φ* (H* θ̈ + a) + b)`` (Algorithm 3.1); ``qdd`` may be empty (zero)."""
    use_qdd = qdd.shape[0] > 0
    for k in order:
        m, p, ao, bo, hb, mb, vo, n = ints[k, DIM], ints[k, PARENT], ints[k, AO], ints[k, BO], ints[k, HB], ints[k, MB], ints[k, VO], ints[k, NV]
        for i in range(m):
            s = a[ao + i]
            if use_qdd:
                for j in range(n):
                    s += a[hb + j * m + i] * qdd[vo + j]
            w[ao + i] = s
        if p >= 0:
            mp, wo, pa = ints[p, DIM], ints[k, W], ints[p, AO]
            for l in range(mp):
                x = w[pa + l]
                if x != 0:
                    for i in range(m):
                        w[ao + i] += a[wo + l * m + i] * x
        for i in range(m):
            s = a[bo + i]
            for j in range(m):
                s += a[mb + i * m + j] * w[ao + j]
            w[bo + i] = s
    for idx in range(order.shape[0] - 1, -1, -1):
        k = order[idx]
        m, p, bo, hb, vo, n = ints[k, DIM], ints[k, PARENT], ints[k, BO], ints[k, HB], ints[k, VO], ints[k, NV]
        for j in range(n):
            s = 0 * a[0]
            for i in range(m):
                s += a[hb + j * m + i] * w[bo + i]
            out[vo + j] = s
        if p >= 0:
            mp, wo, pb = ints[p, DIM], ints[k, W], ints[p, BO]
            for l in range(mp):
                s = 0 * a[0]
                for i in range(m):
                    s += a[wo + l * m + i] * w[bo + i]
                w[pb + l] += s


@njit(cache=True)
def _congruence_add(a, wo, mp, m, src, so, dst, do, t):
    """``dst(mp × mp) += W src W*`` with ``W = a[wo:]`` (``mp × m``), ``src`` ``m × m``."""
    if mp == 6 and m == 6:  # rigid bodies: fixed sizes the compiler unrolls
        _congruence_add6(a, wo, src, so, dst, do, t)
        return
    for l in range(mp):  # t = W src (mp × m)
        for j in range(m):
            s = 0 * a[0]
            for i in range(m):
                s += a[wo + l * m + i] * src[so + i * m + j]
            t[l * m + j] = s
    for l in range(mp):
        for r in range(l, mp):
            s = 0 * a[0]
            for j in range(m):
                s += t[l * m + j] * a[wo + r * m + j]
            dst[do + l * mp + r] += s
            if r != l:
                dst[do + r * mp + l] += s


@njit(cache=True)
def _congruence_add6(a, wo, src, so, dst, do, t):
    """:func:`_congruence_add` for 6 × 6 blocks."""
    for l in range(6):
        for j in range(6):
            s = 0 * a[0]
            for i in range(6):
                s += a[wo + l * 6 + i] * src[so + i * 6 + j]
            t[l * 6 + j] = s
    for l in range(6):
        for r in range(l, 6):
            s = 0 * a[0]
            for j in range(6):
                s += t[l * 6 + j] * a[wo + r * 6 + j]
            dst[do + l * 6 + r] += s
            if r != l:
                dst[do + r * 6 + l] += s


@njit(cache=True)
def composite_mass_matrix(ints, order, a, w, t, out):
    """``out = ℳ = H φ M φ* H*`` by composite inertias (Algorithm 4.2)."""
    N = order.shape[0]
    for k in range(ints.shape[0]):
        mb, m = ints[k, MB], ints[k, DIM]
        for i in range(m * m):
            w[mb + i] = a[mb + i]
    for idx in range(N - 1, -1, -1):
        k = order[idx]
        p = ints[k, PARENT]
        if p >= 0:
            _congruence_add(a, ints[k, W], ints[p, DIM], ints[k, DIM], w, ints[k, MB], w, ints[p, MB], t)
    mm = t.shape[0] // 2
    for k in range(ints.shape[0]):
        m, n, hb, mb, vo = ints[k, DIM], ints[k, NV], ints[k, HB], ints[k, MB], ints[k, VO]
        if n == 0:
            continue
        # F = R(k) H*(k) (m × n) in t[0:]
        for i in range(m):
            for c in range(n):
                s = 0 * a[0]
                for j in range(m):
                    s += w[mb + i * m + j] * a[hb + c * m + j]
                t[i * n + c] = s
        j, mj, hj = k, m, hb
        while True:
            nj, vj = ints[j, NV], ints[j, VO]
            for r in range(nj):
                for c in range(n):
                    s = 0 * a[0]
                    for i in range(mj):
                        s += a[hj + r * mj + i] * t[i * n + c]
                    out[vj + r, vo + c] = s
                    out[vo + c, vj + r] = s
            p = ints[j, PARENT]
            if p < 0:
                break
            mp, wo = ints[p, DIM], ints[j, W]
            # F ← φ(p, j) F  (mp × n), through t[mm:]
            for l in range(mp):
                for c in range(n):
                    s = 0 * a[0]
                    for i in range(mj):
                        s += a[wo + l * mj + i] * t[i * n + c]
                    t[mm + l * n + c] = s
            for i in range(mp * n):
                t[i] = t[mm + i]
            j, mj, hj = p, mp, ints[p, HB]


@njit(cache=True)
def _symmetric_inverse(D, n, out) -> bool:
    """``out = D^{-1}`` for a symmetric ``n × n`` ``D`` by ``L D Lᵀ`` without conjugation (so
    complex-step states stay analytic); False when a pivot's real part is not positive."""
    L = D.copy()
    for j in range(n):
        d = L[j, j]
        for k in range(j):
            d -= L[j, k] * L[j, k] * L[k, k]
        if not d.real > 0:
            return False
        L[j, j] = d
        for i in range(j + 1, n):
            s = L[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k] * L[k, k]
            L[i, j] = s / d
    # out = L^{-T} D^{-1} L^{-1}: solve column by column
    for c in range(n):
        y = np.zeros(n, dtype=D.dtype)
        y[c] = 1
        for i in range(n):
            for k in range(i):
                y[i] -= L[i, k] * y[k]
        for i in range(n):
            y[i] /= L[i, i]
        for i in range(n - 1, -1, -1):
            for k in range(i + 1, n):
                y[i] -= L[k, i] * y[k]
        for i in range(n):
            out[i, c] = y[i]
    return True


@njit(cache=True)
def riccati(ints, order, a, w, Dinv, t) -> int:
    """``P⁺`` (in ``w`` at the ``M`` offsets), ``G`` (at the ``H`` offsets, ``m × n``),
    ``D^{-1}`` (in ``Dinv``) and ``P(k) a(k) + b(k)`` (at the ``b`` offsets, the start of the
    gather of :func:`articulated_body`); returns ``-1``, or the body whose ``D(k)`` is not
    positive definite."""
    nn = Dinv.shape[1]
    for k in range(ints.shape[0]):
        mb, m = ints[k, MB], ints[k, DIM]
        for i in range(m * m):
            w[mb + i] = a[mb + i]
    D = np.empty((nn, nn), dtype=a.dtype)
    for idx in range(order.shape[0] - 1, -1, -1):
        k = order[idx]
        m, n, p, hb, mb, vo = ints[k, DIM], ints[k, NV], ints[k, PARENT], ints[k, HB], ints[k, MB], ints[k, VO]
        ao, bo = ints[k, AO], ints[k, BO]
        for i in range(m):
            s = a[bo + i]
            for j in range(m):
                s += w[mb + i * m + j] * a[ao + j]
            w[bo + i] = s
        if n > 0:
            # t = P H* (m × n)
            for i in range(m):
                for c in range(n):
                    s = 0 * a[0]
                    for j in range(m):
                        s += w[mb + i * m + j] * a[hb + c * m + j]
                    t[i * n + c] = s
            for r in range(n):
                for c in range(n):
                    s = 0 * a[0]
                    for i in range(m):
                        s += a[hb + r * m + i] * t[i * n + c]
                    D[r, c] = s
            Di = Dinv[vo: vo + n]
            if not _symmetric_inverse(D[:n, :n], n, Di):
                return k
            # G = P H* D^{-1}, P⁺ = P − G (P H*)*
            for i in range(m):
                for c in range(n):
                    s = 0 * a[0]
                    for r in range(n):
                        s += t[i * n + r] * Di[r, c]
                    w[hb + i * n + c] = s
            for i in range(m):
                for j in range(m):
                    s = 0 * a[0]
                    for c in range(n):
                        s += w[hb + i * n + c] * t[j * n + c]
                    w[mb + i * m + j] -= s
        if p >= 0:
            _congruence_add(a, ints[k, W], ints[p, DIM], m, w, mb, w, ints[p, MB], t)
    return -1


@njit(cache=True)
def articulated_body(ints, order, a, T, w, Dinv, t, use_ab, out):
    """``out = θ̈ = ℳ^{-1}(T − 𝒞)`` right after :func:`riccati` (the gather of ``z`` and the
    scatter of ``α``, Eq. 58); ``use_ab`` False takes ``a = b = 0`` (``ℳ^{-1} T``, any number
    of times after one :func:`riccati`)."""
    if not use_ab:
        for k in range(ints.shape[0]):
            bo, m = ints[k, BO], ints[k, DIM]
            for i in range(m):
                w[bo + i] = 0
    nu = out  # ν is kept in out until the scatter turns it into θ̈
    for idx in range(order.shape[0] - 1, -1, -1):
        k = order[idx]
        m, n, p, hb, mb, vo, ao, bo = (ints[k, DIM], ints[k, NV], ints[k, PARENT], ints[k, HB], ints[k, MB],
                                       ints[k, VO], ints[k, AO], ints[k, BO])
        if n > 0:
            for r in range(n):
                s = T[vo + r]
                for i in range(m):
                    s -= a[hb + r * m + i] * w[bo + i]
                t[r] = s
            for r in range(n):
                s = 0 * a[0]
                for c in range(n):
                    s += Dinv[vo + r, c] * t[c]
                nu[vo + r] = s
            for i in range(m):
                s = 0 * a[0]
                for c in range(n):
                    s += w[hb + i * n + c] * t[c]
                w[bo + i] += s
        if p >= 0:
            mp, wo, pb = ints[p, DIM], ints[k, W], ints[p, BO]
            for l in range(mp):
                s = 0 * a[0]
                for i in range(m):
                    s += a[wo + l * m + i] * w[bo + i]
                w[pb + l] += s
    for k in order:
        m, n, p, hb, vo, ao = ints[k, DIM], ints[k, NV], ints[k, PARENT], ints[k, HB], ints[k, VO], ints[k, AO]
        for i in range(m):
            w[ao + i] = 0
        if p >= 0:
            mp, wo, pa = ints[p, DIM], ints[k, W], ints[p, AO]
            for l in range(mp):
                x = w[pa + l]
                for i in range(m):
                    w[ao + i] += a[wo + l * m + i] * x
        for c in range(n):
            s = nu[vo + c]
            for i in range(m):
                s -= w[hb + i * n + c] * w[ao + i]
            out[vo + c] = s
        for i in range(m):
            s = w[ao + i]
            for c in range(n):
                s += a[hb + c * m + i] * out[vo + c]
            if use_ab:
                s += a[ao + i]
            w[ao + i] = s

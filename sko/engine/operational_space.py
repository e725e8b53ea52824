"""The operational space compliance ``Ω(i, j)`` among task nodes, compiled (SKO.md §12, Eq. 59, 60).

From a compiled Riccati result (buffer ``r``, :func:`sko.engine.layout.riccati_layout`): the backward
Lyapunov scatter ``Υ(k) = ψ*(℘(k), k) Υ(℘(k)) ψ(℘(k), k) + H*(k) D^{-1}(k) H(k)`` runs on the
task nodes and their ancestors only (the blocks ``Ω(i, j)`` need nothing else), and each block is
``Ω(i, j) = ψ*(l, i) Υ(l) ψ(l, j)`` with ``l`` the nearest common ancestor of ``i`` and ``j``
(zero across the trees of a forest). Cost: O(N) for the marks, then the task nodes' paths.
"""

from __future__ import annotations

import numpy as np

from sko.engine.borrow import borrowed
from sko.engine.layout import Flat, Riccati
from sko.engine.jit import kernel

__all__ = ["compliance_blocks"]


@kernel
def _path_product(layout, r, roff, i, l, X, T):
    """``X = ψ(l, i)`` (``m_l × m_i``, row-major in ``X``) for an ancestor ``l`` of ``i``,
    walking up from ``i``; ``T`` is scratch of the same size."""
    mi = layout[i, Flat.NODE_DIM]
    for a in range(mi * mi):
        X[a] = 0
    for a in range(mi):
        X[a * mi + a] = 1
    k, rows = i, mi
    while k != l:
        p = layout[k, Flat.PARENT]
        mp, so = layout[p, Flat.NODE_DIM], roff[k, Riccati.PSI]
        for a in range(mp):  # T = ψ(℘(k), k) X, m_℘ × m_i
            for c in range(mi):
                s = X[0] * 0
                for b in range(rows):
                    s += r[so + a * rows + b] * X[b * mi + c]
                T[a * mi + c] = s
        for a in range(mp * mi):
            X[a] = T[a]
        k, rows = p, mp


@kernel(entry=True)
def compliance_blocks(layout, data, roff, r, tasks, out):
    """``out`` (zero on entry, ``Σ m_i`` square over the flat task nodes ``tasks``) receives the
    blocks ``Ω(i, j)`` (module docstring)."""
    layout, data, roff, r, tasks, out = (borrowed(layout), borrowed(data), borrowed(roff), borrowed(r),
                                         borrowed(tasks), borrowed(out))
    n = layout.shape[0]
    marked = np.zeros(n, dtype=np.bool_)
    depth = np.zeros(n, dtype=np.int64)
    for t in tasks:
        k = t
        while k >= 0 and not marked[k]:
            marked[k] = True
            k = layout[k, Flat.PARENT]
    uoff = np.full(n, -1, dtype=np.int64)
    size, mx = 0, 1
    for j in range(n):
        if marked[j]:
            uoff[j] = size
            size += layout[j, Flat.NODE_DIM] ** 2
            mx = max(mx, layout[j, Flat.NODE_DIM])
    U = np.zeros(size, dtype=r.dtype)
    T = np.zeros(mx * mx, dtype=r.dtype)
    for j in range(n):  # the scatter, parents first
        if not marked[j]:
            continue
        p, m, h, ho, dio, uo = layout[j, Flat.PARENT], layout[j, Flat.NODE_DIM], layout[j, Flat.HINGE_DIM], layout[j, Flat.H], roff[j, Riccati.D_INVERSE], uoff[j]
        for a in range(h):  # T = D^{-1} H, h × m
            for c in range(m):
                s = T[0] * 0
                for b in range(h):
                    s += r[dio + a * h + b] * data[ho + b * m + c]
                T[a * m + c] = s
        for a in range(m):  # Υ = H* D^{-1} H
            for c in range(m):
                s = T[0] * 0
                for b in range(h):
                    s += data[ho + b * m + a] * T[b * m + c]
                U[uo + a * m + c] = s
        if p >= 0:
            depth[j] = depth[p] + 1
            mp, so, po = layout[p, Flat.NODE_DIM], roff[j, Riccati.PSI], uoff[p]
            for a in range(mp):  # T = Υ(℘) ψ, m_℘ × m
                for c in range(m):
                    s = T[0] * 0
                    for b in range(mp):
                        s += U[po + a * mp + b] * r[so + b * m + c]
                    T[a * m + c] = s
            for a in range(m):  # Υ += ψ* T
                for c in range(m):
                    s = T[0] * 0
                    for b in range(mp):
                        s += r[so + b * m + a] * T[b * m + c]
                    U[uo + a * m + c] += s
    Xi, Xj, Y = np.zeros(mx * mx, dtype=r.dtype), np.zeros(mx * mx, dtype=r.dtype), np.zeros(mx * mx, dtype=r.dtype)
    ro = 0
    for i in tasks:
        mi = layout[i, Flat.NODE_DIM]
        co = 0
        for j in tasks:
            mj = layout[j, Flat.NODE_DIM]
            x, y = i, j  # the nearest common ancestor l, or −1 across trees
            while x != y and x >= 0 and y >= 0:
                if depth[x] >= depth[y]:
                    x = layout[x, Flat.PARENT]
                else:
                    y = layout[y, Flat.PARENT]
            if x >= 0 and x == y:
                l, ml, uo = x, layout[x, Flat.NODE_DIM], uoff[x]
                _path_product(layout, r, roff, i, l, Xi, T)
                _path_product(layout, r, roff, j, l, Xj, T)
                for a in range(ml):  # Y = Υ(l) ψ(l, j), m_l × m_j
                    for c in range(mj):
                        s = T[0] * 0
                        for b in range(ml):
                            s += U[uo + a * ml + b] * Xj[b * mj + c]
                        Y[a * mj + c] = s
                for a in range(mi):  # Ω(i, j) = ψ*(l, i) Y
                    for c in range(mj):
                        s = T[0] * 0
                        for b in range(ml):
                            s += Xi[b * mi + a] * Y[b * mj + c]
                        out[ro + a, co + c] = s
            co += mj
        ro += mi

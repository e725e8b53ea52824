"""numba kernels of the composite body algorithm on a flat model (SKO.md §6, Algorithm 4.2):
the composite inertias ``ℛ`` (the forward Lyapunov equation, Lemma 3) and the mass matrix
``ℳ = H φ M φ* H*`` (Lemma 4).

The conventions of every recursion kernel are those of :mod:`sko.engine` (*The recursions*).
"""

from __future__ import annotations

from sko.engine import blocks as bl
from sko.engine import rigid_blocks as rb
from sko.engine.borrow import borrowed
from sko.engine.layout import Flat
from sko.engine.jit import kernel

__all__ = ["composite_inertias", "mass_matrix"]


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

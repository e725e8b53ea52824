"""Compiled products of the CFA operators on a flat copy of a force split (CFA.md, "The CFA").

The operators of :mod:`.split` and :mod:`.operators` are block products over the nodes, each
node touching only itself and its parent: no recursion, so any node order will do. A
:class:`FlatSplit` packs, per node in the model's stacking order, the dimensions, the offsets
of its slices in stacked node, hinge and constraint vectors, and the offsets of its blocks
``φ(℘(k), k)``, ``W(k)``, ``H⁺(k)`` and ``M^{-1}(k)`` in one float64 buffer (row-major). The
kernels below apply

* ``W``, ``W*``, ``H⁺``, ``H⁺*`` (block diagonal), and
* ``Ω = φ^{-*} M^{-1} φ^{-1}`` with ``φ^{-1} = I − ℰ_φ``:
  ``y(℘(k)) −= φ(℘(k), k) x(k)``, ``z = M^{-1} y``, ``z(k) −= φ*(℘(k), k) z(℘(k))``,

in one pass each, the same products as the per-node loops they replace.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["FlatSplit", "block_apply", "omega_apply"]

#: columns of :attr:`FlatSplit.table`
PARENT, MDIM, NDIM, SDIM, NODE, DOF, CON, PHI, W, HP, MI = range(11)
WIDTH = 11


class FlatSplit:
    """The per-node table and block buffer of one :class:`~.split.ForceSplit` (module docstring)."""

    def __init__(self, split):
        model = split.model
        blocks = [model.weights_by_index, split.W_by_index, split.H_plus_by_index, split.M_inverse_by_index]
        table = np.zeros((len(model.bodies), WIDTH), dtype=np.int64)
        table[:, PARENT] = model.tree.parent_indices
        table[:, MDIM] = [M.shape[0] for M in model.M_by_index]
        table[:, NDIM] = [H.shape[0] for H in model.H_by_index]
        table[:, SDIM] = [Wk.shape[1] for Wk in split.W_by_index]
        table[:, NODE] = [sl.start for sl in model.node_slices]
        table[:, DOF] = [sl.start for sl in model.dof_slices]
        table[:, CON] = [sl.start for sl in split.constraint_slices]
        parts, offset = [], 0
        for i in range(len(model.bodies)):
            for col, by_index in zip((PHI, W, HP, MI), blocks):
                B = by_index[i]
                if B is None:  # a base body has no weight
                    table[i, col] = -1
                    continue
                table[i, col] = offset
                parts.append(B.ravel())
                offset += B.size
        self.table = table
        self.numbers = np.concatenate(parts) if parts else np.zeros(0)
        self.node_size, self.dof_size, self.constraint_size = model.node_size, model.dof_size, split.constraint_size


@njit(cache=True)
def block_apply(table, numbers, block, rows, cols, out_at, in_at, transpose, x, out_size):
    """``out(k) = B(k) x(k)`` (or ``B*(k) x(k)``) for the block-diagonal operator whose
    ``rows × cols`` blocks start at column ``block`` of ``table``; ``out_at`` and ``in_at``
    name the columns of the slice offsets of the result and of ``x``."""
    out = np.zeros(out_size)
    for i in range(table.shape[0]):
        r, c, o = table[i, rows], table[i, cols], table[i, block]
        yo, xo = table[i, out_at], table[i, in_at]
        if transpose:  # out has c entries, x has r
            for j in range(c):
                acc = 0.0
                for k in range(r):
                    acc += numbers[o + k * c + j] * x[xo + k]
                out[yo + j] = acc
        else:
            for k in range(r):
                acc = 0.0
                for j in range(c):
                    acc += numbers[o + k * c + j] * x[xo + j]
                out[yo + k] = acc
    return out


@njit(cache=True)
def omega_apply(table, numbers, x):
    """``φ^{-*} M^{-1} φ^{-1} x`` for a stacked node vector ``x``."""
    y = x.copy()
    for i in range(table.shape[0]):  # φ^{-1} = I − ℰ_φ
        p = table[i, PARENT]
        if p >= 0:
            m, mp, o = table[i, MDIM], table[p, MDIM], table[i, PHI]
            xo, yo = table[i, NODE], table[p, NODE]
            for r in range(mp):
                acc = 0.0
                for c in range(m):
                    acc += numbers[o + r * m + c] * x[xo + c]
                y[yo + r] -= acc
    z = np.zeros_like(y)
    for i in range(table.shape[0]):  # M^{-1}
        m, o, no = table[i, MDIM], table[i, MI], table[i, NODE]
        for r in range(m):
            acc = 0.0
            for c in range(m):
                acc += numbers[o + r * m + c] * y[no + c]
            z[no + r] = acc
    out = z.copy()
    for i in range(table.shape[0]):  # φ^{-*} = I − ℰ_φ*
        p = table[i, PARENT]
        if p >= 0:
            m, mp, o = table[i, MDIM], table[p, MDIM], table[i, PHI]
            zo, no = table[p, NODE], table[i, NODE]
            for c in range(m):
                acc = 0.0
                for r in range(mp):
                    acc += numbers[o + r * m + c] * z[zo + r]
                out[no + c] -= acc
    return out

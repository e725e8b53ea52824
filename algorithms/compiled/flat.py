"""The flat model: the structure of an SKO model packed into two arrays for compiled recursions.

A :class:`FlatModel` describes the model ``(H, ℰ_φ, M)`` (SKO.md §2–§3) of ``N`` bodies with

``layout`` : int64 array of shape ``(N, WIDTH)``
    One row per *flat node* ``j = 0 … N−1``. Flat nodes are the bodies in a scatter order:
    every parent comes before its children (``layout[j, PARENT] < j``), so a scatter runs
    ``j = 0 … N−1`` and a gather ``j = N−1 … 0``. Roots of a forest (base bodies) have
    ``PARENT = −1``. The columns are

    ============ ======================================================================
    ``PARENT``   flat index of the parent ``℘(k)``, −1 for a base body
    ``NDIM``     node dimension ``m_k`` (may be 0)
    ``HDIM``     hinge dimension ``n_k`` (may be 0)
    ``NODE``     offset of ``x(k)`` in a stacked node vector (length ``Σ m_k``)
    ``DOF``      offset of ``θ(k)`` in a stacked hinge vector (length ``Σ n_k``)
    ``W``        offset in ``data`` of ``φ(℘(k), k)``, ``m_℘(k) × m_k``; −1 for a base body
    ``H``        offset in ``data`` of ``H(k)``, ``n_k × m_k``
    ``M``        offset in ``data`` of ``M(k)``, ``m_k × m_k``
    ``A``        offset in ``data`` of ``a(k)``, ``m_k`` entries
    ``B``        offset in ``data`` of ``b(k)``, ``m_k`` entries
    ``BODY``     position of the body in the model's stacking order (``model.bodies``)
    ``PRE``      position of the node in a depth-first preorder of the forest
    ``SUBN``     nodes in the subtree of ``k`` (``k`` included): positions ``PRE … PRE + SUBN − 1``
    ``PREORDER`` the flat node at position ``j`` of that preorder (a column indexed by position)
    ``COL``      first column of ``θ(k)`` when the hinge coordinates are taken in that preorder
    ``SUB``      ``Σ n_i`` over the subtree of ``k``: its columns are ``COL … COL + SUB − 1``
    ============ ======================================================================

    The preorder columns give every subtree a contiguous range of columns (the block form of
    the mass matrix, :func:`~sko.algorithms.compiled.kernels.mass_matrix`).

    ``NODE`` and ``DOF`` are exactly ``model.node_slice(k).start`` and
    ``model.dof_slice(k).start``: stacked vectors passed to or returned from a kernel are in the
    model's own order and need no permutation.

``data`` : one contiguous 1-D array of float64 or complex128, ``size`` entries
    The numbers. For flat node ``j`` the blocks follow one another in the order
    ``W, H, M, a, b`` (the weight block is absent for a base body), node after node in flat
    order; every block is stored row-major (C order), so entry ``(r, c)`` of ``H(k)`` is
    ``data[layout[j, H] + r * m_k + c]``. Nothing else lives in ``data``; ``a`` and ``b`` slots
    that a call does not use are left as they are (zero after :func:`fill_data` without them).

The layout is fixed by the model's structure (tree, ``m_k``, ``n_k``) alone; :func:`from_sko_model`
builds it once per model and :func:`fill_data` (or a compiled state function writing at the same
offsets) fills ``data`` with the numbers of one state. Kernels take ``(layout, data, …)`` so
that a call passes few array arguments.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "PARENT", "NDIM", "HDIM", "NODE", "DOF", "W", "H", "M", "A", "B", "BODY", "PRE", "SUBN", "PREORDER", "COL",
    "SUB", "WIDTH",
    "FlatModel", "from_sko_model", "from_structure", "fill_data",
]

PARENT, NDIM, HDIM, NODE, DOF, W, H, M, A, B, BODY, PRE, SUBN, PREORDER, COL, SUB = range(16)
WIDTH = 16


@dataclass(frozen=True)
class FlatModel:
    """The structure of an SKO model as a ``layout`` table (see the module docstring)."""

    layout: np.ndarray  #: (N, WIDTH) int64, read-only
    size: int  #: length of the data buffer
    node_size: int  #: Σ m_k
    dof_size: int  #: Σ n_k

    @property
    def n_bodies(self) -> int:
        return self.layout.shape[0]

    def empty_data(self, dtype=np.float64) -> np.ndarray:
        """A zero data buffer of this layout."""
        return np.zeros(self.size, dtype=dtype)


def from_structure(parents: Sequence[int], node_dims: Sequence[int], dof_dims: Sequence[int],
                   scatter: Sequence[int]) -> FlatModel:
    """The flat model of a tree given in its stacking order.

    Parameters
    ----------
    parents : per body (stacking order), the position of its parent or −1
    node_dims, dof_dims : per body, ``m_k`` and ``n_k``
    scatter : the positions of the bodies in an order with every parent before its children
    """
    n = len(parents)
    node_off = np.concatenate([[0], np.cumsum(node_dims, dtype=np.int64)])
    dof_off = np.concatenate([[0], np.cumsum(dof_dims, dtype=np.int64)])
    flat_of = np.empty(n, dtype=np.int64)
    flat_of[np.asarray(scatter, dtype=np.int64)] = np.arange(n)
    layout = np.empty((n, WIDTH), dtype=np.int64)
    offset = 0
    for j, i in enumerate(scatter):
        p = parents[i]
        m, h = int(node_dims[i]), int(dof_dims[i])
        row = layout[j]
        row[PARENT] = flat_of[p] if p >= 0 else -1
        row[NDIM], row[HDIM] = m, h
        row[NODE], row[DOF] = node_off[i], dof_off[i]
        if p >= 0:
            row[W] = offset
            offset += int(node_dims[p]) * m
        else:
            row[W] = -1
        row[H] = offset
        offset += h * m
        row[M] = offset
        offset += m * m
        row[A] = offset
        offset += m
        row[B] = offset
        offset += m
        row[BODY] = i
    _preorder(layout)
    layout.setflags(write=False)
    return FlatModel(layout=layout, size=offset, node_size=int(node_off[-1]), dof_size=int(dof_off[-1]))


def _preorder(layout: np.ndarray) -> None:
    """Fill ``PRE``, ``SUBN``, ``PREORDER``, ``COL`` and ``SUB`` (module docstring): roots and
    children in flat order, a parent before its subtree."""
    n = layout.shape[0]
    children = [[] for _ in range(n)]
    for j in range(n):
        if layout[j, PARENT] >= 0:
            children[layout[j, PARENT]].append(j)
    position = column = 0
    stack = [j for j in range(n - 1, -1, -1) if layout[j, PARENT] < 0]
    while stack:
        j = stack.pop()
        layout[j, PRE], layout[position, PREORDER], layout[j, COL] = position, j, column
        position, column = position + 1, column + layout[j, HDIM]
        stack += reversed(children[j])
    layout[:, SUBN], layout[:, SUB] = 1, layout[:, HDIM]
    for j in range(n - 1, -1, -1):  # children after their parent: sizes gather
        p = layout[j, PARENT]
        if p >= 0:
            layout[p, SUBN] += layout[j, SUBN]
            layout[p, SUB] += layout[j, SUB]


def from_sko_model(model) -> FlatModel:
    """The flat model of an :class:`sko.SKOModel` (structure only; see :func:`fill_data`)."""
    tree = model.tree
    return from_structure(tree.parent_indices, [Mk.shape[0] for Mk in model.M_by_index],
                          [Hk.shape[0] for Hk in model.H_by_index], tree.scatter_indices)


def fill_data(flat: FlatModel, weights: Sequence, H_blocks: Sequence, M_blocks: Sequence,
              a: np.ndarray | None = None, b: np.ndarray | None = None, dtype=np.float64) -> np.ndarray:
    """A data buffer holding the given numbers.

    ``weights``, ``H_blocks`` and ``M_blocks`` are per body in the model's stacking order
    (``model.weights_by_index`` etc.; ``None`` weights for base bodies); ``a`` and ``b`` are
    stacked node vectors or ``None`` (zero).
    """
    data = np.zeros(flat.size, dtype=dtype)
    for row in flat.layout:
        i, m = row[BODY], row[NDIM]
        if row[W] >= 0:
            Wk = weights[i]
            data[row[W]:row[W] + Wk.size] = Wk.ravel()
        data[row[H]:row[H] + row[HDIM] * m] = H_blocks[i].ravel()
        data[row[M]:row[M] + m * m] = M_blocks[i].ravel()
        if a is not None:
            data[row[A]:row[A] + m] = a[row[NODE]:row[NODE] + m]
        if b is not None:
            data[row[B]:row[B] + m] = b[row[NODE]:row[NODE] + m]
    return data

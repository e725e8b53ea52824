"""The flat model: the structure of an SKO model packed into two arrays for compiled recursions.

A :class:`FlatModel` describes the model ``(H, ℰ_φ, M)`` (SKO.md §2–§3) of ``N`` bodies with

``layout`` : int64 array of shape ``(N, Flat.WIDTH)``
    One row per *flat node* ``j = 0 … N−1``. Flat nodes are the bodies in a scatter order:
    every parent comes before its children (``layout[j, Flat.PARENT] < j``), so a scatter runs
    ``j = 0 … N−1`` and a gather ``j = N−1 … 0``. Roots of a forest (base bodies) have
    ``PARENT = −1``. The columns are

    ============= ======================================================================
    ``PARENT``    flat index of the parent ``℘(k)``, −1 for a base body
    ``NODE_DIM``  node dimension ``m_k`` (may be 0)
    ``HINGE_DIM`` hinge dimension ``n_k`` (may be 0)
    ``NODE``      offset of ``x(k)`` in a stacked node vector (length ``Σ m_k``)
    ``DOF``       offset of ``θ(k)`` in a stacked hinge vector (length ``Σ n_k``)
    ``W``         offset in ``data`` of ``φ(℘(k), k)``, ``m_℘(k) × m_k``; −1 for a base body
    ``H``         offset in ``data`` of ``H(k)``, ``n_k × m_k``
    ``M``         offset in ``data`` of ``M(k)``, ``m_k × m_k``
    ``A``         offset in ``data`` of ``a(k)``, ``m_k`` entries
    ``B``         offset in ``data`` of ``b(k)``, ``m_k`` entries
    ``BODY``      position of the body in the model's stacking order (``model.bodies``)
    ``PRE``       position of the node in a depth-first preorder of the forest
    ``SUBN``      nodes in the subtree of ``k`` (``k`` included): positions ``PRE … PRE + SUBN − 1``
    ``PREORDER``  the flat node at position ``j`` of that preorder (a column indexed by position)
    ``COL``       first column of ``θ(k)`` when the hinge coordinates are taken in that preorder
    ``SUB``       ``Σ n_i`` over the subtree of ``k``: its columns are ``COL … COL + SUB − 1``
    ``RUN``       the highest ancestor-or-self ``u`` of ``k`` (flat index) such that down the
                  path from ``u`` to ``k`` each child's ``DOF`` is its parent's ``DOF + n``:
                  the path's hinge coordinates are ``DOF(u) … DOF(k) + n_k − 1``
    ============= ======================================================================

    The preorder columns give every subtree a contiguous range of columns (the block form of
    the mass matrix, :func:`~sko.engine.crba.mass_matrix`); ``RUN`` cuts the ancestors of a
    node into runs of contiguous columns, one for a chain numbered from its root (a walk over
    the ancestors' columns by runs, :func:`~sko.engine.mass_matrix.rigid_mass_matrix`).

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

The results of the Riccati gather (SKO.md §8) live in a second buffer ``r`` laid out by
:func:`riccati_layout`: per flat node ``P(k)``, ``P⁺(k)`` (``m × m``), ``D(k)``, ``D^{-1}(k)``
(``n × n``), ``G(k)`` (``m × n``) and ``ψ(℘(k), k)`` (``m_℘ × m``; −1 for a base body), at the
offsets of the columns of :data:`Riccati`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sko.engine.fields import columns

__all__ = ["Flat", "Riccati", "max_dims", "FlatModel", "Structure", "structure", "from_sko_model", "from_structure", "fill_data",
           "riccati_layout"]

#: The columns of a flat model's ``layout`` (module docstring).
Flat = columns("Flat", "PARENT", "NODE_DIM", "HINGE_DIM", "NODE", "DOF", "W", "H", "M", "A", "B", "BODY", "PRE",
               "SUBN", "PREORDER", "COL", "SUB", "RUN")
#: The columns of the Riccati offsets table (module docstring).
Riccati = columns("Riccati", "P", "P_PLUS", "D", "D_INVERSE", "G", "PSI")


@dataclass(frozen=True)
class FlatModel:
    """The structure of an SKO model as a ``layout`` table (see the module docstring)."""

    layout: np.ndarray  #: (N, Flat.WIDTH) int64, read-only
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
    layout = np.empty((n, Flat.WIDTH), dtype=np.int64)
    offset = 0
    for j, i in enumerate(scatter):
        p = parents[i]
        m, h = int(node_dims[i]), int(dof_dims[i])
        row = layout[j]
        row[Flat.PARENT] = flat_of[p] if p >= 0 else -1
        row[Flat.NODE_DIM], row[Flat.HINGE_DIM] = m, h
        row[Flat.NODE], row[Flat.DOF] = node_off[i], dof_off[i]
        if p >= 0:
            row[Flat.W] = offset
            offset += int(node_dims[p]) * m
        else:
            row[Flat.W] = -1
        for column, size in ((Flat.H, h * m), (Flat.M, m * m), (Flat.A, m), (Flat.B, m)):
            row[column] = offset
            offset += size
        row[Flat.BODY] = i
    _preorder(layout)
    _runs(layout)
    layout.setflags(write=False)
    return FlatModel(layout=layout, size=offset, node_size=int(node_off[-1]), dof_size=int(dof_off[-1]))


def _preorder(layout: np.ndarray) -> None:
    """Fill ``PRE``, ``SUBN``, ``PREORDER``, ``COL`` and ``SUB`` (module docstring): roots and
    children in flat order, a parent before its subtree."""
    n = layout.shape[0]
    children = [[] for _ in range(n)]
    for j in range(n):
        if layout[j, Flat.PARENT] >= 0:
            children[layout[j, Flat.PARENT]].append(j)
    position = column = 0
    stack = [j for j in range(n - 1, -1, -1) if layout[j, Flat.PARENT] < 0]
    while stack:
        j = stack.pop()
        layout[j, Flat.PRE], layout[position, Flat.PREORDER], layout[j, Flat.COL] = position, j, column
        position, column = position + 1, column + layout[j, Flat.HINGE_DIM]
        stack += reversed(children[j])
    layout[:, Flat.SUBN], layout[:, Flat.SUB] = 1, layout[:, Flat.HINGE_DIM]
    for j in range(n - 1, -1, -1):  # children after their parent: sizes gather
        p = layout[j, Flat.PARENT]
        if p >= 0:
            layout[p, Flat.SUBN] += layout[j, Flat.SUBN]
            layout[p, Flat.SUB] += layout[j, Flat.SUB]


def _runs(layout: np.ndarray) -> None:
    """Fill ``RUN`` (module docstring), parents first."""
    for j in range(layout.shape[0]):
        p = layout[j, Flat.PARENT]
        follows = p >= 0 and layout[j, Flat.DOF] == layout[p, Flat.DOF] + layout[p, Flat.HINGE_DIM]
        layout[j, Flat.RUN] = layout[p, Flat.RUN] if follows else j


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
        i, m = row[Flat.BODY], row[Flat.NODE_DIM]
        if row[Flat.W] >= 0:
            Wk = weights[i]
            data[row[Flat.W]:row[Flat.W] + Wk.size] = Wk.ravel()
        data[row[Flat.H]:row[Flat.H] + row[Flat.HINGE_DIM] * m] = H_blocks[i].ravel()
        data[row[Flat.M]:row[Flat.M] + m * m] = M_blocks[i].ravel()
        if a is not None:
            data[row[Flat.A]:row[Flat.A] + m] = a[row[Flat.NODE]:row[Flat.NODE] + m]
        if b is not None:
            data[row[Flat.B]:row[Flat.B] + m] = b[row[Flat.NODE]:row[Flat.NODE] + m]
    return data


def riccati_layout(layout: np.ndarray) -> tuple[np.ndarray, int]:
    """The offsets of the Riccati blocks per flat node (columns :data:`Riccati`) and the length
    of their buffer."""
    n = layout.shape[0]
    out = np.empty((n, Riccati.WIDTH), dtype=np.int64)
    off = 0
    for j in range(n):
        m, h, p = int(layout[j, Flat.NODE_DIM]), int(layout[j, Flat.HINGE_DIM]), int(layout[j, Flat.PARENT])
        for column, size in ((Riccati.P, m * m), (Riccati.P_PLUS, m * m), (Riccati.D, h * h),
                             (Riccati.D_INVERSE, h * h), (Riccati.G, m * h)):
            out[j, column] = off
            off += size
        if p >= 0:
            out[j, Riccati.PSI] = off
            off += int(layout[p, Flat.NODE_DIM]) * m
        else:
            out[j, Riccati.PSI] = -1
    out.setflags(write=False)
    return out, off


@dataclass(frozen=True)
class Structure:
    """A model's flat structure and Riccati layout, made once per model (:func:`structure`);
    the tables are writeable (what the kernels are compiled for) and never written."""

    flat: FlatModel
    layout: np.ndarray  #: the flat layout
    roff: np.ndarray  #: the Riccati offsets (columns :data:`Riccati`)
    rsize: int  #: the length of the Riccati buffer


def structure(model) -> Structure:
    """The :class:`Structure` of an :class:`sko.SKOModel`, made on first use and held with what the
    model shares with its :meth:`~sko.SKOModel.with_blocks` models (``model._derived``): one per
    tree and dimensions, gone with the last model of them."""
    out = model._derived.get(Structure)
    if out is None:
        flat = from_sko_model(model)
        roff, rsize = riccati_layout(flat.layout)
        out = model._derived[Structure] = Structure(flat, np.array(flat.layout), np.array(roff), rsize)
    return out


def max_dims(layout) -> tuple[int, int]:
    """``(max m_k, max n_k)``, each at least 1."""
    return (max(1, int(layout[:, Flat.NODE_DIM].max(initial=0))),
            max(1, int(layout[:, Flat.HINGE_DIM].max(initial=0))))

"""The CFA matrix ``A = W* φ^{-*} M^{-1} φ^{-1} W`` as a block-sparse matrix (CFA.md; the paper's
Eq. 31–38).

With ``φ^{-1} = I − ℰ_φ`` (blocks ``I`` on the diagonal and ``−φ(℘(k), k)`` at ``(℘(k), k)``),
``A(i, j) = Σ_l W*(i) φ^{-*}(i, l) M^{-1}(l) φ^{-1}(l, j) W(j)`` has exactly four kinds of
nonzero blocks (only between nodes with ``s_k > 0``):

* ``"node"``    ``A(k, k) = W*(k) [M^{-1}(k) + φ*(℘(k), k) M^{-1}(℘(k)) φ(℘(k), k)] W(k)``
* ``"parent"``  ``A(k, ℘(k)) = −W*(k) φ*(℘(k), k) M^{-1}(℘(k)) W(℘(k))``
* ``"child"``   ``A(℘(k), k) = −W*(℘(k)) M^{-1}(℘(k)) φ(℘(k), k) W(k)``
* ``"sibling"`` ``A(i, j) = W*(i) φ*(p, i) M^{-1}(p) φ(p, j) W(j)`` for children ``i ≠ j`` of ``p``

(the paper's ``A_j``, ``B_c(j)``, ``D_{j,o(j_m)}`` and ``b_{o(j_a),o(j_b)}``). Base bodies hang
from the root, which has no inertia: they have no parent and no sibling blocks. Assembly costs
``O(N)`` block products plus one product per sibling pair (``Σ_p |C(p)|²``, bounded branching).
"""

from __future__ import annotations

import functools

import numpy as np
import scipy.sparse

from sko.model import SKOModel

from .. import dispatch
from .split import ForceSplit, check_split

__all__ = ["constraint_pattern", "constraint_blocks", "constraint_matrix"]

#: kinds of blocks of ``A`` in the rows of :func:`block_pairs` (:func:`constraint_pattern`)
NODE_BLOCK, CHILD_BLOCK, PARENT_BLOCK, SIBLING_BLOCK = range(4)


def constraint_pattern(model: SKOModel, split: ForceSplit | None = None) -> dict:
    """The predicted nonzero blocks of ``A``: ``{(i, j): kind}`` over body pairs with
    ``s_i, s_j > 0``, ``kind`` one of ``"node"``, ``"parent"``, ``"child"``, ``"sibling"``."""
    split = check_split(model, split)
    tree = model.tree
    s = split.constraint_dims
    bodies = model.bodies
    pattern = {}
    for i, p in enumerate(tree.parent_indices):
        if s[i] == 0:
            continue
        pattern[bodies[i], bodies[i]] = "node"
        if p >= 0 and s[p] > 0:
            pattern[bodies[i], bodies[p]] = "parent"
            pattern[bodies[p], bodies[i]] = "child"
    for children in tree.children_indices:
        for i in children:
            for j in children:
                if i != j and s[i] and s[j]:
                    pattern[bodies[i], bodies[j]] = "sibling"
    return pattern


def constraint_blocks(model: SKOModel, split: ForceSplit | None = None) -> dict:
    """The nonzero blocks of ``A`` by index pair: ``{(i, j): A(i, j)}`` (positions in the
    model's body order), exactly the pairs of :func:`constraint_pattern`."""
    split = check_split(model, split)
    pairs, data = block_buffer(split)
    W = split.W_by_index
    return {(i, j): data[o: o + W[i].shape[1] * W[j].shape[1]].reshape(W[i].shape[1], W[j].shape[1])
            for _, i, j, o in pairs.tolist()}


def block_buffer(split: ForceSplit) -> tuple[np.ndarray, np.ndarray]:
    """The blocks of ``A`` row-major in one buffer, and their rows ``(kind, i, j, offset)``."""
    pairs, size = block_pairs(split.model.tree, split.constraint_dims)
    return pairs, dispatch.run("constraint_block_data", (np.dtype(np.float64),), _block_data, split, pairs, size)


def _block_data(split: ForceSplit, pairs: np.ndarray, size: int) -> np.ndarray:
    """The blocks of ``A`` listed in ``pairs`` (module docstring's four formulas; the node blocks
    symmetrized), row-major at their offsets of one buffer of ``size`` entries."""
    W, Mi = split.W_by_index, split.M_inverse_by_index
    phi, parent = split.model.weights_by_index, split.model.tree.parent_indices
    phi_W = {}  # φ(℘(k), k) W(k), and Y(k) = M^{-1}(℘(k)) φ(℘(k), k) W(k)

    def Y(k: int) -> tuple[np.ndarray, np.ndarray]:
        if k not in phi_W:
            X = phi[k] @ W[k]
            phi_W[k] = X, Mi[parent[k]] @ X
        return phi_W[k]

    out = np.zeros(size)
    for kind, i, j, o in pairs.tolist():
        if kind == NODE_BLOCK:
            B = W[i].T @ (Mi[i] @ W[i])
            if parent[i] >= 0:
                X, Yi = Y(i)
                B = B + X.T @ Yi
            B = (B + B.T) / 2
        elif kind == CHILD_BLOCK:  # A(℘(j), j) = −W*(i) Y(j) with i = ℘(j)
            B = -(W[i].T @ Y(j)[1])
        elif kind == PARENT_BLOCK:  # A(i, ℘(i)) = −Y*(i) W(j) with j = ℘(i)
            B = -(Y(i)[1].T @ W[j])
        else:  # siblings: (φ W)*(i) Y(j)
            B = Y(i)[0].T @ Y(j)[1]
        out[o: o + B.size] = B.ravel()
    return out


@functools.lru_cache(maxsize=64)
def block_pairs(tree, s: tuple) -> tuple[np.ndarray, int]:
    """The blocks of :func:`constraint_pattern` as rows ``(kind, i, j, offset)`` for
    :func:`block_buffer`, and the size of their buffer (they depend on the tree
    and the ``s_k`` only)."""
    rows, offset = [], 0

    def add(kind: int, i: int, j: int) -> None:
        nonlocal offset
        rows.append((kind, i, j, offset))
        offset += s[i] * s[j]

    for i, p in enumerate(tree.parent_indices):
        if s[i]:
            add(NODE_BLOCK, i, i)
            if p >= 0 and s[p]:
                add(CHILD_BLOCK, p, i)
                add(PARENT_BLOCK, i, p)
    for children in tree.children_indices:
        for i in children:
            for j in children:
                if i != j and s[i] and s[j]:
                    add(SIBLING_BLOCK, i, j)
    return np.array(rows, dtype=np.int64).reshape(-1, 4), offset


def constraint_matrix(model: SKOModel, split: ForceSplit | None = None, blocks: dict | None = None) -> scipy.sparse.csr_array:
    """``A = W* φ^{-*} M^{-1} φ^{-1} W`` (Σ s_k × Σ s_k, symmetric positive definite) in CSR
    storage; its stored entries are exactly the blocks of :func:`constraint_pattern`.

    Examples
    --------
    >>> from sko.graphs import TreeDigraph
    >>> tree = TreeDigraph.from_parents({0: None, 1: 0, 2: 0})
    >>> model = SKOModel(tree, phi={1: np.eye(2), 2: np.eye(2)}, H={k: [[1.0, 0.0]] for k in tree.bodies},
    ...                  M={k: np.eye(2) for k in tree.bodies})
    >>> np.abs(constraint_matrix(model).toarray())       # W(k) = ±e₂: node, parent/child, siblings
    array([[1., 1., 1.],
           [1., 2., 1.],
           [1., 1., 2.]])
    """
    split = check_split(model, split)
    n, cs = split.constraint_size, split.constraint_slices
    if blocks is None:  # straight from the block buffer, in its order
        _, data = block_buffer(split)
        placement = _buffer_placement(split.model.tree, split.constraint_dims)
    else:
        placement = tuple((i, j, cs[i].start, cs[i].stop, cs[j].start, cs[j].stop) for i, j in blocks)
        data = np.concatenate([B.ravel() for B in blocks.values()]) if blocks else np.zeros(0)
    if not placement:
        return scipy.sparse.csr_array((n, n), dtype=float)
    order, indices, indptr = _compressed_pattern(placement, n, False)
    return scipy.sparse.csr_array((data[order], indices.copy(), indptr.copy()), shape=(n, n))


def constraint_matrix_csc(split: ForceSplit) -> scipy.sparse.csc_array:
    """``A`` of :func:`constraint_matrix` in CSC storage, straight from the block buffer: the
    arrays of ``constraint_matrix(model, split).tocsc()`` (rows ascending in every column)."""
    n = split.constraint_size
    placement = _buffer_placement(split.model.tree, split.constraint_dims)
    if not placement:
        return scipy.sparse.csc_array((n, n), dtype=float)
    _, data = block_buffer(split)
    order, indices, indptr = _compressed_pattern(placement, n, True)
    return scipy.sparse.csc_array((data[order], indices.copy(), indptr.copy()), shape=(n, n))


@functools.lru_cache(maxsize=64)
def _buffer_placement(tree, s: tuple) -> tuple:
    """``(i, j, row start, row stop, column start, column stop)`` of the blocks of the block
    buffer, in its order (they depend on the tree and the ``s_k`` only)."""
    offsets = np.concatenate([[0], np.cumsum(s, dtype=np.int64)]).tolist()
    pairs, _ = block_pairs(tree, s)
    return tuple((i, j, offsets[i], offsets[i + 1], offsets[j], offsets[j + 1]) for _, i, j, _ in pairs.tolist())


@functools.lru_cache(maxsize=64)
def _compressed_pattern(placement: tuple, n: int, by_column: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The CSR (or, ``by_column``, CSC) structure of ``A`` for blocks placed at ``(i, j, row
    start, row stop, column start, column stop)`` (row-major block data, concatenated in that
    order): the permutation taking the concatenated block data to the stored order, the column
    (row) indices and the row (column) pointers. It depends on the tree and the ``s_k`` only, so
    a simulation computes it once."""
    rows = np.concatenate([np.repeat(np.arange(r0, r1), c1 - c0) for _, _, r0, r1, c0, c1 in placement])
    cols = np.concatenate([np.tile(np.arange(c0, c1), r1 - r0) for _, _, r0, r1, c0, c1 in placement])
    major, minor = (cols, rows) if by_column else (rows, cols)
    order = np.lexsort((minor, major))
    indptr = np.concatenate([[0], np.cumsum(np.bincount(major, minlength=n))])
    return order, minor[order], indptr

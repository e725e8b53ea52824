"""Block-weighted adjacency (BWA) matrices and their 1-resolvents (SKO.md §2).

A BWA matrix ``E`` of a tree has one block per arc ``℘(k) → k``: ``E(℘(k), k) = W_k`` of shape
``m_℘(k) × m_k``; every other block is zero. It is nilpotent, and its 1-resolvent
``(I − E)^{-1} = I + E + E² + …`` is a finite sum. These dense and sparse matrices exist for
checking the recursions, never inside them.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping

import numpy as np
import scipy.sparse as sp

from .arrays import checked_array
from .errors import DimensionError, NotATreeError, SKOError, UnknownNodeError
from .tree import TreeDigraph

__all__ = ["block_offsets", "check_weights", "bwa_matrix", "nilpotency_index", "one_resolvent"]


def block_offsets(tree: TreeDigraph, dims: Mapping[Hashable, int]) -> np.ndarray:
    """Offsets of the bodies' blocks in a stacked vector: body ``tree.bodies[i]`` occupies
    ``offsets[i]:offsets[i + 1]``."""
    sizes = []
    for k in tree.bodies:
        if k not in dims:
            raise DimensionError(f"no dimension given for body {k!r}")
        d = dims[k]
        if not isinstance(d, (int, np.integer)) or d < 0:
            raise DimensionError(f"dimension of body {k!r} must be a non-negative integer, got {d!r}")
        sizes.append(int(d))
    return np.concatenate([[0], np.cumsum(sizes, dtype=int)])


def check_weights(tree: TreeDigraph, dims: Mapping[Hashable, int], weights: Mapping, *, finite: bool = True) -> dict:
    """Validate arc weights against the tree and node dimensions; return them as checked,
    read-only 2-D arrays (see :func:`sko.graphs.arrays.checked_array`; ``finite=False`` checks shapes
    and dtype only).

    Every non-base body ``k`` needs ``weights[k]`` of shape ``dims[℘(k)] × dims[k]``; base bodies
    (whose arc comes from the root) and unknown labels must not have one.
    """
    if not isinstance(weights, Mapping):
        raise DimensionError(f"weights must be a mapping body → weight array phi(parent, body), got "
                             f"{type(weights).__name__}")
    out = {}
    for k in weights:
        if k not in tree:
            raise UnknownNodeError(f"a weight is given for {k!r}, which is not a body of the tree")
        if tree.parent(k) is None:
            raise DimensionError(f"base body {k!r} has a weight, but its arc comes from the root, which has no node block")
    for k in tree.bodies:
        p = tree.parent(k)
        if p is None:
            continue
        if k not in weights:
            raise DimensionError(f"missing the weight phi({p!r}, {k!r}) of body {k!r}")
        W = checked_array(weights[k], 2, f"weight phi({p!r}, {k!r})", k, finite)
        expected = (dims[p], dims[k])
        if W.shape != expected:
            raise DimensionError(f"weight phi({p!r}, {k!r}) of body {k!r} has shape {W.shape}, expected m_parent x m_k = {expected}")
        out[k] = W
    return out


def bwa_matrix(tree: TreeDigraph, dims: Mapping[Hashable, int], weights: Mapping, *, sparse: bool = False):
    """The BWA matrix ``E`` with ``E(℘(k), k) = weights[k]`` (dense, or scipy CSR if ``sparse``).

    Examples
    --------
    >>> tree = TreeDigraph.from_parents({1: None, 2: 1})
    >>> bwa_matrix(tree, {1: 1, 2: 2}, {2: [[3.0, 4.0]]})
    array([[0., 3., 4.],
           [0., 0., 0.],
           [0., 0., 0.]])
    """
    off = block_offsets(tree, dims)
    W = check_weights(tree, dims, weights)
    n = int(off[-1])
    dtype = np.result_type(float, *W.values()) if W else np.dtype(float)
    if sparse:
        if dtype == object:
            raise SKOError("scipy.sparse does not hold object (symbolic) entries; use sparse=False")
        E = sp.lil_array((n, n), dtype=dtype)
    else:
        E = np.zeros((n, n), dtype=dtype)
    for k, Wk in W.items():
        i, j = tree.index(tree.parent(k)), tree.index(k)
        E[off[i] : off[i + 1], off[j] : off[j + 1]] = Wk
    return E.tocsr() if sparse else E


def _is_zero(A) -> bool:
    if sp.issparse(A):
        return A.count_nonzero() == 0
    A = np.asarray(A)
    return all(e == 0 for e in A.flat) if A.dtype == object else not A.any()


def _square_matrix(E):
    """``E`` as a square dense array (checked like every input) or sparse matrix."""
    if not sp.issparse(E):
        E = checked_array(E, 2, "the matrix E")
    if E.ndim != 2 or E.shape[0] != E.shape[1]:
        raise DimensionError(f"the matrix E must be square, got shape {E.shape}")
    return E


def nilpotency_index(E) -> int:
    """The smallest ``d`` with ``E^d = 0`` (exactly).

    Raises
    ------
    DimensionError
        If ``E`` is not a square matrix.
    NotATreeError
        If ``E`` is not nilpotent (its digraph has a directed cycle).
    """
    E = _square_matrix(E)
    n = E.shape[0]
    P = sp.identity(n, format="csr", dtype=E.dtype) if sp.issparse(E) else np.eye(n, dtype=E.dtype)
    for d in range(n + 1):
        if _is_zero(P):
            return d
        P = P @ E
    raise NotATreeError("the matrix is not nilpotent: its digraph has a directed cycle, so it has no 1-resolvent")


def one_resolvent(E):
    """``(I − E)^{-1} = I + E + E² + …`` of a nilpotent ``E`` (dense, sparse or object dtype).

    Summed exactly by doubling, ``S ← S (I + E^{2^r})``, so it takes ``⌈log₂ d⌉`` squarings for
    nilpotency index ``d``; structural zeros stay exact zeros.

    Raises
    ------
    DimensionError
        If ``E`` is not a square matrix.
    NotATreeError
        If ``E`` is not nilpotent.
    """
    E = _square_matrix(E)
    n = E.shape[0]
    identity = sp.identity(n, format="csr", dtype=E.dtype) if sp.issparse(E) else np.eye(n, dtype=E.dtype)
    S, P = identity + E, E  # S = Σ_{k < 2^r} E^k, P = E^{2^{r-1}}
    for _ in range(max(n, 1).bit_length() + 1):
        P = P @ P
        if _is_zero(P):
            return S
        S = S + S @ P
    raise NotATreeError("the matrix is not nilpotent: its digraph has a directed cycle, so it has no 1-resolvent")

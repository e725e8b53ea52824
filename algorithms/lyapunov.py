"""Forward and backward Lyapunov equations on any SKO model (SKO.md §6 Lemma 3, §7 Lemmas 5, 6).

For two SPOs ``φ1, φ2`` of the model's digraph (weights ``weights1``, ``weights2``; the model's
own ``φ`` by default) and a block-diagonal ``X = diag(X(k))`` (``X(k)`` of shape ``m_k × m_k``):

* forward: ``Z = φ1 X φ2*``. The block-diagonal ``Y`` of ``Y = ℰ_φ1 Y ℰ_φ2* + X`` (Eq. 12) comes
  from a gather (Eq. 14), ``Y(k) = Σ_{j ∈ C(k)} φ1(k, j) Y(j) φ2*(k, j) + X(k)``, and
  ``Z = Y + φ̃1 Y + Y φ̃2*`` (Eq. 11). Blocks (Eq. 15): ``Z(k, k) = Y(k)``;
  ``Z(i, j) = φ1(i, j) Y(j)`` for ``i`` a strict ancestor of ``j``; ``Z(i, j) = Y(i) φ2*(j, i)``
  for ``j`` a strict ancestor of ``i``; ``0`` for unrelated pairs.
* backward: ``Z = φ1* X φ2``. The block-diagonal ``Y`` of ``Y = X + diagOf(ℰ_φ1* Y ℰ_φ2)``
  (Eq. 22) comes from a scatter (Eq. 24), ``Y(k) = φ1*(℘(k), k) Y(℘(k)) φ2(℘(k), k) + X(k)``,
  and ``Z = Y + φ̃1* Y + Y φ̃2 + R`` (Eq. 21). Blocks: ``Z(i, j) = φ1*(l, i) Y(l) φ2(l, j)`` with
  ``l`` the nearest common ancestor of ``i`` and ``j`` (``l = j`` or ``l = i`` for related pairs,
  the branching body for unrelated ones, in ``R``); ``0`` across separate trees of a forest.

``Y`` costs O(N); a block ``Z(i, j)`` costs the length of the path between ``i`` and ``j``.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from types import MappingProxyType

import numpy as np

from sko.graphs.errors import DimensionError, SKOError
from sko.arrays import checked_array, result_dtype
from sko.model import SKOModel

__all__ = ["ForwardLyapunov", "BackwardLyapunov", "forward_lyapunov", "backward_lyapunov", "block_diagonal_blocks"]


def block_diagonal_blocks(model: SKOModel, X, name: str = "X") -> list[np.ndarray]:
    """Checked diagonal blocks ``X(k)`` (``m_k × m_k``), per index, from a mapping body -> array."""
    if not isinstance(X, Mapping):
        raise SKOError(f"{name} must be a mapping body -> block X(k), got {type(X).__name__}")
    unknown = [k for k in X if k not in model.tree]
    if unknown:
        raise DimensionError(f"{name} has blocks for {unknown!r}, which are not bodies of the model")
    blocks = []
    for k in model.bodies:
        if k not in X:
            raise DimensionError(f"{name} has no block for body {k!r}")
        Xk = checked_array(X[k], 2, f"block {name}", k)
        m = model.node_dim(k)
        if Xk.shape != (m, m):
            raise DimensionError(f"block {name} of body {k!r} has shape {Xk.shape}, expected m_k x m_k = {(m, m)}")
        blocks.append(Xk)
    return blocks


class _Lyapunov:
    """Common part of the two results: ``Y`` and the two weight sets, per index."""

    def __init__(self, model: SKOModel, Y: list, W1: tuple, W2: tuple, dtype):
        self.model = model
        self.dtype = dtype
        self.Y_by_index = tuple(Y)
        for Yk in Y:
            Yk.setflags(write=False)
        self.Y = MappingProxyType(dict(zip(model.bodies, Y)))
        self._W1, self._W2 = W1, W2

    def _path_product(self, W: tuple, top: int, bottom: int):
        """``W(top, bottom)`` along the path (``top`` a strict ancestor of ``bottom``)."""
        parent = self.model.tree.parent_indices
        A = W[bottom]
        j = parent[bottom]
        while j != top:
            A = W[j] @ A
            j = parent[j]
        return A

    def _zero(self, i: int, j: int) -> np.ndarray:
        m = self.model.M_by_index
        return np.zeros((m[i].shape[0], m[j].shape[0]), dtype=self.dtype)

    def matrix(self) -> np.ndarray:
        """The dense ``Z`` assembled block by block (O(N²) memory: for checking and small models)."""
        sl = self.model.node_slices
        n = len(sl)
        Z = np.zeros((self.model.node_size,) * 2, dtype=self.dtype)
        for i in range(n):
            for j in range(n):
                Z[sl[i], sl[j]] = self._block(i, j)
        return Z

    def block(self, i: Hashable, j: Hashable) -> np.ndarray:
        """The block ``Z(i, j)`` for bodies ``i``, ``j`` (``m_i × m_j``)."""
        tree = self.model.tree
        return self._block(tree.index(i), tree.index(j))


class ForwardLyapunov(_Lyapunov):
    """``Z = φ1 X φ2*`` of :func:`forward_lyapunov`: ``Y`` (dict body -> ``Y(k)``) and blocks of ``Z``."""

    def _block(self, i: int, j: int) -> np.ndarray:
        tree = self.model.tree
        Y = self.Y_by_index
        if i == j:
            return Y[i].copy()
        bi, bj = tree.bodies[i], tree.bodies[j]
        if tree.is_ancestor(bi, bj):  # Z(i, j) = φ1(i, j) Y(j)
            return self._path_product(self._W1, i, j) @ Y[j]
        if tree.is_ancestor(bj, bi):  # Z(i, j) = Y(i) φ2*(j, i)
            return Y[i] @ self._path_product(self._W2, j, i).T
        return self._zero(i, j)

    def matrix(self) -> np.ndarray:
        """The dense ``Z``: only related blocks are filled, each once, by the path recursions of
        Eq. 15 (O(N d) block products); unrelated blocks stay exactly zero."""
        tree = self.model.tree
        parent, sl = tree.parent_indices, self.model.node_slices
        Z = np.zeros((self.model.node_size,) * 2, dtype=self.dtype)
        for k, Yk in enumerate(self.Y_by_index):
            Z[sl[k], sl[k]] = Yk
            A, B, j = Yk, Yk, k
            while parent[j] >= 0:  # Z(℘(j), k) = φ1(℘(j), j) Z(j, k), Z(k, ℘(j)) = Z(k, j) φ2*(℘(j), j)
                A, B = self._W1[j] @ A, B @ self._W2[j].T
                j = parent[j]
                Z[sl[j], sl[k]] = A
                Z[sl[k], sl[j]] = B
        return Z


class BackwardLyapunov(_Lyapunov):
    """``Z = φ1* X φ2`` of :func:`backward_lyapunov`: ``Y`` (dict body -> ``Y(k)``) and blocks of ``Z``."""

    def _block(self, i: int, j: int) -> np.ndarray:
        tree = self.model.tree
        Y = self.Y_by_index
        if i == j:
            return Y[i].copy()
        l_ = tree.nearest_common_ancestor(tree.bodies[i], tree.bodies[j])
        if l_ is None:  # separate trees of the forest
            return self._zero(i, j)
        l = tree.index(l_)
        Z = Y[l]
        if l != i:  # φ1*(l, i) Y(l)
            Z = self._path_product(self._W1, l, i).T @ Z
        if l != j:  # … φ2(l, j)
            Z = Z @ self._path_product(self._W2, l, j)
        return Z


def _setup(model: SKOModel, X, weights1, weights2):
    X = block_diagonal_blocks(model, X)
    W1 = model.weights_index(weights1)
    W2 = W1 if weights2 is weights1 else model.weights_index(weights2)
    dtype = result_dtype(model.dtype, *X, *(w for w in W1 + W2 if w is not None))
    return [np.array(Xk, dtype=dtype) for Xk in X], W1, W2, dtype


def forward_lyapunov(model: SKOModel, X: Mapping, weights1: Mapping | None = None, weights2: Mapping | None = None) -> ForwardLyapunov:
    """Solve the forward Lyapunov equation ``Y = ℰ_φ1 Y ℰ_φ2* + X`` by gather (Lemma 3, Eq. 12–15).

    Parameters
    ----------
    model : SKOModel
        Gives the digraph and the node dimensions.
    X : mapping body -> array (m_k × m_k)
        The diagonal blocks of ``X``.
    weights1, weights2 : mapping body -> array, optional
        Arc weights of ``φ1`` and ``φ2`` (``{k: W(℘(k), k)}``); the model's ``φ`` when omitted.

    Returns
    -------
    ForwardLyapunov
        ``.Y`` (dict body -> ``Y(k)``), ``.block(i, j)`` = ``(φ1 X φ2*)(i, j)`` (zero for
        unrelated pairs), ``.matrix()`` the dense ``Z`` (for checking).

    Examples
    --------
    >>> import numpy as np
    >>> from sko.graphs import TreeDigraph
    >>> tree = TreeDigraph.from_parents({0: None, 1: 0, 2: 0})
    >>> model = SKOModel(tree, phi={1: [[2.0]], 2: [[1.0]]}, H={k: [[1.0]] for k in tree.bodies},
    ...                  M={k: [[1.0]] for k in tree.bodies})
    >>> Z = forward_lyapunov(model, {k: [[1.0]] for k in tree.bodies})
    >>> float(Z.Y[0][0, 0]), float(Z.block(0, 1)[0, 0]), float(Z.block(1, 2)[0, 0])
    (6.0, 2.0, 0.0)
    """
    Y, W1, W2, dtype = _setup(model, X, weights1, weights2)
    parent = model.tree.parent_indices
    for i in model.tree.gather_indices:
        p = parent[i]
        if p >= 0:
            Y[p] = Y[p] + W1[i] @ Y[i] @ W2[i].T
    return ForwardLyapunov(model, Y, W1, W2, dtype)


def backward_lyapunov(model: SKOModel, X: Mapping, weights1: Mapping | None = None, weights2: Mapping | None = None) -> BackwardLyapunov:
    """Solve the backward Lyapunov equation ``Y = X + diagOf(ℰ_φ1* Y ℰ_φ2)`` by scatter
    (Lemma 5, Eq. 21–24; Algorithm 4.3).

    Parameters
    ----------
    model : SKOModel
    X : mapping body -> array (m_k × m_k)
    weights1, weights2 : mapping body -> array, optional
        Arc weights of ``φ1`` and ``φ2``; the model's ``φ`` when omitted.

    Returns
    -------
    BackwardLyapunov
        ``.Y`` (dict body -> ``Y(k)``), ``.block(i, j)`` = ``(φ1* X φ2)(i, j)`` through the
        nearest common ancestor (zero across separate trees), ``.matrix()`` the dense ``Z``.

    Examples
    --------
    >>> import numpy as np
    >>> from sko.graphs import TreeDigraph
    >>> tree = TreeDigraph.from_parents({0: None, 1: 0, 2: 0})
    >>> model = SKOModel(tree, phi={1: [[2.0]], 2: [[3.0]]}, H={k: [[1.0]] for k in tree.bodies},
    ...                  M={k: [[1.0]] for k in tree.bodies})
    >>> Z = backward_lyapunov(model, {k: [[1.0]] for k in tree.bodies})
    >>> float(Z.Y[1][0, 0]), float(Z.block(1, 2)[0, 0])     # 2·1·2 + 1, 2·1·3
    (5.0, 6.0)
    """
    Y, W1, W2, dtype = _setup(model, X, weights1, weights2)
    parent = model.tree.parent_indices
    for i in model.tree.scatter_indices:
        p = parent[i]
        if p >= 0:
            Y[i] = Y[i] + W1[i].T @ Y[p] @ W2[i]
    return BackwardLyapunov(model, Y, W1, W2, dtype)

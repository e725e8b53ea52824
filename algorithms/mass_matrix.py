"""Composite body inertias and the mass matrix on any SKO model (SKO.md §6, Lemma 4,
Algorithms 4.1 and 4.2).

The composite body inertias solve the forward Lyapunov equation ``ℛ = ℰ_φ ℛ ℰ_φ* + M``
(Eq. 18) with ``φ1 = φ2 = φ`` and ``X = M``; then (Eq. 17)
``ℳ = H φ M φ* H* = H ℛ H* + H φ̃ ℛ H* + H ℛ φ̃* H*``, filled by Algorithm 4.2 (CRBA)::

    for k in gather order:
        ℳ(k, k) = H(k) ℛ(k) H*(k)
        X = ℛ(k) H*(k);  j = k
        while ℘(j) is not the root:
            X = φ(℘(j), j) X;  j = ℘(j)
            ℳ(j, k) = H(j) X;  ℳ(k, j) = ℳ(j, k)*

Only blocks of related pairs are touched (O(N d) block products, ``d`` the tree depth); blocks of
unrelated pairs are exactly zero (branch-induced sparsity).
"""

from __future__ import annotations

import numpy as np

from sko.model import SKOModel

from . import dispatch
from .lyapunov import forward_lyapunov

__all__ = ["composite_inertias", "mass_matrix"]


def composite_inertias(model: SKOModel) -> dict:
    """Composite body inertias ``{k: ℛ(k)}`` by gather (Algorithm 4.1, Eq. 18):
    ``ℛ(k) = Σ_{j ∈ C(k)} φ(k, j) ℛ(j) φ*(k, j) + M(k)``.

    Examples
    --------
    >>> import numpy as np
    >>> from sko.graphs import TreeDigraph
    >>> tree = TreeDigraph.from_parents({0: None, 1: 0})
    >>> model = SKOModel(tree, phi={1: [[2.0]]}, H={0: [[1.0]], 1: [[1.0]]}, M={0: [[1.0]], 1: [[3.0]]})
    >>> {k: float(R[0, 0]) for k, R in composite_inertias(model).items()}
    {0: 13.0, 1: 3.0}
    """
    return dispatch.run("composite_inertias", (model.dtype,), _composite_inertias, model)


def _composite_inertias(model: SKOModel) -> dict:
    return dict(forward_lyapunov(model, model.M).Y)


def mass_matrix(model: SKOModel) -> np.ndarray:
    """The mass matrix ``ℳ = H φ M φ* H*`` (Eq. 2) by Algorithm 4.2, as a dense array.

    Only the blocks of related pairs are computed; the others are left exactly zero.

    Examples
    --------
    >>> import numpy as np
    >>> from sko.graphs import TreeDigraph
    >>> tree = TreeDigraph.from_parents({0: None, 1: 0, 2: 0})
    >>> model = SKOModel(tree, phi={1: [[1.0]], 2: [[1.0]]}, H={k: [[1.0]] for k in tree.bodies},
    ...                  M={k: [[1.0]] for k in tree.bodies})
    >>> mass_matrix(model)
    array([[3., 1., 1.],
           [1., 1., 0.],
           [1., 0., 1.]])
    """
    return dispatch.run("mass_matrix", (model.dtype,), _mass_matrix, model)


def _mass_matrix(model: SKOModel) -> np.ndarray:
    R = forward_lyapunov(model, model.M)
    parent = model.tree.parent_indices
    W, H, ds = model.weights_by_index, model.H_by_index, model.dof_slices
    out = np.zeros((model.dof_size, model.dof_size), dtype=R.dtype)
    for k in model.tree.gather_indices:
        X = R.Y_by_index[k] @ H[k].T
        out[ds[k], ds[k]] = H[k] @ X
        j = parent[k]
        i = k
        while j >= 0:
            X = W[i] @ X
            block = H[j] @ X
            out[ds[j], ds[k]] = block
            out[ds[k], ds[j]] = block.T
            i, j = j, parent[j]
    return out

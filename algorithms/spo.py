"""SPO products by gather and scatter recursions (SKO.md §4: Lemmas 1, 2, Corollary 3.1).

For the SPO ``φ = (I − ℰ_φ)^{-1}`` of any weights on the model's digraph:

* ``y = φ x``   gather: ``y(k) = Σ_{j ∈ C(k)} φ(k, j) y(j) + x(k)``
* ``y = φ* x``  scatter: ``y(k) = φ*(℘(k), k) y(℘(k)) + x(k)``
* ``y = φ̃ x``   gather: ``y(k) = Σ_{j ∈ C(k)} φ(k, j) [y(j) + x(j)]``
* ``y = φ̃* x``  scatter: ``y(k) = φ*(℘(k), k) [y(℘(k)) + x(℘(k))]``

Each costs O(N). A gather accumulates every node into its parent once the node is complete
(all its children have been added); a scatter reads the finished parent. ``weights`` defaults
to the model's own ``φ(℘(k), k)``; pass another SPO's weights (e.g. the ψ weights of the
Riccati recursion) as a mapping ``{k: W_k}`` to apply that SPO instead.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from sko.arrays import result_dtype
from sko.model import SKOModel

from . import dispatch

__all__ = ["phi_apply", "phi_star_apply", "phi_tilde_apply", "phi_tilde_star_apply"]


def phi_apply(model: SKOModel, x, weights: Mapping | None = None) -> np.ndarray:
    """``y = φ x`` by gather (Lemma 1). ``x`` and ``y`` are stacked node vectors.

    Examples
    --------
    >>> import numpy as np
    >>> from sko.graphs import TreeDigraph
    >>> tree = TreeDigraph.from_parents({0: None, 1: 0, 2: 1})
    >>> model = SKOModel(tree, phi={1: [[2.0]], 2: [[3.0]]}, H={k: [[1.0]] for k in tree.bodies},
    ...                  M={k: [[1.0]] for k in tree.bodies})
    >>> phi_apply(model, [0.0, 0.0, 1.0])       # φ(0, 2) = 2·3, φ(1, 2) = 3
    array([6., 3., 1.])
    """
    x, W, y = _setup(model, x, weights, copy=True)
    return dispatch.run("phi_apply", (y.dtype,), _phi, model, x, W, y)


def _phi(model: SKOModel, x: np.ndarray, W: tuple, y: np.ndarray) -> np.ndarray:
    parent, sl = model.tree.parent_indices, model.node_slices
    for i in model.tree.gather_indices:
        p = parent[i]
        if p >= 0:
            y[sl[p]] += W[i] @ y[sl[i]]
    return y


def phi_star_apply(model: SKOModel, x, weights: Mapping | None = None) -> np.ndarray:
    """``y = φ* x`` by scatter (Lemma 2)."""
    x, W, y = _setup(model, x, weights, copy=True)
    return dispatch.run("phi_star_apply", (y.dtype,), _phi_star, model, x, W, y)


def _phi_star(model: SKOModel, x: np.ndarray, W: tuple, y: np.ndarray) -> np.ndarray:
    parent, sl = model.tree.parent_indices, model.node_slices
    for i in model.tree.scatter_indices:
        p = parent[i]
        if p >= 0:
            y[sl[i]] += W[i].T @ y[sl[p]]
    return y


def phi_tilde_apply(model: SKOModel, x, weights: Mapping | None = None) -> np.ndarray:
    """``y = φ̃ x = (φ − I) x`` by gather (Corollary 3.1)."""
    x, W, y = _setup(model, x, weights, copy=False)
    return dispatch.run("phi_tilde_apply", (y.dtype,), _phi_tilde, model, x, W, y)


def _phi_tilde(model: SKOModel, x: np.ndarray, W: tuple, y: np.ndarray) -> np.ndarray:
    parent, sl = model.tree.parent_indices, model.node_slices
    for i in model.tree.gather_indices:
        p = parent[i]
        if p >= 0:
            y[sl[p]] += W[i] @ (y[sl[i]] + x[sl[i]])
    return y


def phi_tilde_star_apply(model: SKOModel, x, weights: Mapping | None = None) -> np.ndarray:
    """``y = φ̃* x = (φ − I)* x`` by scatter (Corollary 3.1); zero on base bodies."""
    x, W, y = _setup(model, x, weights, copy=False)
    return dispatch.run("phi_tilde_star_apply", (y.dtype,), _phi_tilde_star, model, x, W, y)


def _phi_tilde_star(model: SKOModel, x: np.ndarray, W: tuple, y: np.ndarray) -> np.ndarray:
    parent, sl = model.tree.parent_indices, model.node_slices
    for i in model.tree.scatter_indices:
        p = parent[i]
        if p >= 0:
            y[sl[i]] = W[i].T @ (y[sl[p]] + x[sl[p]])
    return y


def _setup(model: SKOModel, x, weights: Mapping | None, copy: bool):
    """Checked input, per-index weights (the model's own tuple when ``weights`` is None), and the
    output (a copy of ``x`` or zeros)."""
    x = model.node_vector(x, "x")
    W = model.weights_index(weights)
    others = () if weights is None else [w for w in W if w is not None]
    dtype = result_dtype(model.dtype, x, *others)
    y = x.astype(dtype, copy=True) if copy else np.zeros(x.shape[0], dtype=dtype)
    return x, W, y

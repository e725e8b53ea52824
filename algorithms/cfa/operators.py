"""The operators of the CFA applied to vectors in O(N) (CFA.md, "The CFA").

``φ^{-1} = I − ℰ_φ`` is applied block by block from the arc weights, never through ``φ``::

    (φ^{-1} x)(k)  = x(k) − Σ_{j ∈ C(k)} φ(k, j) x(j)
    (φ^{-*} x)(k)  = x(k) − φ*(℘(k), k) x(℘(k))

and with ``Ω = φ^{-*} M^{-1} φ^{-1}`` (block tridiagonal in the tree sense: node, parent, child
and sibling blocks):

    B   = W* Ω H⁺           B* = H⁺* Ω W           C = H⁺* Ω H⁺

are applied as products, never formed as matrices.
"""

from __future__ import annotations

import numpy as np

from sko.model import SKOModel

from .. import dispatch
from .split import ForceSplit, H_plus_apply, H_plus_star_apply, W_apply, W_star_apply, check_split

__all__ = ["phi_inverse_apply", "phi_inverse_star_apply", "constraint_operator_apply", "B_apply", "B_star_apply",
           "C_apply"]


def phi_inverse_apply(model: SKOModel, x) -> np.ndarray:
    """``y = φ^{-1} x = (I − ℰ_φ) x``: ``y(℘(k)) −= φ(℘(k), k) x(k)`` for every arc (O(N))."""
    x = model.node_vector(x, "x")
    y = x.copy()
    sl = model.node_slices
    for i, p in enumerate(model.tree.parent_indices):
        if p >= 0:
            y[sl[p]] -= model.weights_by_index[i] @ x[sl[i]]
    return y


def phi_inverse_star_apply(model: SKOModel, x) -> np.ndarray:
    """``y = φ^{-*} x = (I − ℰ_φ*) x``: ``y(k) −= φ*(℘(k), k) x(℘(k))`` for every arc (O(N))."""
    x = model.node_vector(x, "x")
    y = x.copy()
    sl = model.node_slices
    for i, p in enumerate(model.tree.parent_indices):
        if p >= 0:
            y[sl[i]] -= model.weights_by_index[i].T @ x[sl[p]]
    return y


def constraint_operator_apply(model: SKOModel, f, split: ForceSplit | None = None) -> np.ndarray:
    """``φ^{-*} M^{-1} φ^{-1} f``: the node accelerations ``α`` of the inter-node forces ``f`` when
    ``a = b = 0`` (from ``f = φ M α``)."""
    split = check_split(model, split)
    x = model.node_vector(f, "f")
    if x.dtype.kind == "c":  # Ω is real and linear
        return constraint_operator_apply(model, x.real, split) + 1j * constraint_operator_apply(model, x.imag, split)
    x = np.asarray(x, dtype=np.float64)
    return dispatch.run("constraint_operator", (x.dtype,), _omega, split, x)


def _omega(split: ForceSplit, x: np.ndarray) -> np.ndarray:
    """``φ^{-*} M^{-1} φ^{-1} x``, node by node."""
    y = phi_inverse_apply(split.model, x)
    z = np.empty_like(y)
    for Mi, sl in zip(split.M_inverse_by_index, split.model.node_slices):
        z[sl] = Mi @ y[sl]
    return phi_inverse_star_apply(split.model, z)


def B_apply(model: SKOModel, F_T, split: ForceSplit | None = None) -> np.ndarray:
    """``B F_T = W* φ^{-*} M^{-1} φ^{-1} H⁺ F_T`` (hinge → constraint vector)."""
    split = check_split(model, split)
    return W_star_apply(split, constraint_operator_apply(model, H_plus_apply(split, F_T), split))


def B_star_apply(model: SKOModel, F_S, split: ForceSplit | None = None) -> np.ndarray:
    """``B* F_S = H⁺* φ^{-*} M^{-1} φ^{-1} W F_S`` (constraint → hinge vector)."""
    split = check_split(model, split)
    return H_plus_star_apply(split, constraint_operator_apply(model, W_apply(split, F_S), split))


def C_apply(model: SKOModel, F_T, split: ForceSplit | None = None) -> np.ndarray:
    """``C F_T = H⁺* φ^{-*} M^{-1} φ^{-1} H⁺ F_T`` (hinge → hinge vector)."""
    split = check_split(model, split)
    return H_plus_star_apply(split, constraint_operator_apply(model, H_plus_apply(split, F_T), split))

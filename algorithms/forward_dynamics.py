"""Articulated body forward dynamics on any SKO model (SKO.md §11, Lemma 12, Algorithm 6.1).

``θ̈ = ℳ^{-1}(T − 𝒞) = [I − H ψ K]* D^{-1} [T − H ψ (K T + P a + b)] − K* ψ* a`` (Eq. 54),
computed after the Riccati gather (:func:`sko.algorithms.riccati.articulated_inertias`) by one
gather and one scatter (Eq. 58)::

    gather (tips → base):
        z(k)  = Σ_{j ∈ C(k)} φ(k, j) z⁺(j) + P(k) a(k) + b(k)
        ε(k)  = T(k) − H(k) z(k)
        ν(k)  = D^{-1}(k) ε(k)
        z⁺(k) = z(k) + G(k) ε(k)
    scatter (base → tips), α(root) = 0:
        α⁺(k) = φ*(℘(k), k) α(℘(k))
        θ̈(k)  = ν(k) − G*(k) α⁺(k)
        α(k)  = α⁺(k) + H*(k) θ̈(k) + a(k)

Both passes cost O(N). The same passes with ``a = b = 0`` give ``ℳ^{-1} y``
(:func:`sko.algorithms.innovations.mass_matrix_solve`); they accept a matrix of right-hand sides.
The compiled engine runs them on float64 and complex128 models (:mod:`sko.engine.algorithms`).
"""

from __future__ import annotations

import numpy as np

from sko.arrays import result_dtype
from sko.model import SKOModel

from . import dispatch
from .riccati import ArticulatedInertias, check_articulated

__all__ = ["forward_dynamics", "articulated_body"]


def forward_dynamics(model: SKOModel, T, a=None, b=None, articulated: ArticulatedInertias | None = None) -> np.ndarray:
    """``θ̈ = ℳ^{-1}(T − 𝒞)`` by the articulated body algorithm (Algorithm 6.1, Eq. 54, 58).

    Parameters
    ----------
    model : SKOModel
    T : array (Σ n_k,)
        Stacked hinge forces.
    a, b : array (Σ m_k,), optional
        Stacked Coriolis accelerations and gyroscopic forces (Eq. 1); ``None`` is zero.
    articulated : ArticulatedInertias, optional
        A Riccati result of this model to reuse (computed when omitted).

    Returns
    -------
    numpy.ndarray (Σ n_k,)
        The hinge accelerations ``θ̈``.

    Raises
    ------
    DimensionError, NonFiniteError
        On vectors of the wrong length or with non-finite entries.
    NotPositiveDefiniteError
        If a ``D(k)`` is not positive definite.

    Examples
    --------
    >>> import numpy as np
    >>> from sko.graphs import TreeDigraph
    >>> tree = TreeDigraph.from_parents({0: None, 1: 0})
    >>> model = SKOModel(tree, phi={1: [[1.0]]}, H={0: [[1.0]], 1: [[1.0]]}, M={0: [[2.0]], 1: [[4.0]]})
    >>> qdd = forward_dynamics(model, [6.0, 4.0])      # ℳ = [[6, 4], [4, 4]]
    >>> np.allclose(qdd, [1.0, 0.0], rtol=0, atol=1e-15)
    True
    """
    T = model.dof_vector(T, "T")
    a = None if a is None else model.node_vector(a, "a")
    b = None if b is None else model.node_vector(b, "b")
    ab = check_articulated(model, articulated)
    return articulated_body(ab, T, a, b)


def articulated_body(ab: ArticulatedInertias, T: np.ndarray, a: np.ndarray | None, b: np.ndarray | None) -> np.ndarray:
    """The passes of Algorithm 6.1 on checked input (:func:`articulated_body_passes`), on the
    path :mod:`~sko.algorithms.dispatch` chooses."""
    dtypes = (ab.dtype, T.dtype, *(x.dtype for x in (a, b) if x is not None))
    return dispatch.run("articulated_body", dtypes, articulated_body_passes, ab, T, a, b)


def articulated_body_passes(ab: ArticulatedInertias, T: np.ndarray, a: np.ndarray | None, b: np.ndarray | None) -> np.ndarray:
    """The gather and scatter of Algorithm 6.1 on checked input, each body once (O(N)).

    ``T`` has shape ``(Σ n_k,)`` or ``(Σ n_k, r)`` (``r`` right-hand sides); ``a`` and ``b`` are
    stacked node vectors (only with a 1-D ``T``) or ``None`` for zero.
    """
    model = ab.model
    dtype = result_dtype(ab.dtype, T, *(v for v in (a, b) if v is not None))
    T2 = T[:, None] if T.ndim == 1 else T  # every right-hand side is a column
    W, H, parent = model.weights_by_index, model.H_by_index, model.tree.parent_indices
    P, G, D_inv = ab.P_by_index, ab.G_by_index, ab.D_inverse_by_index
    ns, ds = model.node_slices, model.dof_slices

    z = [np.zeros((Hk.shape[1], T2.shape[1]), dtype=dtype) for Hk in H]  # z(k) = P(k) a(k) + b(k) + …
    nu = [None] * len(H)
    for k in model.tree.gather_indices:
        if a is not None:
            z[k] = z[k] + P[k] @ a[ns[k], None]
        if b is not None:
            z[k] = z[k] + b[ns[k], None]
        eps = T2[ds[k]] - H[k] @ z[k]
        nu[k] = D_inv[k] @ eps
        z_plus = z[k] + G[k] @ eps
        if parent[k] >= 0:  # z(℘(k)) += φ(℘(k), k) z⁺(k)
            z[parent[k]] = z[parent[k]] + W[k] @ z_plus

    qdd = np.zeros(T2.shape, dtype=dtype)
    alpha = [None] * len(H)
    for k in model.tree.scatter_indices:
        p = parent[k]
        alpha_plus = W[k].T @ alpha[p] if p >= 0 else np.zeros(z[k].shape, dtype=dtype)
        qdd[ds[k]] = nu[k] - G[k].T @ alpha_plus
        alpha[k] = alpha_plus + H[k].T @ qdd[ds[k]]
        if a is not None:
            alpha[k] = alpha[k] + a[ns[k], None]
    return qdd.reshape(T.shape)

"""Articulated body forward dynamics on any SKO model (SKO.md §11, Lemma 12, Algorithm 6.1).

``θ̈ = ℳ^{-1}(T − 𝒞) = [I − H ψ K]* D^{-1} [T − H ψ (K T + P a + b)] − K* ψ* a`` (Eq. 54),
computed after the Riccati gather (:func:`algorithms.riccati.articulated_inertias`) by one
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
(:func:`algorithms.innovations.mass_matrix_solve`); they accept a matrix of right-hand sides.
"""

from __future__ import annotations

import numpy as np

from sko.arrays import result_dtype
from sko.model import SKOModel

from .riccati import ArticulatedInertias, check_articulated

__all__ = ["forward_dynamics"]


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
    >>> from graphs import TreeDigraph
    >>> tree = TreeDigraph.from_parents({0: None, 1: 0})
    >>> model = SKOModel(tree, phi={1: [[1.0]]}, H={0: [[1.0]], 1: [[1.0]]}, M={0: [[2.0]], 1: [[3.0]]})
    >>> forward_dynamics(model, [5.0, 3.0])      # ℳ = [[5, 3], [3, 3]]
    array([1., 0.])
    """
    T = model.dof_vector(T, "T")
    a = None if a is None else model.node_vector(a, "a")
    b = None if b is None else model.node_vector(b, "b")
    return articulated_body_passes(check_articulated(model, articulated), T, a, b)


def articulated_body_passes(ab: ArticulatedInertias, T: np.ndarray, a: np.ndarray | None, b: np.ndarray | None) -> np.ndarray:
    """The gather and scatter of Algorithm 6.1 on checked input.

    ``T`` has shape ``(Σ n_k,)`` or ``(Σ n_k, r)`` (``r`` right-hand sides); ``a`` and ``b`` are
    stacked node vectors (only with a 1-D ``T``) or ``None`` for zero.
    """
    model = ab.model
    tree = model.tree
    parent = tree.parent_indices
    W, H = model.weights_by_index, model.H_by_index
    P, G, D_inv = ab.P_by_index, ab.G_by_index, ab.D_inverse_by_index
    ns, ds = model.node_slices, model.dof_slices
    dtype = result_dtype(ab.dtype, T, *(v for v in (a, b) if v is not None))
    n = len(W)

    z: list = [None] * n  # Σ_{j ∈ C(k)} φ(k, j) z⁺(j), accumulated
    nu: list = [None] * n
    for i in tree.gather_indices:
        zi = z[i]
        if a is not None:
            zi = P[i] @ a[ns[i]] if zi is None else zi + P[i] @ a[ns[i]]
        if b is not None:
            zi = b[ns[i]] if zi is None else zi + b[ns[i]]
        eps = T[ds[i]] if zi is None else T[ds[i]] - H[i] @ zi
        nu[i] = D_inv[i] @ eps
        p = parent[i]
        if p >= 0:
            z_plus = G[i] @ eps if zi is None else zi + G[i] @ eps
            contribution = W[i] @ z_plus
            z[p] = contribution if z[p] is None else z[p] + contribution

    qdd = np.zeros(T.shape, dtype=dtype)
    alpha: list = [None] * n
    for i in tree.scatter_indices:
        p = parent[i]
        if p >= 0:
            alpha_plus = W[i].T @ alpha[p]
            q = nu[i] - G[i].T @ alpha_plus
            alpha_i = alpha_plus + H[i].T @ q
        else:
            q = nu[i]
            alpha_i = H[i].T @ q
        if a is not None:
            alpha_i = alpha_i + a[ns[i]]
        qdd[ds[i]] = q
        alpha[i] = alpha_i
    return qdd

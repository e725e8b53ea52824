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

Both passes cost O(N); they run level by level over the groups of :mod:`sko.algorithms.schedule`,
stacked, or on plain 2-D arrays for a group of one body (serial chains); the non-recursive
``P(k) a(k) + b(k)`` is formed for all bodies before the gather. The same passes with
``a = b = 0`` give ``ℳ^{-1} y`` (:func:`sko.algorithms.innovations.mass_matrix_solve`); they accept
a matrix of right-hand sides.
"""

from __future__ import annotations

import numpy as np

from sko.arrays import result_dtype
from sko.model import SKOModel

from .compiled import engine
from .riccati import ArticulatedInertias, check_articulated
from .schedule import swap

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
    dtype = engine.takes(model, ab, T, a, b)
    if dtype is not None:
        return engine.articulated_body(ab, T, a, b, dtype)
    return articulated_body_passes(ab, T, a, b)


def articulated_body_passes(ab: ArticulatedInertias, T: np.ndarray, a: np.ndarray | None, b: np.ndarray | None) -> np.ndarray:
    """The gather and scatter of Algorithm 6.1 on checked input, level by level over the groups
    of the Riccati result's schedule (each body once: O(N)); a group of one body runs the same
    formulas on 2-D arrays.

    ``T`` has shape ``(Σ n_k,)`` or ``(Σ n_k, r)`` (``r`` right-hand sides); ``a`` and ``b`` are
    stacked node vectors (only with a 1-D ``T``) or ``None`` for zero.
    """
    S = ab.schedule
    dtype = result_dtype(ab.dtype, T, *(v for v in (a, b) if v is not None))
    T2 = T[:, None] if T.ndim == 1 else T  # every right-hand side is a column
    r = T2.shape[1]
    n = len(S.groups)

    a2 = None if a is None else a[:, None]  # node vectors as columns, for the 2-D per-body path

    def start(P: np.ndarray, node: np.ndarray) -> np.ndarray:  # P(k) a(k) + b(k) for a stack of bodies
        out = np.zeros((node.shape[0], node.shape[1], r), dtype=dtype)
        if a is not None:
            out += P @ a[node][..., None]
        if b is not None:
            out += b[node][..., None]
        return out

    # z(k) = P(k) a(k) + b(k), to which the gather adds Σ_{j ∈ C(k)} φ(k, j) z⁺(j); the groups of
    # one body start as rows of one stack per node dimension.
    z: list = [None if group.single is not None else start(P, group.node) for group, P in zip(S.groups, ab.P_)]
    for (groups, node), P in zip(S.singles, ab.P_singles):
        rows = start(P, node)
        for j, g in enumerate(groups):
            z[g] = rows[j:j + 1]
    nu: list = [None] * n
    for level in reversed(S.levels):
        for g in level:
            group = S.groups[g]
            one = group.single
            if one is not None:  # a group of one body: the same formulas on 2-D arrays
                zk = z[g][0]
                eps = T2[one.dof] - one.H.dot(zk)
                nu[g] = ab.D_inverse_[g][0].dot(eps)
                z_plus = zk + ab.G_[g][0].dot(eps)
                if one.W is not None:  # z(℘(k)) += φ(℘(k), k) z⁺(k)
                    z_parent = z[one.parent][one.parent_pos]
                    z_parent += one.W.dot(z_plus)
            else:
                zg = z[g]
                eps = T2[group.dof] - group.H @ zg
                nu[g] = ab.D_inverse_[g] @ eps
                z_plus = zg + ab.G_[g] @ eps
                for link in group.links:  # z(℘(k)) += φ(℘(k), k) z⁺(k)
                    link.add_to_parents(z[link.parent], link.W @ z_plus[link.child_pos])

    qdd = np.zeros((T2.shape[0], r), dtype=dtype)
    alpha: list = [None] * n
    for level in S.levels:
        for g in level:
            group = S.groups[g]
            one = group.single
            if one is not None:  # a group of one body: the same formulas on 2-D arrays
                if one.W is None:
                    alpha_plus = np.zeros((one.H.shape[1], r), dtype=dtype)
                else:  # α⁺(k) = φ*(℘(k), k) α(℘(k))
                    alpha_plus = one.W.T.dot(alpha[one.parent][one.parent_pos])
                q = nu[g] - ab.G_[g][0].T.dot(alpha_plus)
                alpha_k = alpha_plus + one.H.T.dot(q)
                if a is not None:
                    alpha_k = alpha_k + a2[one.node]
                alpha[g] = alpha_k[None]
                qdd[one.dof] = q
            else:
                alpha_plus = np.zeros(z[g].shape, dtype=dtype)
                for link in group.links:  # α⁺(k) = φ*(℘(k), k) α(℘(k))
                    alpha_plus[link.child_pos] = swap(link.W) @ alpha[link.parent][link.parent_pos]
                q = nu[g] - swap(ab.G_[g]) @ alpha_plus
                alpha_g = alpha_plus + swap(group.H) @ q
                if a is not None:
                    alpha_g = alpha_g + a[group.node][..., None]
                alpha[g] = alpha_g
                qdd[group.dof] = q
    return qdd.reshape(T.shape)

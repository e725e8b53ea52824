"""The Riccati equation: articulated body inertias on any SKO model (SKO.md §8, Lemmas 7, 8).

The block-diagonal SPD solution ``P`` of the Riccati equation (Eq. 31)
``P = ℰ_φ [P − P H* D^{-1} H P] ℰ_φ* + M`` follows from one gather (Eq. 33), for ``k`` in a
gather order (tips → base)::

    P(k)   = Σ_{j ∈ C(k)} φ(k, j) P⁺(j) φ*(k, j) + M(k)
    D(k)   = H(k) P(k) H*(k)
    G(k)   = P(k) H*(k) D^{-1}(k)
    K(℘(k), k) = φ(℘(k), k) G(k)
    τ̄(k)   = I − G(k) H(k)
    P⁺(k)  = τ̄(k) P(k)
    ψ(℘(k), k) = φ(℘(k), k) τ̄(k)

``D(k)`` is factored by Cholesky for real data (a ``D(k)`` that is not positive definite raises
:class:`NotPositiveDefiniteError` naming the node); complex (complex-step) data is checked on its
real part and inverted without conjugation; ``object`` (sympy) data is inverted exactly.
The ``ψ(℘(k), k)`` are the weights of the SPO ``ψ = (I − ℰ_ψ)^{-1}``, ``ℰ_ψ = ℰ_φ τ̄``
(Eq. 34, 35); pass ``result.psi`` as ``weights=`` to any SPO recursion of :mod:`algorithms.spo`.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from types import MappingProxyType

import numpy as np
import scipy.linalg

from graphs.errors import NotPositiveDefiniteError, SKOError
from sko.arrays import is_numeric, result_dtype
from sko.model import SKOModel

__all__ = ["ArticulatedInertias", "articulated_inertias", "check_articulated"]


class ArticulatedInertias:
    """Result of the Riccati gather (Eq. 33). Per-node quantities are read-only dicts keyed by body.

    Attributes
    ----------
    model : SKOModel
    P, P_plus : dict body -> (m_k × m_k)
        Articulated body inertias ``P(k)`` and ``P⁺(k) = τ̄(k) P(k)``.
    D, D_inverse : dict body -> (n_k × n_k)
        ``D(k) = H(k) P(k) H*(k)`` and its inverse.
    G : dict body -> (m_k × n_k)
        Kalman gains ``G(k) = P(k) H*(k) D^{-1}(k)``.
    tau_bar : dict body -> (m_k × m_k)
        ``τ̄(k) = I − G(k) H(k)``.
    K : dict body -> (m_℘(k) × n_k)
        ``K(℘(k), k) = φ(℘(k), k) G(k)``, non-base bodies only.
    psi : dict body -> (m_℘(k) × m_k)
        ``ψ(℘(k), k) = φ(℘(k), k) τ̄(k)``, non-base bodies only; usable as ``weights=``.
    dtype : numpy.dtype
        Scalar type of the results.
    """

    def __init__(self, model: SKOModel, dtype, P, P_plus, D, D_inverse, G, tau_bar, K, psi):
        self.model = model
        self.dtype = dtype
        bodies = model.bodies
        # Per-index tuples, used by the O(N) recursions built on this result.
        self.P_by_index = tuple(P)
        self.D_inverse_by_index = tuple(D_inverse)
        self.G_by_index = tuple(G)
        self.K_by_index = tuple(K)
        self.psi_by_index = tuple(psi)
        self.P = _frozen(bodies, P)
        self.P_plus = _frozen(bodies, P_plus)
        self.D = _frozen(bodies, D)
        self.D_inverse = _frozen(bodies, D_inverse)
        self.G = _frozen(bodies, G)
        self.tau_bar = _frozen(bodies, tau_bar)
        self.K = _frozen(bodies, K)
        self.psi = _frozen(bodies, psi)

    def __repr__(self) -> str:
        return f"ArticulatedInertias({len(self.model.bodies)} bodies, dtype={self.dtype})"


def _frozen(bodies: tuple, values: list) -> Mapping:
    out = {}
    for k, v in zip(bodies, values):
        if v is not None:
            v.setflags(write=False)
            out[k] = v
    return MappingProxyType(out)


def articulated_inertias(model: SKOModel) -> ArticulatedInertias:
    """Articulated body inertias and the ψ weights by the Riccati gather (SKO.md §8, Eq. 33).

    Parameters
    ----------
    model : SKOModel

    Returns
    -------
    ArticulatedInertias
        ``P, D, G, K, tau_bar, P_plus, psi`` (and ``D_inverse``) as dicts keyed by body.

    Raises
    ------
    NotPositiveDefiniteError
        If some ``D(k)`` is not positive definite (numerically), naming the node.

    Examples
    --------
    >>> import numpy as np
    >>> from graphs import TreeDigraph
    >>> tree = TreeDigraph.from_parents({0: None, 1: 0})
    >>> model = SKOModel(tree, phi={1: [[1.0]]}, H={0: [[1.0]], 1: [[1.0]]}, M={0: [[2.0]], 1: [[4.0]]})
    >>> ab = articulated_inertias(model)
    >>> float(ab.D[1][0, 0]), float(ab.G[1][0, 0]), float(ab.P_plus[1][0, 0])  # a free 1-dof tip
    (4.0, 1.0, 0.0)
    >>> float(ab.P[0][0, 0])
    2.0
    """
    tree = model.tree
    parent = tree.parent_indices
    W, H, M = model.weights_by_index, model.H_by_index, model.M_by_index
    dtype = result_dtype(model.dtype)
    n = len(M)
    P = [np.array(Mk, dtype=dtype) for Mk in M]
    P_plus, D, D_inv, G, tau_bar = [None] * n, [None] * n, [None] * n, [None] * n, [None] * n
    K, psi = [None] * n, [None] * n
    for i in tree.gather_indices:
        Pi, Hi = P[i], H[i]
        HP = Hi @ Pi
        Di = HP @ Hi.T
        Di_inv, DHP = _solve(Di, HP, tree.bodies[i], dtype)
        Gi = DHP.T  # P H* D^{-1}, as D and P are symmetric
        tau = np.eye(Pi.shape[0], dtype=dtype) - Gi @ Hi
        Pp = Pi - Gi @ HP
        D[i], D_inv[i], G[i], tau_bar[i], P_plus[i] = Di, Di_inv, Gi, tau, Pp
        p = parent[i]
        if p >= 0:
            Wi = W[i]
            K[i] = Wi @ Gi
            psi[i] = Wi @ tau
            P[p] = P[p] + Wi @ Pp @ Wi.T
    return ArticulatedInertias(model, dtype, P, P_plus, D, D_inv, G, tau_bar, K, psi)


def _solve(D: np.ndarray, B: np.ndarray, k: Hashable, dtype) -> tuple[np.ndarray, np.ndarray]:
    """``D^{-1}`` and ``D^{-1} B`` for a hinge inertia ``D``, checking positive definiteness where
    it is decidable."""
    if dtype == object:
        if is_numeric(D):
            _check_pd(np.array(D, dtype=complex).real, k)
        import sympy

        Ds = sympy.Matrix(D)
        if Ds.det() == 0:
            raise NotPositiveDefiniteError(f"hinge inertia D of body {k!r} (shape {D.shape}) is singular")
        D_inv = np.array(Ds.inv(), dtype=object)
        return D_inv, D_inv @ B
    if dtype.kind == "c":
        _check_pd(D.real, k)
        D_inv = np.linalg.inv(D)
        return D_inv, D_inv @ B
    try:
        factor = scipy.linalg.cho_factor(D, check_finite=False)
    except np.linalg.LinAlgError:
        _raise_not_pd(D, k)
    if not np.all(np.diag(factor[0]) > 0):
        _raise_not_pd(D, k)
    n = D.shape[0]
    X = scipy.linalg.cho_solve(factor, np.concatenate([np.eye(n), B], axis=1), check_finite=False)
    return X[:, :n], X[:, n:]


def _check_pd(D: np.ndarray, k: Hashable) -> None:
    try:
        np.linalg.cholesky(D)
    except np.linalg.LinAlgError:
        _raise_not_pd(D, k)


def _raise_not_pd(D: np.ndarray, k: Hashable):
    with np.errstate(all="ignore"):
        lowest = np.linalg.eigvalsh(np.asarray(D, dtype=float)).min() if np.isfinite(D).all() else float("nan")
    raise NotPositiveDefiniteError(
        f"hinge inertia D = H P H* of body {k!r} (shape {D.shape}) is not positive definite: smallest eigenvalue {lowest:.3g}"
    ) from None


def check_articulated(model: SKOModel, articulated: ArticulatedInertias | None) -> ArticulatedInertias:
    """The Riccati result for ``model``: ``articulated`` if given (it must be of this model),
    otherwise a fresh :func:`articulated_inertias`."""
    if articulated is None:
        return articulated_inertias(model)
    if not isinstance(articulated, ArticulatedInertias) or articulated.model is not model:
        raise SKOError("articulated must be the ArticulatedInertias result of this very model (articulated_inertias(model))")
    return articulated

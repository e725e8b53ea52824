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
The compiled engine runs the same gather (:mod:`sko.engine.algorithms`) and gives the same
:class:`ArticulatedInertias`, its blocks in one flat buffer.
The ``ψ(℘(k), k)`` are the weights of the SPO ``ψ = (I − ℰ_ψ)^{-1}``, ``ℰ_ψ = ℰ_φ τ̄``
(Eq. 34, 35); pass ``result.psi`` as ``weights=`` to any SPO recursion of :mod:`sko.algorithms.spo`.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from contextlib import nullcontext
from functools import cached_property
from types import MappingProxyType

import numpy as np

from sko.graphs.errors import NonFiniteError, NotPositiveDefiniteError, SKOError
from sko.graphs.arrays import raise_not_pd
from sko.arrays import is_numeric, result_dtype
from sko.model import SKOModel

from . import dispatch

__all__ = ["ArticulatedInertias", "articulated_inertias", "check_articulated"]


class ArticulatedInertias:
    """Result of the Riccati gather (Eq. 33). Per-node quantities are read-only dicts keyed by body.

    Built from the blocks per position in the model's stacking order (``blocks``: ``"P"``,
    ``"P_plus"``, ``"D"``, ``"D_inverse"``, ``"G"``, ``"psi"``, each a tuple with None where a
    node has no such block); another implementation of the gather may keep them elsewhere and
    override :meth:`_by_index` (the compiled engine keeps them in one flat buffer).

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
        ``ψ(℘(k), k) = φ(℘(k), k) τ̄(k) = φ(℘(k), k) − K(℘(k), k) H(k)``, non-base bodies only;
        usable as ``weights=``.
    dtype : numpy.dtype
        Scalar type of the results.
    logdet : scalar or None
        ``Σ log det D(k)`` when the gather accumulated it (the compiled one does).
    P_by_index, D_by_index, D_inverse_by_index, G_by_index, P_plus_by_index : tuple
        The same blocks per position in the model's stacking order.
    """

    def __init__(self, model: SKOModel, dtype, blocks: Mapping[str, tuple] | None = None, logdet=None):
        self.model = model
        self.dtype = np.dtype(dtype)
        self.logdet = logdet
        self._blocks = blocks

    def __repr__(self) -> str:
        return f"ArticulatedInertias({len(self.model.bodies)} bodies, dtype={self.dtype})"

    def _by_index(self, name: str) -> tuple:
        """The blocks ``name`` (class docstring) per body index, read-only (None where absent)."""
        out = []
        for X in self._blocks[name]:
            if X is not None:
                X = np.asarray(X, dtype=self.dtype).view()
                X.setflags(write=False)
            out.append(X)
        return tuple(out)

    def _per_body(self, blocks: tuple) -> Mapping:
        return MappingProxyType({k: X for k, X in zip(self.model.bodies, blocks) if X is not None})

    @cached_property
    def P_by_index(self) -> tuple:
        return self._by_index("P")

    @cached_property
    def P_plus_by_index(self) -> tuple:
        return self._by_index("P_plus")

    @cached_property
    def D_by_index(self) -> tuple:
        return self._by_index("D")

    @cached_property
    def D_inverse_by_index(self) -> tuple:
        return self._by_index("D_inverse")

    @cached_property
    def G_by_index(self) -> tuple:
        return self._by_index("G")

    @cached_property
    def psi_by_index(self) -> tuple:
        return self._by_index("psi")

    @cached_property
    def K_by_index(self) -> tuple:
        out = []
        for W, Gk in zip(self.model.weights_by_index, self.G_by_index):
            K = None if W is None else W @ Gk
            if K is not None:
                K.setflags(write=False)
            out.append(K)
        return tuple(out)

    @cached_property
    def P(self) -> Mapping:
        return self._per_body(self.P_by_index)

    @cached_property
    def P_plus(self) -> Mapping:
        return self._per_body(self.P_plus_by_index)

    @cached_property
    def D(self) -> Mapping:
        return self._per_body(self.D_by_index)

    @cached_property
    def D_inverse(self) -> Mapping:
        return self._per_body(self.D_inverse_by_index)

    @cached_property
    def G(self) -> Mapping:
        return self._per_body(self.G_by_index)

    @cached_property
    def K(self) -> Mapping:
        return self._per_body(self.K_by_index)

    @cached_property
    def psi(self) -> Mapping:
        return self._per_body(self.psi_by_index)

    @cached_property
    def tau_bar(self) -> Mapping:
        out = {}
        for k, Gk, Hk in zip(self.model.bodies, self.G_by_index, self.model.H_by_index):
            tau = np.eye(Gk.shape[0], dtype=self.dtype) - Gk @ Hk
            tau.setflags(write=False)
            out[k] = tau
        return MappingProxyType(out)


def articulated_inertias(model: SKOModel) -> ArticulatedInertias:
    """Articulated body inertias and the ψ weights by the Riccati gather (SKO.md §8, Eq. 33).

    One gather over the bodies (tips → base), each visited once: O(N).

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
    >>> from sko.graphs import TreeDigraph
    >>> tree = TreeDigraph.from_parents({0: None, 1: 0})
    >>> model = SKOModel(tree, phi={1: [[1.0]]}, H={0: [[1.0]], 1: [[1.0]]}, M={0: [[2.0]], 1: [[4.0]]})
    >>> ab = articulated_inertias(model)
    >>> float(ab.D[1][0, 0]), float(ab.G[1][0, 0]), float(ab.P_plus[1][0, 0])  # a free 1-dof tip
    (4.0, 1.0, 0.0)
    >>> float(ab.P[0][0, 0])
    2.0
    """
    return dispatch.run("riccati", (model.dtype,), _riccati, model)


def _riccati(model: SKOModel) -> ArticulatedInertias:
    """The generic gather (also the error report of a failed compiled one: same message)."""
    dtype = result_dtype(model.dtype)
    W, H, parent, bodies = model.weights_by_index, model.H_by_index, model.tree.parent_indices, model.bodies
    n = len(bodies)
    P = [Mk.astype(dtype, copy=True) for Mk in model.M_by_index]
    D, D_inv, G, P_plus = [None] * n, [None] * n, [None] * n, [None] * n
    # Real data: an overflow makes some D non-finite, which _gain reports as an error naming the
    # body, so numpy's warning would only duplicate it.
    quiet = np.errstate(over="ignore", invalid="ignore") if dtype.kind == "f" else nullcontext()
    with quiet:
        for k in model.tree.gather_indices:
            HP = H[k] @ P[k]
            D[k] = HP @ H[k].T
            D_inv[k], G[k], GHP = _gain(D[k], HP, bodies[k], dtype)
            P_plus[k] = P[k] - GHP
            if parent[k] >= 0:  # P(℘(k)) += φ(℘(k), k) P⁺(k) φ*(℘(k), k)
                P[parent[k]] = P[parent[k]] + W[k] @ P_plus[k] @ W[k].T
        psi = [None if W[k] is None else W[k] - (W[k] @ G[k]) @ H[k] for k in range(n)]
    return ArticulatedInertias(model, dtype, {"P": P, "P_plus": P_plus, "D": D, "D_inverse": D_inv, "G": G, "psi": psi})


def _gain(D: np.ndarray, HP: np.ndarray, k: Hashable, dtype) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``D^{-1}``, ``G = P H* D^{-1}`` and ``G H P`` from the hinge inertia ``D`` and ``H P`` of
    body ``k``, checking that ``D`` is positive definite where that is decidable.

    Real data: with the Cholesky factor ``D = L L*`` and ``Y = L^{-1} H P``, ``G* = L^{-*} Y`` and
    ``G H P = Y* Y`` (symmetric positive semi-definite by construction, so ``P⁺`` stays symmetric).
    """
    if dtype == object:
        import sympy

        if is_numeric(D):
            _check_pd(np.array(D, dtype=complex).real, k)
        # Adjugate over determinant, both by Berkowitz (division free): Matrix.inv() moves to a
        # fraction field and stalls in gcds on the nested quotients of deep trees.
        Ds = sympy.Matrix(D)
        det = Ds.det(method="berkowitz")
        if det == 0:
            raise NotPositiveDefiniteError(f"hinge inertia D of body {k!r} (shape {D.shape}) is singular")
        D_inv = np.array(Ds.adjugate(method="berkowitz") / det, dtype=object).reshape(D.shape)
    elif dtype.kind == "c":  # complex-step data: no conjugation, definiteness of the real part
        _check_pd(D.real, k)
        D_inv = np.linalg.inv(D)
    else:
        L = _check_pd(D, k)
        L_inv = np.linalg.inv(L)  # lower triangular, conditioned as sqrt(cond(D))
        Y = L_inv @ HP
        return L_inv.T @ L_inv, (L_inv.T @ Y).T, Y.T @ Y
    G = (D_inv @ HP).T  # P H* D^{-1}, as D and P are symmetric
    return D_inv, G, G @ HP


def _check_pd(D: np.ndarray, k: Hashable) -> np.ndarray:
    """The Cholesky factor of a real ``D``, or an error naming body ``k``."""
    try:
        L = np.linalg.cholesky(D)
    except np.linalg.LinAlgError:
        raise_not_pd(D, "hinge inertia D = H P H*", k)
    if not np.isfinite(L).all():  # overflow upstream: never pass NaN on as a result
        raise NonFiniteError(f"hinge inertia D = H P H* of body {k!r} overflowed (non-finite entries)")
    return L


def check_articulated(model: SKOModel, articulated: ArticulatedInertias | None) -> ArticulatedInertias:
    """The Riccati result for ``model``: ``articulated`` if given (it must be of this model),
    otherwise a fresh :func:`articulated_inertias`."""
    if articulated is None:
        return articulated_inertias(model)
    if not isinstance(articulated, ArticulatedInertias) or articulated.model is not model:
        raise SKOError("articulated must be the ArticulatedInertias result of this very model (articulated_inertias(model))")
    return articulated

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
The gather runs level by level over the groups of :mod:`sko.algorithms.schedule` (stacked numpy
operations on the bodies of one depth with equal dimensions; each body once, so O(N)). A group
of one body, as in a serial chain, runs the same formulas on plain 2-D arrays (and, for float64
data, LAPACK's Cholesky factorization directly), since a stack of one costs several times more.
The ``ψ(℘(k), k)`` are the weights of the SPO ``ψ = (I − ℰ_ψ)^{-1}``, ``ℰ_ψ = ℰ_φ τ̄``
(Eq. 34, 35); pass ``result.psi`` as ``weights=`` to any SPO recursion of :mod:`sko.algorithms.spo`.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from contextlib import nullcontext
from functools import cached_property
from types import MappingProxyType

import numpy as np
from scipy.linalg.lapack import dpotrf, dtrtri

from sko.graphs.errors import NonFiniteError, NotPositiveDefiniteError, SKOError
from sko.graphs.arrays import raise_not_pd
from sko.arrays import is_numeric, result_dtype
from sko.model import SKOModel

from .schedule import LevelSchedule, level_schedule, swap

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
        ``ψ(℘(k), k) = φ(℘(k), k) τ̄(k) = φ(℘(k), k) − K(℘(k), k) H(k)``, non-base bodies only;
        usable as ``weights=``.
    dtype : numpy.dtype
        Scalar type of the results.

    Notes
    -----
    The recursions built on this result read the stacked per-group arrays ``P_, D_, D_inverse_,
    G_, P_plus_`` (one entry per group of :attr:`schedule`); the dicts are views into them, made
    on first access.
    """

    def __init__(self, model: SKOModel, schedule: LevelSchedule, dtype, P, D, D_inverse, G, P_plus):
        self.model = model
        self.schedule = schedule
        self.dtype = dtype
        self.P_, self.D_, self.D_inverse_, self.G_, self.P_plus_ = P, D, D_inverse, G, P_plus
        for stack in (*P, *D, *D_inverse, *G, *P_plus):
            stack.setflags(write=False)

    def __repr__(self) -> str:
        return f"ArticulatedInertias({len(self.model.bodies)} bodies, dtype={self.dtype})"

    def _per_body(self, stacks: list) -> Mapping:
        bodies, S = self.model.bodies, self.schedule
        return MappingProxyType({k: stacks[S.group_of[i]][S.position_of[i]] for i, k in enumerate(bodies)})

    @cached_property
    def P(self) -> Mapping:
        return self._per_body(self.P_)

    @cached_property
    def P_plus(self) -> Mapping:
        return self._per_body(self.P_plus_)

    @cached_property
    def D(self) -> Mapping:
        return self._per_body(self.D_)

    @cached_property
    def D_inverse(self) -> Mapping:
        return self._per_body(self.D_inverse_)

    @cached_property
    def G(self) -> Mapping:
        return self._per_body(self.G_)

    @cached_property
    def P_singles(self) -> tuple:
        """``P(k)`` of the groups of one body stacked as ``schedule.singles`` lists them."""
        out = tuple(np.concatenate([self.P_[g] for g in groups]) for groups, _ in self.schedule.singles)
        for stack in out:
            stack.setflags(write=False)
        return out

    @cached_property
    def tau_bar(self) -> Mapping:
        out = {}
        for k, Gk, Hk in zip(self.model.bodies, self.G_by_index, self.model.H_by_index):
            tau = np.eye(Gk.shape[0], dtype=self.dtype) - Gk @ Hk
            tau.setflags(write=False)
            out[k] = tau
        return MappingProxyType(out)

    @cached_property
    def K(self) -> Mapping:
        return MappingProxyType({k: Kk for k, Kk in zip(self.model.bodies, self.K_by_index) if Kk is not None})

    @cached_property
    def psi(self) -> Mapping:
        return MappingProxyType({k: Wk for k, Wk in zip(self.model.bodies, self.psi_by_index) if Wk is not None})

    # Per-index views (position i = model.bodies[i]) for recursions that run body by body.
    @cached_property
    def G_by_index(self) -> tuple:
        return tuple(self.G[k] for k in self.model.bodies)

    @cached_property
    def D_inverse_by_index(self) -> tuple:
        return tuple(self.D_inverse[k] for k in self.model.bodies)

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
    def psi_by_index(self) -> tuple:
        out = []
        for W, K, Hk in zip(self.model.weights_by_index, self.K_by_index, self.model.H_by_index):
            psi = None if W is None else (W - K @ Hk).astype(self.dtype, copy=False)
            if psi is not None:
                psi.setflags(write=False)
            out.append(psi)
        return tuple(out)


def articulated_inertias(model: SKOModel) -> ArticulatedInertias:
    """Articulated body inertias and the ψ weights by the Riccati gather (SKO.md §8, Eq. 33).

    The gather runs depth by depth (deepest first) over the groups of
    :func:`sko.algorithms.schedule.level_schedule`, each group by stacked operations: O(N).

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
    from .compiled import engine

    dtype = engine.runs(model)
    if dtype is not None:
        return engine.articulated_inertias(model, dtype)
    S = level_schedule(model)
    dtype = result_dtype(model.dtype)
    n = len(S.groups)
    P = [g.M.astype(dtype, copy=True) for g in S.groups]
    D, D_inv, G, P_plus = [None] * n, [None] * n, [None] * n, [None] * n
    bodies = model.bodies
    gain_one = _gain_one_real if dtype == np.float64 else _gain_one
    # Real data: an overflow makes some D non-finite, which _gain or _gain_one reports as an error
    # naming the body, so numpy's warning would only duplicate it.
    quiet = np.errstate(over="ignore", invalid="ignore") if dtype.kind == "f" else nullcontext()
    with quiet:
        for level in reversed(S.levels):
            for g in level:
                group = S.groups[g]
                one = group.single
                if one is not None:  # a group of one body: the same formulas on 2-D arrays
                    Pk = P[g][0]
                    HP = one.H.dot(Pk)
                    Dk = HP.dot(one.H.T)
                    D_inv_k, G_k, GHP = gain_one(Dk, HP, bodies[one.index], dtype)
                    P_plus_k = Pk - GHP
                    if one.W is not None:  # P(℘(k)) += φ(℘(k), k) P⁺(k) φ*(℘(k), k)
                        P_parent = P[one.parent][one.parent_pos]
                        P_parent += one.W.dot(P_plus_k).dot(one.W.T)
                    D[g], D_inv[g], G[g], P_plus[g] = Dk[None], D_inv_k[None], G_k[None], P_plus_k[None]
                else:  # the stacked formulas, for all bodies of the group at once
                    H = group.H
                    HP = H @ P[g]
                    D[g] = HP @ swap(H)
                    D_inv[g], G[g], GHP = _gain(D[g], HP, [bodies[i] for i in group.index], dtype)
                    P_plus[g] = P[g] - GHP
                    for link in group.links:  # P(℘(k)) += φ(℘(k), k) P⁺(k) φ*(℘(k), k)
                        link.add_to_parents(P[link.parent], link.W @ P_plus[g][link.child_pos] @ swap(link.W))
    return ArticulatedInertias(model, S, dtype, P, D, D_inv, G, P_plus)


def _gain(D: np.ndarray, HP: np.ndarray, bodies: list, dtype) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``D^{-1}``, ``G = P H* D^{-1}`` and ``G H P`` for a stack of hinge inertias ``D`` and
    ``H P``, checking that every ``D`` is positive definite where that is decidable.

    Real data: with the Cholesky factors ``D = L L*`` and ``Y = L^{-1} H P``, ``G* = L^{-*} Y`` and
    ``G H P = Y* Y`` (symmetric positive semi-definite by construction, so ``P⁺`` stays symmetric).
    """
    if dtype == object:
        import sympy

        D_inv = np.empty_like(D)
        for j, k in enumerate(bodies):
            if is_numeric(D[j]):
                _check_pd(np.array(D[j], dtype=complex).real, k)
            # Adjugate over determinant, both by Berkowitz (division free): Matrix.inv() moves to a
            # fraction field and stalls in gcds on the nested quotients of deep trees.
            Ds = sympy.Matrix(D[j])
            det = Ds.det(method="berkowitz")
            if det == 0:
                raise NotPositiveDefiniteError(f"hinge inertia D of body {k!r} (shape {D[j].shape}) is singular")
            D_inv[j] = np.array(Ds.adjugate(method="berkowitz") / det, dtype=object)
    elif dtype.kind == "c":  # complex-step data: no conjugation, definiteness of the real part
        _check_stack_pd(D.real, bodies)
        D_inv = np.linalg.inv(D)
    else:
        L = _check_stack_pd(D, bodies)
        L_inv = np.linalg.inv(L)  # lower triangular, conditioned as sqrt(cond(D))
        Y = L_inv @ HP
        return swap(L_inv) @ L_inv, swap(swap(L_inv) @ Y), swap(Y) @ Y
    G = swap(D_inv @ HP)  # P H* D^{-1}, as D and P are symmetric
    return D_inv, G, G @ HP


def _gain_one(D: np.ndarray, HP: np.ndarray, k: Hashable, dtype) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_gain` for one body (2-D ``D`` and ``H P``)."""
    D_inv, G, GHP = _gain(D[None], HP[None], [k], dtype)
    return D_inv[0], G[0], GHP[0]


def _gain_one_real(D: np.ndarray, HP: np.ndarray, k: Hashable, dtype) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_gain_one` for float64 data, by LAPACK's Cholesky factorization and triangular
    inverse called directly: ``numpy.linalg`` costs several times more per call on small matrices."""
    if D.size == 0:  # no hinge coordinates
        return _gain_one(D, HP, k, dtype)
    L, info = dpotrf(D, lower=True)
    if info:
        raise_not_pd(D, "hinge inertia D = H P H*", k)
    if not math.isfinite(sum(L.diagonal().tolist())):  # a factored non-finite D has an infinite pivot
        raise NonFiniteError(f"hinge inertia D = H P H* of body {k!r} overflowed (non-finite entries)")
    L_inv, _ = dtrtri(L, lower=True)
    Y = L_inv.dot(HP)
    return L_inv.T.dot(L_inv), L_inv.T.dot(Y).T, Y.T.dot(Y)


def _check_stack_pd(D: np.ndarray, bodies: list) -> np.ndarray:
    """The Cholesky factors of a stack of real matrices; the first failing one names its body."""
    try:
        L = np.linalg.cholesky(D)
    except np.linalg.LinAlgError:
        for Dk, k in zip(D, bodies):
            _check_pd(Dk, k)
        raise  # pragma: no cover - the stack failed, so one matrix does
    if not np.isfinite(L).all():  # overflow upstream: never pass NaN on as a result
        k = next(k for Lk, k in zip(L, bodies) if not np.isfinite(Lk).all())
        raise NonFiniteError(f"hinge inertia D = H P H* of body {k!r} overflowed (non-finite entries)")
    return L


def _check_pd(D: np.ndarray, k: Hashable) -> None:
    try:
        np.linalg.cholesky(D)
    except np.linalg.LinAlgError:
        raise_not_pd(D, "hinge inertia D = H P H*", k)


def check_articulated(model: SKOModel, articulated: ArticulatedInertias | None) -> ArticulatedInertias:
    """The Riccati result for ``model``: ``articulated`` if given (it must be of this model),
    otherwise a fresh :func:`articulated_inertias`."""
    if articulated is None:
        return articulated_inertias(model)
    if not isinstance(articulated, ArticulatedInertias) or articulated.model is not model:
        raise SKOError("articulated must be the ArticulatedInertias result of this very model (articulated_inertias(model))")
    return articulated

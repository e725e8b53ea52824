"""Operational space compliance and inertia on any SKO model (SKO.md §12, Section 6.2).

For task nodes picked off by ``ℬ`` (each selected node's block, optionally through a fixed
transform ``B_k`` of shape ``m_k × t_k`` to a task frame), ``J = ℬ* φ* H*`` and

    Ω = φ* H* ℳ^{-1} H φ = ψ* H* D^{-1} H ψ          (Eq. 59, 60)
    Λ = (J ℳ^{-1} J*)^{-1} = (ℬ* Ω ℬ)^{-1}

``Ω`` is the backward Lyapunov product of :func:`sko.algorithms.lyapunov.backward_lyapunov` with
``φ1 = φ2 = ψ`` and ``X = H* D^{-1} H``: ``Υ(k) = ψ*(℘(k), k) Υ(℘(k)) ψ(℘(k), k) +
H*(k) D^{-1}(k) H(k)`` by scatter, the blocks between task nodes along their paths through the
nearest common ancestor. Cost: O(N) plus those paths.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping

import numpy as np
import scipy.linalg

from sko.graphs.errors import DimensionError, RankDeficientError, SKOError, UnknownNodeError
from sko.arrays import checked_array, result_dtype
from sko.model import SKOModel

from . import dispatch
from .lyapunov import backward_lyapunov
from .riccati import ArticulatedInertias, check_articulated

__all__ = ["operational_space_compliance", "operational_space_inertia"]


def _task_nodes(model: SKOModel, nodes: Iterable[Hashable]) -> tuple:
    if isinstance(nodes, (str, bytes)) or not isinstance(nodes, Iterable):
        raise SKOError(f"nodes must be a sequence of task bodies, got {nodes!r}")
    if isinstance(nodes, (set, frozenset)):
        raise SKOError(f"nodes must be an ordered sequence of task bodies (they order the result's blocks), got the set {nodes!r}")
    nodes = tuple(nodes)
    if not nodes:
        raise SKOError("no task nodes given")
    seen = set()
    for k in nodes:
        if k not in model.tree:
            raise UnknownNodeError(f"task node {k!r} is not a body of the model")
        if k in seen:
            raise SKOError(f"task node {k!r} is repeated in {nodes!r}")
        seen.add(k)
    return nodes


def _transforms(model: SKOModel, nodes: tuple, transforms: Mapping | None) -> list:
    if transforms is None:
        return [None] * len(nodes)
    if not isinstance(transforms, Mapping):
        raise SKOError(f"transforms must be a mapping task node -> (m_k x t_k) array, got {type(transforms).__name__}")
    extra = [k for k in transforms if k not in nodes]
    if extra:
        raise UnknownNodeError(f"transforms given for {extra!r}, which are not task nodes {nodes!r}")
    out = []
    for k in nodes:
        if k not in transforms:
            out.append(None)
            continue
        B = checked_array(transforms[k], 2, "task transform", k)
        if B.shape[0] != model.node_dim(k):
            raise DimensionError(f"task transform of body {k!r} has shape {B.shape}; it needs m_k = {model.node_dim(k)} rows")
        out.append(B)
    return out


def operational_space_compliance(model: SKOModel, nodes: Iterable[Hashable], transforms: Mapping | None = None,
                                 articulated: ArticulatedInertias | None = None) -> np.ndarray:
    """The operational space compliance ``ℬ* Ω ℬ`` among task nodes (Eq. 59, 60).

    Parameters
    ----------
    model : SKOModel
    nodes : sequence of bodies
        The task nodes, in the order of the result's blocks (no repeats).
    transforms : mapping body -> array (m_k × t_k), optional
        Fixed task-frame transforms ``B_k`` of some task nodes (identity for the others).
    articulated : ArticulatedInertias, optional
        A Riccati result of this model to reuse.

    Returns
    -------
    numpy.ndarray
        Square, of size ``Σ t_k`` (``t_k = m_k`` without a transform); block ``(i, j)`` is
        ``B_i* Ω(i, j) B_j``.

    Raises
    ------
    UnknownNodeError
        A task node (or transform key) that is not a body / not a task node.
    SKOError
        Repeated or no task nodes.
    DimensionError
        A transform with the wrong number of rows.

    Examples
    --------
    >>> import numpy as np
    >>> from sko.graphs import TreeDigraph
    >>> tree = TreeDigraph.from_parents({0: None, 1: 0})
    >>> model = SKOModel(tree, phi={1: [[1.0]]}, H={0: [[1.0]], 1: [[1.0]]}, M={0: [[1.0]], 1: [[1.0]]})
    >>> operational_space_compliance(model, [1])     # J = [1, 1], ℳ^{-1} = [[1, -1], [-1, 2]]
    array([[1.]])
    """
    nodes = _task_nodes(model, nodes)
    B = _transforms(model, nodes, transforms)
    ab = check_articulated(model, articulated)
    Omega = _compliance_blocks(model, nodes, ab)
    blocks = [[None] * len(nodes) for _ in nodes]
    for r, i in enumerate(nodes):
        for c, j in enumerate(nodes):
            Z = Omega(i, j)
            if B[r] is not None:
                Z = B[r].T @ Z
            if B[c] is not None:
                Z = Z @ B[c]
            blocks[r][c] = Z
    return np.block(blocks).astype(result_dtype(ab.dtype, *(b for b in B if b is not None)), copy=False)


def _compliance_blocks(model: SKOModel, nodes: tuple, ab: ArticulatedInertias) -> Callable:
    """``(i, j) ↦ Ω(i, j)`` for the task nodes, on the path :mod:`~sko.algorithms.dispatch` chooses."""
    return dispatch.run("compliance_blocks", (ab.dtype,), _lyapunov_blocks, ab, nodes)


def _lyapunov_blocks(ab: ArticulatedInertias, nodes: tuple) -> Callable:
    """The generic backward Lyapunov scatter with ``φ1 = φ2 = ψ``."""
    model = ab.model
    X = {k: Hk.T @ ab.D_inverse[k] @ Hk for k, Hk in model.H.items()}
    return backward_lyapunov(model, X, ab.psi, ab.psi).block


def operational_space_inertia(model: SKOModel, nodes: Iterable[Hashable], transforms: Mapping | None = None,
                              articulated: ArticulatedInertias | None = None) -> np.ndarray:
    """The operational space inertia ``Λ = (ℬ* Ω ℬ)^{-1}`` (Section 6.2).

    Parameters are those of :func:`operational_space_compliance`.

    Raises
    ------
    RankDeficientError
        If the compliance is singular (the task Jacobian ``J`` lacks full row rank, e.g. more
        task coordinates than hinge coordinates support them).
    """
    nodes = _task_nodes(model, nodes)  # materialised once: the messages below list them
    Lambda_inv = operational_space_compliance(model, nodes, transforms, articulated)
    if Lambda_inv.dtype == object:
        import sympy

        C = sympy.Matrix(Lambda_inv)
        if C.det() == 0:
            raise RankDeficientError(f"the operational space compliance of task nodes {tuple(nodes)!r} is singular")
        return np.array(C.inv(), dtype=object)
    if Lambda_inv.dtype.kind == "c":  # complex-step data: checked on the real part, no conjugation
        if not _is_pd(Lambda_inv.real):
            _rank_deficient(nodes, Lambda_inv)
        return np.linalg.inv(Lambda_inv)
    try:
        factor = scipy.linalg.cho_factor(Lambda_inv, check_finite=False)
    except np.linalg.LinAlgError:
        _rank_deficient(nodes, Lambda_inv)
    if not _is_pd(Lambda_inv):
        _rank_deficient(nodes, Lambda_inv)
    return scipy.linalg.cho_solve(factor, np.eye(Lambda_inv.shape[0]), check_finite=False)


def _is_pd(C: np.ndarray) -> bool:
    """Positive definite to working precision: the smallest eigenvalue above ``n ε`` of the largest."""
    w = np.linalg.eigvalsh(C)
    return bool(w.size) and w[0] > C.shape[0] * np.finfo(float).eps * max(w[-1], 0.0)


def _rank_deficient(nodes, C: np.ndarray):
    raise RankDeficientError(
        f"the operational space compliance of task nodes {tuple(nodes)!r} (shape {C.shape}) is singular: "
        "the task Jacobian J = B* phi* H* does not have full row rank"
    ) from None

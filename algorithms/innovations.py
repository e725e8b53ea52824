"""Innovations factorization, inverse and determinant of the mass matrix (SKO.md §10,
Lemma 11, Corollary 6.1).

With the Riccati quantities of :func:`sko.algorithms.riccati.articulated_inertias`::

    ℳ = [I + H φ K] D [I + H φ K]*          (Eq. 49)
    [I + H φ K]^{-1} = I − H ψ K            (Eq. 50)
    ℳ^{-1} = [I − H ψ K]* D^{-1} [I − H ψ K]  (Eq. 51)
    det ℳ = det D = Π_k det D(k)            (Eq. 52, 53)

Every operator here is applied in O(N): ``K x = ℰ_φ (G x)`` block by block, ``φ ℰ_φ = φ̃``
and ``ψ`` by the SPO recursions with the ψ weights. :func:`mass_matrix_solve` also takes a
matrix ``(Σ n_k, r)`` of ``r`` right-hand sides.
"""

from __future__ import annotations

import numpy as np

from sko.graphs.errors import DimensionError
from sko.arrays import checked_array, result_dtype
from sko.model import SKOModel

from . import dispatch
from .blocks import H_apply, H_star_apply, block_diagonal_apply
from .forward_dynamics import articulated_body
from .riccati import ArticulatedInertias, check_articulated
from .spo import phi_apply, phi_star_apply

__all__ = [
    "innovations_apply",
    "innovations_star_apply",
    "innovations_inverse_apply",
    "innovations_inverse_star_apply",
    "D_apply",
    "D_inverse_apply",
    "mass_matrix_solve",
    "mass_matrix_inverse",
    "mass_matrix_det",
    "mass_matrix_logdet",
]


def _hinge_input(model: SKOModel, x, name: str) -> np.ndarray:
    x = checked_array(x, (1, 2), name)
    if x.shape[0] != model.dof_size:
        raise DimensionError(f"{name} has shape {x.shape}; expected ({model.dof_size},) or ({model.dof_size}, r) for this model")
    return x


def _K_apply(ab: ArticulatedInertias, x: np.ndarray) -> np.ndarray:
    """``K x = ℰ_φ G x``: ``(K x)(℘(k)) += K(℘(k), k) x(k)`` (hinge → node)."""
    return dispatch.run("K_apply", (ab.dtype, x.dtype), _K, ab, x)


def _K(ab: ArticulatedInertias, x: np.ndarray) -> np.ndarray:
    model = ab.model
    y = np.zeros(model.node_size, dtype=result_dtype(x, ab.dtype))
    ns, ds, parent = model.node_slices, model.dof_slices, model.tree.parent_indices
    for i, Ki in enumerate(ab.K_by_index):
        if Ki is not None:
            y[ns[parent[i]]] += Ki @ x[ds[i]]
    return y


def _K_star_apply(ab: ArticulatedInertias, y: np.ndarray) -> np.ndarray:
    """``K* y``: ``(K* y)(k) = K*(℘(k), k) y(℘(k))``, zero for base bodies (node → hinge)."""
    return dispatch.run("K_star_apply", (ab.dtype, y.dtype), _K_star, ab, y)


def _K_star(ab: ArticulatedInertias, y: np.ndarray) -> np.ndarray:
    model = ab.model
    x = np.zeros(model.dof_size, dtype=result_dtype(y, ab.dtype))
    ns, ds, parent = model.node_slices, model.dof_slices, model.tree.parent_indices
    for i, Ki in enumerate(ab.K_by_index):
        if Ki is not None:
            x[ds[i]] = Ki.T @ y[ns[parent[i]]]
    return x


def _psi_apply(ab: ArticulatedInertias, x: np.ndarray, star: bool) -> np.ndarray:
    """``ψ x`` or ``ψ* x`` (the SPO of the ψ weights, Eq. 34)."""
    if star:
        return dispatch.run("psi_star_apply", (ab.dtype, x.dtype), _psi_star, ab, x)
    return dispatch.run("psi_apply", (ab.dtype, x.dtype), _psi, ab, x)


def _psi(ab: ArticulatedInertias, x: np.ndarray) -> np.ndarray:
    return phi_apply(ab.model, x, weights=ab.psi)


def _psi_star(ab: ArticulatedInertias, x: np.ndarray) -> np.ndarray:
    return phi_star_apply(ab.model, x, weights=ab.psi)


def innovations_apply(model: SKOModel, x, articulated: ArticulatedInertias | None = None) -> np.ndarray:
    """``[I + H φ K] x`` (Eq. 49) for a stacked hinge vector ``x``."""
    ab = check_articulated(model, articulated)
    x = model.dof_vector(x, "x")
    return x + H_apply(model, phi_apply(model, _K_apply(ab, x)))


def innovations_star_apply(model: SKOModel, x, articulated: ArticulatedInertias | None = None) -> np.ndarray:
    """``[I + H φ K]* x = x + K* φ* H* x`` (Eq. 49)."""
    ab = check_articulated(model, articulated)
    x = model.dof_vector(x, "x")
    return x + _K_star_apply(ab, phi_star_apply(model, H_star_apply(model, x)))


def innovations_inverse_apply(model: SKOModel, x, articulated: ArticulatedInertias | None = None) -> np.ndarray:
    """``[I + H φ K]^{-1} x = [I − H ψ K] x`` (Eq. 50)."""
    ab = check_articulated(model, articulated)
    x = model.dof_vector(x, "x")
    return x - H_apply(model, _psi_apply(ab, _K_apply(ab, x), star=False))


def innovations_inverse_star_apply(model: SKOModel, x, articulated: ArticulatedInertias | None = None) -> np.ndarray:
    """``[I − H ψ K]* x = x − K* ψ* H* x`` (Eq. 51)."""
    ab = check_articulated(model, articulated)
    x = model.dof_vector(x, "x")
    return x - _K_star_apply(ab, _psi_apply(ab, H_star_apply(model, x), star=True))


def D_apply(model: SKOModel, x, articulated: ArticulatedInertias | None = None) -> np.ndarray:
    """``D x = diag(D(k)) x`` (Eq. 32)."""
    ab = check_articulated(model, articulated)
    x = model.dof_vector(x, "x")
    return dispatch.run("D_apply", (ab.dtype, x.dtype), _D, ab, x)


def _D(ab: ArticulatedInertias, x: np.ndarray) -> np.ndarray:
    return block_diagonal_apply(ab.D_by_index, ab.model.dof_slices, x)


def D_inverse_apply(model: SKOModel, x, articulated: ArticulatedInertias | None = None) -> np.ndarray:
    """``D^{-1} x = diag(D^{-1}(k)) x``."""
    ab = check_articulated(model, articulated)
    x = model.dof_vector(x, "x")
    return dispatch.run("D_inverse_apply", (ab.dtype, x.dtype), _D_inverse, ab, x)


def _D_inverse(ab: ArticulatedInertias, x: np.ndarray) -> np.ndarray:
    return block_diagonal_apply(ab.D_inverse_by_index, ab.model.dof_slices, x)


def mass_matrix_solve(model: SKOModel, y, articulated: ArticulatedInertias | None = None) -> np.ndarray:
    """``ℳ^{-1} y`` in O(N) per column (Eq. 51), by the passes of Algorithm 6.1 with ``a = b = 0``.

    Parameters
    ----------
    model : SKOModel
    y : array (Σ n_k,) or (Σ n_k, r)
    articulated : ArticulatedInertias, optional
        A Riccati result of this model to reuse.

    Examples
    --------
    >>> import numpy as np
    >>> from sko.graphs import TreeDigraph
    >>> tree = TreeDigraph.from_parents({0: None, 1: 0})
    >>> model = SKOModel(tree, phi={1: [[1.0]]}, H={0: [[1.0]], 1: [[1.0]]}, M={0: [[2.0]], 1: [[4.0]]})
    >>> x = mass_matrix_solve(model, [6.0, 4.0])      # ℳ = [[6, 4], [4, 4]]
    >>> np.allclose(x, [1.0, 0.0], rtol=0, atol=1e-15)
    True
    """
    ab = check_articulated(model, articulated)
    return articulated_body(ab, _hinge_input(model, y, "y"), None, None)


def mass_matrix_inverse(model: SKOModel, articulated: ArticulatedInertias | None = None) -> np.ndarray:
    """``ℳ^{-1}`` as a dense matrix (Eq. 51), by the O(N) solves on all unit columns at once
    (never by inverting ``ℳ``)."""
    ab = check_articulated(model, articulated)
    return articulated_body(ab, np.eye(model.dof_size, dtype=ab.dtype), None, None)


def mass_matrix_logdet(model: SKOModel, articulated: ArticulatedInertias | None = None):
    """``log det ℳ = Σ_k log det D(k)`` (Eq. 53), in O(N); the numerically safe form.

    Real data gives a float; complex (complex-step) data the complex log; symbolic data a sympy
    expression.
    """
    ab = check_articulated(model, articulated)
    if ab.dtype == object:
        import sympy

        return sympy.log(mass_matrix_det(model, ab))
    if ab.logdet is not None:  # accumulated by the compiled gather from the Cholesky pivots
        return complex(ab.logdet) if ab.dtype.kind == "c" else float(ab.logdet)
    if ab.dtype.kind == "c":
        return complex(sum(np.log(np.linalg.det(D)) for D in ab.D_by_index))
    return float(sum(np.linalg.slogdet(D)[1] for D in ab.D_by_index))


def mass_matrix_det(model: SKOModel, articulated: ArticulatedInertias | None = None):
    """``det ℳ = Π_k det D(k)`` (Eq. 52, 53), in O(N) (may overflow for large models; see
    :func:`mass_matrix_logdet`)."""
    ab = check_articulated(model, articulated)
    if ab.dtype == object:
        import sympy

        return sympy.Mul(*(sympy.Matrix(Dk).det() for Dk in ab.D.values()))
    if ab.logdet is not None:
        return np.exp(ab.logdet)
    return np.prod([np.linalg.det(D) for D in ab.D_by_index])

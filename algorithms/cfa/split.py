"""Split of the inter-node force into hinge and constraint parts (CFA.md, "Split of the
inter-node force").

For every node ``k`` the columns of ``W(k)`` (``m_k × s_k``, ``s_k = m_k − n_k``) are an
orthonormal basis of the null space of ``H(k)``, and ``H⁺(k) = H*(k) (H(k) H*(k))^{-1}`` is the
right inverse of ``H(k)``. Every inter-node force splits as

    f(k) = H⁺(k) F_T(k) + W(k) F_S(k),      F_T(k) = H(k) f(k),      F_S(k) = W*(k) f(k)

(``W*(k) H⁺(k) = 0`` because ``H(k) W(k) = 0``, and ``W*(k) W(k) = I``, so ``W*(k)`` is the
pseudo-inverse ``W(k)^+``). A node with ``n_k = m_k`` has an empty ``W(k)`` (``s_k = 0``): it
carries no constraint force. Stacked constraint vectors ``F_S`` have length ``Σ s_k`` in the
model's body order.

The CFA is a numeric method (SVD for ``W``, ``scipy.sparse`` for ``A``): it takes models with
real floating-point data only.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from functools import cached_property

import numpy as np

from sko.graphs.errors import DimensionError, NonFiniteError, SKOError
from sko.arrays import checked_array
from sko.model import SKOModel

from .. import dispatch

__all__ = ["ForceSplit", "force_split", "W_apply", "W_star_apply", "H_plus_apply", "H_plus_star_apply"]


class ForceSplit:
    """``W(k)``, ``H⁺(k)`` and ``M^{-1}(k)`` of every node of one model, per index.

    Attributes
    ----------
    model : SKOModel
    W_by_index, H_plus_by_index, M_inverse_by_index : tuple of arrays
        In the model's body order.
    constraint_dims : tuple of int
        ``s_k`` in the model's body order.
    constraint_slices : tuple of slice
        Where node ``k``'s ``F_S(k)`` sits in a stacked constraint vector.
    constraint_size : int
        ``Σ s_k``.
    """

    def __init__(self, model: SKOModel):
        _check_model(model)
        self.model = model
        self.constraint_dims, self.constraint_slices, self.constraint_size = _constraint_layout(*split_structure(model))

    # the blocks, made on first use (another implementation may keep them elsewhere: the compiled
    # engine packs them into one buffer and overrides these)
    @cached_property
    def _blocks(self) -> tuple[tuple, tuple, tuple]:
        return _split_blocks(self.model)

    @cached_property
    def W_by_index(self) -> tuple:
        return self._blocks[0]

    @cached_property
    def H_plus_by_index(self) -> tuple:
        return self._blocks[1]

    @cached_property
    def M_inverse_by_index(self) -> tuple:
        return self._blocks[2]

    def __repr__(self) -> str:
        return f"ForceSplit({len(self.W_by_index)} nodes, {self.constraint_size} constraint coordinates)"

    @property
    def W(self) -> Mapping:
        """``{k: W(k)}``."""
        return dict(zip(self.model.bodies, self.W_by_index))

    @property
    def H_plus(self) -> Mapping:
        """``{k: H⁺(k)}``."""
        return dict(zip(self.model.bodies, self.H_plus_by_index))

    def constraint_dim(self, k) -> int:
        """``s_k = m_k − n_k``."""
        return self.constraint_dims[self.model.tree.index(k)]

    def constraint_vector(self, x, name: str = "constraint vector") -> np.ndarray:
        """A checked stacked constraint vector of length ``Σ s_k``."""
        x = checked_array(x, 1, name)
        if x.shape[0] != self.constraint_size:
            raise DimensionError(f"{name} has length {x.shape[0]}, expected Σ s_k = {self.constraint_size} for this model")
        return x


def _check_model(model: SKOModel) -> None:
    """A model the CFA takes: real floating-point numbers, all finite."""
    if model.dtype.kind != "f":
        raise SKOError(f"the constraint force algorithm needs real floating-point model data; got dtype {model.dtype}")
    blocks = (*model.H_by_index, *model.M_by_index, *(W for W in model.weights_by_index if W is not None))
    if not all(np.isfinite(X).all() for X in blocks):
        raise NonFiniteError("the constraint force algorithm got a model with non-finite numbers (NaN or infinity)")


def split_structure(model: SKOModel) -> tuple:
    """What a force split's layout depends on: the tree, the ``m_k`` and the ``n_k``."""
    return model.tree, tuple(M.shape[0] for M in model.M_by_index), tuple(H.shape[0] for H in model.H_by_index)


def _split_blocks(model: SKOModel) -> tuple[tuple, tuple, tuple]:
    """``W(k)`` (the last ``m_k − n_k`` right singular vectors of ``H(k) = U Σ V*``), ``H⁺(k) =
    V_n Σ^{-1} U*`` and ``M^{-1}(k)`` of every node, read-only, per index."""
    W, H_plus, M_inverse = [], [], []
    for H, M in zip(model.H_by_index, model.M_by_index):
        n, m = H.shape
        if n == 0:
            Vh, Hp = np.eye(m), np.zeros((m, 0))
        else:
            U, sigma, Vh = np.linalg.svd(np.asarray(H, dtype=np.float64), full_matrices=True)
            Hp = Vh[:n].T @ (U.T / sigma[:, None])
        for out, X in ((W, Vh[n:].T.copy()), (H_plus, Hp), (M_inverse, np.linalg.inv(M))):
            X.setflags(write=False)
            out.append(X)
    return tuple(W), tuple(H_plus), tuple(M_inverse)


@functools.lru_cache(maxsize=64)
def _constraint_layout(tree, m: tuple, n: tuple) -> tuple[tuple, tuple, int]:
    """``s_k = m_k − n_k``, the slices of ``F_S(k)`` and ``Σ s_k`` (once per structure)."""
    s = [a - b for a, b in zip(m, n)]
    offsets = np.concatenate([[0], np.cumsum(s, dtype=np.int64)]).tolist()
    return tuple(s), tuple(slice(a, b) for a, b in zip(offsets[:-1], offsets[1:])), int(offsets[-1])


def force_split(model: SKOModel) -> ForceSplit:
    """``W(k)`` spanning the null space of ``H(k)`` and ``H⁺(k) = H*(k)(H(k)H*(k))^{-1}`` for every
    node (CFA.md), with ``M^{-1}(k)`` for the CFA operators.

    Raises
    ------
    SKOError
        If the model's data are not real floating point (complex or symbolic).

    Examples
    --------
    >>> from sko.graphs import TreeDigraph
    >>> tree = TreeDigraph.from_parents({0: None})
    >>> model = SKOModel(tree, phi={}, H={0: [[0.0, 2.0, 0.0]]}, M={0: np.eye(3)})
    >>> s = force_split(model)
    >>> s.constraint_size, float(np.abs(model.H[0] @ s.W[0]).max()), s.H_plus[0].ravel().tolist()
    (2, 0.0, [0.0, 0.5, 0.0])
    """
    return _new_split(model)


def _new_split(model: SKOModel) -> ForceSplit:
    return dispatch.run("force_split", (model.dtype,), ForceSplit, model)


def check_split(model: SKOModel, split: ForceSplit | None) -> ForceSplit:
    """``split`` if it belongs to ``model``, a new one if ``None``."""
    if split is None:
        return _new_split(model)
    if not isinstance(split, ForceSplit) or split.model is not model:
        raise SKOError("split must be the ForceSplit of this very model (force_split(model))")
    return split


def _apply(split: ForceSplit, name: str, transpose: bool, x: np.ndarray, out_size: int) -> np.ndarray:
    """``out(k) = B(k) x(k)`` (or ``B*(k) x(k)``) for the block-diagonal operator ``name`` of the
    split, ``"W"`` (node × constraint blocks) or ``"H_plus"`` (node × hinge); complex vectors
    part by part (the operators are real and linear)."""
    if x.dtype.kind == "c":
        return _apply(split, name, transpose, x.real, out_size) + 1j * _apply(split, name, transpose, x.imag, out_size)
    x = np.asarray(x, dtype=np.float64)
    return dispatch.run("split_apply", (x.dtype,), _block_products, split, name, transpose, x, out_size)


def _block_products(split: ForceSplit, name: str, transpose: bool, x: np.ndarray, out_size: int) -> np.ndarray:
    """The reference product of :func:`_apply`: one block product per node."""
    blocks = split.W_by_index if name == "W" else split.H_plus_by_index
    columns = split.constraint_slices if name == "W" else split.model.dof_slices
    out = np.zeros(out_size)
    for B, rows, cols in zip(blocks, split.model.node_slices, columns):
        if transpose:
            out[cols] = B.T @ x[rows]
        else:
            out[rows] = B @ x[cols]
    return out


def W_apply(split: ForceSplit, F_S) -> np.ndarray:
    """``W F_S``: stacked constraint vector → stacked node vector."""
    x = split.constraint_vector(F_S, "F_S")
    return _apply(split, "W", False, x, split.model.node_size)


def W_star_apply(split: ForceSplit, f) -> np.ndarray:
    """``W* f`` (``= W^+ f``): stacked node vector → stacked constraint vector."""
    x = split.model.node_vector(f, "f")
    return _apply(split, "W", True, x, split.constraint_size)


def H_plus_apply(split: ForceSplit, F_T) -> np.ndarray:
    """``H⁺ F_T``: stacked hinge vector → stacked node vector."""
    x = split.model.dof_vector(F_T, "F_T")
    return _apply(split, "H_plus", False, x, split.model.node_size)


def H_plus_star_apply(split: ForceSplit, f) -> np.ndarray:
    """``H⁺* f``: stacked node vector → stacked hinge vector."""
    x = split.model.node_vector(f, "f")
    return _apply(split, "H_plus", True, x, split.model.dof_size)

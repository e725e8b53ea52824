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

from sko.graphs.errors import DimensionError, SKOError
from sko.arrays import checked_array
from sko.model import SKOModel

from sko.engine import cfa as flat
from sko.engine.cfa import Split, block_apply

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
        if model.dtype.kind != "f":
            raise SKOError(f"the constraint force algorithm needs real floating-point model data; got dtype {model.dtype}")
        self.model = model
        self.flat = fs = flat.FlatSplit(model)  # the numbers, packed for the compiled kernels
        self.constraint_dims, self.constraint_slices, self.constraint_size = _constraint_layout(*fs.structure)

    # the blocks as arrays, made on first use (the algorithms run on the packed numbers)
    @cached_property
    def W_by_index(self) -> tuple:
        return self.flat.blocks(Split.W, Split.NODE_DIM, Split.CONSTRAINT_DIM)

    @cached_property
    def H_plus_by_index(self) -> tuple:
        return self.flat.blocks(Split.HP, Split.NODE_DIM, Split.HINGE_DIM)

    @cached_property
    def M_inverse_by_index(self) -> tuple:
        return self.flat.blocks(Split.MI, Split.NODE_DIM, Split.NODE_DIM)

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
    return ForceSplit(model)


def check_split(model: SKOModel, split: ForceSplit | None) -> ForceSplit:
    """``split`` if it belongs to ``model``, a new one if ``None``."""
    if split is None:
        return ForceSplit(model)
    if not isinstance(split, ForceSplit) or split.model is not model:
        raise SKOError("split must be the ForceSplit of this very model (force_split(model))")
    return split


def _apply(split: ForceSplit, block: int, rows: int, cols: int, out_at: int, in_at: int, transpose: bool,
           x: np.ndarray, out_size: int) -> np.ndarray:
    """One block-diagonal product by the compiled kernel (complex vectors part by part: the
    operators are real and linear)."""
    fs = split.flat
    if x.dtype.kind == "c":
        return (_apply(split, block, rows, cols, out_at, in_at, transpose, x.real, out_size)
                + 1j * _apply(split, block, rows, cols, out_at, in_at, transpose, x.imag, out_size))
    x = np.ascontiguousarray(x, dtype=np.float64)
    return block_apply(fs.table, fs.numbers, int(block), int(rows), int(cols), int(out_at), int(in_at), transpose, x,
                       out_size)


def W_apply(split: ForceSplit, F_S) -> np.ndarray:
    """``W F_S``: stacked constraint vector → stacked node vector."""
    x = split.constraint_vector(F_S, "F_S")
    return _apply(split, Split.W, Split.NODE_DIM, Split.CONSTRAINT_DIM, Split.NODE, Split.CON, False, x, split.model.node_size)


def W_star_apply(split: ForceSplit, f) -> np.ndarray:
    """``W* f`` (``= W^+ f``): stacked node vector → stacked constraint vector."""
    x = split.model.node_vector(f, "f")
    return _apply(split, Split.W, Split.NODE_DIM, Split.CONSTRAINT_DIM, Split.CON, Split.NODE, True, x, split.constraint_size)


def H_plus_apply(split: ForceSplit, F_T) -> np.ndarray:
    """``H⁺ F_T``: stacked hinge vector → stacked node vector."""
    x = split.model.dof_vector(F_T, "F_T")
    return _apply(split, Split.HP, Split.NODE_DIM, Split.HINGE_DIM, Split.NODE, Split.DOF, False, x, split.model.node_size)


def H_plus_star_apply(split: ForceSplit, f) -> np.ndarray:
    """``H⁺* f``: stacked node vector → stacked hinge vector."""
    x = split.model.node_vector(f, "f")
    return _apply(split, Split.HP, Split.NODE_DIM, Split.HINGE_DIM, Split.DOF, Split.NODE, True, x, split.model.dof_size)

"""Block-diagonal operators applied node by node: ``H``, ``H*`` and any ``diag(X(k))``.

These are the O(N) building blocks the recursions of SKO.md compose with the SPO products.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sko.arrays import result_dtype
from sko.model import SKOModel

from . import dispatch

__all__ = ["H_apply", "H_star_apply", "block_diagonal_apply"]


def H_apply(model: SKOModel, f) -> np.ndarray:
    """``T = H f``: a stacked node vector to a stacked hinge vector."""
    f = model.node_vector(f, "f")
    T = np.zeros(model.dof_size, dtype=result_dtype(model.dtype, f))
    return dispatch.run("H_apply", (T.dtype,), _H, model, f, T)


def _H(model: SKOModel, f: np.ndarray, T: np.ndarray) -> np.ndarray:
    for Hk, ns, ds in zip(model.H_by_index, model.node_slices, model.dof_slices):
        T[ds] = Hk @ f[ns]
    return T


def H_star_apply(model: SKOModel, x) -> np.ndarray:
    """``H* x``: a stacked hinge vector to a stacked node vector."""
    x = model.dof_vector(x, "hinge vector")
    y = np.zeros(model.node_size, dtype=result_dtype(model.dtype, x))
    return dispatch.run("H_star_apply", (y.dtype,), _H_star, model, x, y)


def _H_star(model: SKOModel, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    for Hk, ns, ds in zip(model.H_by_index, model.node_slices, model.dof_slices):
        y[ns] = Hk.T @ x[ds]
    return y


def block_diagonal_apply(blocks: Sequence[np.ndarray], slices: Sequence[slice], x: np.ndarray,
                         dtype: np.dtype | None = None) -> np.ndarray:
    """``diag(X(k)) x`` for per-index blocks ``X(k)`` acting on ``x[slices[k]]``.

    ``dtype`` is the blocks' common scalar type when the caller knows it (saves a pass)."""
    y = np.zeros(x.shape[0], dtype=result_dtype(x, dtype) if dtype is not None else result_dtype(x, *blocks))
    for Xk, s in zip(blocks, slices):
        y[s] = Xk @ x[s]
    return y

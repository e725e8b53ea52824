"""Dense operators of the Riccati solution and helpers for assembling block matrices.

For checking only: the checks compare the O(N) recursions against these dense expressions.
Every helper keeps the model's scalar type, so the same code builds float and sympy matrices.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass

import numpy as np

from sko.graphs import bwa_matrix, one_resolvent
from sko.model import SKOModel

__all__ = ["block_matrix", "identity", "RiccatiOperators", "riccati_operators", "spo_path_product"]


def identity(n: int, dtype) -> np.ndarray:
    return np.eye(n, dtype=dtype)


def block_matrix(model: SKOModel, blocks: Mapping[Hashable, np.ndarray], rows: str = "node", cols: str = "node",
                 at_parent: bool = False, dtype=None) -> np.ndarray:
    """Dense matrix with ``blocks[k]`` at block ``(k, k)`` — or ``(℘(k), k)`` when ``at_parent``.

    ``rows`` / ``cols`` choose node (``Σ m_k``) or hinge (``Σ n_k``) partitions.
    """
    dtype = model.dtype if dtype is None else dtype
    slices = {"node": model.node_slice, "dof": model.dof_slice}
    size = {"node": model.node_size, "dof": model.dof_size}
    out = np.zeros((size[rows], size[cols]), dtype=dtype)
    for k, B in blocks.items():
        r = model.tree.parent(k) if at_parent else k
        if r is None:
            continue
        out[slices[rows](r), slices[cols](k)] = B
    return out


def spo_path_product(model: SKOModel, weights: Mapping, i: Hashable, j: Hashable) -> np.ndarray:
    """``φ(i, j) = φ(i, c1) φ(c1, c2) ⋯ φ(c_r, j)`` along the path from ``i`` down to ``j`` (SKO.md §2)."""
    path = model.tree.path(i, j)
    out = identity(model.node_dim(i), model.dtype)
    for c in path[1:]:
        out = out @ weights[c]
    return out


@dataclass(frozen=True)
class RiccatiOperators:
    """Dense ``P, D, D^{-1}, G, K, τ̄, ℰ_ψ, ψ`` from a Riccati result (SKO.md §8, Eq. 32–35)."""

    P: np.ndarray
    P_plus: np.ndarray
    D: np.ndarray
    D_inverse: np.ndarray
    G: np.ndarray
    K: np.ndarray
    tau_bar: np.ndarray
    E_psi: np.ndarray
    psi: np.ndarray

    @property
    def psi_tilde(self) -> np.ndarray:
        return self.psi - identity(self.psi.shape[0], self.psi.dtype)


def riccati_operators(model: SKOModel, ab) -> RiccatiOperators:
    """The dense operators of an :func:`sko.algorithms.articulated_inertias` result."""
    E_psi = bwa_matrix(model.tree, model.node_dims(), dict(ab.psi)).astype(model.dtype)
    return RiccatiOperators(
        P=block_matrix(model, ab.P),
        P_plus=block_matrix(model, ab.P_plus),
        D=block_matrix(model, ab.D, "dof", "dof"),
        D_inverse=block_matrix(model, ab.D_inverse, "dof", "dof"),
        G=block_matrix(model, ab.G, "node", "dof"),
        K=block_matrix(model, ab.K, "node", "dof", at_parent=True),
        tau_bar=block_matrix(model, ab.tau_bar),
        E_psi=E_psi,
        psi=one_resolvent(E_psi),
    )

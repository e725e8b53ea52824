"""The SKO model ``(H, ℰ_φ, M)`` on a tree digraph (SKO.md §2–§3).

An :class:`SKOModel` holds, for every body ``k`` of a :class:`sko.graphs.TreeDigraph`:

* the arc weight ``φ(℘(k), k)`` (shape ``m_℘(k) × m_k``, any size, possibly singular), for
  non-base bodies only;
* the joint map ``H(k)`` (shape ``n_k × m_k``, full row rank);
* the inertia ``M(k)`` (``m_k × m_k``, symmetric positive definite).

The node dimension ``m_k`` is read off ``M(k)`` and the hinge dimension ``n_k`` off ``H(k)``.
Stacked vectors (``θ̇, T`` of length ``Σ n_k``; ``𝒱, α, f, a, b`` of length ``Σ m_k``) are plain
1-D arrays in the tree's stacking order. The model is immutable: it keeps read-only copies.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import NoReturn

import numpy as np
import scipy.linalg

from sko.graphs import TreeDigraph, block_offsets, bwa_matrix, check_weights, one_resolvent
from sko.graphs.errors import DimensionError, SKOError, UnknownNodeError

from .arrays import check_full_row_rank, check_spd, checked_array, result_dtype

__all__ = ["SKOModel", "DenseOperators"]


class SKOModel:
    """An SKO model ``(H, ℰ_φ, M)``.

    Parameters
    ----------
    tree : TreeDigraph
    phi : mapping body -> array
        ``phi[k] = φ(℘(k), k)`` of shape ``m_℘(k) × m_k`` for every non-base body.
    H : mapping body -> array
        ``H[k]`` of shape ``n_k × m_k`` with full row rank.
    M : mapping body -> array
        ``M[k]`` of shape ``m_k × m_k``, symmetric positive definite.

    validate : bool, keyword-only
        With ``False`` only shapes are checked, not finiteness, symmetry, definiteness or rank.
        For body types that validated their parameters once and build a model at every state
        from them (the system layers of :mod:`sko.systems`); the default
        checks everything.

    Raises
    ------
    DimensionError, NonFiniteError, NotPositiveDefiniteError, RankDeficientError, UnknownNodeError
        On bad input, naming the body and the shapes.

    Examples
    --------
    >>> import numpy as np
    >>> tree = TreeDigraph.from_parents({"a": None, "b": "a"})
    >>> model = SKOModel(tree, phi={"b": np.ones((2, 3))},
    ...                  H={"a": [[1.0, 0.0]], "b": [[1.0, 0.0, 0.0]]},
    ...                  M={"a": np.eye(2), "b": np.eye(3)})
    >>> model.node_dim("b"), model.dof_dim("b"), model.node_slice("b")
    (3, 1, slice(2, 5, None))
    """

    def __init__(self, tree: TreeDigraph, phi: Mapping, H: Mapping, M: Mapping, *, validate: bool = True):
        if not isinstance(tree, TreeDigraph):
            raise SKOError(f"tree must be a sko.graphs.TreeDigraph, got {type(tree).__name__}")
        for name, arg in (("phi", phi), ("H", H), ("M", M)):
            if not isinstance(arg, Mapping):
                raise SKOError(f"{name} must be a mapping body -> array, got {type(arg).__name__}")
            unknown = [k for k in arg if k not in tree]
            if unknown:
                raise UnknownNodeError(f"{name} has entries for {unknown!r}, which are not bodies of the tree")
        self.tree = tree
        bodies = tree.bodies
        for name, arg in (("M", M), ("H", H)):
            missing = [k for k in bodies if k not in arg]
            if missing:
                raise DimensionError(f"{name} is missing for bodies {missing!r}")

        Ms = {k: checked_array(M[k], 2, "inertia M", k, validate) for k in bodies}
        for k, Mk in Ms.items():
            if Mk.shape[0] != Mk.shape[1]:
                raise DimensionError(f"inertia M of body {k!r} must be square, got shape {Mk.shape}")
            if validate:
                check_spd(Mk, "inertia M", k)
        Hs = {k: checked_array(H[k], 2, "joint map H", k, validate) for k in bodies}
        for k, Hk in Hs.items():
            if Hk.shape[1] != Ms[k].shape[0]:
                raise DimensionError(f"joint map H of body {k!r} has shape {Hk.shape}; it needs m_k = {Ms[k].shape[0]} columns (from M)")
            if validate:
                check_full_row_rank(Hk, "joint map H", k)
        dims = {k: Ms[k].shape[0] for k in bodies}
        Ws = check_weights(tree, dims, phi, finite=validate)

        self._phi = MappingProxyType(Ws)
        self._H = MappingProxyType(Hs)
        self._M = MappingProxyType(Ms)
        self.dtype = result_dtype(*Ws.values(), *Hs.values(), *Ms.values())
        # Per-index views used by the recursions (position i = tree.bodies[i]).
        self.weights_by_index = tuple(Ws.get(k) for k in bodies)
        self.H_by_index = tuple(Hs[k] for k in bodies)
        self.M_by_index = tuple(Ms[k] for k in bodies)
        node_off = block_offsets(tree, dims)
        dof_off = block_offsets(tree, {k: Hs[k].shape[0] for k in bodies})
        self.node_slices = tuple(slice(int(a), int(b)) for a, b in zip(node_off[:-1], node_off[1:]))
        self.dof_slices = tuple(slice(int(a), int(b)) for a, b in zip(dof_off[:-1], dof_off[1:]))
        self.node_size = int(node_off[-1])
        self.dof_size = int(dof_off[-1])
        # what the compiled engine derives from the tree and the dimensions alone (its flat
        # layout, the constraint force algorithm's tables), made on first use by
        # :mod:`sko.engine`, keyed by the engine's type of each: shared with the
        # :meth:`with_blocks` models (same structure), and gone with the last of them
        self._derived: dict = {}

    #: what the compiled engine makes of this model's numbers (``sko.engine.model.compiled_model``),
    #: made on first use and held by the model itself, so that it lives and dies with it
    _compiled = None

    #: what a model shares with :meth:`with_blocks` models: the tree and everything read off it
    _STRUCTURE = ("tree", "dtype", "node_slices", "dof_slices", "node_size", "dof_size", "_derived")

    def with_blocks(self, weights: Sequence, H: Sequence, M: Sequence, *, check: bool = True) -> "SKOModel":
        """A model on this model's tree with the same dimensions and scalar type and other
        numbers, per index in the body order (``None`` weights for base bodies).

        For builders that made the blocks themselves at every state (a system's compiled state
        filling): each block must be a read-only array of exactly this model's shape and dtype
        that nobody writes again. They are taken as they are: shapes, dtype and read-only flags
        are checked, nothing is copied, and the numbers are not (as with ``validate=False``).
        ``check=False`` skips even those checks, for a builder whose blocks are views of its own
        read-only buffer at offsets it checked once.

        Raises
        ------
        DimensionError
            On a block that is missing, of another shape or dtype, or writeable.
        """
        bodies = self.tree.bodies
        weights, H, M = tuple(weights), tuple(H), tuple(M)
        if check:
            blocks = (*weights, *H, *M)
            if (len(weights), len(H), len(M)) != (len(bodies),) * 3 or any(
                    x is not None and (type(x) is not np.ndarray or x.flags.writeable) for x in blocks) or [
                    None if x is None else (x.shape, x.dtype) for x in blocks] != self._signature():
                self._reject(weights, H, M)
        model = SKOModel.__new__(SKOModel)
        for name in self._STRUCTURE:
            setattr(model, name, getattr(self, name))
        model.weights_by_index, model.H_by_index, model.M_by_index = weights, H, M
        model.__dict__["_block_signature"] = self._signature()
        model._phi = MappingProxyType({k: W for k, W in zip(bodies, weights) if W is not None})
        model._H = MappingProxyType(dict(zip(bodies, H)))
        model._M = MappingProxyType(dict(zip(bodies, M)))
        return model

    def _signature(self) -> list:
        """``(shape, dtype)`` of every block (``None`` for base bodies' weights), in the order
        weights, ``H``, ``M``: what :meth:`with_blocks` requires of new blocks."""
        got = self.__dict__.get("_block_signature")
        if got is None:
            got = self.__dict__["_block_signature"] = [None if x is None else (x.shape, x.dtype) for x in
                                                       (*self.weights_by_index, *self.H_by_index, *self.M_by_index)]
        return got

    def _reject(self, weights: tuple, H: tuple, M: tuple) -> NoReturn:
        """Raise the error of :meth:`with_blocks` naming the first block unlike this model's."""
        for what, new, old in (("weight φ(℘(k), k)", weights, self.weights_by_index),
                               ("joint map H", H, self.H_by_index), ("inertia M", M, self.M_by_index)):
            if len(new) != len(old):
                raise DimensionError(f"{what}: {len(new)} blocks given, the model has {len(old)} bodies")
            for k, x, y in zip(self.tree.bodies, new, old):
                if (x is None) != (y is None) or (x is not None and (
                        type(x) is not np.ndarray or x.shape != y.shape or x.dtype != y.dtype or x.flags.writeable)):
                    raise DimensionError(f"{what} of body {k!r} must be a read-only array of shape "
                                         f"{None if y is None else y.shape} and dtype {self.dtype}, like the model's")
        raise DimensionError("blocks unlike the model's")  # pragma: no cover

    # ----------------------------------------------------------------- per-node data
    @property
    def bodies(self) -> tuple:
        return self.tree.bodies

    @property
    def phi(self) -> Mapping:
        """``{k: φ(℘(k), k)}`` for the non-base bodies (read-only)."""
        return self._phi

    @property
    def H(self) -> Mapping:
        return self._H

    @property
    def M(self) -> Mapping:
        return self._M

    def node_dim(self, k: Hashable) -> int:
        """``m_k``, the size of the node velocity ``𝒱(k)``."""
        return self._M[self._body(k)].shape[0]

    def dof_dim(self, k: Hashable) -> int:
        """``n_k``, the number of hinge velocity coordinates of body ``k``."""
        return self._H[self._body(k)].shape[0]

    def node_dims(self) -> dict:
        return {k: Mk.shape[0] for k, Mk in self._M.items()}

    def dof_dims(self) -> dict:
        return {k: Hk.shape[0] for k, Hk in self._H.items()}

    def node_slice(self, k: Hashable) -> slice:
        """Where ``𝒱(k)`` sits in a stacked node vector."""
        return self.node_slices[self.tree.index(k)]

    def dof_slice(self, k: Hashable) -> slice:
        """Where ``θ̇(k)`` sits in a stacked hinge vector."""
        return self.dof_slices[self.tree.index(k)]

    def __repr__(self) -> str:
        return f"SKOModel({len(self.bodies)} bodies, {self.node_size} node coordinates, {self.dof_size} dofs, dtype={self.dtype})"

    def _body(self, k: Hashable) -> Hashable:
        self.tree.index(k)
        return k

    # ----------------------------------------------------------------- stacked vectors
    def node_vector(self, x, name: str = "node vector") -> np.ndarray:
        """Check a stacked node vector (length ``Σ m_k``); ``None`` gives zeros."""
        return self._stacked(x, self.node_size, name)

    def dof_vector(self, x, name: str = "hinge vector") -> np.ndarray:
        """Check a stacked hinge vector (length ``Σ n_k``); ``None`` gives zeros."""
        return self._stacked(x, self.dof_size, name)

    def _stacked(self, x, size: int, name: str) -> np.ndarray:
        if x is None:
            return np.zeros(size, dtype=self.dtype)
        x = checked_array(x, 1, name)
        if x.shape[0] != size:
            raise DimensionError(f"{name} has length {x.shape[0]}, expected {size} for this model")
        return x

    def node_split(self, x: np.ndarray) -> dict:
        """A stacked node vector as ``{k: x(k)}``."""
        x = self.node_vector(x)
        return {k: x[s] for k, s in zip(self.bodies, self.node_slices)}

    def dof_split(self, x: np.ndarray) -> dict:
        """A stacked hinge vector as ``{k: x(k)}``."""
        x = self.dof_vector(x)
        return {k: x[s] for k, s in zip(self.bodies, self.dof_slices)}

    def weights_index(self, weights: Mapping | None) -> tuple:
        """Arc weights of another SPO on this digraph (e.g. ψ) as a per-index tuple, checked
        against the model's node dimensions; ``None`` gives the model's own ``φ`` weights."""
        if weights is None:
            return self.weights_by_index
        Ws = check_weights(self.tree, self.node_dims(), weights)
        return tuple(Ws.get(k) for k in self.bodies)

    # ----------------------------------------------------------------- dense operators
    def dense(self) -> "DenseOperators":
        """The dense operators of SKO.md §2–§3, for checking only (O(N²) memory)."""
        E = bwa_matrix(self.tree, self.node_dims(), self._phi)
        E = E.astype(np.result_type(E.dtype, self.dtype))
        phi = one_resolvent(E)
        H = _block_diag([self._H[k] for k in self.bodies], self.dtype)
        M = _block_diag([self._M[k] for k in self.bodies], self.dtype)
        return DenseOperators(E=E, phi=phi, H=H, M=M)


@dataclass(frozen=True)
class DenseOperators:
    """Dense ``ℰ_φ``, ``φ``, ``H``, ``M`` of a model and what follows from them (Eq. 1–3)."""

    E: np.ndarray
    phi: np.ndarray
    H: np.ndarray
    M: np.ndarray

    @property
    def phi_tilde(self) -> np.ndarray:
        """``φ̃ = φ − I``."""
        return self.phi - np.eye(self.phi.shape[0], dtype=self.phi.dtype)

    @property
    def mass_matrix(self) -> np.ndarray:
        """``ℳ = H φ M φ* H*`` (Eq. 2)."""
        return self.H @ self.phi @ self.M @ self.phi.T @ self.H.T

    def bias(self, a=None, b=None) -> np.ndarray:
        """``𝒞 = H φ (M φ* a + b)`` (Eq. 3); ``None`` stands for zero."""
        n = self.M.shape[0]
        a = np.zeros(n, dtype=self.M.dtype) if a is None else np.asarray(a)
        b = np.zeros(n, dtype=self.M.dtype) if b is None else np.asarray(b)
        return self.H @ self.phi @ (self.M @ self.phi.T @ a + b)


def _block_diag(blocks: list[np.ndarray], dtype) -> np.ndarray:
    return scipy.linalg.block_diag(*blocks).astype(np.result_type(dtype, *blocks)) if blocks else np.zeros((0, 0), dtype)

"""The general constraint force algorithm (CFA.md, "The CFA"; the paper's Eq. 22–29).

With all velocity terms moved into the equivalent control force ``F_T = T − 𝒞`` (so that
``ℳ θ̈ = F_T``), the equivalent inter-node force is ``f = H⁺ F_T + W F_S`` and, because
``W* φ^{-*} α = W* H* θ̈ = 0``::

    A F_S = −B F_T                                           (Eq. 27, 29)
    θ̈ = C F_T + H⁺* φ^{-*} M^{-1} φ^{-1} W F_S = H⁺* φ^{-*} M^{-1} φ^{-1} f      (Eq. 28)

``A`` is assembled block-sparse in O(N) and solved by a sparse direct solver; ``B`` and ``C`` are
applied as O(N) operators.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse.linalg

from sko.model import SKOModel

from ..newton_euler import inverse_dynamics
from .matrix import constraint_matrix_csc
from .operators import B_apply, constraint_operator_apply
from .split import ForceSplit, H_plus_apply, H_plus_star_apply, W_apply, check_split

__all__ = ["CFAResult", "equivalent_control_force", "constraint_force_algorithm"]


class CFAResult(NamedTuple):
    """Result of the CFA on the equivalent system."""

    qdd: np.ndarray  #: hinge accelerations θ̈ = ℳ^{-1} F_T
    F_T: np.ndarray  #: equivalent control force T − 𝒞
    F_S: np.ndarray  #: constraint forces of the equivalent system (Σ s_k)
    f: np.ndarray  #: equivalent inter-node forces H⁺ F_T + W F_S
    rounds: tuple = ()  #: serialized CFA only: cyclic reduction rounds per segment
    gathered: tuple = ()  #: serialized CFA only: bodies of the gathered dense system


def equivalent_control_force(model: SKOModel, T, a=None, b=None) -> np.ndarray:
    """``F_T = T − 𝒞`` with ``𝒞 = H φ (M φ* a + b)`` (Eq. 3) by Newton–Euler at ``θ̈ = 0``."""
    T = model.dof_vector(T, "T")
    if a is None and b is None:
        return T.copy()
    return T - inverse_dynamics(model, None, a=a, b=b)


def accelerations(split: ForceSplit, F_T: np.ndarray, F_S: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``f = H⁺ F_T + W F_S`` and ``θ̈ = H⁺* φ^{-*} M^{-1} φ^{-1} f`` (Eq. 22, 28)."""
    f = H_plus_apply(split, F_T) + W_apply(split, F_S)
    return H_plus_star_apply(split, constraint_operator_apply(split.model, f, split)), f


def constraint_force_algorithm(model: SKOModel, T, a=None, b=None, split: ForceSplit | None = None) -> CFAResult:
    """Forward dynamics and constraint forces by the general CFA (CFA.md; Eq. 27–29).

    Parameters
    ----------
    model : SKOModel
        Real floating-point data.
    T : array (Σ n_k,)
        Hinge forces.
    a, b : array (Σ m_k,), optional
        Coriolis accelerations and gyroscopic forces (Eq. 1); ``None`` is zero.
    split : ForceSplit, optional
        :func:`force_split` of this model to reuse.

    Returns
    -------
    CFAResult
        ``qdd`` equals :func:`sko.algorithms.forward_dynamics`; ``F_S`` belongs to the equivalent
        system (see :func:`constraint_forces` for the physical ones).

    Raises
    ------
    DimensionError, NonFiniteError
        On vectors of the wrong length or with non-finite entries.
    SKOError
        On complex or symbolic model data.

    Examples
    --------
    >>> from sko.graphs import TreeDigraph
    >>> tree = TreeDigraph.from_parents({0: None, 1: 0})
    >>> model = SKOModel(tree, phi={1: [[1.0]]}, H={0: [[1.0]], 1: [[1.0]]}, M={0: [[2.0]], 1: [[4.0]]})
    >>> r = constraint_force_algorithm(model, [6.0, 4.0])    # ℳ = [[6, 4], [4, 4]], no constraints
    >>> np.allclose(r.qdd, [1.0, 0.0], rtol=0, atol=1e-15), r.F_S.shape
    (True, (0,))
    """
    split = check_split(model, split)
    F_T = equivalent_control_force(model, T, a, b)
    F_S = np.zeros(split.constraint_size)
    if split.constraint_size:
        A = constraint_matrix_csc(split)
        F_S = np.atleast_1d(scipy.sparse.linalg.spsolve(A, -B_apply(model, F_T, split)))
    qdd, f = accelerations(split, F_T, F_S)
    return CFAResult(qdd, F_T, F_S, f)

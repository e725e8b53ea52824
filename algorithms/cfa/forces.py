"""Physical constraint forces (CFA.md, "Physical constraint forces").

The CFA's ``F_S`` belongs to the equivalent system, whose velocity terms were moved into
``F_T = T − 𝒞``: its inter-node force is ``f_eq = φ M φ* H* θ̈ = H⁺ F_T + W F_S``. The true
inter-node force from Newton–Euler (Algorithm 3.1) with the forward-dynamics accelerations is

    f = φ (M α + b) = f_eq + φ (M φ* a + b),          α = φ* (H* θ̈ + a)

so the physical constraint force on hinge ``k`` is ``W(k)^+ f(k) = W*(k) f(k)`` and

    W^+ f = F_S + W^+ φ (M φ* a + b)          (and H f = T, H f_eq = F_T).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from sko.graphs.errors import SKOError
from sko.model import SKOModel

from ..newton_euler import newton_euler
from .general import CFAResult, constraint_force_algorithm
from .serialized import serialized_constraint_force_algorithm
from .split import ForceSplit, W_star_apply, check_split

__all__ = ["ConstraintForces", "constraint_forces"]


class ConstraintForces(NamedTuple):
    """Physical and equivalent-system constraint forces at one state."""

    qdd: np.ndarray  #: hinge accelerations θ̈
    f: np.ndarray  #: physical inter-node forces φ (M α + b) (Newton–Euler)
    F_S: np.ndarray  #: physical constraint forces W^+ f
    F_S_equivalent: np.ndarray  #: the CFA's constraint forces of the equivalent system
    bias: np.ndarray  #: W^+ φ (M φ* a + b), the difference F_S − F_S_equivalent
    cfa: CFAResult  #: the CFA result the accelerations came from


def constraint_forces(model: SKOModel, T, a=None, b=None, split: ForceSplit | None = None,
                      method: str = "serialized") -> ConstraintForces:
    """Physical constraint forces ``W^+ f`` and the CFA's equivalent-system ``F_S``.

    Parameters
    ----------
    model, T, a, b, split
        As for :func:`constraint_force_algorithm`.
    method : {"serialized", "general"}
        Which CFA gives ``θ̈`` and ``F_S``.

    Raises
    ------
    SKOError
        On an unknown ``method`` (and as :func:`constraint_force_algorithm`).
    """
    solvers = {"serialized": serialized_constraint_force_algorithm, "general": constraint_force_algorithm}
    if method not in solvers:
        raise SKOError(f"method must be one of {sorted(solvers)}, got {method!r}")
    split = check_split(model, split)
    result = solvers[method](model, T, a, b, split)
    f = newton_euler(model, result.qdd, a=a, b=b).f
    bias = W_star_apply(split, newton_euler(model, None, a=a, b=b).f)
    return ConstraintForces(result.qdd, f, W_star_apply(split, f), result.F_S, bias, result)

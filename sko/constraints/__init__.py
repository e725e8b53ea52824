"""Constrained dynamics at frames: contacts and loop constraints of any dimension, impulses
(CONSTRAINTS.md).

>>> from sko.constraints import PointContact, FrameContact, FrameConstraint
>>> PointContact("foot").dimension, FrameContact("foot").dimension, FrameConstraint("hand").dimension
(3, 6, 5)
"""

from sko.constraints.values import (REFERENCES, ConstraintError, FrameConstraint, FrameContact,
                                    InconsistentConstraintsError, PointContact)
from sko.constraints.kinematics import anchored, constraint_drift, constraint_error, constraint_jacobian
from sko.constraints.derivatives import ConstrainedDynamicsDerivatives, constrained_dynamics_derivatives
from sko.constraints.dynamics import (PROXIMAL_TOLERANCE, constrained_dynamics, constrained_operational_space_inertia,
                                      constraint_compliance, impulse_dynamics)

__all__ = ["REFERENCES", "ConstraintError", "InconsistentConstraintsError", "FrameConstraint", "FrameContact",
           "PointContact", "anchored", "constraint_jacobian", "constraint_drift", "constraint_error", "constraint_compliance",
           "constrained_dynamics", "constrained_dynamics_derivatives", "ConstrainedDynamicsDerivatives", "impulse_dynamics", "constrained_operational_space_inertia", "PROXIMAL_TOLERANCE"]

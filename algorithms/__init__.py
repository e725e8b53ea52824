"""Generic recursions on any SKO model (SKO.md §4 onwards).

Every function takes an :class:`sko.SKOModel` first and stacked 1-D vectors in the model's body
order; float, complex (complex-step) and ``object`` (sympy) arrays all flow through unchanged.
"""

from .blocks import H_apply, H_star_apply, block_diagonal_apply
from .newton_euler import NewtonEuler, inverse_dynamics, newton_euler
from .spo import phi_apply, phi_star_apply, phi_tilde_apply, phi_tilde_star_apply

__all__ = [
    "phi_apply",
    "phi_star_apply",
    "phi_tilde_apply",
    "phi_tilde_star_apply",
    "H_apply",
    "H_star_apply",
    "block_diagonal_apply",
    "NewtonEuler",
    "newton_euler",
    "inverse_dynamics",
]

"""Generic recursions on any SKO model (SKO.md §4 onwards).

Every function takes an :class:`sko.SKOModel` first and stacked 1-D vectors in the model's body
order; float, complex (complex-step) and ``object`` (sympy) arrays all flow through unchanged.
"""

from .blocks import H_apply, H_star_apply, block_diagonal_apply
from .newton_euler import NewtonEuler, inverse_dynamics, newton_euler
from .sparse_ltdl import (
    CompressedLayout,
    CompressedLTDL,
    L_apply,
    L_inverse_apply,
    L_inverse_transpose_apply,
    L_transpose_apply,
    SparsityCounts,
    compress_lower,
    compressed_layout,
    compressed_ltdl,
    decompress_lower,
    lower_factor,
    ltdl,
    ltdl_in_place,
    ltdl_solve,
    ltl,
    ltl_in_place,
    ltl_solve,
    operation_counts,
    sparse_mass_matrix_apply,
    sparsity_counts,
)
from .spo import phi_apply, phi_star_apply, phi_tilde_apply, phi_tilde_star_apply
from .forward_dynamics import forward_dynamics
from .innovations import (
    D_apply,
    D_inverse_apply,
    innovations_apply,
    innovations_inverse_apply,
    innovations_inverse_star_apply,
    innovations_star_apply,
    mass_matrix_det,
    mass_matrix_inverse,
    mass_matrix_logdet,
    mass_matrix_solve,
)
from .lyapunov import BackwardLyapunov, ForwardLyapunov, backward_lyapunov, forward_lyapunov
from .mass_matrix import composite_inertias, mass_matrix
from .riccati import ArticulatedInertias, articulated_inertias

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
    "ForwardLyapunov",
    "BackwardLyapunov",
    "forward_lyapunov",
    "backward_lyapunov",
    "composite_inertias",
    "mass_matrix",
    "ArticulatedInertias",
    "articulated_inertias",
    "forward_dynamics",
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
    "ltdl",
    "ltl",
    "ltdl_in_place",
    "ltl_in_place",
    "lower_factor",
    "L_apply",
    "L_transpose_apply",
    "L_inverse_apply",
    "L_inverse_transpose_apply",
    "sparse_mass_matrix_apply",
    "ltdl_solve",
    "ltl_solve",
    "SparsityCounts",
    "sparsity_counts",
    "operation_counts",
    "CompressedLayout",
    "compressed_layout",
    "compress_lower",
    "decompress_lower",
    "CompressedLTDL",
    "compressed_ltdl",
]

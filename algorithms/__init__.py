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

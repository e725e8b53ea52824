"""Generic recursions on any SKO model (SKO.md §4 onwards).

Every function takes an :class:`sko.SKOModel` first and stacked 1-D vectors in the model's body
order; float, complex (complex-step) and ``object`` (sympy) arrays all flow through unchanged.

This is the reference path: it reads like the paper and imports nothing compiled. The compiled
engine runs the same functions with its kernels as :mod:`sko.engine.algorithms` (same names and
signatures); every step a function hands to :func:`.dispatch.run` may be answered there.
"""

import functools as _functools
import inspect as _inspect
import typing as _typing

import numpy as _np

from sko.graphs.errors import DimensionError as _DimensionError
from sko.graphs.errors import NonFiniteError as _NonFiniteError

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
from .cfa import (
    B_apply,
    B_star_apply,
    C_apply,
    CFAResult,
    ConstraintForces,
    ForceSplit,
    H_plus_apply,
    H_plus_star_apply,
    W_apply,
    W_star_apply,
    constraint_blocks,
    constraint_force_algorithm,
    constraint_forces,
    constraint_matrix,
    constraint_operator_apply,
    constraint_pattern,
    equivalent_control_force,
    force_split,
    kept_nodes,
    phi_inverse_apply,
    phi_inverse_star_apply,
    serialized_constraint_force_algorithm,
)
from .lyapunov import BackwardLyapunov, ForwardLyapunov, backward_lyapunov, forward_lyapunov
from .mass_matrix import composite_inertias, mass_matrix
from .operational_space import operational_space_compliance, operational_space_inertia
from .riccati import ArticulatedInertias, articulated_inertias
from .sparsity import (
    BlockPattern,
    PatternComparison,
    compare_mass_matrix_pattern,
    mass_matrix_pattern,
    node_pattern,
    segment_blocks,
    segment_order,
    segment_pattern,
)

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
    "operational_space_compliance",
    "operational_space_inertia",
    "BlockPattern",
    "PatternComparison",
    "segment_order",
    "segment_pattern",
    "node_pattern",
    "mass_matrix_pattern",
    "segment_blocks",
    "compare_mass_matrix_pattern",
    "ForceSplit",
    "force_split",
    "W_apply",
    "W_star_apply",
    "H_plus_apply",
    "H_plus_star_apply",
    "phi_inverse_apply",
    "phi_inverse_star_apply",
    "constraint_operator_apply",
    "B_apply",
    "B_star_apply",
    "C_apply",
    "constraint_pattern",
    "constraint_blocks",
    "constraint_matrix",
    "CFAResult",
    "equivalent_control_force",
    "constraint_force_algorithm",
    "kept_nodes",
    "serialized_constraint_force_algorithm",
    "ConstraintForces",
    "constraint_forces",
]


def _checked_entry_point(function, kind: type):
    """``function`` with its first argument checked to be a ``kind`` (an SKO model, a Riccati
    result, a force split: a wrong object gets the project's error naming the function, not an
    ``AttributeError`` from inside it), and its array result checked to be finite (finite inputs
    so large that the recursion overflows get an error, never an inf or NaN passed on)."""

    @_functools.wraps(function)
    def checked(first, *args, **kwargs):
        if not isinstance(first, kind):
            raise _DimensionError(f"{function.__name__} takes {'an' if kind.__name__[0] in 'AEIOUS' else 'a'} "
                                  f"{kind.__name__} first, got {type(first).__name__}")
        result = function(first, *args, **kwargs)
        parts = result if isinstance(result, tuple) else result.values() if isinstance(result, dict) else (result,)
        for x in parts:  # an array, or a (named) tuple or dict of them
            if isinstance(x, _np.ndarray) and x.dtype.kind in "fc" and not _np.isfinite(x).all():
                raise _NonFiniteError(f"{function.__name__}: the result is not finite (NaN or infinity): the model "
                                      "holds non-finite numbers (built with validate=False) or its numbers or the "
                                      "inputs are too large for floating point")
        return result

    return checked


def _check_entry_points() -> None:
    """Wrap every public function whose first parameter is annotated with one of the package's
    classes (:func:`_checked_entry_point`)."""
    namespace = globals()
    for name in __all__:
        function = namespace[name]
        if not _inspect.isfunction(function):
            continue
        first = next(iter(_inspect.signature(function).parameters), None)
        kind = _typing.get_type_hints(function).get(first) if first is not None else None
        if isinstance(kind, type) and kind.__module__.startswith("sko."):
            namespace[name] = _checked_entry_point(function, kind)


_check_entry_points()

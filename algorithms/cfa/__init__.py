"""The constraint force algorithm (CFA) on SKO models (CFA.md; Liu, Hu and Zhang 2016).

* :mod:`.split`: ``W(k)`` and ``H⁺(k)``, the split ``f = H⁺ F_T + W F_S`` of the inter-node force;
* :mod:`sko.algorithms.cfa.operators`: ``φ^{-1} = I − ℰ_φ`` and the products with ``B`` and ``C`` in O(N);
* :mod:`.matrix`: ``A = W* φ^{-*} M^{-1} φ^{-1} W``, block sparse with four kinds of blocks;
* :mod:`.general`: the general CFA (sparse solve of ``A F_S = −B F_T``);
* :mod:`.serialized`: the serialized CFA (cyclic reduction on the serial-chain segments);
* :mod:`.forces`: the physical constraint forces from Newton–Euler.

Unlike the recursions of :mod:`algorithms`, the CFA is numeric (an SVD per node for ``W(k)``,
``scipy.sparse`` for ``A``): it takes real floating-point models only.
"""

from .forces import ConstraintForces, constraint_forces
from .general import CFAResult, constraint_force_algorithm, equivalent_control_force
from .matrix import constraint_blocks, constraint_matrix, constraint_pattern
from .operators import B_apply, B_star_apply, C_apply, constraint_operator_apply, phi_inverse_apply, phi_inverse_star_apply
from .serialized import kept_nodes, serialized_constraint_force_algorithm
from .split import ForceSplit, H_plus_apply, H_plus_star_apply, W_apply, W_star_apply, force_split

__all__ = [
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

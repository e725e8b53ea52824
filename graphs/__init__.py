"""Digraph layer: tree digraphs of SKO models on networkx, BWA matrices and their resolvents,
connectivity graphs with loops, numberings and (expanded) parent arrays."""

from .bwa import block_offsets, bwa_matrix, check_weights, nilpotency_index, one_resolvent
from .connectivity import ConnectivityGraph, RegularNumbering
from .errors import (
    DimensionError,
    NonFiniteError,
    NotATreeError,
    NotPositiveDefiniteError,
    RankDeficientError,
    SKOError,
    UnknownNodeError,
)
from .numbering import (
    canonical_renumbering,
    check_parent_array,
    dof_parent_array,
    dof_tree,
    expanded_parent_array,
    is_canonical,
    is_regular,
    parent_array,
    regular_renumbering,
)
from .tree import ROOT, TreeDigraph

__all__ = [
    "ROOT",
    "TreeDigraph",
    "block_offsets",
    "bwa_matrix",
    "check_weights",
    "nilpotency_index",
    "one_resolvent",
    "ConnectivityGraph",
    "RegularNumbering",
    "is_regular",
    "is_canonical",
    "regular_renumbering",
    "canonical_renumbering",
    "parent_array",
    "check_parent_array",
    "expanded_parent_array",
    "dof_parent_array",
    "dof_tree",
    "SKOError",
    "NotATreeError",
    "UnknownNodeError",
    "DimensionError",
    "NotPositiveDefiniteError",
    "RankDeficientError",
    "NonFiniteError",
]

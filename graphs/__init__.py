"""Digraph layer: tree digraphs of SKO models on networkx, BWA matrices and their resolvents."""

from .bwa import block_offsets, bwa_matrix, check_weights, nilpotency_index, one_resolvent
from .errors import (
    DimensionError,
    NonFiniteError,
    NotATreeError,
    NotPositiveDefiniteError,
    RankDeficientError,
    SKOError,
    UnknownNodeError,
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
    "SKOError",
    "NotATreeError",
    "UnknownNodeError",
    "DimensionError",
    "NotPositiveDefiniteError",
    "RankDeficientError",
    "NonFiniteError",
]

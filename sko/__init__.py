"""SKO models ``(H, ℰ_φ, M)``, their dense operators, and the body types built on them."""

from sko.graphs.errors import (
    DimensionError,
    NonFiniteError,
    NotATreeError,
    NotPositiveDefiniteError,
    RankDeficientError,
    SKOError,
    UnknownNodeError,
)

from .model import DenseOperators, SKOModel

__all__ = [
    "SKOModel",
    "DenseOperators",
    "SKOError",
    "NotATreeError",
    "UnknownNodeError",
    "DimensionError",
    "NotPositiveDefiniteError",
    "RankDeficientError",
    "NonFiniteError",
]


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
    "rollout",
    "Rollout",
]


def __getattr__(name: str):
    """``sko.rollout``, ``sko.Rollout`` (:mod:`sko.systems.rollout`), imported on first use so that
    ``import sko`` stays light."""
    if name in ("rollout", "Rollout"):
        import sko.systems

        return getattr(sko.systems, name)
    raise AttributeError(f"module 'sko' has no attribute {name!r}")


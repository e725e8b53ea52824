"""SKO models ``(H, ℰ_φ, M)``, their dense operators, and the body types built on them.

The package is also the facade of the layers above: ``sko.load``,
``sko.rollout``, ``sko.simulate``, ``sko.sweep``, ``sko.sample`` import their modules on first use.
No module of the package imports from ``sko`` itself; each imports the module that defines a name.
"""

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
    "load",
    "rollout",
    "Rollout",
    "simulate",
    "Trajectory",
    "sweep",
    "sample",
]


def __getattr__(name: str):
    """The names of the layers above, imported on first use so that ``import sko`` stays light:
    ``sko.load`` (a model file by its extension, :func:`sko.io.formats.load`), ``sko.rollout``,
    ``sko.Rollout``, ``sko.simulate``, ``sko.Trajectory`` (:mod:`sko.simulation`), ``sko.sweep``,
    ``sko.sample`` (:mod:`sko.scale.sweep`)."""
    if name == "load":
        from sko.io.formats import load as value
    elif name in ("rollout", "Rollout", "simulate", "Trajectory"):
        import sko.simulation

        value = getattr(sko.simulation, name)
    elif name in ("sweep", "sample"):
        from sko.scale import sweep as module

        value = getattr(module, name)
    else:
        raise AttributeError(f"module 'sko' has no attribute {name!r}")
    globals()[name] = value
    return value

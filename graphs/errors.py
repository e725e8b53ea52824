"""The project's exception hierarchy.

Every error the framework raises on bad input derives from :class:`SKOError`, so a caller can
catch the framework's complaints without catching numpy's or Python's. The subclasses also derive
from the matching builtin (``ValueError``, ``KeyError``) so generic handlers keep working.
"""

__all__ = [
    "SKOError",
    "NotATreeError",
    "UnknownNodeError",
    "DimensionError",
    "NotPositiveDefiniteError",
    "RankDeficientError",
    "NonFiniteError",
    "preview",
]


class SKOError(Exception):
    """Root of every error raised by ``graphs``, ``sko`` and ``algorithms``."""


class NotATreeError(SKOError, ValueError):
    """The digraph is not a forest hanging off one root: a directed cycle, a node with two
    parents, a node unreachable from the root (SKO.md §1, paper Section 8.2)."""


class UnknownNodeError(SKOError, KeyError):
    """A node label that is not a body node of the digraph."""

    def __str__(self) -> str:  # KeyError quotes its argument; keep the message readable
        return str(self.args[0]) if self.args else ""


class DimensionError(SKOError, ValueError):
    """An array of the wrong shape: the message names the node and both shapes."""


class NotPositiveDefiniteError(SKOError, ValueError):
    """A matrix that must be symmetric positive definite (or semidefinite) is not (an inertia
    ``M(k)``, a hinge inertia ``D(k)``, a stiffness or damping matrix)."""


class RankDeficientError(SKOError, ValueError):
    """A matrix that must have full rank does not: a joint map ``H(k)`` without full row rank,
    or a singular operational space compliance ``ℬ* Ω ℬ`` (a task Jacobian without full row
    rank, e.g. two task frames on one body)."""


class NonFiniteError(SKOError, ValueError):
    """NaN or infinity in an input array."""


def preview(items, limit: int = 8) -> str:
    """The first ``limit`` items for an error message, with ``...`` only when some are left out."""
    items = list(items)
    shown = ", ".join(map(repr, items[:limit]))
    return f"{shown}, ..." if len(items) > limit else shown

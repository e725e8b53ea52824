"""Exact proofs: the generic recursions on sympy data against the dense operator expressions.

:func:`symbolic_model` builds a small SKO model whose entries are sympy symbols and rationals:
four nodes, two base bodies (a forest), node dimensions 2, 3, 2, 1, hence non-square weights
``φ(a, b)`` (2×3) and ``φ(b, c)`` (3×2); diagonal symbolic inertias; a symbolic joint map. The same recursions of :mod:`algorithms` that run on floats run on these
``dtype=object`` arrays, and every check of :mod:`sko.verify.checks` that is marked symbolic is
then proved exactly: each entry of ``actual − expected`` must simplify to ``0``.

:func:`sko.verify.prove` runs them; :func:`rational_model` turns a float model into an exact one (floats
rounded to small-denominator rationals, symmetry kept) so any small model can be proved too.
"""

from __future__ import annotations

import numpy as np

from sko.graphs import TreeDigraph
from sko.model import SKOModel

__all__ = ["symbolic_model", "rational_model"]


def symbolic_model() -> tuple[SKOModel, np.ndarray, np.ndarray]:
    """A 4-node symbolic SKO model with ``a`` and ``b``.

    Tree: ``a → b → c`` and a second base body ``d``. Weights ``φ(a, b)`` (2×3) and ``φ(b, c)``
    (3×2) mix the symbols ``p``, ``q`` with rationals; ``M(k)`` are diagonal with the positive
    symbols ``m_a … m_d``; ``H(c) = [h, 1]`` is symbolic and the other ``H(k)`` pick one
    coordinate, so every ``D(k)`` is a scalar rational function; ``a`` and ``b`` hold the
    symbols ``a1``, ``b1``. The sizes keep the exact proofs of all checks within a couple of
    minutes: nested quotients from the Riccati recursion grow quickly with more symbols.

    Examples
    --------
    >>> model, a, b = symbolic_model()
    >>> model.node_size, model.dof_size, model.dtype
    (8, 4, dtype('O'))
    """
    import sympy

    p, q, h = sympy.symbols("p q h")
    ma, mb, mc, md = sympy.symbols("m_a m_b m_c m_d", positive=True)
    a1, b1 = sympy.symbols("a1 b1")
    half = sympy.Rational(1, 2)
    obj = lambda rows: np.array(rows, dtype=object)  # noqa: E731
    tree = TreeDigraph.from_parents({"a": None, "b": "a", "c": "b", "d": None})
    phi = {"b": obj([[p, 1, 0], [0, 1, half]]), "c": obj([[1, q], [1, 0], [0, 1]])}
    H = {"a": obj([[1, 0]]), "b": obj([[0, 1, 0]]), "c": obj([[h, 1]]), "d": obj([[1]])}
    M = {"a": obj(np.diag([ma, 1])), "b": obj(np.diag([1, mb, 2])), "c": obj(np.diag([mc, 1])), "d": obj([[md]])}
    a = obj([a1, 0, 0, 0, 0, 0, 0, 1])
    b = obj([0, 0, 0, b1, 0, 0, 0, 0])
    return SKOModel(tree, phi, H, M), a, b


def rational_model(model: SKOModel, max_denominator: int = 16) -> SKOModel:
    """An exact copy of a float model: entries rounded to rationals with denominators at most
    ``max_denominator`` (inertias symmetrised from their upper triangle). The result is a
    different, nearby model on which every identity holds exactly."""
    import sympy

    def exact(A: np.ndarray, symmetric: bool = False) -> np.ndarray:
        out = np.empty(A.shape, dtype=object)
        for idx, v in np.ndenumerate(A):
            out[idx] = sympy.Rational(float(v)).limit_denominator(max_denominator)
        if symmetric:
            upper = np.triu(np.ones(A.shape, dtype=bool))
            out = np.where(upper, out, out.T)
        return out

    return SKOModel(model.tree, {k: exact(W) for k, W in model.phi.items()},
                    {k: exact(Hk) for k, Hk in model.H.items()},
                    {k: exact(Mk, symmetric=True) for k, Mk in model.M.items()})

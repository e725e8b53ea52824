"""The serialized constraint force algorithm (CFA.md, "Serialized CFA"; the paper's §3, Eq. 39–44).

On a serial-chain segment (SKO.md §13, :meth:`sko.graphs.TreeDigraph.segments`) consecutive nodes
are parent and child, so ``A`` restricted to the segment is block tridiagonal (nodes with
``s_k = 0`` drop out; the blocks across them are zero). Only two kinds of rows couple a segment to
the rest of ``A``: a *branching* node (two or more children: child blocks into other segments)
and a *child of a branching node* (parent and sibling blocks). These rows are *kept*.

Block odd–even (cyclic) reduction, round by round: the unknowns at odd positions of a segment's
current list that are not kept are eliminated all at once (they are pairwise non-adjacent, so
each touches only its two neighbours)::

    A(l) −= A(l, e) A(e)^{-1} A(e, l)        r(l) −= A(l, e) A(e)^{-1} r(e)
    A(r) −= A(r, e) A(e)^{-1} A(e, r)        r(r) −= A(r, e) A(e)^{-1} r(e)
    A(l, r) = −A(l, e) A(e)^{-1} A(e, r)      (fill between the new neighbours)

(the paper's Eq. 39–40, with ``E = A(l, e) A(e)^{-1}``, ``G = A(r, e) A(e)^{-1}``). A kept row is
never eliminated, so its blocks outside the segment are never updated (the paper's ``D`` and
``b`` updates vanish). A segment of length ``L`` needs at most ``⌈log₂ L⌉`` rounds. The survivors of
every segment (its kept rows, and one or two more) form one small dense system with the
off-segment blocks of ``A``, which is solved directly (Eq. 43–44); the eliminated unknowns
follow by back-substitution in reverse order::

    F_S(e) = A(e)^{-1} [r(e) − A(e, l) F_S(l) − A(e, r) F_S(r)]

Cost: linear in the number of constraint coordinates for bounded branching, plus the cube of the
gathered system's size.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np
import scipy.linalg

from sko.model import SKOModel

from .general import CFAResult, accelerations, equivalent_control_force
from .matrix import constraint_blocks
from .operators import B_apply
from .split import ForceSplit, stacked_inverses, check_split

__all__ = ["serialized_constraint_force_algorithm", "kept_nodes"]


def kept_nodes(model: SKOModel) -> tuple:
    """Bodies whose rows of ``A`` may couple outside their segment: branching nodes (two or
    more children) and their children."""
    return tuple(model.bodies[i] for i in _kept_indices(model.tree))


def _kept_indices(tree) -> tuple:
    children, parents = tree.children_indices, tree.parent_indices
    return tuple(i for i in range(len(parents))
                 if len(children[i]) >= 2 or (parents[i] >= 0 and len(children[parents[i]]) >= 2))


def serialized_constraint_force_algorithm(model: SKOModel, T, a=None, b=None, split: ForceSplit | None = None) -> CFAResult:
    """Forward dynamics and constraint forces by the serialized CFA (cyclic reduction on the
    serial-chain segments, one gathered dense system, back-substitution).

    Same parameters, result and errors as :func:`constraint_force_algorithm`; ``rounds`` holds
    the number of reduction rounds of each segment (in :meth:`~sko.graphs.TreeDigraph.segments`
    order) and ``gathered`` the bodies of the dense system.

    Examples
    --------
    >>> from sko.graphs import TreeDigraph
    >>> tree = TreeDigraph.from_parents({k: (k - 1 if k else None) for k in range(8)})
    >>> rng = np.random.default_rng(0)
    >>> model = SKOModel(tree, phi={k: rng.standard_normal((3, 3)) for k in range(1, 8)},
    ...                  H={k: [[1.0, 0.0, 0.0]] for k in range(8)}, M={k: 2 * np.eye(3) for k in range(8)})
    >>> T = rng.standard_normal(8)
    >>> r = serialized_constraint_force_algorithm(model, T)
    >>> r.rounds, r.gathered                                 # a chain of 8: ⌈log₂ 8⌉ rounds
    ((3,), (0,))
    >>> from sko.algorithms.cfa import constraint_force_algorithm
    >>> np.allclose(r.qdd, constraint_force_algorithm(model, T).qdd)
    True
    """
    split = check_split(model, split)
    F_T = equivalent_control_force(model, T, a, b)
    F_S = np.zeros(split.constraint_size)
    if not split.constraint_size:
        qdd, f = accelerations(split, F_T, F_S)
        return CFAResult(qdd, F_T, F_S, f, (), ())

    cs = split.constraint_slices
    plan = _plan(model.tree, tuple(W.shape[1] for W in split.W_by_index))
    blocks = constraint_blocks(model, split)
    rhs_all = -B_apply(model, F_T, split)

    diag = {i: blocks[i, i].copy() for i in plan.constrained}
    rhs = {i: rhs_all[cs[i]].copy() for i in plan.constrained}
    couple: dict = {}  # current couplings between neighbours of a segment list
    for i, j in plan.neighbours:
        couple[i, j] = blocks.get((i, j), np.zeros((cs[i].stop - cs[i].start, cs[j].stop - cs[j].start)))
        couple[j, i] = couple[i, j].T
    eliminated: list = []  # (e, left, right, A(e)^{-1}, A(e, l), A(e, r), r(e)) in elimination order
    for stage in plan.stages:  # one round of one segment: its unknowns are independent
        inverses = stacked_inverses([diag[e] for e, _, _ in stage])
        eliminated.extend(_eliminate(e, left, right, Ainv, diag, rhs, couple)
                          for (e, left, right), Ainv in zip(stage, inverses))

    # The gathered dense system: reduced rows of the survivors and A's blocks between segments.
    where = plan.where
    S = np.zeros((plan.gathered_size, plan.gathered_size))
    r = np.zeros(plan.gathered_size)
    for i in plan.survivors:
        S[where[i], where[i]] = diag[i]
        r[where[i]] = rhs[i]
    for i, j in plan.reduced_pairs:
        S[where[i], where[j]] = couple[i, j]
    for i, j in plan.crossing_pairs:
        S[where[i], where[j]] = blocks[i, j]
    x = scipy.linalg.solve(S, r, assume_a="pos") if plan.gathered_size else r
    for i in plan.survivors:
        F_S[cs[i]] = x[where[i]]
    for e, left, right, Ainv, Ael, Aer, re in reversed(eliminated):
        y = re - Ael @ F_S[cs[left]]
        if right is not None:
            y = y - Aer @ F_S[cs[right]]
        F_S[cs[e]] = Ainv @ y

    qdd, f = accelerations(split, F_T, F_S)
    return CFAResult(qdd, F_T, F_S, f, plan.rounds, tuple(model.bodies[i] for i in plan.survivors))


class _Plan(NamedTuple):
    """The index work of the serialized CFA, which depends on the tree and the ``s_k`` only."""

    constrained: tuple  #: indices with ``s_k > 0``
    neighbours: tuple  #: consecutive pairs of each segment's list before reduction
    stages: tuple  #: per segment and round: the ``(e, left, right)`` eliminated at once
    rounds: tuple  #: reduction rounds per segment
    survivors: tuple  #: the unknowns of the gathered dense system
    where: dict  #: survivor → its slice in the gathered system
    gathered_size: int
    reduced_pairs: tuple  #: survivor pairs coupled through a segment's reduction
    crossing_pairs: tuple  #: survivor pairs coupled by blocks of ``A`` between segments


@functools.lru_cache(maxsize=64)
def _plan(tree, s: tuple) -> _Plan:
    """Segments, kept rows, the elimination order and the gathered system's layout (computed once
    per tree and constraint sizes: a simulation repeats them at every state)."""
    kept = set(_kept_indices(tree))
    neighbours, stages, rounds, survivors, segment_of, reduced = [], [], [], [], {}, []
    for n, segment in enumerate(tree.segments()):
        chain = [i for i in map(tree.index, segment) if s[i]]
        segment_of.update((i, n) for i in chain)
        neighbours.extend(zip(chain[:-1], chain[1:]))
        count = 0
        while drop := [q for q in range(1, len(chain), 2) if chain[q] not in kept]:
            count += 1
            stages.append(tuple((chain[q], chain[q - 1], chain[q + 1] if q + 1 < len(chain) else None) for q in drop))
            gone = {chain[q] for q in drop}
            chain = [i for i in chain if i not in gone]
        rounds.append(count)
        survivors.extend(chain)
        reduced.extend(pair for i, j in zip(chain[:-1], chain[1:]) for pair in ((i, j), (j, i)))
    pos = np.concatenate([[0], np.cumsum([s[i] for i in survivors])]).astype(int)
    where = {i: slice(int(a), int(b)) for i, a, b in zip(survivors, pos[:-1], pos[1:])}
    crossing = [(i, j) for i in survivors for j in survivors if segment_of[i] != segment_of[j] and _coupled(tree, i, j)]
    return _Plan(tuple(i for i in range(len(s)) if s[i]), tuple(neighbours), tuple(stages), tuple(rounds),
                 tuple(survivors), where, int(pos[-1]), tuple(reduced), tuple(crossing))


def _coupled(tree, i: int, j: int) -> bool:
    """Whether ``A(i, j)`` may be nonzero for ``i ≠ j`` (parent and child, or siblings:
    :func:`~sko.algorithms.cfa.constraint_pattern`)."""
    parents = tree.parent_indices
    return parents[i] == j or parents[j] == i or (parents[i] == parents[j] >= 0)


def _eliminate(e: int, left: int, right: int | None, Ainv: np.ndarray, diag: dict, rhs: dict, couple: dict) -> tuple:
    """Eliminate unknown ``e`` (``Ainv = A(e)^{-1}``) of a segment list from its neighbours' rows
    (Eq. 39–40); returns what the back-substitution needs."""
    X = couple[left, e] @ Ainv
    diag[left] -= X @ couple[e, left]
    rhs[left] -= X @ rhs[e]
    if right is not None:
        Z = couple[right, e] @ Ainv
        diag[right] -= Z @ couple[e, right]
        rhs[right] -= Z @ rhs[e]
        couple[left, right] = -X @ couple[e, right]
        couple[right, left] = couple[left, right].T
    return e, left, right, Ainv, couple[e, left], couple.get((e, right)), rhs[e]

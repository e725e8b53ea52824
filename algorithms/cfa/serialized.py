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

import numpy as np
import scipy.linalg

from sko.model import SKOModel

from .general import CFAResult, accelerations, equivalent_control_force
from .matrix import constraint_blocks
from .operators import B_apply
from .split import ForceSplit, check_split

__all__ = ["serialized_constraint_force_algorithm", "kept_nodes"]


def kept_nodes(model: SKOModel) -> tuple:
    """Bodies whose rows of ``A`` may couple outside their segment: branching nodes (two or
    more children) and their children."""
    tree = model.tree
    return tuple(k for k in model.bodies if len(tree.children(k)) >= 2
                 or (tree.parent(k) is not None and len(tree.children(tree.parent(k))) >= 2))


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

    tree = model.tree
    cs = split.constraint_slices
    s = [W.shape[1] for W in split.W_by_index]
    blocks = constraint_blocks(model, split)
    rhs_all = -B_apply(model, F_T, split)
    kept = {tree.index(k) for k in kept_nodes(model)}

    diag = {i: blocks[i, i].copy() for i in range(len(s)) if s[i]}
    rhs = {i: rhs_all[cs[i]].copy() for i in diag}
    couple: dict = {}  # current couplings between neighbours of a segment list
    eliminated: list = []  # (e, left, right, A(e)^{-1}, A(e, l), A(e, r), r(e)) in elimination order
    survivors: list = []
    rounds: list = []
    segment_of = {}
    for n, segment in enumerate(tree.segments()):
        chain = [tree.index(k) for k in segment if s[tree.index(k)]]
        segment_of.update((i, n) for i in chain)
        for i, j in zip(chain[:-1], chain[1:]):
            couple[i, j] = blocks.get((i, j), np.zeros((s[i], s[j])))
            couple[j, i] = couple[i, j].T
        count = 0
        while True:
            drop = [q for q in range(1, len(chain), 2) if chain[q] not in kept]
            if not drop:
                break
            count += 1
            for q in drop:
                eliminated.append(_eliminate(chain[q], chain[q - 1], chain[q + 1] if q + 1 < len(chain) else None,
                                             diag, rhs, couple))
            gone = {chain[q] for q in drop}
            chain = [i for i in chain if i not in gone]
        rounds.append(count)
        survivors.extend(chain)

    # The gathered dense system: reduced rows of the survivors and A's blocks between segments.
    pos = np.concatenate([[0], np.cumsum([s[i] for i in survivors])])
    where = {i: slice(int(a), int(b)) for i, a, b in zip(survivors, pos[:-1], pos[1:])}
    S = np.zeros((pos[-1], pos[-1]))
    r = np.zeros(pos[-1])
    for i in survivors:
        S[where[i], where[i]] = diag[i]
        r[where[i]] = rhs[i]
    for (i, j), B in list(couple.items()) + [(ij, B) for ij, B in blocks.items() if segment_of[ij[0]] != segment_of[ij[1]]]:
        if i in where and j in where and i != j:
            S[where[i], where[j]] = B
    x = scipy.linalg.solve(S, r, assume_a="pos") if pos[-1] else r
    for i in survivors:
        F_S[cs[i]] = x[where[i]]
    for e, left, right, Ainv, Ael, Aer, re in reversed(eliminated):
        y = re - Ael @ F_S[cs[left]]
        if right is not None:
            y = y - Aer @ F_S[cs[right]]
        F_S[cs[e]] = Ainv @ y

    qdd, f = accelerations(split, F_T, F_S)
    return CFAResult(qdd, F_T, F_S, f, tuple(rounds), tuple(model.bodies[i] for i in survivors))


def _eliminate(e: int, left: int, right: int | None, diag: dict, rhs: dict, couple: dict) -> tuple:
    """Eliminate unknown ``e`` of a segment list from its neighbours' rows (Eq. 39–40); returns
    what the back-substitution needs."""
    Ainv = np.linalg.inv(diag[e])
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

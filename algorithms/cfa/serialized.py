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
from enum import IntEnum
from typing import NamedTuple

import numpy as np
import scipy.linalg
import scipy.linalg.lapack

from sko.model import SKOModel

from .. import dispatch
from .general import CFAResult, accelerations, equivalent_control_force
from .matrix import block_buffer, block_pairs
from .operators import B_apply
from .split import ForceSplit, check_split

__all__ = ["serialized_constraint_force_algorithm", "kept_nodes", "Step"]

#: The columns of the elimination steps of :func:`cyclic_reduction` and :func:`back_substitution`:
#: sizes ``s``, offsets in the work buffer of ``A(k)`` (``D_``), ``r(k)`` (``R_``), the couplings
#: ``A(x, y)`` (``C_xy``), ``A(e)^{-1}`` (``V_E``), and of ``F_S(k)`` in the constraint vector (``F_``),
#: for the eliminated unknown ``e`` and its neighbours ``l`` and ``r``; ``WIDTH`` columns.
Step = IntEnum("Step", [(name, i) for i, name in enumerate(
    ("S_E", "S_L", "S_R", "D_E", "D_L", "D_R", "R_E", "R_L", "R_R", "C_LE", "C_EL", "C_RE", "C_ER", "C_LR", "C_RL",
     "V_E", "F_E", "F_L", "F_R", "WIDTH"))])


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

    plan = _plan(model.tree, split.constraint_dims)
    _, data = block_buffer(split)
    rhs_all = -B_apply(model, F_T, split)
    work = np.zeros(plan.work_size)  # A(k), r(k), the couplings and A(e)^{-1} (see _plan)
    work[plan.copy_to] = data[plan.copy_from]
    work[plan.rhs_to] = rhs_all[plan.rhs_from]
    dispatch.run("cyclic_reduction", (work.dtype,), cyclic_reduction, work, plan.steps)

    # The gathered dense system: reduced rows of the survivors and A's blocks between segments.
    n = plan.gathered_size
    S = np.zeros(n * n)
    S[plan.S_to_work] = work[plan.S_from_work]
    S[plan.S_to_data] = data[plan.S_from_data]
    x = _solve_positive(S.reshape(n, n), work[plan.r_from]) if n else np.zeros(0)
    F_S[plan.survivor_slots] = x
    dispatch.run("back_substitution", (work.dtype,), back_substitution, work, plan.steps, F_S)

    qdd, f = accelerations(split, F_T, F_S)
    return CFAResult(qdd, F_T, F_S, f, plan.rounds, tuple(model.bodies[i] for i in plan.survivors))


def _block(work: np.ndarray, offset: int, rows: int, cols: int) -> np.ndarray:
    """The row-major block at ``offset`` of the work buffer, as a view."""
    return work[offset: offset + rows * cols].reshape(rows, cols)


def cyclic_reduction(work: np.ndarray, steps: np.ndarray) -> None:
    """Eliminate, step by step, unknown ``e`` from its neighbours ``l`` and (if ``S_R > 0``)
    ``r`` (Eq. 39–40), in place in the work buffer; ``A(e)^{-1}`` is kept for the
    back-substitution."""
    for k in range(steps.shape[0]):
        se, sl, sr = (int(steps[k, c]) for c in (Step.S_E, Step.S_L, Step.S_R))
        Ainv = _block(work, steps[k, Step.V_E], se, se)
        Ainv[:, :] = np.linalg.inv(_block(work, steps[k, Step.D_E], se, se))
        re = work[steps[k, Step.R_E]: steps[k, Step.R_E] + se]
        X = _block(work, steps[k, Step.C_LE], sl, se) @ Ainv  # E = A(l, e) A(e)^{-1}
        _block(work, steps[k, Step.D_L], sl, sl)[:, :] -= X @ _block(work, steps[k, Step.C_EL], se, sl)
        work[steps[k, Step.R_L]: steps[k, Step.R_L] + sl] -= X @ re
        if sr > 0:
            Z = _block(work, steps[k, Step.C_RE], sr, se) @ Ainv  # G = A(r, e) A(e)^{-1}
            Aer = _block(work, steps[k, Step.C_ER], se, sr)
            _block(work, steps[k, Step.D_R], sr, sr)[:, :] -= Z @ Aer
            work[steps[k, Step.R_R]: steps[k, Step.R_R] + sr] -= Z @ re
            Alr = -(X @ Aer)
            _block(work, steps[k, Step.C_LR], sl, sr)[:, :] = Alr
            _block(work, steps[k, Step.C_RL], sr, sl)[:, :] = Alr.T


def back_substitution(work: np.ndarray, steps: np.ndarray, F_S: np.ndarray) -> None:
    """``F_S(e) = A(e)^{-1} [r(e) − A(e, l) F_S(l) − A(e, r) F_S(r)]`` in reverse elimination
    order, in place in ``F_S`` (whose survivors are already solved)."""
    for k in range(steps.shape[0] - 1, -1, -1):
        se, sl, sr = (int(steps[k, c]) for c in (Step.S_E, Step.S_L, Step.S_R))
        fl, fr = steps[k, Step.F_L], steps[k, Step.F_R]
        y = work[steps[k, Step.R_E]: steps[k, Step.R_E] + se]
        y = y - _block(work, steps[k, Step.C_EL], se, sl) @ F_S[fl: fl + sl]
        if sr > 0:
            y = y - _block(work, steps[k, Step.C_ER], se, sr) @ F_S[fr: fr + sr]
        F_S[steps[k, Step.F_E]: steps[k, Step.F_E] + se] = _block(work, steps[k, Step.V_E], se, se) @ y


def _solve_positive(S: np.ndarray, r: np.ndarray) -> np.ndarray:
    """``S⁻¹ r`` for the symmetric positive definite gathered matrix: LAPACK's Cholesky solve
    (upper triangle), the numbers of ``scipy.linalg.solve(S, r, assume_a="pos")`` without its
    checks; a matrix it cannot factor goes to that function for its error."""
    _, x, info = _posv(S, r)
    return x if info == 0 else scipy.linalg.solve(S, r, assume_a="pos")


_posv = scipy.linalg.lapack.get_lapack_funcs("posv", dtype=np.float64)


class _Plan(NamedTuple):
    """The index work of the serialized CFA, which depends on the tree and the ``s_k`` only: the
    order of eliminations, and where every block lives in one work buffer (``x_to`` / ``x_from``
    are element positions of one gather)."""

    rounds: tuple  #: reduction rounds per segment
    survivors: tuple  #: the unknowns of the gathered dense system
    work_size: int
    copy_from: np.ndarray  #: A(k) and the first couplings, from the block buffer of A …
    copy_to: np.ndarray  #: … into the work buffer
    rhs_from: np.ndarray  #: r(k) from the right-hand side …
    rhs_to: np.ndarray  #: … into the work buffer
    steps: np.ndarray  #: the eliminations (columns of :data:`Step`)
    gathered_size: int
    S_from_work: np.ndarray  #: reduced blocks of the gathered matrix (work buffer) …
    S_to_work: np.ndarray  #: … at their flat positions in it
    S_from_data: np.ndarray  #: blocks of A between segments …
    S_to_data: np.ndarray  #: … at their flat positions
    r_from: np.ndarray  #: the gathered right-hand side in the work buffer
    survivor_slots: np.ndarray  #: where the gathered solution goes in F_S


@functools.lru_cache(maxsize=64)
def _plan(tree, s: tuple) -> _Plan:
    """Segments, kept rows, the elimination order and the buffer layout (computed once per tree
    and constraint sizes: a simulation repeats them at every state)."""
    kept = set(_kept_indices(tree))
    pairs, _ = block_pairs(tree, s)
    block_at = {(i, j): o for _, i, j, o in pairs.tolist()}
    cs = np.concatenate([[0], np.cumsum(s)]).astype(int)
    size = 0

    def allocate(n: int) -> int:
        nonlocal size
        size += n
        return size - n

    copy_from, copy_to, rhs_from, rhs_to = [], [], [], []
    D, R, C, V = {}, {}, {}, {}
    for i in (i for i in range(len(s)) if s[i]):
        D[i], R[i] = allocate(s[i] ** 2), allocate(s[i])
        copy_from.append(block_at[i, i] + np.arange(s[i] ** 2))
        copy_to.append(D[i] + np.arange(s[i] ** 2))
        rhs_from.append(cs[i] + np.arange(s[i]))
        rhs_to.append(R[i] + np.arange(s[i]))

    def couple(i: int, j: int) -> None:
        C[i, j] = allocate(s[i] * s[j])
        if (i, j) in block_at:
            copy_from.append(block_at[i, j] + np.arange(s[i] * s[j]))
            copy_to.append(C[i, j] + np.arange(s[i] * s[j]))

    steps, rounds, survivors, segment_of, reduced = [], [], [], {}, []
    for n, segment in enumerate(tree.segments()):
        chain = [i for i in map(tree.index, segment) if s[i]]
        segment_of.update((i, n) for i in chain)
        for i, j in zip(chain[:-1], chain[1:]):
            couple(i, j)
            couple(j, i)
        count = 0
        while drop := [q for q in range(1, len(chain), 2) if chain[q] not in kept]:
            count += 1
            for q in drop:
                e, left = chain[q], chain[q - 1]
                right = chain[q + 1] if q + 1 < len(chain) else None
                V[e] = allocate(s[e] ** 2)
                if right is not None:
                    C[left, right], C[right, left] = allocate(s[left] * s[right]), allocate(s[left] * s[right])
                r = right if right is not None else left  # placeholder offsets when there is no right
                steps.append((s[e], s[left], 0 if right is None else s[right], D[e], D[left], D[r], R[e], R[left], R[r],
                              C[left, e], C[e, left], C[r, e] if right is not None else 0,
                              C[e, r] if right is not None else 0, C.get((left, right), 0), C.get((right, left), 0),
                              V[e], cs[e], cs[left], cs[r]))
            gone = {chain[q] for q in drop}
            chain = [i for i in chain if i not in gone]
        rounds.append(count)
        survivors.extend(chain)
        reduced.extend(pair for i, j in zip(chain[:-1], chain[1:]) for pair in ((i, j), (j, i)))

    pos = dict(zip(survivors, np.concatenate([[0], np.cumsum([s[i] for i in survivors])]).astype(int).tolist()))
    n = sum(s[i] for i in survivors)

    def place(i: int, j: int) -> np.ndarray:  # flat positions of block (i, j) in the gathered matrix
        return ((pos[i] + np.arange(s[i]))[:, None] * n + pos[j] + np.arange(s[j])).ravel()

    S_from_work = [D[i] + np.arange(s[i] ** 2) for i in survivors] + [C[i, j] + np.arange(s[i] * s[j]) for i, j in reduced]
    S_to_work = [place(i, i) for i in survivors] + [place(i, j) for i, j in reduced]
    crossing = [(i, j) for i in survivors for j in survivors if segment_of[i] != segment_of[j] and (i, j) in block_at]
    cat = lambda parts: np.concatenate(parts).astype(np.intp) if parts else np.zeros(0, dtype=np.intp)  # noqa: E731
    return _Plan(tuple(rounds), tuple(survivors), size, cat(copy_from), cat(copy_to), cat(rhs_from), cat(rhs_to),
                 np.array(steps, dtype=np.int64).reshape(-1, Step.WIDTH), n, cat(S_from_work), cat(S_to_work),
                 cat([block_at[i, j] + np.arange(s[i] * s[j]) for i, j in crossing]), cat([place(i, j) for i, j in crossing]),
                 cat([R[i] + np.arange(s[i]) for i in survivors]), cat([cs[i] + np.arange(s[i]) for i in survivors]))

"""Level schedule: the bodies of a model grouped for level-synchronous gathers and scatters.

A gather only needs every body to be processed after its children, a scatter after its parent.
Processing the bodies depth by depth (deepest first for a gather, base first for a scatter)
satisfies both, and all bodies of one depth with the same node and hinge dimensions ``(m_k, n_k)``
can then be processed by one stacked numpy operation. Each body is still visited exactly once,
so the recursions stay O(N); the stacking only removes the per-body interpreter overhead.

A :class:`LevelSchedule` holds, per group, the stacked ``H(k)``, ``M(k)`` and the gather indices
of the group's node and hinge coordinates in stacked vectors, and per *link* (the bodies of a
group whose parents lie in one parent group) the stacked weights ``φ(℘(k), k)`` and the parents'
positions. It is built once per model (O(N)) and cached.

A group of one body (every group of a serial chain) also carries that body as a :class:`Single`:
plain 2-D arrays and slices, for which the recursions run the same formulas body by body, since
a stacked numpy operation on a stack of one costs several times a plain 2-D one.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from sko.model import SKOModel

__all__ = ["Group", "Link", "Single", "LevelSchedule", "level_schedule", "swap"]


def swap(A: np.ndarray) -> np.ndarray:
    """The transpose of each matrix of a stack (no conjugation)."""
    return np.swapaxes(A, -1, -2)


@dataclass(frozen=True)
class Link:
    """Bodies ``child_pos`` of a group whose parents sit at ``parent_pos`` of group ``parent``."""

    child_pos: np.ndarray
    parent: int
    parent_pos: np.ndarray
    W: np.ndarray  #: stacked φ(℘(k), k), shape (c, m_℘, m)
    distinct: bool  #: no two bodies share a parent (so ``x[parent_pos] += y`` needs no ``np.add.at``)

    def add_to_parents(self, stack: np.ndarray, values: np.ndarray) -> None:
        """``stack[parent_pos[j]] += values[j]`` for every ``j``, repeated parents summed."""
        if self.distinct:
            stack[self.parent_pos] += values
        else:
            np.add.at(stack, self.parent_pos, values)


@dataclass(frozen=True)
class Single:
    """The one body of a group as 2-D arrays: its coordinates are ``node`` and ``dof`` of the
    stacked vectors; its parent (if any) sits at ``parent_pos`` of group ``parent``."""

    index: int  #: position of the body in the stacking order
    node: slice
    dof: slice
    H: np.ndarray  #: (n, m)
    W: np.ndarray | None  #: φ(℘(k), k), (m_℘, m); None for a base body
    parent: int
    parent_pos: int


@dataclass(frozen=True)
class Group:
    """Bodies of one depth with equal ``(m_k, n_k)``."""

    depth: int
    index: np.ndarray  #: positions of the bodies in the stacking order
    node: np.ndarray  #: (c, m) positions of their node coordinates in a stacked node vector
    dof: np.ndarray  #: (c, n) positions of their hinge coordinates in a stacked hinge vector
    H: np.ndarray  #: (c, n, m)
    M: np.ndarray  #: (c, m, m)
    links: tuple  #: Links to the parent groups (empty for base bodies)
    single: Single | None  #: the body of a group of one, for the per-body path


class LevelSchedule:
    """The groups of a model by depth; ``levels[d]`` lists the groups of depth ``d``; ``singles``
    gathers the groups of one body by node dimension, for stacked operations outside the recursions."""

    def __init__(self, model: SKOModel):
        tree = model.tree
        depth, parent = tree.depth_indices, tree.parent_indices
        H, M, W = model.H_by_index, model.M_by_index, model.weights_by_index
        keys = {}
        for i in range(len(H)):
            keys.setdefault((depth[i], M[i].shape[0], H[i].shape[0]), []).append(i)
        order = sorted(keys)
        self.group_of = [0] * len(H)
        self.position_of = [0] * len(H)
        for g, key in enumerate(order):
            for pos, i in enumerate(keys[key]):
                self.group_of[i], self.position_of[i] = g, pos
        groups = []
        for key in order:
            members = keys[key]
            links: dict = {}
            for pos, i in enumerate(members):
                if parent[i] >= 0:
                    links.setdefault(self.group_of[parent[i]], []).append((pos, self.position_of[parent[i]], i))
            groups.append(Group(
                depth=key[0],
                index=np.array(members, dtype=np.intp),
                node=np.array([np.arange(model.node_slices[i].start, model.node_slices[i].stop) for i in members],
                              dtype=np.intp).reshape(len(members), key[1]),
                dof=np.array([np.arange(model.dof_slices[i].start, model.dof_slices[i].stop) for i in members],
                             dtype=np.intp).reshape(len(members), key[2]),
                H=np.stack([H[i] for i in members]),
                M=np.stack([M[i] for i in members]),
                links=tuple(
                    Link(child_pos=np.array([c for c, _, _ in rows], dtype=np.intp), parent=pg,
                         parent_pos=np.array([p for _, p, _ in rows], dtype=np.intp),
                         W=np.stack([W[i] for _, _, i in rows]),
                         distinct=len({p for _, p, _ in rows}) == len(rows))
                    for pg, rows in links.items()
                ),
                single=self._single(model, members[0]) if len(members) == 1 else None,
            ))
        self.groups = tuple(groups)
        levels: list[list[int]] = [[] for _ in range(max((g.depth for g in groups), default=-1) + 1)]
        for n, g in enumerate(groups):
            levels[g.depth].append(n)
        self.levels = tuple(tuple(level) for level in levels)
        singles: dict = {}
        for n, g in enumerate(groups):
            if g.single is not None:
                singles.setdefault(g.node.shape[1], []).append(n)
        #: the groups of one body, by node dimension, with the (c, m) positions of their node coordinates
        self.singles = tuple((tuple(gs), np.concatenate([groups[g].node for g in gs])) for gs in singles.values())

    def _single(self, model: SKOModel, i: int) -> Single:
        p = model.tree.parent_indices[i]
        return Single(index=i, node=model.node_slices[i], dof=model.dof_slices[i], H=model.H_by_index[i],
                      W=model.weights_by_index[i], parent=self.group_of[p] if p >= 0 else -1,
                      parent_pos=self.position_of[p] if p >= 0 else -1)


_CACHE: "weakref.WeakKeyDictionary[SKOModel, LevelSchedule]" = weakref.WeakKeyDictionary()


def level_schedule(model: SKOModel) -> LevelSchedule:
    """The (cached) :class:`LevelSchedule` of a model."""
    schedule = _CACHE.get(model)
    if schedule is None:
        schedule = _CACHE[model] = LevelSchedule(model)
    return schedule

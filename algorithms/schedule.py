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
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from sko.model import SKOModel

__all__ = ["Group", "Link", "LevelSchedule", "level_schedule", "swap"]


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
class Group:
    """Bodies of one depth with equal ``(m_k, n_k)``."""

    depth: int
    index: np.ndarray  #: positions of the bodies in the stacking order
    node: np.ndarray  #: (c, m) positions of their node coordinates in a stacked node vector
    dof: np.ndarray  #: (c, n) positions of their hinge coordinates in a stacked hinge vector
    H: np.ndarray  #: (c, n, m)
    M: np.ndarray  #: (c, m, m)
    links: tuple  #: Links to the parent groups (empty for base bodies)


class LevelSchedule:
    """The groups of a model by depth; ``levels[d]`` lists the groups of depth ``d``."""

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
            ))
        self.groups = tuple(groups)
        levels: list[list[int]] = [[] for _ in range(max((g.depth for g in groups), default=-1) + 1)]
        for n, g in enumerate(groups):
            levels[g.depth].append(n)
        self.levels = tuple(tuple(level) for level in levels)


_CACHE: "weakref.WeakKeyDictionary[SKOModel, LevelSchedule]" = weakref.WeakKeyDictionary()


def level_schedule(model: SKOModel) -> LevelSchedule:
    """The (cached) :class:`LevelSchedule` of a model."""
    schedule = _CACHE.get(model)
    if schedule is None:
        schedule = _CACHE[model] = LevelSchedule(model)
    return schedule

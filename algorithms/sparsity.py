"""Sparsity of ``ℰ_φ``, ``φ`` and ``ℳ`` predicted from the serial-chain segments (SKO.md §13,
Section 7).

A serial-chain segment is a maximal path in which every body but the last has one child
(:meth:`sko.graphs.TreeDigraph.segments`); contracting each gives the tree of branches
(:meth:`sko.graphs.TreeDigraph.branch_tree`). Every body of a segment is an ancestor of every body
of its descendant segments, so the block patterns follow from the tree of branches alone:

* ``ℰ_φ``: each segment's own SKO operator (a diagonal segment block, empty for one-body
  segments) plus one connector block ``φ(1_j, n_k)`` per parent/child segment pair (tip body of
  the parent segment to base body of the child segment);
* ``φ``: block ``(S, T)`` is dense when ``S = T`` or ``S`` is an ancestor of ``T``, zero otherwise
  (within a segment, upper triangular along the segment);
* ``ℳ``: dense blocks for related segment pairs, zero blocks for unrelated ones.

Patterns are boolean matrices over blocks: at segment level (labels = segment positions) or at
node level (labels = bodies in stacking order). :func:`compare_mass_matrix_pattern` checks the
prediction against the blocks Algorithm 4.2 actually fills.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sko.graphs import TreeDigraph
from sko.graphs.errors import DimensionError, SKOError
from sko.arrays import checked_array
from sko.model import SKOModel

from .mass_matrix import mass_matrix

__all__ = [
    "BlockPattern",
    "PatternComparison",
    "segment_order",
    "segment_pattern",
    "node_pattern",
    "mass_matrix_pattern",
    "segment_blocks",
    "compare_mass_matrix_pattern",
]


@dataclass(frozen=True)
class BlockPattern:
    """Boolean block patterns of ``ℰ_φ``, ``φ`` and ``ℳ``: entry ``(r, c)`` is True where the block
    of ``labels[r]``, ``labels[c]`` may be nonzero."""

    labels: tuple
    E: np.ndarray
    phi: np.ndarray
    mass_matrix: np.ndarray


@dataclass(frozen=True)
class PatternComparison:
    """Predicted vs computed block pattern of ``ℳ`` (node or segment level).

    ``unexpected`` lists the blocks that are nonzero although predicted zero (a bug: structural
    zeros must be exact); ``missing`` the blocks predicted nonzero that came out zero (possible
    only through cancellation, e.g. with singular weights).
    """

    predicted: np.ndarray
    computed: np.ndarray
    labels: tuple
    unexpected: tuple
    missing: tuple

    @property
    def matches(self) -> bool:
        return not self.unexpected and not self.missing


def segment_order(tree: TreeDigraph) -> tuple:
    """The bodies with every segment contiguous (segments in a scatter order, each base → tip),
    the numbering under which the segment blocks of §13 are contiguous."""
    return tuple(k for seg in tree.segments() for k in seg)


def segment_pattern(tree: TreeDigraph) -> BlockPattern:
    """Block pattern at segment level, from the tree of branches."""
    segs = tree.segments()
    branches = tree.branch_tree()
    n = len(segs)
    E = np.zeros((n, n), dtype=bool)
    phi = np.zeros((n, n), dtype=bool)
    M = np.zeros((n, n), dtype=bool)
    for s in range(n):
        E[s, s] = len(segs[s]) > 1  # the segment's own SKO operator
        p = branches.parent(s)
        if p is not None:
            E[p, s] = True  # connector φ(tip of p, base of s)
        for t in range(n):
            phi[s, t] = s == t or branches.is_ancestor(s, t)
            M[s, t] = branches.related(s, t)
    return BlockPattern(labels=tuple(range(n)), E=E, phi=phi, mass_matrix=M)


def node_pattern(tree: TreeDigraph) -> BlockPattern:
    """Block pattern at node level (bodies in stacking order), expanded from :func:`segment_pattern`."""
    seg = segment_pattern(tree)
    segs = tree.segments()
    sid = [tree.segment_of(k) for k in tree.bodies]
    pos = [segs[s].index(k) for s, k in zip(sid, tree.bodies)]
    last = [len(segs[s]) - 1 for s in sid]
    S = np.array(sid)
    P = np.array(pos)
    same = S[:, None] == S[None, :]
    E = np.where(same, P[None, :] == P[:, None] + 1,
                 seg.E[S[:, None], S[None, :]] & (P[:, None] == np.array(last)[:, None]) & (P[None, :] == 0))
    phi = np.where(same, P[:, None] <= P[None, :], seg.phi[S[:, None], S[None, :]])
    M = seg.mass_matrix[S[:, None], S[None, :]]
    return BlockPattern(labels=tree.bodies, E=E, phi=phi, mass_matrix=M)


def mass_matrix_pattern(model: SKOModel, M: np.ndarray | None = None) -> np.ndarray:
    """Node-level pattern of the ``ℳ`` of Algorithm 4.2 (or of a given ``M``): True where a block
    has a nonzero entry.

    Raises
    ------
    DimensionError
        A given ``M`` that is not ``Σ n_k × Σ n_k``.
    """
    if M is None:
        M = mass_matrix(model)
    else:
        M = checked_array(M, 2, "the matrix M", finite=False)
        if M.shape != (model.dof_size, model.dof_size):
            raise DimensionError(f"the matrix M has shape {M.shape}, expected ({model.dof_size}, {model.dof_size}) for this model")
    ds = model.dof_slices
    return np.array([[bool(np.any(M[a, b] != 0)) for b in ds] for a in ds], dtype=bool)


def segment_blocks(tree: TreeDigraph, pattern: np.ndarray) -> np.ndarray:
    """A node-level pattern aggregated over segments: True where any node block is.
    ``pattern`` is ``(N, N)`` for the ``N`` bodies of ``tree`` (stacking order)."""
    pattern = checked_array(pattern, 2, "segment_blocks: pattern", finite=False)
    if pattern.shape != (len(tree), len(tree)):
        raise DimensionError(f"segment_blocks: pattern has shape {pattern.shape}, expected one row and column per "
                             f"body of the tree: ({len(tree)}, {len(tree)})")
    sid = np.array([tree.segment_of(k) for k in tree.bodies])
    n = len(tree.segments())
    out = np.zeros((n, n), dtype=bool)
    rows, cols = np.nonzero(pattern)
    out[sid[rows], sid[cols]] = True
    return out


def compare_mass_matrix_pattern(model: SKOModel, level: str = "node") -> PatternComparison:
    """Compare the predicted pattern of ``ℳ`` with the one Algorithm 4.2 produces.

    Parameters
    ----------
    model : SKOModel
    level : ``"node"`` or ``"segment"``

    Examples
    --------
    >>> import numpy as np
    >>> from sko.graphs import TreeDigraph
    >>> tree = TreeDigraph.from_parents({0: None, 1: 0, 2: 1, 3: 1})
    >>> model = SKOModel(tree, phi={k: [[1.0]] for k in (1, 2, 3)}, H={k: [[1.0]] for k in tree.bodies},
    ...                  M={k: [[1.0]] for k in tree.bodies})
    >>> cmp = compare_mass_matrix_pattern(model)
    >>> cmp.matches, bool(cmp.predicted[2, 3]), bool(cmp.computed[2, 3])   # 2, 3 unrelated
    (True, False, False)
    """
    tree = model.tree
    computed = mass_matrix_pattern(model)
    predicted = node_pattern(tree).mass_matrix
    labels = tree.bodies
    if level == "segment":
        computed = segment_blocks(tree, computed)
        predicted = segment_pattern(tree).mass_matrix
        labels = tuple(range(len(tree.segments())))
    elif level != "node":
        raise SKOError(f"level must be 'node' or 'segment', got {level!r}")
    unexpected = tuple((labels[r], labels[c]) for r, c in zip(*np.nonzero(computed & ~predicted)))
    missing = tuple((labels[r], labels[c]) for r, c in zip(*np.nonzero(predicted & ~computed)))
    return PatternComparison(predicted, computed, labels, unexpected, missing)

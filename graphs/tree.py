"""Tree digraphs of SKO models (SKO.md §1).

Conventions
-----------
* The digraph has one inertial *root* node and the *body* nodes. Arcs run parent → child.
  The root is not a body: it has no stacked entry and no recursion step runs on it.
* Every body has exactly one parent (possibly the root). Bodies whose parent is the root are
  *base bodies*; several of them make a forest of independent trees.
* Body labels are any hashable objects except ``None`` (which stands for the root in
  :meth:`TreeDigraph.from_parents`). The *stacking order* of the bodies is the order in which
  they are given; nothing depends on it being canonical or regular.
* ``depth(k)`` is the number of strict body ancestors of ``k`` (base bodies have depth 0), so a
  BWA matrix of the tree is nilpotent of index ``height + 1`` for generic weights.
* Recursions iterate in a *gather order* (every node after all its children, tips → base) or a
  *scatter order* (every node after its parent, base → tips).

All derived data (parent indices, children, orders, depths, subtree intervals) is computed once,
in O(N), when the tree is built; queries are O(1) or O(path length).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from functools import cached_property

import networkx as nx

from .errors import NotATreeError, UnknownNodeError

__all__ = ["ROOT", "TreeDigraph"]


class _Root:
    """The inertial root node of every :class:`TreeDigraph` built from a parent mapping."""

    _instance: "_Root | None" = None

    def __new__(cls) -> "_Root":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ROOT"

    def __reduce__(self):
        return (_Root, ())


ROOT = _Root()


class TreeDigraph:
    """A forest of body nodes hanging off one inertial root, validated once.

    Build it with :meth:`from_parents` or :meth:`from_networkx`.

    Examples
    --------
    >>> tree = TreeDigraph.from_parents({"b1": None, "b2": "b1", "b3": "b1"})
    >>> tree.bodies
    ('b1', 'b2', 'b3')
    >>> tree.children("b1")
    ('b2', 'b3')
    >>> tree.gather_order()[-1], tree.scatter_order()[0]
    ('b1', 'b1')
    >>> tree.related("b2", "b3"), tree.nearest_common_ancestor("b2", "b3")
    (False, 'b1')
    """

    def __init__(self, graph: nx.DiGraph, root: Hashable):
        _validate(graph, root)
        self._graph = nx.freeze(graph.copy())
        self._root = root
        self._bodies: tuple = tuple(n for n in graph.nodes if n != root)
        self._index = {k: i for i, k in enumerate(self._bodies)}
        N = len(self._bodies)
        parent = [-1] * N
        children: list[list[int]] = [[] for _ in range(N)]
        base: list[int] = []
        for i, k in enumerate(self._bodies):
            (p,) = graph.predecessors(k)
            if p == root:
                base.append(i)
            else:
                parent[i] = self._index[p]
        for i, p in enumerate(parent):  # children in stacking order
            if p >= 0:
                children[p].append(i)
        # Depth-first preorder from the root: parents before descendants (a scatter order).
        preorder: list[int] = []
        depth = [0] * N
        stack = list(reversed(base))
        while stack:
            i = stack.pop()
            preorder.append(i)
            for c in reversed(children[i]):
                depth[c] = depth[i] + 1
                stack.append(c)
        entry = [0] * N
        for position, i in enumerate(preorder):
            entry[i] = position
        size = [1] * N
        for i in reversed(preorder):
            if parent[i] >= 0:
                size[parent[i]] += size[i]
        self._parent = tuple(parent)
        self._children = tuple(tuple(c) for c in children)
        self._base = tuple(base)
        self._scatter = tuple(preorder)
        self._gather = tuple(reversed(preorder))
        self._depth = tuple(depth)
        self._entry = tuple(entry)
        self._size = tuple(size)

    # ----------------------------------------------------------------- construction
    @classmethod
    def from_parents(cls, parents: Mapping[Hashable, Hashable | None]) -> "TreeDigraph":
        """Build from a mapping ``body -> parent`` (``None`` for the root).

        Raises
        ------
        NotATreeError
            If a parent is not itself a body, a label is ``None``, or the parents form a cycle.
        """
        if not isinstance(parents, Mapping):
            raise NotATreeError(f"parents must be a mapping body -> parent, got {type(parents).__name__}")
        graph = nx.DiGraph()
        graph.add_node(ROOT)
        for k in parents:
            if k is None or k is ROOT:
                raise NotATreeError(f"{k!r} cannot label a body: it stands for the root")
            graph.add_node(k)
        for k, p in parents.items():
            if not _hashable(p):
                raise NotATreeError(f"body {k!r} has parent {p!r}, which cannot label a body (labels must be hashable)")
            if p is not None and p not in parents:
                raise NotATreeError(f"body {k!r} has parent {p!r}, which is not a body of the mapping")
            graph.add_edge(ROOT if p is None else p, k)
        return cls(graph, ROOT)

    @classmethod
    def from_networkx(cls, graph: nx.DiGraph, root: Hashable) -> "TreeDigraph":
        """Build from a networkx digraph with arcs parent → child and the given root node.

        The bodies are stacked in ``graph.nodes`` order. The graph is copied, never modified.

        Raises
        ------
        NotATreeError
            On directed cycles, nodes with two parents, parallel arcs, or nodes the root does
            not reach; the message names the nodes involved.
        """
        if not isinstance(graph, nx.DiGraph):
            raise NotATreeError(f"expected a networkx.DiGraph, got {type(graph).__name__}")
        if graph.is_multigraph():
            doubled = [(u, v) for u, v, key in graph.edges(keys=True) if key != 0]
            if doubled:
                raise NotATreeError(f"parallel arcs {doubled}: a body has one arc from its parent")
            graph = nx.DiGraph(graph)
        return cls(graph, root)

    # ----------------------------------------------------------------- label queries
    @property
    def graph(self) -> nx.DiGraph:
        """The (frozen) networkx digraph, root included, arcs parent → child."""
        return self._graph

    @property
    def root(self) -> Hashable:
        return self._root

    @property
    def bodies(self) -> tuple:
        """Body nodes in stacking order."""
        return self._bodies

    def __len__(self) -> int:
        return len(self._bodies)

    def __contains__(self, k: object) -> bool:
        try:
            return k in self._index
        except TypeError:  # an unhashable label is not a node
            return False

    def __repr__(self) -> str:
        return f"TreeDigraph({len(self)} bodies, {len(self._base)} base, height {self.height})"

    def index(self, k: Hashable) -> int:
        """Position of body ``k`` in the stacking order."""
        try:
            return self._index[k]
        except (KeyError, TypeError):
            raise UnknownNodeError(f"{k!r} is not a body node of this tree") from None

    def parent(self, k: Hashable) -> Hashable | None:
        """The parent body of ``k``, or ``None`` for a base body."""
        p = self._parent[self.index(k)]
        return None if p < 0 else self._bodies[p]

    def children(self, k: Hashable) -> tuple:
        return tuple(self._bodies[c] for c in self._children[self.index(k)])

    def base_bodies(self) -> tuple:
        return tuple(self._bodies[i] for i in self._base)

    def ancestors(self, k: Hashable) -> tuple:
        """Strict body ancestors of ``k``, nearest first (parent, grandparent, …, base)."""
        return tuple(self._bodies[i] for i in self._ancestor_indices(self.index(k)))

    def support(self, k: Hashable) -> tuple:
        """Featherstone's support set κ(k): ``k`` and its body ancestors, base first."""
        return tuple(reversed((k,) + self.ancestors(k)))

    def descendants(self, k: Hashable) -> tuple:
        """Strict descendants of ``k``, in a scatter order."""
        i = self.index(k)
        start = self._entry[i]
        return tuple(self._bodies[j] for j in self._scatter[start + 1 : start + self._size[i]])

    def subtree(self, k: Hashable) -> tuple:
        """``k`` and its descendants (Featherstone's ν(k)), in a scatter order."""
        return (k,) + self.descendants(k)

    def is_ancestor(self, i: Hashable, j: Hashable) -> bool:
        """True when ``i`` is a strict ancestor of ``j``."""
        return self._is_ancestor(self.index(i), self.index(j))

    def related(self, i: Hashable, j: Hashable) -> bool:
        """True when ``i == j`` or one is an ancestor of the other."""
        a, b = self.index(i), self.index(j)
        return a == b or self._is_ancestor(a, b) or self._is_ancestor(b, a)

    def depth(self, k: Hashable) -> int:
        """Number of strict body ancestors of ``k`` (0 for base bodies)."""
        return self._depth[self.index(k)]

    @property
    def height(self) -> int:
        """The largest depth (0 for a tree of base bodies only; -1 if there are no bodies)."""
        return max(self._depth, default=-1)

    def nilpotency_index(self) -> int:
        """Smallest ``d`` with ``E^d = 0`` for the adjacency matrix of the bodies: ``height + 1``."""
        return self.height + 1

    def nearest_common_ancestor(self, i: Hashable, j: Hashable) -> Hashable | None:
        """The deepest body that is ``i`` or an ancestor of it and ``j`` or an ancestor of it;
        ``None`` when ``i`` and ``j`` are in different trees of the forest."""
        a, b = self.index(i), self.index(j)
        while a != b and a >= 0 and b >= 0:
            if self._depth[a] >= self._depth[b]:
                a = self._parent[a]
            else:
                b = self._parent[b]
        return self._bodies[a] if a == b and a >= 0 else None

    def path(self, i: Hashable, j: Hashable) -> tuple:
        """The bodies from ``i`` down to its descendant ``j`` (both included).

        Raises
        ------
        UnknownNodeError
            If ``i`` is neither ``j`` nor an ancestor of ``j``.
        """
        a, b = self.index(i), self.index(j)
        if a != b and not self._is_ancestor(a, b):
            raise UnknownNodeError(f"{i!r} is not an ancestor of {j!r}: no path from {i!r} to {j!r}")
        chain = [b]
        while chain[-1] != a:
            chain.append(self._parent[chain[-1]])
        return tuple(self._bodies[c] for c in reversed(chain))

    def gather_order(self) -> tuple:
        """Every body after all of its children (tips → base)."""
        return tuple(self._bodies[i] for i in self._gather)

    def scatter_order(self) -> tuple:
        """Every body after its parent (base → tips)."""
        return tuple(self._bodies[i] for i in self._scatter)

    def parent_mapping(self) -> dict:
        """``{body: parent or None}`` in stacking order (rebuilds the tree with :meth:`from_parents`)."""
        return {k: self.parent(k) for k in self._bodies}

    # ----------------------------------------------------------------- segments
    def segments(self) -> tuple[tuple, ...]:
        """Serial-chain segments (SKO.md §13), each base → tip, in a scatter order.

        A segment is a maximal path in which every node but the last has exactly one child.
        """
        return tuple(tuple(self._bodies[i] for i in seg) for seg in self._segment_indices)

    def segment_of(self, k: Hashable) -> int:
        """Position in :meth:`segments` of the segment that holds ``k``."""
        return self._segment_id[self.index(k)]

    def branch_tree(self) -> "TreeDigraph":
        """The tree of branches: one node per segment (labelled by its position in
        :meth:`segments`), parent = the segment holding the parent of its first body."""
        parents = {}
        for s, seg in enumerate(self._segment_indices):
            p = self._parent[seg[0]]
            parents[s] = None if p < 0 else self._segment_id[p]
        return TreeDigraph.from_parents(parents)

    @cached_property
    def _segment_indices(self) -> tuple[tuple[int, ...], ...]:
        segments = []
        for i in self._scatter:
            p = self._parent[i]
            if p >= 0 and len(self._children[p]) == 1:
                continue  # i continues its parent's segment
            seg = [i]
            while len(self._children[seg[-1]]) == 1:
                seg.append(self._children[seg[-1]][0])
            segments.append(tuple(seg))
        return tuple(segments)

    @cached_property
    def _segment_id(self) -> tuple[int, ...]:
        ids = [0] * len(self)
        for s, seg in enumerate(self._segment_indices):
            for i in seg:
                ids[i] = s
        return tuple(ids)

    # ----------------------------------------------------------------- index level
    # Algorithms work on positions in the stacking order; these are their views of the tree.
    @property
    def parent_indices(self) -> tuple[int, ...]:
        """Position of each body's parent, -1 for base bodies."""
        return self._parent

    @property
    def children_indices(self) -> tuple[tuple[int, ...], ...]:
        """Positions of each body's children, in stacking order."""
        return self._children

    @property
    def gather_indices(self) -> tuple[int, ...]:
        return self._gather

    @property
    def scatter_indices(self) -> tuple[int, ...]:
        return self._scatter

    @property
    def depth_indices(self) -> tuple[int, ...]:
        return self._depth

    def _is_ancestor(self, a: int, b: int) -> bool:
        return self._entry[a] < self._entry[b] < self._entry[a] + self._size[a]

    def _ancestor_indices(self, i: int) -> list[int]:
        chain = []
        p = self._parent[i]
        while p >= 0:
            chain.append(p)
            p = self._parent[p]
        return chain


def _validate(graph: nx.DiGraph, root: Hashable) -> None:
    """Reject anything that is not a forest hanging off ``root`` (SKO.md §1, paper §8.2)."""
    if root not in graph:
        raise NotATreeError(f"the root {root!r} is not a node of the digraph")
    if graph.in_degree(root) != 0:
        raise NotATreeError(f"the root {root!r} has parents {sorted(map(repr, graph.predecessors(root)))}")
    multi = {k: list(graph.predecessors(k)) for k, d in graph.in_degree() if d > 1}
    if multi:
        detail = "; ".join(f"{k!r} has parents {ps!r}" for k, ps in multi.items())
        raise NotATreeError(f"nodes with two or more parents (a multiply-connected DAG has no independent hinge coordinates): {detail}")
    orphans = [k for k, d in graph.in_degree() if d == 0 and k != root]
    if orphans:
        raise NotATreeError(f"nodes {orphans!r} have no parent and are not the root {root!r}")
    reached = nx.descendants(graph, root)
    if len(reached) + 1 < graph.number_of_nodes():
        rest = graph.subgraph(n for n in graph if n != root and n not in reached)
        cycle = [u for u, _ in nx.find_cycle(rest)]
        raise NotATreeError(f"directed cycle {cycle!r}: its BWA matrix is not nilpotent and has no 1-resolvent")


def _hashable(x) -> bool:
    try:
        hash(x)
    except TypeError:
        return False
    return True

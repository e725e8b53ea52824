"""Connectivity graphs of rigid-body systems with kinematic loops (Featherstone, RBDA §4.1).

Conventions
-----------
* A *connectivity graph* is an undirected multigraph: nodes are bodies, edges are joints. One
  node is the fixed *base* body; the graph must be connected. Two bodies may be joined by several
  joints (parallel edges); a joint never joins a body to itself.
* Every joint has a label and an orientation (its *polarity*): it connects its *predecessor*
  body to its *successor* body. A joint's velocity is the successor's relative to the
  predecessor, its force the one the predecessor exerts on the successor (§4.1.3).
* A *spanning tree* ``G_t`` is a set of ``N_B`` joints joining all ``N_B + 1`` bodies without a
  cycle; its joints are the *tree joints*, the other ``N_L = N_J − N_B`` joints are the
  *chords* or *loop joints*, one per independent kinematic loop (Eq. 4.1).
* A *regular numbering* (§4.1.2) numbers the base 0 and the moving bodies ``1 … N_B`` so that
  every body is numbered after its parent in the spanning tree; tree joint ``i`` joins body
  ``i`` to its parent ``λ(i)`` (so ``λ(i) = min(p(i), s(i)) < i``, Eq. 4.2), and the loop joints
  are numbered ``N_B + 1 … N_J``.
* Featherstone's arrays are 1-based and written as tuples: ``p[i − 1] = p(i)`` for joints
  ``i = 1 … N_J`` and ``λ[i − 1] = λ(i)`` for bodies ``i = 1 … N_B``, with 0 the base. The sets
  ``κ(i)`` (support: the tree joints between body ``i`` and the base), ``μ(i)`` (children) and
  ``ν(i)`` (subtree, ``i`` included) are ascending tuples of numbers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from functools import cached_property
from itertools import chain
from numbers import Integral

import networkx as nx

from .errors import NotATreeError, UnknownNodeError
from .tree import TreeDigraph, _hashable

__all__ = ["ConnectivityGraph", "RegularNumbering"]


class ConnectivityGraph:
    """Bodies and joints of a rigid-body system, loops allowed (RBDA §4.1).

    Parameters
    ----------
    joints
        ``{joint label: (predecessor body, successor body)}``. The mapping's order is the
        order of preference when a spanning tree is chosen and the order of the loop joints.
    base
        The label of the fixed base body.
    bodies
        The moving bodies, in the order of preference for a regular numbering. By default the
        bodies met in ``joints``, in order of first appearance. When given, every joint must
        refer to these bodies (or the base).

    Raises
    ------
    NotATreeError
        A joint that is not a pair of bodies, a joint joining a body to itself, a body labelled
        ``None``, or a graph that is not connected (the message names the unreachable bodies).
    UnknownNodeError
        A joint referring to a body that is not in ``bodies``.

    Examples
    --------
    The crank-slider linkage of RBDA Fig. 4.1: three moving bodies, four joints, one loop.

    >>> G = ConnectivityGraph({"J1": (0, "B1"), "J2": ("B1", "B2"), "J3": ("B2", "B3"),
    ...                        "J4": (0, "B3")})
    >>> G.num_bodies, G.num_joints, G.num_loops
    (3, 4, 1)
    >>> G.spanning_tree(), G.chords()
    (('J1', 'J2', 'J3'), ('J4',))
    >>> numbering = G.regular_numbering()
    >>> numbering.parent_array, numbering.predecessor_array, numbering.successor_array
    ((0, 1, 2), (0, 1, 2, 0), (1, 2, 3, 3))
    >>> G.regular_numbering(tree_joints=["J1", "J2", "J4"]).parent_array
    (0, 1, 0)
    """

    def __init__(self, joints: Mapping[Hashable, tuple[Hashable, Hashable]], base: Hashable = 0,
                 bodies: Iterable[Hashable] | None = None):
        if not isinstance(joints, Mapping):
            raise NotATreeError(f"joints must be a mapping label -> (predecessor, successor), got {type(joints).__name__}")
        if base is None:
            raise NotATreeError("the base body cannot be labelled None")
        ends: dict = {}
        for label, pair in joints.items():
            if not isinstance(pair, Sequence) or isinstance(pair, str) or len(pair) != 2:
                raise NotATreeError(f"joint {label!r} must be a pair (predecessor, successor), got {pair!r}")
            p, s = pair
            if not (_hashable(p) and _hashable(s)):
                raise NotATreeError(f"joint {label!r} joins {p!r} and {s!r}: body labels must be hashable")
            if p is None or s is None:
                raise NotATreeError(f"joint {label!r} refers to a body labelled None")
            if p == s:
                raise NotATreeError(f"joint {label!r} joins body {p!r} to itself")
            ends[label] = (p, s)
        if bodies is None:
            met = dict.fromkeys(chain.from_iterable(ends.values()))
            met.pop(base, None)
            moving = tuple(met)
        else:
            moving = tuple(dict.fromkeys(b for b in bodies if b != base))
            if None in moving:
                raise NotATreeError("a body cannot be labelled None")
            known = set(moving) | {base}
            for label, (p, s) in ends.items():
                for b in (p, s):
                    if b not in known:
                        raise UnknownNodeError(f"joint {label!r} refers to body {b!r}, which is not a body of the system")
        graph = nx.MultiGraph()
        graph.add_node(base)
        graph.add_nodes_from(moving)
        for position, (label, (p, s)) in enumerate(ends.items()):
            graph.add_edge(p, s, key=label, predecessor=p, successor=s, position=position)
        reached = nx.node_connected_component(graph, base)
        unreachable = [b for b in moving if b not in reached]
        if unreachable:
            raise NotATreeError(f"the connectivity graph is not connected: bodies {unreachable!r} have no path to the base {base!r}")
        self._graph = nx.freeze(graph)
        self._base = base
        self._bodies = moving
        self._ends = ends
        self._position = {b: i for i, b in enumerate(moving)}

    @classmethod
    def from_arrays(cls, predecessors: Sequence[int], successors: Sequence[int]) -> "ConnectivityGraph":
        """Build from Featherstone's arrays ``p`` and ``s`` (RBDA §4.1.4).

        Joints are labelled ``1 … N_J`` (``p[i − 1] = p(i)``), bodies by their numbers, base 0;
        the moving bodies are preferred in ascending order, so a regularly numbered input keeps
        its numbering.

        >>> ConnectivityGraph.from_arrays([0, 1, 2, 0], [1, 2, 3, 3]).regular_numbering().parent_array
        (0, 1, 2)
        """
        if len(predecessors) != len(successors):
            raise NotATreeError(f"p has {len(predecessors)} entries but s has {len(successors)}: one each per joint")
        for name, array in (("p", predecessors), ("s", successors)):
            for i, b in enumerate(array, start=1):
                if not isinstance(b, Integral) or isinstance(b, bool) or b < 0:
                    raise NotATreeError(f"{name}({i}) = {b!r} is not a body number (a non-negative integer, base 0)")
        joints = {i: (p, s) for i, (p, s) in enumerate(zip(predecessors, successors), start=1)}
        moving = sorted(set(chain(predecessors, successors)) - {0})
        return cls(joints, base=0, bodies=moving)

    # ----------------------------------------------------------------- queries
    @property
    def graph(self) -> nx.MultiGraph:
        """The (frozen) undirected multigraph; edge keys are joint labels, edge attributes
        ``predecessor`` and ``successor``."""
        return self._graph

    @property
    def base(self) -> Hashable:
        return self._base

    @property
    def bodies(self) -> tuple:
        """The moving bodies (the base excluded), in order of preference."""
        return self._bodies

    @property
    def joints(self) -> tuple:
        """Joint labels in order of preference."""
        return tuple(self._ends)

    @property
    def num_bodies(self) -> int:
        """``N_B``, the number of moving bodies."""
        return len(self._bodies)

    @property
    def num_joints(self) -> int:
        """``N_J``."""
        return len(self._ends)

    @property
    def num_loops(self) -> int:
        """``N_L = N_J − N_B``, the number of independent kinematic loops (Eq. 4.1)."""
        return self.num_joints - self.num_bodies

    def predecessor(self, joint: Hashable) -> Hashable:
        return self._joint(joint)[0]

    def successor(self, joint: Hashable) -> Hashable:
        return self._joint(joint)[1]

    def __repr__(self) -> str:
        return f"ConnectivityGraph({self.num_bodies} bodies, {self.num_joints} joints, {self.num_loops} loops)"

    # ----------------------------------------------------------------- spanning trees
    def spanning_tree(self, tree_joints: Iterable[Hashable] | None = None) -> tuple:
        """The tree joints of a spanning tree, in joint order.

        Without ``tree_joints``, the earliest joints in the joint order that close no cycle
        (Kruskal's algorithm on joint positions). With ``tree_joints``, checks that they form a
        spanning tree and returns them.

        Raises
        ------
        UnknownNodeError
            A label that is not a joint.
        NotATreeError
            Repeated joints, a number other than ``N_B`` of them, or joints forming a cycle
            (the message names the cycle).
        """
        order = {label: i for i, label in enumerate(self._ends)}
        if tree_joints is None:
            edges = nx.minimum_spanning_edges(self._graph, algorithm="kruskal", weight="position", keys=True, data=False)
            return tuple(sorted((key for _, _, key in edges), key=order.__getitem__))
        chosen = list(tree_joints)
        for label in chosen:
            self._joint(label)
        repeated = sorted((label for label, c in Counter(chosen).items() if c > 1), key=order.__getitem__)
        if repeated:
            raise NotATreeError(f"tree joints {repeated!r} are listed more than once")
        if len(chosen) != self.num_bodies:
            raise NotATreeError(f"a spanning tree has N_B = {self.num_bodies} joints, got {len(chosen)}: {chosen!r}")
        sub = nx.MultiGraph()
        sub.add_nodes_from(self._graph)
        sub.add_edges_from((*self._ends[label], label) for label in chosen)
        try:
            cycle = nx.find_cycle(sub)
        except nx.NetworkXNoCycle:
            return tuple(sorted(chosen, key=order.__getitem__))
        raise NotATreeError(f"tree joints {[key for _, _, key in cycle]!r} form a cycle, so {chosen!r} is not a spanning tree")

    def chords(self, tree_joints: Iterable[Hashable] | None = None) -> tuple:
        """The loop joints (chords) left out of a spanning tree, in joint order."""
        tree = set(self.spanning_tree(tree_joints))
        return tuple(label for label in self._ends if label not in tree)

    def spanning_trees(self) -> Iterator[tuple]:
        """Every spanning tree (as its tree joints, in joint order), each once."""
        order = {label: i for i, label in enumerate(self._ends)}
        for tree in nx.SpanningTreeIterator(self._graph, weight="position"):
            yield tuple(sorted((key for _, _, key in tree.edges(keys=True)), key=order.__getitem__))

    # ----------------------------------------------------------------- numbering
    def regular_numbering(self, tree_joints: Iterable[Hashable] | None = None,
                          order: Sequence[Hashable] | None = None) -> "RegularNumbering":
        """Number bodies and joints regularly (RBDA §4.1.2).

        Parameters
        ----------
        tree_joints
            The spanning tree (see :meth:`spanning_tree`); chosen when omitted.
        order
            The moving bodies in the order they are to be numbered ``1 … N_B``; it must put
            every body after its parent in the spanning tree. By default the regular numbering
            closest to :attr:`bodies` (whenever a body may be numbered next, the earliest in
            :attr:`bodies` is), so bodies listed in a regular order keep it.

        Raises
        ------
        NotATreeError
            An invalid spanning tree, or an ``order`` that is not a permutation of the moving
            bodies or numbers a body before its parent (the message names both).
        """
        tree = self.spanning_tree(tree_joints)
        parent = self._tree_parents(tree)
        if order is None:
            order = tuple(nx.lexicographical_topological_sort(self._tree_digraph(parent), key=self._key))[1:]
        else:
            order = tuple(order)
            self._check_order(order, parent)
        return RegularNumbering(self, tree, parent, order)

    def regular_numberings(self, tree_joints: Iterable[Hashable] | None = None) -> Iterator["RegularNumbering"]:
        """Every regular numbering of the bodies for one spanning tree (the loop joints keep
        their order). An unbranched tree has exactly one (RBDA Fig. 4.3)."""
        tree = self.spanning_tree(tree_joints)
        parent = self._tree_parents(tree)
        for order in nx.all_topological_sorts(self._tree_digraph(parent)):
            yield RegularNumbering(self, tree, parent, tuple(order[1:]))

    # ----------------------------------------------------------------- helpers
    def _joint(self, label: Hashable) -> tuple:
        try:
            return self._ends[label]
        except (KeyError, TypeError):
            raise UnknownNodeError(f"{label!r} is not a joint of this connectivity graph") from None

    def _key(self, body: Hashable) -> int:
        return -1 if body == self._base else self._position[body]

    def _tree_parents(self, tree: tuple) -> dict:
        """``{body: (parent body, tree joint)}`` for the spanning tree, orienting it away from
        the base (breadth first)."""
        adjacent: dict = {b: [] for b in self._graph}
        for label in tree:
            p, s = self._ends[label]
            adjacent[p].append((s, label))
            adjacent[s].append((p, label))
        parent: dict = {}
        frontier = [self._base]
        seen = {self._base}
        while frontier:
            nxt = []
            for body in frontier:
                for other, label in adjacent[body]:
                    if other not in seen:
                        seen.add(other)
                        parent[other] = (body, label)
                        nxt.append(other)
            frontier = nxt
        return parent

    def _tree_digraph(self, parent: dict) -> nx.DiGraph:
        digraph = nx.DiGraph()
        digraph.add_node(self._base)
        digraph.add_nodes_from(self._bodies)
        digraph.add_edges_from((p, b) for b, (p, _) in parent.items())
        return digraph

    def _check_order(self, order: tuple, parent: dict) -> None:
        unknown = [b for b in order if b not in self._position]
        if unknown:
            raise NotATreeError(f"order lists {unknown!r}, which are not moving bodies (the base {self._base!r} is body 0)")
        if len(set(order)) != len(order) or len(order) != self.num_bodies:
            missing = [b for b in self._bodies if b not in order]
            raise NotATreeError(f"order must list each of the {self.num_bodies} moving bodies once; missing {missing!r}, given {list(order)!r}")
        numbered = {self._base}
        for body in order:
            p, label = parent[body]
            if p not in numbered:
                raise NotATreeError(f"order numbers body {body!r} before its parent {p!r} (tree joint {label!r}): not a regular numbering")
            numbered.add(body)


class RegularNumbering:
    """A regular numbering of a :class:`ConnectivityGraph` and its arrays (RBDA §4.1.2–4.1.4).

    Built by :meth:`ConnectivityGraph.regular_numbering`. Bodies are numbered ``0 … N_B``
    (0 the base), joints ``1 … N_J``; tree joint ``i`` joins body ``i`` to its parent ``λ(i)``.
    ``body_labels[i]`` is the label of body ``i`` and ``joint_labels[i − 1]`` that of joint ``i``.
    All arrays and sets are computed once, in O(N_J) (the sets on demand, in their size).
    """

    def __init__(self, connectivity: ConnectivityGraph, tree: tuple, parent: dict, order: tuple):
        self.connectivity = connectivity
        self.body_labels: tuple = (connectivity.base,) + order
        number = {b: i for i, b in enumerate(self.body_labels)}
        tree_set = set(tree)
        loops = tuple(label for label in connectivity.joints if label not in tree_set)
        self.joint_labels: tuple = tuple(parent[b][1] for b in order) + loops
        self._body_number = number
        self._joint_number = {label: i for i, label in enumerate(self.joint_labels, start=1)}
        ends = [connectivity._joint(label) for label in self.joint_labels]
        self.predecessor_array: tuple[int, ...] = tuple(number[p] for p, _ in ends)
        self.successor_array: tuple[int, ...] = tuple(number[s] for _, s in ends)
        self.parent_array: tuple[int, ...] = tuple(number[parent[b][0]] for b in order)

    # ----------------------------------------------------------------- sizes
    @property
    def num_bodies(self) -> int:
        return len(self.parent_array)

    @property
    def num_joints(self) -> int:
        return len(self.predecessor_array)

    @property
    def num_loops(self) -> int:
        return self.num_joints - self.num_bodies

    @property
    def tree_joints(self) -> range:
        """Joint numbers ``1 … N_B``."""
        return range(1, self.num_bodies + 1)

    @property
    def loop_joints(self) -> range:
        """Joint numbers ``N_B + 1 … N_J``."""
        return range(self.num_bodies + 1, self.num_joints + 1)

    def __repr__(self) -> str:
        return f"RegularNumbering(λ={self.parent_array}, p={self.predecessor_array}, s={self.successor_array})"

    # ----------------------------------------------------------------- labels
    def body_number(self, label: Hashable) -> int:
        try:
            return self._body_number[label]
        except (KeyError, TypeError):
            raise UnknownNodeError(f"{label!r} is not a body of this connectivity graph") from None

    def joint_number(self, label: Hashable) -> int:
        try:
            return self._joint_number[label]
        except (KeyError, TypeError):
            raise UnknownNodeError(f"{label!r} is not a joint of this connectivity graph") from None

    # ----------------------------------------------------------------- Featherstone's arrays
    def predecessor(self, i: int) -> int:
        """``p(i)`` for joint ``i``."""
        return self.predecessor_array[self._joint_index(i)]

    def successor(self, i: int) -> int:
        """``s(i)`` for joint ``i``."""
        return self.successor_array[self._joint_index(i)]

    def parent(self, i: int) -> int:
        """``λ(i) = min(p(i), s(i))`` for body ``i ≥ 1`` (Eq. 4.2)."""
        return self.parent_array[self._body_index(i, moving=True)]

    def is_forward(self, i: int) -> bool:
        """True when tree joint ``i`` points from parent to child (``s(i) = i``)."""
        if not 1 <= i <= self.num_bodies:
            raise UnknownNodeError(f"joint {i!r} is not a tree joint (tree joints are 1 … {self.num_bodies})")
        return self.successor_array[i - 1] == i

    def support(self, i: int) -> tuple[int, ...]:
        """``κ(i)``: the tree joints on the path from body ``i`` to the base, ascending."""
        i = self._body_index(i, moving=False)
        return () if i == 0 else self._numbers(self.tree_digraph.support(self.body_labels[i]))

    def children(self, i: int) -> tuple[int, ...]:
        """``μ(i)``: the children of body ``i`` (``i = 0`` allowed), ascending."""
        i = self._body_index(i, moving=False)
        tree = self.tree_digraph
        return self._numbers(tree.base_bodies() if i == 0 else tree.children(self.body_labels[i]))

    def subtree(self, i: int) -> tuple[int, ...]:
        """``ν(i)``: body ``i`` and its descendants, ascending (``ν(0)`` is every body)."""
        i = self._body_index(i, moving=False)
        if i == 0:
            return tuple(range(self.num_bodies + 1))
        return self._numbers(self.tree_digraph.subtree(self.body_labels[i]))

    def _numbers(self, labels) -> tuple[int, ...]:
        """Featherstone's numbers of body labels of :attr:`tree_digraph`, ascending."""
        return tuple(sorted(self._body_number[b] for b in labels))

    def loop(self, i: int) -> tuple[int, ...]:
        """The joints of the one-chord cycle of joint ``i`` (RBDA §4.1.1): the tree joints on
        the path between ``p(i)`` and ``s(i)`` (``κ(p(i)) Δ κ(s(i))``), ascending, then ``i``.
        For a tree joint this is ``(i,)``."""
        p, s = self.predecessor(i), self.successor(i)
        if i <= self.num_bodies:
            return (i,)
        return tuple(sorted(set(self.support(p)) ^ set(self.support(s)))) + (i,)

    # ----------------------------------------------------------------- conversion
    @cached_property
    def tree_digraph(self) -> TreeDigraph:
        """The spanning tree as a :class:`TreeDigraph` rooted at the base body's label, bodies
        stacked in the regular numbering order and keeping their labels.

        >>> G = ConnectivityGraph.from_arrays([0, 1, 1, 2], [1, 2, 3, 3])
        >>> T = G.regular_numbering().tree_digraph
        >>> T.root, T.bodies, T.parent(3), T.parent(1)
        (0, (1, 2, 3), 1, None)
        """
        digraph = nx.DiGraph()
        digraph.add_nodes_from(self.body_labels)
        digraph.add_edges_from((self.body_labels[lam], self.body_labels[i])
                               for i, lam in enumerate(self.parent_array, start=1))
        return TreeDigraph.from_networkx(digraph, self.body_labels[0])

    # ----------------------------------------------------------------- checks
    def _joint_index(self, i: int) -> int:
        if not _is_integer(i) or not 1 <= i <= self.num_joints:
            raise UnknownNodeError(f"joint {i!r} does not exist: joints are numbered 1 … {self.num_joints}")
        return int(i) - 1

    def _body_index(self, i: int, moving: bool) -> int:
        low = 1 if moving else 0
        if not _is_integer(i) or not low <= i <= self.num_bodies:
            raise UnknownNodeError(f"body {i!r} does not exist: {'moving ' if moving else ''}bodies are numbered {low} … {self.num_bodies}")
        return int(i) - 1 if moving else int(i)


def _is_integer(i: object) -> bool:
    return isinstance(i, Integral) and not isinstance(i, bool)

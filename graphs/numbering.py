"""Numberings of tree digraphs and (expanded) parent arrays (SKO.md §1, SPARSE.md).

Conventions
-----------
* A tree's numbering is its stacking order (:attr:`TreeDigraph.bodies`). It is *regular*
  (Featherstone) when every parent is stacked before its children and *canonical* (Jain) when
  every child is stacked before its parent. The renumberings below return a new
  :class:`TreeDigraph` with the same labels and arcs, stacked in the new order, and leave the
  order unchanged when it already has the property.
* Parent arrays follow Featherstone: 1-based, written as tuples, ``λ[i − 1] = λ(i)`` for bodies
  (or dofs) ``i = 1 … N``, 0 standing for the root, and ``0 ≤ λ(i) < i`` (RBDA §4.1.4).
* The *expanded parent array* ``λ'`` is the parent array of the *dof tree*: every joint with
  ``n_i`` dofs becomes a chain of ``n_i`` single-dof joints, numbered so that edge ``k`` is dof
  ``k`` of the stacked hinge vector (RBDA Table 6.4, SPARSE.md). A joint with no dof adds no
  edge; its children hang from the nearest dof above it.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from numbers import Integral

import networkx as nx

from .errors import DimensionError, NotATreeError, UnknownNodeError
from .tree import TreeDigraph

__all__ = [
    "is_regular",
    "is_canonical",
    "regular_renumbering",
    "canonical_renumbering",
    "parent_array",
    "check_parent_array",
    "expanded_parent_array",
    "dof_parent_array",
    "dof_tree",
]


def is_regular(tree: TreeDigraph) -> bool:
    """True when every body is stacked after its parent (Featherstone's regular numbering)."""
    return all(p < i for i, p in enumerate(tree.parent_indices))


def is_canonical(tree: TreeDigraph) -> bool:
    """True when every body is stacked before its parent (Jain's canonical numbering)."""
    return all(p < 0 or p > i for i, p in enumerate(tree.parent_indices))


def regular_renumbering(tree: TreeDigraph) -> TreeDigraph:
    """The same tree stacked parents first (a regular numbering).

    Of all regular numberings it is the closest to the current one: whenever several bodies may
    come next, the one stacked earliest comes first, so a regular tree is returned unchanged.

    >>> tree = TreeDigraph.from_parents({"c": "b", "a": None, "b": "a"})
    >>> regular_renumbering(tree).bodies
    ('a', 'b', 'c')
    """
    return _restacked(tree, tree.graph)


def canonical_renumbering(tree: TreeDigraph) -> TreeDigraph:
    """The same tree stacked children first (Jain's canonical numbering, SKO.md §1).

    Of all canonical numberings it is the closest to the current one, so a canonical tree is
    returned unchanged.

    >>> tree = TreeDigraph.from_parents({"a": None, "b": "a", "c": "b", "d": "a"})
    >>> canonical_renumbering(tree).bodies
    ('c', 'b', 'd', 'a')
    """
    return _restacked(tree, tree.graph.reverse(copy=False))


def parent_array(tree: TreeDigraph) -> tuple[int, ...]:
    """Featherstone's parent array ``λ`` of a regularly numbered tree: ``λ[i − 1]`` is the
    position (1-based) of the parent of the ``i``-th body, 0 for base bodies.

    Raises
    ------
    NotATreeError
        If the stacking order is not regular (the message names a body stacked before its
        parent; :func:`regular_renumbering` fixes that).

    >>> parent_array(TreeDigraph.from_parents({"a": None, "b": "a", "c": "a", "d": None}))
    (0, 1, 1, 0)
    """
    for i, p in enumerate(tree.parent_indices):
        if p > i:
            k = tree.bodies[i]
            raise NotATreeError(f"body {k!r} (position {i + 1}) is stacked before its parent {tree.parent(k)!r} "
                                f"(position {p + 1}): the numbering is not regular; use regular_renumbering")
    return tuple(p + 1 for p in tree.parent_indices)


def check_parent_array(parents: Sequence[int], name: str = "λ") -> tuple[int, ...]:
    """Check a Featherstone parent array (``0 ≤ λ(i) < i``) and return it as a tuple of ints.

    Raises
    ------
    NotATreeError
        If ``parents`` is not a sequence, or an entry is not an integer or breaks
        ``0 ≤ λ(i) < i`` (the message names ``i``).
    """
    if not isinstance(parents, Iterable) or isinstance(parents, (str, bytes)):
        raise NotATreeError(f"the parent array {name} must be a sequence of integers, got {type(parents).__name__}")
    checked = []
    for i, p in enumerate(parents, start=1):
        if not isinstance(p, Integral) or isinstance(p, bool):
            raise NotATreeError(f"{name}({i}) = {p!r} is not an integer")
        if not 0 <= p < i:
            raise NotATreeError(f"{name}({i}) = {p} breaks 0 ≤ {name}({i}) < {i}: entry {i} is numbered before its parent")
        checked.append(int(p))
    return tuple(checked)


def expanded_parent_array(parents: Sequence[int], dofs: Sequence[int]) -> tuple[int, ...]:
    """The expanded parent array ``λ'`` from ``λ`` and the joints' dof counts (RBDA Table 6.4).

    With ``map(i) = n_1 + … + n_i`` the dofs of joint ``i`` are ``map(i − 1) + 1 … map(i)``:
    the first hangs from the last dof of joint ``λ(i)`` (``map(λ(i))``, SPARSE.md) and each
    other from the dof before it. The result satisfies ``0 ≤ λ'(k) < k``.

    Parameters
    ----------
    parents
        ``λ``, with ``0 ≤ λ(i) < i``.
    dofs
        ``n_i ≥ 0`` for each joint; a joint with ``n_i = 0`` passes its children on to the
        nearest dof above it.

    Raises
    ------
    NotATreeError
        If ``λ`` is not a regular parent array.
    DimensionError
        If ``dofs`` does not have one non-negative integer per joint.

    Examples
    --------
    Table 6.4: joint 2 has three dofs, the others one.

    >>> expanded_parent_array((0, 1, 1, 2, 2, 3), (1, 3, 1, 1, 1, 1))
    (0, 1, 2, 3, 1, 4, 4, 5)
    """
    parents = check_parent_array(parents)
    dofs = tuple(dofs)
    if len(dofs) != len(parents):
        raise DimensionError(f"{len(dofs)} dof counts for {len(parents)} joints: one per joint is needed")
    for i, n in enumerate(dofs, start=1):
        if not isinstance(n, Integral) or isinstance(n, bool) or n < 0:
            raise DimensionError(f"joint {i} has dof count {n!r}: a non-negative integer is needed")
    last = [0] * (len(parents) + 1)  # last[i]: the dof closest below joint i's tip (0: the base)
    expanded: list[int] = []
    for i, (p, n) in enumerate(zip(parents, dofs), start=1):
        above = last[p]
        for _ in range(n):
            expanded.append(above)
            above = len(expanded)
        last[i] = above
    return tuple(expanded)


def dof_parent_array(tree: TreeDigraph, dims: Mapping[Hashable, int]) -> tuple[int, ...]:
    """The expanded parent array of a regularly numbered tree with hinge dimensions ``n_k``.

    This is the parent array of the dof tree of an SKO model (``dims = model.dof_dims()``):
    entry ``k`` of the stacked hinge vector ``θ̇`` has parent dof ``λ'(k)`` (SPARSE.md).

    Raises
    ------
    NotATreeError
        If the stacking order is not regular.
    UnknownNodeError, DimensionError
        If ``dims`` names a body not in the tree, misses one, or holds a negative count.

    >>> tree = TreeDigraph.from_parents({1: None, 2: 1, 3: 1, 4: 2, 5: 2, 6: 3})
    >>> dof_parent_array(tree, {1: 1, 2: 3, 3: 1, 4: 1, 5: 1, 6: 1})
    (0, 1, 2, 3, 1, 4, 4, 5)
    """
    return expanded_parent_array(parent_array(tree), _dims(tree, dims))


def dof_tree(tree: TreeDigraph, dims: Mapping[Hashable, int]) -> TreeDigraph:
    """The dof tree: body ``k`` becomes the chain of dofs ``(k, 0) → … → (k, n_k − 1)``.

    Dofs are stacked in the order of the stacked hinge vector (body by body in the tree's
    stacking order), for any numbering. ``(k, 0)`` hangs from the last dof of the nearest
    ancestor of ``k`` with dofs, or from the root. For a regular tree its parent array is
    :func:`dof_parent_array`.

    >>> dof_tree(TreeDigraph.from_parents({"a": None, "b": "a"}), {"a": 2, "b": 1}).parent_mapping()
    {('a', 0): None, ('a', 1): ('a', 0), ('b', 0): ('a', 1)}
    """
    counts = _dims(tree, dims)
    last: dict = {}

    def tip(k: Hashable | None) -> Hashable | None:
        """The last dof at or above body ``k`` (memoised, O(N) overall)."""
        chain_ = []
        while k is not None and k not in last:
            chain_.append(k)
            k = tree.parent(k)
        above = None if k is None else last[k]
        for b in reversed(chain_):
            n = counts[tree.index(b)]
            last[b] = (b, n - 1) if n else above
            above = last[b]
        return above

    parents: dict = {}
    for k, n in zip(tree.bodies, counts):
        above = tip(tree.parent(k))
        for r in range(n):
            parents[(k, r)] = above
            above = (k, r)
    return TreeDigraph.from_parents(parents)


def _dims(tree: TreeDigraph, dims: Mapping[Hashable, int]) -> tuple[int, ...]:
    if not isinstance(dims, Mapping):
        raise DimensionError(f"hinge dimensions must be a mapping body -> n_k, got {type(dims).__name__}")
    unknown = [k for k in dims if k not in tree]
    if unknown:
        raise UnknownNodeError(f"hinge dimensions given for {unknown!r}, which are not bodies of the tree")
    missing = [k for k in tree.bodies if k not in dims]
    if missing:
        raise DimensionError(f"hinge dimensions missing for bodies {missing!r}")
    counts = tuple(dims[k] for k in tree.bodies)
    for k, n in zip(tree.bodies, counts):
        if not isinstance(n, Integral) or isinstance(n, bool) or n < 0:
            raise DimensionError(f"body {k!r} has hinge dimension {n!r}: a non-negative integer is needed")
    return tuple(int(n) for n in counts)


def _restacked(tree: TreeDigraph, digraph: nx.DiGraph) -> TreeDigraph:
    """``tree`` stacked in the lexicographically smallest topological order of ``digraph``
    (keyed by current position), i.e. the order closest to the current one."""
    root = tree.root
    key = {k: i for i, k in enumerate(tree.bodies)}
    key[root] = -1
    order = nx.lexicographical_topological_sort(digraph, key=key.__getitem__)
    restacked = nx.DiGraph()
    restacked.add_node(root)
    restacked.add_nodes_from(k for k in order if k != root)
    restacked.add_edges_from(tree.graph.edges(data=True))
    return TreeDigraph.from_networkx(restacked, root)

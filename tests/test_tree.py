"""The digraph layer: derived data against brute force, and every rejection path."""

import networkx as nx
import pytest
from hypothesis import given

from sko.graphs import ROOT, NotATreeError, SKOError, TreeDigraph, UnknownNodeError

from .strategies import random_tree, trees


def brute_ancestors(tree, k):
    chain, p = [], tree.parent(k)
    while p is not None:
        chain.append(p)
        p = tree.parent(p)
    return chain


@given(trees(max_bodies=20))
def test_orders_and_ancestry_against_brute_force(tree):
    gather, scatter = tree.gather_order(), tree.scatter_order()
    assert sorted(map(repr, gather)) == sorted(map(repr, tree.bodies)) == sorted(map(repr, scatter))
    pos_g = {k: i for i, k in enumerate(gather)}
    pos_s = {k: i for i, k in enumerate(scatter)}
    for k in tree.bodies:
        p = tree.parent(k)
        if p is not None:
            assert pos_g[k] < pos_g[p] and pos_s[p] < pos_s[k]
            assert k in tree.children(p)
        anc = brute_ancestors(tree, k)
        assert list(tree.ancestors(k)) == anc
        assert tree.depth(k) == len(anc)
        assert list(tree.support(k)) == list(reversed(anc)) + [k]
        assert set(tree.descendants(k)) == {j for j in tree.bodies if k in brute_ancestors(tree, j)}
        assert tree.subtree(k)[0] == k
    assert tree.height == max(tree.depth(k) for k in tree.bodies)
    assert tree.nilpotency_index() == tree.height + 1


@given(trees(max_bodies=15))
def test_related_nearest_common_ancestor_and_paths(tree):
    for i in tree.bodies:
        for j in tree.bodies:
            ai = [i] + brute_ancestors(tree, i)
            aj = [j] + brute_ancestors(tree, j)
            assert tree.related(i, j) == (i in aj or j in ai)
            assert tree.is_ancestor(i, j) == (i != j and i in aj)
            common = [a for a in ai if a in aj]
            assert tree.nearest_common_ancestor(i, j) == (common[0] if common else None)
            if i in aj:
                path = tree.path(i, j)
                assert path[0] == i and path[-1] == j
                assert all(tree.parent(b) == a for a, b in zip(path, path[1:]))
            else:
                with pytest.raises(UnknownNodeError):
                    tree.path(i, j)


@given(trees(max_bodies=20))
def test_segments_partition_the_tree_into_maximal_chains(tree):
    segments = tree.segments()
    flat = [k for seg in segments for k in seg]
    assert sorted(map(repr, flat)) == sorted(map(repr, tree.bodies))
    for s, seg in enumerate(segments):
        for a, b in zip(seg, seg[1:]):
            assert tree.children(a) == (b,)
        assert len(tree.children(seg[-1])) != 1  # maximal at the tip
        p = tree.parent(seg[0])
        assert p is None or len(tree.children(p)) > 1  # maximal at the base
        assert all(tree.segment_of(k) == s for k in seg)
    branches = tree.branch_tree()
    assert len(branches) == len(segments)
    for s, seg in enumerate(segments):
        p = tree.parent(seg[0])
        assert branches.parent(s) == (None if p is None else tree.segment_of(p))


def test_forest_example_and_labels():
    tree = TreeDigraph.from_parents({("arm", 1): None, "x": ("arm", 1), 3.5: "x", 7: None, 8: 7, 9: 7})
    assert tree.base_bodies() == (("arm", 1), 7)
    assert tree.nearest_common_ancestor(3.5, 9) is None
    assert tree.nearest_common_ancestor(8, 9) == 7
    assert tree.segments() == ((("arm", 1), "x", 3.5), (7,), (8,), (9,))
    assert tree.graph.has_edge(ROOT, 7) and nx.is_frozen(tree.graph)
    assert TreeDigraph.from_parents(tree.parent_mapping()).parent_mapping() == tree.parent_mapping()


@given(trees(max_bodies=12))
def test_from_networkx_matches_from_parents(tree):
    graph = nx.DiGraph()
    graph.add_node("world")
    graph.add_nodes_from(tree.bodies)
    graph.add_edges_from(("world" if p is None else p, k) for k, p in tree.parent_mapping().items())
    other = TreeDigraph.from_networkx(graph, "world")
    assert other.bodies == tree.bodies
    assert other.parent_mapping() == tree.parent_mapping()
    assert other.gather_order() == tree.gather_order()


def test_input_graph_is_not_modified():
    graph = nx.DiGraph([(0, 1), (1, 2)])
    tree = TreeDigraph.from_networkx(graph, 0)
    graph.add_edge(2, 3)
    assert tree.bodies == (1, 2)


@pytest.mark.parametrize(
    "edges, root, words",
    [
        ([(0, 1), (1, 2), (2, 3), (3, 2)], 0, ["two or more parents", "2"]),
        ([(0, 1), (2, 3), (3, 4), (4, 2)], 0, ["directed cycle", "2", "3", "4"]),
        ([(0, 1), (0, 2), (1, 3), (2, 3)], 0, ["two or more parents", "3", "[1, 2]"]),
        ([(0, 1), (5, 6)], 0, ["no parent", "5"]),
        ([(1, 0), (0, 2)], 0, ["root", "parents"]),
        ([(0, 1)], 9, ["root 9"]),
    ],
)
def test_non_trees_are_rejected_naming_the_nodes(edges, root, words):
    with pytest.raises(NotATreeError) as info:
        TreeDigraph.from_networkx(nx.DiGraph(edges), root)
    for w in words:
        assert w in str(info.value)


def test_parallel_arcs_and_bad_mappings_are_rejected():
    with pytest.raises(NotATreeError, match="parallel arcs"):
        TreeDigraph.from_networkx(nx.MultiDiGraph([(0, 1), (0, 1)]), 0)
    with pytest.raises(NotATreeError, match="DiGraph"):
        TreeDigraph.from_networkx(nx.Graph([(0, 1)]), 0)
    with pytest.raises(NotATreeError, match="'c'.*not a body"):
        TreeDigraph.from_parents({"a": None, "b": "c"})
    with pytest.raises(NotATreeError, match="directed cycle"):
        TreeDigraph.from_parents({"a": None, "b": "c", "c": "b"})
    with pytest.raises(NotATreeError, match="directed cycle"):
        TreeDigraph.from_parents({"a": "a"})
    with pytest.raises(NotATreeError, match="root"):
        TreeDigraph.from_parents({None: None})
    with pytest.raises(NotATreeError, match="mapping"):
        TreeDigraph.from_parents([("a", None)])


def test_unknown_nodes_raise_the_projects_error():
    tree = random_tree(5, seed=1, labels="str")
    for query in (tree.parent, tree.children, tree.depth, tree.ancestors, tree.descendants):
        with pytest.raises(UnknownNodeError, match="'nope' is not a body"):
            query("nope")
    with pytest.raises(SKOError):
        tree.related("nope", tree.bodies[0])
    with pytest.raises(UnknownNodeError):
        tree.index([1, 2])  # unhashable


@given(trees(max_bodies=15))
def test_index_level_views_agree_with_labels(tree):
    bodies = tree.bodies
    for i, k in enumerate(bodies):
        assert tuple(bodies[c] for c in tree.children_indices[i]) == tree.children(k)
        p = tree.parent_indices[i]
        assert (None if p < 0 else bodies[p]) == tree.parent(k)
        assert tree.depth_indices[i] == tree.depth(k)
    assert tuple(bodies[i] for i in tree.gather_indices) == tree.gather_order()
    assert tuple(bodies[i] for i in tree.scatter_indices) == tree.scatter_order()

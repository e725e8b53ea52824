"""Connectivity graphs with loops, spanning trees and regular numbering (RBDA §4.1).

Featherstone's worked examples (crank-slider Figs. 4.1, 4.4, 4.5; the tree of Fig. 4.6 with its
support, child and subtree sets), then properties on random connectivity graphs: spanning tree,
``N_L = N_J − N_B``, ``λ(i) = min(p(i), s(i)) < i``, the sets against :class:`TreeDigraph`,
one-chord cycles, and the enumeration of spanning trees and numberings against brute force.
"""

from __future__ import annotations

from itertools import combinations, permutations

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sko.graphs import (
    ConnectivityGraph,
    NotATreeError,
    SKOError,
    TreeDigraph,
    UnknownNodeError,
    parent_array,
)

# ----------------------------------------------------------------------------- strategies


def _regular_arrays(n_bodies: int, n_loops: int, seed: int) -> tuple[list[int], list[int], list[int]]:
    """Random regular ``λ`` and matching ``p, s``: random polarity, random loop joints."""
    rng = np.random.default_rng(seed)
    lam = [int(rng.integers(0, i)) for i in range(1, n_bodies + 1)]
    p, s = [], []
    for i, parent in enumerate(lam, start=1):
        ends = (parent, i) if rng.random() < 0.7 else (i, parent)
        p.append(ends[0])
        s.append(ends[1])
    for _ in range(n_loops):
        a, b = (int(v) for v in rng.choice(n_bodies + 1, size=2, replace=False))
        p.append(a)
        s.append(b)
    return lam, p, s


@st.composite
def regular_arrays(draw, max_bodies: int = 10, max_loops: int = 5):
    n = draw(st.integers(1, max_bodies))
    return _regular_arrays(n, draw(st.integers(0, max_loops)), draw(st.integers(0, 2**32 - 1)))


@st.composite
def connectivity_graphs(draw, max_bodies: int = 10, max_loops: int = 5) -> ConnectivityGraph:
    """Random connected multigraphs with arbitrary labels, joint order and body order."""
    _, p, s = draw(regular_arrays(max_bodies, max_loops))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n_bodies = max(max(p), max(s))
    name = {0: "ground"} | {b: f"B{int(v)}" for b, v in zip(range(1, n_bodies + 1), rng.permutation(100)[:n_bodies])}
    joint_order = rng.permutation(len(p))
    joints = {("J", int(j)): (name[p[j]], name[s[j]]) for j in joint_order}
    bodies = [name[int(b)] for b in rng.permutation(np.arange(1, n_bodies + 1))]
    return ConnectivityGraph(joints, base="ground", bodies=bodies)


# ----------------------------------------------------------------------------- RBDA examples

CRANK_SLIDER = {"J1": (0, "B1"), "J2": ("B1", "B2"), "J3": ("B2", "B3"), "J4": (0, "B3")}


def test_crank_slider_has_one_loop():
    """Fig. 4.1: three moving bodies, four joints, hence N_L = 1 (Eq. 4.1)."""
    G = ConnectivityGraph(CRANK_SLIDER)
    assert (G.num_bodies, G.num_joints, G.num_loops) == (3, 4, 1)
    assert G.base == 0 and G.bodies == ("B1", "B2", "B3")
    assert len(G.chords()) == 1


def test_crank_slider_numberings_fig_4_4():
    """Fig. 4.4: four spanning trees; the two unbranched ones have one regular numbering each,
    the two that branch at the root have three each."""
    G = ConnectivityGraph(CRANK_SLIDER)
    trees = list(G.spanning_trees())
    assert sorted(trees) == sorted(tuple(j for j in CRANK_SLIDER if j != chord) for chord in CRANK_SLIDER)
    counts = {}
    for tree in trees:
        numberings = list(G.regular_numberings(tree))
        unbranched = all(len(numberings[0].children(i)) <= 1 for i in range(4))
        counts[tree] = (unbranched, len(numberings))
        assert len({n.body_labels for n in numberings}) == len(numberings)
    assert sorted(counts.values()) == [(False, 3), (False, 3), (True, 1), (True, 1)]
    assert counts[("J1", "J2", "J3")] == (True, 1) and counts[("J2", "J3", "J4")] == (True, 1)


def test_crank_slider_arrays_fig_4_5():
    """Fig. 4.5: two numberings of Fig. 4.4 with all tree joints forward, λ = [0, 1, 2] and
    λ = [0, 0, 1]; λ(i) = min(p(i), s(i)) (Eq. 4.2)."""
    G = ConnectivityGraph(CRANK_SLIDER)
    chain = G.regular_numbering(["J1", "J2", "J3"])
    assert chain.parent_array == (0, 1, 2)
    assert (chain.predecessor_array, chain.successor_array) == ((0, 1, 2, 0), (1, 2, 3, 3))
    branched = G.regular_numbering(["J1", "J3", "J4"], order=["B3", "B1", "B2"])
    assert branched.parent_array == (0, 0, 1)
    assert branched.joint_labels == ("J4", "J1", "J3", "J2")
    # J3 runs B2 → B3, i.e. from body 3 to its parent, body 1: a reversed tree joint ...
    assert (branched.predecessor_array, branched.successor_array) == ((0, 0, 3, 2), (1, 2, 1, 3))
    assert [branched.is_forward(i) for i in (1, 2, 3)] == [True, True, False]
    # ... and with the polarity of the revolute joint J3 chosen the other way, all are forward.
    flipped = ConnectivityGraph(CRANK_SLIDER | {"J3": ("B3", "B2")})
    forward = flipped.regular_numbering(["J1", "J3", "J4"], order=["B3", "B1", "B2"])
    assert (forward.predecessor_array, forward.successor_array) == ((0, 0, 1, 2), (1, 2, 3, 3))
    assert all(forward.is_forward(i) for i in forward.tree_joints)
    for numbering in (chain, branched, forward):
        for i in numbering.tree_joints:
            assert numbering.parent(i) == min(numbering.predecessor(i), numbering.successor(i)) < i
        assert numbering.loop(4) == (1, 2, 3, 4)  # the loop passes every joint


@pytest.mark.parametrize("lambda_7", [4, 6])
def test_support_child_subtree_fig_4_6(lambda_7):
    """Fig. 4.6: the sets quoted in §4.1.4. The quoted sets fix λ = (0, 1, 1, 0, 3, 4, ·, 4)
    except λ(7) ∈ {4, 6}; both are checked. Every tree joint is forward except joint 4. The two
    loop joints are arbitrary additions (the figure's are not in the text)."""
    lam = [0, 1, 1, 0, 3, 4, lambda_7, 4]
    p = [q if i != 4 else i for i, q in enumerate(lam, start=1)] + [2, 5]
    s = [i if i != 4 else q for i, q in enumerate(lam, start=1)] + [8, 6]
    numbering = ConnectivityGraph.from_arrays(p, s).regular_numbering()
    assert numbering.parent_array == tuple(lam)
    assert (numbering.predecessor_array, numbering.successor_array) == (tuple(p), tuple(s))
    assert [i for i in numbering.tree_joints if not numbering.is_forward(i)] == [4]
    assert numbering.num_loops == 2 and tuple(numbering.loop_joints) == (9, 10)
    assert numbering.support(1) == (1,)
    assert numbering.support(2) == (1, 2)
    assert numbering.support(3) == (1, 3)
    assert numbering.support(8) == (4, 8)
    assert numbering.children(0) == (1, 4)
    assert numbering.children(1) == (2, 3)
    assert numbering.children(2) == ()
    assert numbering.children(8) == ()
    assert numbering.subtree(0) == tuple(range(9))
    assert numbering.subtree(1) == (1, 2, 3, 5)
    assert numbering.subtree(2) == (2,)
    assert numbering.subtree(8) == (8,)
    assert numbering.loop(9) == (1, 2, 4, 8, 9)
    for i in range(1, 9):  # μ(i) ⊆ ν(i); j ∈ κ(i) ⇒ i ∈ ν(j)
        assert set(numbering.children(i)) <= set(numbering.subtree(i))
        assert all(i in numbering.subtree(j) for j in numbering.support(i))


def test_unbranched_tree_has_the_unique_numbering_fig_4_3():
    """Fig. 4.3: an unbranched tree is numbered 0, 1, 2, … from the base out, whatever labels
    and joint order it is given."""
    G = ConnectivityGraph({"c": ("y", "z"), "a": ("base", "x"), "b": ("y", "x")}, base="base")
    (numbering,) = G.regular_numberings()
    assert numbering.body_labels == ("base", "x", "y", "z")
    assert numbering.joint_labels == ("a", "b", "c")
    assert numbering.parent_array == (0, 1, 2)
    assert numbering.predecessor_array == (0, 2, 2) and numbering.successor_array == (1, 1, 3)


def test_parallel_joints_make_a_loop():
    """Two joints between the same bodies (a multigraph edge pair) form a one-chord cycle."""
    G = ConnectivityGraph({"a": (0, 1), "b": (1, 2), "c": (2, 1)})
    assert G.num_loops == 1 and G.chords() == ("c",)
    assert G.chords(["a", "c"]) == ("b",)
    numbering = G.regular_numbering()
    assert numbering.loop(3) == (2, 3)
    assert sorted(G.spanning_trees()) == [("a", "b"), ("a", "c")]


def test_tree_digraph_keeps_labels_and_root():
    G = ConnectivityGraph(CRANK_SLIDER)
    numbering = G.regular_numbering(["J1", "J3", "J4"], order=["B3", "B1", "B2"])
    tree = numbering.tree_digraph
    assert isinstance(tree, TreeDigraph)
    assert tree.root == 0 and tree.bodies == ("B3", "B1", "B2")
    assert tree.parent_mapping() == {"B3": None, "B1": None, "B2": "B3"}
    assert parent_array(tree) == numbering.parent_array


# ----------------------------------------------------------------------------- properties


@given(regular_arrays())
def test_regular_arrays_round_trip(arrays):
    """Arrays that are already a regular numbering (tree joints 1 … N_B) are reproduced."""
    lam, p, s = arrays
    G = ConnectivityGraph.from_arrays(p, s)
    numbering = G.regular_numbering()
    assert numbering.parent_array == tuple(lam)
    assert numbering.predecessor_array == tuple(p)
    assert numbering.successor_array == tuple(s)
    assert numbering.joint_labels == tuple(range(1, len(p) + 1))


@given(connectivity_graphs())
def test_spanning_tree_and_loop_count(G):
    tree = G.spanning_tree()
    chords = G.chords()
    assert G.num_loops == G.num_joints - G.num_bodies == len(chords)
    assert set(tree) | set(chords) == set(G.joints) and not set(tree) & set(chords)
    sub = nx.MultiGraph()
    sub.add_nodes_from(G.graph)
    sub.add_edges_from((G.predecessor(j), G.successor(j), j) for j in tree)
    assert nx.is_tree(sub)
    assert G.spanning_tree(reversed(tree)) == tree  # accepted in any order


@given(connectivity_graphs(), st.data())
def test_regular_numbering_properties(G, data):
    trees = list(G.spanning_trees()) if G.num_joints <= 9 else [G.spanning_tree()]
    tree = data.draw(st.sampled_from(trees))
    numbering = G.regular_numbering(tree)
    NB, NJ = G.num_bodies, G.num_joints
    assert set(numbering.joint_labels[:NB]) == set(tree)
    assert sorted(numbering.body_labels[1:], key=str) == sorted(G.bodies, key=str)
    for i in range(1, NJ + 1):  # the numbers describe the labelled joints
        label = numbering.joint_labels[i - 1]
        assert numbering.joint_number(label) == i
        assert numbering.body_labels[numbering.predecessor(i)] == G.predecessor(label)
        assert numbering.body_labels[numbering.successor(i)] == G.successor(label)
    for i in range(1, NB + 1):  # tree joint i joins body i to λ(i) < i (Eq. 4.2)
        lam = numbering.parent(i)
        assert lam < i and lam == min(numbering.predecessor(i), numbering.successor(i))
        assert {numbering.predecessor(i), numbering.successor(i)} == {i, lam}
        assert numbering.is_forward(i) == (numbering.successor(i) == i)
    # κ, μ, ν against the TreeDigraph of the spanning tree
    T = numbering.tree_digraph
    num = numbering.body_number
    assert T.root == G.base and T.bodies == numbering.body_labels[1:]
    assert numbering.children(0) == tuple(sorted(num(k) for k in T.base_bodies()))
    for i in range(1, NB + 1):
        k = numbering.body_labels[i]
        assert numbering.support(i) == tuple(sorted(num(b) for b in T.support(k)))
        assert numbering.children(i) == tuple(sorted(num(b) for b in T.children(k)))
        assert numbering.subtree(i) == tuple(sorted(num(b) for b in T.subtree(k)))
    for i in range(1, NB + 1):  # Eq. 4.3: j ∈ κ(i) ⇔ i ∈ ν(j)
        for j in range(1, NB + 1):
            assert (j in numbering.support(i)) == (i in numbering.subtree(j))
    for i in numbering.loop_joints:  # one-chord cycles are cycles through exactly one chord
        loop = numbering.loop(i)
        assert [j for j in loop if j > NB] == [i]
        cycle = nx.MultiGraph()
        cycle.add_edges_from((numbering.predecessor(j), numbering.successor(j), j) for j in loop)
        assert nx.is_connected(cycle) and all(d == 2 for _, d in cycle.degree())


@given(connectivity_graphs(max_bodies=5, max_loops=3))
def test_spanning_trees_and_numberings_match_brute_force(G):
    def is_spanning_tree(joints):
        sub = nx.MultiGraph()
        sub.add_nodes_from(G.graph)
        sub.add_edges_from((G.predecessor(j), G.successor(j), j) for j in joints)
        return nx.is_tree(sub)

    brute = {frozenset(c) for c in combinations(G.joints, G.num_bodies) if is_spanning_tree(c)}
    found = [frozenset(t) for t in G.spanning_trees()]
    assert len(found) == len(set(found)) and set(found) == brute
    tree = G.spanning_tree()
    lam = G.regular_numbering(tree)
    parent = {b: lam.body_labels[lam.parent(lam.body_number(b))] for b in G.bodies}
    regular = set()
    for order in permutations(G.bodies):
        position = {b: i for i, b in enumerate(order)} | {G.base: -1}
        if all(position[parent[b]] < position[b] for b in order):
            regular.add(order)
    numberings = {n.body_labels[1:] for n in G.regular_numberings(tree)}
    assert numberings == regular
    for order in regular:
        assert G.regular_numbering(tree, order=order).body_labels[1:] == order


@given(connectivity_graphs())
def test_default_numbering_keeps_a_regular_body_order(G):
    numbering = G.regular_numbering()
    order = numbering.body_labels[1:]
    joints = {j: (G.predecessor(j), G.successor(j)) for j in G.joints}
    again = ConnectivityGraph(joints, base=G.base, bodies=order).regular_numbering(numbering.joint_labels[:G.num_bodies])
    assert again.body_labels == numbering.body_labels
    assert again.parent_array == numbering.parent_array


# ----------------------------------------------------------------------------- errors


def test_not_connected_names_the_bodies():
    with pytest.raises(NotATreeError, match=r"not connected.*\['C', 'D'\]"):
        ConnectivityGraph({"a": (0, "A"), "b": ("C", "D")})
    with pytest.raises(NotATreeError, match="'lonely'"):
        ConnectivityGraph({"a": (0, "A")}, bodies=["A", "lonely"])


def test_joint_to_an_unknown_body():
    with pytest.raises(UnknownNodeError, match="joint 'b' refers to body 'X'"):
        ConnectivityGraph({"a": (0, "A"), "b": ("A", "X")}, bodies=["A"])


def test_self_loop_joint():
    with pytest.raises(NotATreeError, match="joint 'b' joins body 'A' to itself"):
        ConnectivityGraph({"a": (0, "A"), "b": ("A", "A")})


def test_malformed_input():
    with pytest.raises(NotATreeError, match="mapping"):
        ConnectivityGraph([("a", 0, 1)])
    with pytest.raises(NotATreeError, match="joint 'a' must be a pair"):
        ConnectivityGraph({"a": (0, 1, 2)})
    with pytest.raises(NotATreeError, match="None"):
        ConnectivityGraph({"a": (0, None)})
    with pytest.raises(NotATreeError, match="p has 2 entries but s has 1"):
        ConnectivityGraph.from_arrays([0, 1], [1])
    assert issubclass(NotATreeError, SKOError)


def test_bad_spanning_trees_name_the_joints():
    G = ConnectivityGraph(CRANK_SLIDER)
    with pytest.raises(NotATreeError, match="N_B = 3 joints, got 2"):
        G.spanning_tree(["J1", "J2"])
    with pytest.raises(NotATreeError, match=r"\['J2'\] are listed more than once"):
        G.spanning_tree(["J1", "J2", "J2"])
    with pytest.raises(UnknownNodeError, match="'J9' is not a joint"):
        G.spanning_tree(["J1", "J2", "J9"])
    cyclic = ConnectivityGraph({"a": (0, 1), "b": (1, 2), "c": (2, 1), "d": (2, 3)})
    with pytest.raises(NotATreeError, match=r"tree joints \[.*'b'.*\] form a cycle"):
        cyclic.spanning_tree(["a", "b", "c"])


def test_bad_orders_and_numbers():
    G = ConnectivityGraph(CRANK_SLIDER)
    with pytest.raises(NotATreeError, match="numbers body 'B2' before its parent 'B1'"):
        G.regular_numbering(["J1", "J2", "J3"], order=["B2", "B1", "B3"])
    with pytest.raises(NotATreeError, match="missing"):
        G.regular_numbering(order=["B1", "B2"])
    with pytest.raises(NotATreeError, match="not moving bodies"):
        G.regular_numbering(order=[0, "B1", "B2", "B3"])
    numbering = G.regular_numbering()
    with pytest.raises(UnknownNodeError, match="joint 5 does not exist"):
        numbering.predecessor(5)
    with pytest.raises(UnknownNodeError, match="body 0 does not exist"):
        numbering.parent(0)
    with pytest.raises(UnknownNodeError, match="body 4 does not exist"):
        numbering.subtree(4)
    with pytest.raises(UnknownNodeError, match="joint 4 is not a tree joint"):
        numbering.is_forward(4)
    with pytest.raises(UnknownNodeError, match="'B9' is not a body"):
        numbering.body_number("B9")
    with pytest.raises(UnknownNodeError, match="'J9' is not a joint"):
        G.predecessor("J9")

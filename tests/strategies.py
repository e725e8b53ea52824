"""Hypothesis strategies for random tree digraphs and SKO models, shared by the whole suite.

Trees: forests with several base bodies, deep chains, wide fans and random shapes; labels of
several kinds; an arbitrary stacking order (neither canonical nor regular in general).
Models: node dimensions 1..7 varying per node (hence non-square weights of varying size), some
singular weights, hinge dimensions from 1 to the node dimension, SPD inertias.

Numbers come from a numpy generator seeded by hypothesis: the draw stays reproducible and
shrinkable while a model of 30 bodies costs one integer of entropy, not thousands of floats.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from sko.graphs import TreeDigraph
from sko import SKOModel

__all__ = ["SHAPES", "trees", "sko_models", "model_data", "random_model", "vectors", "random_weights",
           "ill_conditioned_model", "ill_conditioned_models"]

SHAPES = ("random", "chain", "fan", "forest", "binary")


def _parents(shape: str, n: int, rng: np.random.Generator) -> list[int]:
    """Parent of generation ``g`` among generations ``< g`` (-1: the root)."""
    if shape == "chain":
        return [g - 1 for g in range(n)]
    if shape == "fan":
        return [-1 if g == 0 else 0 for g in range(n)]
    if shape == "binary":
        return [(g - 1) // 2 for g in range(n)]
    if shape == "forest":  # several base bodies, each with a random subtree
        bases = max(2, n // 4)
        return [-1 if g < bases else int(rng.integers(0, g)) for g in range(n)]
    return [-1 if g == 0 or rng.random() < 0.1 else int(rng.integers(max(0, g - 4), g)) for g in range(n)]


def _labels(kind: str, n: int, rng: np.random.Generator) -> list:
    if kind == "int":
        return [int(v) for v in rng.permutation(10 * n)[:n]]
    if kind == "str":
        return [f"body{g}" for g in range(n)]
    return [g if g % 2 else ("link", g) for g in range(n)]


def random_tree(n: int, seed: int, shape: str = "random", labels: str = "int") -> TreeDigraph:
    """A random tree of ``n`` bodies with a random stacking order."""
    rng = np.random.default_rng(seed)
    parent = _parents(shape, n, rng)
    name = _labels(labels, n, rng)
    order = rng.permutation(n)
    return TreeDigraph.from_parents({name[g]: (None if parent[g] < 0 else name[parent[g]]) for g in order})


@st.composite
def trees(draw, min_bodies: int = 1, max_bodies: int = 12, shapes=SHAPES) -> TreeDigraph:
    shape = draw(st.sampled_from(shapes))
    n = draw(st.integers(max(min_bodies, 2 if shape == "forest" else 1), max_bodies))
    labels = draw(st.sampled_from(("int", "str", "mixed")))
    return random_tree(n, draw(st.integers(0, 2**32 - 1)), shape, labels)


def model_data(tree: TreeDigraph, seed: int, max_node_dim: int = 7, node_dim: int | None = None,
               singular: bool = True, hinge: str = "any") -> tuple[dict, dict, dict]:
    """Random ``phi, H, M`` for ``tree``.

    ``node_dim`` fixes every ``m_k`` (square weights); otherwise ``m_k`` is drawn in
    ``1..max_node_dim``. ``hinge``: ``"any"`` draws ``n_k`` in ``1..m_k``, ``"full"`` uses
    ``n_k = m_k``, ``"one"`` uses ``n_k = 1``, ``"zero-some"`` is ``"any"`` with about a third
    of the nodes given no hinge coordinates (``n_k = 0``: welded nodes), except the first in the
    stacking order, so ``ℳ`` is never empty. With ``singular`` about a third of the weights are
    rank deficient; about a third of the 6 × 6 weights have a zero lower-left 3 × 3 block.
    """
    rng = np.random.default_rng(seed)
    m = {k: node_dim or int(rng.integers(1, max_node_dim + 1)) for k in tree.bodies}
    phi, H, M = {}, {}, {}
    for k in tree.bodies:
        mk = m[k]
        n_any = int(rng.integers(1, mk + 1))
        if hinge == "zero-some":
            n = 0 if k != tree.bodies[0] and rng.random() < 0.35 else n_any
        else:
            n = {"any": n_any, "full": mk, "one": 1}[hinge]
        H[k] = rng.standard_normal((n, mk))
        A = rng.standard_normal((mk, mk))
        M[k] = A @ A.T + mk * np.eye(mk)
        p = tree.parent(k)
        if p is not None:
            W = rng.standard_normal((m[p], mk)) / np.sqrt(mk)
            if singular and rng.random() < 0.35:
                r = int(rng.integers(0, min(W.shape)))  # rank r < full
                W = rng.standard_normal((m[p], r)) @ rng.standard_normal((r, mk)) / np.sqrt(mk)
            if W.shape == (6, 6) and rng.random() < 0.35:  # the zero block of a rigid body's (ᵏX_o)*
                W[3:, :3] = 0.0
            phi[k] = W
    return phi, H, M


def random_model(tree: TreeDigraph, seed: int, **kwargs) -> SKOModel:
    phi, H, M = model_data(tree, seed, **kwargs)
    return SKOModel(tree, phi, H, M)


@st.composite
def sko_models(draw, tree_strategy=None, max_node_dim: int = 7, node_dim: int | None = None,
               singular: bool = True, hinge: str | None = None) -> SKOModel:
    """Random SKO models; see :func:`model_data` for the knobs."""
    tree = draw(tree_strategy if tree_strategy is not None else trees())
    hinge = hinge or draw(st.sampled_from(("any", "any", "full", "one")))
    seed = draw(st.integers(0, 2**32 - 1))
    return random_model(tree, seed, max_node_dim=max_node_dim, node_dim=node_dim, singular=singular, hinge=hinge)


def vectors(model: SKOModel, seed: int, kind: str = "node") -> np.ndarray:
    """A random stacked node (``kind="node"``) or hinge (``kind="dof"``) vector."""
    size = model.node_size if kind == "node" else model.dof_size
    return np.random.default_rng(seed).standard_normal(size)


def random_weights(model: SKOModel, seed: int, singular: bool = False) -> dict:
    """Arc weights ``{k: W_k}`` of another SPO on ``model``'s digraph (same node dimensions)."""
    rng = np.random.default_rng(seed)
    tree = model.tree
    out = {}
    for k in tree.bodies:
        p = tree.parent(k)
        if p is not None:
            shape = (model.node_dim(p), model.node_dim(k))
            W = rng.standard_normal(shape) / np.sqrt(shape[1])
            if singular and rng.random() < 0.35:
                W[:, int(rng.integers(0, shape[1]))] = 0.0
            out[k] = W
    return out


def ill_conditioned_model(tree: TreeDigraph, seed: int, spread: float = 3.0, **kwargs) -> SKOModel:
    """A valid model whose inertias (and joint maps) of about a third of the nodes are scaled by
    ``10**u``, ``u`` uniform in ``[-spread, spread]``; with the default spread the condition number
    of ``ℳ`` is typically 1e4 to 1e9 on ten bodies."""
    phi, H, M = model_data(tree, seed, **kwargs)
    rng = np.random.default_rng(seed + 1)
    for k in tree.bodies:
        if rng.random() < 0.35:
            M[k] = M[k] * 10.0 ** rng.uniform(-spread, spread)
        if rng.random() < 0.2:
            H[k] = H[k] * 10.0 ** rng.uniform(-spread / 2, spread / 2)
    return SKOModel(tree, phi, H, M)


@st.composite
def ill_conditioned_models(draw, tree_strategy=None, spread: float = 3.0, max_node_dim: int = 6) -> SKOModel:
    """Random valid but ill-conditioned models; see :func:`ill_conditioned_model`."""
    tree = draw(tree_strategy if tree_strategy is not None else trees(max_bodies=10))
    return ill_conditioned_model(tree, draw(st.integers(0, 2**32 - 1)), spread, max_node_dim=max_node_dim)

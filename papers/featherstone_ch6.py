"""Featherstone, *Rigid Body Dynamics Algorithms*, chapter 6: branch-induced sparsity
(Figure 6.2) and the expanded parent array (Table 6.4).

Run ``python -m papers.featherstone_ch6 [OUTPUT_DIR]`` (figures in ``papers/output`` by default;
they need the ``[plot]`` extra). It

1. builds, for each connectivity of Figure 6.2, an SKO model with regular numbering (parents
   before children, parent array ``λ``), six bodies of node dimension 6 with one-dof joints, and
   computes ``ℳ`` by the composite rigid body algorithm:
   (a) every body on the base — ``ℳ`` is diagonal; (b) an unbranched chain — ``ℳ`` is dense;
   (c) a typical branched tree; (d), (e) one tree under two numberings — the two patterns are
   symmetric permutations of each other;
2. checks each pattern against the rule ``ℳ_ij ≠ 0 ⇔ i ∈ ν(j) or j ∈ ν(i)`` and counts the
   nonzeros ``n + 2 D_1`` with ``D_1 = Σ_k (d_k − 1)``;
3. factors each ``ℳ = Lᵀ D L`` on the parent array and confirms there is no fill-in;
4. reproduces Table 6.4: joint 2 with three dofs, ``λ = (0, 1, 1, 2, 2, 3)`` expands to
   ``λ' = (0, 1, 2, 3, 1, 4, 4, 5)``, and the dof-level ``ℳ`` follows ``λ'``;
5. saves the five spy plots as one PNG.

:func:`main` returns the numbers it prints, so a test can assert them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import networkx as nx
import numpy as np

import sko.algorithms as alg
from sko.graphs import TreeDigraph
from sko.graphs.numbering import dof_parent_array, expanded_parent_array, parent_array
from sko import SKOModel
from papers.common import OUTPUT, pyplot, run_main

__all__ = ["FIGURE_6_2", "TABLE_6_4", "tree_from_parent_array", "model_from_parent_array", "mass_matrix_pattern", "main"]

#: Parent arrays λ (1-based, 0 = the fixed base) of the connectivity graphs of Figure 6.2.
FIGURE_6_2 = {
    "a": (0, 0, 0, 0, 0, 0),  # every body on the base
    "b": (0, 1, 2, 3, 4, 5),  # unbranched chain
    "c": (0, 1, 1, 2, 2, 3),  # a typical branched tree
    "d": (0, 1, 2, 1, 4, 5),  # one tree, depth-first numbering ...
    "e": (0, 1, 1, 2, 3, 5),  # ... and breadth-first numbering of the same tree
}
#: The relabelling of bodies from numbering (d) to numbering (e).
D_TO_E = {1: 1, 2: 2, 3: 4, 4: 3, 5: 5, 6: 6}
#: Table 6.4: the original parent array and the joints' dof counts.
TABLE_6_4 = {"parents": (0, 1, 1, 2, 2, 3), "dofs": (1, 3, 1, 1, 1, 1), "expanded": (0, 1, 2, 3, 1, 4, 4, 5)}


def tree_from_parent_array(parents) -> TreeDigraph:
    """Bodies ``1..n`` with ``λ(i)`` as parent (0: the base), stacked in numbering order."""
    return TreeDigraph.from_parents({i: (p or None) for i, p in enumerate(parents, start=1)})


def model_from_parent_array(parents, dofs=None, seed: int = 0) -> SKOModel:
    """A rigid-body-like SKO model: node dimension 6, ``dofs[i]`` hinge dofs (1 by default)."""
    tree = tree_from_parent_array(parents)
    rng = np.random.default_rng(seed)
    dofs = dofs or (1,) * len(parents)
    phi = {k: rng.standard_normal((6, 6)) for k in tree.bodies if tree.parent(k) is not None}
    H = {k: rng.standard_normal((n, 6)) for k, n in zip(tree.bodies, dofs)}
    M = {}
    for k in tree.bodies:
        A = rng.standard_normal((6, 6))
        M[k] = A @ A.T + 6 * np.eye(6)
    return SKOModel(tree, phi, H, M)


def mass_matrix_pattern(model: SKOModel) -> np.ndarray:
    """Boolean pattern of ``ℳ`` from the composite rigid body algorithm."""
    return alg.mass_matrix(model) != 0


def _rule(parents) -> np.ndarray:
    """Featherstone's rule: ``ℳ_ij ≠ 0`` iff ``i`` and ``j`` are on one path to the base."""
    tree = tree_from_parent_array(parents)
    n = len(parents)
    return np.array([[tree.related(i, j) for j in range(1, n + 1)] for i in range(1, n + 1)])


def _depths(parents) -> list[int]:
    d = []
    for p in parents:
        d.append(1 if p == 0 else d[p - 1] + 1)
    return d


def _spy_grid(patterns: dict[str, np.ndarray], path: Path) -> None:
    plt = pyplot("the figure of papers.featherstone_ch6")
    fig, axes = plt.subplots(1, len(patterns), figsize=(2.4 * len(patterns), 2.9))
    for ax, (name, P) in zip(axes, patterns.items()):
        ax.spy(P, markersize=9)
        ax.set_title(f"({name}) λ = {''.join(map(str, FIGURE_6_2[name]))}", fontsize=8)
        ticks = np.arange(P.shape[0])
        ax.set_xticks(ticks, [str(i + 1) for i in ticks], fontsize=6)
        ax.set_yticks(ticks, [str(i + 1) for i in ticks], fontsize=6)
        ax.set_xlabel("body j (column of ℳ)", fontsize=7)
        ax.set_ylabel("body i (row of ℳ)", fontsize=7)
    fig.suptitle("Branch-induced sparsity of ℳ (Figure 6.2)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(output: Path | str = OUTPUT) -> dict:
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    out: dict = {"figure_6_2": {}}
    patterns = {}
    for name, parents in FIGURE_6_2.items():
        model = model_from_parent_array(parents, seed=ord(name))
        P = mass_matrix_pattern(model)
        patterns[name] = P
        assert parent_array(model.tree) == parents
        D1 = sum(d - 1 for d in _depths(parents))
        LD = alg.ltdl(alg.mass_matrix(model), parents)
        L = alg.lower_factor(LD, parents, unit=True)
        fill_in = int(np.count_nonzero((L != 0) & ~np.tril(P)))
        out["figure_6_2"][name] = {"nonzeros": int(P.sum()), "predicted_nonzeros": len(parents) + 2 * D1,
                                   "matches_rule": bool(np.array_equal(P, _rule(parents))), "fill_in": fill_in}
        print(f"({name}) λ = {parents}: {int(P.sum())} nonzeros (n + 2 D1 = {len(parents) + 2 * D1}), "
              f"rule i ∈ ν(j) or j ∈ ν(i): {out['figure_6_2'][name]['matches_rule']}, LTDL fill-in: {fill_in}")
        for row in P:
            print("    " + " ".join("■" if v else "·" for v in row))
    perm = [D_TO_E[i] - 1 for i in range(1, 7)]  # position in (e) of each body of (d)
    Pd_permuted = np.zeros_like(patterns["d"])
    Pd_permuted[np.ix_(perm, perm)] = patterns["d"]
    out["d_e_permutation"] = bool(np.array_equal(Pd_permuted, patterns["e"]))
    out["d_e_same_tree"] = nx.is_isomorphic(tree_from_parent_array(FIGURE_6_2["d"]).graph,
                                            tree_from_parent_array(FIGURE_6_2["e"]).graph)
    print(f"(d) and (e) are one tree numbered two ways; relabelling {D_TO_E} maps pattern (d) onto (e): "
          f"{out['d_e_permutation']}")
    _spy_grid(patterns, output / "featherstone_fig6_2.png")
    print(f"figure: {output / 'featherstone_fig6_2.png'}")

    # Table 6.4: expanded parent array
    t = TABLE_6_4
    expanded = expanded_parent_array(t["parents"], t["dofs"])
    model = model_from_parent_array(t["parents"], dofs=t["dofs"], seed=64)
    from_model = dof_parent_array(model.tree, model.dof_dims())
    P = mass_matrix_pattern(model)
    out["table_6_4"] = {"expanded": expanded, "from_model": from_model,
                        "map": tuple(int(v) for v in np.cumsum((0,) + t["dofs"])),
                        "dof_pattern_matches": bool(np.array_equal(P, _rule(expanded)))}
    print(f"\nTable 6.4: λ = {t['parents']}, dofs {t['dofs']} → λ' = {expanded} (expected {t['expanded']}); "
          f"from the SKO model's hinge dimensions: {from_model}; map = {out['table_6_4']['map']}")
    print(f"dof-level ℳ ({P.shape[0]}×{P.shape[1]}) follows λ': {out['table_6_4']['dof_pattern_matches']}")
    return out


if __name__ == "__main__":
    run_main(lambda: main(*sys.argv[1:2]))

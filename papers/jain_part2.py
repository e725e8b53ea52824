"""Jain, *Graph theoretic foundations of multibody dynamics, Part II*: the paper's results on its
five-branch tree (Section 7, Figures 3–6).

Run ``python -m papers.jain_part2 [OUTPUT_DIR]`` (spy plots in ``papers/output`` by default; they
need the ``[plot]`` extra). It

1. builds an SKO model on the tree of Figure 3 — five serial-chain branches, canonically
   numbered (children before parents), random non-square weights of varying size;
2. exercises every lemma and algorithm through the registered identity checks (SKO.md §2–§13);
3. prints the segment-level sparsity of ``ℰ_φ`` (Eq. 61, 62), ``φ`` (Eq. 63, Figure 5) and ``ℳ``
   (Figure 6), checks them against the tree of branches, and saves spy plots as PNG files;
4. checks the determinant result ``det ℳ = Π_k det D(k)`` and ``det [I + H φ K] = 1``
   (Eq. 52, 53);
5. computes the extended operational space compliance ``Ω`` (Eq. 59, 60) for the three tip
   bodies and the operational space inertia ``Λ = (ℬ* Ω ℬ)^{-1}``;
6. checks a closed-form case tightly: the mass matrix and determinant of a planar double
   pendulum built as an SKO model.

:func:`main` returns the numbers it prints, so a test can assert them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import sko.algorithms as alg
from sko.graphs import TreeDigraph
from sko import SKOModel
from sko.verify import make_case, run
from sko.verify.operators import riccati_operators
from papers.common import OUTPUT, pyplot, run_main

__all__ = ["main", "segment_patterns", "double_pendulum", "double_pendulum_mass_matrix"]

TASK_NODES = (1, 4, 10)  # the tips of branches 4, 5 and 3


def segment_order(tree: TreeDigraph) -> list[int]:
    """Segments in the order of their bodies in the stacking order (tip branches first for
    Jain's canonical numbering, as in Eq. 61–63)."""
    segments = tree.segments()
    return sorted(range(len(segments)), key=lambda s: min(tree.index(k) for k in segments[s]))


def segment_patterns(model: SKOModel, matrices: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Which segment blocks of each matrix are nonzero (node partition, or dof partition for ℳ),
    segments in :func:`segment_order`."""
    tree = model.tree
    segments = [tree.segments()[s] for s in segment_order(tree)]
    out = {}
    for name, A in matrices.items():
        sl, size = (model.dof_slice, model.dof_size) if name == "M" else (model.node_slice, model.node_size)
        idx = [np.concatenate([np.arange(size)[sl(k)] for k in seg]) for seg in segments]
        out[name] = np.array([[bool(np.any(A[np.ix_(r, c)] != 0)) for c in idx] for r in idx])
    return out


def predicted_patterns(tree: TreeDigraph) -> dict[str, np.ndarray]:
    """Section 7: ℰ_φ has the segments' own SKO blocks plus one connector per parent/child segment
    pair; φ is nonzero for (ancestor-or-same, descendant) segment pairs; ℳ for related pairs."""
    b = tree.branch_tree()
    seg = tree.segments()
    order = segment_order(tree)
    E = np.array([[(s == t and len(seg[s]) > 1) or b.parent(t) == s for t in order] for s in order])
    phi = np.array([[s == t or b.is_ancestor(s, t) for t in order] for s in order])
    M = np.array([[b.related(s, t) for t in order] for s in order])
    return {"E": E, "phi": phi, "M": M}


def _spy(A: np.ndarray, model: SKOModel, title: str, path: Path, dof: bool = False) -> None:
    plt = pyplot("the spy plots of papers.jain_part2")
    fig, ax = plt.subplots(figsize=(4.6, 4.6))
    ax.spy(A, markersize=2.5)
    size = model.dof_size if dof else model.node_size
    sl = model.dof_slice if dof else model.node_slice
    for seg in model.tree.segments():
        edge = min(sl(k).start for k in seg) - 0.5
        if edge > 0:
            ax.axhline(edge, color="tab:red", lw=0.6)
            ax.axvline(edge, color="tab:red", lw=0.6)
    ax.set_xlim(-0.5, size - 0.5)
    ax.set_ylim(size - 0.5, -0.5)
    ax.set_title(title, fontsize=9)
    what = "hinge coordinate (dof)" if dof else "node coordinate"
    ax.set_xlabel(f"column: {what}, stacking order", fontsize=8)
    ax.set_ylabel(f"row: {what}, stacking order", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def double_pendulum(q2: float, l1: float = 1.2, r1: float = 0.5, r2: float = 0.7, m1: float = 2.0, m2: float = 1.5,
                    J1: float = 0.1, J2: float = 0.05, q1: float = 0.3) -> SKOModel:
    """A planar double pendulum as an SKO model (SKO.md §14).

    Node ``k`` is the hinge point ``O_k`` of link ``k`` with velocity ``𝒱(k) = [ω_k, v_k]`` (world
    frame). ``𝒱(2) = φ*(1, 2) 𝒱(1) + H* θ̇_2`` with ``v_2 = v_1 + ω_1 × (O_2 − O_1)`` gives the weight;
    ``H(k) = [1, 0, 0]``; ``M(k)`` is the planar spatial inertia about ``O_k`` of a link with mass
    ``m_k`` at distance ``r_k`` along it and central inertia ``J_k``.
    """
    u1 = np.array([np.cos(q1), np.sin(q1)])
    u2 = np.array([np.cos(q1 + q2), np.sin(q1 + q2)])
    lx, ly = l1 * u1
    phi_star = np.array([[1.0, 0.0, 0.0], [-ly, 1.0, 0.0], [lx, 0.0, 1.0]])

    def inertia(m: float, J: float, r: np.ndarray) -> np.ndarray:
        c = np.array([-r[1], r[0]])  # ω × r
        return np.block([[np.array([[J + m * c @ c]]), m * c[None, :]], [m * c[:, None], m * np.eye(2)]])

    tree = TreeDigraph.from_parents({1: None, 2: 1})
    H = np.array([[1.0, 0.0, 0.0]])
    return SKOModel(tree, phi={2: phi_star.T}, H={1: H, 2: H}, M={1: inertia(m1, J1, r1 * u1), 2: inertia(m2, J2, r2 * u2)})


def double_pendulum_mass_matrix(q2: float, l1: float = 1.2, r1: float = 0.5, r2: float = 0.7, m1: float = 2.0,
                                m2: float = 1.5, J1: float = 0.1, J2: float = 0.05) -> np.ndarray:
    """The textbook closed form of the double pendulum's mass matrix."""
    c = np.cos(q2)
    M11 = J1 + J2 + m1 * r1**2 + m2 * (l1**2 + r2**2 + 2 * l1 * r2 * c)
    M12 = J2 + m2 * (r2**2 + l1 * r2 * c)
    return np.array([[M11, M12], [M12, J2 + m2 * r2**2]])


def main(output: Path | str = OUTPUT) -> dict:
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    case = make_case("jain-tree")
    model, tree = case.model, case.model.tree
    out: dict = {"bodies": len(tree), "segments": [list(tree.segments()[s]) for s in segment_order(tree)]}
    print(f"Figure 3 tree: {len(tree)} bodies in {len(tree.segments())} serial-chain segments (base → tip):")
    order = segment_order(tree)
    for s in order:
        p = tree.branch_tree().parent(s)
        print(f"  branch {order.index(s) + 1}: bodies {list(tree.segments()[s])}, parent branch "
              f"{'root' if p is None else order.index(p) + 1}")

    # 1. every lemma and algorithm
    results = run(models=[case])
    out["checks"] = {r.name: r.residual for r in results}
    out["checks_passed"] = all(r.passed for r in results)
    print(f"\n{len(results)} identity checks (SKO.md §2–§13), largest residual "
          f"{max(r.residual for r in results):.1e}: {'all pass' if out['checks_passed'] else 'FAILURES'}")
    for r in results:
        print(f"  {r.name:32s} {r.equation:40s} {r.residual:.1e} {'pass' if r.passed else 'FAIL'}")

    # 2. sparsity by serial-chain segments (Eq. 61–63, Figures 4–6)
    ops = model.dense()
    mass = alg.mass_matrix(model)
    computed = segment_patterns(model, {"E": ops.E, "phi": ops.phi, "M": mass})
    predicted = predicted_patterns(tree)
    out["patterns_match"] = all(np.array_equal(computed[k], predicted[k]) for k in predicted)
    out["E_strictly_lower"] = bool(np.all(np.triu(ops.E) == 0))  # canonical numbering
    out["M_zero_fraction"] = float(np.mean(mass == 0))
    for name, title in (("E", "ℰ_φ (Eq. 61)"), ("phi", "φ (Eq. 63, Figure 5)"), ("M", "ℳ (Figure 6)")):
        print(f"\nsegment pattern of {title}:")
        for row in computed[name]:
            print("  " + " ".join("■" if v else "·" for v in row))
    _spy(ops.E, model, "SKO operator ℰ_φ by serial-chain segments", output / "jain_E.png")
    _spy(ops.phi, model, "SPO operator φ by serial-chain segments", output / "jain_phi.png")
    _spy(mass, model, "mass matrix ℳ by serial-chain segments", output / "jain_M.png", dof=True)
    print(f"\npredicted = computed for ℰ_φ, φ, ℳ: {out['patterns_match']}; ℰ_φ strictly lower triangular "
          f"(canonical numbering): {out['E_strictly_lower']}; {100 * out['M_zero_fraction']:.0f} % of ℳ is zero")

    # 3. determinant (Eq. 52, 53)
    ab = alg.articulated_inertias(model)
    R = riccati_operators(model, ab)
    A = np.eye(model.dof_size) + ops.H @ ops.phi @ R.K
    sign, logdet = np.linalg.slogdet(mass)
    out["det_innovations"] = float(np.linalg.det(A))
    out["logdet_M"] = float(logdet)
    out["logdet_D"] = float(alg.mass_matrix_logdet(model))
    print(f"\ndet [I + H φ K] = {out['det_innovations']:.15f}   log det ℳ = {logdet:.12f}   "
          f"Σ_k log det D(k) = {out['logdet_D']:.12f}")

    # 4. operational space compliance for the tip bodies (Eq. 59, 60)
    Omega = np.asarray(alg.operational_space_compliance(model, TASK_NODES)) if hasattr(alg, "operational_space_compliance") else None
    idx = np.concatenate([np.arange(model.node_size)[model.node_slice(k)] for k in TASK_NODES])
    Omega_dense = (ops.phi.T @ ops.H.T @ np.linalg.solve(mass, ops.H @ ops.phi))[np.ix_(idx, idx)]
    if Omega is None:
        X = {k: model.H[k].T @ ab.D_inverse[k] @ model.H[k] for k in model.bodies}
        Omega = alg.backward_lyapunov(model, X, ab.psi, ab.psi).matrix()[np.ix_(idx, idx)]
    out["omega_shape"] = Omega.shape
    out["omega_error"] = float(np.abs(Omega - Omega_dense).max() / np.abs(Omega_dense).max())
    out["omega_rank"] = int(np.linalg.matrix_rank(Omega_dense))
    print(f"\nΩ for task nodes {TASK_NODES}: {Omega.shape}, rank {out['omega_rank']}, relative difference to "
          f"φ* H* ℳ^-1 H φ: {out['omega_error']:.1e}; largest entry of each block Ω(i, j):")
    for i in TASK_NODES:
        print("  " + " ".join(f"{np.abs(Omega[np.ix_(_rows(model, TASK_NODES, i), _rows(model, TASK_NODES, j))]).max():8.3f}"
                              for j in TASK_NODES))

    # 5. closed form: the double pendulum
    errors = []
    for q2 in np.linspace(-2.5, 2.5, 7):
        pendulum = double_pendulum(q2)
        exact = double_pendulum_mass_matrix(q2)
        errors.append(np.abs(alg.mass_matrix(pendulum) - exact).max())
        errors.append(abs(alg.mass_matrix_det(pendulum) - np.linalg.det(exact)))
    out["pendulum_error"] = float(max(errors))
    print(f"\ndouble pendulum: CRBA and Π det D(k) vs the closed form, largest error {out['pendulum_error']:.1e}")
    print(f"spy plots: {', '.join(p.name for p in sorted(output.glob('jain_*.png')))} in {output}")
    return out


def _rows(model: SKOModel, nodes: tuple, k) -> np.ndarray:
    """Rows of node ``k`` inside the stacked task-node block."""
    start = sum(model.node_dim(j) for j in nodes[: nodes.index(k)])
    return np.arange(start, start + model.node_dim(k))


if __name__ == "__main__":
    run_main(lambda: main(*sys.argv[1:2]))

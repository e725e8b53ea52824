"""Constraint embedding: a four-bar knee, a gripper with mimic fingers, and chains of k four-bars.

Run ``python -m papers.constraint_embedding [--max-k K] [--no-plot] [--quiet]``. It reproduces
EMBEDDING.md §5 with the cluster nodes of :mod:`sko.bodies.cluster`:

1. **Four-bar knee** (:func:`sko.examples.embedding.four_bar`): one 18 × 6 cluster node with the
   crank as its only coordinate. Simulated 2 s with RK4: the loop-closure gap (measured on the
   spanning tree's body poses) and the energy drift; the accelerations against the dense KKT
   solution of the spanning tree with its pin constraints.
2. **Gripper with mimic fingers** (:func:`sko.examples.embedding.mimic_gripper`): ``nv = 4``
   instead of 5; ``ℳ = Gᵀ ℳ_sp G`` and forward dynamics against KKT.
3. **Chains of k four-bars** (:func:`sko.examples.embedding.four_bar_chain`), k = 10 … 1000:
   time of one forward-dynamics evaluation by the articulated-body recursion on the cluster
   nodes (closure, ``G``, ``Ġθ̇`` included) against the dense KKT solution (spanning-tree
   ``ℳ_sp``, ``𝒞_sp`` and a dense solve), which is run up to ``--dense-max-k``. The embedding
   is O(k); the dense solution grows as O(k³).

Figure ``constraint_embedding.png`` (time per evaluation against k, log–log) goes to
``papers/output/`` unless ``--output`` says otherwise. :func:`main` returns what it prints.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from papers.common import OUTPUT, Progress, pyplot, run_main
from sko.examples.embedding import four_bar, four_bar_chain, mimic_gripper
from sko.simulation.simulate import simulate

__all__ = ["kkt_accelerations", "four_bar_knee", "gripper", "chain_timings", "main"]


def kkt_accelerations(system, q, v, tau=None) -> tuple[np.ndarray, np.ndarray]:
    """``(θ̈_sp by KKT, G θ̈ + Ġ v by embedding)`` at ``(q, v)``: the dense Lagrange-multiplier
    solution of the spanning tree with the cluster constraints (EMBEDDING.md §3)."""
    spanning = system.spanning_system()
    theta = system.spanning_configuration(q)
    G, Gdv, K, Kdv = system.constraint_matrices(q, v)
    thetad = G @ v
    M, C = spanning.mass_matrix(theta), spanning.bias_forces(theta, thetad)
    T = np.zeros(len(theta)) if tau is None else tau
    n, m = len(theta), K.shape[0]
    sol = np.linalg.solve(np.block([[M, K.T], [K, np.zeros((m, m))]]), np.concatenate([T - C, -Kdv]))
    embedded = G @ system.forward_dynamics(q, v, G.T @ T) + Gdv
    return sol[:n], embedded


def _relative(a, b) -> float:
    return float(np.abs(a - b).max() / max(1.0, np.abs(b).max()))


def four_bar_knee(horizon: float = 2.0, dt: float = 0.005, progress: bool = False) -> dict:
    """Closure gap, energy drift and KKT agreement of the four-bar (EMBEDDING.md §5 (b))."""
    system = four_bar()
    steps = int(round(horizon / dt))
    traj = simulate(system, system.neutral_configuration(), [0.0], dt, steps,
                    progress=Progress("four-bar knee", steps, progress).step)
    spanning = system.spanning_system()
    system.spanning_configuration(traj.q[0])
    gap, kkt = 0.0, 0.0
    for q, v in zip(traj.q[::10], traj.qd[::10]):
        poses = spanning.body_poses(system.spanning_configuration(q))
        ends = [poses[k] @ np.array([1.5, 0.0, 0.0, 1.0]) for k in ("coupler", "rocker")]
        gap = max(gap, float(np.linalg.norm(ends[0] - ends[1])))
        kkt = max(kkt, _relative(*kkt_accelerations(system, q, v)[::-1]))
    return {"bodies": len(system.body_names), "nodes": len(system.bodies), "nv": system.nv,
            "node_dim": system.sko_model(traj.q[0])[0].node_dim("crank"), "steps": steps,
            "closure_gap": gap, "energy_drift": float(np.abs(traj.energy - traj.energy[0]).max()),
            "kkt_error": kkt, "crank_range": (float(traj.q[:, 0].min()), float(traj.q[:, 0].max()))}


def gripper() -> dict:
    """The mimic gripper against the spanning tree (EMBEDDING.md §5 (a))."""
    system = mimic_gripper()
    rng = np.random.default_rng(1)
    q, v = rng.uniform(-0.5, 0.5, system.nq), rng.normal(size=system.nv)
    G = system.constraint_matrices(q, v)[0]
    M_sp = system.spanning_system().mass_matrix(system.spanning_configuration(q))
    theta = system.joint_positions(q)
    return {"nv": system.nv, "spanning_nv": len(system.spanning_configuration(q)),
            "mass_matrix_error": _relative(system.mass_matrix(q), G.T @ M_sp @ G),
            "kkt_error": _relative(*kkt_accelerations(system, q, v, rng.normal(size=G.shape[0]))[::-1]),
            "mimic_error": float(abs(theta["finger2"][0] - (0.8 * theta["finger1"][0] + 0.005)))}


def _best_time(f, repeat: int) -> float:
    best = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - start)
    return best


def chain_timings(ks=(10, 30, 100, 300, 1000), dense_max_k: int = 100, progress: bool = False) -> dict:
    """Seconds per forward-dynamics evaluation of the chain of ``k`` four-bars: embedding for
    every ``k``, dense KKT for ``k ≤ dense_max_k``; and their agreement where both run."""
    out = {"k": list(ks), "embedding": [], "dense_k": [], "dense": [], "max_error": 0.0}
    report = Progress("chains of four-bars", len(ks), progress)
    for i, k in enumerate(ks):
        system = four_bar_chain(k)
        q = system.neutral_configuration()
        v = np.full(system.nv, 0.3)
        system.forward_dynamics(q, v)  # closes every loop once from its assembly
        repeat = 3 if k <= 100 else 1
        out["embedding"].append(_best_time(lambda: system.forward_dynamics(q, v), repeat))
        if k <= dense_max_k:
            out["dense_k"].append(k)
            out["dense"].append(_best_time(lambda: kkt_accelerations(system, q, v), repeat))
            out["max_error"] = max(out["max_error"], _relative(*kkt_accelerations(system, q, v)[::-1]))
        report.step(i + 1)
    return out


def _figure(chains: dict, folder: Path) -> Path:
    plt = pyplot("papers.constraint_embedding")
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    k = np.array(chains["k"], dtype=float)
    ax.loglog(k, chains["embedding"], "o-", label="constraint embedding (cluster nodes, Algorithm 6.1)")
    if chains["dense"]:
        ax.loglog(chains["dense_k"], chains["dense"], "s-", label="dense KKT of the spanning tree")
    ax.loglog(k, chains["embedding"][0] * k / k[0], ":", color="gray", label="O(k) reference")
    ax.set_xlabel("number k of four-bar loops in the chain")
    ax.set_ylabel("time per forward-dynamics evaluation [s]")
    ax.set_title("Chains of k four-bars: embedding vs dense KKT")
    ax.legend(loc="upper left", fontsize=8, framealpha=0.9)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "constraint_embedding.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m papers.constraint_embedding", description=__doc__.splitlines()[0])
    parser.add_argument("--max-k", type=int, default=1000, help="longest chain of four-bars (default 1000)")
    parser.add_argument("--dense-max-k", type=int, default=100, help="longest chain solved by dense KKT (default 100)")
    parser.add_argument("--horizon", type=float, default=2.0, help="simulated time of the knee [s] (default 2)")
    parser.add_argument("--output", type=Path, default=OUTPUT, help=f"folder of the figure (default {OUTPUT})")
    parser.add_argument("--no-plot", action="store_true", help="write no figure")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    args = parser.parse_args(argv)
    knee = four_bar_knee(args.horizon, progress=not args.quiet)
    grip = gripper()
    ks = tuple(k for k in (10, 30, 100, 300, 1000) if k <= args.max_k) or (args.max_k,)
    chains = chain_timings(ks, args.dense_max_k, progress=not args.quiet)
    print(f"four-bar knee: {knee['bodies']} bodies in {knee['nodes']} node of dimension {knee['node_dim']}, nv = {knee['nv']}; "
          f"{knee['steps']} RK4 steps")
    print(f"  loop-closure gap {knee['closure_gap']:.1e}, energy drift {knee['energy_drift']:.1e} J, "
          f"accelerations vs dense KKT {knee['kkt_error']:.1e}")
    print(f"mimic gripper: nv = {grip['nv']} (spanning tree {grip['spanning_nv']}); ℳ = Gᵀ ℳ_sp G to {grip['mass_matrix_error']:.1e}, "
          f"forward dynamics vs KKT {grip['kkt_error']:.1e}, mimic relation {grip['mimic_error']:.1e}")
    print(f"chains of k four-bars (embedding and dense KKT agree to {chains['max_error']:.1e}):")
    print(f"{'k':>6}{'embedding [ms]':>16}{'per loop [ms]':>15}{'dense KKT [ms]':>16}")
    for i, k in enumerate(chains["k"]):
        dense = chains["dense"][chains["dense_k"].index(k)] if k in chains["dense_k"] else None
        print(f"{k:>6}{1e3 * chains['embedding'][i]:>16.1f}{1e3 * chains['embedding'][i] / k:>15.2f}"
              f"{'' if dense is None else f'{1e3 * dense:.1f}':>16}")
    result = {"knee": knee, "gripper": grip, "chains": chains}
    if not args.no_plot:
        result["figure"] = str(_figure(chains, args.output))
    print(f"figure: {result['figure']}" if "figure" in result else "figure: none (--no-plot)")
    return result


if __name__ == "__main__":
    run_main(main)

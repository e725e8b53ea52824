"""Time per node of the SPO recursions and Newton–Euler against the dense products.

    python benchmarks/bench_spo.py [--sizes 100 1000 10000] [--dense-max 2000]

The recursions (SKO.md §4, §5) should cost a flat time per node; a dense product with the
N×N operator grows quadratically (its per-node time grows linearly).
"""

from __future__ import annotations

import argparse
import sys
import timeit
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sko.engine import algorithms as alg  # noqa: E402
from sko.graphs import TreeDigraph  # noqa: E402
from sko import SKOModel  # noqa: E402


def random_rigid_like_model(n: int, seed: int = 0) -> SKOModel:
    """A random tree of ``n`` nodes of dimension 6 with one hinge dof each."""
    rng = np.random.default_rng(seed)
    parents = {0: None, **{k: int(rng.integers(max(0, k - 8), k)) for k in range(1, n)}}
    tree = TreeDigraph.from_parents(parents)
    A = rng.standard_normal((n, 6, 6))
    M = {k: A[k] @ A[k].T + 6 * np.eye(6) for k in range(n)}
    H = {k: rng.standard_normal((1, 6)) for k in range(n)}
    phi = {k: np.eye(6) + 0.1 * rng.standard_normal((6, 6)) for k in range(1, n)}
    return SKOModel(tree, phi, H, M)


def best(stmt, repeat: int = 5) -> float:
    timer = timeit.Timer(stmt)
    number, _ = timer.autorange()
    return min(timer.repeat(repeat=repeat, number=number)) / number


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 300, 600, 1000, 3000, 10000])
    parser.add_argument("--dense-max", type=int, default=600, help="largest N for the dense product")
    args = parser.parse_args()
    print(f"{'N':>6} {'phi x':>10} {'phi* x':>10} {'Newton-Euler':>13} {'dense phi x':>12}   (microseconds per node)")
    for n in args.sizes:
        model = random_rigid_like_model(n)
        x = np.random.default_rng(1).standard_normal(model.node_size)
        qdd = np.random.default_rng(2).standard_normal(model.dof_size)
        row = [best(lambda: alg.phi_apply(model, x)), best(lambda: alg.phi_star_apply(model, x)),
               best(lambda: alg.inverse_dynamics(model, qdd, a=x, b=x))]
        if n <= args.dense_max:
            phi = model.dense().phi
            row.append(best(lambda: phi @ x))
        cells = " ".join(f"{1e6 * t / n:>10.2f}" for t in row[:2]) + f" {1e6 * row[2] / n:>13.2f}"
        cells += f" {1e6 * row[3] / n:>12.2f}" if len(row) > 3 else f" {'-':>12}"
        print(f"{n:>6} {cells}", flush=True)


if __name__ == "__main__":
    main()

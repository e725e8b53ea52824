"""Cost of articulated body forward dynamics and of ℳ^{-1} y on random trees (SKO.md §10, §11).

Prints two tables:

1. time per node of the articulated body algorithm (Riccati gather + Algorithm 6.1) and of
   ``ℳ^{-1} y`` (Riccati + the O(N) passes; and the passes alone, reusing the Riccati result)
   for growing random trees: the per-node time does not grow (O(N)). "ABA cold" includes
   flattening the model into the compiled engine's arrays (:mod:`sko.engine`), which
   a new model pays once; the other columns reuse them;
2. at one size, ABA against "mass matrix by Algorithm 4.2 + dense Cholesky solve (scipy
   cho_factor/cho_solve)", with the speed-up.

Run from the repository root::

    python benchmarks/bench_forward_dynamics.py
    python benchmarks/bench_forward_dynamics.py --sizes 100 1000 --compare-size 500 --repeat 5
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
from pathlib import Path

import numpy as np
import scipy.linalg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sko.engine import algorithms as alg  # noqa: E402
from tests.strategies import SHAPES, random_model, random_tree  # noqa: E402


def best_time(function, repeat: int) -> float:
    """The fastest of ``repeat`` runs, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def build(n: int, args) -> tuple:
    tree = random_tree(n, args.seed, args.shape)
    model = random_model(tree, args.seed, node_dim=args.node_dim, hinge=args.hinge, singular=False)
    rng = np.random.default_rng(args.seed)
    T = rng.standard_normal(model.dof_size)
    a = rng.standard_normal(model.node_size)
    b = rng.standard_normal(model.node_size)
    return model, T, a, b


def scaling_table(args) -> None:
    print(f"\nO(N) scaling on random trees (shape={args.shape}, m_k={args.node_dim}, hinge={args.hinge}); "
          f"best of {args.repeat}, microseconds per node")
    print(f"{'bodies':>8} {'height':>7} {'dofs':>7} {'ABA cold':>10} {'ABA':>10} {'M^-1 y':>10} {'passes only':>12}")
    for n in args.sizes:
        model, T, a, b = build(n, args)
        # A shallow copy is a new model to the engine's cache: it is flattened again.
        cold = best_time(lambda: alg.forward_dynamics(copy.copy(model), T, a, b), args.repeat)
        aba = best_time(lambda: alg.forward_dynamics(model, T, a, b), args.repeat)
        solve = best_time(lambda: alg.mass_matrix_solve(model, T), args.repeat)
        ab = alg.articulated_inertias(model)
        passes = best_time(lambda: alg.mass_matrix_solve(model, T, ab), args.repeat)
        print(f"{n:>8} {model.tree.height:>7} {model.dof_size:>7} {cold / n * 1e6:>10.1f} {aba / n * 1e6:>10.1f} {solve / n * 1e6:>10.1f} {passes / n * 1e6:>12.1f}")


def comparison_table(args) -> bool:
    n = args.compare_size
    model, T, a, b = build(n, args)

    def crba_solve():
        M = alg.mass_matrix(model)
        bias = alg.inverse_dynamics(model, np.zeros(model.dof_size), a=a, b=b)
        return scipy.linalg.cho_solve(scipy.linalg.cho_factor(M), T - bias)

    aba = best_time(lambda: alg.forward_dynamics(model, T, a, b), args.repeat)
    cold = best_time(lambda: alg.forward_dynamics(copy.copy(model), T, a, b), args.repeat)
    crba = best_time(crba_solve, args.repeat)
    error = np.abs(alg.forward_dynamics(model, T, a, b) - crba_solve()).max()
    speedup = crba / aba
    print(f"\nABA vs mass matrix (Algorithm 4.2) + bias (Algorithm 3.1) + dense Cholesky solve, "
          f"{n} bodies (height {model.tree.height}, {model.dof_size} dofs); best of {args.repeat}")
    print(f"{'method':>34} {'seconds':>10}")
    print(f"{'ABA (Riccati + Algorithm 6.1)':>34} {aba:>10.4f}")
    print(f"{'ABA cold (flattening the model)':>34} {cold:>10.4f}")
    print(f"{'CRBA + cho_factor/cho_solve':>34} {crba:>10.4f}")
    print(f"speed-up {speedup:.1f}x (required >= {args.min_speedup:g}x), cold {crba / cold:.1f}x; max |difference| {error:.2e}")
    return speedup >= args.min_speedup


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 300, 1000, 3000, 10000], help="numbers of bodies")
    parser.add_argument("--compare-size", type=int, default=1000, help="bodies for the ABA vs CRBA + dense solve table")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (the best is reported)")
    parser.add_argument("--shape", choices=SHAPES, default="random", help="random tree shape")
    parser.add_argument("--node-dim", type=int, default=6, help="node dimension m_k")
    parser.add_argument("--hinge", choices=("one", "any", "full"), default="one", help="hinge dimensions n_k")
    parser.add_argument("--min-speedup", type=float, default=10.0, help="exit non-zero below this speed-up (warm: the model already flattened)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    scaling_table(args)
    return 0 if comparison_table(args) else 1


if __name__ == "__main__":
    sys.exit(main())

"""Time per node of every O(N) recursion of :mod:`sko.algorithms`, compiled
(:mod:`sko.engine.algorithms`), on generic SKO models.

The models are what the theory allows and a rigid robot never shows: node dimensions drawn in
1..6, non-square weights of a different shape on every arc, hinges of 0..m_k dof (welded nodes
included). Trees of 10², 10³ and 10⁴ nodes in three shapes: a chain (depth N), a binary tree
and a bushy tree (ten children per node). Each recursion is timed on a model whose flat form
is already built (its first call builds it, once per model), as the median of several runs.

Four figures per recursion summarise the table (SKO.md's O(N) claims, measured):

* **call**: the fixed cost of one call from Python (input checks, dispatch), timed on a model
  of one node: it dominates the cheap recursions at N = 10²;
* **flat**: the largest over the smallest time per node across sizes, per shape (1.0 is
  perfectly linear cost), and **flat−call** the same for the time per node beyond the fixed
  cost, ``(t(N) − call) / N``: the cost of the recursion itself;
* **chain/wide**: the chain's time per node over the bushy tree's, at the largest size.

Run from the repository root::

    python benchmarks/bench_generic.py [--sizes 100 1000 10000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sko.engine import algorithms as alg  # noqa: E402
from sko import SKOModel  # noqa: E402
from sko.graphs import TreeDigraph  # noqa: E402

SHAPES = {"chain": 1, "binary": 2, "bushy": 10}


def generic_model(n: int, shape: str, seed: int = 0) -> SKOModel:
    """``n`` nodes in ``shape``; dimensions, weights and hinges as the module docstring says.

    Weights have spectral norm below one and inertias are well conditioned, so a chain of 10⁴
    nodes neither overflows nor loses definiteness."""
    rng = np.random.default_rng(seed)
    branching = SHAPES[shape]
    tree = TreeDigraph.from_parents({k: None if k == 0 else (k - 1) // branching for k in range(n)})
    m = rng.integers(1, 7, size=n)
    phi, H, M = {}, {}, {}
    for k in range(n):
        A = rng.standard_normal((m[k], m[k]))
        M[k] = A @ A.T / m[k] + np.eye(m[k])
        H[k] = rng.standard_normal((0 if k and rng.random() < 0.2 else int(rng.integers(1, m[k] + 1)), m[k]))
        if k:
            W = rng.standard_normal((m[(k - 1) // branching], m[k]))
            phi[k] = 0.9 * W / np.linalg.norm(W, 2)
    return SKOModel(tree, phi, H, M)


def recursions(model: SKOModel, rng: np.random.Generator) -> dict[str, Callable[[], object]]:
    """Every O(N) recursion of the theory on ``model``, with fixed random inputs."""
    x = rng.standard_normal(model.node_size)
    y = rng.standard_normal(model.dof_size)
    tip = [model.tree.bodies[-1]]
    return {
        "φx": lambda: alg.phi_apply(model, x),
        "φ*x": lambda: alg.phi_star_apply(model, x),
        "φ̃x": lambda: alg.phi_tilde_apply(model, x),
        "φ̃*x": lambda: alg.phi_tilde_star_apply(model, x),
        "Newton–Euler": lambda: alg.inverse_dynamics(model, y, a=x, b=x),
        "composite inertias": lambda: alg.composite_inertias(model),
        "Riccati": lambda: alg.articulated_inertias(model),
        "innovations [I + HφK]x": lambda: alg.innovations_apply(model, y),
        "innovations inverse": lambda: alg.innovations_inverse_apply(model, y),
        "ℳ⁻¹y": lambda: alg.mass_matrix_solve(model, y),
        "log det ℳ": lambda: alg.mass_matrix_logdet(model),
        "AB forward dynamics": lambda: alg.forward_dynamics(model, y, a=x, b=x),
        "OS compliance (tip)": lambda: alg.operational_space_compliance(model, tip),
    }


def seconds(fun: Callable[[], object], rounds: int) -> float:
    """Median seconds per call over ``rounds`` timings of about 20 ms each."""
    fun()
    start = time.perf_counter()
    fun()
    number = max(1, int(0.02 / max(time.perf_counter() - start, 1e-7)))
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(number):
            fun()
        times.append((time.perf_counter() - start) / number)
    return float(np.median(times))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    table: dict[tuple[str, str], dict[int, float]] = {}
    for shape in SHAPES:
        for n in args.sizes:
            model = generic_model(n, shape)
            for name, fun in recursions(model, np.random.default_rng(1)).items():
                table.setdefault((name, shape), {})[n] = seconds(fun, args.rounds) / n
    call = {name: seconds(fun, args.rounds) for name, fun in recursions(generic_model(1, "chain"), np.random.default_rng(1)).items()}
    largest = max(args.sizes)
    head = " ".join(f"{shape:>7} N={n:<5}" for shape in SHAPES for n in args.sizes)
    print(f"ns per node; call in µs; flat = max/min over sizes; chain/wide at N = {largest}")
    print(f"{'recursion':26} {head}  {'call':>6} {'flat':>5} {'flat−call':>9} {'chain/wide':>10}")
    for name in call:
        cells = " ".join(f"{table[name, shape][n] * 1e9:13.0f}" for shape in SHAPES for n in args.sizes)
        flat = max(_spread(table[name, shape]) for shape in SHAPES)
        beyond = max(_spread({n: t - call[name] / n for n, t in table[name, shape].items()}) for shape in SHAPES)
        ratio = table[name, "chain"][largest] / table[name, "bushy"][largest]
        print(f"{name:26} {cells}  {call[name] * 1e6:6.1f} {flat:5.2f} {beyond:9.2f} {ratio:10.2f}", flush=True)
    return 0


def _spread(per_node: dict[int, float]) -> float:
    """Largest over smallest of positive per-node times (inf if some time is not positive)."""
    values = list(per_node.values())
    return max(values) / min(values) if min(values) > 0 else float("inf")


if __name__ == "__main__":
    raise SystemExit(main())

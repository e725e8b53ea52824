"""Centroidal dynamics against Pinocchio: per call, from Python, on example-robot-data robots.

Ours: ``centroidal_momentum_matrix(q)`` (``A_G``, a request of its own; ``centroidal_terms`` gives
it with ``I_G``, ``c`` and ``h_G``) against ``pinocchio.ccrba(model, data, q, v)``, which also
computes ``h_G``, ``I_G`` and the centre of mass, and ``centroidal_momentum_matrix_rate(q, v)``
(``Ȧ_G``) against ``pinocchio.dccrba``. Both take the kernels of :mod:`sko.engine.rigid_centroidal`
on these robots (library rigid bodies, float64). One process, calls interleaved; each figure is
the median over rounds of the per-round ratio ours/theirs (:func:`bench_engine.interleaved`).

Run from the repository root::

    python benchmarks/bench_centroidal.py [--rounds N]
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_engine import ROBOTS, interleaved  # noqa: E402
from sko.io import load_urdf  # noqa: E402
from tests.rigid.pinocchio_map import CoordinateMap, robots_dir  # noqa: E402


def bench(rounds: int) -> list[tuple]:
    import pinocchio as pin

    root = robots_dir()
    if root is None:
        raise SystemExit("example-robot-data is not installed")
    rows = []
    for name, (rel, floating, options) in ROBOTS.items():
        path = str(root / rel)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            system = load_urdf(path, floating_base=floating, **options)
        model = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(path)
        data, to_pin = model.createData(), CoordinateMap(system, model)
        rng = np.random.default_rng(0)
        q, v = system.random_configuration(rng), rng.standard_normal(system.nv)
        qp, vp = to_pin.q(q), to_pin.v(v)
        for ours, theirs, what in (
                (lambda: system.centroidal_momentum_matrix(q), lambda: pin.ccrba(model, data, qp, vp), "ccrba"),
                (lambda: system.centroidal_momentum_matrix_rate(q, v), lambda: pin.dccrba(model, data, qp, vp), "dccrba")):
            a, b, r = interleaved(ours, theirs, rounds)
            rows.append((name, what, a, b, r))
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args(argv)
    print(f"{'robot':<14} {'vs':<7} {'ours µs':>9} {'pin µs':>9} {'ratio':>7}")
    for name, what, a, b, r in bench(args.rounds):
        print(f"{name:<14} {what:<7} {a * 1e6:9.2f} {b * 1e6:9.2f} {r:7.2f}")


if __name__ == "__main__":
    main()

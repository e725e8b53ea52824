"""Per-call time of our rigid-body dynamics against Pinocchio on example-robot-data robots.

For each robot, both libraries load the same URDF. Ours is timed end to end (building the SKO
model at the state, then the generic recursion), the generic recursion alone on a prebuilt
model, and building the model alone (``sko_model``); Pinocchio's ``rnea``, ``crba`` and ``aba``
are timed on the same state.

Run from the repository root::

    python benchmarks/bench_pinocchio.py [--repeat N] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import timeit
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sko.engine import algorithms as alg  # noqa: E402
from sko.inertia import InertiaRepairWarning  # noqa: E402
from sko.io import load_urdf  # noqa: E402
from tests.rigid.pinocchio_map import CoordinateMap, robots_dir  # noqa: E402

ROBOTS = {
    "ur5": ("ur_description/urdf/ur5_robot.urdf", False),
    "xarm7": ("xarm_description/urdf/xarm7.urdf", False),
    "solo12": ("solo_description/robots/solo12.urdf", True),
    "anymal": ("anymal_c_simple_description/urdf/anymal.urdf", True),
    "romeo": ("romeo_description/urdf/romeo_small.urdf", True),
}


def per_call(fun, repeat: int) -> float:
    """Best-of-5 mean seconds per call."""
    number = max(1, repeat)
    return min(timeit.repeat(fun, number=number, repeat=5)) / number


def bench(repeat: int) -> list[dict]:
    import pinocchio as pin

    root = robots_dir()
    if root is None:
        raise SystemExit("example-robot-data is not installed")
    rows = []
    for name, (rel, floating) in ROBOTS.items():
        path = str(root / rel)
        with warnings.catch_warnings():  # anymal, romeo: unphysical inertias (timing does not depend on them)
            warnings.simplefilter("ignore", InertiaRepairWarning)
            system = load_urdf(path, floating_base=floating, inertia="repair")
        model = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(path)
        data = model.createData()
        cmap = CoordinateMap(system, model)
        rng = np.random.default_rng(0)
        q = system.random_configuration(rng)
        qd, qdd, tau = rng.normal(size=(3, system.nv))
        qp, vp, ap, tp = cmap.q(q), cmap.v(qd), cmap.v(qdd), cmap.v(tau)
        sko_model, a, b = system.sko_model(q, qd)
        ours = {
            "inverse_dynamics": per_call(lambda: system.inverse_dynamics(q, qd, qdd), repeat),
            "mass_matrix": per_call(lambda: system.mass_matrix(q), repeat),
            "forward_dynamics": per_call(lambda: system.forward_dynamics(q, qd, tau), repeat),
            "sko_model": per_call(lambda: system.sko_model(q, qd), repeat),
        }
        recursion = {
            "inverse_dynamics": per_call(lambda: alg.inverse_dynamics(sko_model, qdd, qd, a, b), repeat),
            "mass_matrix": per_call(lambda: alg.mass_matrix(sko_model), repeat),
            "forward_dynamics": per_call(lambda: alg.forward_dynamics(sko_model, tau, a, b), repeat),
        }
        theirs = {
            "inverse_dynamics": per_call(lambda: pin.rnea(model, data, qp, vp, ap), 50 * repeat),
            "mass_matrix": per_call(lambda: pin.crba(model, data, qp), 50 * repeat),
            "forward_dynamics": per_call(lambda: pin.aba(model, data, qp, vp, tp), 50 * repeat),
        }
        for what in theirs:
            rows.append({
                "robot": name, "bodies": len(system.bodies), "nv": system.nv, "quantity": what,
                "ours_s": ours[what], "recursion_only_s": recursion[what], "pinocchio_s": theirs[what],
                "ratio": ours[what] / theirs[what], "ratio_recursion_only": recursion[what] / theirs[what],
                "sko_model_s": ours["sko_model"],
            })
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20, help="calls per timing of our functions")
    parser.add_argument("--json", action="store_true", help="print one JSON list")
    args = parser.parse_args(argv)
    rows = bench(args.repeat)
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"{'robot':8} {'nv':>3} {'quantity':17} {'ours':>10} {'recursion':>10} {'sko_model':>10} {'pinocchio':>10} "
          f"{'ratio':>8} {'rec. ratio':>10}")
    for r in rows:
        print(f"{r['robot']:8} {r['nv']:3d} {r['quantity']:17} {r['ours_s'] * 1e3:8.3f}ms {r['recursion_only_s'] * 1e3:8.3f}ms "
              f"{r['sko_model_s'] * 1e3:8.3f}ms {r['pinocchio_s'] * 1e6:8.2f}us {r['ratio']:8.0f} {r['ratio_recursion_only']:10.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

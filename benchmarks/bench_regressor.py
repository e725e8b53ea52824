"""The joint-torque regressor against Pinocchio's ``computeJointTorqueRegressor``.

Everything runs in one process with the calls interleaved (ours, theirs, ours, …); every figure
is the median over rounds of the per-round ratio. Each callable is called before it is timed.
Robots: ur5, panda, solo12 and talos_reduced from :mod:`bench_engine`'s ``ROBOTS``.

1. **Per call**: ``system.joint_torque_regressor(q, v, dv)`` against
   ``pinocchio.computeJointTorqueRegressor`` on the same state (target ratio ≤ 2).
2. **Batches** of 1024 states (``--quick``: 64): our batched call against Pinocchio's looped from
   Python, per state (target ≤ 1), on numba's threads (all, then one: Pinocchio's loop runs on
   one).
3. **Energy rows** per call: ``kinetic_energy_regressor`` and ``potential_energy_regressor``
   against ``computeKineticEnergyRegressor`` and ``computePotentialEnergyRegressor``.

``--compile`` measures instead the cold compilation of the regressor kernels in a fresh process
with an empty numba cache: the first ``inverse_dynamics`` call (the engine's drivers and the
state kernels, which every request shares), then the first ``joint_torque_regressor`` and
energy-regressor calls (what the regressors add), then the first batch (the batch driver).

Before timing, the two regressors are compared on one state (columns matched per joint, rows
through :class:`sko.interop.PinocchioMap`) and the largest relative difference printed.

Run from the repository root::

    python benchmarks/bench_regressor.py [--rounds N] [--quick] [--compile]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_engine import ROBOTS, interleaved, load  # noqa: E402
from tests.rigid.pinocchio_map import CoordinateMap, parameter_columns  # noqa: E402

NAMES = ("ur5", "panda", "solo12", "talos_reduced")
assert set(NAMES) <= set(ROBOTS)
HEADER = f"{'robot':14} {'nv':>3}  {'row':24} {'ours µs':>10} {'theirs µs':>11} {'ratio':>7}  agreement"


COLD = """
import time
import numpy as np
from sko.examples.rigid import arm7
system = arm7()
q, v = system.random_configuration(0), np.ones(system.nv)
t = time.perf_counter(); system.inverse_dynamics(q, v, v); t1 = time.perf_counter()
system.joint_torque_regressor(q, v, v); t2 = time.perf_counter()
system.kinetic_energy_regressor(q, v); system.potential_energy_regressor(q); t3 = time.perf_counter()
Q = np.array([system.random_configuration(s) for s in range(64)])
system.joint_torque_regressor(Q, np.ones((64, system.nv)), np.ones((64, system.nv))); t4 = time.perf_counter()
print(f"first inverse_dynamics (engine, state kernels): {t1 - t:.1f} s")
print(f"then first joint_torque_regressor: {t2 - t1:.1f} s, first energy regressors: {t3 - t2:.1f} s, "
      f"first batch: {t4 - t3:.1f} s")
"""


def cold_compile() -> None:
    """The cold compilation times (module docstring), in a subprocess with an empty cache."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        out = subprocess.run([sys.executable, "-c", COLD], env=env, capture_output=True, text=True, check=True)
    print(out.stdout, end="")


def main(argv=None) -> None:
    import numba
    import pinocchio as pin

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--compile", action="store_true", help="measure the cold compile times instead")
    args = parser.parse_args(argv)
    if args.compile:
        cold_compile()
        return
    batch = 64 if args.quick else 1024
    print(HEADER)
    for name in (("ur5", "solo12") if args.quick else NAMES):
        loaded = load(name)
        if isinstance(loaded, str):
            print(f"{name:14} skipped: {loaded}")
            continue
        system, model, _ = loaded
        cmap, data = CoordinateMap(system, model), model.createData()
        rng = np.random.default_rng(0)
        q = system.random_configuration(rng)
        v, dv = rng.normal(size=(2, system.nv))
        qp, vp, ap = cmap.q(q), cmap.v(v), cmap.v(dv)
        ours = system.joint_torque_regressor(q, v, dv)[:, parameter_columns(system, model)]
        theirs = np.column_stack([cmap.v_back(c) for c in pin.computeJointTorqueRegressor(model, data, qp, vp, ap).T])
        agreement = np.abs(ours - theirs).max() / np.abs(theirs).max()
        t_o, t_t, ratio = interleaved(lambda: system.joint_torque_regressor(q, v, dv),
                                      lambda: pin.computeJointTorqueRegressor(model, data, qp, vp, ap), args.rounds)
        print(f"{name:14} {system.nv:3d}  {'per call':24} {t_o * 1e6:10.1f} {t_t * 1e6:11.1f} {ratio:7.2f}  {agreement:.1e}")
        for row, ours_call, theirs_call in (
                ("kinetic energy row", lambda: system.kinetic_energy_regressor(q, v),
                 lambda: pin.computeKineticEnergyRegressor(model, data, qp, vp)),
                ("potential energy row", lambda: system.potential_energy_regressor(q),
                 lambda: pin.computePotentialEnergyRegressor(model, data, qp))):
            t_o, t_t, ratio = interleaved(ours_call, theirs_call, args.rounds)
            print(f"{name:14} {system.nv:3d}  {row:24} {t_o * 1e6:10.1f} {t_t * 1e6:11.1f} {ratio:7.2f}")
        Q = np.array([system.random_configuration(rng) for _ in range(batch)])
        V, A = rng.normal(size=(2, batch, system.nv))
        QP, VP, AP = (np.array([f(x) for x in X]) for f, X in ((cmap.q, Q), (cmap.v, V), (cmap.v, A)))

        def looped():
            for i in range(batch):
                pin.computeJointTorqueRegressor(model, data, QP[i], VP[i], AP[i])

        for threads in (numba.config.NUMBA_NUM_THREADS, 1):
            numba.set_num_threads(threads)
            t_o, t_t, ratio = interleaved(lambda: system.joint_torque_regressor(Q, V, A), looped,
                                          max(1, args.rounds // 2))
            row = f"batch of {batch}, {threads} thr"
            print(f"{name:14} {system.nv:3d}  {row:24} {t_o / batch * 1e6:10.1f} {t_t / batch * 1e6:11.1f} {ratio:7.2f}")
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)


if __name__ == "__main__":
    main()

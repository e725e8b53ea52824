"""Batched rollouts against ``mujoco.rollout``: the cost of one state-step.

ur5 and panda from example-robot-data (URDF; MuJoCo loads the same file with meshes stripped,
contacts and constraints disabled, its RK4 integrator). Both roll out ``B`` random initial
states for ``steps`` steps of 1 ms with zero controls, on one thread each (numba's threads set to
one; one ``MjData``), then ours on every core. Each figure is the median over rounds, ours and
theirs interleaved; the table gives µs per state-step and the ratio, and ours against four of our
forward dynamics per state in a batch of the same states (the work of an RK4 step; target ≤ 1.2).
Compile time is not measured (everything is called once first).

Run from the repository root::

    python benchmarks/bench_rollout.py [--rounds N] [--quick]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numba  # noqa: E402

import sko  # noqa: E402
from benchmarks.bench_engine import ROBOTS, load, mujoco_model  # noqa: E402

NAMES = ("ur5", "panda")


def _seconds(fun) -> float:
    start = time.perf_counter()
    fun()
    return time.perf_counter() - start


def bench(name: str, B: int, steps: int, rounds: int) -> list[str]:
    loaded = load(name)
    if isinstance(loaded, str):
        return [f"{name:8} skipped: {loaded}"]
    system, _, path = loaded
    model = mujoco_model(path)
    if isinstance(model, str):
        return [f"{name:8} skipped: {model}"]
    import mujoco
    from mujoco import rollout as mj_rollout

    model.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
    model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT | mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
    model.opt.timestep = 1e-3
    data = mujoco.MjData(model)
    rng = np.random.default_rng(0)
    Q0 = np.array([system.random_configuration(rng) for _ in range(B)])
    V0 = rng.normal(size=(B, system.nv))
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    initial = np.empty((B, mujoco.mj_stateSize(model, spec)))
    for s in range(B):
        data.qpos[:] = rng.uniform(-1, 1, size=model.nq)
        data.qvel[:] = V0[s, :model.nv] if model.nv == system.nv else 0.0
        mujoco.mj_getState(model, data, initial[s], spec)
    control = np.zeros((B, steps, model.nu))

    def ours():
        sko.rollout(system, Q0, V0, 1e-3, steps)

    def theirs():
        mj_rollout.rollout(model, data, initial, control, nstep=steps)

    def four_fd():
        for _ in range(4):
            system.forward_dynamics(Q0, V0)

    per = B * steps
    numba.set_num_threads(1)
    for f in (ours, theirs, four_fd):
        f()
    rows = {"ours": [], "theirs": [], "fd": [], "ours_all": []}
    for _ in range(rounds):
        numba.set_num_threads(1)
        rows["ours"].append(_seconds(ours) / per)
        rows["theirs"].append(_seconds(theirs) / per)
        rows["fd"].append(_seconds(four_fd) / B)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        rows["ours_all"].append(_seconds(ours) / per)
    med = {k: float(np.median(v)) * 1e6 for k, v in rows.items()}
    ratio = float(np.median(np.array(rows["ours"]) / np.array(rows["theirs"])))
    cores = numba.config.NUMBA_NUM_THREADS
    return [f"{name:8} nv={system.nv:2}  ours {med['ours']:6.2f} µs  mujoco.rollout {med['theirs']:6.2f} µs  "
            f"ratio {ratio:4.2f}   ours/(4 FD) {med['ours'] / med['fd']:4.2f}   "
            f"ours on {cores} threads {med['ours_all']:6.2f} µs ({med['ours_all'] / med['theirs']:4.2f}×)"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="64 states × 100 steps")
    args = parser.parse_args(argv)
    B, steps = (64, 100) if args.quick else (1024, 1000)
    print(f"rollouts of {B} states × {steps} steps (RK4, dt = 1 ms); µs per state-step, median of {args.rounds} rounds")
    for name in NAMES:
        assert name in ROBOTS
        for line in bench(name, B, steps, args.rounds):
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The compiled engine against Pinocchio and MuJoCo: single calls, batches, generic trees.

Everything runs in one process with the calls interleaved (ours, theirs, ours, …); every figure
is the median over rounds of the per-round ratio, so a noisy shared machine biases neither side.

1. **Robots** (example-robot-data URDFs; a robot that does not load is skipped with the reason):
   inverse dynamics, mass matrix and forward dynamics from Python, our model build at the state
   included, against ``pinocchio.rnea``, ``crba`` and ``aba`` on the same state.
2. **Batches** of 1024 states: our forward dynamics on a ``(B, n)`` batch against Pinocchio's
   ``aba`` looped from Python and ``pinocchio.abaInParallel`` (one thread; and both cores against
   our batch on as many numba threads), our ℳ on the batch against ``crba`` looped (one thread),
   and MuJoCo's ``mj_forward`` per state where the URDF
   loads in MuJoCo (meshes stripped; MuJoCo adds no floating base to a URDF).
3. **Generic trees** of 10², 10³, 10⁴ revolute bodies (chain, binary, bushy with ten children
   per node): time per body of inverse and forward dynamics (O(N): flat per body).

Run from the repository root::

    python benchmarks/bench_engine.py [--rounds N] [--quick]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sko.examples.rigid import rod_inertia  # noqa: E402
from sko.bodies import Revolute  # noqa: E402
from sko.spatial import pose_transform  # noqa: E402
from sko.systems import RigidSystem, SystemBuilder  # noqa: E402
from sko.io import load_urdf  # noqa: E402
from tests.rigid.pinocchio_map import CoordinateMap, robots_dir  # noqa: E402

#: name: (URDF in example-robot-data, floating base, our loader's options). Pinocchio frees mimic
#: joints, so panda loads them "independent" here too; anymal_c and romeo_small ship link
#: inertias that break the triangle inequality, which our loader rejects unless repaired (the
#: repaired values differ from Pinocchio's, so only the timing compares, not the numbers).
ROBOTS = {
    "ur5": ("ur_description/urdf/ur5_robot.urdf", False, {}),
    "panda": ("panda_description/urdf/panda.urdf", False, {"mimic": "independent"}),
    "solo12": ("solo_description/robots/solo12.urdf", True, {}),
    "anymal_c": ("anymal_c_simple_description/urdf/anymal.urdf", True, {"inertia": "repair"}),
    "romeo_small": ("romeo_description/urdf/romeo_small.urdf", True, {"inertia": "repair"}),
    "talos_reduced": ("talos_data/robots/talos_reduced.urdf", True, {}),
}
BATCH = 1024


def seconds_per_call(fun, number: int) -> float:
    start = time.perf_counter()
    for _ in range(number):
        fun()
    return (time.perf_counter() - start) / number


def calibrate(fun, target: float = 2e-3) -> int:
    """Calls per timing so that one timing lasts about ``target`` seconds."""
    fun()
    t = seconds_per_call(fun, 3)
    return max(1, int(target / max(t, 1e-8)))


def interleaved(ours, theirs, rounds: int) -> tuple[float, float, float]:
    """Median seconds per call of each and the median of the per-round ratios ours/theirs."""
    n_ours, n_theirs = calibrate(ours), calibrate(theirs)
    a, b = [], []
    for _ in range(rounds):
        a.append(seconds_per_call(ours, n_ours))
        b.append(seconds_per_call(theirs, n_theirs))
    a, b = np.array(a), np.array(b)
    return float(np.median(a)), float(np.median(b)), float(np.median(a / b))


# ---------------------------------------------------------------------------- robots
def load(name: str):
    """``(ours, pinocchio model, path)`` or a string saying why the robot is skipped."""
    import pinocchio as pin

    root = robots_dir()
    if root is None:
        return "example-robot-data is not installed"
    rel, floating, options = ROBOTS[name]
    path = root / rel
    if not path.exists():
        return f"{rel} is not in example-robot-data"
    try:
        with warnings.catch_warnings():  # the repair's warning: the ROBOTS note says it
            warnings.simplefilter("ignore")
            ours = load_urdf(str(path), floating_base=floating, **options)
    except Exception as exc:  # a URDF feature our loader does not support yet (e.g. mimic joints)
        return f"our URDF loader: {type(exc).__name__}: {str(exc)[:90]}"
    model = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(str(path))
    if model.nv != ours.nv:
        return f"Pinocchio has nv = {model.nv}, we have {ours.nv} (mimic joints are coupled in Pinocchio)"
    return ours, model, path


def mujoco_model(path: Path):
    """The URDF in MuJoCo with visual and collision meshes stripped, or the reason it fails."""
    try:
        import mujoco
    except ImportError:
        return "mujoco is not installed"
    tree = ET.parse(path)
    ET.SubElement(ET.SubElement(tree.getroot(), "mujoco"), "compiler", balanceinertia="true", discardvisual="true")
    for link in tree.getroot().iter("link"):
        for tag in ("visual", "collision"):
            for el in link.findall(tag):
                link.remove(el)
    try:
        return mujoco.MjModel.from_xml_string(ET.tostring(tree.getroot(), encoding="unicode"))
    except Exception as exc:
        return f"MuJoCo: {str(exc).splitlines()[0][:90]}"


def random_state(name: str):
    """``(ours, pinocchio model, its data, coordinate map, path, (q, θ̇, θ̈, T), the same in
    Pinocchio's coordinates)`` at a reproducible random state, or a string saying why the robot
    is skipped."""
    loaded = load(name)
    if isinstance(loaded, str):
        return loaded
    system, model, path = loaded
    cmap = CoordinateMap(system, model)
    rng = np.random.default_rng(0)
    q = system.random_configuration(rng)
    v, dv, tau = rng.normal(size=(3, system.nv))
    return system, model, model.createData(), cmap, path, (q, v, dv, tau), (cmap.q(q), cmap.v(v), cmap.v(dv), cmap.v(tau))


def bench_robot(name: str, rounds: int, batch: bool) -> list[str]:
    import pinocchio as pin

    state = random_state(name)
    if isinstance(state, str):
        return [f"{name:14} skipped: {state}"]
    system, model, data, cmap, path, (q, v, dv, tau), (qp, vp, ap, tp) = state
    if "inertia" not in ROBOTS[name][2]:  # the two agree before they are timed
        assert np.allclose(cmap.v(system.inverse_dynamics(q, v, dv)), pin.rnea(model, data, qp, vp, ap), atol=1e-8)
        assert np.allclose(cmap.v(system.forward_dynamics(q, v, tau)), pin.aba(model, data, qp, vp, tp), atol=1e-6)
    lines = []
    cells = []
    for label, ours, theirs in (
        ("ID", lambda: system.inverse_dynamics(q, v, dv), lambda: pin.rnea(model, data, qp, vp, ap)),
        ("M", lambda: system.mass_matrix(q), lambda: pin.crba(model, data, qp)),
        ("FD", lambda: system.forward_dynamics(q, v, tau), lambda: pin.aba(model, data, qp, vp, tp)),
    ):
        a, b, r = interleaved(ours, theirs, rounds)
        cells.append(f"{label} {a * 1e6:7.2f} µs {r:5.2f}×")
    lines.append(f"{name:14} nv={system.nv:3d}  " + "  ".join(cells))
    if batch:
        lines += bench_batch(name, system, model, cmap, path, rounds)
    return lines


def bench_batch(name: str, system, model, cmap, path, rounds: int) -> list[str]:
    import numba
    import pinocchio as pin

    rng = np.random.default_rng(1)
    Q = np.array([system.random_configuration(rng) for _ in range(BATCH)])
    V, TAU = rng.normal(size=(2, BATCH, system.nv))
    Qp = np.array([cmap.q(q) for q in Q]).T.copy()
    Vp, Tp = V[:, cmap.v_perm].T.copy(), TAU[:, cmap.v_perm].T.copy()
    data = model.createData()
    threads = numba.config.NUMBA_NUM_THREADS
    out = []
    got = system.forward_dynamics(Q, V, TAU)
    pool = pin.ModelPool(model, threads)
    if "inertia" not in ROBOTS[name][2]:
        assert np.allclose(got[:, cmap.v_perm].T, pin.abaInParallel(1, pool, Qp, Vp, Tp), atol=1e-6)

    def looped():
        for s in range(BATCH):
            pin.aba(model, data, Qp[:, s], Vp[:, s], Tp[:, s])

    def ours():
        system.forward_dynamics(Q, V, TAU)

    numba.set_num_threads(1)
    a, b, r = interleaved(ours, looped, rounds)
    out.append(f"{'':14} batch {BATCH} FD, 1 thread: {a / BATCH * 1e6:6.2f} µs/state, {r:5.2f}× Pinocchio aba looped "
               f"({b / BATCH * 1e6:.2f} µs/state)")
    a, b, r = interleaved(ours, lambda: pin.abaInParallel(1, pool, Qp, Vp, Tp), rounds)
    out.append(f"{'':14} batch {BATCH} FD, 1 thread: {r:5.2f}× abaInParallel(1) ({b / BATCH * 1e6:.2f} µs/state)")

    def looped_mass():
        for s in range(BATCH):
            pin.crba(model, data, Qp[:, s])

    a, b, r = interleaved(lambda: system.mass_matrix(Q), looped_mass, rounds)
    out.append(f"{'':14} batch {BATCH} ℳ, 1 thread: {a / BATCH * 1e6:6.2f} µs/state, {r:5.2f}× Pinocchio crba looped "
               f"({b / BATCH * 1e6:.2f} µs/state)")
    numba.set_num_threads(threads)
    if threads > 1:
        a, b, r = interleaved(ours, lambda: pin.abaInParallel(threads, pool, Qp, Vp, Tp), rounds)
        out.append(f"{'':14} batch {BATCH} FD, {threads} threads: {a / BATCH * 1e6:6.2f} µs/state, {r:5.2f}× "
                   f"abaInParallel({threads})")
    mj = mujoco_model(path)
    if isinstance(mj, str):
        out.append(f"{'':14} MuJoCo skipped: {mj}")
    else:
        import mujoco

        md = mujoco.MjData(mj)
        a, b, r = interleaved(lambda: system.forward_dynamics(Q[0], V[0], TAU[0]), lambda: mujoco.mj_forward(mj, md), rounds)
        out.append(f"{'':14} MuJoCo mj_forward (nv={mj.nv}) {b * 1e6:.2f} µs; our FD {r:5.2f}× that")
    return out


# ---------------------------------------------------------------------------- generic trees
def tree_system(n: int, shape: str) -> RigidSystem:
    """``n`` revolute bodies: a chain, a binary tree or a bushy tree (ten children per node)."""
    b = SystemBuilder()
    branching = {"chain": 1, "binary": 2, "bushy": 10}[shape]
    rod = rod_inertia(1.0, 0.5)
    for i in range(n):
        parent = None if i == 0 else f"b{(i - 1) // branching}"
        b.add_body(f"b{i}", parent, Revolute([0.0, 1.0, 0.2 * (i % 3)]), pose_transform([0.0, 0.0, 0.5]),
                   mass=1.0, com=[0.0, 0.0, 0.25], inertia_com=rod)
    return b.build()


def bench_trees(sizes, rounds: int) -> list[str]:
    lines = []
    for shape in ("chain", "binary", "bushy"):
        cells = []
        for n in sizes:
            system = tree_system(n, shape)
            rng = np.random.default_rng(2)
            q, v, dv = rng.normal(size=(3, system.nv))
            tid = np.median([seconds_per_call(lambda: system.inverse_dynamics(q, v, dv), calibrate(lambda: system.inverse_dynamics(q, v, dv))) for _ in range(rounds)])
            tfd = np.median([seconds_per_call(lambda: system.forward_dynamics(q, v, dv), calibrate(lambda: system.forward_dynamics(q, v, dv))) for _ in range(rounds)])
            cells.append(f"N={n:5d}: ID {tid / n * 1e9:6.1f} ns/body, FD {tfd / n * 1e9:6.1f} ns/body")
        lines.append(f"{shape:7} " + " | ".join(cells))
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9, help="interleaved rounds per figure (median)")
    parser.add_argument("--quick", action="store_true", help="ur5 and solo12 only, trees up to 10³, no batches")
    args = parser.parse_args(argv)
    robots = ["ur5", "solo12"] if args.quick else list(ROBOTS)
    print("single calls from Python (model build at the state included); ratio = ours / Pinocchio")
    for name in robots:
        for line in bench_robot(name, args.rounds, batch=not args.quick):
            print(line, flush=True)
    print("generic trees of revolute bodies (compiled path), time per body")
    for line in bench_trees((100, 1000) if args.quick else (100, 1000, 10000), args.rounds):
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

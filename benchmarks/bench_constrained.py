"""Per-call time of the constrained dynamics against Pinocchio's ``constraintDynamics``
(CONSTRAINTS.md §3), and its growth with the number of bodies at a fixed number of constraint rows.

Robots: talos on both feet (6-D), solo12 on four feet (3-D), both libraries loading the same URDF
at the same state; the ratio is ours / Pinocchio's, for one call and per state of a batch of
1024 states (ours one batched call, Pinocchio a loop; the two timed in alternation), with the
largest relative difference of ``v̇`` and ``λ``. Chains: planar chains of growing length with the tip held at a point in the
chain's plane (2 rows), the time per body should stay flat (O(N + m³)); and a chain of 64
bodies with 1 to 8 such points along it (m = 2 … 16 rows).

Run from the repository root::

    python benchmarks/bench_constrained.py [--repeat N] [--json] [--standing] [--compile]

``--standing`` adds solo12 standing on four point contacts for 10 s under gravity (a PD controller
on the joints, Baumgarte (100, 20)) and reports the largest foot drift. ``--compile`` measures the
cold compile time in a fresh process with an empty numba cache: the forward dynamics first (the
recursions the constrained kernel shares), then the constrained dynamics' own kernels.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import timeit
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sko.constraints import FrameConstraint, FrameContact, PointContact  # noqa: E402
from sko.examples.rigid import planar_chain  # noqa: E402
from sko.interop import PinocchioMap  # noqa: E402
from sko.io import load_urdf  # noqa: E402
from tests.rigid.pinocchio_map import robots_dir  # noqa: E402

ROBOTS = {
    "talos (2 feet, 6-D)": ("talos_data/robots/talos_reduced.urdf", ("left_sole_link", "right_sole_link"), "6d"),
    "solo12 (4 feet, 3-D)": ("solo_description/robots/solo12.urdf", ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"), "3d"),
}
CHAINS = (8, 16, 32, 64, 128)


def per_call(fun, repeat: int, timer=time.process_time) -> float:
    """Best-of-5 mean seconds per call: of this process's CPU time (a shared machine's other load
    does not count), wall time for the parallel batches."""
    return min(timeit.repeat(fun, number=repeat, repeat=5, timer=timer)) / repeat


def paired(ours, theirs, repeat: int, timer=time.process_time, rounds: int = 15) -> tuple[float, float]:
    """Best-of-``rounds`` mean seconds per call of two functions timed in alternation, so that a
    shared machine's load, which drifts between rounds, weighs on both alike (timers as
    :func:`per_call`)."""
    a, b = [], []
    for _ in range(rounds):
        a.append(timeit.timeit(ours, number=repeat, timer=timer) / repeat)
        b.append(timeit.timeit(theirs, number=repeat, timer=timer) / repeat)
    return min(a), min(b)


def bench_robots(repeat: int) -> list[dict]:
    import pinocchio as pin

    root = robots_dir()
    if root is None:
        raise SystemExit("example-robot-data is not installed")
    rows = []
    for name, (rel, frames, kind) in ROBOTS.items():
        path = str(root / rel)
        system = load_urdf(path, floating_base=True)
        model = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
        cmap = PinocchioMap(system, model)
        make = PointContact if kind == "3d" else FrameContact
        ours = [make(f, reference="local") for f in frames]
        contact = pin.ContactType.CONTACT_3D if kind == "3d" else pin.ContactType.CONTACT_6D
        cms = pin.StdVec_RigidConstraintModel([
            pin.RigidConstraintModel(contact, model, model.frames[model.getFrameId(f)].parentJoint,
                                     model.frames[model.getFrameId(f)].placement, pin.ReferenceFrame.LOCAL)
            for f in frames])
        cds = pin.StdVec_RigidConstraintData([c.createData() for c in cms])
        data = model.createData()
        pin.initConstraintDynamics(model, data, cms, cds)
        prox = pin.ProximalSettings(1e-14, 1e-14, 0.0, 1)
        rng = np.random.default_rng(0)
        q = system.random_configuration(rng)
        v, tau = rng.normal(size=(2, system.nv))
        qp, vp, tp = cmap.q(q), cmap.v(v), cmap.v(tau)
        dv, lam = system.constrained_dynamics(q, v, tau, ours)  # compile on first use, outside the timing
        a = pin.constraintDynamics(model, data, qp, vp, tp, cms, cds, prox)
        error = max(np.abs(cmap.v(dv) - a).max() / np.abs(a).max(),
                    np.abs(lam - data.lambda_c).max() / np.abs(data.lambda_c).max())
        t_ours, t_pin = paired(lambda: system.constrained_dynamics(q, v, tau, ours),
                               lambda: pin.constraintDynamics(model, data, qp, vp, tp, cms, cds, prox), repeat * 10)
        B = 1024
        Q = np.stack([system.random_configuration(rng) for _ in range(B)])
        V, T = rng.normal(size=(2, B, system.nv))
        Qp, Vp, Tp = [cmap.q(x) for x in Q], [cmap.v(x) for x in V], [cmap.v(x) for x in T]
        system.constrained_dynamics(Q, V, T, ours)

        def pin_batch():
            for s in range(B):
                pin.constraintDynamics(model, data, Qp[s], Vp[s], Tp[s], cms, cds, prox)

        b_ours, b_pin = (t / B for t in paired(lambda: system.constrained_dynamics(Q, V, T, ours), pin_batch, 1,
                                               time.perf_counter, 5))
        rows.append({"case": name, "nv": system.nv, "rows": sum(c.dimension for c in ours), "ours_us": t_ours * 1e6,
                     "pinocchio_us": t_pin * 1e6, "ratio": t_ours / t_pin, "batch_ours_us": b_ours * 1e6,
                     "batch_pinocchio_us": b_pin * 1e6, "batch_ratio": b_ours / b_pin, "relative_error": error})
    return rows


def _in_plane(frame):
    """A point of a planar chain (joints about y) held in the chain's x–z plane: 2 rows (a 3-D
    point contact would be redundant there: its y row is zero)."""
    return FrameConstraint(frame, directions=(0, 2), reference="local_world_aligned")


def bench_chains(repeat: int) -> list[dict]:
    rows = []
    for n in CHAINS:
        system = planar_chain(n)
        c = [_in_plane("tip")]
        rng = np.random.default_rng(n)
        q, v, tau = rng.normal(size=(3, system.nv))
        system.constrained_dynamics(q, v, tau, c)
        t = per_call(lambda: system.constrained_dynamics(q, v, tau, c), repeat)
        rows.append({"case": f"planar chain, {n} bodies, tip at a point", "nv": n, "rows": 2, "ours_us": t * 1e6,
                     "per_body_us": t * 1e6 / n})
    system = planar_chain(64)
    rng = np.random.default_rng(1)
    q, v, tau = rng.normal(size=(3, system.nv))
    for k in (1, 2, 4, 8):
        c = [_in_plane("tip")] + [_in_plane(f"link{64 - 7 * i}") for i in range(1, k)]
        system.constrained_dynamics(q, v, tau, c)
        t = per_call(lambda: system.constrained_dynamics(q, v, tau, c), repeat)
        rows.append({"case": f"planar chain, 64 bodies, {k} points", "nv": 64, "rows": 2 * k, "ours_us": t * 1e6,
                     "per_body_us": t * 1e6 / 64})
    return rows


COLD = """
import time, numpy as np
from sko.examples.rigid import humanoid
from sko.constraints import FrameContact, PointContact
s = humanoid()
q, v, tau = s.random_configuration(np.random.default_rng(0)), np.zeros(s.nv), np.zeros(s.nv)
t0 = time.perf_counter(); s.forward_dynamics(q, v, tau); t1 = time.perf_counter()
s.constrained_dynamics(q, v, tau, [FrameContact("left_sole"), PointContact("right_sole")]); t2 = time.perf_counter()
s.impulse_dynamics(q, v, [FrameContact("left_sole")]); t3 = time.perf_counter()
print(t1 - t0, t2 - t1, t3 - t2)
"""


def cold_compile() -> dict:
    """Seconds to compile in a fresh process with an empty numba cache (module docstring)."""
    import os
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        root = Path(__file__).resolve().parents[1]
        done = subprocess.run([sys.executable, "-c", COLD], env=env, cwd=root, capture_output=True, text=True, check=True)
    shared, constrained, impulse = (float(x) for x in done.stdout.split())
    return {"case": "cold compile (empty cache)", "forward_dynamics_s": shared, "constrained_s": constrained,
            "impulse_s": impulse}


def standing(seconds: float = 10.0, dt: float = 2e-3) -> dict:
    """solo12 standing on four point contacts for ``seconds`` (semi-implicit Euler): the drift."""
    from tests.constraints.test_rollout import standing_solo12

    start = timeit.default_timer()
    out, _ = standing_solo12(seconds, dt)
    return {"case": f"solo12 standing {seconds:g} s (dt {dt:g})", "drift_m": float(out.drift),
            "wall_s": timeit.default_timer() - start}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--standing", action="store_true", help="also roll solo12 standing for 10 s")
    parser.add_argument("--compile", action="store_true", help="also measure the cold compile time")
    args = parser.parse_args()
    rows = (bench_robots(args.repeat) + bench_chains(args.repeat) + ([standing()] if args.standing else [])
            + ([cold_compile()] if args.compile else []))
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    for r in rows:
        if "constrained_s" in r:
            print(f"{r['case']:<42} forward dynamics {r['forward_dynamics_s']:.0f} s, then constrained "
                  f"{r['constrained_s']:.0f} s, impulse {r['impulse_s']:.0f} s")
            continue
        if "drift_m" in r:
            print(f"{r['case']:<42} drift {r['drift_m']:.1e} m  ({r['wall_s']:.0f} s)")
            continue
        extra = (f"pinocchio {r['pinocchio_us']:9.1f} µs   ratio {r['ratio']:5.2f}   batch of 1024: "
                 f"{r['batch_ours_us']:6.1f} / {r['batch_pinocchio_us']:6.1f} µs per state, ratio "
                 f"{r['batch_ratio']:5.2f}   max rel. diff {r['relative_error']:.1e}" if "ratio" in r
                 else f"per body {r['per_body_us']:7.2f} µs")
        print(f"{r['case']:<42} nv {r['nv']:4d}  m {r['rows']:2d}  ours {r['ours_us']:9.1f} µs   {extra}")


if __name__ == "__main__":
    main()

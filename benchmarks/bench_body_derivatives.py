"""Derivatives of body types that are not rigid against the analytic derivatives of a rigid system
of the same size (DERIVATIVES.md §9; target ≤ 5×).

The tutorial's arm with a carriage (``papers/tutorial_body_with_children.py``: two arms with an
internal slide coordinate, a bob; nv = 5) against :func:`rigid_equivalent`, the same mechanism
from the library's rigid bodies (each carriage a body on a prismatic joint: nv = 5), whose
derivatives take the compiled analytic recursion. Rows: the default method (``"auto"``, the local
recursion) and the whole complex step (``"complex_step"``), for inverse and forward dynamics,
with the tutorial's springs as it writes them (a compiled hook beside the Python method), with
them in Python alone (:class:`PythonSpringArm`: a Python call per complex step), and without them
(:class:`SpringlessArm`: the same work as the rigid peer). Also a random tree of flexible bodies, rotors and rigid
bodies against a rigid tree of the same shape and nv (:func:`rigid_peer`).

Everything runs in one process on one numba thread with the calls interleaved (ours, the peer,
ours, …); every figure is the median over rounds of the per-round ratio. Each callable is called
before it is timed (compile time is not measured here).

Run from the repository root::

    python benchmarks/bench_body_derivatives.py [--rounds N]
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_engine import interleaved  # noqa: E402
from papers.tutorial_body_with_children import CarriageArm, build, rigid_equivalent  # noqa: E402
from sko.bodies import BodyType, Prismatic, Revolute, RigidBody  # noqa: E402
from sko.examples.bodies import random_system  # noqa: E402
from sko.spatial import pose_transform, spatial_inertia  # noqa: E402
from sko.systems import MultibodySystem  # noqa: E402

HEADER = f"{'system':34} {'nv':>3}  {'row':34} {'ours µs':>9} {'peer µs':>9} {'ratio':>7}"


class PythonSpringArm(CarriageArm):
    """The tutorial's arm with its spring in Python alone: no compiled hook."""

    def compiled_state(self):
        return replace(super().compiled_state(), hinge_force=None)


class SpringlessArm(PythonSpringArm):
    """The tutorial's arm without its spring: no hinge force."""

    hinge_force = BodyType.hinge_force


def with_arms(system: MultibodySystem, kind: type) -> MultibodySystem:
    """``system`` with each :class:`CarriageArm` replaced by one of ``kind``."""
    bodies = []
    for k in system.bodies:
        b = system.body(k)
        if isinstance(b, CarriageArm):
            b = kind(b.name, b.parent, b.axis, b.inertia, b.carriage_mass, b.start, b.direction, b.stiffness,
                     origin=b.origin, rotation=b.rotation)
        bodies.append(b)
    return MultibodySystem(bodies, gravity=system.gravity)


def rigid_peer(system: MultibodySystem) -> MultibodySystem:
    """A rigid tree with the same parents and one rigid body per velocity coordinate (a chain of
    revolute and prismatic bodies standing in for each body's coordinates), so nv is the same."""
    rng = np.random.default_rng(0)
    bodies, last = [], {}
    for k in system.bodies:
        body = system.body(k)
        parent = None if body.parent is None else last[body.parent]
        for i in range(max(body.dof_size, 1)):
            name = f"{k}.{i}"
            joint = Revolute(rng.normal(size=3)) if i % 2 == 0 else Prismatic(rng.normal(size=3))
            bodies.append(RigidBody(name, parent, joint, spatial_inertia(1.0, rng.normal(size=3) * 0.1, 0.05 * np.eye(3)),
                                    placement=pose_transform(rng.normal(size=3) * 0.3)))
            parent = name
        last[k] = parent
    return MultibodySystem(bodies, gravity=system.gravity)


def compare(label: str, ours_system, peer, rounds: int) -> list[str]:
    rng = np.random.default_rng(1)
    q, v, a, tau = ours_system.random_configuration(rng), *rng.standard_normal((3, ours_system.nv))
    qp = peer.random_configuration(rng)
    assert peer.nv == ours_system.nv, (peer.nv, ours_system.nv)
    lines = []
    for what, ours, theirs in (
        ("ID", lambda m: ours_system.inverse_dynamics_derivatives(q, v, a, method=m),
         lambda: peer.inverse_dynamics_derivatives(qp, v, a, method="analytic")),
        ("FD", lambda m: ours_system.forward_dynamics_derivatives(q, v, tau, method=m),
         lambda: peer.forward_dynamics_derivatives(qp, v, tau, method="analytic")),
    ):
        for method in ("auto", "complex_step"):
            t_ours, t_peer, r = interleaved(lambda m=method: ours(m), theirs, rounds)
            lines.append(f"{label:34} {ours_system.nv:3d}  {what + ' ' + method + ' vs rigid analytic':34} "
                         f"{t_ours * 1e6:9.1f} {t_peer * 1e6:9.1f} {r:7.2f}")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="interleaved rounds per figure (median)")
    args = parser.parse_args(argv)
    import numba

    numba.set_num_threads(1)
    tutorial = build()
    mixed = random_system(3, n_bodies=6)
    print("ratio = ours / the rigid peer's analytic derivatives (median of per-round ratios); target ≤ 5")
    print(HEADER)
    peer = rigid_equivalent(tutorial)
    for label, ours, peer in (("arm with carriage (springs, hook)", tutorial, peer),
                              ("arm with carriage (springs, Python)", with_arms(tutorial, PythonSpringArm), peer),
                              ("arm with carriage (no springs)", with_arms(tutorial, SpringlessArm), peer),
                              ("flexible/rotor/rigid tree", mixed, rigid_peer(mixed))):
        for line in compare(label, ours, peer, args.rounds):
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

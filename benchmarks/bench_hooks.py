"""What a spring costs a body type: the tutorial's beads with their spring as a compiled hinge
force (``sko.engine.hooks``), against the same beads without a spring, and with the spring left
to Python (a ``hinge_force`` without a compiled hook).

Forward and inverse dynamics of one state, a batch of 1024 states, and a rollout of 16 initial
states over 200 RK4 steps. The calls run interleaved (with the hook, without a spring, in
Python, …) and every figure is the median over rounds of the per-round ratio to the system
without a spring, so a noisy shared machine biases no side.

Run from the repository root::

    python benchmarks/bench_hooks.py [--rounds N]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sko  # noqa: E402
from papers.tutorial_body_type import Bead, build  # noqa: E402
from sko.bodies import BodyType  # noqa: E402
from sko.systems import MultibodySystem  # noqa: E402


class Slack(Bead):
    """The bead without a spring: no hinge force at all."""

    hinge_force = BodyType.hinge_force


class PythonSpring(Bead):
    """The bead with its spring in Python only (no compiled hook)."""

    def hinge_force(self, q, qd):
        return self.spring * q


def variant(kind) -> MultibodySystem:
    """The tutorial's system with its beads of type ``kind``."""
    bodies = []
    for k in build().bodies:
        b = build().body(k)
        if isinstance(b, Bead):
            b = kind(b.name, b.parent, b.mass, b.start, b.direction, b.spring, attach=b.attach)
        bodies.append(b)
    return MultibodySystem(bodies)


def seconds(fun, number: int) -> float:
    start = time.perf_counter()
    for _ in range(number):
        fun()
    return (time.perf_counter() - start) / number


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    rounds = parser.parse_args().rounds
    systems = {"compiled spring": build(), "no spring": variant(Slack), "Python spring": variant(PythonSpring)}
    rng = np.random.default_rng(0)
    base = systems["no spring"]
    q, v, tau = base.random_configuration(rng), rng.normal(size=base.nv), rng.normal(size=base.nv)
    Q = np.array([base.random_configuration(rng) for _ in range(1024)])
    V, T = rng.normal(size=(2, 1024, base.nv))
    cases = {
        "forward dynamics, one state": (lambda s: s.forward_dynamics(q, v, tau), 2000),
        "inverse dynamics, one state": (lambda s: s.inverse_dynamics(q, v, tau), 2000),
        "forward dynamics, 1024 states": (lambda s: s.forward_dynamics(Q, V, T), 5),
        "rollout, 16 × 200 RK4 steps": (lambda s: sko.rollout(s, Q[:16], V[:16], 1e-3, 200), 1),
    }
    for s in systems.values():  # compile and warm up
        for fun, _ in cases.values():
            fun(s)
    print(f"{'':32s}" + "".join(f"{name:>22s}" for name in systems))
    for case, (fun, number) in cases.items():
        times = {name: [] for name in systems}
        for _ in range(rounds):
            for name, s in systems.items():
                times[name].append(seconds(lambda: fun(s), number))
        ratios = {name: np.median(np.array(t) / np.array(times["no spring"])) for name, t in times.items()}
        cells = "".join(f"{np.median(times[name]) * 1e6:12.1f} µs ×{ratios[name]:5.2f}" for name in systems)
        print(f"{case:32s}{cells}")


if __name__ == "__main__":
    main()

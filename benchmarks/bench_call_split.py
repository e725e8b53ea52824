"""Where the time of one single-state call goes: Python, numba's entry, the kernel; against Pinocchio.

For ``system.mass_matrix(q)``, ``inverse_dynamics(q, v, dv)`` and ``forward_dynamics(q, v, tau)``
on robots of :mod:`bench_engine` (one state of 1-D float64 arrays: the prepared one-state call,
:meth:`sko.engine.dispatch.Engine.one_state_call`), each call is timed whole and in layers:

* **call**: the system method from Python, as a user calls it;
* **python**: the call less the driver's entry called directly with the request vector, the
  state and a preallocated result (the generated method, the prepared call's checks, the
  result's allocation);
* **entry**: the entry less the kernel: numba's wrapper receiving the arrays (one meminfo per
  array) and returning the status;
* **kernel**: the one-state driver's compiled body, called in a compiled loop (the state's
  checks and fill, the request kernel, the result's finiteness check);
* **pin**: Pinocchio's ``crba``, ``rnea`` or ``aba`` from Python, and **pin C++** the same less
  a trivial Pinocchio call (``computeTotalMass(model)``): its binding's share.

The machine may be shared: every layer is timed in short rounds interleaved with the others,
on the thread's CPU clock (time the thread is descheduled is not counted), and the figure is
the tenth percentile over rounds. The loop kernel of the **kernel** layer compiles at start (it
is not cached).

Run from the repository root::

    python benchmarks/bench_call_split.py [--rounds N] [robot ...]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from numba import njit  # noqa: E402

from bench_engine import ROBOTS, random_state  # noqa: E402
from sko.engine import requests as rq  # noqa: E402
from sko.engine.dispatch import _entry  # noqa: E402

_F8 = np.dtype(np.float64)
_configuration = njit(rq._evaluate_configuration)
_one = njit(rq._evaluate_one)


@njit
def _configuration_loop(w, q, out, n):
    status = 0
    for _ in range(n):
        status += _configuration(w, q, out)
    return status


@njit
def _one_loop(w, q, v, x, out, n):
    status = 0
    for _ in range(n):
        status += _one(w, q, v, x, out)
    return status


def per_call(fun, number: int = 1000):
    """A timer: microseconds of thread CPU time per call of ``fun``, over ``number`` calls."""

    def timed() -> float:
        start = time.thread_time_ns()
        for _ in range(number):
            fun()
        return (time.thread_time_ns() - start) / number / 1e3

    return timed


def per_loop(loop, args: tuple, number: int = 1000):
    """A timer: microseconds per iteration of the compiled ``loop(*args, number)``."""
    loop(*args, 2)

    def timed() -> float:
        start = time.thread_time_ns()
        loop(*args, number)
        return (time.thread_time_ns() - start) / number / 1e3

    return timed


def split(name: str, rounds: int) -> list[str]:
    import pinocchio as pin

    state = random_state(name)
    if isinstance(state, str):
        return [f"{name:14} skipped: {state}"]
    system, model, data, _, _, (q, v, dv, tau), (qp, vp, ap, tp) = state
    engine = system._engine
    lines = []
    for label, request, call, theirs in (
        ("M", "mass_matrix", lambda: system.mass_matrix(q), lambda: pin.crba(model, data, qp)),
        ("ID", "inverse_dynamics", lambda: system.inverse_dynamics(q, v, dv), lambda: pin.rnea(model, data, qp, vp, ap)),
        ("FD", "forward_dynamics", lambda: system.forward_dynamics(q, v, tau), lambda: pin.aba(model, data, qp, vp, tp)),
    ):
        call()  # prepares the call (and compiles or loads its kernels)
        w = engine._request_vector(rq.REQUESTS[request], _F8)
        out = np.zeros(rq.REQUESTS[request].shape(engine._sizes))
        if request == "mass_matrix":
            entry = _entry(rq.one_state_driver(_F8, 2, velocities=False))
            direct, kernel = (lambda: entry(w, q, out)), per_loop(_configuration_loop, (w, q, out))
        else:
            x = dv if request == "inverse_dynamics" else tau
            entry = _entry(rq.one_state_driver(_F8, 1))
            direct, kernel = (lambda: entry(w, q, v, x, out)), per_loop(_one_loop, (w, q, v, x, out))
        timers = {"call": per_call(call), "entry": per_call(direct), "kernel": kernel, "pin": per_call(theirs),
                  "trivial": per_call(lambda: pin.computeTotalMass(model))}
        times = {key: [] for key in timers}
        for _ in range(rounds):
            for key, timer in timers.items():
                times[key].append(timer())
        t = {key: float(np.percentile(x, 10)) for key, x in times.items()}
        lines.append(f"{name:14} {label:2} call {t['call']:6.2f} µs = python {t['call'] - t['entry']:5.2f} + entry "
                     f"{t['entry'] - t['kernel']:5.2f} + kernel {t['kernel']:6.2f} | pin {t['pin']:6.2f} (C++ "
                     f"{t['pin'] - t['trivial']:6.2f}) | call/pin {t['call'] / t['pin']:4.2f}, kernel/pin C++ "
                     f"{t['kernel'] / (t['pin'] - t['trivial']):4.2f}")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("robots", nargs="*", default=["ur5", "solo12"],
                        help=f"robots of bench_engine, of {', '.join(ROBOTS)} (default: ur5 solo12)")
    parser.add_argument("--rounds", type=int, default=41, help="interleaved rounds per layer")
    args = parser.parse_args(argv)
    unknown = [name for name in args.robots if name not in ROBOTS]
    if unknown:
        parser.error(f"unknown robots {unknown}: choose among {', '.join(ROBOTS)}")
    print("one state from Python, µs (10th percentile of thread CPU time over rounds)")
    for name in args.robots:
        for line in split(name, args.rounds):
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

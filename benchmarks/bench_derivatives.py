"""Derivatives of the dynamics against Pinocchio: single calls, complex step, batches.

Everything runs in one process with the calls interleaved (ours, theirs, ours, …); every figure
is the median over rounds of the per-round ratio, so a noisy shared machine biases neither side.
Each callable is called before it is timed (numba compiles on the first call: compile time is
not measured here). Ours runs on one numba thread, as Pinocchio does, except in the batch rows
that say otherwise (idle OpenMP workers spin on a shared machine and slow single calls down).
Robots: ur5, panda, solo12 and talos_reduced from :mod:`bench_engine`'s ``ROBOTS``
(example-robot-data URDFs; a robot that does not load is skipped with the reason).
``--quick``: ur5 and solo12 only, batches of 64 states.

1. **Default method**: ``system.inverse_dynamics_derivatives(q, v, a)`` against
   ``pinocchio.computeRNEADerivatives`` and ``system.forward_dynamics_derivatives(q, v, τ)``
   against ``pinocchio.computeABADerivatives``, from Python, on the same state.
2. **Complex step** (``method="complex_step"``) on both, against the same Pinocchio calls and
   against ``2 nv + 1`` of our own ``system.forward_dynamics`` calls, the cost of one-sided finite
   differences in ``q`` and ``v`` (the base point and ``2 nv`` columns); the rows and the summary
   also give complex step / ``(nv + 1)`` forward-dynamics calls (target ≤ 1).
3. **Analytic** (``method="analytic"``) on both where it applies (``n/a`` where it raises).
4. **Batches** of 1024 states: our batched derivatives (leading batch axis, default method, one
   numba thread; and all threads where there are more) against Pinocchio's
   ``computeRNEADerivatives`` / ``computeABADerivatives`` looped from Python, per state.

Before timing, each of our methods is checked on one state per robot against Pinocchio (tangent
columns through :class:`sko.interop.PinocchioMap`, a free flyer's ``[ω; v]`` against ``[v; ω]``):
the largest relative difference of the three matrices is printed, so both sides time the same work.

Run from the repository root::

    python benchmarks/bench_derivatives.py [--rounds N] [--quick]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_engine import ROBOTS, interleaved, load  # noqa: E402
from tests.rigid.pinocchio_map import CoordinateMap  # noqa: E402

NAMES = ("ur5", "panda", "solo12", "talos_reduced")
assert set(NAMES) <= set(ROBOTS)
BATCH = 1024
QUICK_BATCH = 64
#: (label, keyword arguments of our calls); "auto" is the public default
METHODS = (("auto", {}), ("complex_step", {"method": "complex_step"}), ("analytic", {"method": "analytic"}))
HEADER = f"{'robot':14} {'nv':>3}  {'row':44} {'ours µs':>10} {'theirs µs':>11} {'ratio':>7}"


def _relative(ours, theirs, floor: float) -> float:
    """Largest difference relative to the larger of ``|theirs|`` and ``floor`` (as the tests)."""
    return float(np.abs(ours - theirs).max(initial=0.0) / max(np.abs(theirs).max(initial=0.0), floor))


def _symmetric(upper):
    """Pinocchio fills the upper triangle of ℳ (and of ℳ⁻¹) only."""
    return np.triu(upper) + np.triu(upper, 1).T


def worst_difference(cmap, ours, theirs) -> float:
    """The largest relative difference of the three matrices of ours (our order) and Pinocchio's."""
    third = _symmetric(theirs[2])
    floor = 1e-6 * np.abs(third).max()
    return max(_relative(cmap.matrix(a), np.asarray(b), floor) for a, b in zip(ours, (theirs[0], theirs[1], third)))


def resolved(system, kwargs) -> str:
    """What ``method="auto"`` computes on this system, where the module says so (else ``?``)."""
    try:
        from sko.systems import derivatives

        return derivatives._method(system, kwargs.get("method", "auto"), False, None)
    except Exception:
        return "?"


def row(name: str, nv: int, label: str, a: float, b: float, r: float) -> str:
    return f"{name:14} {nv:3d}  {label:44} {a * 1e6:10.2f} {b * 1e6:11.2f} {r:7.2f}"


def na_row(name: str, nv: int, label: str, why: str) -> str:
    return f"{name:14} {nv:3d}  {label:44} {'n/a':>10} {'':11} {'n/a':>7}  ({why[:70]})"


# ---------------------------------------------------------------------------- robots
def bench_robot(name: str, rounds: int, batch: int) -> tuple[list[str], dict]:
    """Table lines and the figures of the summary for one robot."""
    import pinocchio as pin

    loaded = load(name)
    if isinstance(loaded, str):
        return [f"{name:14} skipped: {loaded}"], {}
    system, model, _ = loaded
    data = model.createData()
    cmap = CoordinateMap(system, model)
    nv = system.nv
    rng = np.random.default_rng(0)
    q = system.random_configuration(rng)
    v, a, tau = rng.normal(size=(3, nv))
    qp, vp, ap, tp = cmap.q(q), cmap.v(v), cmap.v(a), cmap.v(tau)

    def rnea_d():
        return pin.computeRNEADerivatives(model, data, qp, vp, ap)

    def aba_d():
        return pin.computeABADerivatives(model, data, qp, vp, tp)

    # the check on one state, which also warms every callable up (numba compiles here)
    callables, checks, missing = {}, [], {}
    for label, kwargs in METHODS:
        idd = lambda kw=kwargs: system.inverse_dynamics_derivatives(q, v, a, **kw)  # noqa: E731
        fdd = lambda kw=kwargs: system.forward_dynamics_derivatives(q, v, tau, **kw)  # noqa: E731
        try:
            e_id = worst_difference(cmap, idd(), rnea_d())
            e_fd = worst_difference(cmap, fdd(), aba_d())
        except Exception as exc:  # the method does not apply to this system (or is not there)
            missing[label] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            checks.append(f"{label} n/a")
            continue
        callables[label] = idd, fdd
        checks.append(f"{label}{'=' + resolved(system, kwargs) if label == 'auto' else ''} ID {e_id:.1e} FD {e_fd:.1e}")
    lines = [f"{name:14} {nv:3d}  check vs Pinocchio, max relative difference: " + "; ".join(checks)]
    figures = {"nv": nv}
    for label, _ in METHODS:
        if label not in callables:
            for what in ("ID", "FD"):
                lines.append(na_row(name, nv, f"{what} {label}", missing[label]))
            continue
        idd, fdd = callables[label]
        for what, ours, theirs, ref in (("ID", idd, rnea_d, "computeRNEADerivatives"),
                                        ("FD", fdd, aba_d, "computeABADerivatives")):
            t_ours, t_theirs, r = interleaved(ours, theirs, rounds)
            lines.append(row(name, nv, f"{what} {label} vs {ref}", t_ours, t_theirs, r))
            figures[(what, label)] = r
        if label == "complex_step":  # against finite differences: 2 nv + 1 forward dynamics
            calls = 2 * nv + 1

            def differences():
                for _ in range(calls):
                    system.forward_dynamics(q, v, tau)

            for what, ours in (("ID", idd), ("FD", fdd)):
                t_ours, t_theirs, r = interleaved(ours, differences, rounds)
                per = r * calls / (nv + 1)
                lines.append(row(name, nv, f"{what} complex_step vs {calls} our FD calls", t_ours, t_theirs, r)
                             + f"  = {per:.2f}× (nv+1) FD calls")
                figures[(what, "per_fd")] = per
    if batch:
        lines += bench_batch(name, system, model, cmap, rounds, batch, figures)
    return lines, figures


def bench_batch(name: str, system, model, cmap, rounds: int, size: int, figures: dict) -> list[str]:
    """Our batched derivatives (default method) against Pinocchio looped from Python, per state;
    the one-thread ratios into ``figures`` (``(what, "batch")``)."""
    import numba
    import pinocchio as pin

    nv = system.nv
    rng = np.random.default_rng(1)
    Q = np.array([system.random_configuration(rng) for _ in range(size)])
    V, A, TAU = rng.normal(size=(3, size, nv))
    Qp = np.array([cmap.q(q) for q in Q])  # (B, nq): each state contiguous for Pinocchio
    Vp, Ap, Tp = (np.ascontiguousarray(X[:, cmap.v_perm]) for X in (V, A, TAU))
    data = model.createData()
    out = []
    ours_id = lambda: system.inverse_dynamics_derivatives(Q, V, A)  # noqa: E731
    ours_fd = lambda: system.forward_dynamics_derivatives(Q, V, TAU)  # noqa: E731

    def looped_rnea():
        for s in range(size):
            pin.computeRNEADerivatives(model, data, Qp[s], Vp[s], Ap[s])

    def looped_aba():
        for s in range(size):
            pin.computeABADerivatives(model, data, Qp[s], Vp[s], Tp[s])

    threads = numba.config.NUMBA_NUM_THREADS
    try:
        for what, ours, theirs, ref, args in (
            ("ID", ours_id, looped_rnea, pin.computeRNEADerivatives, (Qp[-1], Vp[-1], Ap[-1])),
            ("FD", ours_fd, looped_aba, pin.computeABADerivatives, (Qp[-1], Vp[-1], Tp[-1])),
        ):
            try:
                got = ours()  # warm-up and check on the batch's last state
            except Exception as exc:
                out.append(na_row(name, nv, f"batch {size} {what}", f"{type(exc).__name__}: {exc}"))
                continue
            err = worst_difference(cmap, [x[-1] for x in got], ref(model, data, *args))
            t_ours, t_theirs, r = interleaved(ours, theirs, rounds)
            out.append(row(name, nv, f"batch {size} {what}, 1 thread, per state vs loop", t_ours / size,
                           t_theirs / size, r) + f"  (check {err:.1e})")
            figures[(what, "batch")] = r
            if threads > 1:
                numba.set_num_threads(threads)
                t_ours, t_theirs, r = interleaved(ours, theirs, rounds)
                numba.set_num_threads(1)
                out.append(row(name, nv, f"batch {size} {what}, {threads} threads, per state vs loop", t_ours / size,
                               t_theirs / size, r))
    finally:
        numba.set_num_threads(1)
    return out


# ---------------------------------------------------------------------------- summary
def summary(figures: dict[str, dict]) -> list[str]:
    """Targets: analytic ≤ 2× Pinocchio per call; complex step ≤ (nv + 1) forward-dynamics calls;
    a batch, per state on one thread, ≤ 0.5× Pinocchio looped."""

    def verdict(x, target):
        return "n/a" if x is None else f"{x:5.2f} {'met' if x <= target else 'MISSED'}"

    lines = ["targets: analytic ≤ 2× Pinocchio per call; complex step ≤ (nv+1) of our FD calls; "
             "batch (1 thread, per state) ≤ 0.5× Pinocchio looped"]
    for name, f in figures.items():
        if not f:
            continue
        cells = [f"analytic {w} {verdict(f.get((w, 'analytic')), 2.0)}" for w in ("ID", "FD")]
        cells += [f"complex step {w} {verdict(f.get((w, 'per_fd')), 1.0)}" for w in ("ID", "FD")]
        cells += [f"batch {w} {verdict(f.get((w, 'batch')), 0.5)}" for w in ("ID", "FD")]
        lines.append(f"{name:14} nv={f['nv']:3d}  " + " | ".join(cells))
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9, help="interleaved rounds per figure (median)")
    parser.add_argument("--quick", action="store_true",
                        help=f"ur5 and solo12 only, batches of {QUICK_BATCH} states instead of {BATCH}")
    args = parser.parse_args(argv)
    import numba

    numba.set_num_threads(1)  # as Pinocchio; the batch rows say where more threads run
    names = ["ur5", "solo12"] if args.quick else list(NAMES)
    batch = QUICK_BATCH if args.quick else BATCH
    print("derivatives from Python; ratio = ours / theirs (median of per-round ratios); "
          "theirs = Pinocchio, or our own FD calls where the row says so")
    print(HEADER)
    figures = {}
    for name in names:
        lines, figures[name] = bench_robot(name, args.rounds, batch)
        for line in lines:
            print(line, flush=True)
    for line in summary(figures):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

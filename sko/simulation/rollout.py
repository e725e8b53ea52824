"""Many trajectories of one system at once: :func:`rollout`.

``B`` initial states step together through ``steps`` steps of RK4 or semi-implicit Euler, with
``q`` projected back onto its manifold after each step (unit quaternions), as
:func:`~sko.simulation.simulate.simulate` does for one. Where every body has a compiled state, every
hinge force is compiled (no tendon, no body type whose ``hinge_force`` has no compiled hook:
:mod:`sko.engine.hooks`), every joint's ``q̇`` map and projection are compiled (declared by its
joint type: :mod:`sko.engine.joint_registry`; every joint but a
:class:`~sko.bodies.joints.CustomJoint`), every body type with a ``q̇`` map of its own gives it as
a compiled hook, and the hinge forces are an array, the whole loop runs compiled, in parallel over
chunks of rollouts (:mod:`sko.engine.rollout`): no Python per state or per step. Where every body
is a library rigid body (:func:`sko.engine.lanes.applies`), each stage runs over blocks of
rollouts at once (:mod:`sko.engine.lane_rollout`), to rounding the same trajectories.
Otherwise (a ``tau`` callable, bodies with a Python state or Python hinge forces, the reference
backend) each step makes batched calls of the system's methods over the rollouts still running.

A rollout that leaves its domain (a configuration its joints reject) or whose motion overflows
stops there: its later entries are NaN, :attr:`Rollout.failed` gives the step and
:attr:`Rollout.errors` says why; the other rollouts complete.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from sko.engine.backend import get_backend
from sko.arrays import checked_horizon
from sko.engine import joints as cj
from sko.bodies.contract import BodyError, BodyType
from sko.engine.hooks import hook_address, normalize_at, qdot_at
from sko.engine.state_kernels import Row
from sko.graphs.errors import NonFiniteError, SKOError
from sko.errors import JointError
from sko.engine import lane_rollout as LR
from sko.engine import rollout as CR
from sko.systems.coordinates import coordinate_maps
from sko.engine.requests import REQUESTS
from sko.engine.rollout_inputs import (controller_forces, initial_configurations, renamed, rollout_inputs,
                                       trajectories)

__all__ = ["Rollout", "CompiledMaps", "INTEGRATORS", "rollout", "compiled_maps", "stopped", "renamed"]

#: ``"rk4"``: classical Runge–Kutta; ``"euler"``: semi-implicit Euler (velocity first).
INTEGRATORS = ("rk4", "euler")


class CompiledMaps(NamedTuple):
    """The coordinate runs of :mod:`~sko.engine.rollout`: the ``Maps`` table and the
    joints' :data:`~sko.engine.joints.Packed` records its rows point into."""

    table: np.ndarray
    packed: np.ndarray


class Rollout(NamedTuple):
    """Times ``(steps + 1,)``, positions ``(B, steps + 1, nq)`` and velocities
    ``(B, steps + 1, nv)`` (without the leading axis for one initial state given as a vector),
    ``failed`` ``(B,)``: the step in which a rollout stopped (−1: it completed), and ``errors``:
    rollout → the error that stopped it (its message names the step)."""

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    failed: np.ndarray
    errors: dict


def rollout(system, q0, v0=None, dt: float = 1e-3, steps: int = 1, tau=None, integrator: str = "rk4",
            progress: bool | Callable[[int], None] | None = None, constraints=None) -> Rollout:
    """``steps`` steps of size ``dt`` from each initial state ``(q0[s], v0[s])`` (module docstring).

    Parameters
    ----------
    q0, v0 : ``(B, nq)``, ``(B, nv)`` (``v0`` zero if omitted), or one state as vectors
    tau : hinge forces: none (zero), an array ``(B, steps, nv)`` (``(steps, nv)`` for one state)
        held over each step, or a callable ``tau(t, Q, V)`` returning ``(B', nv)`` for the ``B'``
        rollouts still running, called at every stage
    integrator : one of :data:`INTEGRATORS`
    progress : True for a progress bar (tqdm), or a callable given the number of steps done
        (the compiled loop then runs in segments, reporting after each)
    constraints : constraints at frames (:mod:`sko.constraints`), optional: the rollout is then
        :func:`sko.constraints.rollout.constrained_rollout` (its result reports forces and drift)

    Raises
    ------
    DimensionError, NonFiniteError, SKOError
        Inputs of the wrong shape or not finite, an unknown integrator, a ``tau`` callable
        returning the wrong shape or raising an :class:`SKOError` of its own (raised as it is:
        the callable's fault, not a rollout's), and the joints' own errors for an initial
        configuration (naming the rollout).
    """
    if constraints is not None:
        from sko.constraints.rollout import constrained_rollout

        return constrained_rollout(system, q0, v0, dt, steps, tau, constraints, integrator)
    dt, steps = checked_horizon(dt, steps, "rollout")
    if integrator not in INTEGRATORS:
        raise SKOError(f"rollout: integrator must be one of {', '.join(map(repr, INTEGRATORS))}, got {integrator!r}")
    if progress is not None and not isinstance(progress, bool) and not callable(progress):
        raise SKOError(f"rollout: progress must be True, False or a callable, got {type(progress).__name__}")
    Q0, V0, T, single = rollout_inputs(system, q0, v0, tau, steps)
    B, nq, nv = Q0.shape[0], system.q_size, system.dof_size
    Q, V = trajectories((B, steps + 1, nq), (B, steps + 1, nv))
    Q[:, 0] = initial_configurations(system, Q0)
    V[:, 0] = V0
    failed = np.full(B, -1, dtype=np.int64)
    maps = None if callable(tau) else compiled_maps(system)
    report, close = _reporter(progress, steps)
    try:
        if maps is not None:
            status = _compiled(system, maps, T, dt, integrator == "rk4", Q, V, failed, report)
            errors = {int(s): _why(system, Q[s, failed[s]], V[s, failed[s]], None if T is None else T[s, failed[s]],
                                   int(failed[s]), dt, integrator == "rk4", maps, int(status[s]))
                      for s in np.flatnonzero(failed >= 0)}
        else:
            errors = _stepwise(system, Q, V, tau if callable(tau) else T, dt, integrator == "rk4", failed, report)
    finally:
        close()
    t = dt * np.arange(steps + 1)
    if single:
        return Rollout(t, Q[0], V[0], failed, errors)
    return Rollout(t, Q, V, failed, errors)


def compiled_maps(system) -> CompiledMaps | None:
    """The :class:`CompiledMaps` of :mod:`~sko.engine.rollout`, or None where the
    rollout cannot run compiled (module docstring): each joint with a ``q̇`` map or a projection
    of its own is run by its joint type's declared functions, which its Python ones must be."""
    engine = system._engine
    if get_backend() != "compiled" or engine.layout is None or not engine.layout.all_compiled \
            or engine.layout.hinge_forces:
        return None
    maps = coordinate_maps(system)
    if maps is None:
        return None
    rows, packed = [], []
    for qi, vi in zip(maps.rate_q.tolist(), maps.rate_v.tolist()):  # runs of q̇ = θ̇
        if rows and rows[-1][0] == CR.COPY and rows[-1][1] + rows[-1][3] == qi and rows[-1][2] + rows[-1][3] == vi:
            rows[-1][3] += 1
        else:
            rows.append([CR.COPY, qi, vi, 1])
    runs = [(CR.RATE, qs, vs, rate, "_qdot", "qdot") for qs, vs, rate, _ in maps.rates]
    runs += [(CR.PROJECT, qs, slice(0, 0), projection, "normalize", "normalize") for qs, projection in maps.projections]
    hooked = set()  # bodies whose type's own maps run as compiled hooks
    for kind, qs, vs, method, name, function in runs:
        joint = getattr(method, "__self__", None)
        if isinstance(joint, BodyType):
            hooked.add(joint.name)
            continue
        found = None if joint is None else cj.declaration(joint)
        owner = None if found is None else getattr(found[0], "owner", None)
        if found is None or getattr(method, "__func__", None) is not getattr(type(joint), name) \
                or getattr(type(joint), name) is not getattr(owner, name, None) or not getattr(found[0], "has_" + function):
            return None  # a Python map of its own: the stepwise loop calls it
        entry = found[0]
        code, _, record = cj.pack_joint(joint)
        if code == cj.PYTHON:
            return None
        if not entry.library:
            record[cj.Packed.qdot if function == "qdot" else cj.Packed.normalize] = entry.address(function, np.float64)
        rows.append([kind, qs.start, vs.start, qs.stop - qs.start, code, len(packed) * cj.Packed.SIZE])
        packed.append(record)
    rows = [row + [0] * (CR.Maps.WIDTH - len(row)) for row in rows]
    rows += [_hook_run(system, engine.layout, k) for k in system.bodies if k in hooked]
    table = np.array(rows, dtype=np.int64).reshape(-1, CR.Maps.WIDTH)
    return CompiledMaps(table, np.concatenate(packed) if packed else np.zeros(0))


def _hook_run(system, layout, name) -> list:
    """The ``HOOK`` run of a body whose type's ``q̇`` map and normalisation are compiled hooks
    (:mod:`sko.engine.hooks`), with their addresses for float64 states."""
    i = layout.index[name]
    body, hooks, j = system.body(name), layout.hooks[i], int(layout.row_of[i])
    qs, vs, row = system.q_slices[name], system.dof_slices[name], layout.rows[j]
    run = [0] * CR.Maps.WIDTH
    run[CR.Maps.KIND], run[CR.Maps.Q], run[CR.Maps.V] = CR.HOOK, qs.start, vs.start
    run[CR.Maps.N], run[CR.Maps.NV], run[CR.Maps.BODY] = qs.stop - qs.start, vs.stop - vs.start, j
    for column, hook in ((CR.Maps.QDOT, hooks.qdot), (CR.Maps.NORMALIZE, hooks.normalize)):
        run[column] = 0 if hook is None else hook_address(body, hook, np.float64)
    run[CR.Maps.CONSTANTS], run[CR.Maps.CONSTANTS_SIZE] = int(row[Row.CONSTANTS]), int(row[Row.CONSTANTS_SIZE])
    return run


#: the compiled loop reports its progress every this many state-steps (one kernel call each)
SEGMENT = 1_000_000


def _compiled(system, maps, T, dt: float, rk4: bool, Q, V, failed, report) -> np.ndarray:
    """The compiled loop; with a progress report, in segments of about :data:`SEGMENT`
    state-steps over the rollouts still running, reported after each; on the lanes where they take
    the system (:mod:`sko.engine.lane_rollout`). Returns each rollout's status
    (:func:`~sko.engine.rollout.rollout`)."""
    B, steps, nv = Q.shape[0], Q.shape[1] - 1, V.shape[2]
    engine = system._engine
    lanes = engine._lanes()  # every body a library rigid body: the stages in blocks of states
    w = engine._request_vector(REQUESTS["forward_dynamics"], np.dtype(np.float64), kernels=not lanes)

    def run(T, Q, V, failed, status):
        if lanes:
            LR.rollout(w, maps.table, maps.packed, T, dt, rk4, Q, V, failed, status, engine._lane_sizes)
        else:
            CR.rollout(w, maps.table, maps.packed, T, dt, rk4, Q, V, failed, status)

    status = np.full(B, -1, dtype=np.int64)
    if report is None:
        run(np.zeros((B, 0, nv)) if T is None else T, Q, V, failed, status)
        return status
    length = max(1, SEGMENT // max(B, 1))
    for a in range(0, steps, length):
        b = min(steps, a + length)
        rows = np.flatnonzero(failed < 0)
        Qs, Vs = np.empty((rows.size, b - a + 1, Q.shape[2])), np.empty((rows.size, b - a + 1, nv))
        Qs[:, 0], Vs[:, 0] = Q[rows, a], V[rows, a]
        Ts = np.zeros((rows.size, 0, nv)) if T is None else np.ascontiguousarray(T[rows, a:b])
        part_failed, part_status = np.full(rows.size, -1, dtype=np.int64), np.full(rows.size, -1, dtype=np.int64)
        run(Ts, Qs, Vs, part_failed, part_status)
        Q[rows, a + 1: b + 1], V[rows, a + 1: b + 1] = Qs[:, 1:], Vs[:, 1:]
        stopped = part_failed >= 0
        failed[rows[stopped]] = a + part_failed[stopped]
        status[rows[stopped]] = part_status[stopped]
        for s in rows[stopped]:
            Q[s, b + 1:], V[s, b + 1:] = np.nan, np.nan
        report(b)
    return status


def _reporter(progress, steps: int):
    """``(report(done), close())`` for ``progress``: a tqdm bar for True, the caller's callable,
    or ``(None, no-op)``."""
    if progress is None or progress is False:
        return None, lambda: None
    if progress is True:
        from tqdm import tqdm

        bar = tqdm(total=steps, unit="step", desc="rollout")
        return (lambda done: bar.update(done - bar.n)), bar.close
    return progress, lambda: None


# ----------------------------------------------------------------------------- the stepwise path
def _stepwise(system, Q, V, tau, dt: float, rk4: bool, failed: np.ndarray, report) -> dict:
    """The loop of :func:`rollout` in Python, each stage one batched call over the running
    rollouts; a rollout whose call raises is stepped alone to name its error."""
    errors: dict = {}
    running = np.arange(Q.shape[0])
    for i in range(Q.shape[1] - 1):
        if not running.size:  # every rollout stopped: their later entries are NaN already
            break
        t = i * dt
        try:
            Qn, Vn = _step_batch(system, Q[running, i], V[running, i], tau, t, i, running, dt, rk4)
            done = running
        except _ForcesError as error:  # the caller's function, not a rollout's state
            raise error.args[0] from None
        except SKOError:
            done, parts = [], []
            for s in running:
                try:
                    parts.append(_step_batch(system, Q[[s], i], V[[s], i], tau, t, i, np.array([s]), dt, rk4))
                    done.append(s)
                except SKOError as error:
                    errors[int(s)] = stopped(error, i, dt)
                    failed[s] = i
            done = np.array(done, dtype=np.int64)
            Qn = np.concatenate([p[0] for p in parts]) if parts else np.zeros((0, Q.shape[2]))
            Vn = np.concatenate([p[1] for p in parts]) if parts else np.zeros((0, V.shape[2]))
        finite = np.isfinite(Qn).all(axis=1) & np.isfinite(Vn).all(axis=1)
        for s in done[~finite]:
            errors[int(s)] = stopped(None, i, dt)
            failed[s] = i
        Q[done, i + 1], V[done, i + 1] = Qn, Vn
        for s in np.flatnonzero(failed == i):
            Q[s, i + 1:], V[s, i + 1:] = np.nan, np.nan
        running = np.array([s for s in done[finite]], dtype=np.int64)
        if report is not None:
            report(i + 1)
    return errors


def _step_batch(system, q, v, tau, t: float, i: int, rows: np.ndarray, dt: float, rk4: bool):
    """One step of the rollouts ``rows`` from ``(q, v)`` (batched calls)."""

    def forces(time, qs, vs):
        if tau is None:
            return None
        if callable(tau):
            return _callable_forces(tau, time, qs, vs)
        return tau[rows, i]

    def rate(time, qs, vs):
        return _qdot(system, qs, vs), system.forward_dynamics(qs, vs, forces(time, qs, vs))

    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported by the caller
        if not rk4:
            vn = v + dt * system.forward_dynamics(q, v, forces(t, q, v))
            return _normalize(system, q + dt * _qdot(system, q, vn)), vn
        k1q, k1v = rate(t, q, v)
        k2q, k2v = rate(t + dt / 2, q + dt / 2 * k1q, v + dt / 2 * k1v)
        k3q, k3v = rate(t + dt / 2, q + dt / 2 * k2q, v + dt / 2 * k2v)
        k4q, k4v = rate(t + dt, q + dt * k3q, v + dt * k3v)
        return (_normalize(system, q + dt / 6 * (k1q + 2 * k2q + 2 * k3q + k4q)),
                v + dt / 6 * (k1v + 2 * k2v + 2 * k3v + k4v))


def _qdot(system, Q, V):
    maps = coordinate_maps(system)
    if maps is not None and not maps.rates:
        out = np.empty(Q.shape, dtype=np.result_type(Q, V))
        out[:, maps.rate_q] = V[:, maps.rate_v]
        return out
    return np.array([system.qdot(q, v) for q, v in zip(Q, V)]).reshape(Q.shape)


def _normalize(system, Q):
    if not np.isfinite(Q).all():  # the caller reports the overflow
        return Q
    maps = coordinate_maps(system)
    if maps is not None and not maps.projections:
        return Q
    return np.array([system.normalize(q) for q in Q]).reshape(Q.shape)


class _ForcesError(Exception):
    """A ``tau`` callable's bad result: raised to the caller, not charged to a rollout."""


def _callable_forces(tau, t: float, Q, V) -> np.ndarray:
    try:
        return controller_forces(tau, t, Q, V, "rollout: tau(t, Q, V)", "one row of hinge forces per running rollout")
    except SKOError as error:  # the callable's own code or result: its caller's error, not every rollout's
        raise _ForcesError(error) from None


# ----------------------------------------------------------------------------- errors
def stopped(error: SKOError | None, i: int, dt: float) -> SKOError:
    """The error that stopped a rollout in step ``i``, saying where: the dynamics' own (of the
    same type), or an overflow (``None``: the state left the floating-point range)."""
    where = f"step {i + 1} (t = {i * dt:.6g} s)"
    if error is None or isinstance(error, NonFiniteError):
        cause = "" if error is None else f": {error}"
        return NonFiniteError(f"{where} leaves the floating-point range: the motion diverges or dt = {dt:.3g} is too "
                              f"large for it{cause}")
    return renamed(error, f"{where}: {error}")


def _why(system, q, v, tau, i: int, dt: float, rk4: bool, maps: CompiledMaps, status: int) -> SKOError:
    """Why the compiled rollout stopped in step ``i`` with ``status``: a joint's or a body type's
    compiled ``q̇`` map or normalisation that failed (named), else the error of the dynamics at
    the step's start if they raise there (else a later stage's state, or an overflow)."""
    failed = CR.failed_map(status)
    if failed is not None:
        run, normalize = failed
        if maps.table[run, CR.Maps.KIND] == CR.HOOK:
            return _hook_error(system, q, v, i, dt, int(maps.table[run, CR.Maps.BODY]), normalize)
        return _joint_error(system, q, v, tau, i, dt, rk4, int(maps.table[run, CR.Maps.Q]), normalize)
    try:
        system.forward_dynamics(q, v, tau)
    except SKOError as error:
        return stopped(error, i, dt)
    return stopped(None, i, dt)


def _joint_error(system, q, v, tau, i: int, dt: float, rk4: bool, start: int, normalize: bool) -> SKOError:
    """The error of the compiled ``q̇`` map (or projection) of the joint whose coordinates start
    at ``q[start]``, which failed in step ``i`` from ``(q, v)``: the stepwise loop's for that step
    (the joint's Python map's own, at the stage where it fails), else one naming the joint."""
    try:
        _step_batch(system, q[None], v[None], None if tau is None else tau[None, None], i * dt, 0, np.zeros(1, int),
                    dt, rk4)
    except SKOError as error:
        return stopped(error, i, dt)
    name = next(k for k in system.bodies if system.q_slices[k].start == start < system.q_slices[k].stop)
    joint = system.body(name).joint
    return JointError(f"step {i + 1} (t = {i * dt:.6g} s): body {name!r}: the compiled "
                      f"{'normalize' if normalize else 'qdot'} of its joint {joint} returned False, raised or gave a "
                      f"value that is not finite (NaN or infinity) at a stage of the step, from q = "
                      f"{q[system.q_slices[name]]}")


def _hook_error(system, q, v, i: int, dt: float, row: int, normalize: bool) -> SKOError:
    """The error of a compiled ``q̇`` map (or normalisation) of the body of the state table's
    ``row`` that failed in step ``i``: the hook's own, run from Python at the step's start, if it
    fails there, else one naming the body."""
    layout = system._engine.layout
    k = int(layout.order[row])
    name, hooks = layout.bodies[k], layout.hooks[k]
    body, qk, vk = system.body(name), q[system.q_slices[name]], v[system.dof_slices[name]]
    try:
        normalize_at(body, hooks, qk) if normalize else qdot_at(body, hooks, qk, vk)
    except SKOError as error:  # not an overflow of the motion: the hook's error as it is
        return renamed(error, f"step {i + 1} (t = {i * dt:.6g} s): {error}")
    return BodyError(f"step {i + 1} (t = {i * dt:.6g} s): the compiled {'normalize' if normalize else 'qdot'} of body "
                     f"{name!r} ({type(body).__name__}) returned False, raised or wrote a value that is not finite "
                     f"(NaN or infinity) at a stage of the step, from q = {qk}")

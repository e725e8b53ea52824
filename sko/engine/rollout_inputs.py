"""The checked inputs of a rollout (:func:`sko.rollout`, with or without constraints): the
initial states, the held hinge forces, the initial configurations on their manifold, and the
forces a controller returns, and the errors that name the rollout or step they come from."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from sko.arrays import checked_array, numeric_array, plain_numbers_as_floats
from sko.graphs.errors import DimensionError, NonFiniteError, SKOError

__all__ = ["RolloutInputs", "rollout_inputs", "checked_states", "controller_forces", "trajectories",
           "initial_configurations", "renamed"]


class RolloutInputs(NamedTuple):
    """Initial states ``(B, nq)``, ``(B, nv)`` (float64), the held forces ``(B, steps, nv)`` (None:
    zero, or a callable), and whether one state was given as vectors."""

    q0: np.ndarray
    v0: np.ndarray
    tau: np.ndarray | None
    single: bool


def rollout_inputs(system, q0, v0, tau, steps: int) -> RolloutInputs:
    """``q0``, ``v0`` (``(B, nq)``, ``(B, nv)`` or one state as vectors; real) and ``tau`` (none,
    a callable, or ``(B, steps, nv)``, ``(steps, nv)`` for one state), checked: a
    :class:`DimensionError` or :class:`NonFiniteError` naming the input otherwise."""
    if tau is not None and not callable(tau) and not hasattr(tau, "__len__") and not hasattr(tau, "shape"):
        raise SKOError(f"rollout: tau must be an array or a callable tau(t, Q, V), got {type(tau).__name__}")
    Q0 = checked_states(q0, "q0", system.q_size, "nq")
    single = Q0.ndim == 1
    Q0 = np.atleast_2d(Q0)  # (B, nq), also for a system without coordinates
    B, nv = Q0.shape[0], system.dof_size
    V0 = np.zeros((B, nv)) if v0 is None else np.atleast_2d(checked_states(v0, "v0", nv, "nv"))
    if V0.shape[0] != B:
        raise DimensionError(f"v0 has {V0.shape[0]} states but q0 has {B}")
    T = None if tau is None or callable(tau) else _held_forces(tau, B, steps, nv, single)
    return RolloutInputs(Q0, V0, T, single)


def checked_states(x, name: str, size: int, symbol: str) -> np.ndarray:
    """Real finite states ``(size,)`` or ``(B, size)``, as float64."""
    x = plain_numbers_as_floats(checked_array(x, (1, 2), name), name)
    if x.shape[-1] != size:
        raise DimensionError(f"{name} has length {x.shape[-1]}, expected {symbol} = {size}")
    if x.dtype.kind not in "iuf":
        raise DimensionError(f"{name} must be real, got dtype {x.dtype}")
    return x.astype(np.float64)


def _held_forces(tau, B: int, steps: int, nv: int, single: bool) -> np.ndarray:
    T = plain_numbers_as_floats(checked_array(tau, (2, 3), "tau"), "tau")
    if T.dtype.kind not in "iuf":
        raise DimensionError(f"tau must be real, got dtype {T.dtype}")
    expected = (steps, nv) if single else (B, steps, nv)
    if T.shape != expected:
        raise DimensionError(f"tau has shape {T.shape}, expected {expected} (hinge forces per "
                             f"{'' if single else 'rollout and '}step)")
    return np.ascontiguousarray(T.astype(np.float64).reshape(B, steps, nv))


def controller_forces(tau, t: float, q: np.ndarray, v: np.ndarray, what: str, rows: str) -> np.ndarray:
    """The hinge forces the controller ``tau`` returns at ``(t, q, v)``, called with copies of the
    states (it cannot change the rollout's) and checked as held forces are: real finite numbers
    of ``v``'s shape (``None``: zero), as float64; else the error naming the call ``what`` (e.g.
    ``"rollout: tau(t, Q, V)"``), the time, and what ``rows`` hold."""
    out = tau(t, q.copy(), v.copy())
    if out is None:
        return np.zeros(v.shape)
    try:
        forces = plain_numbers_as_floats(numeric_array(out, what), what)
    except DimensionError:
        kind = f"dtype {out.dtype}" if isinstance(out, np.ndarray) else type(out).__name__
        raise DimensionError(f"{what} must return numbers, got {kind}") from None
    if forces.dtype.kind not in "biuf":
        raise DimensionError(f"{what} must return real numbers, got {forces.dtype} at t = {t:.6g} s")
    if forces.shape != v.shape:
        raise DimensionError(f"{what} returned shape {forces.shape}, expected {v.shape} ({rows})")
    if not np.isfinite(forces).all():
        raise NonFiniteError(f"{what} returned a non-finite value at t = {t:.6g} s")
    return forces.astype(np.float64)


def trajectories(*shapes: tuple) -> list[np.ndarray]:
    """Empty float64 arrays of ``shapes`` (a rollout's positions, velocities, forces), or a
    :class:`DimensionError` naming the shapes and their size when memory cannot hold them."""
    try:
        return [np.empty(shape) for shape in shapes]
    except MemoryError:
        gib = sum(float(np.prod(shape, dtype=float)) for shape in shapes) * 8 / 2**30
        raise DimensionError(f"rollout: the trajectories of shapes {', '.join(map(str, shapes))} need {gib:.3g} GiB, "
                             "more than memory can hold: take fewer steps or rollouts at a time") from None


def initial_configurations(system, Q0: np.ndarray) -> np.ndarray:
    """The initial configurations projected onto their manifold; a configuration the joints
    reject (a zero quaternion) is their error, naming the rollout."""
    out = np.empty(Q0.shape)
    for s, q in enumerate(Q0):
        try:
            out[s] = system.normalize(q)
        except SKOError as error:
            raise renamed(error, f"rollout {s} (q0[{s}]): {error}") from None
    return out


def renamed(error: SKOError, message: str) -> SKOError:
    """``error``'s type with ``message`` (an :class:`SKOError` where that type takes more)."""
    try:
        return type(error)(message)
    except TypeError:
        return SKOError(message)

"""Errors for results that leave the floating-point range: finite inputs so large that a
recursion or its result overflows get an error naming what scales them, never an inf or NaN."""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from sko.graphs.errors import NonFiniteError

__all__ = ["HUGE_GRAVITY", "gravity_cause", "named_overflow", "finite_result", "derivatives_overflow"]

#: a gravity this large (in any unit) is named as the cause of an overflow: no physical one is
HUGE_GRAVITY = 1e100


def gravity_cause(gravity) -> str | None:
    """The gravity as the cause of an overflow, where it is huge (:data:`HUGE_GRAVITY`)."""
    g = np.asarray(gravity)
    if g.dtype != object and np.abs(g).max(initial=0.0) >= HUGE_GRAVITY:
        return f"the gravity g = {np.array2string(g[-3:], precision=3)} is too large for floating point"
    return None


@contextmanager
def named_overflow(system, what: str):
    """Numpy's overflow warnings off around a recursion; its overflow (the algorithms' generic
    error) becomes the error of ``what``, naming what of the system scales it where a body says
    (``overflow_hint``: a coupling's ratio), else the inputs."""
    with np.errstate(over="ignore", invalid="ignore"):
        try:
            yield
        except NonFiniteError:
            hints = [f"body {k!r}: its {h}" for k in system.bodies
                     if (h := getattr(system.body(k), "overflow_hint", lambda: None)())]
            cause = "; ".join(hints) or gravity_cause(system.gravity) or \
                "the velocities, coordinates or forces are too large for floating point"
            raise NonFiniteError(f"the {what} overflows (NaN or infinity) at this state; {cause}") from None


def finite_result(value, what: str):
    """``value`` (numbers, or one result per state of a batch) unless it left the floating-point
    range: finite inputs so large that the result overflows get an error, never an inf or NaN."""
    x = np.asarray(value)
    if x.dtype.kind in "fc" and not np.isfinite(x).all():
        raise NonFiniteError(f"the {what} overflows (NaN or infinity) at this state; the velocities, coordinates "
                             "or forces are too large for floating point")
    return value


def derivatives_overflow(system, name: str, q, v, x) -> None:
    """Raise the error of derivatives (request ``name``) that left the floating-point range at
    ``(q, v, x)``: the dynamics' own where they overflow too (naming the body and its term), else
    one naming the request and the largest input."""
    dynamics = system.inverse_dynamics if name == "inverse_dynamics_derivatives" else system.forward_dynamics
    dynamics(q, v, x)  # raises naming the body whose terms overflow
    inputs = {"q": q, "v": v, "dv" if name == "inverse_dynamics_derivatives" else "tau": x}
    largest = ", ".join(f"max |{k}| = {np.abs(np.asarray(y, dtype=float)).max(initial=0.0):.3g}"
                        for k, y in inputs.items())
    raise NonFiniteError(f"{name} overflow (NaN or infinity) at this state: the velocities, coordinates or forces are "
                         f"too large for floating point ({largest})")

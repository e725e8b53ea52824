"""Whether a system's bodies carry complex numbers through, as the complex step needs
(DERIVATIVES.md, Eq. 21): :func:`check_complex_carried`, once per system.

A body type that drops the imaginary part of its state (``.real``, ``np.real``,
``astype(float)``, ``abs``, ``float()``) gives complex-step derivatives that are silently wrong:
the columns lose what flows through it. The check perturbs the whole state at once along a
random direction ``(q̇(q, w), u)``, by a complex step and by central real differences, and
requires every output of every body not valid by construction (user body types, user-defined
joints, a user's subclass of a library type overriding ``at_state`` or ``hinge_force``) — ``E``, ``H``, ``M``, ``a``, ``b``, ``V``, the potential, each attachment frame and its
hinge force — to carry the derivative the real differences show. Bodies are checked base to
tips, so the first whose outputs differ is the one that drops it (its children only inherit
the loss). A user body with a compiled state kernel of its own (a subclass of a library type
overriding ``compiled_state`` too) is checked through the engine too (the inverse dynamics along the direction), since the complex step runs its kernel. Library
bodies are valid by construction and pay nothing; the check runs once per system, before its
first complex-step derivatives.
"""

from __future__ import annotations

import warnings

import numpy as np

from sko.bodies.contract import BodyError
from sko.engine.bodies import compiled_state
from sko.graphs.errors import SKOError

__all__ = ["check_complex_carried", "own_methods"]

_STEP, _DIFFERENCE = 1e-30, 1e-6  #: the complex step and the real differences' step
_HOW = ("keep complex numbers through at_state and hinge_force: no .real, np.real, astype(float), abs or float() "
        "on the state")


def check_complex_carried(system, q: np.ndarray) -> None:
    """Raise :class:`~sko.bodies.contract.BodyError` naming the first body that drops the
    imaginary part of a complex state near the configuration ``q`` (module docstring); once per
    system."""
    order = getattr(system, "_order", None)
    if order is None or getattr(system, "_complex_carried", False):
        return
    bodies = getattr(system, "_unchecked", frozenset()) | {k for k, b, _, _ in order if own_methods(b)}
    if not bodies:
        system._complex_carried = True  # nothing to check: not looked at again
        return
    rng = np.random.default_rng(0)
    v = rng.standard_normal(system.dof_size)
    dq = system.qdot_matrix(q) @ rng.standard_normal(system.dof_size)
    dv = rng.standard_normal(system.dof_size)
    lost = _step_lost(q, dq)
    if lost > 1e-2:
        return  # q so large that its real differences round away: nothing to judge by, nothing recorded
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        with np.errstate(all="ignore"):
            try:
                z = _outputs(system, order, bodies, q + 1j * _STEP * dq, v + 1j * _STEP * dv)
                plus = _outputs(system, order, bodies, q + _DIFFERENCE * dq, v + _DIFFERENCE * dv)
                minus = _outputs(system, order, bodies, q - _DIFFERENCE * dq, v - _DIFFERENCE * dv)
            except SKOError:  # a state the bodies reject: the derivatives' own call names it
                return
    complete = True  # every entry judged (none overflowed)
    for (k, what, value), (_, _, p), (_, _, m) in zip(z, plus, minus):
        if isinstance(value, str):  # the body raised on a complex state
            raise BodyError(f"body {k!r} ({type(system.body(k)).__name__}): its {what} fails on a complex state "
                            f"({value}), so derivatives cannot be taken by complex step: {_HOW}")
        if np.shape(value) != np.shape(p):
            raise BodyError(f"body {k!r} ({type(system.body(k)).__name__}): its {what} has shape {np.shape(value)} at a "
                            f"complex state but {np.shape(p)} at a real one, so derivatives cannot be taken by complex "
                            "step: return the same shapes for complex states")
        with np.errstate(all="ignore"):  # an overflow is not judged here: the derivatives' own call names it
            real = (np.asarray(p, dtype=float) - np.asarray(m, dtype=float)) / (2 * _DIFFERENCE)
            carried = np.imag(value) / _STEP
            overflow = ~np.isfinite(real)
            off = ~(np.abs(carried - real) <= _tolerance(real, np.real(value), lost)) & ~overflow
        complete = complete and not overflow.any()
        if off.any():
            i = int(np.argmax(off))
            raise BodyError(f"body {k!r} ({type(system.body(k)).__name__}): its {what} drops the imaginary part of a "
                            f"complex state (a derivative {carried.ravel()[i]:.6g} by complex step where real "
                            f"differences give {real.ravel()[i]:.6g}), so derivatives cannot be taken by complex "
                            f"step: {_HOW}")
    _compiled_kernels_carry(system, [k for k, b, _, _ in order if k in bodies and _compiled(b)], q, v, dq, dv, rng)
    system._complex_carried = complete  # the system's own record: checked once per system


def _step_lost(q: np.ndarray, dq: np.ndarray) -> float:
    """The part of the real differences' step ``2 δ dq`` that rounding takes from
    ``(q + δ dq) − (q − δ dq)``, relative to the step: about ``ε |q| / δ`` (a coordinate of 10³⁰
    swallows a step of 10⁻⁶ whole, and the differences would read a derivative of zero)."""
    with np.errstate(all="ignore"):
        taken = (q + _DIFFERENCE * dq) - (q - _DIFFERENCE * dq)
        lost = np.abs(taken - 2 * _DIFFERENCE * dq).max(initial=0.0) / (2 * _DIFFERENCE * np.abs(dq).max(initial=1e-300))
    return float(lost) if np.isfinite(lost) else np.inf


def _tolerance(real: np.ndarray, value, lost: float = 0.0) -> np.ndarray:
    """How far, entry by entry, a complex-step derivative may differ from the real differences
    ``real`` of ``value``: their truncation (``O(δ²)``) and rounding (``ε |value| / δ``) errors
    and the part ``lost`` of their step (:func:`_step_lost`), far below what a dropped part of the
    derivative changes."""
    return (1e-4 + 2 * lost) * np.abs(real) + 1e-6 * (1.0 + np.abs(value).max(initial=0.0))


def own_methods(body) -> bool:
    """Whether ``body``'s ``at_state``, ``hinge_force`` or ``compiled_state`` is a user's own (a
    subclass of a library type valid by construction that overrides one, its compiled kernel
    included, is checked as a user body type)."""
    return any(getattr(type(body), name).__module__.split(".")[0] != "sko"
               for name in ("at_state", "hinge_force", "compiled_state"))


def _compiled(body) -> bool:
    """Whether ``body`` is of a user's type running a compiled state kernel of its own (the
    library's kernels keep complex numbers through: tested)."""
    if type(body).__module__.split(".")[0] == "sko":
        return False
    try:
        return compiled_state(body) is not None
    except Exception:  # noqa: BLE001 - the engine reports a broken compiled state itself
        return False


def _compiled_kernels_carry(system, kernels: list, q, v, dq, dv, rng) -> None:
    """The same check through the engine, for the user bodies ``kernels`` whose compiled state
    kernels the complex step runs (their Python ``at_state`` was checked above): the inverse
    dynamics along the direction, by complex step against real differences."""
    if not kernels:
        return
    a = rng.standard_normal(system.dof_size)
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        with np.errstate(all="ignore"):
            try:
                z = system.inverse_dynamics(q + 1j * _STEP * dq, v + 1j * _STEP * dv, a + 0j)
                plus = system.inverse_dynamics(q + _DIFFERENCE * dq, v + _DIFFERENCE * dv, a)
                minus = system.inverse_dynamics(q - _DIFFERENCE * dq, v - _DIFFERENCE * dv, a)
            except (SKOError, np.exceptions.ComplexWarning):  # the derivatives' own call reports it
                return
    real = (plus - minus) / (2 * _DIFFERENCE)
    carried = np.imag(z) / _STEP
    scale = _tolerance(real, plus)
    if not np.all(np.abs(carried - real) <= scale):
        names = ", ".join(f"{k!r} ({type(system.body(k)).__name__})" for k in kernels)
        raise BodyError(f"the compiled state kernel of body {names} drops the imaginary part of a complex state (the "
                        f"inverse dynamics' derivative by complex step differs from real differences by "
                        f"{np.abs(carried - real).max():.3g}, while its at_state keeps it), so derivatives cannot be "
                        "taken by complex step: keep complex numbers through the kernel (no .real or real-typed "
                        "locals for the state)")


def _outputs(system, order, bodies, q: np.ndarray, v: np.ndarray) -> list:
    """``(body, output name, value)`` of the checked bodies base to tips (the others computed
    only as the inboard frames they give); a body raising gives its error as the value."""
    out, states = [], {}
    root = system._root
    for k, b, qs, vs in order:
        inboard = root if b.parent is None else states[b.parent].attachments[b.attach]
        try:
            s = b.at_state(q[qs], v[vs], inboard, system.gravity)
            force = b.hinge_force(q[qs], v[vs]) if k in bodies else None
        except (np.exceptions.ComplexWarning, TypeError, ValueError) as error:
            if k not in bodies or isinstance(error, SKOError):
                raise
            out.append((k, "at_state", f"{type(error).__name__}: {error}"))
            return out
        states[k] = s
        if k not in bodies:
            continue
        for name in ("E", "H", "M", "a", "b", "V", "potential"):
            out.append((k, name, np.asarray(getattr(s, name))))
        for frame, attachment in s.attachments.items():
            for name in ("Gamma", "gamma", "rotation", "position", "velocity"):
                out.append((k, f"attachment {frame!r} {name}", np.asarray(getattr(attachment, name))))
        if force is not None:
            out.append((k, "hinge_force", np.asarray(force)))
    return out

"""First-order derivatives of a system's dynamics, by exact complex step (DERIVATIVES.md,
Eq. 1, 3, 21).

Configuration derivatives are taken in the tangent space, one column per velocity coordinate
(Eq. 1): column ``ι`` of ``∂f/∂q`` is ``d/dε f(q ⊕ ε e_ι)`` at ``ε = 0``, with ``q ⊕ δ`` the
system's :meth:`~sko.systems.multibody.MultibodySystem.integrate` — for a ball or free joint the
rotation ``q ⊗ exp(δ)`` in the successor frame, as Pinocchio's ``integrate``, so that its
``computeRNEADerivatives`` and ``computeABADerivatives`` compare column by column (a free joint's
``[ω; v]`` against Pinocchio's ``[v; ω]``). A first derivative sees ``⊕`` only through its
differential ``q̇(q, e_ι)`` (:meth:`~sko.systems.multibody.MultibodySystem.qdot_matrix`).

Complex step (Eq. 21): ``f′(x) w = Im f(x + i h w) / h`` with ``h = 1e-30``. No difference is
taken, so nothing cancels: the result is exact to rounding for any body type whose state
carries complex numbers through (every library type does; the compiled complex128 engine runs
it). The configuration columns evaluate ``f`` at ``q + i h q̇(q, e_ι)``: off the configuration
manifold by ``O(h²)``, far below rounding. All columns of all states go to the engine as one
batch of complex states (``method="complex_step"``).

The default for numbers (``method="auto"``) is a recursion: on rigid trees the analytic one of
:mod:`sko.systems.rigid_derivatives` (compiled, Eq. 10–13), on any other tree of body types the
local one of :mod:`sko.systems.body_derivatives` (DERIVATIVES.md §9, Eq. 22–26), where only each
body's own state runs in complex numbers, in its own coordinates and inboard velocity; systems
with external forces take the whole complex step. Forward dynamics follows from inverse dynamics (Eq. 3):
``∂θ̈/∂x = −ℳ⁻¹ ∂T/∂x`` at ``θ̈ = FD(q, θ̇, T)`` and ``∂θ̈/∂T = ℳ⁻¹``; the local recursion
inverts the ``ℳ`` of its own pass.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

from sko.arrays import checked_array, plain_numbers_as_floats
from sko.graphs.errors import DimensionError, SKOError
from sko.systems import body_derivatives, rigid_derivatives
from sko.systems.complex_carry import check_complex_carried
from sko.systems.declared import no_forces
from sko.systems.overflow import derivatives_overflow

__all__ = ["InverseDynamicsDerivatives", "ForwardDynamicsDerivatives", "COMPLEX_STEP", "METHODS",
           "inverse_dynamics_derivatives", "forward_dynamics_derivatives"]

#: the complex step ``h`` of Eq. 21: ``O(h²)`` is 1e-60 relative, far below rounding
COMPLEX_STEP = 1e-30


class InverseDynamicsDerivatives(NamedTuple):
    """``(∂τ/∂q, ∂τ/∂v, ℳ)``, each ``(nv, nv)`` (or ``(B, nv, nv)`` for a batch); ``∂τ/∂dv = ℳ``."""

    dtau_dq: np.ndarray
    dtau_dv: np.ndarray
    mass_matrix: np.ndarray


class ForwardDynamicsDerivatives(NamedTuple):
    """``(∂dv/∂q, ∂dv/∂v, ℳ⁻¹)``, each ``(nv, nv)`` (or ``(B, nv, nv)``); ``∂dv/∂τ = ℳ⁻¹``."""

    ddv_dq: np.ndarray
    ddv_dv: np.ndarray
    mass_matrix_inverse: np.ndarray


#: how the derivatives are computed: ``"complex_step"`` (any system), ``"analytic"`` (the
#: recursion of :mod:`sko.systems.rigid_derivatives`; rigid trees without hinge or external
#: forces) or ``"local"`` (the recursion of :mod:`sko.systems.body_derivatives` on each body's
#: local partials, DERIVATIVES.md §9; any tree of body types without external forces);
#: ``"auto"`` takes, on numbers, the compiled analytic recursion where it applies, else the local
#: recursion (the complex step with external forces), and the analytic recursion on sympy
#: expressions (exact, where no complex step can be taken)
METHODS = ("auto", "complex_step", "analytic", "local")


def inverse_dynamics_derivatives(system, q, v=None, dv=None, external_forces: Mapping | None = None,
                                 method: str = "auto") -> InverseDynamicsDerivatives:
    """The derivatives of ``τ = ID(q, v, dv)`` (module docstring); ``v``, ``dv`` zero when omitted."""
    answer, states = _compiled_answer(system, "inverse_dynamics_derivatives", InverseDynamicsDerivatives, q, v, dv,
                                      "dv", external_forces, method)
    if answer is not None:
        return answer
    Q, V, A, batched, how = states
    if how in ("local", "complex_step"):
        _dynamics_are_numbers(system, Q, V, A, batched)
    if how == "local":  # ℳ from the same pass
        dq, dvel, M = body_derivatives.partials(system, Q, V, A)
        return InverseDynamicsDerivatives(*((dq, dvel, M) if batched else (dq[0], dvel[0], M[0])))
    dq, dvel = _partials(system, Q, V, A, external_forces, how, batched)
    M = system.mass_matrix(Q if batched else Q[0])
    return InverseDynamicsDerivatives(*((dq, dvel, M) if batched else (dq[0], dvel[0], M)))


def forward_dynamics_derivatives(system, q, v=None, tau=None, external_forces: Mapping | None = None,
                                 method: str = "auto") -> ForwardDynamicsDerivatives:
    """The derivatives of ``dv = FD(q, v, τ)`` from those of inverse dynamics at ``dv`` (Eq. 3)."""
    answer, states = _compiled_answer(system, "forward_dynamics_derivatives", ForwardDynamicsDerivatives, q, v, tau,
                                      "tau", external_forces, method)
    if answer is not None:
        return answer
    Q, V, T, batched, how = states
    A = system.forward_dynamics(Q, V, T, external_forces) if batched else \
        system.forward_dynamics(Q[0], V[0], T[0], external_forces)[None]
    if how == "local":  # ℳ from the same pass
        out = _forward(*body_derivatives.partials(system, Q, V, A))
    else:
        Minv = system.mass_matrix_inverse(Q if batched else Q[0])
        Minv = Minv if batched else Minv[None]
        dq, dvel = _partials(system, Q, V, A, external_forces, how, batched)
        out = (-Minv @ dq, -Minv @ dvel, Minv)
    return ForwardDynamicsDerivatives(*(out if batched else (x[0] for x in out)))


def _compiled_answer(system, name: str, result, q, v, x, xname: str, external_forces, method: str):
    """``(answer, None)`` when the compiled request ``name`` takes the call (the common call
    first, unchecked), else ``(None, (Q, V, X, batched, how))``: the checked states and the
    method of the caller's own path."""
    plain = no_forces(external_forces)
    if method in ("auto", "analytic") and plain and _compiled(system):
        if (out := system._engine.direct(name, q, v, x)) is not None:
            return result(*out), None
    elif method in ("auto", "local") and plain:
        forward = name == "forward_dynamics_derivatives"
        if (out := system._local_derivatives(q, v, x, forward)) is not None:
            return result(*out), None
        if (state := body_derivatives.plain_state(system, q, v, x)) is not None and (out := _local_answer(system, name, *state)) is not None:
            return result(*out), None
    Q, V, X, batched, symbolic = _states(system, q, v, x, xname)
    how = _method(system, method, symbolic, external_forces)
    if how != "compiled":
        return None, (Q, V, X, batched, how)
    if batched:
        return result(*_compiled_request(system, name, Q, V, X).transpose(1, 0, 2, 3)), None
    return result(*_compiled_request(system, name, Q[0], V[0], X[0])), None  # one state: its errors say so


def _local_answer(system, name: str, q: np.ndarray, v: np.ndarray, x: np.ndarray) -> tuple | None:
    """The three matrices of ``name`` at one checked state by the compiled local recursion
    (:func:`~sko.systems.body_derivatives.compiled_partials`; forward dynamics by Eq. 3), or
    ``None`` where it does not run."""
    if name == "inverse_dynamics_derivatives":
        if (layout := system._engine.layout) is None or layout.hinge_forces:  # compiled ones: the recursion checks them
            _dynamics_are_numbers(system, q[None], v[None], x[None], False)
        return body_derivatives.compiled_partials(system, q, v, x)
    return body_derivatives.compiled_partials(system, q, v, system.forward_dynamics(q, v, x), forward=True)


def _forward(dq: np.ndarray, dvel: np.ndarray, M: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(−ℳ⁻¹ ∂T/∂θ, −ℳ⁻¹ ∂T/∂θ̇, ℳ⁻¹)`` (Eq. 3) for a batch, from inverse dynamics' derivatives
    and the ``ℳ`` of the same pass (leading batch axes), ``ℳ⁻¹`` by numpy's inverse, symmetrised.
    Forward dynamics has already run at the states, so each ``ℳ`` is invertible there (one state
    takes the compiled forward step, :func:`sko.engine.local_derivatives.forward`)."""
    Minv = np.linalg.inv(M)
    Minv = 0.5 * (Minv + np.swapaxes(Minv, -1, -2))
    minus = -Minv
    return minus @ dq, minus @ dvel, Minv


def _dynamics_are_numbers(system, Q: np.ndarray, V: np.ndarray, A: np.ndarray, batched: bool) -> None:
    """Derivatives exist only where the dynamics are numbers. A hinge force that is not a number
    at a real state may be finite at the complex states of a step (``np.sqrt`` of a negative
    coordinate: its complex value is finite), so inverse dynamics runs once at the real states
    (the prepared one-state call where it applies: a few microseconds; at one state with hinge
    forces in Python, those forces alone, and the whole only where one is not finite); where it
    is not finite it raises its error, naming the body and the state of a batch. (Forward
    dynamics derivatives evaluate the dynamics at the real state already.) A system without hinge
    forces (no tendon, no body type overriding ``hinge_force``: the layout's ``any_hinge_force``)
    has none to check."""
    layout = system._engine.layout
    if layout is not None and not layout.any_hinge_force:
        return
    if not batched:
        if system._engine.direct("inverse_dynamics", Q[0], V[0], A[0]) is not None:
            return
        with np.errstate(all="ignore"):
            if np.isfinite(system._hinge_forces(Q[0], V[0])).all():
                return
    with np.errstate(all="ignore"):
        system.inverse_dynamics(*((Q, V, A) if batched else (Q[0], V[0], A[0])))


def _method(system, method: str, symbolic: bool, external_forces) -> str:
    """The method that computes the derivatives (:data:`METHODS`), or the error saying why not."""
    if method not in METHODS:
        raise SKOError(f"method must be one of {', '.join(map(repr, METHODS))}, got {method!r}")
    analytic = rigid_derivatives.applies(system) and no_forces(external_forces)
    if method in ("auto", "analytic") and analytic and not symbolic and _compiled(system):
        return "compiled"
    if method == "auto":  # numbers: the local recursion (§9) where it applies, else the whole complex step
        method = "analytic" if symbolic else "local" if body_derivatives.applies(system, external_forces) else "complex_step"
    if method == "analytic" and not analytic:
        raise SKOError(f"{type(system).__name__}: the analytic derivatives need a tree of rigid bodies without hinge "
                       "or external forces; method='complex_step' takes any system")
    if method in ("complex_step", "local") and symbolic:
        raise SKOError(f"symbolic states take no complex step (method={method!r}): method='analytic' (a rigid tree) "
                       "gives their exact derivatives")
    if method == "local" and not body_derivatives.applies(system, external_forces):
        raise SKOError(f"{type(system).__name__}: the local recursion takes a tree of body types without external "
                       "forces (they depend on every ancestor's coordinates); method='complex_step' takes any system")
    return method


def _compiled(system) -> bool:
    """:func:`~sko.systems.rigid_derivatives.compiled`, once per system (kept on it)."""
    return system._compiled_derivatives


def _compiled_request(system, name: str, Q: np.ndarray, V: np.ndarray, X: np.ndarray) -> np.ndarray:
    """``(3, nv, nv)``, or ``(B, 3, nv, nv)`` for a batch, by the compiled recursion: ``∂T/∂θ``,
    ``∂T/∂θ̇`` and ``ℳ`` at ``θ̈ = X`` (``name`` is ``"inverse_dynamics_derivatives"``), or
    ``∂θ̈/∂θ``, ``∂θ̈/∂θ̇`` and ``ℳ⁻¹`` at ``θ̈ = FD(q, θ̇, X)`` (``"forward_dynamics_derivatives"``);
    the reference recursion with the reference backend, or for a state the kernels reject."""

    def reference(q, v, x, external_forces=None):
        with np.errstate(over="ignore", invalid="ignore"):
            if name == "inverse_dynamics_derivatives":
                out = np.stack([*rigid_derivatives.inverse_dynamics_partials(system, q, v, x), system.mass_matrix(q)])
            else:
                dq, dvel = rigid_derivatives.inverse_dynamics_partials(system, q, v, system.forward_dynamics(q, v, x))
                Minv = system.mass_matrix_inverse(q)
                out = np.stack([-Minv @ dq, -Minv @ dvel, Minv])
        if not np.isfinite(out).all():
            derivatives_overflow(system, name, q, v, x)
        return out

    out = system._engine.run(name, reference, Q, V, X)
    return reference(Q, V, X) if out is NotImplemented else out  # one state on the reference backend


def _partials(system, Q, V, A, external_forces, method: str, batched: bool) -> tuple[np.ndarray, np.ndarray]:
    if method == "complex_step":
        return _complex_step(system, Q, V, A, external_forces, batched)
    pairs = [rigid_derivatives.inverse_dynamics_partials(system, q, v, a) for q, v, a in zip(Q, V, A)]
    return np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])


def _states(system, q, v, x, xname: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool, bool]:
    """``(Q, V, X, batched, symbolic)``: real float64 (or sympy) states with a leading batch axis
    (zeros for ``None``)."""
    Q = _real(q, "q", system.q_size, "nq")
    batched = Q.ndim == 2
    Q = Q if batched else Q[None]
    out = [Q]
    for value, name in ((v, "v"), (x, xname)):
        if value is None:
            out.append(np.zeros((Q.shape[0], system.dof_size)))
            continue
        X = _real(value, name, system.dof_size, "nv")
        if (X.ndim == 2) != batched or (batched and X.shape[0] != Q.shape[0]):
            raise DimensionError(f"{name} has shape {X.shape} but q has shape {np.shape(q)}: give every argument "
                                 "the same leading batch axis, or none")
        out.append(X if batched else X[None])
    symbolic = any(x.dtype == object for x in out)
    if symbolic:
        out = [x.astype(object) for x in out]
    return (*out, batched, symbolic)


def _real(x, name: str, size: int, symbol: str) -> np.ndarray:
    """``x`` checked (1-D or 2-D, finite, last axis ``size``) as float64, or as the sympy
    expressions it holds: derivatives are taken at real states (a complex state would collide
    with the complex step)."""
    x = plain_numbers_as_floats(checked_array(x, (1, 2), name), name)
    if x.shape[-1] != size:
        raise DimensionError(f"{name} has length {x.shape[-1]}, expected {symbol} = {size}")
    if x.dtype == object:
        return x
    if x.dtype.kind not in "iuf":
        raise DimensionError(f"{name} must be real to take derivatives (the derivatives are computed in complex "
                             f"numbers), got dtype {x.dtype}")
    return x.astype(np.float64)


def _complex_step(system, Q: np.ndarray, V: np.ndarray, A: np.ndarray, external_forces: Mapping | None,
                  batched: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """``(∂T/∂θ, ∂T/∂θ̇)`` of inverse dynamics at each state, ``(B, nv, nv)`` each: the ``2 nv``
    columns of every state by one batch of complex states (Eq. 1, Eq. 21)."""
    B, n, h = Q.shape[0], system.dof_size, COMPLEX_STEP
    if n == 0 or B == 0:
        return np.zeros((B, n, n)), np.zeros((B, n, n))
    check_complex_carried(system, Q[0])  # a body dropping the imaginary part: named, not a wrong column
    Qdot = np.stack([system.qdot_matrix(q) for q in Q])  # (B, nq, nv)
    steps = 1j * h * np.eye(n)
    Zq = np.concatenate([Q[:, None, :] + 1j * h * Qdot.transpose(0, 2, 1), np.repeat(Q[:, None, :] + 0j, n, 1)], 1)
    Zv = np.concatenate([np.repeat(V[:, None, :] + 0j, n, 1), V[:, None, :] + steps], 1)
    Za = np.repeat(A[:, None, :] + 0j, 2 * n, 1)
    shape = (B * 2 * n, -1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        try:
            tau = system.inverse_dynamics(Zq.reshape(shape), Zv.reshape(shape), Za.reshape(shape), external_forces)
        except np.exceptions.ComplexWarning:
            tau = None
        except SKOError:  # a state the dynamics reject: their error, naming the state of the caller's batch
            system.inverse_dynamics(*((Q, V, A) if batched else (Q[0], V[0], A[0])), external_forces)
            raise
    if tau is None or not np.iscomplexobj(tau):
        raise SKOError(f"{type(system).__name__}: a body type drops the imaginary part of a complex state, so its "
                       "derivatives cannot be taken by complex step (keep complex numbers through at_state and "
                       "hinge_force: no abs, float() or .real)")
    columns = (tau.imag / h).reshape(B, 2, n, n)  # [state, θ or θ̇, column ι, row]
    return columns[:, 0].transpose(0, 2, 1), columns[:, 1].transpose(0, 2, 1)

"""The joint library (RIGID.md, *Joint library*; Featherstone Table 4.1 and Chapter 4).

A joint connects a predecessor frame ``F_p`` to a successor frame ``F_s``. Its model maps the
position variables ``q`` (``nq`` of them) and the velocity variables ``ν`` (``nv``) to

* ``X_J = ˢX_p(q)``, the Plücker transform from ``F_p`` to ``F_s`` coordinates,
* ``S(q)`` (6 × nv), the motion subspace in ``F_s``: the joint velocity is ``v_J = S ν``,
* ``c_J = S̊ ν`` (6,), the velocity-product acceleration (``S̊``: derivative of ``S``'s
  ``F_s`` coordinates along the motion),

and supplies the map ``q̇ = qdot(q, ν)`` (the identity when ``ν = q̇``). With these, the body
acceleration is ``a_s = X_J a_p + S ν̇ + c_J + v_s × S ν`` (RIGID.md ``a(k)``).

Quaternions are ``(w, x, y, z)``. **A non-unit quaternion in ``q`` is normalised, not
rejected**: its rotation is that of ``q/‖q‖`` (integrators drift off the unit sphere and
:meth:`Joint.normalize` puts them back); a quaternion of norm below ``1e-9`` is rejected with
:class:`JointError`.

Joints are independent of any system: a joint is a small immutable object a body type can use.

The engine compiles the kinematics of every joint type of this module (:mod:`sko.engine.joints`);
a joint type written elsewhere declares its own with :func:`sko.engine.joint_type` and runs
compiled on every path. A :class:`CustomJoint` (Python functions) runs in Python.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from sko.arrays import checked_scalar, numeric_array, plain_numbers_as_floats, result_dtype, scaled_norm, unit_vector
from sko.spatial import (
    analytic_norm,
    checked_transform,
    float_or_complex,
    quaternion_normalize,
    real_part,
    cos_sin,
    axis_angle_matrix,
    plucker,
    plucker_inverse,
    quaternion_conjugate,
    quaternion_exp,
    quaternion_log,
    quaternion_matrix,
    quaternion_multiply,
    quaternion_rate,
    quaternion_rate_matrix,
    rot,
    rotation_z,
    rx,
    ry,
    rz,
    skew,
    xlt,
)

from sko.errors import JointError
from sko.graphs.errors import SKOError

__all__ = [
    "JointLimits",
    "JointKinematics",
    "JointDerivatives",
    "Joint",
    "Revolute",
    "Prismatic",
    "Helical",
    "Cylindrical",
    "Planar",
    "Spherical",
    "SphericalEulerZYX",
    "Free",
    "Fixed",
    "RackAndPinion",
    "CustomJoint",
    "ReversedJoint",
]


class JointKinematics(NamedTuple):
    """``X_J``, ``S`` and ``c_J`` of a joint at ``(q, ν)``."""

    X: np.ndarray  #: ˢX_p (6 × 6)
    S: np.ndarray  #: motion subspace in F_s (6 × nv)
    c: np.ndarray  #: velocity-product acceleration S̊ ν (6,)


class JointDerivatives(NamedTuple):
    """The derivatives of a joint's ``S`` and ``c_J`` along its tangent columns ``θ_ι`` and its
    velocities ``ν_ι`` (:meth:`Joint.kinematics_derivatives`)."""

    dS: np.ndarray  #: ``dS[ι] = ∂S/∂θ_ι`` (nv × 6 × nv)
    dc_dq: np.ndarray  #: column ``ι``: ``∂c_J/∂θ_ι`` (6 × nv)
    dc_dv: np.ndarray  #: column ``ι``: ``∂c_J/∂ν_ι`` (6 × nv)


#: the complex step of :meth:`Joint.kinematics_derivatives` (``O(h²)`` far below rounding)
_COMPLEX_STEP = 1e-30


class JointLimits(NamedTuple):
    """Limits of one joint (URDF ``<limit>``): ``lower``, ``upper`` per position variable
    (``nq``), ``velocity`` and ``effort`` per velocity variable (``nv``); ``±inf`` where none.
    Stored, not enforced: the dynamics never clip."""

    lower: np.ndarray
    upper: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray

    @classmethod
    def unbounded(cls, nq: int, nv: int) -> "JointLimits":
        return cls(np.full(nq, -np.inf), np.full(nq, np.inf), np.full(nv, np.inf), np.full(nv, np.inf))

    def checked(self, joint: "Joint") -> "JointLimits":
        """These limits as float arrays of the joint's sizes, ``lower ≤ upper``, ``velocity``
        and ``effort`` ``≥ 0`` (:class:`~sko.errors.JointError` naming the joint otherwise)."""
        sizes = {"lower": joint.nq, "upper": joint.nq, "velocity": joint.nv, "effort": joint.nv}
        out = {}
        for key, n in sizes.items():
            x = np.array(np.broadcast_to(np.asarray(getattr(self, key), dtype=float), (n,)))
            if np.isnan(x).any():
                raise JointError(f"{joint}: {key} limit {x} has NaN")
            out[key] = x
        if (out["lower"] > out["upper"]).any():
            raise JointError(f"{joint}: lower position limit {out['lower']} exceeds the upper {out['upper']}")
        for key in ("velocity", "effort"):
            if (out[key] < 0).any():
                raise JointError(f"{joint}: {key} limit {out[key]} is negative")
        return JointLimits(**out)


class Joint:
    """Base class: subclasses set ``nq``, ``nv`` and implement :meth:`_kinematics`.

    Every joint carries :attr:`limits` (:class:`JointLimits`; unbounded unless set with
    :meth:`with_limits`)."""

    nq: int = 0
    nv: int = 0
    kind: str = "joint"
    #: False for the joints of this module, whose ``X_J`` and ``S`` are finite and ``S`` has full
    #: column rank by construction; True when user code supplies them (:class:`CustomJoint`).
    user_defined: bool = False
    #: True where ``S`` is constant and ``c_J = 0`` (the successor-frame velocity is ``S ν`` with
    #: a fixed ``S``): the joint's terms have no derivatives of their own (:meth:`kinematics_derivatives`)
    constant_motion: bool = False
    name: str | None = None  #: for messages (a subclass whose ``__init__`` does not set it has none)
    _user_code: str | None = None  #: what messages call the code giving ``X_J`` (default: the class's ``_kinematics``)

    def __init__(self, name: str | None = None):
        self.name = name

    def __init_subclass__(cls, **kwargs):
        """A class outside this package that writes its own :meth:`_kinematics` is user code, as a
        :class:`CustomJoint`'s functions are: its joints are :attr:`user_defined` (their bodies'
        states are checked, :meth:`check_rigid` judges ``X_J``) and what its ``_kinematics``
        returns is checked at every call (:meth:`_checked_kinematics`); so are the ``q̇`` of its
        own ``_qdot`` and the configuration of its own ``normalize`` (:meth:`_checked_coordinates`)."""
        super().__init_subclass__(**kwargs)
        if cls.__module__.partition(".")[0] == "sko":
            return
        own = vars(cls)
        if "_kinematics" in own:
            kinematics, source = own["_kinematics"], f"{cls.__qualname__}._kinematics"

            def _kinematics(self, q, v):
                return self._checked_kinematics(kinematics(self, q, v), source, q, v)

            cls._kinematics, cls.user_defined = _kinematics, True
        if "_qdot" in own:
            qdot, qdot_source = own["_qdot"], f"{cls.__qualname__}._qdot"
            cls._qdot = lambda self, q, v: self._checked_coordinates(qdot(self, q, v), "qdot", qdot_source, q, v)
        if "normalize" in own:
            normalize, normalize_source = own["normalize"], f"{cls.__qualname__}.normalize"
            cls.normalize = lambda self, q: self._checked_coordinates(normalize(self, q), "normalize",
                                                                      normalize_source, np.asarray(q))

    def compiled_parameters(self) -> np.ndarray:
        """The constants its compiled functions read (``p[po: po + parameters]``; none by default)."""
        return np.zeros(0)

    @property
    def limits(self) -> JointLimits:
        """Position, velocity and effort limits (``±inf`` where none was given)."""
        return getattr(self, "_limits", None) or JointLimits.unbounded(self.nq, self.nv)

    def with_limits(self, lower=-np.inf, upper=np.inf, velocity=np.inf, effort=np.inf) -> "Joint":
        """This joint with limits set (scalars broadcast over its coordinates); returns ``self``.

        Raises
        ------
        JointError
            ``lower > upper``, a negative velocity or effort limit, a NaN or a bad size.
        """
        try:
            self._limits = JointLimits(lower, upper, velocity, effort).checked(self)
        except ValueError as exc:
            if isinstance(exc, JointError):
                raise
            raise JointError(f"{self}: limits do not fit nq = {self.nq}, nv = {self.nv}: {exc}") from None
        return self

    # ------------------------------------------------------------------ model
    def kinematics(self, q, v=None) -> JointKinematics:
        """``(X_J, S, c_J)`` at position ``q`` and velocity ``v`` (zero if omitted)."""
        q = self._vector(q, self.nq, "q")
        v = np.zeros(self.nv, dtype=q.dtype) if v is None else self._vector(v, self.nv, "velocity")
        return self._kinematics(q, v)

    def transform(self, q) -> np.ndarray:
        """``X_J = ˢX_p(q)``."""
        return self.kinematics(q).X

    def motion_subspace(self, q) -> np.ndarray:
        """``S(q)``, 6 × nv, in successor coordinates."""
        return self.kinematics(q).S

    def kinematics_derivatives(self, q, v=None) -> JointDerivatives:
        """``∂S/∂θ_ι``, ``∂c_J/∂θ_ι`` and ``∂c_J/∂ν_ι`` at ``(q, ν)``, ``θ_ι`` the tangent columns
        of :meth:`integrate` (DERIVATIVES.md, Eq. 10): zero for a joint with
        :attr:`constant_motion`; otherwise exact complex steps of :meth:`kinematics` along
        ``q̇(q, e_ι)`` and ``e_ι`` (the joint's formulas must be analytic: no ``abs``, no casts)."""
        q = self._vector(q, self.nq, "q")
        v = np.zeros(self.nv, dtype=q.dtype) if v is None else self._vector(v, self.nv, "velocity")
        dtype = result_dtype(q, v)
        n = self.nv
        if self.constant_motion:
            return JointDerivatives(np.zeros((n, 6, n), dtype=dtype), np.zeros((6, n), dtype=dtype),
                                    np.zeros((6, n), dtype=dtype))
        if dtype == object:
            raise JointError(f"{self}: the derivatives of its S(q) and c_J take a complex step, which symbolic "
                             "coordinates do not allow")
        h, Q = _COMPLEX_STEP, self._qdot_matrix(q)
        along_q = [self._kinematics(q + 1j * h * Q[:, i], v + 0j) for i in range(n)]
        along_v = [self._kinematics(q + 0j, v + 1j * h * e) for e in np.eye(n)]
        return JointDerivatives(np.array([np.imag(k.S) / h for k in along_q]).reshape(n, 6, n),
                                np.array([np.imag(k.c) / h for k in along_q]).reshape(n, 6).T,
                                np.array([np.imag(k.c) / h for k in along_v]).reshape(n, 6).T)

    def check_constant_motion(self) -> None:
        """For a user-defined joint declaring :attr:`constant_motion`: :class:`~sko.errors.JointError`
        naming it unless ``c_J = 0`` and ``S`` is the same at the configurations it accepts among
        its neutral one, a step from it and two random ones (with a velocity of ones): what the
        recursions that trust the declaration would otherwise get wrong without an error. A
        library joint holds it by construction; symbolic kinematics are not judged."""
        if not (self.user_defined and self.constant_motion and self.nv):
            return
        rng = np.random.default_rng(0)
        v = np.ones(self.nv)
        first = None
        for q in (self.neutral(), self.integrate(self.neutral(), 0.3 * v, 1.0), self.random(rng), self.random(rng)):
            try:
                _, S, c = self.kinematics(q, v)
            except JointError:  # a configuration outside the joint's domain
                continue
            if S.dtype == object or c.dtype == object:
                return
            scale = 1.0 + np.abs(S).max()
            if np.abs(c).max() > 1e-12 * scale:
                raise JointError(f"{self} declares constant_motion (S constant, c_J = 0), but c_J = {c} at q = {q}")
            if first is not None and np.abs(S - first[1]).max() > 1e-12 * scale:
                raise JointError(f"{self} declares constant_motion (S constant, c_J = 0), but S changes with q: "
                                 f"{first[1].ravel()} at q = {first[0]}, {S.ravel()} at q = {q}")
            first = (q, S)

    def bias_acceleration(self, q, v) -> np.ndarray:
        """``c_J = S̊ ν``."""
        return self.kinematics(q, v).c

    def qdot(self, q, v) -> np.ndarray:
        """``q̇`` from the position and velocity variables."""
        return self._qdot(self._vector(q, self.nq, "q"), self._vector(v, self.nv, "velocity"))

    def qdot_matrix(self, q) -> np.ndarray:
        """The ``nq × nv`` matrix of the linear map ``ν ↦ q̇`` at ``q``: the differential of
        :meth:`integrate` at ``ν = 0``."""
        return self._qdot_matrix(self._vector(q, self.nq, "q"))

    def _qdot_matrix(self, q: np.ndarray) -> np.ndarray:
        columns = [np.asarray(self._qdot(q, e)) for e in np.eye(self.nv)]
        return np.column_stack(columns) if columns else np.zeros((self.nq, 0), dtype=q.dtype)

    # ------------------------------------------------------------------ configurations
    def neutral(self) -> np.ndarray:
        """The configuration with ``X_J = I``."""
        return np.zeros(self.nq)

    def random(self, rng: np.random.Generator) -> np.ndarray:
        """A random valid configuration."""
        return rng.uniform(-np.pi, np.pi, self.nq)

    def normalize(self, q) -> np.ndarray:
        """``q`` projected back onto the configuration manifold (unit quaternions).

        The library's projections (and :meth:`integrate`) are analytic in a complex ``q``: the
        result stays complex, so complex steps pass through them exactly."""
        return np.array(float_or_complex(self._vector(q, self.nq, "q")))

    def integrate(self, q, v, dt: float) -> np.ndarray:
        """The configuration reached from ``q`` with constant velocity ``v`` for time ``dt``
        (exact for joints with ``ν = q̇``; joints with quaternions or successor-frame velocities
        override it with their exponential map; a user-defined joint takes one Euler step)."""
        dt = checked_scalar(dt, f"time step dt of {self}", error=JointError)
        return self._integrate(self._vector(q, self.nq, "q"), self._vector(v, self.nv, "velocity"), dt)

    def _integrate(self, q: np.ndarray, v: np.ndarray, dt: float) -> np.ndarray:
        return self.normalize(q + dt * self._qdot(q, v))

    def difference(self, q0, q1) -> np.ndarray:
        """The constant velocity ``v`` with ``integrate(q0, v, 1) = q1`` (``q1 − q0`` for joints
        with ``ν = q̇``; the logarithm of the relative motion for the others).

        Raises
        ------
        JointError
            A user-defined ``q̇`` map, which has no inverse here.
        """
        q0, q1 = self._vector(q0, self.nq, "q0"), self._vector(q1, self.nq, "q1")
        if type(self)._qdot is not Joint._qdot:
            raise JointError(f"{self} has a user-defined q̇ map: difference(q0, q1) is not defined for it")
        return float_or_complex(q1) - q0

    def reversed(self) -> "ReversedJoint":
        """This joint with opposite polarity (Featherstone Table 4.2)."""
        return ReversedJoint(self)

    # ------------------------------------------------------------------ to implement
    def _kinematics(self, q: np.ndarray, v: np.ndarray) -> JointKinematics:
        raise NotImplementedError

    def _qdot(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        return v

    # ------------------------------------------------------------------ checks of user code
    def check_rigid(self) -> None:
        """For a :attr:`user_defined` joint: :class:`~sko.errors.JointError` naming it unless its
        ``X_J`` is a rigid Plücker transform at the configurations its code accepts among its
        neutral one and two random ones (a scaled or sheared ``X_J`` gave wrong dynamics
        silently): judged once, when the joint is made or a system takes it, not at every call. A
        library joint holds it by construction; symbolic kinematics are not judged."""
        if not self.user_defined:
            return
        rng = np.random.default_rng(0)
        source = self._user_code or f"{type(self).__qualname__}._kinematics"
        for i in range(3):
            try:
                q = self.neutral() if i == 0 else self.random(rng)  # projected by its normalize
                X = self._kinematics(q, np.zeros(self.nv)).X
            except Exception:  # noqa: BLE001 - a configuration outside its domain: its calls say so
                continue
            if np.asarray(X).dtype != object:
                checked_transform(X, f"{self}: X_J returned by {source} at q = {q}", error=JointError)

    def _checked_kinematics(self, out, source: str, q: np.ndarray, v: np.ndarray) -> "JointKinematics":
        """``(X_J, S, c_J)`` that user code (``source``) returned at ``(q, v)``, checked as input:
        a tuple of three arrays of numbers (:meth:`_returned`) of shapes 6 × 6, 6 × nv and (6,);
        else the :class:`~sko.errors.JointError` naming this joint."""
        if not isinstance(out, tuple) or len(out) != 3:
            raise JointError(f"{self}: {source} must return a tuple (X_J, S, c_J)")
        X, S, c = (self._returned(x, what, q, v, source=source) for x, what in zip(out, ("X_J", "S", "c_J")))
        for what, arr, shape in (("X_J", X, (6, 6)), ("S", S, (6, self.nv)), ("c_J", c, (6,))):
            if arr.shape != shape:
                raise JointError(f"{self}: {source} returned {what} of shape {arr.shape}, expected {shape}")
        return JointKinematics(X, S, c)

    def _checked_coordinates(self, out, what: str, source: str, *state) -> np.ndarray:
        """``nq`` numbers user code (``source``, its ``what``) returned at ``state``, as
        :meth:`_returned` checks them, or the :class:`~sko.errors.JointError` naming this joint."""
        out = self._returned(out, what, *state, source=source)
        if out.shape != (self.nq,):
            raise JointError(f"{self}: {source} returned shape {out.shape}, expected ({self.nq},)")
        return out

    def _returned(self, value, what: str, *state: np.ndarray, source: str = "the user's function") -> np.ndarray:
        """An array of numbers user code (``source``) returned at ``state``, or the error naming
        this joint and ``what``: ragged rows, text, a complex array at a real state (its imaginary
        part would be dropped, or leak into real results), symbols at a numeric one."""
        try:
            out = plain_numbers_as_floats(numeric_array(value, f"{self}: {what} returned by {source}", copy=False), what)
        except SKOError as error:
            if "is not an array" in str(error):
                raise JointError(f"{self}: {what} returned by {source} is not an array (ragged rows?): {error}") from None
            raise JointError(str(error)) from None
        kind = result_dtype(*state).kind
        if out.dtype.kind == "c" and kind == "f":
            raise JointError(f"{self}: {what} returned by {source} is complex at a real state")
        if out.dtype == object and kind != "O":
            raise JointError(f"{self}: {what} returned by {source} holds symbols at a numeric state")
        return out

    # ------------------------------------------------------------------ helpers
    def _numbers_only(self, what: str, *xs) -> None:
        """:class:`~sko.errors.JointError` naming this joint when ``xs`` hold expressions: its
        exponential or logarithm map (``what``) takes a series near the zero rotation by
        comparing the angle, which symbols do not allow."""
        if any(np.asarray(x).dtype == object for x in xs):
            raise JointError(f"{self}: {what} takes numbers: its exponential and logarithm maps take a series near the "
                             "zero rotation by comparing the angle, which symbolic coordinates do not allow")

    def _vector(self, x, n: int, what: str) -> np.ndarray:
        try:
            x = numeric_array(x, f"{what} of {self}", copy=False)
        except SKOError as exc:
            raise JointError(str(exc)) from None
        if x.ndim == 0 and n == 1:
            x = x.reshape(1)
        if x.shape != (n,):
            raise JointError(f"{what} of {self} must have shape ({n},), got {x.shape}")
        if x.dtype != object and not np.isfinite(x).all():
            raise JointError(f"{what} of {self} contains NaN or infinity: {x}")
        return x

    def __repr__(self) -> str:
        label = f" {self.name!r}" if self.name else ""
        return f"{type(self).__name__}{label}"


def _unit(axis, joint: str) -> np.ndarray:
    """A unit axis from any finite nonzero 3-vector (normalised on its scaled copy, so neither a
    huge nor a tiny axis over- or underflows)."""
    return unit_vector(axis, f"{joint}: axis", error=JointError)


def _motion(omega, vel, dtype) -> np.ndarray:
    s = np.zeros(6, dtype=dtype)
    s[:3], s[3:] = omega, vel
    return s


def _constant(A: np.ndarray) -> np.ndarray:
    """A read-only array a joint returns at every state (a constant motion subspace)."""
    A.setflags(write=False)
    return A


_BALL_S = _constant(np.eye(6)[:, :3].copy())  #: S = [I; 0] of ball joints
_FREE_S = _constant(np.eye(6))  #: S = I of the free joint


# ---------------------------------------------------------------------------- one-dof joints
class Helical(Joint):
    """Screw about unit ``axis`` through the origin with pitch ``h``: ``S = [u; h u]``.

    ``X_J = rot(E_u(q)) xlt(h q u)``; ``h = 0`` is a revolute joint."""

    nq = nv = 1
    kind = "helical"
    constant_motion = True

    def __init__(self, axis=(0.0, 0.0, 1.0), pitch: float = 0.0, name: str | None = None):
        super().__init__(name)
        self.axis = _constant(_unit(axis, f"{type(self).__name__} {name!r}"))
        self.pitch = checked_scalar(pitch, f"{type(self).__name__} {name!r}: pitch", error=JointError)
        # With K = u× (K³ = −K): E = R_u(q)ᵀ = I − sin q K + (1 − cos q) K² (Rodrigues) and the
        # lower block −E (h q u)× = −h q E K = h q sin q K² − h q cos q K, so X_J is linear in
        # w = (1, sin q, cos q[, q sin q, q cos q]): X_J = T w with a constant 6 × 6 × 5 tensor T.
        K = skew(self.axis)
        K2 = K @ K
        T = np.zeros((6, 6, 5))
        for block in (slice(0, 3), slice(3, 6)):
            T[block, block, 0], T[block, block, 1], T[block, block, 2] = np.eye(3) + K2, -K, -K2
        T[3:, :3, 3], T[3:, :3, 4] = self.pitch * K2, -self.pitch * K
        self._T = _constant(T if self.pitch else T[:, :, :3].copy())
        self._S = _constant(_motion(self.axis, self.pitch * self.axis, float).reshape(6, 1))

    def compiled_parameters(self):
        return np.array([*self.axis, self.pitch])

    def _kinematics(self, q, v):
        c, s = cos_sin(q[0])
        w = np.array([1, s, c, q[0] * s, q[0] * c] if self.pitch else [1, s, c])
        return JointKinematics(self._T @ w, self._S, np.zeros(6, dtype=result_dtype(q, v)))


class Revolute(Helical):
    """Rotation about unit ``axis`` through the origin: ``S = [u; 0]``."""

    kind = "revolute"

    def __init__(self, axis=(0.0, 0.0, 1.0), name: str | None = None):
        super().__init__(axis, 0.0, name)


class Prismatic(Joint):
    """Translation along unit ``axis``: ``X_J = xlt(q u)``, ``S = [0; u]``."""

    nq = nv = 1
    kind = "prismatic"
    constant_motion = True

    def __init__(self, axis=(0.0, 0.0, 1.0), name: str | None = None):
        super().__init__(name)
        self.axis = _constant(_unit(axis, f"Prismatic {name!r}"))
        self._S = _constant(_motion(np.zeros(3), self.axis, float).reshape(6, 1))

    def random(self, rng):
        return rng.uniform(-1.0, 1.0, 1)

    def compiled_parameters(self):
        return self.axis

    def _kinematics(self, q, v):
        dtype = result_dtype(q, v)
        return JointKinematics(xlt(q[0] * self.axis), self._S, np.zeros(6, dtype=dtype))


class RackAndPinion(Joint):
    """Pinion of radius ``r`` rolling along a rack on the predecessor's x axis (Example 4.6).

    ``X_J = rot(rz(q)) xlt([r q, 0, 0])``, ``S = [0, 0, 1, r cos q, −r sin q, 0]``,
    ``c_J = [0, 0, 0, −r sin q q̇², −r cos q q̇², 0]``."""

    nq = nv = 1
    kind = "rack-and-pinion"

    def __init__(self, radius: float, name: str | None = None):
        super().__init__(name)
        self.radius = checked_scalar(radius, f"RackAndPinion {name!r}: radius", error=JointError)

    def compiled_parameters(self):
        return np.array([self.radius])

    def _kinematics(self, q, v):
        r, dtype = self.radius, result_dtype(q, v)
        c, s = cos_sin(q[0])
        X = rot(rz(q[0])) @ xlt(np.array([r * q[0], 0 * q[0], 0 * q[0]]))
        S = np.zeros((6, 1), dtype=dtype)
        S[2, 0], S[3, 0], S[4, 0] = 1, r * c, -r * s
        cJ = np.zeros(6, dtype=dtype)
        cJ[3], cJ[4] = -r * s * v[0] ** 2, -r * c * v[0] ** 2
        return JointKinematics(X, S, cJ)


# ---------------------------------------------------------------------------- multi-dof joints
class Cylindrical(Joint):
    """Rotation about and translation along one unit ``axis``; ``q = (angle, distance)``,
    ``S = [[u, 0], [0, u]]``."""

    nq = nv = 2
    kind = "cylindrical"
    constant_motion = True

    def __init__(self, axis=(0.0, 0.0, 1.0), name: str | None = None):
        super().__init__(name)
        self.axis = _constant(_unit(axis, f"Cylindrical {name!r}"))

    def random(self, rng):
        return np.array([rng.uniform(-np.pi, np.pi), rng.uniform(-1.0, 1.0)])

    def compiled_parameters(self):
        return self.axis

    def _kinematics(self, q, v):
        dtype = result_dtype(q, v)
        X = plucker(axis_angle_matrix(self.axis, q[0]).T, q[1] * self.axis)
        S = np.zeros((6, 2), dtype=dtype)
        S[:3, 0] = self.axis
        S[3:, 1] = self.axis
        return JointKinematics(X, S, np.zeros(6, dtype=dtype))


def _plane_basis(normal) -> np.ndarray:
    """Coordinate transform ``U`` (rows ``e1, e2, n``) from ``F_p`` to a frame whose z is ``n``."""
    n = normal
    helper = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    e1 = helper - (helper @ n) * n  # the predecessor's x axis projected on the plane (x itself for n = z)
    e1 /= np.linalg.norm(e1)
    return np.array([e1, np.cross(n, e1), n])


class Planar(Joint):
    """Planar motion in the plane normal to unit ``normal`` (z by default).

    ``q = (θ, x, y)``: rotation ``θ`` about the normal and the successor origin ``(x, y)`` in
    the predecessor's plane axes; velocity ``ν = (ω, v_x, v_y)``: the angular rate and the
    origin's velocity **in the successor frame**, so ``S = [e_z, e_x', e_y']`` is constant and
    ``c_J = 0`` (Featherstone Example 4.5: position in ``F_p``, velocity in ``F_s``);
    ``q̇ = (ω, R_z(θ) (v_x, v_y))``.
    """

    nq = nv = 3
    kind = "planar"
    constant_motion = True

    def __init__(self, normal=(0.0, 0.0, 1.0), name: str | None = None):
        super().__init__(name)
        self.normal = _unit(normal, f"Planar {name!r}")
        self._U = _plane_basis(self.normal)
        self._S = rot(self._U.T)[:, [2, 3, 4]]

    def random(self, rng):
        return np.array([rng.uniform(-np.pi, np.pi), *rng.uniform(-1.0, 1.0, 2)])

    def compiled_parameters(self):
        return self._U.ravel()

    def _kinematics(self, q, v):
        dtype = result_dtype(q, v)
        r = np.array([q[1], q[2], 0 * q[0]])
        X = rot(self._U.T) @ rot(rz(q[0])) @ xlt(r) @ rot(self._U)
        return JointKinematics(X, self._S.astype(dtype), np.zeros(6, dtype=dtype))

    def _integrate(self, q, v, dt):
        """Exact for a constant body velocity (the SE(2) exponential)."""
        self._numbers_only("integrate", q, v)
        q = self.normalize(q)
        w, u = self._vector(v, 3, "velocity")[0] * dt, float_or_complex(v[1:]) * dt
        if abs(real_part(w)) < 1e-8:
            V = np.array([[1.0, -w / 2], [w / 2, 1.0]])
        else:
            V = np.array([[np.sin(w), np.cos(w) - 1], [1 - np.cos(w), np.sin(w)]]) / w
        return np.concatenate([[q[0] + w], q[1:] + rotation_z(q[0])[:2, :2] @ (V @ u)])

    def difference(self, q0, q1):
        """The SE(2) logarithm of the relative motion (inverse of :meth:`integrate` at ``dt = 1``;
        the angle is taken as ``θ₁ − θ₀``, unwrapped)."""
        self._numbers_only("difference", q0, q1)
        q0, q1 = self.normalize(q0), self.normalize(self._vector(q1, 3, "q1"))
        w = q1[0] - q0[0]
        d = rotation_z(q0[0])[:2, :2].T @ (q1[1:] - q0[1:])
        if abs(real_part(w)) < 1e-8:
            V = np.array([[1.0, -w / 2], [w / 2, 1.0]])
        else:
            V = np.array([[np.sin(w), np.cos(w) - 1], [1 - np.cos(w), np.sin(w)]]) / w
        return np.concatenate([[w], np.linalg.solve(V, d)])

    def _qdot(self, q, v):
        out = np.zeros(3, dtype=result_dtype(q, v))
        out[0] = v[0]
        out[1:] = rotation_z(q[0])[:2, :2] @ v[1:]
        return out


def _check_quaternion(quat, joint) -> None:
    if quat.dtype == object:
        return
    real = real_part(quat)  # a complex step: its real part
    if np.abs(real).max() < 1e-9 and scaled_norm(real) < 1e-9:  # the norm is at least the largest entry
        raise JointError(f"{joint}: quaternion {quat} has (near) zero norm and describes no rotation")


def _unit_quaternion(rng) -> np.ndarray:
    quat = rng.normal(size=4)
    quat /= np.linalg.norm(quat)
    return quat if quat[0] >= 0 else -quat


class Spherical(Joint):
    """Ball joint with a unit quaternion ``q = (w, x, y, z)`` (Featherstone Eq. 4.12, 4.13).

    ``ν = ω`` is the angular velocity in the successor frame, ``S = [I; 0]``, ``c_J = 0``,
    ``q̇ = ½ q ⊗ (0, ω)``; a non-unit ``q`` is normalised."""

    nq, nv = 4, 3
    kind = "spherical"
    constant_motion = True

    def neutral(self):
        return np.array([1.0, 0.0, 0.0, 0.0])

    def random(self, rng):
        return _unit_quaternion(rng)

    def normalize(self, q):
        q = np.array(float_or_complex(self._vector(q, 4, "q")))
        _check_quaternion(q, self)
        return quaternion_normalize(q)

    def _integrate(self, q, v, dt):
        self._numbers_only("integrate", q, v)
        q = self.normalize(q)
        return self.normalize(quaternion_multiply(q, quaternion_exp(dt * float_or_complex(v))))

    def difference(self, q0, q1):
        """``ω = log(q0⁻¹ ⊗ q1)`` in the successor frame, ``‖ω‖ ≤ π`` (the shortest rotation)."""
        self._numbers_only("difference", q0, q1)
        q0, q1 = self.normalize(q0), self.normalize(q1)
        return quaternion_log(quaternion_multiply(quaternion_conjugate(q0), q1))

    def _kinematics(self, q, v):
        _check_quaternion(q, self)
        return JointKinematics(rot(quaternion_matrix(q).T), _BALL_S, np.zeros(6, dtype=result_dtype(q, v)))

    def _qdot(self, q, v):
        _check_quaternion(q, self)  # as the kinematics: a zero quaternion is no configuration
        return quaternion_rate(q, v)

    def _qdot_matrix(self, q):
        _check_quaternion(q, self)
        return quaternion_rate_matrix(q)


class SphericalEulerZYX(Joint):
    """Ball joint with z-y-x Euler angles ``q = (yaw, pitch, roll)`` and ``ν = q̇``.

    ``E = rx(q₃) ry(q₂) rz(q₁)`` (Eq. 4.7), non-constant ``S(q)`` (Eq. 4.8) and
    ``c_J = S̊ q̇ ≠ 0`` (Eq. 4.9); singular at pitch ``±90°``."""

    nq = nv = 3
    kind = "spherical-euler-zyx"

    def random(self, rng):
        return np.array([rng.uniform(-np.pi, np.pi), rng.uniform(-1.2, 1.2), rng.uniform(-np.pi, np.pi)])

    def _kinematics(self, q, v):
        dtype = result_dtype(q, v)
        E = rx(q[2]) @ ry(q[1]) @ rz(q[0])
        c2, s2 = cos_sin(q[1])
        c3, s3 = cos_sin(q[2])
        d1, d2, d3 = v
        S = np.zeros((6, 3), dtype=dtype)
        S[0, 0], S[1, 0], S[2, 0] = -s2, c2 * s3, c2 * c3
        S[1, 1], S[2, 1] = c3, -s3
        S[0, 2] = 1
        cJ = np.zeros(6, dtype=dtype)
        cJ[0] = -c2 * d1 * d2
        cJ[1] = -s2 * s3 * d1 * d2 + c2 * c3 * d1 * d3 - s3 * d2 * d3
        cJ[2] = -s2 * c3 * d1 * d2 - c2 * s3 * d1 * d3 - c3 * d2 * d3
        return JointKinematics(rot(E), S, cJ)


class Free(Joint):
    """Six-dof joint (floating base): ``q = (w, x, y, z, p_x, p_y, p_z)``.

    The quaternion gives the successor's orientation and ``p`` its origin, both relative to
    ``F_p``; ``ν = [ω; v]`` is the successor's spatial velocity in its own frame, so ``S = I``,
    ``c_J = 0`` and ``q̇ = (½ q ⊗ (0, ω), R v)``. A non-unit quaternion is normalised."""

    nq, nv = 7, 6
    kind = "free"
    constant_motion = True

    def neutral(self):
        return np.array([1.0, 0, 0, 0, 0, 0, 0])

    def random(self, rng):
        return np.concatenate([_unit_quaternion(rng), rng.uniform(-1.0, 1.0, 3)])

    def normalize(self, q):
        q = np.array(float_or_complex(self._vector(q, 7, "q")))
        _check_quaternion(q[:4], self)
        q[:4] = quaternion_normalize(q[:4])
        return q

    def _integrate(self, q, v, dt):
        """Exact for a constant body velocity: ``(R, p) ← (R, p) exp(dt [ω; v])``."""
        self._numbers_only("integrate", q, v)
        q = self.normalize(q)
        v = float_or_complex(self._vector(v, 6, "velocity")) * dt
        w, u = v[:3], v[3:]
        angle = analytic_norm(w)  # V is even in it: analytic in a complex step
        W = skew(w)
        if real_part(angle) < 1e-8:
            V = np.eye(3) + W / 2 + W @ W / 6
        else:
            V = np.eye(3) + (1 - np.cos(angle)) / angle**2 * W + (angle - np.sin(angle)) / angle**3 * (W @ W)
        p = q[4:] + quaternion_matrix(q[:4]) @ (V @ u)
        quat = quaternion_multiply(q[:4], quaternion_exp(w))
        return self.normalize(np.concatenate([quat, p]))

    def difference(self, q0, q1):
        """The SE(3) logarithm ``[ω; v]`` of ``(R₀, p₀)⁻¹ (R₁, p₁)`` (body frame, ``‖ω‖ ≤ π``):
        the inverse of :meth:`integrate` at ``dt = 1``."""
        self._numbers_only("difference", q0, q1)
        q0, q1 = self.normalize(q0), self.normalize(q1)
        w = quaternion_log(quaternion_multiply(quaternion_conjugate(q0[:4]), q1[:4]))
        d = quaternion_matrix(q0[:4]).T @ (q1[4:] - q0[4:])
        angle = analytic_norm(w)
        W = skew(w)
        if real_part(angle) < 1e-8:
            V = np.eye(3) + W / 2 + W @ W / 6
        else:
            V = np.eye(3) + (1 - np.cos(angle)) / angle**2 * W + (angle - np.sin(angle)) / angle**3 * (W @ W)
        return np.concatenate([w, np.linalg.solve(V, d)])

    def _kinematics(self, q, v):
        _check_quaternion(q[:4], self)
        dtype = result_dtype(q, v)
        X = plucker(quaternion_matrix(q[:4]).T, q[4:])
        return JointKinematics(X, _FREE_S, np.zeros(6, dtype=dtype))

    def _qdot(self, q, v):
        _check_quaternion(q[:4], self)  # its rotation of the linear velocity would be NaN
        out = np.zeros(7, dtype=result_dtype(q, v))
        out[:4] = quaternion_rate(q[:4], v[:3])
        out[4:] = quaternion_matrix(q[:4]) @ v[3:]
        return out

    def _qdot_matrix(self, q):
        _check_quaternion(q[:4], self)
        out = np.zeros((7, 6), dtype=result_dtype(q))
        out[:4, :3] = quaternion_rate_matrix(q[:4])
        out[4:, 3:] = quaternion_matrix(q[:4])
        return out


class Fixed(Joint):
    """No motion: ``X_J = I``, no coordinates. A rigid system merges the successor into its
    predecessor, so fixed joints never become SKO nodes."""

    nq = nv = 0
    kind = "fixed"

    def _kinematics(self, q, v):
        dtype = result_dtype(q, v)
        return JointKinematics(np.eye(6, dtype=dtype), np.zeros((6, 0), dtype=dtype), np.zeros(6, dtype=dtype))


# ---------------------------------------------------------------------------- user-defined
class CustomJoint(Joint):
    """A user-defined joint.

    Parameters
    ----------
    nq, nv : int
        Numbers of position and velocity variables.
    kinematics : callable ``(q, v) -> (X_J, S, c_J)``
        ``X_J`` 6 × 6, ``S`` 6 × nv and ``c_J = S̊ v`` (6,), in the conventions of this module.
    qdot : callable ``(q, v) -> q̇``, optional
        Required when ``nq != nv``; the identity otherwise.
    neutral : array, optional
        The configuration with ``X_J = I`` (zeros by default).
    normalize : callable ``q -> q``, optional
        Projection onto the configuration manifold (identity by default).

    The functions' results are checked as input: arrays of numbers of their shapes, real at a
    real state (complex only where the state is, as in a complex step), and ``X_J`` a rigid
    Plücker transform at the neutral configuration and two random ones, judged when the joint
    is made; a :class:`~sko.errors.JointError` names the joint otherwise.

    Examples
    --------
    A revolute joint about z written by hand:

    >>> from sko.spatial import rot, rz
    >>> j = CustomJoint(1, 1, lambda q, v: (rot(rz(q[0])), np.array([[0, 0, 1, 0, 0, 0.0]]).T, np.zeros(6)))
    >>> j.motion_subspace([0.3]).ravel()
    array([0., 0., 1., 0., 0., 0.])
    """

    kind = "custom"
    user_defined = True
    _user_code = "the user's function"

    def __init__(self, nq: int, nv: int, kinematics: Callable, qdot: Callable | None = None, neutral=None,
                 normalize: Callable | None = None, name: str | None = None):
        super().__init__(name)
        if int(nq) != nq or int(nv) != nv or nq < 0 or nv < 0 or nv > 6:
            raise JointError(f"CustomJoint {name!r}: need integers nq >= 0 and 0 <= nv <= 6, got nq={nq!r}, nv={nv!r}")
        if not callable(kinematics):
            raise JointError(f"CustomJoint {name!r}: kinematics must be callable")
        if nq != nv and qdot is None:
            raise JointError(f"CustomJoint {name!r}: nq={nq} differs from nv={nv}, so a qdot map is required")
        self.nq, self.nv = int(nq), int(nv)
        self._user_kinematics, self._user_qdot, self._user_normalize = kinematics, qdot, normalize
        self._neutral = np.zeros(self.nq) if neutral is None else np.array(neutral, dtype=float)
        if self._neutral.shape != (self.nq,):
            raise JointError(f"CustomJoint {name!r}: neutral must have shape ({self.nq},), got {self._neutral.shape}")
        self.check_rigid()

    def neutral(self):
        return self._neutral.copy()

    def random(self, rng):
        return self.normalize(self._neutral + rng.uniform(-1.0, 1.0, self.nq))

    def normalize(self, q):
        q = np.array(float_or_complex(self._vector(q, self.nq, "q")))
        if self._user_normalize is None:
            return q
        out = float_or_complex(self._returned(self._user_normalize(q), "normalize", q))
        if out.shape != (self.nq,):
            raise JointError(f"{self}: normalize returned shape {out.shape}, expected ({self.nq},)")
        return out

    def _kinematics(self, q, v):
        return self._checked_kinematics(self._user_kinematics(q, v), self._user_code, q, v)

    def _qdot(self, q, v):
        if self._user_qdot is None:
            return v
        out = self._returned(self._user_qdot(q, v), "qdot", q, v)
        if out.shape != (self.nq,):
            raise JointError(f"{self}: qdot returned shape {out.shape}, expected ({self.nq},)")
        return out


# ---------------------------------------------------------------------------- polarity
class ReversedJoint(Joint):
    """A joint whose predecessor is the tree child (Featherstone Table 4.2).

    With ``X, S, c`` the wrapped joint's model: ``X' = X^{-1}``, ``S' = −X^{-1} S``,
    ``c' = −X^{-1} c``; coordinates and the ``q̇`` map are the wrapped joint's."""

    kind = "reversed"

    def __init__(self, joint: Joint):
        if not isinstance(joint, Joint):
            raise JointError(f"ReversedJoint wraps a Joint, got {type(joint).__name__}")
        super().__init__(joint.name)
        self.joint = joint
        self.nq, self.nv = joint.nq, joint.nv

    def neutral(self):
        return self.joint.neutral()

    def random(self, rng):
        return self.joint.random(rng)

    def normalize(self, q):
        return self.joint.normalize(q)

    def _integrate(self, q, v, dt):
        return self.joint.integrate(q, v, dt)

    def difference(self, q0, q1):
        return self.joint.difference(q0, q1)

    def reversed(self) -> Joint:
        return self.joint

    @property
    def limits(self) -> JointLimits:
        return getattr(self, "_limits", None) or self.joint.limits

    @property
    def user_defined(self) -> bool:
        return self.joint.user_defined

    def _kinematics(self, q, v):
        X, S, c = self.joint._kinematics(q, v)
        Xi = plucker_inverse(X)
        return JointKinematics(Xi, -(Xi @ S), -(Xi @ c))

    def _qdot(self, q, v):
        return self.joint._qdot(q, v)

    def _qdot_matrix(self, q):
        return self.joint._qdot_matrix(q)

    def __repr__(self) -> str:
        return f"ReversedJoint({self.joint!r})"


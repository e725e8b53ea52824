"""A system's ``q̇`` and normalisation without a Python call per body.

Most joints have ``q̇ = θ̇`` and nothing to project on (revolute, prismatic, helical, …), and
so do the deformation coordinates of a flexible body: their entries of ``q̇`` are copied from
``θ̇`` (and of the normalised ``q`` from ``q``) in one indexed step. Only the joints with a map of
their own (quaternions: spherical and free joints; planar joints; user-defined ``q̇`` maps) are
called, on their slices. The numbers are those of the body-by-body definitions
(:meth:`~sko.bodies.contract.BodyType.qdot`, :meth:`~sko.bodies.contract.BodyType.normalize`):
the same functions compute every entry.

A body type that defines ``qdot`` or ``normalize`` itself is called on its slices too when it
gives them as compiled hooks (:mod:`sko.engine.hooks`), so that the compiled rollout can run
them; :func:`coordinate_maps` gives ``None`` for a system with any other such type (its answer
is taken as it is, body by body, by the caller).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from sko.bodies.contract import BodyType
from sko.bodies.flexible import FlexibleBody
from sko.bodies.hinge import JointCoordinates
from sko.bodies.joints import Joint, ReversedJoint, Spherical
from sko.errors import JointError

__all__ = ["CoordinateMaps", "coordinate_maps"]


def coordinate_maps(system) -> "CoordinateMaps | None":
    """The :class:`CoordinateMaps` of a system (its ``_coordinate_maps``, made on first use), or
    ``None`` (module docstring)."""
    return system._coordinate_maps


class CoordinateMaps:
    """Where ``q̇ = θ̇``, and the joints' own ``q̇`` maps and projections elsewhere (normalising
    copies every other entry of ``q``)."""

    def __init__(self, nq: int, rate_q: list, rate_v: list, rates: list, projections: list, owners: dict | None = None):
        self.nq = nq
        #: the body whose coordinates start at an entry of q, latest first (errors name it)
        self.owners = dict(owners or {})
        self.rate_q = np.array(rate_q, dtype=np.intp)  #: entries of q̇ …
        self.rate_v = np.array(rate_v, dtype=np.intp)  #: … equal to these of θ̇
        self.rates = tuple(rates)  #: (q slice, θ̇ slice, q̇ map, its matrix or None) of the other joints
        self.projections = tuple(projections)  #: (q slice, projection) of the other joints
        # the ball joints' G(q) (4 × 3, quaternion_rate_matrix), all at once: the rows and columns of
        # Q(q) of their 12 entries, the entry of q each is ± ½ of, and the signs
        balls = [(qs, vs, matrix) for qs, vs, _, matrix in rates if getattr(matrix, "__func__", None) is _BALL_MATRIX]
        self.matrix_rates = tuple(r for r in rates if getattr(r[3], "__func__", None) is not _BALL_MATRIX)
        self.ball_checks = tuple(matrix for *_, matrix in balls)
        self.ball_q = np.array([range(qs.start, qs.stop) for qs, *_ in balls], dtype=np.intp).reshape(-1, 4)
        self.ball_rows = np.array([[qs.start + r for r in range(4) for _ in range(3)] for qs, *_ in balls],
                                  dtype=np.intp)
        self.ball_columns = np.array([[vs.start + c for _ in range(4) for c in range(3)] for _, vs, _ in balls],
                                     dtype=np.intp)
        self.ball_entries = self.ball_q[:, _BALL_ENTRIES]
        self._ball_entries, self._ball_signs = self.ball_entries.ravel(), np.tile(_BALL_SIGNS, len(balls))
        # (nv, Q(q)'s entries that are 1 (q̇ = θ̇), the flat positions of the balls' entries), made on
        # first use and published as one tuple: a concurrent call sees all of it or none
        self._ones: tuple[int, np.ndarray, np.ndarray] | None = None

    @classmethod
    def of(cls, system) -> "CoordinateMaps | None":
        rate_q, rate_v, rates, projections = [], [], [], []
        layout = system._engine.layout
        for k in system.bodies:
            body = system.body(k)
            qs, vs = system.q_slices[k], system.dof_slices[k]
            kind = type(body)
            if kind.qdot is BodyType.qdot and kind.normalize is BodyType.normalize and body.q_size == body.dof_size:
                rate_q += range(qs.start, qs.stop)
                rate_v += range(vs.start, vs.stop)
                continue
            hooks = None if layout is None else layout.hooks[layout.index[k]]
            if hooks is not None and hooks.coordinates:  # the type's own maps, compiled too
                if kind.qdot is BodyType.qdot:
                    rate_q += range(qs.start, qs.stop)
                    rate_v += range(vs.start, vs.stop)
                else:
                    rates.append((qs, vs, body.qdot, None))
                if kind.normalize is not BodyType.normalize:
                    projections.append((qs, body.normalize))
                continue
            if not ((kind.qdot is JointCoordinates.qdot and kind.normalize is JointCoordinates.normalize)
                    or (kind.qdot is FlexibleBody.qdot and kind.normalize is FlexibleBody.normalize)):
                return None
            joint = getattr(body, "joint", None)
            if not isinstance(joint, Joint):
                return None
            nq, nv = joint.nq, joint.nv
            jq, jv = slice(qs.start, qs.start + nq), slice(vs.start, vs.start + nv)
            rate, matrix, projection = _joint_maps(joint)
            if rate is None:
                rate_q += range(jq.start, jq.stop)
                rate_v += range(jv.start, jv.stop)
            else:
                rates.append((jq, jv, rate, matrix))
            if projection is not None:
                projections.append((jq, projection))
            rate_q += range(jq.stop, qs.stop)  # a flexible body's deformation coordinates
            rate_v += range(jv.stop, vs.stop)
        owners = dict(sorted(((system.q_slices[k].start, k) for k in system.bodies if system.body(k).q_size),
                             key=lambda item: item[0], reverse=True))  # the last start at or before an entry: its body
        return cls(system.q_size, rate_q, rate_v, rates, projections, owners)

    def qdot(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """``q̇`` at checked ``q``, ``θ̇`` (1-D, finite, of the system's sizes)."""
        pieces = [(qs, np.asarray(rate(q[qs], v[vs]))) for qs, vs, rate, _ in self.rates]
        dtypes = [p.dtype for _, p in pieces] + ([v.dtype] if self.rate_q.size else [])
        out = np.empty(self.nq, dtype=np.result_type(*dtypes) if dtypes else float)
        out[self.rate_q] = v[self.rate_v]
        for qs, p in pieces:
            out[qs] = p
        return out

    def qdot_matrix(self, q: np.ndarray, nv: int, check: bool = True) -> np.ndarray:
        """``Q(q)`` (nq × nv) with ``q̇ = Q(q) θ̇`` at a checked ``q``: ones where ``q̇ = θ̇``, the
        joints' own maps column by column elsewhere (each is linear in ``θ̇``). Without ``check``,
        a quaternion of zero norm is not looked for (the caller's kernels reject it)."""
        ones, ball_flat = self._tables(nv)
        out = ones.copy() if q.dtype == _F8 else ones.astype(np.result_type(q, float))
        if self.ball_checks:
            entries = q.take(self._ball_entries)  # each ball joint's 12 entries of G(q): all four of its q
            if check and not np.abs(entries).min() >= 1e-9 and np.abs(entries.reshape(-1, _BALL_ENTRIES.size)).max(axis=1).min() < 1e-9:
                for k in np.flatnonzero((np.abs(q[self.ball_q]) < 1e-9).all(axis=1)):  # a quaternion of (near)
                    self._named(self.ball_checks[k], q[self.ball_q[k]], int(self.ball_q[k, 0]))  # zero norm
            out.reshape(-1)[ball_flat] = entries * self._ball_signs
        for qs, vs, rate, matrix in self.matrix_rates:
            out[qs, vs] = matrix(q[qs]) if matrix is not None else np.column_stack(
                [rate(q[qs], e) for e in np.eye(vs.stop - vs.start)])
        return out

    def linear_recipe(self, nv: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
        """``Q(q)`` of :meth:`qdot_matrix` as ``(template, flat, entries, signs)``: ``template``
        with its flattened entry ``flat[k]`` set to ``signs[k] · q[entries[k]]`` (the ball joints'
        ``G(q)``), for a system with no other map; ``None`` for one with another map."""
        if self.matrix_rates:
            return None
        ones, ball_flat = self._tables(nv)
        return ones, ball_flat, self._ball_entries, self._ball_signs

    def _tables(self, nv: int) -> tuple[np.ndarray, np.ndarray]:
        """``Q(q)``'s entries that are 1 (``q̇ = θ̇``) and the flat positions of the balls' entries,
        made on first use and published as one tuple (a concurrent call sees all of it or none)."""
        cached = self._ones
        if cached is None or cached[0] != nv:
            ones = np.zeros((self.nq, nv))
            ones[self.rate_q, self.rate_v] = 1.0
            ones.setflags(write=False)
            cached = self._ones = (nv, ones, (self.ball_rows * nv + self.ball_columns).ravel())
        return cached[1], cached[2]

    def _named(self, check: Callable, quaternion: np.ndarray, start: int) -> None:
        """``check(quaternion)``, a joint's own check, its error naming the body whose coordinates
        hold the quaternion from entry ``start`` of ``q``."""
        try:
            check(quaternion)
        except JointError as exc:
            owner = next((k for at, k in self.owners.items() if at <= start), None)
            raise exc if owner is None or repr(owner) in str(exc) else JointError(f"body {owner!r}: {exc}") from None

    def normalize(self, q: np.ndarray) -> np.ndarray:
        """``q`` projected back onto the configuration manifold, at a checked real or complex
        ``q`` (a complex step stays complex: the projections are analytic)."""
        out = np.array(q, dtype=complex if q.dtype.kind == "c" else float)
        for qs, projection in self.projections:
            out[qs] = projection(q[qs])
        return out


#: a ball joint's matrix of its q̇ map, taken for all ball joints at once by ``qdot_matrix``:
#: ``G(q) = ½ [[−x, −y, −z], [w, −z, y], [z, w, −x], [−y, x, w]]`` of ``q = (w, x, y, z)``, row by
#: row, as the entries of ``q`` and their factors
_BALL_MATRIX = Spherical._qdot_matrix
#: numpy's float64
_F8 = np.dtype(np.float64)
_BALL_ENTRIES = np.array([1, 2, 3, 0, 3, 2, 3, 0, 1, 2, 1, 0])
_BALL_SIGNS = 0.5 * np.array([-1, -1, -1, 1, -1, 1, 1, 1, -1, -1, 1, 1])


def _joint_maps(joint: Joint) -> tuple[Callable | None, Callable | None, Callable | None]:
    """The joint's ``q̇`` map, the matrix of that map (``None``: built column by column from a
    user-defined ``qdot``) and its projection; ``None`` for the identity (a reversed joint has the
    coordinates of the joint it wraps)."""
    while isinstance(joint, ReversedJoint) and type(joint).qdot is Joint.qdot and type(joint).normalize is ReversedJoint.normalize \
            and type(joint)._qdot is ReversedJoint._qdot:
        joint = joint.joint
    kind = type(joint)
    matrix = None
    if kind.qdot is not Joint.qdot:
        rate = joint.qdot
    elif kind._qdot is Joint._qdot and joint.nq == joint.nv:
        rate = None
    else:
        rate, matrix = joint._qdot, joint._qdot_matrix  # the checks of Joint.qdot are the system's, already made
    return rate, matrix, None if kind.normalize is Joint.normalize else joint.normalize

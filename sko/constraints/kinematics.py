"""The constraint Jacobian ``J``, drift ``γ`` and position error ``e`` of constraints at frames
(CONSTRAINTS.md §1, §2, Eq. 1, 2).

For a constraint between frames ``c1`` (on ``frame``) and ``c2`` (on ``other``, or fixed in the
world), with world poses ``(R1, p1)``, ``(R2, p2)`` and frame Jacobians ``J_i = ℬ* φ* H*`` of the
system (``[ω_i; v_i] = J_i v`` in ``c_i``'s coordinates), the relative twist of ``c1`` against the
body carrying ``c2``, about ``p1`` in world axes, is

    ω = R1 ω1 − R2 ω2,   v = R1 v1 − R2 v2 + (p1 − p2) × R2 ω2

expressed in the reference frame: ``local`` rotates it by ``R1ᵀ``, ``world`` moves it to the world
origin (``v − ω × p1``), ``local_world_aligned`` keeps it. A *point* constraint (translations
only, local or local-world-aligned axes) holds ``p1 − p2`` instead: its rows are ``Rᵀ(ṗ1 − ṗ2)``
with ``R = R1`` (local) or ``I``. The rows are the selected entries of ``[v; ω]``.

The drift ``γ`` is the constraint's acceleration at ``v̇ = 0``: on rigid systems from the node
accelerations ``α = φ* (a(q, v) − a(q, 0))`` (CONSTRAINTS.md §7; complex-safe, so derivatives can
be taken by complex step), on other systems exactly by a complex step along the motion,
``Im J(q + i h q̇(q, v)) v / h`` (DERIVATIVES.md, Eq. 21); in one frame and then expressed in the reference with the axes held fixed, as Pinocchio does: for a point
constraint the classical acceleration ``p̈1 − p̈2`` (world axes; ``R1ᵀ`` of it in local axes), for
any other the local relative acceleration ``d/dt (J_local v)`` (rotated by ``R1``, and moved to
the world origin for ``world``). In local axes, and for a frame held to the world in world axes,
this is ``J̇ v``; in local-world-aligned axes the frame constraint's linear rows lack the
``ω × v`` of the rotating axes, so that ``local`` and ``local_world_aligned`` hold the same
motion, as in Pinocchio. The position error ``e`` is ``p1 − p2`` (and the rotation vector of ``R1 R2ᵀ``) in the
reference axes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sko.arrays import checked_array, plain_numbers_as_floats
from sko.engine import algorithms as alg
from sko.engine.constrained import log_coefficient
from sko.engine.dispatch import _check_length, _same_batch
from sko.engine.state_layout import read_only, state_named
from sko.graphs.errors import UnknownNodeError
from sko.spatial import plucker_rotation, plucker_translation, skew
from sko.constraints.values import ConstraintError, FrameConstraint

__all__ = ["resolved", "anchored", "constraint_frame_pose", "constraint_rows", "constraint_jacobian", "constraint_drift",
           "constraint_error", "side_maps", "batched", "stacked_rows", "drift", "COMPLEX_STEP"]

#: the complex step of the drift (DERIVATIVES.md, Eq. 21)
COMPLEX_STEP = 1e-30


def _side_key(system, frame):
    """The rigid body a frame moves with (for the same-body check), or None for a world frame."""
    if hasattr(system, "frames") and hasattr(system, "frame"):
        return system.frame(frame).body
    k, name = system._attachment_frame(frame)
    body = system.body(k)
    while body.dof_size == 0:  # no motion of its own: it moves with the frame it hangs from
        if body.parent is None:
            return None
        k, name = body.parent, body.attach
        body = system.body(k)
    part = getattr(body, "rigid_part", None)  # a body type without the method: each attachment its own part
    return k, (name if part is None else part(name))


def resolved(system, constraints) -> tuple:
    """The constraints as a tuple, each checked against ``system``: its frames exist
    (:class:`~sko.graphs.errors.UnknownNodeError`), ``frame`` moves, and its two sides are not on
    one rigid body (:class:`~sko.constraints.values.ConstraintError`)."""
    if isinstance(constraints, FrameConstraint):
        constraints = (constraints,)
    if isinstance(constraints, (set, frozenset)) or not isinstance(constraints, Sequence):
        raise ConstraintError(f"constraints must be an ordered sequence of FrameConstraint (they order the rows), "
                              f"got {type(constraints).__name__}")
    for c in constraints:
        if not isinstance(c, FrameConstraint):
            raise ConstraintError(f"{c!r} is not a constraint (PointContact, FrameContact, FrameConstraint)")
        try:
            a = _side_key(system, c.frame)
            b = None if c.other is None else _side_key(system, c.other)
        except UnknownNodeError as e:
            raise UnknownNodeError(f"constraint {c!r}: {e.args[0] if e.args else e}") from None
        if a is None:
            raise ConstraintError(f"constraint {c!r}: frame {c.frame!r} is fixed on the world; it cannot be constrained")
        if a == b:
            raise ConstraintError(f"constraint {c!r}: {c.frame!r} and {c.other!r} are on the same rigid body {a!r}; "
                                  "their relative motion is zero by construction")
    return tuple(constraints)


def _rigid(system) -> bool:
    return hasattr(system, "frames") and hasattr(system, "frame")


def body_states(system, q) -> dict:
    """The bodies' states at ``q``, computed once for every frame pose of a state (O(N))."""
    return system._states(q) if _rigid(system) else system.node_states(q)


def _frame_pose_jacobian(system, q, frame, jacobian: bool, states: dict):
    """World pose ``(R, p)`` of a system frame and its 6 × nv Jacobian (``[ω; v]``, own axes)."""
    if _rigid(system):
        body, X = system._frame(frame)
        if body is None:
            R, p = plucker_rotation(X).T, plucker_translation(X)
        else:
            att, E, r = states[body].attachments[None], plucker_rotation(X), plucker_translation(X)
            R, p = att.rotation @ E.T, att.position + att.rotation @ r
    else:
        k, name = system._attachment_frame(frame)
        att = states[k].attachments[name]
        R, p = np.asarray(att.rotation), np.asarray(att.position)
    return R, p, (system.jacobian(q, frame) if jacobian else None)


def _placed(R, p, J, P):
    """Pose and Jacobian of the constraint frame placed at ``P`` (4 × 4) in a frame ``(R, p, J)``."""
    if P is None:
        return R, p, J
    Rp, pp = P[:3, :3], P[:3, 3]
    Rc, pc = R @ Rp, p + R @ pp
    if J is None:
        return Rc, pc, None
    Jc = np.concatenate([Rp.T @ J[:3], Rp.T @ (J[3:] - skew(pp) @ J[:3])])
    return Rc, pc, Jc


def _sides(system, q, c: FrameConstraint, J1=None, J2=None, jacobian: bool = True, states: dict | None = None):
    """``(R1, p1, J1), (R2, p2, J2)`` of the two constraint frames (``J2`` None on the world)."""
    states = body_states(system, q) if states is None else states
    R1, p1, Jf = _frame_pose_jacobian(system, q, c.frame, jacobian and J1 is None, states)
    side1 = _placed(R1, p1, Jf if J1 is None else J1, c.placement)
    if c.other is None:
        T2 = np.eye(4) if c.other_placement is None else c.other_placement
        return side1, (T2[:3, :3], T2[:3, 3], None)
    R2, p2, Jo = _frame_pose_jacobian(system, q, c.other, jacobian and J2 is None, states)
    return side1, _placed(R2, p2, Jo if J2 is None else J2, c.other_placement)


def anchored(system, q, constraints) -> tuple:
    """The constraints to the world held where their frames are at ``q`` (one state): each one's
    target becomes its frame's pose there (constraints between two frames are kept)."""
    constraints = resolved(system, constraints)
    q, _ = system.checked_vectors(q)
    return tuple(c if c.other is not None else c.with_target(constraint_frame_pose(system, q, c)) for c in constraints)


def constraint_frame_pose(system, q, c: FrameConstraint, states: dict | None = None) -> np.ndarray:
    """The 4 × 4 world pose of the constraint frame ``c1`` at ``q`` (one state)."""
    (R1, p1, _), _ = _sides(system, q, c, jacobian=False, states=states)
    T = np.eye(4, dtype=np.result_type(R1, p1))
    T[:3, :3], T[:3, 3] = R1, p1
    return T


def _world_aligned(system, q, c: FrameConstraint, J1=None, J2=None, states: dict | None = None):
    """``(J_wa, R1, p1)``: the 6 × nv map to the relative ``[v; ω]`` about ``p1`` in world axes
    (module docstring; for a point constraint the linear rows are ``ṗ1 − ṗ2``). Given ``J1``,
    ``J2`` (the Jacobians of ``frame`` and ``other`` in their own axes), those replace the
    system's: the map is linear in them (:func:`side_maps`)."""
    (R1, p1, J1), (R2, p2, J2) = _sides(system, q, c, J1, J2, states=states)
    ang, lin = R1 @ J1[:3], R1 @ J1[3:]
    if J2 is not None:
        ang = ang - R2 @ J2[:3]
        lin = lin - R2 @ J2[3:]
        if not c.point:
            lin = lin + skew(p1 - p2) @ (R2 @ J2[:3])
    return np.concatenate([lin, ang]), R1, p1


def side_maps(system, q, c: FrameConstraint, states: dict | None = None) -> tuple:
    """``(G1, G2)`` (``dimension × 6`` each, ``G2`` None for the world) with the constraint's rows
    ``J = G1 J_frame + G2 J_other``, ``J_frame``, ``J_other`` the frames' own Jacobians."""
    I, Z = np.eye(6), np.zeros((6, 6))
    G1 = _in_reference(*_world_aligned(system, q, c, I, None if c.other is None else Z, states), c.reference)
    if c.other is None:
        return G1[list(c.directions)], None
    G2 = _in_reference(*_world_aligned(system, q, c, Z, I, states), c.reference)
    return G1[list(c.directions)], G2[list(c.directions)]


def _in_reference(J_wa, R1, p1, reference: str) -> np.ndarray:
    """The world-aligned rows about ``p1`` expressed in the reference frame."""
    if reference == "local":
        return np.concatenate([R1.T @ J_wa[:3], R1.T @ J_wa[3:]])
    if reference == "world":
        return np.concatenate([J_wa[:3] + skew(p1) @ J_wa[3:], J_wa[3:]])
    return J_wa


def constraint_rows(system, q, c: FrameConstraint, states: dict | None = None) -> np.ndarray:
    """The constraint's Jacobian rows at one state ``q`` (``dimension × nv``)."""
    J_wa, R1, p1 = _world_aligned(system, q, c, states=states)
    return _in_reference(J_wa, R1, p1, c.reference)[list(c.directions)]


def constraint_drift_rows(system, q, v, c: FrameConstraint, complex_states: dict | None = None) -> np.ndarray:
    """``γ`` of one constraint at one real state (module docstring)."""
    qc = q + 1j * COMPLEX_STEP * system.qdot(q, v)
    J_wa_c, R1c, p1c = _world_aligned(system, qc, c, states=complex_states)
    if c.point:
        g = (J_wa_c.imag @ v) / COMPLEX_STEP
        if c.reference == "local":
            g = np.concatenate([R1c.real.T @ g[:3], R1c.real.T @ g[3:]])
        return g[list(c.directions)]
    g = (_in_reference(J_wa_c, R1c, p1c, "local").imag @ v) / COMPLEX_STEP  # the local relative acceleration
    R1, p1 = R1c.real, p1c.real
    g_wa = np.concatenate([R1 @ g[:3], R1 @ g[3:]])[:, None]
    return _in_reference(g_wa, R1, p1, c.reference)[list(c.directions), 0]


def _angle(s, c):
    """``arctan2(s, c)``, complex-step safe (DERIVATIVES.md, Eq. 21): for complex ``s``, ``c`` the
    real angle plus ``i`` times its first-order change ``(c ds − s dc) / (s² + c²)``."""
    if not (np.iscomplexobj(s) or np.iscomplexobj(c)):
        return np.arctan2(s, c)
    sr, cr = s.real, c.real
    return np.arctan2(sr, cr) + 1j * (cr * s.imag - sr * c.imag) / (sr * sr + cr * cr)


def _rotation_vector(R) -> np.ndarray:
    """``log(R)``: the rotation vector of a rotation matrix (exact near 0 and π); complex-step
    safe (no conjugation, branches on real parts)."""
    w = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    s, c = 0.5 * np.sqrt(w @ w), 0.5 * (np.trace(R) - 1.0)
    if s.real > 1e-6:
        return _angle(s, c) / (2 * s) * w
    if c.real > 0:  # near identity: w/2 (1 + θ²/6), θ² = s² to far below rounding here
        return 0.5 * w * (1 + (w @ w) / 24)
    B = 0.5 * (R + np.eye(3))  # near π: the axis from R + I = 2 a aᵀ
    i = int(np.argmax(np.diag(B).real))
    a = B[:, i] / np.sqrt(B[i, i])
    return np.pi * (a if (a @ w).real >= 0 else -a)


def _log_translation(w: np.ndarray, t: np.ndarray) -> np.ndarray:
    """The linear part ``V(ω)⁻¹ t`` of the SE(3) logarithm of ``(exp(ω), t)`` (complex-step safe)."""
    W = skew(w)
    return t - 0.5 * (W @ t) + log_coefficient(np.sqrt(w @ w)) * (W @ (W @ t))


def constraint_error_rows(system, q, c: FrameConstraint, states: dict | None = None) -> np.ndarray:
    """The position error ``e`` of one constraint at one state (zero without a target): for a
    point constraint ``p1 − p2`` (``R1ᵀ`` of it in local axes); for a frame constraint the SE(3)
    logarithm of ``c2 → c1``, ``log(ᶜ²M_c1)`` in ``c1``'s axes (local; Pinocchio's), rotated by
    ``R1`` (local-world-aligned) or moved to the world origin (world)."""
    if c.other is None and c.other_placement is None:
        return np.zeros(c.dimension)
    (R1, p1, _), (R2, p2, _) = _sides(system, q, c, jacobian=False, states=states)
    if c.point:
        d = p1 - p2
        return (R1.T @ d if c.reference == "local" else d)[list(c.directions)]
    w = _rotation_vector(R2.T @ R1)
    local = np.concatenate([_log_translation(w, R2.T @ (p1 - p2)), w])
    if c.reference == "local":
        return local[list(c.directions)]
    e_wa = np.concatenate([R1 @ local[:3], R1 @ local[3:]])[:, None]
    return _in_reference(e_wa, R1, p1, c.reference)[list(c.directions), 0]


def batched(system, fn, q, *vectors, names: tuple = ("v", "tau"), empty: tuple = ()):
    """``fn(q, *vectors)`` on one checked state, or stacked over a batch: ``q`` of shape ``(B, nq)``
    with every vector ``(B, nv)``, as the systems' requests take them (a vector without the
    batch axis is refused). ``names`` name the vectors in the errors, and a state of a batch is
    named in its errors; ``empty``, the shape of one state's result (a tuple of shapes for a
    tuple of results), gives the result of a batch of no states."""
    try:
        one = np.ndim(q) != 2
    except ValueError:  # a ragged nesting: the check of one state names it
        one = True
    if one:
        q = system.checked_vectors(q)[0]
        return fn(q, *(np.zeros(system.nv, dtype=q.dtype) if x is None else _checked_vector(system, x, name)
                       for x, name in zip(vectors, names)))
    Q = checked_array(q, 2, "q")
    _check_length(Q, "q", system.nq, "nq")
    X = [None if x is None else checked_array(x, (1, 2), name) for x, name in zip(vectors, names)]
    for x, name in zip(X, names):
        if x is not None:
            _check_length(x, name, system.nv, "nv")
            _same_batch(Q, x, name)
    outs = []
    for s in range(len(Q)):
        with state_named(s):
            outs.append(batched(system, fn, Q[s], *(None if x is None else x[s] for x in X), names=names))
    if not outs:
        dtype = np.result_type(Q, *(x for x in X if x is not None), float)
        if empty and isinstance(empty[0], tuple):
            return tuple(np.zeros((0, *shape), dtype=dtype) for shape in empty)
        return np.zeros((0, *empty), dtype=dtype)
    if isinstance(outs[0], tuple):
        return tuple(np.stack(parts) for parts in zip(*outs))
    return np.stack(outs)


def _checked_vector(system, x, name: str) -> np.ndarray:
    """One state's ``(nv,)`` vector, checked as :meth:`checked_vectors` checks ``v``, named ``name``."""
    x = plain_numbers_as_floats(checked_array(x, 1, name), name)
    _check_length(x, name, system.nv, "nv")
    return read_only(x)


def stacked_rows(parts: list, like: np.ndarray, *tail: int) -> np.ndarray:
    """The constraints' rows stacked, constraint after constraint (none without a constraint:
    shape ``(0, *tail)``, ``like``'s scalar type)."""
    return np.concatenate(parts) if parts else np.zeros((0, *tail), dtype=np.result_type(like, float))


def constraint_jacobian(system, q, constraints) -> np.ndarray:
    """``J`` (``m × nv``, ``m`` the total rows, constraint after constraint), or ``(B, m, nv)``."""
    constraints = resolved(system, constraints)
    return batched(system, lambda qs: stacked_rows([constraint_rows(system, qs, c) for c in constraints], qs, system.nv),
                   q, empty=(sum(c.dimension for c in constraints), system.nv))


def constraint_drift(system, q, v, constraints) -> np.ndarray:
    """``γ`` (``m``), or ``(B, m)``: the constraints' acceleration at ``v̇ = 0``."""
    constraints = resolved(system, constraints)
    return batched(system, lambda qs, vs: drift(system, qs, vs, constraints), q, v,
                   empty=(sum(c.dimension for c in constraints),))


def drift(system, q, v, constraints, at_rest: tuple | None = None) -> np.ndarray:
    """``γ`` of checked constraints at one checked state: from the node accelerations on rigid
    systems (any scalar type: complex steps go through), by a complex step otherwise (real states).
    ``at_rest``: ``(a(q, 0), states)`` when the caller has them."""
    if hasattr(system, "_frame_on_node"):
        motion = _node_motion(system, q, v, at_rest)
        return stacked_rows([_analytic_drift_rows(system, q, c, motion) for c in constraints], q)
    if q.dtype.kind == "c" or v.dtype.kind == "c":
        raise ConstraintError(f"the constraint drift of a {type(system).__name__} takes real states (it is itself "
                              "computed by a complex step)")
    qc = q + 1j * COMPLEX_STEP * system.qdot(q, v)
    states = body_states(system, qc)
    return stacked_rows([constraint_drift_rows(system, q, v, c, states) for c in constraints], q)


def _node_motion(system, q, v, at_rest: tuple | None = None) -> tuple:
    """The node velocities ``𝒱 = φ* H* θ̇`` and accelerations at ``θ̈ = 0``, ``α = φ* a_v`` (SKO.md
    §5), ``a_v = a(q, v) − a(q, 0)`` the velocity-dependent part of ``a`` (gravity taken out)."""
    model, a, _ = system.sko_model(q, v)
    a0, states = (system.sko_model(q, np.zeros_like(v))[1], body_states(system, q)) if at_rest is None else at_rest
    Vn = alg.phi_star_apply(model, np.concatenate([model.H[k].T @ v[system.dof_slices[k]] for k in system.bodies]))
    An = alg.phi_star_apply(model, a - a0)
    offsets = dict(zip(system.bodies, np.cumsum([0] + [model.node_dim(k) for k in system.bodies])))
    return model, Vn, An, offsets, states


def _analytic_drift_rows(system, q, c: FrameConstraint, motion) -> np.ndarray:
    """``γ`` of one constraint from the node motion (module docstring: the same convention as the
    complex step): each frame's twist ``V`` and acceleration ``A`` are ``B 𝒱``, ``B α`` of its node."""
    model, Vn, An, offsets, states = motion

    def side(frame, P):  # a frame fixed on the world (no node) is at rest
        node, B = system._frame_on_node(frame)
        R, p, _ = _frame_pose_jacobian(system, q, frame, False, states)
        if node is None:
            x = np.zeros((6, 2), dtype=Vn.dtype)
        else:
            o = offsets[node]
            x = np.column_stack([B @ Vn[o: o + model.node_dim(node)], B @ An[o: o + model.node_dim(node)]])
        Rc, pc, x = _placed(R, p, x, P)
        return Rc, pc, x[:, 0], x[:, 1]

    R1, p1, V1, A1 = side(c.frame, c.placement)
    if c.other is None:
        R2, p2, V2, A2 = np.eye(3), np.zeros(3), np.zeros(6), np.zeros(6)
    else:
        R2, p2, V2, A2 = side(c.other, c.other_placement)
    if c.point:  # classical accelerations of the origins, world axes
        g = R1 @ (A1[3:] + np.cross(V1[:3], V1[3:])) - R2 @ (A2[3:] + np.cross(V2[:3], V2[3:]))
        return (R1.T @ g if c.reference == "local" else g)[list(c.directions)]

    def at_c1(W):  # a motion of the second body, at c1's origin in c1's axes
        w = R2 @ W[:3]
        return np.concatenate([R1.T @ w, R1.T @ (R2 @ W[3:] + np.cross(w, p1 - p2))])

    XV2, XA2 = at_c1(V2), at_c1(A2)
    g = A1 - XA2 + np.concatenate([np.cross(V1[:3], XV2[:3]), np.cross(V1[:3], XV2[3:]) + np.cross(V1[3:], XV2[:3])])
    g_wa = np.concatenate([R1 @ g[3:], R1 @ g[:3]])[:, None]
    if c.reference == "local":
        return np.concatenate([g[3:], g[:3]])[list(c.directions)]
    return _in_reference(g_wa, R1, p1, c.reference)[list(c.directions), 0]


def constraint_error(system, q, constraints) -> np.ndarray:
    """The stacked position errors ``e`` (module docstring), or ``(B, m)``."""
    constraints = resolved(system, constraints)
    return batched(system, lambda qs: stacked_rows([constraint_error_rows(system, qs, c) for c in constraints], qs), q,
                   empty=(sum(c.dimension for c in constraints),))

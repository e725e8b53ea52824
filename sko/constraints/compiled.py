"""The compiled path of the constrained and impulse dynamics (:mod:`sko.engine.constrained`).

A constraint set on a system becomes a *plan* once — the constraint table, the constrained nodes
and their ancestors with the rows below each, the placements and gains, packed into request
vectors of the kernel :func:`~sko.engine.constrained.constrained` (the dynamics' and the
impacts') — kept by the system's engine
(``Engine.constraint_plans``) by the identity of the constraints (values that cannot change,
:class:`~sko.constraints.values.FrameConstraint`) and by their contents. The common call, one
state of float64 vectors on a system whose bodies are all compiled, goes to the plan's prepared
call (:func:`one_state`, as :meth:`~sko.engine.dispatch.Engine.one_state_call` for the systems' requests);
any other call checks its vectors as the systems' requests do and runs the kernel through the
drivers of :mod:`sko.engine.requests`: one state directly, a batch in parallel over chunks of
states. Every state the kernel does not answer — a state its bodies reject, an
input or a result that is not finite, an ``Ω`` singular or too ill-conditioned for the direct
solve (redundant or inconsistent constraints) — is answered by the caller's reference function
for that state (:mod:`sko.constraints.dynamics`: the proximal iterations, the named errors).

The compiled path takes float64 states of systems with a compiled engine
(:mod:`sko.engine.dispatch`) under the compiled backend; ``NotImplemented`` otherwise (complex
steps, object arrays, the reference backend): the reference path answers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from sko.engine.backend import BACKEND, COMPILED, get_backend
from sko.engine.layout import Flat
from sko.engine.state_kernels import Terms
from sko.constraints.kinematics import resolved
from sko.constraints.values import REFERENCES, FrameConstraint, InconsistentConstraintsError
from sko.engine import constrained as C
from sko.spatial import plucker_rotation, plucker_translation
from sko.engine import requests as rq
from sko.engine.aba import RiccatiScratch
from sko.engine.state_layout import state_named

__all__ = ["constrained_dynamics", "impulse_dynamics", "one_state", "plan_of"]

_F8 = np.dtype(np.float64)
_NONE = np.zeros(0)  # the third input of the impulse dynamics (none)
_CACHED = 64  #: plans kept per system (by identity and by contents, each)
_UNPREPARED = object()  # a plan's one-state call not made yet


def _pose(R, p) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = R, p
    return T


def _side(system, layout, frame, placement) -> tuple:
    """``(record offset, flat node, m, 4 × 4 pose)`` of a constraint frame: the arena offset of
    the attachment record it moves with and the frame's placement in that attachment frame, or
    ``(−1, −1, 0, world pose)`` for a frame fixed in the world."""
    if hasattr(system, "frames") and hasattr(system, "frame"):  # a rigid system's named frames
        body, X = system._frame(frame)
        T = _pose(plucker_rotation(X).T, plucker_translation(X))
        node = getattr(system, "member_node", {}).get(body, body)  # a cluster's member: its record there
        name = None if node == body else body
    else:
        (node, name), T = system._attachment_frame(frame), np.eye(4)
    if placement is not None:
        T = T @ placement
    if node is None:
        return -1, -1, 0, T
    i = layout.index[node]
    return int(layout.attachment_offsets[(i, name)]), int(layout.row_of[i]), int(layout.node_dims[i]), T


def _placement_numbers(T) -> np.ndarray:
    return np.concatenate([T[:3, :3].ravel(), T[:3, 3]])


@dataclass
class _Plan:
    """One constraint set packed for one system's compiled engine (module docstring)."""

    rows: int  #: m
    ints: np.ndarray  #: the plan's integers (:data:`~sko.engine.constrained.Plan`)
    numbers: np.ndarray  #: its numbers (:data:`~sko.engine.constrained.Numbers`)
    requests: dict  #: impulse (bool) -> Request
    vectors: dict  #: (impulse, scalar type) -> request vector (all bodies compiled)
    calls: dict  #: impulse (bool) -> the prepared one-state call (:func:`_prepared`)


def _plan(system, layout, constraints: tuple, condition: float) -> _Plan:
    sizes = rq.sizes(layout)
    parent = layout.request_layout[:, Flat.PARENT]
    table = np.zeros((len(constraints), C.ConstraintRow.WIDTH), dtype=np.int64)
    numbers = np.zeros(C.Numbers.SIZE + len(constraints) * C.Gains.SIZE)
    numbers[C.Numbers.condition] = condition
    below: dict = {}  # flat node -> the rows of the constraints at it or below it
    m = 0
    for c, k in zip(constraints, range(len(constraints))):
        t, g = table[k], C.Numbers.SIZE + k * C.Gains.SIZE
        t[C.ConstraintRow.ROW], t[C.ConstraintRow.DIM] = m, c.dimension
        t[C.ConstraintRow.REFERENCE], t[C.ConstraintRow.POINT] = REFERENCES.index(c.reference), c.point
        t[C.ConstraintRow.D0: C.ConstraintRow.D0 + c.dimension] = c.directions
        numbers[g + C.Gains.kp], numbers[g + C.Gains.kd] = c.baumgarte
        sides = [_side(system, layout, c.frame, c.placement)]
        if c.other is None:
            sides.append((-1, -1, 0, np.eye(4) if c.other_placement is None else c.other_placement))
        else:
            sides.append(_side(system, layout, c.other, c.other_placement))
        for s, (record, node, dim, T) in enumerate(sides):
            t[C.ConstraintRow.RECORD1 + 3 * s], t[C.ConstraintRow.NODE1 + 3 * s], t[C.ConstraintRow.DIM1 + 3 * s] = record, node, dim
            at = g + (C.Gains.first if s == 0 else C.Gains.second)
            numbers[at: at + 12] = _placement_numbers(T)
            while node >= 0:
                below.setdefault(node, set()).update(range(m, m + c.dimension))
                node = int(parent[node])
        m += c.dimension
    active = sorted(below, reverse=True)  # children before parents
    pool = [r for j in active for r in sorted(below[j])]
    nodes = np.zeros((len(active), C.Active.WIDTH), dtype=np.int64)
    first = 0
    for a, j in enumerate(active):
        nodes[a] = j, first, len(below[j])
        first += len(below[j])
    header = np.zeros(C.Plan.WIDTH, dtype=np.int64)
    header[C.Plan.CONSTRAINTS], header[C.Plan.ROWS], header[C.Plan.ACTIVE] = len(constraints), m, len(active)
    header[C.Plan.TABLE] = C.Plan.WIDTH
    header[C.Plan.NODES] = header[C.Plan.TABLE] + table.size
    header[C.Plan.POOL] = header[C.Plan.NODES] + nodes.size
    hinge = layout.request_layout[:, Flat.HINGE_DIM]
    work = 0
    for column, size in ((C.Plan.FRAMES, 2 * len(constraints) * C.Frame.SIZE), (C.Plan.MAPS, 2 * len(constraints) * 36),
                         (C.Plan.TEMP, 72), (C.Plan.VELOCITY, m), (C.Plan.RHS, m), (C.Plan.UNIT, sizes.ns * m),
                         (C.Plan.EPS, sizes.nn * m), (C.Plan.NORMS, sizes.nn), (C.Plan.OMEGA, m * m),
                         (C.Plan.BOUND, m), (C.Plan.SOLVE, m), (C.Plan.COLUMNS, sum(int(hinge[j]) * len(below[j]) for j in active)),
                         (C.Plan.NU, sizes.nv)):
        header[column] = work
        work += size
    header[C.Plan.WORK] = work
    ints = np.concatenate([header, table.ravel(), nodes.ravel(), np.asarray(pool, dtype=np.int64)])

    def buffers(s: rq.Sizes) -> tuple:  # the articulated-body passes' (one column), then the plan
        scratch = max(RiccatiScratch.SIZE * max(s.mm, s.nn) ** 2, s.nn)
        return s.riccati, scratch, s.ns, s.nv, len(ints), len(numbers), work

    def shape(s: rq.Sizes) -> tuple:
        return (s.nv + m,)

    # one kernel for both: an impact's request reads no third input (sko.engine.constrained)
    requests = {impulse: rq.Request(name, C.constrained, Terms.POSE, x, True, shape, buffers, workspace=C.ConstrainedWork)
                for impulse, name, x in ((False, "constrained_dynamics", "tau"), (True, "impulse_dynamics", None))}
    return _Plan(m, ints, numbers, requests, {}, {})


def _vector(plan: _Plan, layout, impulse: bool, dtype, arena: np.ndarray | None = None) -> np.ndarray:
    """A request vector of the plan (:func:`sko.engine.requests.request_vector`, the plan written
    after the buffers of the passes)."""
    w = rq.request_vector(plan.requests[impulse], layout, dtype, arena)
    words = w.view(np.int64)
    at = words[words[rq.Header.BUFFERS]:]  # the offsets of the workspace's buffers (C.ConstrainedWork)
    start = int(words[rq.Header.WORKSPACE])
    base = (start + int(at[C.ConstrainedWork.PLAN])) * (w.itemsize // 8)
    words[base: base + len(plan.ints)] = plan.ints
    numbers = start + int(at[C.ConstrainedWork.NUMBERS])
    w[numbers: numbers + len(plan.numbers)] = plan.numbers
    return w


def _contents(constraints: tuple):
    """A hashable key of the constraints' contents, or None (a frame that is not hashable)."""
    key = tuple((type(c), c.frame, c.other, c.directions, c.reference, c.baumgarte,
                 None if c.placement is None else c.placement.tobytes(),
                 None if c.other_placement is None else c.other_placement.tobytes()) for c in constraints)
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _key(constraints):
    """The identity key of a tuple or list of constraints (None for another iterable)."""
    return constraints if type(constraints) is tuple else tuple(constraints) if type(constraints) is list else None


def plan_of(system, constraints, condition: float) -> _Plan:
    """The plan of ``constraints`` (checked by :func:`~sko.constraints.kinematics.resolved`
    when first seen) on ``system``, kept by its engine (``Engine.constraint_plans``: by the
    identity of the constraint tuple and by its contents, each table at most :data:`_CACHED`)."""
    engine = system._engine
    by_identity, by_contents = engine.constraint_plans
    key = _key(constraints)
    if key is not None:  # the keys hold FrameConstraints alone, which compare by identity
        try:
            plan = by_identity.get(key)
        except TypeError:  # an entry that is not hashable: resolved() names it
            plan = None
        if plan is not None:
            return plan
    checked = resolved(system, constraints)
    contents = _contents(checked)
    plan = None if contents is None else by_contents.get(contents)
    if plan is None:
        plan = _plan(system, engine.layout, checked, condition)
        if contents is not None:
            if len(by_contents) >= _CACHED:
                by_contents.clear()
            by_contents[contents] = plan
    if key is not None and all(isinstance(c, FrameConstraint) for c in key):
        if len(by_identity) >= _CACHED:
            by_identity.clear()
        by_identity[key] = plan
    return plan


def _prepared(plan: _Plan, engine, impulse: bool):
    """The plan's one-state call ``call(q, v, x)`` (``x``: ``τ``, or the restitution of an
    impact), as :meth:`~sko.engine.dispatch.Engine.one_state_call`'s: ``(v̇ or v⁺, λ)`` for one state of 1-D
    float64 arrays of a system whose bodies are all compiled, on the compiled backend; None when
    the checked path must answer (another input, a shape that does not fit, a number that is
    not finite, a state the kernel does not answer)."""
    if not engine._direct:
        return None
    layout, nv, size = engine.layout, engine.nv, engine.nv + plan.rows
    w = plan.vectors.get((impulse, "d"))
    if w is None:
        w = plan.vectors[impulse, "d"] = _vector(plan, layout, impulse, _F8)
    driver, zeros, chosen = rq.one_state_driver(_F8), np.zeros, BACKEND.get
    restitution = int(w.view(np.int64)[rq.Header.WORKSPACE]) + _numbers_start(w) + C.Numbers.restitution

    def call(q, v, x):
        if chosen() is COMPILED:
            try:
                if q.dtype is _F8 and q.ndim == 1 and v.dtype is _F8 and (impulse or x.dtype is _F8):
                    if impulse:
                        w[restitution] = x
                    out = zeros(size)
                    if driver(w, q, v, _NONE if impulse else x, out) == -1:
                        return out[:nv], out[nv:]
            except (AttributeError, TypeError, ValueError):  # not an array; types numba refuses
                pass
        return None

    return call


def one_state(system, q, v, x, constraints, impulse: bool = False):
    """The common call, answered by the prepared call of a plan already made for these
    constraints (:func:`_prepared`; ``x``: ``τ``, or the restitution), or None: the checked
    path (:func:`constrained_dynamics`, :func:`impulse_dynamics`) answers."""
    try:
        plan = system._engine.constraint_plans[0][_key(constraints)]
    except (KeyError, TypeError):  # not seen yet, not a tuple or list, or an entry that is not hashable
        return None
    call = _call(plan, system._engine, impulse)
    return None if call is None else call(q, v, x)


def _call(plan: _Plan, engine, impulse: bool):
    """The plan's prepared one-state call (made on first use), or None."""
    call = plan.calls.get(impulse, _UNPREPARED)
    if call is _UNPREPARED:
        call = plan.calls[impulse] = _prepared(plan, engine, impulse)
    return call


def _compiled(system) -> bool:
    engine = system._engine
    return engine.layout is not None and (BACKEND.get() is COMPILED or get_backend() == COMPILED)


def _run(system, impulse: bool, q, v, x, constraints, condition: float, restitution: float,
         reference: Callable):
    """``(v̇ or v⁺, λ)`` by the kernel, or NotImplemented (module docstring); ``reference(q, v,
    x)`` answers one state the kernel does not."""
    if not _compiled(system):
        return NotImplemented
    engine = system._engine
    layout = engine.layout
    plan = plan_of(system, constraints, condition)
    call = _call(plan, engine, impulse)
    if call is not None:  # the common call (one float64 state)
        answer = call(q, v, restitution if impulse else x)
        if answer is not None:
            return answer
    nv = engine.nv
    inputs = engine._inputs(q, v, None if impulse else x, "" if impulse else "tau")
    if inputs is None:
        return NotImplemented
    Q, QD, X, batched, _ = inputs
    if Q.dtype != _F8:  # complex steps take the reference path (the kernels are compiled for float64)
        return NotImplemented
    given = X
    if not impulse and layout.hinge_forces:  # those the bodies compute in Python
        X = X - engine._hinge_forces(Q, QD, batched)
    B, dtype = Q.shape[0], Q.dtype
    out = np.zeros((B, nv + plan.rows), dtype=dtype)
    status = np.full(B, -1, dtype=np.int64)
    if layout.all_compiled:
        w = plan.vectors.get((impulse, dtype.char))
        if w is None:
            w = plan.vectors[impulse, dtype.char] = _vector(plan, layout, impulse, dtype)
        A = np.zeros((0, layout.size), dtype=dtype)
    else:
        A = layout.fill(Q, QD, batched)
        w = _vector(plan, layout, impulse, dtype, A[0])
    if impulse:
        w[int(w.view(np.int64)[rq.Header.WORKSPACE]) + _numbers_start(w) + C.Numbers.restitution] = restitution
    if B == 1 and layout.all_compiled:
        status[0] = rq.evaluate_one(w, Q[0], QD[0], X[0], out[0])
    else:
        rq.evaluate_batch(w, Q, QD, X, A, out, status)
    for s in np.flatnonzero(status != -1):  # the reference path answers, or names what is wrong
        try:
            with state_named(int(s) if batched else None):
                answer = reference(Q[s], QD[s], None if impulse else given[s])
        except InconsistentConstraintsError as exc:
            if not batched:
                raise
            raise InconsistentConstraintsError(f"state {s} of the batch: {exc}", exc.residual) from None
        out[s, :nv], out[s, nv:] = answer
    dv, lam = out[:, :nv], out[:, nv:]
    return (dv, lam) if batched else (dv[0], lam[0])


def _numbers_start(w: np.ndarray) -> int:
    words = w.view(np.int64)
    return int(words[words[rq.Header.BUFFERS] + 5])


def constrained_dynamics(system, q, v, tau, constraints, condition: float, reference: Callable):
    """``(v̇, λ)`` (:func:`sko.constraints.dynamics.constrained_dynamics`) on the compiled path,
    or NotImplemented; ``condition`` bounds ``tr Ω · tr Ω⁻¹`` for the direct solve and
    ``reference(q, v, tau)`` answers one state the kernel does not."""
    return _run(system, False, q, v, tau, constraints, condition, 0.0, reference)


def impulse_dynamics(system, q, v_minus, constraints, restitution: float, condition: float, reference: Callable):
    """``(v⁺, Λ)`` (:func:`sko.constraints.dynamics.impulse_dynamics`) on the compiled path, or
    NotImplemented; ``reference(q, v, None)`` answers one state the kernel does not."""
    return _run(system, True, q, v_minus, None, constraints, condition, restitution, reference)

"""The derivatives of inverse dynamics of a tree of any body types, compiled (DERIVATIVES.md §9,
Eq. 22–26, Algorithm 2): the kernel twin of :mod:`sko.systems.body_derivatives`.

It takes a state table (:data:`~sko.engine.state_kernels.Row`) of bodies that all have a compiled
state, for complex128 arenas, and one state's fresh arena (its real ``q`` and ``v`` set). Each
body's local partials are taken by complex step of its own state kernel alone, called at its address
in that arena: its own ``q`` (along the tangent columns ``q̇(q, e_ι)``, Eq. 1) or ``v`` entries, or
the velocity of the inboard record it reads, carry ``i h``; its outputs' imaginary parts are read,
and the entries are put back. After its last step the imaginary parts of its outputs are set to
zero (their real parts are the real state's to ``O(h²)``, far below rounding), so its children read
real records. The body's state is no call of its own: its first step, at the full terms and with
the constants, writes every output (the real parts); only a body whose partials take no such step
(a rigid body's closed form, no columns, or all along a declared joint) is filled first. A body
may declare closed forms of its partials (:class:`~sko.engine.state_kernels.StateKernel`) along its
velocities, along its joint's coordinates and along the coordinates that follow them (all but
the first of these, whose step writes its state), which then replace its complex steps there. Only the body kernels run in complex numbers; the recursion of
Eq. 22–26 runs in float64 on the partials.

Per body (row ``j``), :func:`plan` gives the offsets in a float64 work buffer of the columns of
:data:`Plan`: ``α``, ``f``, ``u``; the partials ``∂E`` (``2 n × m × 6``), ``∂H``, ``∂M``, ``∂a``,
``∂b``, ``∂h`` (hinge force), ``A = ∂ã/∂v_o``, ``B = ∂b/∂v_o``; per record of the frames it offers
``∂Γ`` (``2 n × 6 × m``), ``∂γ`` (``2 n × 6``) and ``G = ∂γ/∂v_o``; the structural zeros: per
column, whether ``∂E``, ``∂H``, ``∂M`` and each record's ``∂Γ`` are nonzero (:data:`Nonzero`); the seeds ``σ``, ``ϱ`` and the
force change ``g`` (``m × 2 n``, Eq. 23, 26); the composites ``𝒫`` (``m × 12``), ``𝒦`` (``6 × 12``);
and, for a body with a parent, its frame's seeds ``w`` (``12 × 2 n_℘``, Eq. 24), transfer
``𝒯`` (``12 × 12``, Eq. 25) and the weight ``H_℘ Γ_o*`` (``n_℘ × 6``) by which Eq. 26 carries
its force to its parent's rows, with the index of the parent's record it hangs from.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numba import prange, typeof, types

from sko.bodies.rigid import RigidBody
from sko.engine.borrow import borrowed, flat_view
from sko.engine.fields import columns, offsets
from sko.engine.hooks import hook_address
from sko.engine.jit import call_state, inline_kernel, kernel, native_address, native_caller, register
from sko.engine.rigid_blocks import axpy, column6, dot, held, put, zero
from sko.engine.state_kernels import Record, Row, Terms, fill_states, finite_entries, root_record

__all__ = ["Plan", "Nonzero", "LocalPlan", "plan", "signature", "steps", "one_state_call", "one_state_address",
           "tangent_columns", "tangent_columns_call",
           "partials", "batch_partials", "forward", "forward_call", "NOT_FINITE_INPUT", "NOT_FINITE_RESULT",
           "NOT_FINITE_HINGE", "RAISED"]

#: The columns of a body's row in the plan (module docstring): offsets into the work buffer, and
#: ``RECORD`` (the parent's record this body hangs from), ``DOF`` (its first column), ``QS`` (its
#: first entry of ``q``), ``RECORD_STRIDE`` (the entries per record of its own partials), ``RIGID``
#: (1: a library rigid body on a joint of constant ``S`` with ``c_J = 0``, whose partials are
#: written in closed form, :func:`_rigid_partials`, instead of by complex step), ``RATES`` (1: its
#: kernel takes ``Terms.RATES``, :class:`~sko.engine.state_kernels.StateKernel`: its columns
#: along the velocities ask for ``a``, ``b``, ``V`` and the records' ``γ``, ``v`` only, and only
#: their partials are read; those of ``E``, ``H``, ``M``, ``Γ``, which depend on ``q`` alone, are
#: zero), ``JOINT`` (how many of its first columns along ``θ`` call its kernel with ``Terms.JOINT``,
#: as it declares, :class:`~sko.engine.state_kernels.StateKernel`: the partials of ``M`` and the
#: records' ``Γ`` there are zero and not read; 0 for a checked kernel, whose declaration is not trusted),
#: ``VELOCITIES`` (the address of the closed-form partials along ``θ̇`` and ``v_o`` its kernel declares,
#: called instead of the complex steps there; 0: none, or a checked kernel), ``JOINT_PARTIALS`` (the
#: address of the closed-form partials along a coordinate of ``JOINT`` it declares, called in those
#: columns instead of its kernel; 0: none, or a checked kernel), ``INTERNAL_PARTIALS`` (the address
#: of the closed-form partials along its other coordinates it declares, called in those columns
#: but the first instead of its kernel; 0: none, or a checked kernel), ``REAL_HINGE`` (the address
#: of its compiled hinge force for float64 states, which :func:`partials` calls at the real state; 0: none),
#: ``IDENTITY`` (1: it hangs from its parent's own frame, whose ``Γ_o = [I₆, 0]`` the parent's
#: unchecked kernel declares, ``own_frame_identity``: the products with ``Γ_o`` pick entries).
Plan = columns("Plan", "ALPHA", "F", "U", "DE", "DH", "DM", "DA", "DB", "DHINGE", "A", "B", "RECORDS",
               "RECORD_STRIDE", "SIGMA", "RHO", "G", "P", "K", "W", "T", "HGAMMA", "RECORD", "DOF", "QS",
               "RIGID", "RATES", "NONZERO", "JOINT", "VELOCITIES",
               "JOINT_PARTIALS", "INTERNAL_PARTIALS", "REAL_HINGE", "IDENTITY")
#: The structural zeros of a body's local partials, found as they are read (exact zeros of the
#: complex step or of the closed form; the work buffer's zeros elsewhere: the columns along the
#: velocities at ``Terms.RATES``, those along ``θ̈``): per column ``x`` of its ``3 n``, a flag (1.0:
#: nonzero) for ``∂E``, ``∂H``, ``∂M``, then one per record for its ``∂Γ``, at
#: ``plan[j, Plan.NONZERO] + block · 3 n + x``. The recursion skips the products with a zero block
#: (DERIVATIVES.md §9, *Cost*): ``σ``, ``ϱ`` and ``δu`` without ``∂E``, ``σ``, ``ϱ`` and the own
#: block of Eq. 26 without ``∂H``, ``g`` without ``∂M``, ``w`` and ``g`` without ``∂Γ``.
Nonzero = offsets("Nonzero", E=1, H=1, M=1, records=1)

#: The two halves of a frame's 12-vector seed ``w = (δv, δα)`` (Eq. 24): the rows of ``w`` and of
#: ``𝒯``, and the columns of ``𝒫``, ``𝒦`` and ``𝒯`` (``𝒫 = M [A E] + [B 0]``, Eq. 25).
Seed = offsets("Seed", velocity=6, acceleration=6)
#: The scratch of :func:`_scatter` (``β_o``) and of :func:`_rigid_partials` (the 6-vectors of its
#: closed form): ``E γ_o``, ``E v_o``, ``V``, ``S θ̇``, ``I V``, ``s``, ``∂V``, two products, ``I ∂V``.
Scratch = offsets("Scratch", beta=6, Eg=6, Vp=6, V=6, vJ=6, IV=6, sv=6, dV=6, t1=6, t2=6, IdV=6)
#: The scratch of :func:`_gather`: ``𝒦 𝒯`` (``6 × 12``), then ``𝒦 w`` (``6 × 2 n_℘``).
GatherWork = offsets("GatherWork", KT=72, KW=1)

#: the complex step ``h`` of DERIVATIVES.md Eq. 21
STEP = 1e-30
#: a 1-D float64 array of any strides
_VECTOR = types.Array(types.float64, 1, "A")
#: ``Terms.RATES`` and ``Terms.JOINT``, as the numbers the kernels take
_RATES, _JOINT = int(Terms.RATES), int(Terms.JOINT)


class LocalPlan(NamedTuple):
    """What the recursion needs of a state layout besides its table (module docstring): the
    plan, the sizes of the work and scratch buffers of one state."""

    plan: np.ndarray
    work_size: int
    scratch_size: int


def plan(layout) -> LocalPlan:
    """The :class:`LocalPlan` of a state layout (module docstring); the layout keeps it
    (:attr:`~sko.engine.state_layout.StateLayout.local_plan`)."""
    rows = layout.rows
    N = rows.shape[0]
    out = np.zeros((N, Plan.WIDTH), dtype=np.int64)
    size = 0

    def take(count: int) -> int:
        nonlocal size
        start, size = size, size + int(count)
        return start

    for j in range(N):
        m, n, x = int(rows[j, Row.NODE_DIM]), int(rows[j, Row.NV]), 3 * int(rows[j, Row.NV])
        p = int(rows[j, Row.PARENT])
        mp = 0 if p < 0 else int(rows[p, Row.NODE_DIM])
        np_ = 0 if p < 0 else 3 * int(rows[p, Row.NV])
        pl = out[j]
        pl[Plan.ALPHA], pl[Plan.F], pl[Plan.U] = take(m), take(m), take(6)
        pl[Plan.DE], pl[Plan.DH], pl[Plan.DM] = take(x * m * 6), take(x * n * m), take(x * m * m)
        pl[Plan.DA], pl[Plan.DB], pl[Plan.DHINGE] = take(x * m), take(x * m), take(x * n)
        pl[Plan.A], pl[Plan.B] = take(m * 6), take(m * 6)
        pl[Plan.RECORD_STRIDE] = x * 6 * m + x * 6 + 36
        pl[Plan.RECORDS] = take(int(rows[j, Row.RECORD_COUNT]) * pl[Plan.RECORD_STRIDE])
        pl[Plan.SIGMA], pl[Plan.RHO], pl[Plan.G] = take(m * x), take(m * x), take(m * x)
        pl[Plan.P], pl[Plan.K] = take(m * 12), take(72)
        pl[Plan.W], pl[Plan.T], pl[Plan.HGAMMA] = take(12 * np_), take(144), take(2 * np_)
        pl[Plan.NONZERO] = take((Nonzero.records + int(rows[j, Row.RECORD_COUNT])) * x)
        if p >= 0:
            record = (int(rows[j, Row.INBOARD]) - int(rows[p, Row.RECORDS])) // (int(Record.SIZE) + 6 * mp)
            pl[Plan.RECORD] = record
            parent = layout._kernels[p]
            pl[Plan.IDENTITY] = int(record == 0 and parent is not None and parent.own_frame_identity
                                    and rows[p, Row.CHECK] < 0)
        pl[Plan.DOF] = int(rows[j, Row.V]) - layout.v_offset
        pl[Plan.QS] = int(rows[j, Row.Q]) - layout.q_offset
        body = layout.system.body(layout.bodies[layout.order[j]])
        pl[Plan.RIGID] = int(type(body) is RigidBody and body.joint.constant_motion)
        kernel = layout._kernels[j]
        pl[Plan.RATES] = int(kernel is not None and kernel.rates)
        pl[Plan.JOINT] = layout.joint_columns[j] if rows[j, Row.CHECK] < 0 else 0  # checked there when built
        if kernel is not None and kernel.velocities is not None and rows[j, Row.CHECK] < 0:
            pl[Plan.VELOCITIES] = kernel.velocities_address()
        if pl[Plan.JOINT] > 0 and kernel.joint_partials is not None:  # JOINT: unchecked kernels only
            pl[Plan.JOINT_PARTIALS] = kernel.joint_partials_address()
        if kernel is not None and kernel.internal_partials is not None and rows[j, Row.CHECK] < 0:
            pl[Plan.INTERNAL_PARTIALS] = kernel.internal_partials_address()
        if layout._hinges[j] is not None:
            pl[Plan.REAL_HINGE] = hook_address(body, layout._hinges[j], np.float64)
    m_max = int(rows[:, Row.NODE_DIM].max(initial=6))
    x_max = 3 * int(rows[:, Row.NV].max(initial=0))
    hinge = int((rows[:, Row.NQ] + 2 * rows[:, Row.NV]).max(initial=0))  # q, θ̇ and the force of _real_hinge
    scratch = max((6 + m_max) * max(x_max, 12) + 24 * max(x_max, 6) + 72, hinge)
    out.setflags(write=False)
    return LocalPlan(out, size, scratch)


#: the statuses of :func:`partials` besides −1 (done) and a row (its kernel rejected a state)
NOT_FINITE_INPUT, NOT_FINITE_RESULT, NOT_FINITE_HINGE, RAISED = -2, -3, -4, -5


def signature(layout) -> tuple:
    """The numba types of :func:`partials`' arguments at one state of ``layout``."""
    plan_, size, scratch = layout.local_plan
    nq, nv, zeros = layout.system.q_size, layout.system.dof_size, np.zeros
    vector = _VECTOR  # q, v and dv of any strides: the caller tests their type and shape alone
    return (*(typeof(x) for x in (layout.table(np.complex128), layout.reals, zeros(layout.size, dtype=np.complex128))),
            vector, vector, typeof(zeros((nq, nv))), vector,
            *(typeof(x) for x in (plan_, zeros(size), zeros(scratch), zeros((nv, 3 * nv)), int(Terms.MOTION), True,
                                  zeros(3, dtype=np.int64))))


def _step_addresses(argtypes: tuple) -> np.ndarray:
    """The addresses of :func:`_scatter`, :func:`_gather` and :func:`_walks` compiled for the
    arguments :func:`partials` passes them when its own are of types ``argtypes`` (each kept by
    its dispatcher, :func:`~sko.engine.jit.native_address`)."""
    rows, reals, arena, _, _, qdot, dv, plan_, work, scratch, D, terms, constants, _ = argtypes
    i8 = types.int64
    return np.array([native_address(_scatter, (rows, reals, arena, qdot, dv, plan_, work, scratch, i8, terms,
                                               constants)),
                     native_address(_gather, (rows, arena, plan_, work, scratch, i8)),
                     native_address(_walks, (rows, arena, plan_, work, scratch, D, i8, i8))], dtype=np.int64)


def steps(layout) -> np.ndarray:
    """The ``steps`` argument of :func:`partials` at one state of ``layout`` (compiled, or loaded
    from the cache, on first use)."""
    return _step_addresses(signature(layout))


def one_state_call(layout) -> Callable:
    """The prepared call of :func:`partials` at one state of ``layout`` (every body compiled):
    ``call(q, v, dv, qdot) -> (status, D)`` on 1-D float64 ``q``, ``v``, ``dv`` of the layout's
    sizes (any strides) and the C-ordered ``nq × nv`` float64 tangent columns ``qdot``. What depends
    on the system alone (the complex128 state table, the plan, the arena and scratch buffers,
    which the kernel zeroes, and the work buffer, made zero) is made once, and :func:`partials`
    is compiled for its one signature and called at its machine code's entry, without numba's
    dispatcher (which would look up the overload of eleven arguments' types at every call); the
    entry converts each argument to the type the signature declares, so the caller passes arrays
    of exactly these kinds. Compiled calls hold the GIL: one call at a time uses the buffers."""
    plan_, size, scratch_size = layout.local_plan
    table, reals = layout.table(np.complex128), layout.reals
    argtypes = signature(layout)
    partials.compile(argtypes)
    entry, addresses = partials.overloads[argtypes].entry_point, _step_addresses(argtypes)
    empty, terms = np.empty, int(Terms.MOTION)
    arena, work, scratch = np.empty(layout.size, dtype=np.complex128), np.zeros(size), np.empty(scratch_size)
    shape = (layout.system.dof_size, 3 * layout.system.dof_size)

    def call(q: np.ndarray, v: np.ndarray, dv: np.ndarray, qdot: np.ndarray) -> tuple[int, np.ndarray]:
        D = empty(shape)
        return entry(table, reals, arena, q, v, qdot, dv, plan_, work, scratch, D, terms, True, addresses), D

    return call


@kernel(entry=True)
def tangent_columns(template, flat, entries, signs, q, out) -> int:
    """``out`` (``nq × nv``) = ``template`` with its flattened entry ``flat[k]`` set to
    ``signs[k] · q[entries[k]]``: the tangent columns ``q̇(q, e_ι)`` (Eq. 1) that :func:`partials`
    takes, for a system whose only maps that depend on ``q`` are linear in its entries (the ball
    joints' ``G(q)``, :class:`~sko.systems.coordinates.CoordinateMaps`). Returns −1."""
    template, flat, entries, signs, q, out = (borrowed(template), borrowed(flat), borrowed(entries), borrowed(signs),
                                              borrowed(q), borrowed(out))
    o, t = flat_view(out), flat_view(template)
    for i in range(o.shape[0]):
        o[i] = t[i]
    for k in range(flat.shape[0]):
        o[flat[k]] = signs[k] * q[entries[k]]
    return -1


def tangent_columns_call(template: np.ndarray, flat: np.ndarray, entries: np.ndarray, signs: np.ndarray) -> Callable:
    """The prepared :func:`tangent_columns`: ``call(q) -> out`` on a 1-D float64 ``q`` of ``nq``
    entries (any strides), which the caller has checked, into the call's own ``nq × nv`` buffer,
    written again at every call (the caller reads it before the next; compiled calls hold the
    GIL): compiled for its one signature and called at its machine code's entry, as
    :func:`one_state_call` calls :func:`partials`."""
    template, signs = np.ascontiguousarray(template, dtype=np.float64), np.ascontiguousarray(signs, dtype=np.float64)
    flat, entries = np.ascontiguousarray(flat, dtype=np.int64), np.ascontiguousarray(entries, dtype=np.int64)
    argtypes = (*(typeof(x) for x in (template, flat, entries, signs)), _VECTOR, types.Array(types.float64, 2, "C"))
    tangent_columns.compile(argtypes)
    entry, out = tangent_columns.overloads[argtypes].entry_point, np.empty(template.shape)

    def call(q: np.ndarray) -> np.ndarray:
        entry(template, flat, entries, signs, q, out)
        return out

    return call


def one_state_address(layout) -> int:
    """The address of :func:`partials` compiled for one state of ``layout``, which
    :func:`batch_partials` calls through."""
    return native_address(partials, signature(layout))


#: ``_call(address, arguments)``: :func:`partials` or one of its steps at its address; :data:`RAISED`
#: if it raised
_call = native_caller(types.int64, RAISED)


@kernel(entry=True)
def partials(rows, reals, arena, q, v, qdot, dv, plan, work, scratch, D, terms, constants, steps):
    """``D = [∂T/∂θ | ∂T/∂θ̇ | ℳ]`` (``nv × 3 nv``, zeroed first) of inverse dynamics at the state
    ``q``, ``v`` with accelerations ``dv``, held by ``arena`` (complex128, zeroed first), by
    Algorithm 2 of DERIVATIVES.md §9; ``qdot`` the ``nq × nv`` matrix of the tangent columns
    (Eq. 1). ``ℳ = ∂T/∂θ̈`` comes from the same recursion, as columns whose seeds are
    ``σ = 0``, ``ϱ = H* e_ι`` and which call no kernel. ``scratch`` (of the size of the plan,
    :class:`LocalPlan`) is zeroed first too; ``work`` is not: it holds zeros where no call writes
    (it is made zero), and every call writes the same entries, fixed by the plan, before it reads
    them (a declared function's entries are zeroed before it runs). The states come from each body's first
    step, or a fill (module docstring; ``terms`` is ``Terms.MOTION``, ``constants`` True:
    arguments, so the kernels are called with the types they were compiled for), with a checked
    kernel's outputs checked at the real state. Returns −1; the row whose state kernel (or hinge force) rejected
    the state or a complex-step state; :data:`NOT_FINITE_INPUT` when ``q``, ``v`` or ``dv``
    holds a number that is not finite (nothing else done); :data:`NOT_FINITE_HINGE` when a compiled
    hinge force, run in float64 at the real state (its complex steps may be finite where it is
    not: ``√`` of a negative number), returns False or a number that is not finite; or
    :data:`NOT_FINITE_RESULT` when ``D`` does, or a body's ``α`` or ``f`` (the derivatives
    overflowed), or :data:`RAISED`. Its steps :func:`_scatter`,
    :func:`_gather` and :func:`_walks` are called at their addresses ``steps`` (:func:`steps`),
    so this kernel's machine code holds no copy of theirs, which numba would link into it and
    optimize again (12 s of compile)."""
    rows, reals, arena, q, v = borrowed(rows), borrowed(reals), borrowed(arena), borrowed(q), borrowed(v)
    qdot, dv, plan, work, scratch = borrowed(qdot), borrowed(dv), borrowed(plan), borrowed(work), borrowed(scratch)
    D, steps = borrowed(D), borrowed(steps)
    N, nv = rows.shape[0], D.shape[0]
    for i in range(arena.shape[0]):
        arena[i] = 0.0
    for i in range(nv):
        for c in range(3 * nv):
            D[i, c] = 0.0
    finite = True
    for i in range(nv):
        finite &= np.isfinite(dv[i]) and np.isfinite(v[i])
    for i in range(q.shape[0]):
        finite &= np.isfinite(q[i])
    for j in range(N):
        row = rows[j]
        for i in range(row[Row.NQ]):
            arena[row[Row.Q] + i] = q[plan[j, Plan.QS] + i]
        for i in range(row[Row.NV]):
            arena[row[Row.V] + i] = v[plan[j, Plan.DOF] + i]
    if not finite:
        return NOT_FINITE_INPUT
    for j in range(N):  # derivatives exist only where the dynamics are numbers
        if plan[j, Plan.REAL_HINGE] != 0 and not _real_hinge(rows[j], reals, arena, plan[j, Plan.REAL_HINGE], scratch):
            return NOT_FINITE_HINGE
    for i in range(scratch.shape[0]):
        scratch[i] = 0.0
    scatter, gather, walks = steps[0], steps[1], steps[2]
    for j in range(N):  # a body's state: its first complex step's real parts (_scatter), or a fill
        row = rows[j]
        if plan[j, Plan.RIGID] == 1 or plan[j, Plan.JOINT] >= row[Row.NV]:  # no column at the full terms
            status = fill_states(rows, reals, arena, terms, constants, j, j + 1)
            if status >= 0:
                return status
        elif constants and row[Row.PARENT] < 0:
            root_record(arena, row[Row.INBOARD], reals)
        status = _call(scatter, (rows, reals, arena, qdot, dv, plan, work, scratch, j, terms, constants))
        if status != -1:
            return status
    for j in range(N - 1, -1, -1):
        if _call(gather, (rows, arena, plan, work, scratch, j)) != -1:
            return RAISED
    for i in range(N):  # Eq. 26
        if _call(walks, (rows, arena, plan, work, scratch, D, nv, i)) != -1:
            return RAISED
    for i in range(nv):
        for c in range(3 * nv):
            finite &= np.isfinite(D[i, c])
    for j in range(N):  # what the products left out for a zero block (Nonzero) would have multiplied
        for r in range(rows[j, Row.NODE_DIM]):
            finite &= np.isfinite(work[plan[j, Plan.ALPHA] + r]) and np.isfinite(work[plan[j, Plan.F] + r])
    return -1 if finite else NOT_FINITE_RESULT


@kernel(entry=True, parallel=True)
def batch_partials(rows, reals, A, q, v, qdot, dv, plan, work, scratch, D, terms, constants, steps, status, one_state):
    """:func:`partials` for each state ``s`` of a batch (``A``, ``q``, ``v``, ``qdot``, ``dv``, ``work``,
    ``scratch``, ``D`` with a leading batch axis; ``steps`` as :func:`partials` takes it) into
    ``status[s]``; in parallel over states (numba's threads) for more than a few. It calls
    :func:`partials` at its address ``one_state`` (:func:`one_state_address`), so this kernel's
    machine code holds no copy of the recursion, which would be optimized again with it (numba
    links and optimizes again the code of every kernel a kernel calls directly, here twice more:
    the parallel loop's body is a function of its own)."""
    rows, reals, A, q, v = borrowed(rows), borrowed(reals), borrowed(A), borrowed(q), borrowed(v)
    qdot, dv, plan, work, scratch = borrowed(qdot), borrowed(dv), borrowed(plan), borrowed(work), borrowed(scratch)
    D, status, steps = borrowed(D), borrowed(status), borrowed(steps)
    if A.shape[0] <= 8:
        for s in range(A.shape[0]):
            status[s] = _call(one_state, (rows, reals, A[s], q[s], v[s], qdot[s], dv[s], plan, work[s], scratch[s],
                                          D[s], terms, constants, steps))
        return
    for s in prange(A.shape[0]):
        status[s] = _call(one_state, (rows, reals, A[s], q[s], v[s], qdot[s], dv[s], plan, work[s], scratch[s], D[s],
                                      terms, constants, steps))


@kernel(entry=True)
def forward(D, X):
    """Eq. 3 of DERIVATIVES.md at one state: ``X = [−ℳ⁻¹ ∂T/∂θ | −ℳ⁻¹ ∂T/∂θ̇ | ℳ⁻¹]`` from
    ``D = [∂T/∂θ | ∂T/∂θ̇ | ℳ]`` (``nv × 3 nv``, :func:`partials`) by the Cholesky factor of ``ℳ``
    (its lower triangle), ``ℳ⁻¹`` symmetrised. False, ``X`` not all written, where ``ℳ`` has no
    Cholesky factor in floating point (the caller then inverts it otherwise)."""
    n = D.shape[0]
    L = np.zeros((n, n))
    for j in range(n):
        d = D[j, 2 * n + j]
        for k in range(j):
            d -= L[j, k] * L[j, k]
        if not d > 0.0:
            return False
        d = np.sqrt(d)
        L[j, j] = d
        for i in range(j + 1, n):
            s = D[i, 2 * n + j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            L[i, j] = s / d
    for i in range(n):  # L Y = [−∂T/∂θ | −∂T/∂θ̇ | I] row by row, a row's 3 nv columns at once
        for c in range(3 * n):
            X[i, c] = -D[i, c] if c < 2 * n else (1.0 if c == 2 * n + i else 0.0)
        for k in range(i):
            l = L[i, k]
            for c in range(3 * n):
                X[i, c] -= l * X[k, c]
        d = L[i, i]
        for c in range(3 * n):
            X[i, c] /= d
    for i in range(n - 1, -1, -1):  # Lᵀ X = Y, in place
        for k in range(i + 1, n):
            l = L[k, i]
            for c in range(3 * n):
                X[i, c] -= l * X[k, c]
        d = L[i, i]
        for c in range(3 * n):
            X[i, c] /= d
    for i in range(n):
        for j in range(i):
            s = 0.5 * (X[i, 2 * n + j] + X[j, 2 * n + i])
            X[i, 2 * n + j] = s
            X[j, 2 * n + i] = s
    return True


_FORWARD_TYPES = (types.Array(types.float64, 2, "C"), types.Array(types.float64, 2, "C"))


def forward_call() -> Callable:
    """``call(D, X) -> bool``: :func:`forward` at its machine code's entry (compiled, or loaded
    from the cache, on first use), without numba's dispatcher; ``D`` and ``X`` C-ordered float64
    ``nv × 3 nv``. The dispatcher keeps its code: a dictionary lookup once it has it."""
    compiled = forward.overloads.get(_FORWARD_TYPES)
    if compiled is None:
        forward.compile(_FORWARD_TYPES)
        compiled = forward.overloads[_FORWARD_TYPES]
    return compiled.entry_point


@register
def _real_hinge(row, reals, arena, address, scratch) -> bool:
    """The compiled hinge force of ``row``'s body at ``address`` (float64), run at the real state
    the complex arena holds (its ``q``, ``θ̇`` and the force copied into ``scratch``): whether it
    returned True and finite numbers."""
    nq, n, c0 = row[Row.NQ], row[Row.NV], row[Row.CONSTANTS]
    for i in range(nq):
        scratch[i] = arena[row[Row.Q] + i].real
    for i in range(n):
        scratch[nq + i] = arena[row[Row.V] + i].real
        scratch[nq + n + i] = 0.0
    return call_state(address, (scratch[0: nq], scratch[nq: nq + n], reals[c0: c0 + row[Row.CONSTANTS_SIZE]],
                                scratch[nq + n: nq + 2 * n])) and finite_entries(scratch, nq + n, n)


@kernel
def _scatter(rows, reals, arena, qdot, dv, plan, work, scratch, j, terms, constants):
    """Row ``j``: the local partials, ``α``, ``σ``, ``ϱ``, the own parts of ``f``, ``𝒫``, ``g``, and its
    frame's seeds and transfer (Eq. 22–25); −1, or ``j`` when its kernel rejected a state (or, checked,
    wrote outputs the checks refuse). With ``constants`` (a fresh arena) and a column at the full
    terms, the body's first step is its first call in the arena (module docstring)."""
    row, pl = rows[j], plan[j]
    m, n, p = row[Row.NODE_DIM], row[Row.NV], row[Row.PARENT]
    x2, xc = 2 * n, 3 * n  # the columns that call the kernel (θ, θ̇), and all (θ, θ̇, θ̈)
    eo, er, ec = row[Row.E], row[Row.E_ROW], row[Row.E_COLUMN]
    ho, mo, ao, bo = row[Row.H], row[Row.M], row[Row.A], row[Row.B]
    io, mp = row[Row.INBOARD], row[Row.INBOARD_DIM]
    qo, nq, vo, dof, qs = row[Row.Q], row[Row.NQ], row[Row.V], pl[Plan.DOF], pl[Plan.QS]
    h, rigid, dhinge, rates, joint = STEP, pl[Plan.RIGID] == 1, pl[Plan.DHINGE], pl[Plan.RATES] == 1, pl[Plan.JOINT]
    scale = 1.0 / h
    moving = _RATES if rates else terms  # the terms of a column along the velocities
    R, stride, rs = row[Row.RECORD_COUNT], pl[Plan.RECORD_STRIDE], Record.SIZE + 6 * m
    dE, dH, dM, dA, dB, A, B = pl[Plan.DE], pl[Plan.DH], pl[Plan.DM], pl[Plan.DA], pl[Plan.DB], pl[Plan.A], pl[Plan.B]
    # own columns: θ along q̇(q, e_ι), then θ̇ (Eq. 1, 21). In a fresh arena (no fill of this body) the
    # body's first call is its first column at the full terms, with the constants: the column after JOINT's
    internal = pl[Plan.INTERNAL_PARTIALS] != 0  # the columns past the joint's, but the first, in closed form
    fresh = constants and not rigid and joint < n
    declared = pl[Plan.VELOCITIES] != 0
    first = joint if fresh else 0
    for k in range(x2):
        x = first if k == 0 else k - 1 if k <= first else k
        if x < n:
            for i in range(nq):
                arena[qo + i] = complex(arena[qo + i].real, h * qdot[qs + i, dof + x])
        else:
            arena[vo + x - n] = complex(arena[vo + x - n].real, h)
        if not rigid and not (declared and x >= n):
            if x == n and rates:  # the real state's E, H, M, Γ again, which RATES leaves as they are
                _real_outputs(arena, row)
            past = x >= joint  # past the joint's coordinates (x < n: along θ)
            if x < n and (internal and x > joint if past else pl[Plan.JOINT_PARTIALS] != 0):  # declared
                if not _declared_column(arena, row, reals, pl, work, x, xc, past):
                    return j
            else:
                column_terms = (_JOINT if x < joint else terms) if x < n else moving
                if not call_state(row[Row.KERNEL], (arena, row, reals, column_terms, fresh and k == 0)):
                    return j
                _read_partials(arena, row, pl, work, x, xc, x < n or not rates, x >= joint)
                if fresh and k == 0 and joint > 0:  # JOINT reads M and Γ_o of the real state, as a fill leaves them
                    _real_outputs(arena, row)
        if row[Row.HINGE] != 0:
            so, c0 = row[Row.SCRATCH], row[Row.CONSTANTS]
            out = arena[so: so + n]
            for i in range(n):
                out[i] = 0
            if not call_state(row[Row.HINGE], (arena[qo: qo + nq], arena[vo: vo + n],
                                               reals[c0: c0 + row[Row.CONSTANTS_SIZE]], out)):
                return j
            for i in range(n):
                work[dhinge + x * n + i] = out[i].imag * scale
        for i in range(nq):
            arena[qo + i] = arena[qo + i].real
        for i in range(n):
            arena[vo + i] = arena[vo + i].real
    if rigid:
        _rigid_partials(arena, row, pl, work, scratch, p >= 0)
    elif declared:  # the columns along θ̇ and v_o in closed form, into zeros
        rates_at = pl[Plan.RECORDS] + xc * 6 * m  # record 0's ∂γ
        for o, size in ((A, m * 6), (B, m * 6), (dA + n * m, n * m), (dB + n * m, n * m)):
            zero(work, o, o + size)
        for k in range(R):
            o = rates_at + k * stride
            zero(work, o + n * 6, o + 2 * n * 6)  # ∂γ along θ̇
            zero(work, o + xc * 6, o + xc * 6 + 36)  # G
        if not call_state(pl[Plan.VELOCITIES], (arena, row, reals, work, p >= 0, A, B, rates_at + xc * 6, dA + n * m,
                                                dB + n * m, rates_at + n * 6, stride)):
            return j
    elif p >= 0:  # the inboard frame's velocity: A = ∂ã/∂v_o, B = ∂b/∂v_o, G = ∂γ/∂v_o
        for d in range(6):
            arena[io + Record.velocity + d] = complex(arena[io + Record.velocity + d].real, h)
            if not call_state(row[Row.KERNEL], (arena, row, reals, moving, False)):
                return j
            for r in range(m):
                work[A + r * 6 + d] = arena[ao + r].imag * scale
                work[B + r * 6 + d] = arena[bo + r].imag * scale
            for k in range(R):
                ro, wo = row[Row.RECORDS] + k * rs, pl[Plan.RECORDS] + k * stride + xc * 6 * m + xc * 6
                for i in range(6):
                    work[wo + i * 6 + d] = arena[ro + Record.gamma + i].imag * scale
            arena[io + Record.velocity + d] = arena[io + Record.velocity + d].real
    if not rigid and (x2 > 0 or p >= 0):  # the real state again, for the children: Re f(x + i h) = f(x) + O(h²)
        _real_outputs(arena, row)
        if fresh and row[Row.CHECK] >= 0 and not call_state(row[Row.CHECKER], (arena, row, reals, terms, constants)):
            return j  # a checked kernel's outputs at the real state (the fill's checks)
    beta = scratch[Scratch.beta: Scratch.beta + 6]
    alpha_p = plan[p, Plan.ALPHA] if p >= 0 else 0
    identity = pl[Plan.IDENTITY] == 1
    for r in range(6):  # β_o = Γ_o α(℘)
        s = 0.0
        if p >= 0:
            lo, hi = _picked(identity, r, mp)
            for c in range(lo, hi):
                s += (1.0 if identity else arena[io + Record.SIZE + r * mp + c].real) * work[alpha_p + c]
        beta[r] = s
    al = pl[Plan.ALPHA]
    for r in range(m):  # α = E β + H* θ̈ + a (Eq. 22)
        s = arena[ao + r].real
        for c in range(6):
            s += arena[eo + r * er + c * ec].real * beta[c]
        for i in range(n):
            s += arena[ho + i * m + r].real * dv[dof + i]
        work[al + r] = s
    # σ, ϱ (Eq. 23); f, 𝒫, g: this body's own parts, without the blocks of zeros (Nonzero)
    sg, rh, g, f, P = pl[Plan.SIGMA], pl[Plan.RHO], pl[Plan.G], pl[Plan.F], pl[Plan.P]
    nzE, nzH, nzM = pl[Plan.NONZERO] + Nonzero.E * xc, pl[Plan.NONZERO] + Nonzero.H * xc, pl[Plan.NONZERO] + Nonzero.M * xc
    vo_ = io + Record.velocity  # v_o and β_o in registers
    vel = (arena[vo_].real, arena[vo_ + 1].real, arena[vo_ + 2].real, arena[vo_ + 3].real, arena[vo_ + 4].real,
           arena[vo_ + 5].real)
    bt = (beta[0], beta[1], beta[2], beta[3], beta[4], beta[5])
    for x in range(xc):  # column by column: its blocks' flags once
        moves_E, moves_H = work[nzE + x] != 0.0, work[nzH + x] != 0.0
        for r in range(m):
            s, t = 0.0, work[dA + x * m + r]
            if moves_E:
                dEr = held(work, dE + (x * m + r) * 6, 6)
                s, t = dot(dEr, vel), t + dot(dEr, bt)
            if moves_H:
                for i in range(n):
                    e = work[dH + (x * n + i) * m + r]
                    s += e * arena[vo + i].real
                    t += e * dv[dof + i]
            if x >= x2:
                t += arena[ho + (x - x2) * m + r].real
            elif x >= n:
                s += arena[ho + (x - n) * m + r].real
            work[sg + r * xc + x] = s
            work[rh + r * xc + x] = t
    for r in range(m):  # f = M α + b, 𝒫 = M [A E] + [B 0], g = M ϱ + ∂M α + ∂b: row r, by rows of M's columns
        gr, s = work[g + r * xc: g + (r + 1) * xc], arena[bo + r].real
        pv, pa = held(work, B + r * 6, 6), (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)  # 𝒫's row, in registers
        for x in range(xc):
            gr[x] = work[dB + x * m + r]
        for k in range(m):
            e, ek = arena[mo + r * m + k].real, eo + k * er
            s += e * work[al + k]
            pv = axpy(pv, e, held(work, A + k * 6, 6))
            pa = axpy(pa, e, (arena[ek].real, arena[ek + ec].real, arena[ek + 2 * ec].real, arena[ek + 3 * ec].real,
                              arena[ek + 4 * ec].real, arena[ek + 5 * ec].real))
            rk = work[rh + k * xc: rh + (k + 1) * xc]
            for x in range(xc):
                gr[x] += e * rk[x]
        put(work, P + r * Seed.SIZE, pv)
        put(work, P + r * Seed.SIZE + Seed.acceleration, pa)
        work[f + r] = s
        for x in range(xc):
            if work[nzM + x] != 0.0:
                dMx, t = work[dM + (x * m + r) * m: dM + (x * m + r + 1) * m], 0.0
                for c in range(m):
                    t += dMx[c] * work[al + c]
                gr[x] += t
    if p >= 0:
        _seeds(rows, arena, plan, work, j)
    return -1


@register
def _picked(identity: bool, i: int, count: int) -> tuple[int, int]:
    """The range of ``k`` in a product with row (or column) ``i`` of ``Γ_o`` where its entries may be
    nonzero: ``0 … count``, or for ``Γ_o = [I₆, 0]`` (``identity``, :data:`Plan`) ``k = i`` alone,
    where it is 1 (none for ``i ≥ 6``)."""
    if identity:
        return i, min(i + 1, 6)
    return 0, count


@kernel
def _declared_column(arena, row, reals, pl, work, x, xc, internal) -> bool:
    """A body's partials in its column ``x`` (of ``xc``) along ``θ`` by the closed form it
    declares (:class:`~sko.engine.state_kernels.StateKernel`), into zeros: ``internal_partials``
    for ``internal`` (past its joint's coordinates: ``∂M`` and its records' ``∂Γ`` too), else
    ``joint_partials``; with the flags of the blocks that are not zero (:data:`Nonzero`).
    Whether it took the state."""
    m, n, R, stride = row[Row.NODE_DIM], row[Row.NV], row[Row.RECORD_COUNT], pl[Plan.RECORD_STRIDE]
    dE, dH, dM = pl[Plan.DE] + x * m * 6, pl[Plan.DH] + x * n * m, pl[Plan.DM] + x * m * m
    dA, dB = pl[Plan.DA] + x * m, pl[Plan.DB] + x * m
    gamma, dgamma = pl[Plan.RECORDS] + xc * 6 * m + x * 6, pl[Plan.RECORDS] + x * 6 * m
    for o, size in ((dE, m * 6), (dH, n * m), (dA, m), (dB, m)):
        zero(work, o, o + size)
    for k in range(R):
        zero(work, gamma + k * stride, gamma + k * stride + 6)
    if internal:
        zero(work, dM, dM + m * m)
        for k in range(R):
            zero(work, dgamma + k * stride, dgamma + k * stride + 6 * m)
        if not call_state(pl[Plan.INTERNAL_PARTIALS], (arena, row, reals, work, dE, dH, dM, dA, dB, dgamma, gamma,
                                                       stride)):
            return False
    elif not call_state(pl[Plan.JOINT_PARTIALS], (arena, row, reals, work, dE, dH, dA, dB, gamma, stride)):
        return False
    nz = pl[Plan.NONZERO] + x
    work[nz + Nonzero.E * xc] = _moved(work, dE, m * 6)
    work[nz + Nonzero.H * xc] = _moved(work, dH, n * m)
    if internal:
        work[nz + Nonzero.M * xc] = _moved(work, dM, m * m)
        for k in range(R):
            work[nz + (Nonzero.records + k) * xc] = _moved(work, dgamma + k * stride, 6 * m)
    return True


@register
def _moved(work, w, size) -> float:
    """1.0 where one of the ``size`` entries at ``work[w]`` is nonzero, else 0.0 (a :data:`Nonzero` flag)."""
    moved = False
    for i in range(size):
        moved |= work[w + i] != 0.0
    return 1.0 if moved else 0.0


@register
def _partial(arena, o, work, w, size, scale) -> float:
    """The ``size`` contiguous entries at ``arena[o]``: their imaginary parts times ``scale`` (a
    complex-step column) into ``work[w]``; 1.0 where one of them is nonzero, else 0.0 (a
    structural-zero flag, :data:`Nonzero`)."""
    source, target, moved = arena[o: o + size], work[w: w + size], False
    for i in range(size):
        e = source[i].imag * scale
        target[i] = e
        moved |= e != 0.0
    return 1.0 if moved else 0.0


@kernel
def _read_partials(arena, row, pl, work, x, xc, full, inertia):
    """The imaginary parts / h of a body's outputs after its kernel ran at a complex step in its
    column ``x`` (of ``xc``): ``∂E``, ``∂H``, ``∂M``, ``∂a``, ``∂b`` and its records' ``∂Γ``, ``∂γ``,
    with the flags of the blocks that are not zero (:data:`Nonzero`); without ``full`` (a column
    along the velocities at ``Terms.RATES``), ``∂a``, ``∂b``, ``∂γ`` only, and without ``inertia``
    (a column along the joint at ``Terms.JOINT``) no ``∂M``, ``∂Γ``: the others are zero (the work
    buffer's zeros, flags included)."""
    m, n, scale = row[Row.NODE_DIM], row[Row.NV], 1.0 / STEP
    eo, er, ec = row[Row.E], row[Row.E_ROW], row[Row.E_COLUMN]
    mo, ao, bo, ho = row[Row.M], row[Row.A], row[Row.B], row[Row.H]
    rs, stride = Record.SIZE + 6 * m, pl[Plan.RECORD_STRIDE]
    dE, dM, dA, dB, dH = pl[Plan.DE], pl[Plan.DM], pl[Plan.DA], pl[Plan.DB], pl[Plan.DH]
    nz = pl[Plan.NONZERO] + x
    _partial(arena, ao, work, dA + x * m, m, scale)
    _partial(arena, bo, work, dB + x * m, m, scale)
    for k in range(row[Row.RECORD_COUNT]):
        ro, wo = row[Row.RECORDS] + k * rs, pl[Plan.RECORDS] + k * stride
        _partial(arena, ro + Record.gamma, work, wo + xc * 6 * m + x * 6, 6, scale)
    if not full:
        return
    moved = False
    for r in range(m):
        for c in range(6):
            e = arena[eo + r * er + c * ec].imag * scale
            work[dE + (x * m + r) * 6 + c] = e
            moved |= e != 0.0
    work[nz + Nonzero.E * xc] = 1.0 if moved else 0.0
    work[nz + Nonzero.H * xc] = _partial(arena, ho, work, dH + x * n * m, n * m, scale)
    if not inertia:
        return
    work[nz + Nonzero.M * xc] = _partial(arena, mo, work, dM + x * m * m, m * m, scale)
    for k in range(row[Row.RECORD_COUNT]):
        ro, wo = row[Row.RECORDS] + k * rs, pl[Plan.RECORDS] + k * stride
        work[nz + (Nonzero.records + k) * xc] = _partial(arena, ro + Record.SIZE, work, wo + x * 6 * m, 6 * m, scale)


@register
def _cross(a0, a1, a2, b0, b1, b2):
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@inline_kernel
def _crm(x, y, out):
    """``out = x × y`` of motions ``[ω; v]`` (``out`` not ``x`` or ``y``)."""
    w = _cross(x[0], x[1], x[2], y[0], y[1], y[2])
    u = _cross(x[0], x[1], x[2], y[3], y[4], y[5])
    t = _cross(x[3], x[4], x[5], y[0], y[1], y[2])
    out[0], out[1], out[2] = w
    out[3], out[4], out[5] = u[0] + t[0], u[1] + t[1], u[2] + t[2]


@inline_kernel
def _crf(x, f, out):
    """``out = x ×* f`` of a motion ``x`` and a force ``f = [n; f]`` (``out`` not ``x`` or ``f``)."""
    a = _cross(x[0], x[1], x[2], f[0], f[1], f[2])
    b = _cross(x[3], x[4], x[5], f[3], f[4], f[5])
    c = _cross(x[0], x[1], x[2], f[3], f[4], f[5])
    out[0], out[1], out[2] = a[0] + b[0], a[1] + b[1], a[2] + b[2]
    out[3], out[4], out[5] = c


@kernel
def _rigid_partials(arena, row, pl, work, scratch, moves):
    """A library rigid body's local partials in closed form (``S`` constant, ``c_J = 0``, ``M``
    constant; RIGID.md): with ``V = E v_o + S θ̇``, ``a = E γ_o + V × S θ̇``, ``b = V ×* I V``, a
    column ``θ_ι`` (``s = S e_ι``) gives ``∂E = −s × E``, ``∂V = −s × E v_o``,
    ``∂a = −s × E γ_o + ∂V × S θ̇``, ``∂b = ∂V ×* I V + V ×* I ∂V``; a column ``θ̇_ι`` gives
    ``∂a = s × S θ̇ + V × s`` and ``∂b`` with ``∂V = s``; the inboard velocity (``moves``) gives
    ``A e_d = E e_d × S θ̇`` and ``B e_d`` with ``∂V = E e_d``. ``∂H``, ``∂M`` and its record's
    ``∂Γ``, ``∂γ``, ``G`` are zero (the work buffer's zeros, and their :data:`Nonzero` flags)."""
    n = row[Row.NV]
    eo, er, ec, ho, mo = row[Row.E], row[Row.E_ROW], row[Row.E_COLUMN], row[Row.H], row[Row.M]
    io, vo, Vo = row[Row.INBOARD], row[Row.V], row[Row.VELOCITY]
    S = Scratch
    Eg, Vp, V = scratch[S.Eg: S.Eg + 6], scratch[S.Vp: S.Vp + 6], scratch[S.V: S.V + 6]
    vJ, IV, sv = scratch[S.vJ: S.vJ + 6], scratch[S.IV: S.IV + 6], scratch[S.sv: S.sv + 6]
    dV, t1, t2 = scratch[S.dV: S.dV + 6], scratch[S.t1: S.t1 + 6], scratch[S.t2: S.t2 + 6]
    IdV = scratch[S.IdV: S.IdV + 6]
    dE, dA, dB, A, B = pl[Plan.DE], pl[Plan.DA], pl[Plan.DB], pl[Plan.A], pl[Plan.B]
    for r in range(6):
        s1, s2, s3 = 0.0, 0.0, 0.0
        for c in range(6):
            e = arena[eo + r * er + c * ec].real
            s1 += e * arena[io + Record.gamma + c].real
            s2 += e * arena[io + Record.velocity + c].real
        for i in range(n):
            s3 += arena[ho + i * 6 + r].real * arena[vo + i].real
        Eg[r], Vp[r], vJ[r], V[r] = s1, s2, s3, arena[Vo + r].real
    for r in range(6):
        s1 = 0.0
        for c in range(6):
            s1 += arena[mo + r * 6 + c].real * V[c]
        IV[r] = s1
    for x in range(2 * n + (6 if moves else 0)):
        if x < 2 * n:
            for r in range(6):
                sv[r] = arena[ho + (x % n) * 6 + r].real
        if x < n:  # θ_ι: ∂E = −s × E, ∂V = −s × V⁺
            for c in range(6):
                for r in range(6):
                    t1[r] = arena[eo + r * er + c * ec].real
                _crm(sv, t1, t2)
                for r in range(6):
                    work[dE + (x * 6 + r) * 6 + c] = -t2[r]
            work[pl[Plan.NONZERO] + Nonzero.E * 3 * n + x] = 1.0
            _crm(sv, Vp, t1)
            for r in range(6):
                dV[r] = -t1[r]
            _crm(sv, Eg, t1)
            _crm(dV, vJ, t2)
            for r in range(6):
                work[dA + x * 6 + r] = t2[r] - t1[r]
        elif x < 2 * n:  # θ̇_ι: ∂V = s
            for r in range(6):
                dV[r] = sv[r]
            _crm(sv, vJ, t1)
            _crm(V, sv, t2)
            for r in range(6):
                work[dA + x * 6 + r] = t1[r] + t2[r]
        else:  # the inboard velocity along e_d: ∂V = E e_d
            d = x - 2 * n
            for r in range(6):
                dV[r] = arena[eo + r * er + d * ec].real
            _crm(dV, vJ, t1)
            for r in range(6):
                work[A + r * 6 + d] = t1[r]
        for r in range(6):  # ∂b = ∂V ×* I V + V ×* I ∂V
            s1 = 0.0
            for c in range(6):
                s1 += arena[mo + r * 6 + c].real * dV[c]
            IdV[r] = s1
        _crf(dV, IV, t1)
        _crf(V, IdV, t2)
        for r in range(6):
            if x < 2 * n:
                work[dB + x * 6 + r] = t1[r] + t2[r]
            else:
                work[B + r * 6 + x - 2 * n] = t1[r] + t2[r]


@kernel
def _real_outputs(arena, row):
    """The imaginary parts of a body's outputs set to zero (module docstring)."""
    m, n = row[Row.NODE_DIM], row[Row.NV]
    eo, er, ec = row[Row.E], row[Row.E_ROW], row[Row.E_COLUMN]
    for r in range(m):
        for c in range(6):
            arena[eo + r * er + c * ec] = arena[eo + r * er + c * ec].real
    for o, size in ((row[Row.H], n * m), (row[Row.M], m * m), (row[Row.A], m), (row[Row.B], m),
                    (row[Row.VELOCITY], m), (row[Row.POTENTIAL], 1),
                    (row[Row.RECORDS], row[Row.RECORD_COUNT] * (Record.SIZE + 6 * m))):
        for i in range(o, o + size):
            arena[i] = arena[i].real


@kernel
def _seeds(rows, arena, plan, work, j):
    """The seeds ``w`` (Eq. 24), transfer ``𝒯`` (Eq. 25) and weight ``H_℘ Γ_o*`` (Eq. 26) of the
    frame row ``j`` hangs from, from its parent's partials. ``𝒯``'s upper right block stays zero
    (the work buffer's zeros); a rigid parent's ``∂Γ``, ``∂γ`` and ``G`` are zero and not read, nor
    another parent's ``∂Γ`` in a column where it is zero (:data:`Nonzero`)."""
    row, pl = rows[j], plan[j]
    p = row[Row.PARENT]
    prow, pp = rows[p], plan[p]
    mp, np_, n2 = prow[Row.NODE_DIM], prow[Row.NV], 3 * prow[Row.NV]
    go = row[Row.INBOARD] + Record.SIZE
    wo = pp[Plan.RECORDS] + pl[Plan.RECORD] * pp[Plan.RECORD_STRIDE]
    dG, dg, G = wo, wo + n2 * 6 * mp, wo + n2 * 6 * mp + n2 * 6
    Vp, alpha_p, sigma_p, rho_p, A_p = prow[Row.VELOCITY], pp[Plan.ALPHA], pp[Plan.SIGMA], pp[Plan.RHO], pp[Plan.A]
    W, T, HG, rigid_p = pl[Plan.W], pl[Plan.T], pl[Plan.HGAMMA], pp[Plan.RIGID] == 1
    identity = pl[Plan.IDENTITY] == 1  # Γ_o = [I₆, 0]: its products pick the first six rows or columns
    moved = pp[Plan.NONZERO] + (Nonzero.records + pl[Plan.RECORD]) * n2  # the flags of ∂Γ (Nonzero)
    wa = W + Seed.acceleration * n2
    for r in range(6):  # by rows of σ and ϱ: contiguous inner loops
        Wv, Wa = work[W + r * n2: W + (r + 1) * n2], work[wa + r * n2: wa + (r + 1) * n2]
        for x in range(n2):
            Wv[x], Wa[x] = 0.0, 0.0
        lo, hi = _picked(identity, r, mp)
        for c in range(lo, hi):
            gamma = 1.0 if identity else arena[go + r * mp + c].real
            sc, rc = work[sigma_p + c * n2: sigma_p + (c + 1) * n2], work[rho_p + c * n2: rho_p + (c + 1) * n2]
            for x in range(n2):
                Wv[x] += gamma * sc[x]
                Wa[x] += gamma * rc[x]
        if not rigid_p:
            for x in range(n2):
                t = work[dg + x * 6 + r]
                if work[moved + x] != 0.0:
                    s, dGx = 0.0, work[dG + (x * 6 + r) * mp: dG + (x * 6 + r + 1) * mp]
                    for c in range(mp):
                        s += dGx[c] * arena[Vp + c].real
                        t += dGx[c] * work[alpha_p + c]
                    Wv[x] += s
                Wa[x] += t
    eo, er, ec, hp = prow[Row.E], prow[Row.E_ROW], prow[Row.E_COLUMN], prow[Row.H]
    ta = T + Seed.acceleration * Seed.SIZE
    for r in range(6):
        for c in range(6):
            s, t = 0.0, 0.0 if rigid_p else work[G + r * 6 + c]
            lo, hi = _picked(identity, r, mp)
            for k in range(lo, hi):
                gamma = 1.0 if identity else arena[go + r * mp + k].real
                s += gamma * arena[eo + k * er + c * ec].real
                t += gamma * work[A_p + k * 6 + c]
            work[T + r * Seed.SIZE + c] = s
            work[ta + r * Seed.SIZE + Seed.acceleration + c] = s
            work[ta + r * Seed.SIZE + c] = t
    for r in range(np_):
        for c in range(6):
            s = 0.0
            lo, hi = _picked(identity, c, mp)
            for k in range(lo, hi):
                s += arena[hp + r * mp + k].real * (1.0 if identity else arena[go + c * mp + k].real)
            work[HG + r * 6 + c] = s


@kernel
def _gather(rows, arena, plan, work, scratch, j):
    """Row ``j`` (its children done): ``u = E* f``, ``𝒦 = E* 𝒫``, then its parts of its parent's
    ``f``, ``𝒫`` and ``g`` (Eq. 22, 25, 26); ``𝒦 𝒯`` by the blocks of ``𝒯`` (Eq. 25: its upper
    right block is zero, its diagonal ones equal). Each product runs along rows (a row of the
    result gains a multiple of a row of a factor), so the inner loops are contiguous and carry no
    chain of sums. Returns −1 (a step of :func:`partials`)."""
    row, pl = rows[j], plan[j]
    m, p = row[Row.NODE_DIM], row[Row.PARENT]
    eo, er, ec = row[Row.E], row[Row.E_ROW], row[Row.E_COLUMN]
    f, u, P, K = pl[Plan.F], pl[Plan.U], pl[Plan.P], pl[Plan.K]
    for c in range(6):  # a row of 𝒦 in registers
        kv, ka, s = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 0.0, 0.0, 0.0), 0.0
        for r in range(m):
            e, Pr = arena[eo + r * er + c * ec].real, P + r * Seed.SIZE
            s += e * work[f + r]
            kv, ka = axpy(kv, e, held(work, Pr, 6)), axpy(ka, e, held(work, Pr + Seed.acceleration, 6))
        put(work, K + c * Seed.SIZE, kv)
        put(work, K + c * Seed.SIZE + Seed.acceleration, ka)
        work[u + c] = s
    if p < 0:
        return -1
    prow, pp = rows[p], plan[p]
    mp, n2 = prow[Row.NODE_DIM], 3 * prow[Row.NV]
    go = row[Row.INBOARD] + Record.SIZE
    dG = pp[Plan.RECORDS] + pl[Plan.RECORD] * pp[Plan.RECORD_STRIDE]
    fp, Pp, gp, rigid_p = pp[Plan.F], pp[Plan.P], pp[Plan.G], pp[Plan.RIGID] == 1
    moved = pp[Plan.NONZERO] + (Nonzero.records + pl[Plan.RECORD]) * n2  # the flags of ∂Γ (Nonzero)
    KT, KW = scratch[GatherWork.KT: GatherWork.KT + 72], scratch[GatherWork.KW: GatherWork.KW + 6 * n2]
    T, W = pl[Plan.T], pl[Plan.W]
    for c in range(6):  # [𝒦_v 𝒦_a] 𝒯 = [𝒦_v ΓE + 𝒦_a (ΓA + G)   𝒦_a ΓE]; 𝒦 W
        Kc = work[K + c * Seed.SIZE: K + (c + 1) * Seed.SIZE]
        tv, ta = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)  # a row of 𝒦 𝒯 in registers
        for l in range(6):
            cv, ca = Kc[l], Kc[Seed.acceleration + l]
            Tv, Ta = held(work, T + l * Seed.SIZE, 6), held(work, T + (Seed.acceleration + l) * Seed.SIZE, 6)
            tv, ta = axpy(axpy(tv, cv, Tv), ca, Ta), axpy(ta, ca, Tv)
        put(KT, c * Seed.SIZE, tv)
        put(KT, c * Seed.SIZE + Seed.acceleration, ta)
        kv, ka = held(work, K + c * Seed.SIZE, 6), held(work, K + c * Seed.SIZE + Seed.acceleration, 6)
        wa = W + Seed.acceleration * n2
        for x in range(n2):  # 𝒦 W, each entry a sum in registers
            KW[c * n2 + x] = dot(kv, column6(work, W + x, n2)) + dot(ka, column6(work, wa + x, n2))
    identity = pl[Plan.IDENTITY] == 1  # Γ_o = [I₆, 0]: Γ_o* adds to the parent's first six rows
    for r in range(mp):
        Pr, gr, s = Pp + r * Seed.SIZE, work[gp + r * n2: gp + (r + 1) * n2], 0.0
        pv, pa = held(work, Pr, 6), held(work, Pr + Seed.acceleration, 6)  # the parent's row of 𝒫 in registers
        lo, hi = _picked(identity, r, 6)
        for c in range(lo, hi):
            e = 1.0 if identity else arena[go + c * mp + r].real
            s += e * work[u + c]
            pv = axpy(pv, e, held(KT, c * Seed.SIZE, 6))
            pa = axpy(pa, e, held(KT, c * Seed.SIZE + Seed.acceleration, 6))
            KWc = KW[c * n2: (c + 1) * n2]
            for x in range(n2):
                gr[x] += e * KWc[x]
        put(work, Pr, pv)
        put(work, Pr + Seed.acceleration, pa)
        work[fp + r] += s
        if not rigid_p:
            for x in range(n2):
                if work[moved + x] != 0.0:
                    t = 0.0
                    for c in range(6):
                        t += work[dG + (x * 6 + c) * mp + r] * work[u + c]
                    gr[x] += t
    return -1


@kernel
def _walks(rows, arena, plan, work, scratch, D, nv, i):
    """Eq. 26 for row ``i``: its own block, its columns along ``θ`` and ``θ̇`` against its
    ancestors' rows, its rows against its ancestors' columns. Up the first walk the force ``δu``
    moves to the parent's frame by ``(Γ_o E_℘)*``, the diagonal block of ``𝒯`` (Eq. 25), and
    reaches the parent's rows by the weight ``H_℘ Γ_o*`` (:func:`_seeds`); the second multiplies
    by ``𝒯``'s nonzero blocks only. ``ℳ`` is symmetric: the second walk's block of ``ℳ``
    (``i``'s rows, an ancestor's columns) is also the first walk's, transposed, which it does not take.
    ``∂H f`` and ``∂E* f`` are left out in the columns where ``∂H`` or ``∂E`` is zero
    (:data:`Nonzero`). The own block's products run along rows of the column blocks (contiguous
    inner loops), a row of ``D`` gaining them by :func:`_add_columns`; up the walks, whose factors
    have six (or twelve) rows, each entry is a sum in registers. Returns −1 (a step of :func:`partials`)."""
    row, pl = rows[i], plan[i]
    m, n = row[Row.NODE_DIM], row[Row.NV]
    x2, x1 = 3 * n, 2 * n  # all columns; those of the first walk (θ, θ̇)
    eo, er, ec, ho = row[Row.E], row[Row.E_ROW], row[Row.E_COLUMN], row[Row.H]
    dof, f, g, dH, dh = pl[Plan.DOF], pl[Plan.F], pl[Plan.G], pl[Plan.DH], pl[Plan.DHINGE]
    nzE, nzH = pl[Plan.NONZERO] + Nonzero.E * x2, pl[Plan.NONZERO] + Nonzero.H * x2
    xv, y = scratch[0: 6 * x2], scratch[6 * x2: 12 * x2]  # columns of i: δu(i), then up its ancestors
    own = scratch[12 * x2: 13 * x2]  # one row of D's block
    for r in range(n):  # own block: H g + ∂H f + the hinge force's partials
        for x in range(x2):
            t = work[dh + x * n + r]
            if work[nzH + x] != 0.0:
                dHx = work[dH + (x * n + r) * m: dH + (x * n + r + 1) * m]
                for k in range(m):
                    t += dHx[k] * work[f + k]
            own[x] = t
        for k in range(m):
            e, gk = arena[ho + r * m + k].real, work[g + k * x2: g + (k + 1) * x2]
            for x in range(x2):
                own[x] += e * gk[x]
        _add_columns(D, dof + r, own, dof, n, nv)
    if x2 == 0 or row[Row.PARENT] < 0:
        return -1
    dE = pl[Plan.DE]
    for c in range(6):  # δu(i) = ∂E* f + E* g
        xc = xv[c * x1: (c + 1) * x1]
        for x in range(x1):
            t = 0.0
            if work[nzE + x] != 0.0:
                for r in range(m):
                    t += work[dE + (x * m + r) * 6 + c] * work[f + r]
            xc[x] = t
        for r in range(m):
            e, gr = arena[eo + r * er + c * ec].real, work[g + r * x2: g + r * x2 + x1]
            for x in range(x1):
                xc[x] += e * gr[x]
    here = i
    while True:
        j = rows[here, Row.PARENT]
        nj, dj = rows[j, Row.NV], plan[j, Plan.DOF]
        HG, T = plan[here, Plan.HGAMMA], plan[here, Plan.T]
        for r in range(nj):  # each entry a sum in registers
            hg = held(work, HG + r * 6, 6)
            for b in range(2):
                for k in range(n):
                    D[dj + r, b * nv + dof + k] += dot(hg, column6(xv, b * n + k, x1))
        if rows[j, Row.PARENT] < 0:
            break
        for c in range(6):  # (Γ_o E_℘)* δu
            tc = column6(work, T + c, Seed.SIZE)
            for x in range(x1):
                y[c * x1 + x] = dot(tc, column6(xv, x, x1))
        for k in range(6 * x1):
            xv[k] = y[k]
        here = j
    if n == 0:
        return -1
    Y, Z = scratch[0: n * 12], scratch[n * 12: 2 * n * 12]  # rows of i, columns of its ancestors
    P = pl[Plan.P]
    for r in range(n):  # Y = H 𝒫, a row in registers
        yv, ya = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        for k in range(m):
            e, Pk = arena[ho + r * m + k].real, P + k * Seed.SIZE
            yv, ya = axpy(yv, e, held(work, Pk, 6)), axpy(ya, e, held(work, Pk + Seed.acceleration, 6))
        put(Y, r * Seed.SIZE, yv)
        put(Y, r * Seed.SIZE + Seed.acceleration, ya)
    l = i
    while True:
        j = rows[l, Row.PARENT]
        nj = rows[j, Row.NV]
        x3, dj = 3 * nj, plan[j, Plan.DOF]
        W, T = plan[l, Plan.W], plan[l, Plan.T]
        for r in range(n):  # a row of D's block of an ancestor: Y w, each entry a sum in registers
            yv, ya = held(Y, r * Seed.SIZE, 6), held(Y, r * Seed.SIZE + Seed.acceleration, 6)
            for b in range(3):
                for k in range(nj):
                    x = W + b * nj + k
                    e = dot(yv, column6(work, x, x3)) + dot(ya, column6(work, x + Seed.acceleration * x3, x3))
                    D[dof + r, b * nv + dj + k] += e
                    if b == 2:  # ℳ's block, transposed
                        D[dj + k, 2 * nv + dof + r] += e
        if rows[j, Row.PARENT] < 0:
            break
        ta = T + Seed.acceleration * Seed.SIZE
        for r in range(n):  # [Y_v Y_a] 𝒯 = [Y_v ΓE + Y_a (ΓA + G)   Y_a ΓE]
            ya = r * Seed.SIZE + Seed.acceleration
            for c in range(6):
                s, t = 0.0, 0.0
                for k in range(6):
                    e, a = work[T + k * Seed.SIZE + c], Y[ya + k]
                    s += Y[r * Seed.SIZE + k] * e + a * work[ta + k * Seed.SIZE + c]
                    t += a * e
                Z[r * Seed.SIZE + c] = s
                Z[ya + c] = t
        for k in range(n * Seed.SIZE):
            Y[k] = Z[k]
        l = j
    return -1


@register
def _add_columns(D, r, values, dof, n, nv):
    """``D[r]`` gains a body's ``3 n`` column values (its ``θ``, ``θ̇``, ``θ̈`` columns, each block
    of ``n`` at ``dof`` in its third of ``D``)."""
    for b in range(3):
        for x in range(n):
            D[r, b * nv + dof + x] += values[b * n + x]

"""Rollouts of a rigid tree with the states innermost: the trajectories of a batch stepped in blocks
of :data:`~sko.engine.lanes.LANES`, each stage's ``θ̈`` of a block's trajectories evaluated at once
by :func:`sko.engine.lanes.block` (SKO.md §8, §11, Algorithm 6.1 on a vector register of states).

Where :func:`sko.engine.lanes.applies` (every body a library rigid body), this kernel steps the
trajectories of :func:`sko.simulation.rollout.rollout` instead of the per-state kernel of
:mod:`sko.engine.rollout`, with the same integrators, coordinate maps and statuses: RK4 (``T``
held over a step) or semi-implicit Euler, ``q̇ = Q(q) θ̇`` and the projection onto the
configuration manifold by the same :data:`~sko.engine.rollout.Maps` table, run per state by
:mod:`sko.engine.rollout`'s own kernels (``_qdot``, ``_normalize``). Each stage gathers the stage
states of a block's running trajectories into small ``LANES × nq`` and ``LANES × nv`` arrays,
calls :func:`~sko.engine.lanes.block` once on them, and carries on per lane; a lane whose
trajectory stopped (or a block's missing tail) computes on a copy of a running lane's stage state
and its result is dropped. A trajectory equals its per-state rollout to rounding (the lanes'
``θ̈`` equals a one-state call's to rounding, not bit for bit: :mod:`sko.engine.lanes`).

A trajectory whose dynamics reject a stage state, whose ``θ̈`` or step is not finite, or whose
coordinate map fails stops as in :func:`sko.engine.rollout.rollout`: ``failed`` is the step,
``status`` the per-state path's code, its later entries NaN; the others of its block go on.
Blocks run in parallel in chunks of :data:`CHUNK`, each chunk on its own copy
of the request vector and lane buffers. The parallel driver calls the kernel of a chunk at its
address (:func:`~sko.engine.jit.native_caller`), as :mod:`sko.engine.lanes` does, and a chunk
calls a block's ``θ̈`` (:func:`_block`) and the coordinate maps at theirs: the machine code of the
passes and of the joints' maps is generated once, not again inside each caller's (a called
kernel's code is otherwise linked into its caller's and compiled with it).
"""

from __future__ import annotations

import numpy as np
from numba import prange, types

from sko.engine import rollout as CR
from sko.engine.borrow import borrowed
from sko.engine.jit import kernel, native_address, native_caller, register
from sko.engine.lanes import LANES, block, borrowed_buffers, buffers
from sko.engine.request_views import Header

__all__ = ["rollout", "RAISED", "CHUNK"]

CHUNK = 4  #: blocks of trajectories per task of a parallel rollout

#: the status of the trajectories of a chunk that raised (no memory for its buffers)
RAISED = -5


def rollout(w, maps, packed, tau, dt: float, rk4: bool, Q, V, failed, status, sizes) -> None:
    """:func:`sko.engine.rollout.rollout` in blocks of :data:`~sko.engine.lanes.LANES`
    trajectories (module docstring), with the same arguments: ``w`` the ``forward_dynamics``
    request vector (float64; :func:`~sko.engine.lanes.block` fills its arena), ``maps`` and
    ``packed`` the coordinate runs, ``tau`` (B × steps × nv, or B × 0 × nv for none), ``Q``
    (B × (steps + 1) × nq) and ``V`` with the initial states in ``[:, 0]``, into ``failed`` and
    ``status`` (B); ``sizes``: the lane buffers' sizes (:meth:`~sko.engine.dispatch.Engine._lanes`).
    All arrays C-ordered, float64 or int64. Raises MemoryError when a chunk found no memory for
    its buffers."""
    _rollout(w, maps, packed, tau, np.float64(dt), bool(rk4), Q, V, failed, status, sizes, _addresses())
    if (status == RAISED).any():
        raise MemoryError("rollout: the compiled code of a chunk of trajectories raised (no memory for its buffers)")


_F1, _F2, _F3 = (types.Array(types.float64, d, "C") for d in (1, 2, 3))
_I1, _I2 = types.Array(types.int64, 1, "C"), types.Array(types.int64, 2, "C")
#: the argument types :func:`_chunk` is compiled for
_CHUNK_TYPES = (_F1, _I2, _F1, _F3, types.float64, types.boolean, _F3, _F3, _I1, _I1, _I1, types.int64, _I1)
#: the argument types :func:`_block` is compiled for, but the lane buffers' (``None``: the
#: tuple :func:`~sko.engine.lanes.buffers` makes)
_BLOCK_TYPES = (_F1, None, _F2, _F2, _F2, _F2, _I1, types.int64, types.int64)
#: the argument types of the coordinate maps, ``_qdot(maps, packed, reals, q, v, out)`` and
#: ``_normalize(maps, packed, reals, q)`` of :mod:`sko.engine.rollout`
_QDOT_TYPES = (_I2, _F1, _F1, _F1, _F1, _F1)
_NORMALIZE_TYPES = _QDOT_TYPES[:4]


def _addresses() -> np.ndarray:
    """The addresses of :func:`_chunk`, :func:`_block` and the coordinate maps (compiled or
    loaded on first use; numba's dispatchers keep them). :func:`_block` takes the lane buffers
    of the type :func:`~sko.engine.lanes.buffers` returns (:func:`_buffers`)."""
    _buffers.compile((_F1, _I1))
    work = _buffers.overloads[(_F1, _I1)].signature.return_type
    return np.array([native_address(_chunk, _CHUNK_TYPES),
                     native_address(_block, (*_BLOCK_TYPES[:1], work, *_BLOCK_TYPES[2:])),
                     native_address(CR._qdot, _QDOT_TYPES), native_address(CR._normalize, _NORMALIZE_TYPES)],
                    dtype=np.int64)


def _caller(argtypes: tuple, failed: int):
    """A call of the kernel compiled for ``argtypes`` (``None``: any tuple there) at its
    address: its int64 result, or ``failed`` when it raised."""

    def accepts(given: tuple) -> bool:
        return len(given) == len(argtypes) and all(
            g == a or (a is None and isinstance(g, types.BaseTuple)) for g, a in zip(given, argtypes))

    return native_caller(types.int64, failed, accepts)


#: the kernels of a chunk at their addresses (:func:`_addresses`): the driver's call of a chunk,
#: and a chunk's calls of a block's ``θ̈`` and of the coordinate maps, so that none of their machine
#: code (the passes, the joints' maps) is generated again inside their callers'
_call_chunk, _call_block = _caller(_CHUNK_TYPES, RAISED), _caller(_BLOCK_TYPES, RAISED)
_call_qdot, _call_normalize = _caller(_QDOT_TYPES, RAISED), _caller(_NORMALIZE_TYPES, RAISED)
#: the rows of :func:`_addresses`
_CHUNK, _BLOCK, _QDOT, _NORMALIZE = 0, 1, 2, 3


@kernel(entry=True, parallel=True)
def _rollout(w, maps, packed, tau, dt, rk4, Q, V, failed, status, sizes, addresses):
    """:func:`rollout`: each chunk of :data:`CHUNK` blocks a task of numba's
    threads; the trajectories of a chunk that raised get :data:`RAISED`."""
    B = Q.shape[0]
    blocks = (B + LANES - 1) // LANES
    for c in prange((blocks + CHUNK - 1) // CHUNK):
        if _call_chunk(addresses[_CHUNK], (w, maps, packed, tau, dt, rk4, Q, V, failed, status, sizes, np.int64(c),
                                           addresses)) != -1:
            for s in range(c * CHUNK * LANES, min(B, (c + 1) * CHUNK * LANES)):
                failed[s], status[s] = 0, RAISED


@kernel
def _buffers(local, sizes):
    """:func:`~sko.engine.lanes.buffers`, compiled for the type of its tuple."""
    return buffers(local, sizes)


@kernel
def _block(local, work, sq, sv, x, out, st, first, count):
    """:func:`~sko.engine.lanes.block` as a kernel of its own, called at its address, on its
    arguments borrowed (no reference counted in the block's loops). Returns −1."""
    local, sq, sv, x, out, st = borrowed(local), borrowed(sq), borrowed(sv), borrowed(x), borrowed(out), borrowed(st)
    block(local, borrowed_buffers(work), sq, sv, x, out, st, first, count)
    return -1


@register
def _accelerations(address, local, work, sq, sv, x, out, st, playing, count):
    """``θ̈`` of the stage states ``sq``, ``sv`` (``LANES × nq``, ``LANES × nv``; hinge forces
    ``x``) of the lanes ``playing`` into the rows of ``out``, their statuses into ``st``, by one
    :func:`~sko.engine.lanes.block` of ``count`` lanes (:func:`_block` at ``address``): a lane not
    playing first takes a copy of a playing lane's stage (its result is dropped)."""
    a = -1
    for l in range(count):
        if playing[l]:
            a = l
            break
    if a < 0:
        return
    for l in range(count):
        if not playing[l]:
            for j in range(sq.shape[1]):
                sq[l, j] = sq[a, j]
            for j in range(sv.shape[1]):
                sv[l, j], x[l, j] = sv[a, j], x[a, j]
    if _call_block(address, (local, work, sq, sv, x, out, st, np.int64(0), np.int64(count))) != -1:
        for l in range(count):
            st[l] = RAISED


@kernel
def _chunk(w, maps, packed, tau, dt, rk4, Q, V, failed, status, sizes, c, addresses):
    """The blocks of chunk ``c`` of :func:`rollout`, one after the other, each through every step,
    on the chunk's own copy of ``w`` and lane buffers. A step does what
    :func:`sko.engine.rollout._step` does for one state, stage by stage over the lanes whose
    trajectory still runs (``code`` −1). Returns −1."""
    w, maps, packed, tau, Q, V, failed, status = (borrowed(w), borrowed(maps), borrowed(packed), borrowed(tau),
                                                  borrowed(Q), borrowed(V), borrowed(failed), borrowed(status))
    B, steps, nq, nv = Q.shape[0], Q.shape[1] - 1, Q.shape[2], V.shape[2]
    local = w.copy()
    work = buffers(local, sizes)
    words = local.view(np.int64)
    reals = local.view(np.float64)[words[Header.REALS]: words[Header.REALS_END]]
    sq, sv, x = np.empty((LANES, nq)), np.empty((LANES, nv)), np.zeros((LANES, nv))
    kq, kv = np.empty((4, LANES, nq)), np.empty((4, LANES, nv))
    st, code, playing = np.empty(LANES, dtype=np.int64), np.empty(LANES, dtype=np.int64), np.empty(LANES, np.bool_)
    for b in range(c * CHUNK, min((B + LANES - 1) // LANES, c * CHUNK + CHUNK)):
        first, count = b * LANES, min(LANES, B - b * LANES)
        for l in range(count):
            failed[first + l], status[first + l] = -1, -1
        for i in range(steps):
            running = False
            for l in range(count):
                s = first + l
                code[l] = -1
                playing[l] = failed[s] < 0
                running = running or playing[l]
                if playing[l]:
                    for j in range(nv):
                        x[l, j] = tau[s, i, j] if tau.shape[1] > 0 else 0.0
            if not running:
                break
            for stage in range(4 if rk4 else 1):  # θ̈ of each stage over the block, once
                h = dt if stage == 3 else 0.5 * dt
                for l in range(count):
                    if not playing[l]:
                        continue
                    s = first + l
                    for j in range(nq):
                        sq[l, j] = Q[s, i, j] if stage == 0 else Q[s, i, j] + h * kq[stage - 1, l, j]
                    for j in range(nv):
                        sv[l, j] = V[s, i, j] if stage == 0 else V[s, i, j] + h * kv[stage - 1, l, j]
                    if rk4:  # q̇ at each stage (Euler's: at the new θ̇, below)
                        code[l] = _call_qdot(addresses[_QDOT], (maps, packed, reals, sq[l], sv[l], kq[stage, l]))
                        playing[l] = code[l] == -1
                _accelerations(addresses[_BLOCK], local, work, sq, sv, x, kv[stage], st, playing, count)
                for l in range(count):
                    if playing[l] and st[l] != -1:
                        code[l], playing[l] = st[l], False
            for l in range(count):
                if not playing[l]:
                    continue
                s = first + l
                q, v, qn, vn = Q[s, i], V[s, i], Q[s, i + 1], V[s, i + 1]
                if rk4:
                    for j in range(nq):
                        qn[j] = q[j] + dt / 6 * (kq[0, l, j] + 2 * kq[1, l, j] + 2 * kq[2, l, j] + kq[3, l, j])
                    for j in range(nv):
                        vn[j] = v[j] + dt / 6 * (kv[0, l, j] + 2 * kv[1, l, j] + 2 * kv[2, l, j] + kv[3, l, j])
                else:  # θ̇ ← θ̇ + dt θ̈, then q ← q + dt Q(q) θ̇
                    for j in range(nv):
                        vn[j] = v[j] + dt * kv[0, l, j]
                    code[l] = _call_qdot(addresses[_QDOT], (maps, packed, reals, q, vn, kq[0, l]))
                    if code[l] != -1:
                        continue
                    for j in range(nq):
                        qn[j] = q[j] + dt * kq[0, l, j]
                code[l] = _call_normalize(addresses[_NORMALIZE], (maps, packed, reals, qn))
            for l in range(count):
                s = first + l
                if failed[s] >= 0:
                    continue
                if code[l] == -1:
                    for j in range(nq):
                        if not np.isfinite(Q[s, i + 1, j]):
                            code[l] = -3
                    for j in range(nv):
                        if not np.isfinite(V[s, i + 1, j]):
                            code[l] = -3
                if code[l] != -1:
                    failed[s], status[s] = i, code[l]
                    for k in range(i + 1, steps + 1):
                        for j in range(nq):
                            Q[s, k, j] = np.nan
                        for j in range(nv):
                            V[s, k, j] = np.nan
    return -1

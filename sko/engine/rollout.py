"""Rollouts in compiled code: many trajectories of one system stepped together, in parallel over
chunks of states, with no Python per state or per step (:func:`~sko.simulation.rollout.rollout`).

Each step calls the forward dynamics request kernel (:mod:`sko.engine.requests`) through its
address on the chunk's own copy of the request vector, as a batch does. ``q̇ = Q(q) θ̇`` and the
projection onto the configuration manifold run from a table of coordinate runs, :data:`Maps`:
entries copied from ``θ̇`` (``COPY``: every joint with ``q̇ = θ̇``, a flexible body's
deformations), and the joints with a ``q̇`` map (``RATE``) or a projection (``PROJECT``) of their
own, each run by its joint type's declared function
(:func:`~sko.engine.joints.joint_qdot_at`, :func:`~sko.engine.joints.joint_normalize_at`:
the library's inlined, any other joint type's through its address) on its :data:`Packed` record
in ``packed`` at the row's ``P`` — the functions the joints' Python ``_qdot`` and ``normalize``
equal — and body types with their own map, given as compiled hooks (``HOOK``:
:mod:`sko.engine.hooks`), called through their addresses with the body's constants. A joint's
map or a hook that fails (returns False, raises, writes a value that is not finite) stops the
rollout with a status :func:`failed_map` decodes (the caller names the joint or the body).
"""

from __future__ import annotations

import numpy as np
from numba import prange

from sko.engine.borrow import borrowed
from sko.engine.fields import columns
from sko.engine.jit import call_request, call_state, kernel
from sko.engine.joints import joint_normalize_at, joint_qdot_at
from sko.engine.requests import CHUNK, Header

__all__ = ["Maps", "COPY", "RATE", "PROJECT", "HOOK", "failed_map", "rollout"]

#: One run of coordinates: its kind, where it starts in ``q`` and in ``θ̇``, how many ``q``
#: entries; for a joint's run its joint code and where its
#: :data:`~sko.engine.joints.Packed` record starts in ``packed``; for a ``HOOK`` run its
#: ``θ̇`` entries, the addresses of the body's ``q̇`` map and normalisation (0: ``q̇ = θ̇``,
#: none), where its constants are in the request vector's ``reals`` and how many, and its row in
#: the state table.
Maps = columns("Maps", "KIND", "Q", "V", "N", "CODE", "P", "NV", "QDOT", "NORMALIZE", "CONSTANTS", "CONSTANTS_SIZE",
               "BODY")
COPY, RATE, PROJECT, HOOK = 0, 1, 2, 3
#: the status of a rollout stopped by the map of a ``RATE``, ``PROJECT`` or ``HOOK`` run ``r``:
#: ``_MAP_FAILED − 2 r`` (its ``q̇`` map), ``_MAP_FAILED − 2 r − 1`` (its normalisation)
_MAP_FAILED = -10


def failed_map(status: int) -> tuple[int, bool] | None:
    """``(run, normalize)`` of the joint's map or hook that stopped a rollout with ``status``,
    else None."""
    if status > _MAP_FAILED:
        return None
    return (_MAP_FAILED - status) // 2, bool((_MAP_FAILED - status) % 2)


@kernel
def _hook(maps, r, reals, q, v, out, normalize) -> bool:
    """The ``q̇`` map (into ``out``) or the normalisation (of ``q``, in place) of the body type of
    the ``HOOK`` run ``r``: False when the hook failed (module docstring)."""
    a, b, n, nv = maps[r, Maps.Q], maps[r, Maps.V], maps[r, Maps.N], maps[r, Maps.NV]
    c = reals[maps[r, Maps.CONSTANTS]: maps[r, Maps.CONSTANTS] + maps[r, Maps.CONSTANTS_SIZE]]
    if normalize:
        if maps[r, Maps.NORMALIZE] == 0:
            return True
        x = q[a: a + n]
        if not call_state(maps[r, Maps.NORMALIZE], (x, c)):
            return False
    else:
        x = out[a: a + n]
        if maps[r, Maps.QDOT] == 0:
            for i in range(n):
                x[i] = v[b + i]
            return True
        if not call_state(maps[r, Maps.QDOT], (q[a: a + n], v[b: b + nv], c, x)):
            return False
    for i in range(n):
        if not np.isfinite(x[i]):
            return False
    return True


@kernel
def _qdot(maps, packed, reals, q, v, out):
    """``out = Q(q) θ̇`` (module docstring): −1, or the status of the joint's map or hook that
    failed."""
    for r in range(maps.shape[0]):
        kind, a, b = maps[r, Maps.KIND], maps[r, Maps.Q], maps[r, Maps.V]
        if kind == COPY:
            for i in range(maps[r, Maps.N]):
                out[a + i] = v[b + i]
        elif kind == RATE:
            if not joint_qdot_at(maps[r, Maps.CODE], packed, maps[r, Maps.P], q, a, v, b, out, a):
                return _MAP_FAILED - 2 * r
        elif kind == HOOK:
            if not _hook(maps, r, reals, q, v, out, False):
                return _MAP_FAILED - 2 * r
    return -1


@kernel
def _normalize(maps, packed, reals, q):
    """The joints' projections, in place, and the hooks': −1, or the status of the one that
    failed."""
    for r in range(maps.shape[0]):
        kind, a = maps[r, Maps.KIND], maps[r, Maps.Q]
        if kind == PROJECT:
            if not joint_normalize_at(maps[r, Maps.CODE], packed, maps[r, Maps.P], q, a):
                return _MAP_FAILED - 2 * r - 1
        elif kind == HOOK:
            if not _hook(maps, r, reals, q, q, q, True):
                return _MAP_FAILED - 2 * r - 1
    return -1


@kernel
def _acceleration(local, q, v, tau, out):
    """``θ̈ = FD(q, θ̇, T)`` into ``out`` by the forward dynamics request of ``local``: its status."""
    words = local.view(np.int64)
    arena = local[words[Header.WORKSPACE]:]
    for i in range(q.shape[0]):
        arena[words[Header.Q] + i] = q[i]
    for i in range(v.shape[0]):
        arena[words[Header.V] + i] = v[i]
        out[i] = 0.0
    status = call_request(words[Header.KERNEL], (local, tau, out))
    if not 0 <= status < words[Header.N]:
        words[Header.WRITTEN] = 1
    if status == -1:
        for x in out:
            if not np.isfinite(x):
                return -3
    return status


@kernel
def _step(local, maps, packed, q, v, tau, dt, rk4, qn, vn, k, t):
    """One step from ``(q, θ̇)`` into ``(qn, vn)``: RK4 (``rk4``; ``T`` held over the step) or
    semi-implicit Euler (``θ̇ ← θ̇ + dt θ̈``, then ``q ← q + dt Q(q) θ̇``); ``k`` holds 4
    ``(q̇, θ̈)`` pairs, ``t`` a stage's ``(q, θ̇)``. Returns the status of the dynamics, or of a
    joint's map or hook that failed."""
    nq, nv = q.shape[0], v.shape[0]
    words = local.view(np.int64)
    reals = local.view(np.float64)[words[Header.REALS]: words[Header.REALS_END]]
    if not rk4:
        status = _acceleration(local, q, v, tau, k[nq: nq + nv])
        if status != -1:
            return status
        for i in range(nv):
            vn[i] = v[i] + dt * k[nq + i]
        status = _qdot(maps, packed, reals, q, vn, k[:nq])
        if status != -1:
            return status
        for i in range(nq):
            qn[i] = q[i] + dt * k[i]
        return _normalize(maps, packed, reals, qn)
    m = nq + nv
    for stage in range(4):
        kq, kv = k[stage * m: stage * m + nq], k[stage * m + nq: (stage + 1) * m]
        sq, sv = t[:nq], t[nq: m]
        if stage == 0:
            for i in range(nq):
                sq[i] = q[i]
            for i in range(nv):
                sv[i] = v[i]
        else:
            h = dt if stage == 3 else 0.5 * dt
            pq, pv = k[(stage - 1) * m: (stage - 1) * m + nq], k[(stage - 1) * m + nq: stage * m]
            for i in range(nq):
                sq[i] = q[i] + h * pq[i]
            for i in range(nv):
                sv[i] = v[i] + h * pv[i]
        status = _qdot(maps, packed, reals, sq, sv, kq)
        if status != -1:
            return status
        status = _acceleration(local, sq, sv, tau, kv)
        if status != -1:
            return status
    for i in range(nq):
        qn[i] = q[i] + dt / 6 * (k[i] + 2 * k[m + i] + 2 * k[2 * m + i] + k[3 * m + i])
    for i in range(nv):
        j = nq + i
        vn[i] = v[i] + dt / 6 * (k[j] + 2 * k[m + j] + 2 * k[2 * m + j] + k[3 * m + j])
    return _normalize(maps, packed, reals, qn)


@kernel(entry=True, parallel=True)
def rollout(w, maps, packed, tau, dt, rk4, Q, V, failed, status):
    """Step every rollout ``s`` from ``(Q[s, 0], V[s, 0])`` through ``Q.shape[1] − 1`` steps into
    ``Q[s]``, ``V[s]``, with ``T = tau[s, i]`` over step ``i`` (``tau`` B × steps × nv, or
    B × 0 × nv for none). A rollout whose dynamics reject a state or overflow stops: ``failed[s]``
    is the step it failed in (−1 for none) and ``status[s]`` the request's status; the others
    go on. Chunks of :data:`~sko.engine.requests.CHUNK` rollouts run in parallel, each on its
    own copy of the request vector ``w``; ``maps`` and ``packed``: the coordinate runs (module
    docstring)."""
    packed = borrowed(packed)
    w, maps, tau, Q, V, failed, status = (borrowed(w), borrowed(maps), borrowed(tau), borrowed(Q), borrowed(V),
                                          borrowed(failed), borrowed(status))
    B, steps, nq, nv = Q.shape[0], Q.shape[1] - 1, Q.shape[2], V.shape[2]
    for c in prange((B + CHUNK - 1) // CHUNK):
        local = w.copy()
        k = np.empty(4 * (nq + nv), dtype=Q.dtype)
        t = np.empty(nq + nv, dtype=Q.dtype)
        zero = np.zeros(nv, dtype=Q.dtype)
        for s in range(c * CHUNK, min(B, c * CHUNK + CHUNK)):
            failed[s], status[s] = -1, -1
            for i in range(steps):
                x = tau[s, i] if tau.shape[1] > 0 else zero
                code = _step(local, maps, packed, Q[s, i], V[s, i], x, dt, rk4, Q[s, i + 1], V[s, i + 1], k, t)
                if code == -1:
                    for j in range(nq):
                        if not np.isfinite(Q[s, i + 1, j]):
                            code = -3
                    for j in range(nv):
                        if not np.isfinite(V[s, i + 1, j]):
                            code = -3
                if code != -1:
                    failed[s], status[s] = i, code
                    Q[s, i + 1:] = np.nan
                    V[s, i + 1:] = np.nan
                    break

"""The compiled path of a system's dynamics: one numba call per request, state building included.

A request is one of :data:`INVERSE_DYNAMICS` (``T = ℳ θ̈ + 𝒞``; bias and gravity forces with
``θ̈ = 0``), :data:`FORWARD_DYNAMICS` (``θ̈ = ℳ^{-1}(T − 𝒞)``), :data:`MASS_MATRIX` (``ℳ``) and
:data:`MASS_MATRIX_INVERSE` (``ℳ^{-1}``). :func:`evaluate_one` builds the SKO model at the state
into the arena of :mod:`sko.systems.state_layout` (unless the caller filled it, for systems with
body types that only have a Python state) and runs the recursions of
:mod:`sko.systems.compiled_recursions` on it. :func:`evaluate_batch` does the same for ``B``
states, parallel over chunks of :data:`CHUNK` states with numba's threads (``NUMBA_NUM_THREADS``
sets how many). Results are 2-D per state: ``(1, nv)`` for vectors, ``(nv, nv)`` for matrices.

``status`` (the second result) is ``-1``, or ``k`` for a state a joint of body ``k`` rejects (a
zero quaternion), or ``N + k`` when ``D(k)`` is not positive definite.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from sko.bodies.compiled_state import NV, library_state
from sko.systems.compiled_recursions import articulated_body, composite_mass_matrix, newton_euler, riccati, sizes

__all__ = ["INVERSE_DYNAMICS", "FORWARD_DYNAMICS", "MASS_MATRIX", "MASS_MATRIX_INVERSE", "CHUNK", "evaluate_one",
           "evaluate_batch"]

INVERSE_DYNAMICS, FORWARD_DYNAMICS, MASS_MATRIX, MASS_MATRIX_INVERSE = range(4)
CHUNK = 16  #: states per task of a parallel batch


@njit(cache=True)
def _request(op, ints, reals, order, q, qd, x, a, fill, work, w, Dinv, t, out) -> int:
    """One state: fill the arena row ``a`` (when ``fill``) and answer request ``op`` into ``out``."""
    if fill:
        for k in order:
            if not library_state(ints, reals, k, q, qd, a, work):
                return k
    if op == INVERSE_DYNAMICS:
        newton_euler(ints, order, a, x, w, out[0])
        return -1
    if op == MASS_MATRIX:
        composite_mass_matrix(ints, order, a, w, t, out)
        return -1
    bad = riccati(ints, order, a, w, Dinv, t)
    if bad >= 0:
        return ints.shape[0] + bad
    if op == FORWARD_DYNAMICS:
        articulated_body(ints, order, a, x, w, Dinv, t, True, out[0])
        return -1
    # ℳ^{-1}: the articulated passes with a = b = 0 on the columns of the identity (symmetric)
    nv = out.shape[0]
    e = np.zeros(nv, dtype=a.dtype)
    for c in range(nv):
        e[c] = 1
        articulated_body(ints, order, a, e, w, Dinv, t, False, out[c])
        e[c] = 0
    return -1


@njit(cache=True)
def _scratch(ints, size, dtype):
    mm, nn = sizes(ints)
    work = (np.empty((6, 6), dtype), np.empty((6, 6), dtype), np.empty(6, dtype), np.empty((6, 6), dtype),
            np.empty(64, dtype))
    nv = 0
    for k in range(ints.shape[0]):
        nv += ints[k, NV]
    return work, np.zeros(size, dtype), np.zeros((nv, nn), dtype), np.zeros(2 * max(mm, nn) ** 2 + 2 * nn, dtype), nv


@njit(cache=True)
def _finite(x) -> bool:
    for v in x:
        if not np.isfinite(v):
            return False
    return True


@njit(cache=True)
def evaluate_one(op, ints, reals, order, q, qd, x, a, fill):
    """Request ``op`` at one state (module docstring); ``a`` is the arena row (filled here when
    ``fill``). Returns ``(result, status)``; status ``-2`` when an input is not finite (nothing
    is computed: the caller reports it as the reference path does)."""
    work, w, Dinv, t, nv = _scratch(ints, a.shape[0], a.dtype)
    rows = 1 if op <= FORWARD_DYNAMICS else nv
    out = np.zeros((rows, nv), dtype=a.dtype)
    if not (_finite(q) and _finite(qd) and _finite(x)):
        return out, -2
    status = _request(op, ints, reals, order, q, qd, x, a, fill, work, w, Dinv, t, out)
    return out, status


@njit(cache=True, parallel=True)
def evaluate_batch(op, ints, reals, order, Q, QD, X, A, fill):
    """Request ``op`` at every state of a batch: ``Q`` (B × nq), ``QD`` (B × nv), ``X`` (B × nv,
    or B × 0), ``A`` the filled arenas (B × L), or with ``fill`` a 1 × L array whose size and
    type the per-chunk arena takes. Returns ``(results (B × rows × nv), status (B,))``."""
    B, size = Q.shape[0], A.shape[1]
    _, _, _, _, nv = _scratch(ints, 0, A.dtype)
    rows = 1 if op <= FORWARD_DYNAMICS else nv
    out = np.zeros((B, rows, nv), dtype=A.dtype)
    status = np.full(B, -1, dtype=np.int64)
    chunks = (B + CHUNK - 1) // CHUNK
    for c in prange(chunks):
        work, w, Dinv, t, _ = _scratch(ints, size, A.dtype)
        own = np.empty(size if fill else 0, dtype=A.dtype)
        for s in range(c * CHUNK, min(B, (c + 1) * CHUNK)):
            a = own if fill else A[s]
            status[s] = _request(op, ints, reals, order, Q[s], QD[s], X[s], a, fill, work, w, Dinv, t, out[s])
    return out, status

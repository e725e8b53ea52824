"""The compiled path of a system's dynamics: one numba call per request, state building included.

A request is one of :data:`INVERSE_DYNAMICS` (``T = ℳ θ̈ + 𝒞``; bias and gravity forces with
``θ̈ = 0``), :data:`FORWARD_DYNAMICS` (``θ̈ = ℳ^{-1}(T − 𝒞)``), :data:`MASS_MATRIX` (``ℳ``) and
:data:`MASS_MATRIX_INVERSE` (``ℳ^{-1}``). :func:`evaluate_one` builds the SKO model at the state
into the arena of :mod:`sko.systems.state_layout` (unless the caller filled it, for systems with
body types that only have a Python state) and runs the model kernels of
:mod:`sko.algorithms.compiled.kernels` on the arena's flat data (its first entries are the flat
model's data buffer; ``layout`` and ``roff`` are the flat layout and its Riccati offsets). :func:`evaluate_batch` does the same for ``B``
states, parallel over chunks of :data:`CHUNK` states with numba's threads (``NUMBA_NUM_THREADS``
sets how many). Results are 2-D per state: ``(1, nv)`` for vectors, ``(nv, nv)`` for matrices.

``status`` (the second result) is ``-1``, or ``k`` for a state a joint of body ``k`` rejects (a
zero quaternion), or ``N + k`` when ``D(k)`` is not positive definite.

The state kernels are those of :func:`sko.bodies.compiled_state.library_state` (rigid bodies,
rotor links, flexible bodies, clusters of coupled rigid bodies). numba's on-disk cache of this
module does not notice a change there: a new kernel needs a change here as well (or a cleared
cache), or the cached requests keep the old dispatch.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from sko.algorithms.compiled import kernels as K
from sko.algorithms.compiled.flat import BODY
from sko.bodies.compiled_state import DIM, NV, library_state

__all__ = ["INVERSE_DYNAMICS", "FORWARD_DYNAMICS", "MASS_MATRIX", "MASS_MATRIX_INVERSE", "CHUNK", "evaluate_one",
           "evaluate_batch"]

INVERSE_DYNAMICS, FORWARD_DYNAMICS, MASS_MATRIX, MASS_MATRIX_INVERSE = range(4)
CHUNK = 16  #: states per task of a parallel batch


@njit(cache=True)
def _request(op, ints, reals, order, layout, roff, q, qd, x, a, fill, work, s, out) -> int:
    """One state: fill the arena row ``a`` (when ``fill``) and answer request ``op`` into ``out``
    with the model kernels of :mod:`sko.algorithms.compiled.kernels` on the arena's flat data."""
    if fill:
        for k in order:
            if not library_state(ints, reals, k, q, qd, a, work):
                return k
    nodes, T, R, X, Y, r, rs, z, eye = s
    nv = T.shape[0]
    if op == INVERSE_DYNAMICS:
        nodes[:] = 0
        T[:] = 0
        K.newton_euler(layout, a, x if x.shape[0] == nv else T, T, nodes, out[0], False)
        return -1
    if op == MASS_MATRIX:
        K.composite_inertias(layout, a, R, X)
        out[:, :] = 0
        K.mass_matrix(layout, a, R, out, X, Y)
        return -1
    bad, _ = K.riccati(layout, a, roff, r, rs)
    if bad >= 0:
        return ints.shape[0] + layout[bad, BODY]
    z[:, :] = 0
    if op == FORWARD_DYNAMICS:
        out[:, :] = 0
        K.articulated_body(layout, a, roff, r, x.reshape((nv, 1)), True, z[:, :1], out.T)
        return -1
    # ℳ^{-1}: the articulated passes with a = b = 0 on the columns of the identity (symmetric)
    out[:, :] = 0
    K.articulated_body(layout, a, roff, r, eye, False, z, out)
    return -1


@njit(cache=True)
def _scratch(ints, layout, roff, size, dtype, op):
    """Scratch of one state: the state kernels' and the model kernels' buffers (the articulated
    passes' right-hand sides are ``nv`` columns of the identity for ℳ^{-1} only: one column
    otherwise, so a request stays O(N) in memory and time)."""
    work = (np.empty((6, 6), dtype), np.empty((6, 6), dtype), np.empty(6, dtype), np.empty((6, 6), dtype),
            np.empty(64, dtype))
    mm = nn = 1
    nv = ns = 0
    for k in range(ints.shape[0]):
        nv += ints[k, NV]
        ns += ints[k, DIM]
        mm = max(mm, ints[k, DIM])
        nn = max(nn, ints[k, NV])
    rsize = 0
    for j in range(layout.shape[0]):
        rsize = max(rsize, roff[j, 5] + mm * mm, roff[j, 4] + mm * nn)
    s = (np.zeros((3, ns), dtype), np.zeros(nv, dtype), np.zeros(size, dtype), np.zeros(max(mm * mm, mm * nn), dtype),
         np.zeros(max(mm * mm, mm * nn), dtype), np.zeros(rsize, dtype), np.zeros(8 * max(mm, nn) ** 2, dtype),
         np.zeros((ns, nv if op == MASS_MATRIX_INVERSE else 1), dtype),
         np.eye(nv if op == MASS_MATRIX_INVERSE else 1, dtype=dtype))
    return work, s, nv


@njit(cache=True)
def _finite(x) -> bool:
    for v in x:
        if not np.isfinite(v):
            return False
    return True


@njit(cache=True)
def evaluate_one(op, ints, reals, order, layout, roff, q, qd, x, a, fill):
    """Request ``op`` at one state (module docstring); ``a`` is the arena row (filled here when
    ``fill``). Returns ``(result, status)``; status ``-2`` when an input is not finite (nothing
    is computed: the caller reports it as the reference path does), ``-3`` when the result is
    not (an overflow: the caller takes the checked path, which reports it)."""
    work, s, nv = _scratch(ints, layout, roff, a.shape[0], a.dtype, op)
    rows = 1 if op <= FORWARD_DYNAMICS else nv
    out = np.zeros((rows, nv), dtype=a.dtype)
    if not (_finite(q) and _finite(qd) and _finite(x)):
        return out, -2
    status = _request(op, ints, reals, order, layout, roff, q, qd, x, a, fill, work, s, out)
    if status == -1 and not _finite(out.ravel()):
        status = -3
    return out, status


@njit(cache=True, parallel=True)
def evaluate_batch(op, ints, reals, order, layout, roff, Q, QD, X, A, fill):
    """Request ``op`` at every state of a batch: ``Q`` (B × nq), ``QD`` (B × nv), ``X`` (B × nv,
    or B × 0), ``A`` the filled arenas (B × L), or with ``fill`` a 1 × L array whose size and
    type the per-chunk arena takes. Returns ``(results (B × rows × nv), status (B,))``."""
    B, size = Q.shape[0], A.shape[1]
    nv = QD.shape[1]
    rows = 1 if op <= FORWARD_DYNAMICS else nv
    out = np.zeros((B, rows, nv), dtype=A.dtype)
    status = np.full(B, -1, dtype=np.int64)
    chunks = (B + CHUNK - 1) // CHUNK
    for c in prange(chunks):
        work, scratch, _ = _scratch(ints, layout, roff, size, A.dtype, op)
        own = np.empty(size if fill else 0, dtype=A.dtype)
        for s in range(c * CHUNK, min(B, (c + 1) * CHUNK)):
            a = own if fill else A[s]
            status[s] = _request(op, ints, reals, order, layout, roff, Q[s], QD[s], X[s], a, fill, work, scratch, out[s])
    return out, status

"""The compiled path of a system's dynamics: one numba call per request, state building included.

A request is one of :data:`INVERSE_DYNAMICS` (``T = ℳ θ̈ + 𝒞``; bias and gravity forces with
``θ̈ = 0``), :data:`FORWARD_DYNAMICS` (``θ̈ = ℳ^{-1}(T − 𝒞)``), :data:`MASS_MATRIX` (``ℳ``) and
:data:`MASS_MATRIX_INVERSE` (``ℳ^{-1}``). :func:`evaluate_one` builds the SKO model at the state
into the arena of :mod:`sko.systems.state_layout` (unless the caller filled it, for systems with
body types that only have a Python state) and runs the model kernels of
:mod:`sko.algorithms.compiled.kernels` on the arena's flat data (its first entries are the flat
model's data buffer). :func:`evaluate_batch` does the same for ``B`` states, parallel over
chunks of :data:`CHUNK` states with numba's threads (``NUMBA_NUM_THREADS`` sets how many).
Results are 2-D per state: ``(1, nv)`` for vectors, ``(nv, nv)`` for matrices.

A call passes few arrays (numba's call overhead grows with each one): the system's integer
tables packed into one vector by :func:`pack_tables` (a header of sizes, then the body table
``ints``, the scatter ``order``, the flat ``layout`` and its Riccati offsets ``roff``), the
constants ``reals``, the state and one *workspace* vector holding the arena and every scratch
buffer of the request (:func:`workspace_size` entries, carved by :func:`_workspace`; O(N) but
for ℳ^{-1}, whose passes run on the ``nv`` columns of the identity). A caller keeps a workspace
per request and scalar type and passes it again: nothing is allocated per call but the result.

``status`` (the second result) is ``-1``, or ``k`` for a state a joint of body ``k`` rejects (a
zero quaternion), or ``N + k`` when ``D(k)`` is not positive definite.

The state kernels are those of :func:`sko.bodies.compiled_state.library_state` (rigid bodies,
rotor links, flexible bodies, clusters of coupled rigid bodies). numba's on-disk cache of this
module would not notice a change there; :mod:`sko.kernel_cache` clears it when any kernel source
changes.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from sko.algorithms.compiled import kernels as K
from sko.algorithms.compiled.borrow import borrowed
from sko.algorithms.compiled.flat import BODY, HDIM, NDIM, WIDTH
from sko.bodies.compiled_state import COLUMNS, library_state

__all__ = ["INVERSE_DYNAMICS", "FORWARD_DYNAMICS", "MASS_MATRIX", "MASS_MATRIX_INVERSE", "CHUNK", "pack_tables",
           "workspace_size", "evaluate_one", "evaluate_batch"]

INVERSE_DYNAMICS, FORWARD_DYNAMICS, MASS_MATRIX, MASS_MATRIX_INVERSE = range(4)
CHUNK = 16  #: states per task of a parallel batch


#: header of the packed tables: bodies N, nv, Σ m_k, max m_k, max n_k, Riccati buffer, arena size
HEADER = 7


def pack_tables(ints: np.ndarray, order: np.ndarray, layout: np.ndarray, roff: np.ndarray, rsize: int,
                arena_size: int) -> np.ndarray:
    """The integer tables of a system in one int64 vector (module docstring)."""
    m, n = layout[:, NDIM], layout[:, HDIM]
    header = [len(order), n.sum(), m.sum(), max(1, m.max(initial=0)), max(1, n.max(initial=0)), rsize, arena_size]
    return np.concatenate([np.asarray(header, dtype=np.int64), ints.ravel(), order, layout.ravel(), roff.ravel()])


@njit(cache=True)
def _tables(tables):
    """``(ints, order, layout, roff)`` as views of the packed tables."""
    N = tables[0]
    o = HEADER + N * COLUMNS
    ints = tables[HEADER: o].reshape((N, COLUMNS))
    order = tables[o: o + N]
    layout = tables[o + N: o + N + N * WIDTH].reshape((N, WIDTH))
    o += N + N * WIDTH
    return ints, order, layout, tables[o: o + 6 * N].reshape((N, 6))


@njit(cache=True)
def _sizes(op, tables):
    """Entries of each workspace buffer for request ``op``, in the order :func:`_workspace` carves them."""
    nv, ns, mm, nn, rsize, L = tables[1], tables[2], tables[3], tables[4], tables[5], tables[6]
    cols = nv if op == MASS_MATRIX_INVERSE else 1
    block = max(mm * mm, mm * nn)
    # arena, X_J, S, c, X, t | V α f, T, ℛ, X, Y, r, Riccati scratch (then ε of the AB passes), z, identity
    return (L, 36, 36, 6, 36, 64, 3 * ns, nv, L, block, block, rsize, max(8 * max(mm, nn) ** 2, nn * cols), ns * cols,
            nv * nv if op == MASS_MATRIX_INVERSE else 0)


@njit(cache=True)
def workspace_size(op, tables) -> int:
    """Length of the workspace of request ``op`` (module docstring)."""
    total = 0
    for size in _sizes(op, tables):
        total += size
    return total


@njit(cache=True)
def _workspace(op, tables, buf):
    """``(arena, state kernels' work, model kernels' scratch)`` as views of the workspace ``buf``."""
    nv, ns = tables[1], tables[2]
    cols = nv if op == MASS_MATRIX_INVERSE else 1
    sizes = _sizes(op, tables)
    o = np.zeros(len(sizes) + 1, dtype=np.int64)
    for i, size in enumerate(sizes):
        o[i + 1] = o[i] + size
    work = (buf[o[1]: o[2]].reshape((6, 6)), buf[o[2]: o[3]].reshape((6, 6)), buf[o[3]: o[4]],
            buf[o[4]: o[5]].reshape((6, 6)), buf[o[5]: o[6]])
    eye = buf[o[14]: o[15]].reshape((nv, nv) if op == MASS_MATRIX_INVERSE else (0, 0))
    scratch = (buf[o[6]: o[7]].reshape((3, ns)), buf[o[7]: o[8]], buf[o[8]: o[9]], buf[o[9]: o[10]],
               buf[o[10]: o[11]], buf[o[11]: o[12]], buf[o[12]: o[13]], buf[o[13]: o[14]].reshape((ns, cols)), eye)
    return buf[0: o[1]], work, scratch


@njit(cache=True, inline="always")
def _request(op, ints, reals, order, layout, roff, q, qd, x, a, fill, work, s, out) -> int:
    """One state: fill the arena ``a`` (when ``fill``) and answer request ``op`` into ``out``
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
        K.mass_matrix(layout, a, R, out, X, Y)
        return -1
    bad, _ = K.riccati(layout, a, roff, r, rs, False)
    if bad >= 0:
        return ints.shape[0] + layout[bad, BODY]
    z[:, :] = 0
    if op == FORWARD_DYNAMICS:
        K.articulated_body(layout, a, roff, r, x.reshape((nv, 1)), True, z, out.T, rs)
        return -1
    # ℳ^{-1}: the articulated passes with a = b = 0 on the columns of the identity (symmetric)
    eye[:, :] = 0
    for i in range(nv):
        eye[i, i] = 1
    K.articulated_body(layout, a, roff, r, eye, False, z, out, rs)
    return -1


@njit(cache=True)
def _finite(x) -> bool:
    for v in x:
        if not np.isfinite(v):
            return False
    return True


@njit(cache=True)
def evaluate_one(op, tables, reals, q, qd, x, buf, fill):
    """Request ``op`` at one state (module docstring) with the workspace ``buf`` (its arena is
    filled here when ``fill``, else the caller filled it). Returns ``(result, status)``; status
    ``-2`` when an input is not finite (nothing is computed: the caller reports it as the
    reference path does), ``-3`` when the result is not (an overflow: the caller takes the
    checked path, which reports it)."""
    tables, reals, buf = borrowed(tables), borrowed(reals), borrowed(buf)
    q, qd, x = borrowed(q), borrowed(qd), borrowed(x)
    ints, order, layout, roff = _tables(tables)
    nv = tables[1]
    out = np.zeros((1 if op <= FORWARD_DYNAMICS else nv, nv), dtype=buf.dtype)
    if not (_finite(q) and _finite(qd) and _finite(x)):
        return out, -2
    a, work, s = _workspace(op, tables, buf)
    status = _request(op, ints, reals, order, layout, roff, q, qd, x, a, fill, work, s, borrowed(out))
    if status == -1 and not _finite(out.ravel()):
        status = -3
    return out, status


@njit(cache=True)
def evaluate_batch(op, tables, reals, Q, QD, X, A, fill):
    """Request ``op`` at every state of a batch: ``Q`` (B × nq), ``QD`` (B × nv), ``X`` (B × nv,
    or B × 0), ``A`` the filled arenas (B × L), or with ``fill`` a 1 × L array giving the scalar
    type. Returns ``(results (B × rows × nv), status (B,))``."""
    tables, reals, A = borrowed(tables), borrowed(reals), borrowed(A)
    Q, QD, X = borrowed(Q), borrowed(QD), borrowed(X)
    ints, order, layout, roff = _tables(tables)
    B, nv, L = Q.shape[0], tables[1], tables[6]
    out = np.zeros((B, 1 if op <= FORWARD_DYNAMICS else nv, nv), dtype=A.dtype)
    status = np.full(B, -1, dtype=np.int64)
    chunks = (B + CHUNK - 1) // CHUNK
    buffers = np.zeros((chunks, workspace_size(op, tables)), dtype=A.dtype)
    _chunks(op, tables, ints, reals, order, layout, roff, Q, QD, X, A, fill, buffers, out, status)
    return out, status


@njit(cache=True, parallel=True)
def _chunks(op, tables, ints, reals, order, layout, roff, Q, QD, X, A, fill, buffers, out, status):
    """The states of :func:`evaluate_batch`, chunk ``c`` in the workspace ``buffers[c]``."""
    buffers, out, status = borrowed(buffers), borrowed(out), borrowed(status)
    B = Q.shape[0]
    for c in prange(buffers.shape[0]):
        a, work, scratch = _workspace(op, tables, buffers[c])
        for s in range(c * CHUNK, min(B, (c + 1) * CHUNK)):
            if not fill:
                a[:] = A[s]
            status[s] = _request(op, ints, reals, order, layout, roff, Q[s], QD[s], X[s], a, fill, work, scratch,
                                 out[s])

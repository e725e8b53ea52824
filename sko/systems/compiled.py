"""The compiled path of a system's dynamics: one numba call per request, state building included.

A request is one of :data:`INVERSE_DYNAMICS` (``T = ℳ θ̈ + 𝒞``; bias and gravity forces with
``θ̈ = 0``), :data:`FORWARD_DYNAMICS` (``θ̈ = ℳ^{-1}(T − 𝒞)``), :data:`MASS_MATRIX` (``ℳ``) and
:data:`MASS_MATRIX_INVERSE` (``ℳ^{-1}``). :func:`evaluate_one` builds the SKO model at the state
into the arena of :mod:`sko.systems.state_layout` (unless the caller filled it, for systems with
body types that only have a Python state), only the terms the request reads (ℳ and ℳ^{-1} only
the weights, ``H`` and ``M``; no request the poses: :data:`~sko.bodies.compiled_state.STRUCTURE`),
and runs the model kernels of :mod:`sko.algorithms.compiled.kernels` on the arena's flat data (its
first entries are the flat model's data buffer). :func:`evaluate_batch` does the same for ``B`` states, parallel over
chunks of :data:`CHUNK` states with numba's threads (``NUMBA_NUM_THREADS`` sets how many).
Results are ``nv`` entries per state for vectors, ``nv × nv`` for matrices.

numba's call overhead grows with each argument, so a call passes few arrays and carves its
views (:func:`~sko.algorithms.compiled.borrow.matrix_view`) by offsets computed once. :func:`pack_tables` packs
the system's integer tables into one vector: a header of sizes, where each table starts and the
offsets of every workspace buffer of each request, then the body table ``ints`` (one row per
body, in a scatter order), the flat ``layout`` of the requests (node vectors stacked in that
order: they are scratch) and its Riccati offsets ``roff``. A *workspace* holds the arena and
every scratch buffer of a request (:func:`workspace_size` entries, carved by :func:`_workspace`;
O(N) but for ℳ^{-1}, whose passes run on the ``nv`` columns of the identity). A *request vector*
(:func:`request_vector`) holds all a one-state call needs but the state: the request, the tables,
the constants ``reals`` and the workspace, in the scalar type of the state. A caller keeps one
per request and scalar type and passes it again with the state and a zeroed result: nothing is
allocated per call. :func:`exact_evaluate_one` gives :func:`evaluate_one` for arguments of one
type only, which refuses any other at once.

``status`` is ``-1``, or ``k`` for a state a joint of the body of row ``k`` of ``ints`` rejects (a
zero quaternion), or ``N + k`` when ``D(k)`` of the ``k``-th body in stacking order is not
positive definite; for one state also ``-2`` when an input is not finite, ``-3`` when the result
is not, ``-4`` when a shape does not fit the system.

The state kernels are those of :func:`sko.bodies.compiled_state.library_state` (rigid bodies,
rotor links, flexible bodies, clusters of coupled rigid bodies). numba's on-disk cache of this
module would not notice a change there; :mod:`sko.kernel_cache` clears it when any kernel source
changes.
"""

from __future__ import annotations

import numpy as np
from numba import from_dtype, njit, prange, types

from sko.algorithms.compiled import kernels as K
from sko.algorithms.compiled.borrow import borrowed, matrix_view
from sko.algorithms.compiled.flat import BODY, HDIM, NDIM, WIDTH
from sko.bodies.compiled_state import CHUNK, COLUMNS, MOTION, STRUCTURE, WORK, library_state, work_views

__all__ = ["INVERSE_DYNAMICS", "FORWARD_DYNAMICS", "MASS_MATRIX", "MASS_MATRIX_INVERSE", "CHUNK", "NoMatch",
           "pack_tables", "workspace_size", "request_vector", "evaluate_one", "exact_evaluate_one", "evaluate_batch"]

INVERSE_DYNAMICS, FORWARD_DYNAMICS, MASS_MATRIX, MASS_MATRIX_INVERSE = range(4)
#: LLVM flags of the requests (and every kernel they inline): reassociated sums and fused
#: multiply–adds, which the compiler needs to vectorize the 6 × 6 products (7–9 % of a call on
#: talos). No assumption of finite numbers: the NaN and overflow checks keep their meaning.
FAST_MATH = {"reassoc", "contract"}

#: header of the packed tables: bodies N, nv, Σ m_k, max m_k, max n_k, Riccati buffer, arena size,
#: nq, where the tables ints, layout and roff start; then the workspace offsets
BODIES, NV, NS, MM, NN, RSIZE, ARENA, NQ, INTS, LAYOUT, ROFF = range(11)
PARTS = 11  #: buffers of a workspace (:func:`_sizes`)
OFFSETS = 11  #: where the workspace offsets start: PARTS + 1 per request, the last one its size
HEADER = OFFSETS + 4 * (PARTS + 1)

#: header of a request vector (int64 words): the request, whether the call fills the arena, the
#: end of the tables (words), of the constants (float64 entries), the start of the workspace
#: (entries of the scalar type), whether a fill has written the arena's constant terms (the
#: ``constants`` of :mod:`sko.bodies.compiled_state`); the tables follow the header
REQUEST, FILL, TABLES_END, REALS_END, START, WRITTEN = range(6)
REQUEST_HEADER = 6


def _sizes(op: int, nv: int, ns: int, mm: int, nn: int, rsize: int, arena: int) -> tuple:
    """Entries of each workspace buffer for request ``op``, in the order :func:`_workspace` carves them."""
    cols = nv if op == MASS_MATRIX_INVERSE else 1
    block = max(mm * mm, mm * nn, mm * nv if op == MASS_MATRIX else 0)  # ℳ's columns: mm × nv
    # arena, state kernels' work | V α f, T, ℛ, X, Y, r, Riccati scratch (then ε of the AB passes), z, right-hand
    # sides of the AB passes (T − 𝒞 or the identity)
    return (arena, WORK, 3 * ns, nv, arena, block, block, rsize, max(8 * max(mm, nn) ** 2, nn * cols), ns * cols,
            nv * cols if op in (FORWARD_DYNAMICS, MASS_MATRIX_INVERSE) else 0)


def pack_tables(ints: np.ndarray, layout: np.ndarray, roff: np.ndarray, rsize: int, arena_size: int,
                nq: int) -> np.ndarray:
    """The integer tables of a system in one int64 vector (module docstring)."""
    m, n = layout[:, NDIM], layout[:, HDIM]
    sizes = (len(ints), int(n.sum()), int(m.sum()), max(1, int(m.max(initial=0))), max(1, int(n.max(initial=0))),
             rsize, arena_size, nq)
    header = np.zeros(HEADER, dtype=np.int64)
    header[:len(sizes)] = sizes
    start = HEADER
    for column, table in ((INTS, ints), (LAYOUT, layout), (ROFF, roff)):
        header[column] = start
        start += table.size
    for op in range(4):
        o = OFFSETS + op * (PARTS + 1)
        header[o + 1: o + PARTS + 1] = np.cumsum(_sizes(op, *sizes[1:7]))
    return np.concatenate([header, ints.ravel(), layout.ravel(), roff.ravel()]).astype(np.int64)


@njit(cache=True)
def _tables(tables):
    """``(ints, layout, roff)`` as views of the packed tables."""
    N = tables[BODIES]
    return (matrix_view(tables, tables[INTS], N, COLUMNS), matrix_view(tables, tables[LAYOUT], N, WIDTH),
            matrix_view(tables, tables[ROFF], N, 6))


@njit(cache=True)
def workspace_size(op, tables) -> int:
    """Length of the workspace of request ``op`` (module docstring)."""
    return tables[OFFSETS + op * (PARTS + 1) + PARTS]


@njit(cache=True)
def _workspace(op, tables, buf):
    """``(arena, state kernels' work, model kernels' scratch)`` as views of the workspace ``buf``."""
    nv, ns = tables[NV], tables[NS]
    cols = nv if op == MASS_MATRIX_INVERSE else 1
    o = tables[OFFSETS + op * (PARTS + 1): OFFSETS + (op + 1) * (PARTS + 1)]
    k = nv if op == FORWARD_DYNAMICS or op == MASS_MATRIX_INVERSE else 0
    scratch = (matrix_view(buf, o[2], 3, ns), buf[o[3]: o[4]], buf[o[4]: o[5]], buf[o[5]: o[6]], buf[o[6]: o[7]],
               buf[o[7]: o[8]], buf[o[8]: o[9]], matrix_view(buf, o[9], ns, cols), matrix_view(buf, o[10], k, cols))
    return buf[0: o[1]], work_views(buf, o[1]), scratch


@njit(cache=True, inline="always")
def _request(op, ints, reals, layout, roff, q, qd, x, a, fill, constants, work, s, out) -> int:
    """One state: fill the arena ``a`` (when ``fill``; its constant terms too with ``constants``)
    and answer request ``op`` into the zeroed ``out`` (1-D) with the model kernels of
    :mod:`sko.algorithms.compiled.kernels` on the arena's flat data. A status ``k`` with ``0 ≤ k < N``
    (the body of row ``k`` rejected the state) means the fill stopped short."""
    if fill:
        terms = MOTION if op <= FORWARD_DYNAMICS else STRUCTURE
        for k in range(ints.shape[0]):  # rows in scatter order
            if not library_state(ints, reals, k, q, qd, a, work, terms, constants):
                return k
    nodes, T, R, X, Y, r, rs, z, rhs = s
    nv = T.shape[0]
    if op == INVERSE_DYNAMICS:
        nodes[:] = 0
        K.newton_euler(layout, a, x, qd, nodes, out, False)
        return -1
    if op == MASS_MATRIX:
        K.composite_inertias(layout, a, R, X)
        K.mass_matrix(layout, a, R, matrix_view(out, 0, nv, nv), X, Y)
        return -1
    bad, _ = K.riccati(layout, a, roff, r, rs, False)
    if bad >= 0:
        return ints.shape[0] + layout[bad, BODY]
    z[:, :] = 0
    if op == FORWARD_DYNAMICS:
        for i in range(nv):
            rhs[i, 0] = x[i]
    else:  # ℳ^{-1}: the articulated passes with a = b = 0 on the columns of the identity (symmetric)
        rhs[:, :] = 0
        for i in range(nv):
            rhs[i, i] = 1
    # one call for both: the passes are the largest code of a request, inlined once
    K.articulated_body(layout, a, roff, r, rhs, op == FORWARD_DYNAMICS, z, matrix_view(out, 0, nv, rhs.shape[1]), rs)
    return -1


@njit(cache=True)
def _finite(x) -> bool:
    for v in x:
        if not np.isfinite(v):
            return False
    return True


def request_vector(op: int, tables: np.ndarray, reals: np.ndarray, dtype, arena: np.ndarray | None = None
                   ) -> np.ndarray:
    """The request vector of request ``op`` (module docstring) in ``dtype`` (float64 or
    complex128); with ``arena`` (a filled arena) the call does not fill it."""
    dtype = np.dtype(dtype)
    tables_end = REQUEST_HEADER + len(tables)
    reals_end = tables_end + len(reals)
    start = -(-reals_end * 8 // dtype.itemsize)
    w = np.zeros(start + workspace_size(op, tables), dtype=dtype)
    words = w.view(np.int64)
    words[:REQUEST_HEADER] = op, arena is None, tables_end, reals_end, start, 0
    words[REQUEST_HEADER: tables_end] = tables
    w.view(np.float64)[tables_end: reals_end] = reals
    if arena is not None:
        w[start: start + len(arena)] = arena
    return w


@njit(cache=True, fastmath=FAST_MATH)
def evaluate_one(w, q, qd, x, out) -> int:
    """The request of the request vector ``w`` at one state into ``out``, zeroed, of ``nv`` (a
    vector) or ``nv²`` (a matrix, row-major) entries; ``x`` (``θ̈`` or ``T``) of ``nv``
    entries (ℳ and ℳ^{-1} read none: ``nv`` or none). Returns the status (module docstring): nothing is computed for ``-2`` or
    ``-4`` (the caller reports it as the reference path does); ``-3`` is an overflow (the caller
    takes the checked path, which reports it)."""
    w, q, qd, x, out = borrowed(w), borrowed(q), borrowed(qd), borrowed(x), borrowed(out)
    words = w.view(np.int64)
    op, tables_end = words[REQUEST], words[TABLES_END]
    tables = words[REQUEST_HEADER: tables_end]
    nv = tables[NV]
    if (q.shape[0] != tables[NQ] or qd.shape[0] != nv or out.shape[0] != (1 if op <= FORWARD_DYNAMICS else nv) * nv
            or x.shape[0] != nv and (op <= FORWARD_DYNAMICS or x.shape[0] != 0)):
        return -4
    if not (_finite(q) and _finite(qd) and _finite(x)):
        return -2
    ints, layout, roff = _tables(tables)
    a, work, s = _workspace(op, tables, w[words[START]:])
    status = _request(op, ints, w.view(np.float64)[tables_end: words[REALS_END]], layout, roff, q, qd, x, a,
                      words[FILL] != 0, words[WRITTEN] == 0, work, s, out)
    if not 0 <= status < ints.shape[0]:
        words[WRITTEN] = 1
    if status == -1 and not _finite(out):
        status = -3
    return status


class NoMatch(TypeError):
    """Arguments of another type than the one an :func:`exact_evaluate_one` is compiled for."""


def _no_conversion(*args, **kwargs) -> bool:
    return False


def _no_match(*args, **kwargs):
    raise NoMatch("arguments of another type than the call is compiled for")


_EXACT: dict = {}


def exact_evaluate_one(dtype):
    """:func:`evaluate_one` for 1-D C-ordered writeable aligned arrays of ``dtype`` only (compiled
    or loaded from numba's cache on first use). Any other argument, including a read-only or
    strided array or a list, raises :class:`NoMatch` at once: numba's dispatcher checks the types
    it must check anyway, and neither compiles for the new types nor searches for conversions
    (which would cost a hundred microseconds for the caller's fallback)."""
    dtype = np.dtype(dtype)
    call = _EXACT.get(dtype.char)
    if call is None:
        array = types.Array(from_dtype(dtype), 1, "C")
        call = njit((array,) * 5, cache=True, fastmath=FAST_MATH)(evaluate_one.py_func)
        call._search_new_conversions, call._explain_matching_error = _no_conversion, _no_match
        _EXACT[dtype.char] = call
    return call


@njit(cache=True, fastmath=FAST_MATH)
def evaluate_batch(op, tables, reals, Q, QD, X, A, fill):
    """Request ``op`` at every state of a batch: ``Q`` (B × nq), ``QD`` (B × nv), ``X`` (B × nv;
    for ℳ and ℳ^{-1} also B × 0), ``A`` the filled arenas (B × L), or with ``fill`` a 1 × L array
    giving the scalar type. Returns ``(results (B × rows × nv), status (B,))``; a ValueError for
    shapes that do not fit (the kernels read by offsets, unchecked)."""
    tables, reals, A = borrowed(tables), borrowed(reals), borrowed(A)
    Q, QD, X = borrowed(Q), borrowed(QD), borrowed(X)
    ints, layout, roff = _tables(tables)
    B, nv = Q.shape[0], tables[NV]
    if (Q.shape[1] != tables[NQ] or QD.shape[0] != B or QD.shape[1] != nv or X.shape[0] != B
            or X.shape[1] != nv and (op <= FORWARD_DYNAMICS or X.shape[1] != 0)
            or not fill and (A.shape[0] != B or A.shape[1] < tables[ARENA])):
        raise ValueError("the states, vectors or arenas of a batch do not fit the system")
    rows = 1 if op <= FORWARD_DYNAMICS else nv
    out = np.zeros((B, rows * nv), dtype=A.dtype)
    status = np.full(B, -1, dtype=np.int64)
    buffers = np.zeros(((B + CHUNK - 1) // CHUNK, workspace_size(op, tables)), dtype=A.dtype)
    _chunks(op, tables, ints, reals, layout, roff, Q, QD, X, A, fill, buffers, out, status)
    return out.reshape((B, rows, nv)), status


@njit(cache=True, parallel=True, fastmath=FAST_MATH)
def _chunks(op, tables, ints, reals, layout, roff, Q, QD, X, A, fill, buffers, out, status):
    """The states of :func:`evaluate_batch`, chunk ``c`` in the workspace ``buffers[c]``."""
    buffers = borrowed(buffers)
    for c in prange(buffers.shape[0]):
        _chunk(op, tables, ints, reals, layout, roff, Q, QD, X, A, fill, buffers[c], out, status, c * CHUNK)


@njit(cache=True, fastmath=FAST_MATH)
def _chunk(op, tables, ints, reals, layout, roff, Q, QD, X, A, fill, buf, out, status, first):
    """The states ``first, …`` of one chunk in the workspace ``buf``. A function of its own: numba's
    parallel passes, run on the loop of :func:`_chunks`, take minutes on the inlined request."""
    buf, out, status = borrowed(buf), borrowed(out), borrowed(status)
    a, work, scratch = _workspace(op, tables, buf)
    constants = True
    for s in range(first, min(Q.shape[0], first + CHUNK)):
        if not fill:
            a[:] = A[s]
        status[s] = _request(op, ints, reals, layout, roff, Q[s], QD[s], X[s], a, fill, constants, work, scratch,
                             out[s])
        constants = constants and 0 <= status[s] < ints.shape[0]

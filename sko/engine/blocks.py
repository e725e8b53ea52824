"""Products of blocks of any shape, stored row-major at offsets of 1-D buffers.

The recursions (:mod:`sko.engine.spo`, :mod:`~sko.engine.rnea`, :mod:`~sko.engine.crba`,
:mod:`~sko.engine.aba`) call these for nodes of any dimensions; rigid bodies take the 6 × 6
forms of :mod:`sko.engine.rigid_blocks` instead. Sums start from the output's own type
(``s = y[…]`` or ``0 · A[…]``), so the same code runs on float64 and complex128 buffers.
"""

from __future__ import annotations

from sko.engine.jit import kernel

__all__ = ["mv", "mtv", "mv2", "mtv2", "ab", "abt_add", "copy_block"]


@kernel
def mv(A, ao, rows, cols, x, xo, y, yo):
    """``y[yo:yo+rows] += A x[xo:xo+cols]`` (``A`` rows × cols at ``ao``)."""
    for r in range(rows):
        s = y[yo + r]
        base = ao + r * cols
        for c in range(cols):
            s += A[base + c] * x[xo + c]
        y[yo + r] = s


@kernel
def mtv(A, ao, rows, cols, x, xo, y, yo):
    """``y[yo:yo+cols] += A* x[xo:xo+rows]`` (transpose, no conjugation; ``x`` and ``y`` may be
    one array at disjoint offsets)."""
    for c in range(cols):
        s = y[yo + c]
        for r in range(rows):
            s += A[ao + r * cols + c] * x[xo + r]
        y[yo + c] = s


@kernel
def mv2(A, ao, rows, cols, X, xo, Y, yo, sign):
    """``Y[yo:yo+rows, :] += sign · A X[xo:xo+cols, :]`` (columns of ``X``, ``Y``: right-hand sides;
    one column summed in a register, a 6 × 6 block's in loops of constant length)."""
    if X.shape[1] == 1:
        if rows == 6 and cols == 6:
            for r in range(6):
                s = 0.0
                for c in range(6):
                    s += A[ao + 6 * r + c] * X[xo + c, 0]
                Y[yo + r, 0] += sign * s
            return
        for r in range(rows):
            Ar, s = A[ao + r * cols: ao + (r + 1) * cols], 0.0
            for c in range(cols):
                s += Ar[c] * X[xo + c, 0]
            Y[yo + r, 0] += sign * s
        return
    for r in range(rows):
        base = ao + r * cols
        for c in range(cols):
            a = sign * A[base + c]
            for q in range(X.shape[1]):
                Y[yo + r, q] += a * X[xo + c, q]


@kernel
def mtv2(A, ao, rows, cols, X, xo, Y, yo, sign):
    """``Y[yo:yo+cols, :] += sign · A* X[xo:xo+rows, :]`` (6 × 6 as in :func:`mv2`; one column by
    rows of ``A``, contiguous)."""
    if X.shape[1] == 1:
        if rows == 6 and cols == 6:
            for c in range(6):
                s = 0.0
                for r in range(6):
                    s += A[ao + 6 * r + c] * X[xo + r, 0]
                Y[yo + c, 0] += sign * s
            return
        for r in range(rows):
            Ar, x = A[ao + r * cols: ao + (r + 1) * cols], sign * X[xo + r, 0]
            for c in range(cols):
                Y[yo + c, 0] += Ar[c] * x
        return
    for r in range(rows):
        base = ao + r * cols
        for c in range(cols):
            a = sign * A[base + c]
            for q in range(X.shape[1]):
                Y[yo + c, q] += a * X[xo + r, q]


@kernel
def ab(A, ao, B, bo, C, co, rows, inner, cols):
    """``C = A B`` with ``A`` (rows × inner), ``B`` (inner × cols), by rows of ``B`` (``C`` may
    share an array with ``A`` or ``B`` at other offsets, never overlapping). 6 × 6 blocks (a free
    joint's hinge) take loops of constant length, each entry summed in a register."""
    if rows == 6 and inner == 6 and cols == 6:
        for r in range(6):
            for c in range(6):
                s = 0.0
                for i in range(6):
                    s += A[ao + 6 * r + i] * B[bo + 6 * i + c]
                C[co + 6 * r + c] = s
        return
    for r in range(rows):  # a row of C gains a multiple of each row of B: contiguous inner loops
        Cr = C[co + r * cols: co + (r + 1) * cols]
        for c in range(cols):
            Cr[c] = 0.0
        for i in range(inner):
            a, Bi = A[ao + r * inner + i], B[bo + i * cols: bo + (i + 1) * cols]
            for c in range(cols):
                Cr[c] += a * Bi[c]


@kernel
def abt_add(A, ao, B, bo, C, co, rows, inner, cols):
    """``C += A B*`` with ``A`` (rows × inner), ``B`` (cols × inner), ``C`` (rows × cols); 6 × 6
    blocks as in :func:`ab`."""
    if rows == 6 and inner == 6 and cols == 6:
        for r in range(6):
            for c in range(6):
                s = C[co + 6 * r + c]
                for i in range(6):
                    s += A[ao + 6 * r + i] * B[bo + 6 * c + i]
                C[co + 6 * r + c] = s
        return
    for r in range(rows):
        for c in range(cols):
            s = C[co + r * cols + c]
            for i in range(inner):
                s += A[ao + r * inner + i] * B[bo + c * inner + i]
            C[co + r * cols + c] = s


@kernel
def copy_block(S, so, C, co, size):
    """``C[co: co + size] = S[so: so + size]``."""
    for i in range(size):
        C[co + i] = S[so + i]

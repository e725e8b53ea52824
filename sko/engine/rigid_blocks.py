"""6 × 6 blocks in registers, and the steps of the recursions at a rigid body on a 1-dof hinge.

A rigid body has a node of dimension 6; on a 1-dof hinge (revolute, prismatic, helical) its
``H(k)`` is one row and ``D(k)`` one number. Most nodes of a robot are such bodies, so the
recursions take these forms for them (``rigid_step``): every 6-vector is held in registers as
six numbers, every 6 × 6 product written out, and the congruence ``φ S φ*`` with a symmetric
``S`` computed on its 21 distinct entries (a rigid weight's zero lower-left block skips its
products). A floating base (a free joint's ``H = I`` at a root, ``base_step``) takes its
Riccati step and its passes in registers too. Numbers are read by :func:`held` and written by
:func:`put`, at offsets without numba's fix of a negative index (a select per entry, which
also turned a copy of blocks into gathers and scatters). The steps are register helpers
(:func:`~.jit.register`), inlined into the recursion that takes them; the congruence is a
kernel of its own, called: its sums of tuples take seconds to compile, and calling it costs a
few percent of a recursion. The small products of tuples it and :func:`carry66` take at dozens
of call sites (:func:`row6`, :func:`dot`, :func:`dot3`, :func:`dot_tail`,
:func:`symmetric_times`, :func:`lower_times`, :func:`lower_right`, :func:`combine`), and the
6 × 6 block products :func:`times` and :func:`transpose_times`, are inline kernels
(:func:`~.jit.inline_kernel`): typed once per signature, not again at each site, which halves
the congruence's compile time; LLVM inlines them, so the machine code is the same. A step
written once for a node of any dimensions (Newton–Euler's, :mod:`sko.engine.rnea`) reads
through :func:`held`, which holds the numbers in registers where the step is specialised to a
rigid body's dimensions (:func:`~.jit.specialised`).
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic
from numba.np.arrayobj import load_item, make_array, populate_array, store_item

from sko.engine.borrow import flat_view
from sko.engine.layout import Flat, Riccati
from sko.engine.jit import inline_kernel, kernel, register

__all__ = ["held", "put", "rigid_step", "base_step", "dot6", "column6", "zero", "times", "transpose_times", "row6", "dot", "combine",
           "congruence66", "carry66", "lower_left_zero", "riccati_6_1", "riccati_6_6", "articulated_bias_6",
           "articulated_gather_6_1", "articulated_scatter_6_1", "articulated_gather_6_6", "articulated_scatter_6_6",
           "put_weight", "put_transform"]


@intrinsic(prefer_literal=True)
def held(typingctx, x, o, n):
    """The ``n`` numbers of the 1-D ``x`` from ``o``: a tuple held in registers when ``n`` is a
    constant of the compiled code (a step specialised to a rigid body's dimensions: a later store
    to ``x`` leaves them as read, and the compiler need not read them again), else a view of
    ``x[o: o + n]`` (borrowed: no reference counted)."""
    if not (isinstance(x, types.Array) and x.ndim == 1 and x.layout == "C" and isinstance(o, types.Integer)
            and isinstance(n, types.Integer)):
        return None
    if isinstance(n, types.IntegerLiteral):
        k = n.literal_value
        numbers = types.UniTuple(x.dtype, k)

        def codegen(context, builder, signature, args):
            array = make_array(signature.args[0])(context, builder, args[0])
            first = context.cast(builder, args[1], signature.args[1], types.intp)
            items = [load_item(context, builder, signature.args[0],
                               builder.gep(array.data, [builder.add(first, context.get_constant(types.intp, i))]))
                     for i in range(k)]
            return context.make_tuple(builder, numbers, items)

        return numbers(x, o, n), codegen

    def codegen(context, builder, signature, args):
        source = make_array(signature.args[0])(context, builder, args[0])
        first, size = (context.cast(builder, v, t, types.intp) for v, t in zip(args[1:], signature.args[1:]))
        view = make_array(signature.args[0])(context, builder)
        populate_array(view, data=builder.gep(source.data, [first]), shape=cgutils.pack_array(builder, [size]),
                       strides=source.strides, itemsize=source.itemsize, meminfo=None)
        return view._getvalue()

    return x(x, o, n), codegen


@intrinsic
def put(typingctx, x, o, values):
    """``x[o + i] = values[i]`` for the numbers of the tuple ``values`` and the 1-D C-ordered
    ``x``: :func:`held`'s stores, each at its offset as given (no fix of a negative index)."""
    if not (isinstance(x, types.Array) and x.ndim == 1 and x.layout == "C" and isinstance(o, types.Integer)
            and isinstance(values, types.BaseTuple)):
        return None
    n = len(values)

    def codegen(context, builder, signature, args):
        array = make_array(signature.args[0])(context, builder, args[0])
        first = context.cast(builder, args[1], signature.args[1], types.intp)
        for i in range(n):
            value = context.cast(builder, builder.extract_value(args[2], i), signature.args[2][i], x.dtype)
            store_item(context, builder, signature.args[0], value,
                       builder.gep(array.data, [builder.add(first, context.get_constant(types.intp, i))]))
        return context.get_dummy_value()

    return types.none(x, o, values), codegen


@register
def entry(x, o):
    """``x[o]`` read by :func:`held`."""
    return held(x, o, 1)[0]


@register
def put_weight(W_, wo, E, B, zeros):
    """The rigid weight ``φ = (ᵏX_o)* = [[Eᵀ, Bᵀ], [0, Eᵀ]]`` of ``ᵏX_o = [[E, 0], [B, E]]``
    (``E``, ``B`` three rows each) row-major at ``wo``, row by row; its zero block only if ``zeros``."""
    (e00, e01, e02), (e10, e11, e12), (e20, e21, e22) = E
    (b00, b01, b02), (b10, b11, b12), (b20, b21, b22) = B
    put(W_, wo, (e00, e10, e20, b00, b10, b20))
    put(W_, wo + 6, (e01, e11, e21, b01, b11, b21))
    put(W_, wo + 12, (e02, e12, e22, b02, b12, b22))
    put(W_, wo + 21, (e00, e10, e20))
    put(W_, wo + 27, (e01, e11, e21))
    put(W_, wo + 33, (e02, e12, e22))
    if zeros:
        z = 0 * e00
        for i in range(3):
            put(W_, wo + 18 + 6 * i, (z, z, z))


@register
def put_transform(X_, xo, E, B, zeros):
    """``ᵏX_o = [[E, 0], [B, E]]`` (``E``, ``B`` three rows each) row-major at ``xo``, row by row;
    its zero block only if ``zeros``."""
    z = 0 * E[0][0]
    for i in range(3):
        put(X_, xo + 6 * i, E[i])
        put(X_, xo + 18 + 6 * i, B[i] + E[i])
        if zeros:
            put(X_, xo + 6 * i + 3, (z, z, z))


@register
def rigid_step(layout, j, p) -> bool:
    """Whether flat node ``j`` (parent ``p``) has ``m = 6``, ``n = 1`` and a 6-dimensional parent
    or none — a rigid body on a 1-dof hinge — whose steps the recursions take in registers."""
    return layout[j, Flat.NODE_DIM] == 6 and layout[j, Flat.HINGE_DIM] == 1 and (p < 0 or layout[p, Flat.NODE_DIM] == 6)


@register
def base_step(layout, j, p) -> bool:
    """Whether flat node ``j`` (parent ``p``) is a base body with ``m = 6`` on a 6-dof hinge (a
    floating base), whose one-column passes take registers (:func:`articulated_gather_6_6`)."""
    return p < 0 and layout[j, Flat.NODE_DIM] == 6 and layout[j, Flat.HINGE_DIM] == 6


@register
def dot6(A, b, step, x0, x1, x2, x3, x4, x5):
    """``Σ_i A[b + i·step] x_i``: a row (``step`` 1) or a column (``step`` its row length) of a
    row-major block times six numbers held in registers (literal offsets: the compiler unrolls
    the callers)."""
    return (A[b] * x0 + A[b + step] * x1 + A[b + 2 * step] * x2 + A[b + 3 * step] * x3 + A[b + 4 * step] * x4
            + A[b + 5 * step] * x5)


@register
def zero(x, start, stop):
    """``x[start: stop] = 0`` (a loop: numba's slice assignment costs a view and a broadcast)."""
    for i in range(start, stop):
        x[i] = 0


@register
def column6(x, o, step):
    """The real parts of ``x[o + i·step]`` for ``i = 0 … 5``: a column of a row-major block
    (``step`` its row length), or six numbers in a row (``step`` 1), of real or complex entries."""
    return (x[o].real, x[o + step].real, x[o + 2 * step].real, x[o + 3 * step].real, x[o + 4 * step].real,
            x[o + 5 * step].real)


@inline_kernel
def rows6(W_, wo):
    """The six rows of the 6 × 6 block at ``wo`` (row-major), six numbers each."""
    return (held(W_, wo, 6), held(W_, wo + 6, 6), held(W_, wo + 12, 6), held(W_, wo + 18, 6), held(W_, wo + 24, 6),
            held(W_, wo + 30, 6))


@inline_kernel
def times(W_, wo, x):
    """``φ x`` for the 6 × 6 block ``φ`` at ``wo`` (row-major) and six numbers ``x``: each row dotted with ``x``."""
    w0, w1, w2, w3, w4, w5 = rows6(W_, wo)
    return dot(w0, x), dot(w1, x), dot(w2, x), dot(w3, x), dot(w4, x), dot(w5, x)


@inline_kernel
def transpose_times(W_, wo, x):
    """``φ* x = Σ_i x_i φ(i, :)`` for the 6 × 6 block ``φ`` at ``wo`` and six numbers ``x``, by
    rows (:func:`combine`)."""
    return combine(x, rows6(W_, wo))


@inline_kernel
def combine(x, rows):
    """``Σ_i x_i rows_i`` for six numbers ``x`` and six rows of six numbers: a multiple of each
    row added in turn, no dot products."""
    y = scaled(x[0], rows[0])
    y = axpy(y, x[1], rows[1])
    y = axpy(y, x[2], rows[2])
    y = axpy(y, x[3], rows[3])
    y = axpy(y, x[4], rows[4])
    return axpy(y, x[5], rows[5])


@inline_kernel
def scaled(a, x):
    """``a x`` for a number ``a`` and six numbers ``x``."""
    return a * x[0], a * x[1], a * x[2], a * x[3], a * x[4], a * x[5]


@inline_kernel
def axpy(y, a, x):
    """``y + a x`` for six numbers each of ``y`` and ``x``."""
    return y[0] + a * x[0], y[1] + a * x[1], y[2] + a * x[2], y[3] + a * x[3], y[4] + a * x[4], y[5] + a * x[5]


@inline_kernel
def plus(x, y):
    """``x + y`` for six numbers each."""
    return x[0] + y[0], x[1] + y[1], x[2] + y[2], x[3] + y[3], x[4] + y[4], x[5] + y[5]


@kernel
def congruence66(W_, wo, S, so, C, co):
    """``C += φ S φ*`` for 6 × 6 blocks (``φ`` at ``wo`` of ``W_``, ``S`` symmetric), in registers:
    ``S`` (:func:`upper66`), ``φ``'s rows and ``C`` are read before the first store, so ``C`` may
    share ``S``'s array (ℛ, P). With ``u_r = S φ(r, :)ᵀ``, ``C(r, c) += φ(c, :) u_r`` for
    ``r ≤ c``, mirrored: 342 products. A weight whose lower-left 3 × 3 block is zero — a rigid
    body's ``(ᵏX_o)* = [[Eᵀ, Bᵀ], [0, Eᵀ]]`` — skips the products with those zeros, 216 in all,
    and the same sums (a finite term times zero adds nothing)."""
    s = upper66(S, so)
    p0, p1, p2 = held(W_, wo, 6), held(W_, wo + 6, 6), held(W_, wo + 12, 6)
    u0, u1, u2 = symmetric_times(s, p0), symmetric_times(s, p1), symmetric_times(s, p2)
    c = held(C, co, 36)
    if lower_left_zero(W_, wo):
        t3, t4, t5 = held(W_, wo + 21, 3), held(W_, wo + 27, 3), held(W_, wo + 33, 3)
        v3, v4, v5 = lower_times(s, t3), lower_times(s, t4), lower_times(s, t5)  # S₂₂ t, 3 numbers
        m0 = dot_tail(t3, u0), dot_tail(t4, u0), dot_tail(t5, u0)
        m1 = dot_tail(t3, u1), dot_tail(t4, u1), dot_tail(t5, u1)
        m2 = dot_tail(t3, u2), dot_tail(t4, u2), dot_tail(t5, u2)
        l33, l34, l35, l44, l45, l55 = dot3(t3, v3), dot3(t4, v3), dot3(t5, v3), dot3(t4, v4), dot3(t5, v4), dot3(t5, v5)
    else:
        p3, p4, p5 = held(W_, wo + 18, 6), held(W_, wo + 24, 6), held(W_, wo + 30, 6)
        u3, u4 = symmetric_times(s, p3), symmetric_times(s, p4)
        m0 = dot(p3, u0), dot(p4, u0), dot(p5, u0)
        m1 = dot(p3, u1), dot(p4, u1), dot(p5, u1)
        m2 = dot(p3, u2), dot(p4, u2), dot(p5, u2)
        l33, l34, l35, l44, l45 = dot(p3, u3), dot(p4, u3), dot(p5, u3), dot(p4, u4), dot(p5, u4)
        l55 = dot(p5, symmetric_times(s, p5))
    a00, a01, a02, a11, a12, a22 = dot(p0, u0), dot(p1, u0), dot(p2, u0), dot(p1, u1), dot(p2, u1), dot(p2, u2)
    put(C, co, (c[0] + a00, c[1] + a01, c[2] + a02, c[3] + m0[0], c[4] + m0[1], c[5] + m0[2],
                c[6] + a01, c[7] + a11, c[8] + a12, c[9] + m1[0], c[10] + m1[1], c[11] + m1[2],
                c[12] + a02, c[13] + a12, c[14] + a22, c[15] + m2[0], c[16] + m2[1], c[17] + m2[2],
                c[18] + m0[0], c[19] + m1[0], c[20] + m2[0], c[21] + l33, c[22] + l34, c[23] + l35,
                c[24] + m0[1], c[25] + m1[1], c[26] + m2[1], c[27] + l34, c[28] + l44, c[29] + l45,
                c[30] + m0[2], c[31] + m1[2], c[32] + m2[2], c[33] + l35, c[34] + l45, c[35] + l55))


@register
def lower_left_zero(W_, wo) -> bool:
    """Whether the 6 × 6 block at ``wo`` has a zero lower-left 3 × 3 block, as a rigid body's
    weight ``(ᵏX_o)* = [[Eᵀ, Bᵀ], [0, Eᵀ]]`` has (a NaN there is not zero)."""
    return (W_[wo + 18] == 0 and W_[wo + 19] == 0 and W_[wo + 20] == 0 and W_[wo + 24] == 0
            and W_[wo + 25] == 0 and W_[wo + 26] == 0 and W_[wo + 30] == 0 and W_[wo + 31] == 0
            and W_[wo + 32] == 0)


@register
def upper66(S, so):
    """The upper triangle of the symmetric 6 × 6 block of ``S`` at ``so``, row by row (21
    numbers). Each entry is taken as ``S(i, j) + 0 · S(j, i)``: the same number, but a NaN or
    infinity of the lower triangle is not dropped."""
    s = held(S, so, 36)
    return (s[0], s[1] + 0 * s[6], s[2] + 0 * s[12], s[3] + 0 * s[18], s[4] + 0 * s[24], s[5] + 0 * s[30], s[7],
            s[8] + 0 * s[13], s[9] + 0 * s[19], s[10] + 0 * s[25], s[11] + 0 * s[31], s[14], s[15] + 0 * s[20],
            s[16] + 0 * s[26], s[17] + 0 * s[32], s[21], s[22] + 0 * s[27], s[23] + 0 * s[33], s[28],
            s[29] + 0 * s[34], s[35])


@inline_kernel
def lower_right(W_, wo):
    """Rows 3..5 of the 6 × 6 block at ``wo``, their last three numbers each."""
    return ((W_[wo + 21], W_[wo + 22], W_[wo + 23]), (W_[wo + 27], W_[wo + 28], W_[wo + 29]),
            (W_[wo + 33], W_[wo + 34], W_[wo + 35]))


@inline_kernel
def symmetric_times(s, x):
    """``S x`` for the symmetric 6 × 6 ``S`` of upper triangle ``s`` (:func:`upper66`)."""
    s00, s01, s02, s03, s04, s05, s11, s12, s13, s14, s15, s22, s23, s24, s25, s33, s34, s35, s44, s45, s55 = s
    x0, x1, x2, x3, x4, x5 = x
    return (s00 * x0 + s01 * x1 + s02 * x2 + s03 * x3 + s04 * x4 + s05 * x5,
            s01 * x0 + s11 * x1 + s12 * x2 + s13 * x3 + s14 * x4 + s15 * x5,
            s02 * x0 + s12 * x1 + s22 * x2 + s23 * x3 + s24 * x4 + s25 * x5,
            s03 * x0 + s13 * x1 + s23 * x2 + s33 * x3 + s34 * x4 + s35 * x5,
            s04 * x0 + s14 * x1 + s24 * x2 + s34 * x3 + s44 * x4 + s45 * x5,
            s05 * x0 + s15 * x1 + s25 * x2 + s35 * x3 + s45 * x4 + s55 * x5)


@inline_kernel
def lower_times(s, x):
    """``S₂₂ x``: the lower-right 3 × 3 block of the symmetric ``S`` of upper triangle ``s`` times
    three numbers ``x``."""
    s33, s34, s35, s44, s45, s55 = s[15], s[16], s[17], s[18], s[19], s[20]
    x3, x4, x5 = x
    return s33 * x3 + s34 * x4 + s35 * x5, s34 * x3 + s44 * x4 + s45 * x5, s35 * x3 + s45 * x4 + s55 * x5


@inline_kernel
def dot3(a, b):
    """``a · b`` for three numbers each."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@inline_kernel
def dot_tail(a, b):
    """``a · b[3:]`` for three numbers ``a`` and six ``b``."""
    return a[0] * b[3] + a[1] * b[4] + a[2] * b[5]


@inline_kernel
def row6(W_, o):
    """Six numbers of ``W_`` from ``o``: a row of a row-major 6 × 6 block."""
    return W_[o], W_[o + 1], W_[o + 2], W_[o + 3], W_[o + 4], W_[o + 5]


@inline_kernel
def dot(a, b):
    """``a · b`` for six numbers each."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@register
def carry66(data, wo, F, nv, first, stop):
    """``F(:, c) ← φ F(:, c)`` for the columns ``first … stop − 1`` of ``F`` (rows of ``nv``
    entries) and the 6 × 6 weight ``φ`` at ``wo``. ``φ``'s rows are read once, before the first
    store (a store to ``F`` would otherwise make the compiler read them again for every column),
    and each column is read before it is written. A rigid weight (:func:`lower_left_zero`)
    skips the products with its zero block: 27 per column, not 36, and the same sums for finite
    columns (a non-finite column has already made its own entries of ℳ non-finite: ``H(k) F``
    multiplies every row, zeros included)."""
    p0, p1, p2 = row6(data, wo), row6(data, wo + 6), row6(data, wo + 12)
    if lower_left_zero(data, wo):
        t3, t4, t5 = lower_right(data, wo)
        for c in range(first, stop):
            x = (F[c], F[nv + c], F[2 * nv + c], F[3 * nv + c], F[4 * nv + c], F[5 * nv + c])
            F[c], F[nv + c], F[2 * nv + c] = dot(p0, x), dot(p1, x), dot(p2, x)
            F[3 * nv + c], F[4 * nv + c], F[5 * nv + c] = dot_tail(t3, x), dot_tail(t4, x), dot_tail(t5, x)
        return
    p3, p4, p5 = row6(data, wo + 18), row6(data, wo + 24), row6(data, wo + 30)
    for c in range(first, stop):
        x = (F[c], F[nv + c], F[2 * nv + c], F[3 * nv + c], F[4 * nv + c], F[5 * nv + c])
        F[c], F[nv + c], F[2 * nv + c] = dot(p0, x), dot(p1, x), dot(p2, x)
        F[3 * nv + c], F[4 * nv + c], F[5 * nv + c] = dot(p3, x), dot(p4, x), dot(p5, x)


@register
def riccati_6_1(layout, data, roff, r, j, full):
    """The step of :func:`~sko.engine.aba.riccati` at a rigid body on a 1-dof hinge (:func:`rigid_step`), in
    registers: ``(H P)* = Σ_i H_i P(i, :)`` (``P`` symmetric; its rows, read once), ``D = H P H*`` (a
    number), ``G = (H P)* / D``, then, below a parent or if ``full``, ``P⁺ = P − G H P`` stored row by
    row (a row of ``P`` less a multiple of ``H P``), from which :func:`congruence66` adds ``φ P⁺ φ*``
    to ``P(℘)``; ``ψ`` only if ``full``. Returns ``D``; nothing is written when ``D`` is not positive
    and finite (the caller reports the node)."""
    p, Po, PPo = layout[j, Flat.PARENT], roff[j, Riccati.P], roff[j, Riccati.P_PLUS]
    h, P = held(data, layout[j, Flat.H], 6), rows6(r, Po)
    hp = combine(h, P)
    d = dot(hp, h)
    if not (d.real > 0) or not (abs(d) < np.inf):
        return d
    di = 1 / d
    g = scaled(di, hp)
    if p >= 0 or full:
        for a_ in range(6):
            put(r, PPo + 6 * a_, axpy(P[a_], -g[a_], hp))
    put(r, roff[j, Riccati.D], (d,))
    put(r, roff[j, Riccati.D_INVERSE], (di,))
    put(r, roff[j, Riccati.G], g)
    if p >= 0:
        wo = layout[j, Flat.W]
        if full:  # K = φ G, ψ = φ − K H
            so = roff[j, Riccati.PSI]
            for a_ in range(6):
                w = held(data, wo + 6 * a_, 6)
                put(r, so + 6 * a_, axpy(w, -dot(w, g), h))
        congruence66(data, wo, r, PPo, r, roff[p, Riccati.P])  # P(℘) += φ P⁺ φ*
    return d


@register
def riccati_6_6(r, Po, Do, DIo, L) -> bool:
    """The step of :func:`~sko.engine.aba.riccati` at a base body on a hinge ``H = I`` (a free
    joint) where the passes read only ``D^{-1}``: ``D = P``, its Cholesky factor ``L`` (lower, no
    conjugation), ``L^{-1}`` and ``D^{-1} = L^{-*} L^{-1}``, in loops of constant length (the
    compiler unrolls them: every offset a constant) with one reciprocal per pivot. ``L`` is
    scratch of 72 entries (``L``, ``L^{-1}``). Returns whether ``D`` is positive definite and
    finite (the pivots' real parts decide); nothing is written past ``D`` when it is not."""
    P, D, DI = r[Po: Po + 36], r[Do: Do + 36], r[DIo: DIo + 36]
    F, Fi = L[0: 36], L[36: 72]
    for i in range(36):
        D[i] = P[i]
    for a_ in range(6):  # D = L L*
        for b_ in range(a_ + 1):
            s = P[6 * a_ + b_]
            for i in range(b_):
                s -= F[6 * a_ + i] * F[6 * b_ + i]
            if a_ == b_:
                if not (s.real > 0) or not (abs(s) < np.inf):
                    return False
                F[7 * a_] = np.sqrt(s)
                Fi[7 * a_] = 1 / F[7 * a_]
            else:
                F[6 * a_ + b_] = s * Fi[7 * b_]
    for a_ in range(6):  # L^{-1}, lower
        for b_ in range(a_):
            s = 0 * F[0]
            for i in range(b_, a_):
                s += F[6 * a_ + i] * Fi[6 * i + b_]
            Fi[6 * a_ + b_] = -s * Fi[7 * a_]
    for a_ in range(6):  # D^{-1} = L^{-*} L^{-1}, symmetric
        for b_ in range(a_, 6):
            s = 0 * F[0]
            for i in range(b_, 6):
                s += Fi[6 * i + a_] * Fi[6 * i + b_]
            DI[6 * a_ + b_] = s
            DI[6 * b_ + a_] = s
    return True


@register
def articulated_bias_6(r, Po, data, ao, bo, z, no):
    """``z(k) = P(k) a(k) + b(k)`` of :func:`~sko.engine.aba.articulated_gather` for a node of
    dimension 6, one right-hand side."""
    put(flat_view(z), no, plus(held(data, bo, 6), times(r, Po, held(data, ao, 6))))


@register
def articulated_gather_6_1(layout, data, roff, r, T, z, out, j, p):
    """The gather step of :func:`~sko.engine.aba.articulated_body` at a rigid body on a 1-dof hinge
    (:func:`rigid_step`), one right-hand side: ``ε = T − H z``, ``ν = D^{-1} ε``, ``z(℘) += φ (z + G ε)``
    (``z⁺`` stays in registers: the scatter does not read it)."""
    zf, nu, no, do = flat_view(z), flat_view(out), layout[j, Flat.NODE], layout[j, Flat.DOF]
    x = held(zf, no, 6)
    e = entry(flat_view(T), do) - dot(held(data, layout[j, Flat.H], 6), x)
    put(nu, do, (entry(nu, do) + entry(r, roff[j, Riccati.D_INVERSE]) * e,))
    if p >= 0:
        y, npo = times(data, layout[j, Flat.W], axpy(x, e, held(r, roff[j, Riccati.G], 6))), layout[p, Flat.NODE]
        put(zf, npo, plus(held(zf, npo, 6), y))


@register
def articulated_scatter_6_1(layout, data, roff, r, z, out, with_ab, j, p):
    """The scatter step of :func:`~sko.engine.aba.articulated_body` at a rigid body on a 1-dof hinge, one
    right-hand side: ``α⁺ = φ* α(℘)``, ``θ̈ = ν − G* α⁺``, ``α = α⁺ + H* θ̈ (+ a)``."""
    zf, nu, no, do = flat_view(z), flat_view(out), layout[j, Flat.NODE], layout[j, Flat.DOF]
    if p >= 0:
        x = transpose_times(data, layout[j, Flat.W], held(zf, layout[p, Flat.NODE], 6))
    else:
        x = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    t = entry(nu, do) - dot(held(r, roff[j, Riccati.G], 6), x)
    put(nu, do, (t,))
    y = axpy(x, t, held(data, layout[j, Flat.H], 6))
    put(zf, no, plus(y, held(data, layout[j, Flat.A], 6)) if with_ab else y)


@register
def articulated_gather_6_6(layout, data, roff, r, T, z, out, j):
    """The gather step of :func:`~sko.engine.aba.articulated_body` at a base body on a 6-dof hinge
    (:func:`base_step`), one right-hand side: ``ε = T − H z``, ``ν = D^{-1} ε`` (no parent to add to)."""
    zf, nu, no, do = flat_view(z), flat_view(out), layout[j, Flat.NODE], layout[j, Flat.DOF]
    e = axpy(held(flat_view(T), do, 6), -1.0, times(data, layout[j, Flat.H], held(zf, no, 6)))
    put(nu, do, plus(held(nu, do, 6), times(r, roff[j, Riccati.D_INVERSE], e)))


@register
def articulated_scatter_6_6(layout, data, z, out, with_ab, j):
    """The scatter step of :func:`~sko.engine.aba.articulated_body` at a base body on a 6-dof hinge,
    one right-hand side: ``θ̈ = ν`` (``α⁺ = 0``), ``α = H* θ̈ (+ a)``."""
    zf, no, do = flat_view(z), layout[j, Flat.NODE], layout[j, Flat.DOF]
    y = transpose_times(data, layout[j, Flat.H], held(flat_view(out), do, 6))
    put(zf, no, plus(y, held(data, layout[j, Flat.A], 6)) if with_ab else y)

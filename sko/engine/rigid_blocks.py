"""6 × 6 blocks in registers, and the steps of the recursions at a rigid body on a 1-dof hinge.

A rigid body has a node of dimension 6; on a 1-dof hinge (revolute, prismatic, helical) its
``H(k)`` is one row and ``D(k)`` one number. Most nodes of a robot are such bodies, so the
recursions take these forms for them (``rigid_step``): every 6-vector is held in registers as
six numbers, every 6 × 6 product written out, and the congruence ``φ S φ*`` with a symmetric
``S`` computed on its 21 distinct entries (a rigid weight's zero lower-left block skips its
products). The steps are register helpers (:func:`~.jit.register`), inlined into the recursion
that takes them; the congruence is a kernel of its own, called: its sums of tuples take seconds
to compile, and calling it costs a few percent of a recursion. The small products of tuples it
and :func:`carry66` take at dozens of call sites (:func:`row6`, :func:`dot`, :func:`dot3`,
:func:`dot_tail`, :func:`symmetric_times`, :func:`lower_times`, :func:`lower_right`), and the
6 × 6 block products :func:`times` and :func:`transpose_times` (each seven register helpers
deep), are inline kernels (:func:`~.jit.inline_kernel`): typed once per signature, not again at
each site, which halves the congruence's compile time; LLVM inlines them, so the machine code is
the same. A step written once for a node of any dimensions (Newton–Euler's,
:mod:`sko.engine.rnea`) reads through :func:`held`, which holds the numbers in registers where
the step is specialised to a rigid body's dimensions (:func:`~.jit.specialised`).
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic
from numba.np.arrayobj import load_item, make_array, populate_array

from sko.engine.layout import Flat, Riccati
from sko.engine.jit import inline_kernel, kernel, register

__all__ = ["held", "rigid_step", "dot6", "times", "transpose_times", "row6", "dot", "congruence66", "congruence_upper",
           "carry66", "lower_left_zero", "riccati_6_1", "articulated_gather_6_1", "articulated_scatter_6_1"]


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


@register
def rigid_step(layout, j, p) -> bool:
    """Whether flat node ``j`` (parent ``p``) has ``m = 6``, ``n = 1`` and a 6-dimensional parent
    or none — a rigid body on a 1-dof hinge — whose steps the recursions take in registers."""
    return layout[j, Flat.NODE_DIM] == 6 and layout[j, Flat.HINGE_DIM] == 1 and (p < 0 or layout[p, Flat.NODE_DIM] == 6)


@register
def dot6(A, b, step, x0, x1, x2, x3, x4, x5):
    """``Σ_i A[b + i·step] x_i``: a row (``step`` 1) or a column (``step`` its row length) of a
    row-major block times six numbers held in registers (literal offsets: the compiler unrolls
    the callers)."""
    return (A[b] * x0 + A[b + step] * x1 + A[b + 2 * step] * x2 + A[b + 3 * step] * x3 + A[b + 4 * step] * x4
            + A[b + 5 * step] * x5)


@register
def block_times(W_, wo, row, col, x):
    """The six sums ``Σ_c W_[wo + i·row + c·col] x_c`` (``i = 0 … 5``) for the 6 × 6 block at
    ``wo`` (row-major) and six numbers ``x``: ``φ x`` with ``(row, col) = (6, 1)``, ``φ* x``
    with ``(1, 6)`` (literal strides: the compiler unrolls the products)."""
    x0, x1, x2, x3, x4, x5 = x
    return (dot6(W_, wo, col, x0, x1, x2, x3, x4, x5), dot6(W_, wo + row, col, x0, x1, x2, x3, x4, x5),
            dot6(W_, wo + 2 * row, col, x0, x1, x2, x3, x4, x5), dot6(W_, wo + 3 * row, col, x0, x1, x2, x3, x4, x5),
            dot6(W_, wo + 4 * row, col, x0, x1, x2, x3, x4, x5), dot6(W_, wo + 5 * row, col, x0, x1, x2, x3, x4, x5))


@inline_kernel
def times(W_, wo, x):
    """``φ x`` for the 6 × 6 block ``φ`` at ``wo`` (row-major) and six numbers ``x``."""
    return block_times(W_, wo, 6, 1, x)


@inline_kernel
def transpose_times(W_, wo, x):
    """``φ* x`` for the 6 × 6 block ``φ`` at ``wo`` and six numbers ``x``."""
    return block_times(W_, wo, 1, 6, x)


@register
def congruence66(W_, wo, S, so, C, co):
    """``C += φ S φ*`` for 6 × 6 blocks (``φ`` at ``wo`` of ``W_``, ``S`` symmetric), in registers:
    ``S`` (:func:`upper66`) and ``φ``'s rows are read before the first store, so ``C`` may share
    ``S``'s array (ℛ, P) and nothing is read back. With ``u_r = S φ(r, :)ᵀ``, ``C(r, c) += φ(c, :) u_r``
    for ``r ≤ c``, mirrored: 342 products. A weight whose lower-left 3 × 3 block is zero — a rigid
    body's ``(ᵏX_o)* = [[Eᵀ, Bᵀ], [0, Eᵀ]]`` — skips the products with those zeros, 216 in all,
    and the same sums (a finite term times zero adds nothing)."""
    congruence_upper(W_, wo, upper66(S, so), C, co)


@kernel
def congruence_upper(W_, wo, s, C, co):
    """``C += φ S φ*`` (:func:`congruence66`) for the symmetric ``S`` of upper triangle ``s``, 21
    numbers held in registers (:func:`upper66`)."""
    p0, p1, p2 = row6(W_, wo), row6(W_, wo + 6), row6(W_, wo + 12)
    u0, u1, u2 = symmetric_times(s, p0), symmetric_times(s, p1), symmetric_times(s, p2)
    upper = (dot(p0, u0), dot(p1, u0), dot(p2, u0), dot(p1, u1), dot(p2, u1), dot(p2, u2))
    if lower_left_zero(W_, wo):
        t3, t4, t5 = lower_right(W_, wo)
        v3, v4, v5 = lower_times(s, t3), lower_times(s, t4), lower_times(s, t5)  # S₂₂ t, 3 numbers
        mixed = (dot_tail(t3, u0), dot_tail(t4, u0), dot_tail(t5, u0), dot_tail(t3, u1), dot_tail(t4, u1),
                 dot_tail(t5, u1), dot_tail(t3, u2), dot_tail(t4, u2), dot_tail(t5, u2))
        lower = (dot3(t3, v3), dot3(t4, v3), dot3(t5, v3), dot3(t4, v4), dot3(t5, v4), dot3(t5, v5))
    else:
        p3, p4, p5 = row6(W_, wo + 18), row6(W_, wo + 24), row6(W_, wo + 30)
        u3, u4 = symmetric_times(s, p3), symmetric_times(s, p4)
        mixed = (dot(p3, u0), dot(p4, u0), dot(p5, u0), dot(p3, u1), dot(p4, u1), dot(p5, u1),
                 dot(p3, u2), dot(p4, u2), dot(p5, u2))
        lower = (dot(p3, u3), dot(p4, u3), dot(p5, u3), dot(p4, u4), dot(p5, u4),
                 dot(p5, symmetric_times(s, p5)))
    add_mirrored(C, co, 0, 0, upper, 3)  # rows and columns 0..2
    for r in range(3):  # rows 0..2, columns 3..5
        for c in range(3):
            x = mixed[3 * r + c]
            C[co + 6 * r + c + 3] += x
            C[co + 6 * (c + 3) + r] += x
    add_mirrored(C, co, 3, 3, lower, 3)  # rows and columns 3..5


@register
def lower_left_zero(W_, wo) -> bool:
    """Whether the 6 × 6 block at ``wo`` has a zero lower-left 3 × 3 block, as a rigid body's
    weight ``(ᵏX_o)* = [[Eᵀ, Bᵀ], [0, Eᵀ]]`` has (a NaN there is not zero)."""
    return (W_[wo + 18] == 0 and W_[wo + 19] == 0 and W_[wo + 20] == 0 and W_[wo + 24] == 0
            and W_[wo + 25] == 0 and W_[wo + 26] == 0 and W_[wo + 30] == 0 and W_[wo + 31] == 0
            and W_[wo + 32] == 0)


@register
def add_mirrored(C, co, r0, c0, v, n):
    """``C(r0 + i, c0 + j) += v_k`` and its mirror for the upper triangle ``i ≤ j < n`` of an
    ``n × n`` diagonal block, given row by row as ``v``."""
    k = 0
    for i in range(n):
        for j in range(i, n):
            C[co + 6 * (r0 + i) + c0 + j] += v[k]
            if i != j:
                C[co + 6 * (c0 + j) + r0 + i] += v[k]
            k += 1


@register
def upper66(S, so):
    """The upper triangle of the symmetric 6 × 6 block of ``S`` at ``so``, row by row (21
    numbers). Each entry is taken as ``S(i, j) + 0 · S(j, i)``: the same number, but a NaN or
    infinity of the lower triangle is not dropped."""
    return (S[so], S[so + 1] + 0 * S[so + 6], S[so + 2] + 0 * S[so + 12], S[so + 3] + 0 * S[so + 18],
            S[so + 4] + 0 * S[so + 24], S[so + 5] + 0 * S[so + 30], S[so + 7], S[so + 8] + 0 * S[so + 13],
            S[so + 9] + 0 * S[so + 19], S[so + 10] + 0 * S[so + 25], S[so + 11] + 0 * S[so + 31], S[so + 14],
            S[so + 15] + 0 * S[so + 20], S[so + 16] + 0 * S[so + 26], S[so + 17] + 0 * S[so + 32], S[so + 21],
            S[so + 22] + 0 * S[so + 27], S[so + 23] + 0 * S[so + 33], S[so + 28], S[so + 29] + 0 * S[so + 34],
            S[so + 35])


@register
def upper_minus_outer(S, so, g, x):
    """The upper triangle of ``S − g xᵀ`` (``S`` the 6 × 6 block at ``so``; six numbers each of ``g``
    and ``x``), row by row, each entry with ``0 ×`` its mirror folded in as in :func:`upper66`:
    ``S − g xᵀ`` is not exactly symmetric, and an entry that overflows below the diagonal is not
    dropped."""
    return (S[so] - g[0] * x[0], (S[so + 1] - g[0] * x[1]) + 0 * (S[so + 6] - g[1] * x[0]),
            (S[so + 2] - g[0] * x[2]) + 0 * (S[so + 12] - g[2] * x[0]),
            (S[so + 3] - g[0] * x[3]) + 0 * (S[so + 18] - g[3] * x[0]),
            (S[so + 4] - g[0] * x[4]) + 0 * (S[so + 24] - g[4] * x[0]),
            (S[so + 5] - g[0] * x[5]) + 0 * (S[so + 30] - g[5] * x[0]), S[so + 7] - g[1] * x[1],
            (S[so + 8] - g[1] * x[2]) + 0 * (S[so + 13] - g[2] * x[1]),
            (S[so + 9] - g[1] * x[3]) + 0 * (S[so + 19] - g[3] * x[1]),
            (S[so + 10] - g[1] * x[4]) + 0 * (S[so + 25] - g[4] * x[1]),
            (S[so + 11] - g[1] * x[5]) + 0 * (S[so + 31] - g[5] * x[1]), S[so + 14] - g[2] * x[2],
            (S[so + 15] - g[2] * x[3]) + 0 * (S[so + 20] - g[3] * x[2]),
            (S[so + 16] - g[2] * x[4]) + 0 * (S[so + 26] - g[4] * x[2]),
            (S[so + 17] - g[2] * x[5]) + 0 * (S[so + 32] - g[5] * x[2]), S[so + 21] - g[3] * x[3],
            (S[so + 22] - g[3] * x[4]) + 0 * (S[so + 27] - g[4] * x[3]),
            (S[so + 23] - g[3] * x[5]) + 0 * (S[so + 33] - g[5] * x[3]), S[so + 28] - g[4] * x[4],
            (S[so + 29] - g[4] * x[5]) + 0 * (S[so + 34] - g[5] * x[4]), S[so + 35] - g[5] * x[5])


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
    registers: ``H P`` (a row), ``D = H P H*`` (a number), ``G = (H P)* / D`` and the upper triangle
    of ``P⁺ = P − G H P`` (:func:`upper_minus_outer`), which the congruence into ``P(℘)`` takes
    as it is; ``P⁺`` and ``ψ`` are stored only if ``full``. Returns ``D``; nothing else is written
    when ``D`` is not positive and finite (the caller reports the node)."""
    p, ho = layout[j, Flat.PARENT], layout[j, Flat.H]
    Po, Go = roff[j, Riccati.P], roff[j, Riccati.G]
    h = row6(data, ho)
    hp = transpose_times(r, Po, h)
    d = dot(hp, h)
    if not (d.real > 0) or not (abs(d) < np.inf):
        return d
    di = 1 / d
    g = (hp[0] * di, hp[1] * di, hp[2] * di, hp[3] * di, hp[4] * di, hp[5] * di)
    u = upper_minus_outer(r, Po, g, hp)  # before the first store into r
    r[roff[j, Riccati.D]], r[roff[j, Riccati.D_INVERSE]] = d, di
    for c in range(6):
        r[Go + c] = g[c]
    if full:  # P⁺ = P − G (H P), every entry
        PPo = roff[j, Riccati.P_PLUS]
        for a_ in range(6):
            for b_ in range(6):
                r[PPo + 6 * a_ + b_] = r[Po + 6 * a_ + b_] - g[a_] * hp[b_]
    if p >= 0:
        wo = layout[j, Flat.W]
        if full:  # K = φ G, ψ = φ − K H
            so = roff[j, Riccati.PSI]
            for a_ in range(6):
                kk = dot(row6(data, wo + 6 * a_), g)
                for b_ in range(6):
                    r[so + 6 * a_ + b_] = data[wo + 6 * a_ + b_] - kk * h[b_]
        congruence_upper(data, wo, u, r, roff[p, Riccati.P])  # P(℘) += φ P⁺ φ*
    return d


@register
def articulated_gather_6_1(layout, data, roff, r, T, z, out, j, p):
    """The gather step of :func:`~sko.engine.aba.articulated_body` at a rigid body on a 1-dof hinge
    (:func:`rigid_step`), one right-hand side: ``ε = T − H z``, ``ν = D^{-1} ε``, ``z(℘) += φ (z + G ε)``
    (``z⁺`` stays in registers: the scatter does not read it)."""
    no, do, go = layout[j, Flat.NODE], layout[j, Flat.DOF], roff[j, Riccati.G]
    z0, z1, z2, z3, z4, z5 = z[no, 0], z[no + 1, 0], z[no + 2, 0], z[no + 3, 0], z[no + 4, 0], z[no + 5, 0]
    e = T[do, 0] - dot6(data, layout[j, Flat.H], 1, z0, z1, z2, z3, z4, z5)
    out[do, 0] += r[roff[j, Riccati.D_INVERSE]] * e
    if p >= 0:
        y = times(data, layout[j, Flat.W], (z0 + r[go] * e, z1 + r[go + 1] * e, z2 + r[go + 2] * e,
                                        z3 + r[go + 3] * e, z4 + r[go + 4] * e, z5 + r[go + 5] * e))
        npo = layout[p, Flat.NODE]
        for i in range(6):
            z[npo + i, 0] += y[i]


@register
def articulated_scatter_6_1(layout, data, roff, r, z, out, with_ab, j, p):
    """The scatter step of :func:`~sko.engine.aba.articulated_body` at a rigid body on a 1-dof hinge, one
    right-hand side: ``α⁺ = φ* α(℘)``, ``θ̈ = ν − G* α⁺``, ``α = α⁺ + H* θ̈ (+ a)``."""
    no, do, ho = layout[j, Flat.NODE], layout[j, Flat.DOF], layout[j, Flat.H]
    if p >= 0:
        npo = layout[p, Flat.NODE]
        x = transpose_times(data, layout[j, Flat.W], (z[npo, 0], z[npo + 1, 0], z[npo + 2, 0], z[npo + 3, 0],
                                                   z[npo + 4, 0], z[npo + 5, 0]))
    else:
        x = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    t = out[do, 0] - dot(row6(r, roff[j, Riccati.G]), x)
    out[do, 0] = t
    ao = layout[j, Flat.A]
    for i in range(6):
        z[no + i, 0] = x[i] + data[ho + i] * t + (data[ao + i] if with_ab else 0.0)

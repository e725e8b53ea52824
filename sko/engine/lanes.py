"""Forward dynamics of a batch of states of a rigid tree with the states innermost (SKO.md §8,
§11, Algorithm 6.1): the articulated-body passes run on :data:`LANES` states at once.

Where every body is a library :class:`~sko.bodies.rigid.RigidBody` (:func:`applies`), every node is
6-dimensional and every weight ``φ(℘(k), k) = [[Eᵀ, Bᵀ], [0, Eᵀ]]`` a rigid transform
(:mod:`sko.engine.mass_matrix`). :func:`forward_dynamics` takes the states of a batch in blocks of
:data:`LANES`: each state's arena is filled by the bodies' own state kernels (the per-state fill of
:func:`~sko.engine.request_views.fill_arena`, with the compiled hinge forces), and its flat model
``(φ, H, a, b)`` copied into lane ``l`` of a *lane buffer*, whose row ``i`` holds entry ``i`` of
every state of the block side by side (structure of arrays; ``M``, constant, is copied once per
lane). The fill stays per state, as do the joints' kinematics. The Riccati gather (Eq. 33) and the two passes of Algorithm 6.1 then run once per
block on :class:`Lanes` numbers: one number of every state of the block, held in one vector
register, with ``+ − × /`` acting lane by lane. Each step is written once, as the scalar code of
:mod:`sko.engine.rigid_blocks` (a rigid body on a 1-dof hinge: ``D`` one number, the congruence
``φ P⁺ φ*`` on the 21 entries of the symmetric ``P⁺``, 216 products) or of
:func:`~sko.engine.aba.riccati` for a node of any hinge (a floating base's 6-dof root, a fixed
joint; its ``φ P⁺ φ*`` by the same triangle congruence, where the per-state step multiplies the
dense blocks). A state's result equals its one-state call's to rounding, not bit for bit: the
sums of a node of any hinge come in another order, and the compiler may fuse a multiply–add in
one and not in the other.

numba compiles a loop over the lanes, ``for l in range(LANES)``, as scalar code (the loop of
constant length is unrolled before LLVM's loop vectoriser runs, its SLP vectoriser is off, and
``X[o, l]`` carries a test for a negative index): hence the explicit vector type. The lane
buffers are flat ``(rows × LANES)`` arrays, the layout a GPU kernel takes too. The 6-vector steps
are inline kernels (typed once, inlined by LLVM) and the parallel driver calls the kernel of a chunk
of blocks at its address (:func:`~sko.engine.jit.native_caller`), so the passes' machine code is
generated once.

A state whose ``D(k)`` is not positive definite gets the status of the per-state kernels
(``N + k``, :mod:`sko.engine.requests`): the lanes compute on (a NaN stays in its lane) and the
first such node of the gather is the one reported. The tail of ``B mod LANES`` states runs in a
block padded with copies of its first state. Blocks run in parallel in chunks of :data:`CHUNK`.
"""

from __future__ import annotations

import operator

import numpy as np
from llvmlite import ir
from numba import prange, types
from numba.core import cgutils
from numba.core.imputils import lower_builtin
from numba.core.typing.templates import ConcreteTemplate, infer_global, signature
from numba.extending import intrinsic, models, register_model
from numba.np.arrayobj import make_array

from sko.engine import mass_matrix as MM
from sko.engine import rigid_blocks as rb
from sko.engine.borrow import borrowed
from sko.engine.hooks import add_hinge_forces
from sko.engine.jit import FAST_MATH, inline_kernel, kernel, native_address, native_caller, register
from sko.engine.fields import offsets
from sko.engine.layout import Flat, Riccati
from sko.engine.request_views import Header, fill_arena, request_views
from sko.engine.state_kernels import Terms

__all__ = ["LANES", "CHUNK", "LaneScratch", "Lanes", "applies", "forward_dynamics", "buffers", "block"]

LANES = 4  #: states per block: one vector register of float64 (AVX2)
CHUNK = 4  #: blocks per task of a parallel batch
#: The lane scratch of a Riccati step of any hinge (:func:`_riccati_any`), in rows of
#: :data:`LANES` numbers, a 6 × 6 block each: ``H P``, ``L``, ``L^{-1}``, ``Y = L^{-1} H P``, ``P⁺``.
LaneScratch = offsets("LaneScratch", HP=36, L=36, Li=36, Y=36, P_plus=36)


def applies(layout) -> bool:
    """Whether :func:`forward_dynamics` takes the system of ``layout`` (a
    :class:`~sko.engine.state_layout.StateLayout`): every body compiled by the library's rigid
    body kernel (6-dimensional nodes, rigid weights), each inertia symmetric to rounding (the
    lanes read the upper triangle of ``P``), as :func:`sko.engine.mass_matrix.applies` decides."""
    return MM.applies(layout)


# ----------------------------------------------------------------------------- the lane numbers
class Lanes(types.Type):
    """The numba type of :data:`LANES` float64 numbers, one per state of a block, held in one
    LLVM vector (``<LANES x double>``)."""

    def __init__(self):
        super().__init__(name=f"Lanes{LANES}")


LANE_TYPE = Lanes()
_VECTOR = ir.VectorType(ir.DoubleType(), LANES)
_FLAGS = tuple(sorted(FAST_MATH))


@register_model(Lanes)
class _LanesModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, _VECTOR)


def _row_address(context, builder, signature, args):
    """The address of row ``args[1]`` of the flat lane buffer ``args[0]``, as a vector pointer."""
    data = make_array(signature.args[0])(context, builder, args[0]).data
    row = context.cast(builder, args[1], signature.args[1], types.intp)
    address = builder.gep(data, [builder.mul(row, ir.Constant(ir.IntType(64), LANES))])
    return builder.bitcast(address, _VECTOR.as_pointer())


@intrinsic
def row(typingctx, X, i):
    """Row ``i`` of the lane buffer ``X`` (entries ``i·LANES … i·LANES + LANES − 1``)."""
    if not (isinstance(X, types.Array) and X.dtype == types.float64 and isinstance(i, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        return builder.load(_row_address(context, builder, signature, args), align=8)

    return LANE_TYPE(X, i), codegen


@intrinsic
def set_row(typingctx, X, i, v):
    """Row ``i`` of the lane buffer ``X`` ← ``v``."""
    if not (isinstance(X, types.Array) and X.dtype == types.float64 and isinstance(v, Lanes)):
        return None

    def codegen(context, builder, signature, args):
        builder.store(args[2], _row_address(context, builder, signature, args), align=8)
        return context.get_dummy_value()

    return types.none(X, i, v), codegen


@intrinsic
def splat(typingctx, x):
    """The number ``x`` in every lane."""
    if not isinstance(x, (types.Float, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        return _vector(context, builder, args[0], signature.args[0])

    return LANE_TYPE(x), codegen


def _vector(context, builder, value, of):
    """``value`` of numba type ``of`` as a lane vector: itself, or a number in every lane."""
    if isinstance(of, Lanes):
        return value
    x = context.cast(builder, value, of, types.float64)
    out = ir.Constant(_VECTOR, ir.Undefined)
    for k in range(LANES):
        out = builder.insert_element(out, x, ir.Constant(ir.IntType(32), k))
    return out


def _operator(op, name: str) -> None:
    """``op`` (``+ − × /``) on two lane numbers, or a lane number and a number (in every lane)."""
    cases = [signature(LANE_TYPE, LANE_TYPE, LANE_TYPE)]
    for number in (types.float64, types.int64):
        cases += [signature(LANE_TYPE, number, LANE_TYPE), signature(LANE_TYPE, LANE_TYPE, number)]
    infer_global(op)(type(f"Lanes_{name}", (ConcreteTemplate,), {"cases": cases}))

    def lower(context, builder, sig, args):
        a, b = (_vector(context, builder, v, t) for v, t in zip(args, sig.args))
        return getattr(builder, name)(a, b, flags=_FLAGS)

    for left, right in ((Lanes, Lanes), (types.Number, Lanes), (Lanes, types.Number)):
        lower_builtin(op, left, right)(lower)


for _op, _name in ((operator.add, "fadd"), (operator.sub, "fsub"), (operator.mul, "fmul"),
                   (operator.truediv, "fdiv")):
    _operator(_op, _name)


def _intrinsic(builder, name: str):
    """LLVM's intrinsic ``name`` on the lane vector (``llvm.sqrt.v4f64``, ...)."""
    return cgutils.get_or_insert_function(builder.module, ir.FunctionType(_VECTOR, [_VECTOR]),
                                          f"llvm.{name}.v{LANES}f64")


@intrinsic
def square_root(typingctx, v):
    """``√v`` lane by lane (NaN where ``v < 0``)."""
    if not isinstance(v, Lanes):
        return None

    def codegen(context, builder, signature, args):
        return builder.call(_intrinsic(builder, "sqrt"), [args[0]])

    return LANE_TYPE(v), codegen


@intrinsic
def admissible(typingctx, v):
    """1 in the lanes where ``v`` is positive and finite, else 0 (a pivot of ``D``)."""
    if not isinstance(v, Lanes):
        return None

    def codegen(context, builder, signature, args):
        positive = builder.fcmp_ordered(">", args[0], ir.Constant(_VECTOR, [0.0] * LANES))
        size = builder.call(_intrinsic(builder, "fabs"), [args[0]])
        finite = builder.fcmp_ordered("<", size, ir.Constant(_VECTOR, [np.inf] * LANES))
        return builder.uitofp(builder.and_(positive, finite), _VECTOR)

    return LANE_TYPE(v), codegen


@register
def _add(X, i, v):
    """Row ``i`` of ``X`` += ``v``."""
    set_row(X, i, row(X, i) + v)


# ----------------------------------------------------------------------------- 6-vectors in lanes
@register
def _six(X, o):
    """Rows ``o … o + 5`` of the lane buffer ``X``."""
    return row(X, o), row(X, o + 1), row(X, o + 2), row(X, o + 3), row(X, o + 4), row(X, o + 5)


@inline_kernel
def _upper(X, o):
    """The upper triangle of the symmetric 6 × 6 block at row ``o`` (21 numbers, row by row),
    each entry ``S(i, j) + 0 · S(j, i)`` (:func:`~sko.engine.rigid_blocks.upper66`: a NaN below
    the diagonal is not dropped)."""
    return (row(X, o), row(X, o + 1) + 0 * row(X, o + 6), row(X, o + 2) + 0 * row(X, o + 12),
            row(X, o + 3) + 0 * row(X, o + 18), row(X, o + 4) + 0 * row(X, o + 24),
            row(X, o + 5) + 0 * row(X, o + 30), row(X, o + 7), row(X, o + 8) + 0 * row(X, o + 13),
            row(X, o + 9) + 0 * row(X, o + 19), row(X, o + 10) + 0 * row(X, o + 25),
            row(X, o + 11) + 0 * row(X, o + 31), row(X, o + 14), row(X, o + 15) + 0 * row(X, o + 20),
            row(X, o + 16) + 0 * row(X, o + 26), row(X, o + 17) + 0 * row(X, o + 32), row(X, o + 21),
            row(X, o + 22) + 0 * row(X, o + 27), row(X, o + 23) + 0 * row(X, o + 33), row(X, o + 28),
            row(X, o + 29) + 0 * row(X, o + 34), row(X, o + 35))


@inline_kernel
def _times(X, wo, x):
    """``φ x`` for the rigid weight ``φ`` (zero lower-left block) at row ``wo`` of ``X``."""
    return (rb.dot(_six(X, wo), x), rb.dot(_six(X, wo + 6), x), rb.dot(_six(X, wo + 12), x),
            row(X, wo + 21) * x[3] + row(X, wo + 22) * x[4] + row(X, wo + 23) * x[5],
            row(X, wo + 27) * x[3] + row(X, wo + 28) * x[4] + row(X, wo + 29) * x[5],
            row(X, wo + 33) * x[3] + row(X, wo + 34) * x[4] + row(X, wo + 35) * x[5])


@inline_kernel
def _transpose_times(X, wo, x):
    """``φ* x`` for the rigid weight ``φ`` (zero lower-left block) at row ``wo`` of ``X``."""
    x0, x1, x2, x3, x4, x5 = x
    return (row(X, wo) * x0 + row(X, wo + 6) * x1 + row(X, wo + 12) * x2,
            row(X, wo + 1) * x0 + row(X, wo + 7) * x1 + row(X, wo + 13) * x2,
            row(X, wo + 2) * x0 + row(X, wo + 8) * x1 + row(X, wo + 14) * x2,
            row(X, wo + 3) * x0 + row(X, wo + 9) * x1 + row(X, wo + 15) * x2 + row(X, wo + 21) * x3
            + row(X, wo + 27) * x4 + row(X, wo + 33) * x5,
            row(X, wo + 4) * x0 + row(X, wo + 10) * x1 + row(X, wo + 16) * x2 + row(X, wo + 22) * x3
            + row(X, wo + 28) * x4 + row(X, wo + 34) * x5,
            row(X, wo + 5) * x0 + row(X, wo + 11) * x1 + row(X, wo + 17) * x2 + row(X, wo + 23) * x3
            + row(X, wo + 29) * x4 + row(X, wo + 35) * x5)


@register
def _add_symmetric3(C, o, s00, s01, s02, s11, s12, s22):
    """``C += S`` on the 3 × 3 diagonal block at row ``o`` of a row-major 6 × 6 in ``C``, for the
    symmetric ``S`` of upper triangle ``s``: each off-diagonal entry added with its mirror."""
    _add(C, o, s00)
    _add(C, o + 1, s01)
    _add(C, o + 6, s01)
    _add(C, o + 2, s02)
    _add(C, o + 12, s02)
    _add(C, o + 7, s11)
    _add(C, o + 8, s12)
    _add(C, o + 13, s12)
    _add(C, o + 14, s22)


@inline_kernel
def _congruence(X, wo, s, C, co):
    """``C += φ S φ*`` for the rigid weight ``φ`` at row ``wo`` of ``X`` and the symmetric ``S``
    of upper triangle ``s`` (:func:`~sko.engine.rigid_blocks.congruence_upper`, its
    zero-lower-left form: 216 products), into the 6 × 6 block at row ``co`` of ``C``."""
    p0, p1, p2 = _six(X, wo), _six(X, wo + 6), _six(X, wo + 12)
    u0, u1, u2 = rb.symmetric_times(s, p0), rb.symmetric_times(s, p1), rb.symmetric_times(s, p2)
    t3 = (row(X, wo + 21), row(X, wo + 22), row(X, wo + 23))
    t4 = (row(X, wo + 27), row(X, wo + 28), row(X, wo + 29))
    t5 = (row(X, wo + 33), row(X, wo + 34), row(X, wo + 35))
    v3, v4, v5 = rb.lower_times(s, t3), rb.lower_times(s, t4), rb.lower_times(s, t5)
    _add_symmetric3(C, co, rb.dot(p0, u0), rb.dot(p1, u0), rb.dot(p2, u0), rb.dot(p1, u1), rb.dot(p2, u1),
                    rb.dot(p2, u2))  # rows and columns 0..2
    for r, u in ((0, u0), (1, u1), (2, u2)):  # rows 0..2, columns 3..5 and their mirror
        x = rb.dot_tail(t3, u)
        _add(C, co + 6 * r + 3, x)
        _add(C, co + 18 + r, x)
        x = rb.dot_tail(t4, u)
        _add(C, co + 6 * r + 4, x)
        _add(C, co + 24 + r, x)
        x = rb.dot_tail(t5, u)
        _add(C, co + 6 * r + 5, x)
        _add(C, co + 30 + r, x)
    _add_symmetric3(C, co + 21, rb.dot3(t3, v3), rb.dot3(t4, v3), rb.dot3(t5, v3), rb.dot3(t4, v4), rb.dot3(t5, v4),
                    rb.dot3(t5, v5))  # rows and columns 3..5


# ----------------------------------------------------------------------------- the Riccati gather
@inline_kernel
def _riccati_6_1(layout, data, roff, r, j, p, ok):
    """The Riccati step at a rigid body on a 1-dof hinge (:func:`~sko.engine.rigid_blocks.riccati_6_1`):
    ``H P``, ``D = H P H*``, ``G = (H P)* / D``, the upper triangle of ``P⁺ = P − G H P`` and
    ``P(℘) += φ P⁺ φ*``; ``ok`` (one row) is 0 in the lanes where ``D`` is not positive and finite."""
    ho, Po, Go = layout[j, Flat.H], roff[j, Riccati.P], roff[j, Riccati.G]
    s = _upper(r, Po)
    hp = rb.symmetric_times(s, _six(data, ho))
    d = rb.dot(hp, _six(data, ho))
    di = 1 / d
    set_row(ok, 0, row(ok, 0) * admissible(d))
    set_row(r, roff[j, Riccati.D], d)
    set_row(r, roff[j, Riccati.D_INVERSE], di)
    g = (hp[0] * di, hp[1] * di, hp[2] * di, hp[3] * di, hp[4] * di, hp[5] * di)
    for c in range(6):
        set_row(r, Go + c, g[c])
    if p < 0:
        return
    u = (s[0] - g[0] * hp[0], s[1] - g[0] * hp[1], s[2] - g[0] * hp[2], s[3] - g[0] * hp[3], s[4] - g[0] * hp[4],
         s[5] - g[0] * hp[5], s[6] - g[1] * hp[1], s[7] - g[1] * hp[2], s[8] - g[1] * hp[3], s[9] - g[1] * hp[4],
         s[10] - g[1] * hp[5], s[11] - g[2] * hp[2], s[12] - g[2] * hp[3], s[13] - g[2] * hp[4],
         s[14] - g[2] * hp[5], s[15] - g[3] * hp[3], s[16] - g[3] * hp[4], s[17] - g[3] * hp[5],
         s[18] - g[4] * hp[4], s[19] - g[4] * hp[5], s[20] - g[5] * hp[5])
    _congruence(data, layout[j, Flat.W], u, r, roff[p, Riccati.P])


@inline_kernel
def _riccati_any(layout, data, roff, r, t, j, p, ok):
    """The Riccati step of :func:`~sko.engine.aba.riccati` at a node of ``h`` hinge columns
    (any ``h``: a 6-dof root, a fixed joint), in the lane scratch ``t``: ``H P``,
    ``D = H P H*``, its Cholesky factor ``L`` (no conjugation) and ``L^{-1}``,
    ``D^{-1} = L^{-*} L^{-1}``, ``Y = L^{-1} H P``, ``G = (L^{-*} Y)*``, ``P⁺ = P − Y* Y`` and
    ``P(℘) += φ P⁺ φ*``; ``ok`` is 0 in the lanes where a pivot of ``L`` is not positive and finite."""
    h, ho = layout[j, Flat.HINGE_DIM], layout[j, Flat.H]
    Po, Go, DIo, Do = roff[j, Riccati.P], roff[j, Riccati.G], roff[j, Riccati.D_INVERSE], roff[j, Riccati.D]
    HP, Lo, Li, Y, PP = LaneScratch.HP, LaneScratch.L, LaneScratch.Li, LaneScratch.Y, LaneScratch.P_plus
    zero = splat(0.0)
    for a_ in range(h):
        for c in range(6):  # H P
            x = zero
            for i in range(6):
                x = x + row(data, ho + 6 * a_ + i) * row(r, Po + 6 * i + c)
            set_row(t, HP + 6 * a_ + c, x)
    for a_ in range(h):
        for b_ in range(h):  # D = (H P) H*
            x = zero
            for i in range(6):
                x = x + row(t, HP + 6 * a_ + i) * row(data, ho + 6 * b_ + i)
            set_row(r, Do + a_ * h + b_, x)
    for a_ in range(h):  # L L* = D
        for b_ in range(a_ + 1):
            x = row(r, Do + a_ * h + b_)
            for i in range(b_):
                x = x - row(t, Lo + a_ * h + i) * row(t, Lo + b_ * h + i)
            if a_ == b_:
                set_row(ok, 0, row(ok, 0) * admissible(x))
                set_row(t, Lo + a_ * h + a_, square_root(x))
            else:
                set_row(t, Lo + a_ * h + b_, x / row(t, Lo + b_ * h + b_))
    for a_ in range(h):  # L^{-1}
        set_row(t, Li + a_ * h + a_, 1 / row(t, Lo + a_ * h + a_))
        for b_ in range(a_):
            x = zero
            for i in range(b_, a_):
                x = x + row(t, Lo + a_ * h + i) * row(t, Li + i * h + b_)
            set_row(t, Li + a_ * h + b_, (zero - x) / row(t, Lo + a_ * h + a_))
    for a_ in range(h):  # D^{-1} = L^{-*} L^{-1}
        for b_ in range(h):
            x = zero
            for i in range(max(a_, b_), h):
                x = x + row(t, Li + i * h + a_) * row(t, Li + i * h + b_)
            set_row(r, DIo + a_ * h + b_, x)
    for a_ in range(h):  # Y = L^{-1} H P
        for c in range(6):
            x = zero
            for i in range(a_ + 1):
                x = x + row(t, Li + a_ * h + i) * row(t, HP + 6 * i + c)
            set_row(t, Y + 6 * a_ + c, x)
    for c in range(6):  # G = (L^{-*} Y)*, 6 × h
        for a_ in range(h):
            x = zero
            for i in range(a_, h):
                x = x + row(t, Li + i * h + a_) * row(t, Y + 6 * i + c)
            set_row(r, Go + c * h + a_, x)
    if p < 0:
        return
    for a_ in range(6):  # P⁺ = P − Y* Y
        for b_ in range(6):
            x = row(r, Po + 6 * a_ + b_)
            for i in range(h):
                x = x - row(t, Y + 6 * i + a_) * row(t, Y + 6 * i + b_)
            set_row(t, PP + 6 * a_ + b_, x)
    _congruence(data, layout[j, Flat.W], _upper(t, PP), r, roff[p, Riccati.P])


@kernel
def _riccati(layout, data, roff, r, t, ok, bad):
    """The Riccati gather (Eq. 33) in every lane: ``P(k)`` starts as ``M(k)``; ``bad[l]`` is the
    first node (children first) whose ``D`` is not positive definite in lane ``l``, or −1."""
    layout, data, roff, r, t, ok, bad = (borrowed(layout), borrowed(data), borrowed(roff), borrowed(r), borrowed(t),
                                         borrowed(ok), borrowed(bad))
    n = layout.shape[0]
    for j in range(n):
        mo, Po = layout[j, Flat.M], roff[j, Riccati.P]
        for i in range(36):
            set_row(r, Po + i, row(data, mo + i))
    for l in range(LANES):
        bad[l] = -1
    for j in range(n - 1, -1, -1):
        p = layout[j, Flat.PARENT]
        set_row(ok, 0, splat(1.0))
        if layout[j, Flat.HINGE_DIM] == 1:
            _riccati_6_1(layout, data, roff, r, j, p, ok)
        else:
            _riccati_any(layout, data, roff, r, t, j, p, ok)
        for l in range(LANES):
            if ok[l] == 0.0 and bad[l] < 0:
                bad[l] = j


# ----------------------------------------------------------------------------- Algorithm 6.1
@kernel
def _gather(layout, data, roff, r, T, z, nu):
    """The gather of Algorithm 6.1 in every lane: ``z(k) = P(k) a(k) + b(k)``, then children first
    ``ε = T − H z``, ``ν = D^{-1} ε``, ``z(℘) += φ (z + G ε)`` (``T`` is overwritten by ``ε``)."""
    layout, data, roff, r, T, z, nu = (borrowed(layout), borrowed(data), borrowed(roff), borrowed(r), borrowed(T),
                                       borrowed(z), borrowed(nu))
    n = layout.shape[0]
    for j in range(n):
        no, ao, bo, Po = layout[j, Flat.NODE], layout[j, Flat.A], layout[j, Flat.B], roff[j, Riccati.P]
        a = _six(data, ao)
        for i in range(6):
            set_row(z, no + i, row(data, bo + i) + rb.dot(_six(r, Po + 6 * i), a))
    for j in range(n - 1, -1, -1):
        p, h, no, do = layout[j, Flat.PARENT], layout[j, Flat.HINGE_DIM], layout[j, Flat.NODE], layout[j, Flat.DOF]
        ho, Go, DIo, wo = layout[j, Flat.H], roff[j, Riccati.G], roff[j, Riccati.D_INVERSE], layout[j, Flat.W]
        if h == 1:
            y = _six(z, no)
            e = row(T, do) - rb.dot(_six(data, ho), y)
            set_row(nu, do, row(r, DIo) * e)
            if p >= 0:
                x = _times(data, wo, (y[0] + row(r, Go) * e, y[1] + row(r, Go + 1) * e, y[2] + row(r, Go + 2) * e,
                                      y[3] + row(r, Go + 3) * e, y[4] + row(r, Go + 4) * e, y[5] + row(r, Go + 5) * e))
                npo = layout[p, Flat.NODE]
                for i in range(6):
                    _add(z, npo + i, x[i])
            continue
        for a_ in range(h):  # ε = T − H z
            set_row(T, do + a_, row(T, do + a_) - rb.dot(_six(data, ho + 6 * a_), _six(z, no)))
        for a_ in range(h):  # ν = D^{-1} ε
            x = splat(0.0)
            for i in range(h):
                x = x + row(r, DIo + a_ * h + i) * row(T, do + i)
            set_row(nu, do + a_, x)
        for i in range(6):  # z⁺ = z + G ε
            x = splat(0.0)
            for a_ in range(h):
                x = x + row(r, Go + i * h + a_) * row(T, do + a_)
            _add(z, no + i, x)
        if p >= 0:
            x = _times(data, wo, _six(z, no))
            npo = layout[p, Flat.NODE]
            for i in range(6):
                _add(z, npo + i, x[i])


@kernel
def _scatter(layout, data, roff, r, z, nu):
    """The scatter of Algorithm 6.1 in every lane, parents first: ``α⁺ = φ* α(℘)``,
    ``θ̈ = ν − G* α⁺`` (into ``nu``), ``α = α⁺ + H* θ̈ + a`` (into ``z``)."""
    layout, data, roff, r, z, nu = (borrowed(layout), borrowed(data), borrowed(roff), borrowed(r), borrowed(z),
                                    borrowed(nu))
    for j in range(layout.shape[0]):
        p, h, no, do = layout[j, Flat.PARENT], layout[j, Flat.HINGE_DIM], layout[j, Flat.NODE], layout[j, Flat.DOF]
        ho, Go, ao = layout[j, Flat.H], roff[j, Riccati.G], layout[j, Flat.A]
        if p >= 0:
            x = _transpose_times(data, layout[j, Flat.W], _six(z, layout[p, Flat.NODE]))
        else:
            zero = splat(0.0)
            x = (zero, zero, zero, zero, zero, zero)
        if h == 1:
            t = row(nu, do) - rb.dot(_six(r, Go), x)
            set_row(nu, do, t)
            for i in range(6):
                set_row(z, no + i, x[i] + row(data, ho + i) * t + row(data, ao + i))
            continue
        for a_ in range(h):
            y = splat(0.0)
            for i in range(6):
                y = y + row(r, Go + i * h + a_) * x[i]
            set_row(nu, do + a_, row(nu, do + a_) - y)
        for i in range(6):
            y = splat(0.0)
            for a_ in range(h):
                y = y + row(data, ho + 6 * a_ + i) * row(nu, do + a_)
            set_row(z, no + i, x[i] + y + row(data, ao + i))


# ----------------------------------------------------------------------------- a batch
@register
def _copy(arena, data, l, o, n):
    """Entries ``o … o + n − 1`` of a state's arena into lane ``l`` of the lane buffer ``data``."""
    for i in range(o, o + n):
        data[i * LANES + l] = arena[i]


def forward_dynamics(w, Q, QD, X, out, status, sizes) -> None:
    """``θ̈ = ℳ^{-1}(T − 𝒞 − hinge)`` at every state of a batch (module docstring): ``w`` is the
    ``forward_dynamics`` request vector (float64, filling its arena), ``Q`` (B × nq), ``QD`` and
    ``X`` (B × nv), into ``out`` (B × nv) and ``status`` (B; the per-state kernels' codes,
    :mod:`sko.engine.requests`, ``-3`` for a result that is not finite). ``sizes``: the flat
    data's and the Riccati buffer's lengths. All arrays C-ordered and writeable."""
    _batch(w, Q, QD, X, out, status, sizes, _chunk_address())


def _chunk_address() -> int:
    """The address of :func:`_chunk` (compiled or loaded on first use; numba's dispatcher keeps
    it, so a later call only looks it up): the parallel driver calls
    it there, so its machine code (the passes' most of all) is generated once, not again inside
    the driver's."""
    return native_address(_chunk, _CHUNK_TYPES)


_F1, _F2, _I1 = types.Array(types.float64, 1, "C"), types.Array(types.float64, 2, "C"), types.Array(types.int64, 1, "C")
#: the argument types :func:`_chunk` is compiled for
_CHUNK_TYPES = (_F1, _F2, _F2, _F2, _F2, _I1, _I1, types.int64)
#: ``_call_chunk(address, (w, Q, QD, X, out, status, sizes, c))``: :func:`_chunk` at its address;
#: −1, or −5 when it raised. A call with other argument types does not compile.
_call_chunk = native_caller(types.int64, -5, lambda argtypes: argtypes == _CHUNK_TYPES)


@kernel(entry=True, parallel=True)
def _batch(w, Q, QD, X, out, status, sizes, address):
    """:func:`forward_dynamics`: each chunk of :data:`CHUNK` blocks a task of numba's threads; the
    states of a chunk that raised (no memory for its buffers) are reported not finite, which the
    checked path answers."""
    blocks = (Q.shape[0] + LANES - 1) // LANES
    for c in prange((blocks + CHUNK - 1) // CHUNK):
        if _call_chunk(address, (w, Q, QD, X, out, status, sizes, np.int64(c))) != -1:
            for s in range(c * CHUNK * LANES, min(Q.shape[0], (c + 1) * CHUNK * LANES)):
                status[s] = -3


@kernel
def _chunk(w, Q, QD, X, out, status, sizes, c):
    """The blocks of chunk ``c`` of :func:`forward_dynamics`, on their own copy of ``w`` and lane
    buffers (:func:`buffers`), each block by :func:`block`. Returns −1."""
    Q, QD, X, out, status = borrowed(Q), borrowed(QD), borrowed(X), borrowed(out), borrowed(status)
    B = Q.shape[0]
    local = w.copy()
    work = buffers(local, sizes)
    for b in range(c * CHUNK, min((B + LANES - 1) // LANES, c * CHUNK + CHUNK)):
        block(local, work, Q, QD, X, out, status, b * LANES, min(LANES, B - b * LANES))
    return -1


@register
def buffers(local, sizes):
    """The lane buffers of :func:`block` for the request vector ``local`` (a chunk's own copy):
    the flat data ``(φ, H, M, a, b)``, the Riccati buffer, ``z``, ``T``, ``ν``, the
    :data:`LaneScratch`, the lanes' admissibility and first bad node, the hinge forces' right-hand
    side and which lanes hold every ``M(k)``."""
    lwords = local.view(np.int64)
    nv, ns = lwords[Header.NV], lwords[Header.NS]
    return (np.zeros(sizes[0] * LANES), np.zeros(sizes[1] * LANES), np.zeros(ns * LANES), np.zeros(nv * LANES),
            np.zeros(nv * LANES), np.zeros(LaneScratch.SIZE * LANES), np.ones(LANES), np.zeros(LANES, dtype=np.int64),
            np.zeros(nv), np.zeros(LANES, dtype=np.bool_))


@register
def block(local, work, Q, QD, X, out, status, first, count):
    """``θ̈`` of the states ``first … first + count − 1`` (``count ≤ LANES``) of ``Q``, ``QD``,
    ``X`` into the same rows of ``out`` and ``status`` (as :func:`forward_dynamics`), on the
    request vector ``local`` and the lane buffers ``work`` of :func:`buffers`: each state filled
    and copied into its lane, the passes once, each lane's result and status out."""
    lwords, rows, layout, roff, reals, arena, ws, at = request_views(local)
    data, r, z, T, nu, t, ok, bad, rhs, inertias = work
    nq, nv, N = lwords[Header.NQ], lwords[Header.NV], lwords[Header.N]
    size = data.shape[0] // LANES
    for l in range(count):
        s = first + l
        for i in range(nq):
            arena[lwords[Header.Q] + i] = Q[s, i]
        for i in range(nv):
            arena[lwords[Header.V] + i] = QD[s, i]
            rhs[i] = X[s, i]
        whole = lwords[Header.WRITTEN] == 0 or not inertias[l]  # the fill writes M once: constant
        st_ = fill_arena(lwords, rows, reals, arena, Terms.MOTION)
        if not 0 <= st_ < N:
            lwords[Header.WRITTEN] = 1
        if st_ < 0 and lwords[Header.HINGES] != 0:
            hb = add_hinge_forces(rows, reals, arena, lwords[Header.V], rhs, -1.0)
            st_ = -1 if hb < 0 else 2 * N + hb
        status[s] = st_
        if whole:
            for i in range(size):
                data[i * LANES + l] = arena[i]
            inertias[l] = not 0 <= st_ < N
        else:  # φ, H, a and b of each node; its M(k) is held from before
            for j in range(layout.shape[0]):
                if layout[j, Flat.PARENT] >= 0:
                    _copy(arena, data, l, layout[j, Flat.W], 36)
                _copy(arena, data, l, layout[j, Flat.H], 6 * layout[j, Flat.HINGE_DIM])
                _copy(arena, data, l, layout[j, Flat.A], 6)
                _copy(arena, data, l, layout[j, Flat.B], 6)
        for i in range(nv):
            T[i * LANES + l] = rhs[i]
    for l in range(count, LANES):  # the tail: copies of the block's first state
        for i in range(size):
            data[i * LANES + l] = data[i * LANES]
        for i in range(nv):
            T[i * LANES + l] = T[i * LANES]
        inertias[l] = inertias[0]
    _riccati(layout, data, roff, r, t, ok, bad)
    _gather(layout, data, roff, r, T, z, nu)
    _scatter(layout, data, roff, r, z, nu)
    for l in range(count):
        s = first + l
        if status[s] >= 0:
            continue
        if bad[l] >= 0:
            status[s] = N + layout[bad[l], Flat.BODY]
            continue
        x = 0.0
        for i in range(nv):
            out[s, i] = nu[i * LANES + l]
            x += 0.0 * nu[i * LANES + l]
        if x != 0.0:
            status[s] = -3

"""Forward dynamics of a batch of states of a rigid tree with the states innermost (SKO.md §8,
§11, Algorithm 6.1): the articulated-body passes run on :data:`LANES` states at once.

Where every body is a library :class:`~sko.bodies.rigid.RigidBody` (:func:`applies`), every node is
6-dimensional and every weight ``φ(℘(k), k) = [[Eᵀ, Bᵀ], [0, Eᵀ]]`` a rigid transform
(:mod:`sko.engine.mass_matrix`). :func:`forward_dynamics` takes the states of a batch in blocks of
:data:`LANES`, held in *lane buffers*, whose row ``i`` holds entry ``i`` of every state of the
block side by side (structure of arrays): the flat model ``(φ, H, M, a, b)``, the Riccati
quantities, ``z``, ``T`` and ``ν``. The fill, parents first: a body on a revolute (helical) or
prismatic joint computes its terms in the lanes, as its per-state kernel does
(:func:`~sko.engine.bodies.rigid.hinge`; RIGID.md): ``ᵏX_o`` from each lane's ``cos θ``,
``sin θ`` (Rodrigues), then ``φ``, ``v``, ``a``, ``b``; so does a body on a free joint (a floating
base: ``ᵏX_o`` from each lane's quaternion and position, RIGID.md, *Joint library*); a body on any
other joint (a spherical joint, a reversed one) or with a checked kernel runs its own state kernel
state by state, on the arena, fed its inboard velocity from the lanes, and its outputs are copied
into its lane. What no state changes (``M``, ``H`` of a single-axis or free joint, the zero blocks
of ``φ``) is copied into every lane once, from a first whole fill of one state. The compiled
hinge forces run state by state. The Riccati gather (Eq. 33) and the two passes of Algorithm 6.1
then run once per block on :class:`Lanes` numbers: one number of every state of the block, held
in one vector register, with ``+ − × /`` acting lane by lane. Each step is written once, as the scalar code of
:mod:`sko.engine.rigid_blocks` (a rigid body on a 1-dof hinge: ``D`` one number, the congruence
``φ P⁺ φ*`` on the 21 entries of the symmetric ``P⁺``, 216 products) or of
:func:`~sko.engine.aba.riccati` for a node of any hinge (a fixed joint, a spherical one; its
``φ P⁺ φ*`` by the same triangle congruence, where the per-state step multiplies the dense
blocks); a floating base (``H = I``, no parent) factors ``D = P`` and nothing else. A state's
result equals its one-state call's to rounding, not bit for bit: the sums of a node of any hinge
come in another order, and the compiler may fuse a multiply–add in one and not in the other.

numba compiles a loop over the lanes, ``for l in range(LANES)``, as scalar code (the loop of
constant length is unrolled before LLVM's loop vectoriser runs, its SLP vectoriser is off, and
``X[o, l]`` carries a test for a negative index): hence the explicit vector type. The lane
buffers are flat ``(rows × LANES)`` arrays, the layout a GPU kernel takes too. The 6-vector steps
are inline kernels (typed once, inlined by LLVM) and the parallel driver calls the kernel of a run
of blocks at its address (:func:`~sko.engine.jit.native_caller`), so the passes' machine code is
generated once. That kernel borrows its buffers (:mod:`sko.engine.borrow`): numba's reference
counts on them, at every view in the node loops, cost a fifth of a batch.

A state whose ``D(k)`` is not positive definite gets the status of the per-state kernels
(``N + k``, :mod:`sko.engine.requests`): the lanes compute on (a NaN stays in its lane) and the
first such node of the gather is the one reported. The tail of ``B mod LANES`` states runs in a
block padded with copies of its first state. Each of numba's threads takes one run of consecutive
blocks, on its own copy of the request vector and lane buffers (made once per thread and call).
"""

from __future__ import annotations

import operator

import numpy as np
from llvmlite import ir
from numba import get_num_threads, prange, types
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
from sko.engine.bodies.rigid import RigidConstants, axis_transform, bias, motion_cross, placed_transform
from sko.engine.joints import FREE, HELICAL, PRISMATIC, JointConstants, quaternion_ok, quaternion_rows
from sko.engine.request_views import Header, request_views
from sko.engine.state_kernels import Record, Row, Terms, fill_states

__all__ = ["LANES", "LaneScratch", "Lanes", "REQUESTS", "applies", "evaluate", "forward_dynamics", "buffers",
           "borrowed_buffers", "block", "inverse_block", "mass_block", "sine_cosine", "REDUCED", "WHOLE", "lane",
           "positive", "admissible", "transposed", "put_entries", "put_turned", "block_rows", "put_lanes",
           "settle"]

LANES = 4  #: states per block: one vector register of float64 (AVX2)
#: The lane scratch, in rows of :data:`LANES` numbers: of a Riccati step of any hinge
#: (:func:`_riccati_any`), a 6 × 6 block each: ``H P``, ``L``, ``L^{-1}``, ``Y = L^{-1} H P``, ``P⁺``;
#: of the fill of a free joint (:func:`_free_lanes`), each lane's scaled quaternion, position and
#: ``θ̇``.
LaneScratch = offsets("LaneScratch", HP=36, L=36, Li=36, Y=36, P_plus=36, quaternion=4, position=3, rate=6)
#: the rows of a free joint's fill in the lane scratch, as numbers (:func:`_free_lanes`)
_FREE_SCRATCH = (int(LaneScratch.quaternion), int(LaneScratch.position), int(LaneScratch.rate))


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
def positive(typingctx, v):
    """1 in the lanes where ``v > 0`` (infinity too), else 0 (NaN too): the pivot test of
    :func:`sko.engine.derivatives.ltdl`."""
    if not isinstance(v, Lanes):
        return None

    def codegen(context, builder, signature, args):
        return builder.uitofp(builder.fcmp_ordered(">", args[0], ir.Constant(_VECTOR, [0.0] * LANES)), _VECTOR)

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


@intrinsic
def lane_floor(typingctx, v):
    """``⌊v⌋`` lane by lane."""
    if not isinstance(v, Lanes):
        return None

    def codegen(context, builder, signature, args):
        return builder.call(_intrinsic(builder, "floor"), [args[0]])

    return LANE_TYPE(v), codegen


@intrinsic
def choose(typingctx, c, a, b):
    """``a`` in the lanes where ``c`` is not zero, ``b`` in the others (both lane numbers)."""
    if not (isinstance(c, Lanes) and isinstance(a, Lanes) and isinstance(b, Lanes)):
        return None

    def codegen(context, builder, signature, args):
        mask = builder.fcmp_unordered("!=", args[0], ir.Constant(_VECTOR, [0.0] * LANES))
        return builder.select(mask, args[1], args[2])

    return LANE_TYPE(c, a, b), codegen


@intrinsic
def lane(typingctx, v, l):
    """Lane ``l`` of the lane number ``v``, a float64."""
    if not (isinstance(v, Lanes) and isinstance(l, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        return builder.extract_element(args[0], context.cast(builder, args[1], signature.args[1], types.int32))

    return types.float64(v, l), codegen


@intrinsic
def transposed(typingctx, a, b, c, d):
    """The four lane numbers ``a, b, c, d`` turned: four lane numbers, the ``l``-th holding lane
    ``l`` of ``a, b, c, d`` in this order (a 4 × 4 transpose in registers, :data:`LANES` = 4)."""
    if LANES != 4 or not all(isinstance(x, Lanes) for x in (a, b, c, d)):
        return None

    def codegen(context, builder, signature, args):
        def shuffled(x, y, mask):
            return builder.shuffle_vector(x, y, ir.Constant(ir.VectorType(ir.IntType(32), 4), mask))

        a, b, c, d = args
        ab0, ab1 = shuffled(a, b, [0, 4, 2, 6]), shuffled(a, b, [1, 5, 3, 7])  # a0 b0 a2 b2, a1 b1 a3 b3
        cd0, cd1 = shuffled(c, d, [0, 4, 2, 6]), shuffled(c, d, [1, 5, 3, 7])
        turned = (shuffled(ab0, cd0, [0, 1, 4, 5]), shuffled(ab1, cd1, [0, 1, 4, 5]),
                  shuffled(ab0, cd0, [2, 3, 6, 7]), shuffled(ab1, cd1, [2, 3, 6, 7]))
        return context.make_tuple(builder, signature.return_type, turned)

    return types.UniTuple(LANE_TYPE, 4)(a, b, c, d), codegen


@intrinsic
def put_entries(typingctx, x, i, v):
    """Entries ``i … i + LANES − 1`` of the contiguous 1-D float64 array ``x`` ← the lanes of
    ``v`` (one vector store)."""
    if not (isinstance(x, types.Array) and x.ndim == 1 and x.layout == "C" and x.dtype == types.float64
            and isinstance(i, types.Integer) and isinstance(v, Lanes)):
        return None

    def codegen(context, builder, signature, args):
        data = make_array(signature.args[0])(context, builder, args[0]).data
        at = builder.gep(data, [context.cast(builder, args[1], signature.args[1], types.intp)])
        builder.store(args[2], builder.bitcast(at, _VECTOR.as_pointer()), align=8)
        return context.get_dummy_value()

    return types.none(x, i, v), codegen


@register
def put_turned(rows, i, a, b, c, d):
    """Entries ``i … i + 3`` of each of the four rows ``rows`` (one a lane) ← that lane of the
    lane numbers ``a, b, c, d`` (:func:`transposed`, :func:`put_entries`)."""
    t0, t1, t2, t3 = transposed(a, b, c, d)
    r0, r1, r2, r3 = rows
    put_entries(r0, i, t0)
    put_entries(r1, i, t1)
    put_entries(r2, i, t2)
    put_entries(r3, i, t3)


@register
def block_rows(out, first, count):
    """The rows of ``out`` the four lanes of the block at state ``first`` write: each lane's
    state's, the tail's lanes the block's last (their copies: the same numbers, lane 3 last)."""
    return (out[first], out[first + min(1, count - 1)], out[first + min(2, count - 1)],
            out[first + min(3, count - 1)])


@register
def put_lanes(rows, i, y):
    """Entry ``i`` of each of the lanes' rows ``rows`` (:func:`block_rows`) ← its lane of ``y``."""
    o0, o1, o2, o3 = rows
    o0[i], o1[i], o2[i], o3[i] = lane(y, 0), lane(y, 1), lane(y, 2), lane(y, 3)


@register
def settle(out, status, flag, first, count, size):
    """The statuses of the block's states once their rows of ``out`` are written: a state the
    fill rejected gets a row of zeros (its status names why), one whose ``size`` entries are not
    all finite (``flag``, ``0 ·`` their sum, not 0 in its lane) the status −3."""
    for l in range(count):
        s = first + l
        if status[s] >= 0:
            for i in range(size):
                out[s, i] = 0.0
        elif lane(flag, l) != 0.0:
            status[s] = -3


#: ``π/2`` in three parts (Cody and Waite; Cephes' ``DP1…DP3`` doubled): ``k · P1`` is exact for
#: ``|k| < 2²⁹``, and ``((x − k P1) − k P2) − k P3`` is ``x − k π/2`` to a few units of rounding
#: of the result for ``|x| ≤`` :data:`REDUCED`
_PI_2 = (1.57079625129699707031e0, 7.54978941586159635335e-8, 5.39030285815811905290e-15)
REDUCED = 1e8  #: the largest ``|θ|`` whose sine and cosine :func:`sine_cosine` reduces itself


@intrinsic
def _reduced(typingctx, x, k):
    """``((x − k P1) − k P2) − k P3`` (:data:`_PI_2`) lane by lane, in this order: without the
    kernels' reassociation, which would fold the three parts into one."""
    if not (isinstance(x, Lanes) and isinstance(k, Lanes)):
        return None

    def codegen(context, builder, signature, args):
        r = args[0]
        for part in _PI_2:
            r = builder.fsub(r, builder.fmul(args[1], ir.Constant(_VECTOR, [part] * LANES)))
        return r

    return LANE_TYPE(x, k), codegen


#: the minimax polynomials of Cephes' ``sin`` and ``cos`` on ``|r| ≤ π/4``, in ``z = r²``
_SINE = (1.58962301576546568060e-10, -2.50507477628578072866e-8, 2.75573136213857245213e-6,
         -1.98412698295895385996e-4, 8.33333333332211858878e-3, -1.66666666666666307295e-1)
_COSINE = (-1.13585365213876817300e-11, 2.08757008419747316778e-9, -2.75573141792967388112e-7,
           2.48015872888517045348e-5, -1.38888888888730564116e-3, 4.16666666666665929218e-2)


@register
def sine_cosine(x):
    """``(sin x, cos x)`` lane by lane for ``|x| ≤`` :data:`REDUCED` (a NaN or an infinity gives
    NaN), within about one unit of rounding of libm's: ``x = k π/2 + r`` with ``|r| ≤ π/4``
    (:func:`_reduced`), Cephes' polynomials in ``r``, and the quadrant ``k mod 4`` choosing and
    signing them (libm's sine and cosine are scalar calls; these are one vector register)."""
    k = lane_floor(x * 0.636619772367581343076 + 0.5)
    r = _reduced(x, k)
    z = r * r
    S0, S1, S2, S3, S4, S5 = _SINE
    C0, C1, C2, C3, C4, C5 = _COSINE
    sin_r = r + r * z * (((((S0 * z + S1) * z + S2) * z + S3) * z + S4) * z + S5)
    cos_r = 1.0 - 0.5 * z + z * z * (((((C0 * z + C1) * z + C2) * z + C3) * z + C4) * z + C5)
    q = k - 4.0 * lane_floor(k * 0.25)  # the quadrant, 0 … 3
    odd = q - 2.0 * lane_floor(q * 0.5)
    s, c = choose(odd, cos_r, sin_r), choose(odd, sin_r, cos_r)
    qc = q + 1.0
    qc = qc - 4.0 * lane_floor(qc * 0.25)
    return choose(lane_floor(q * 0.5), 0.0 - s, s), choose(lane_floor(qc * 0.5), 0.0 - c, c)


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
    of upper triangle ``s`` (:func:`~sko.engine.rigid_blocks.congruence66`, its
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
    ``D = H P H*``, its factors (:func:`_factor`), then, below a parent,
    ``Y = L^{-1} H P``, ``G = (L^{-*} Y)*``, ``P⁺ = P − Y* Y`` and ``P(℘) += φ P⁺ φ*`` (a root's
    ``G`` multiplies ``α(℘) = 0`` only: the passes do not read it)."""
    h, ho = layout[j, Flat.HINGE_DIM], layout[j, Flat.H]
    Po, Go, DIo, Do = roff[j, Riccati.P], roff[j, Riccati.G], roff[j, Riccati.D_INVERSE], roff[j, Riccati.D]
    HP, Li, Y, PP = LaneScratch.HP, LaneScratch.Li, LaneScratch.Y, LaneScratch.P_plus
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
    _factor(r, Do, h, t, DIo, ok)
    if p < 0:
        return
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
    for a_ in range(6):  # P⁺ = P − Y* Y
        for b_ in range(6):
            x = row(r, Po + 6 * a_ + b_)
            for i in range(h):
                x = x - row(t, Y + 6 * i + a_) * row(t, Y + 6 * i + b_)
            set_row(t, PP + 6 * a_ + b_, x)
    _congruence(data, layout[j, Flat.W], _upper(t, PP), r, roff[p, Riccati.P])


@inline_kernel
def _factor(r, Do, h, t, DIo, ok):
    """``D``'s Cholesky factor ``L`` (no conjugation) and ``L^{-1}`` in the lane scratch ``t``,
    and ``D^{-1} = L^{-*} L^{-1}`` at row ``DIo`` of ``r``, for the ``h × h`` ``D`` at row ``Do`` of
    ``r`` (its lower triangle read); ``ok`` is 0 in the lanes where a pivot of ``L`` is not
    positive and finite."""
    Lo, Li = LaneScratch.L, LaneScratch.Li
    zero = splat(0.0)
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


@kernel
def _riccati(rows, reals, layout, data, roff, r, t, ok, bad):
    """The Riccati gather (Eq. 33) in every lane: ``P(k)`` starts as ``M(k)``; ``bad[l]`` is the
    first node (children first) whose ``D`` is not positive definite in lane ``l``, or −1. A
    floating base (a root on a free joint the fill computes in the lanes, :func:`_free_joint`:
    ``H = I``) takes ``D = H P H* = P`` as it is, the per-state step's products with the
    identity, and only its factors (:func:`_factor`)."""
    layout, data, roff, r, t, ok, bad = (borrowed(layout), borrowed(data), borrowed(roff), borrowed(r), borrowed(t),
                                         borrowed(ok), borrowed(bad))
    rows, reals = borrowed(rows), borrowed(reals)
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
        elif p < 0 and _free_joint(reals, rows[j]):
            _factor(r, roff[j, Riccati.P], 6, t, roff[j, Riccati.D_INVERSE], ok)
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
        if p >= 0:  # z⁺ = z + G ε, into z(℘)
            for i in range(6):
                x = splat(0.0)
                for a_ in range(h):
                    x = x + row(r, Go + i * h + a_) * row(T, do + a_)
                _add(z, no + i, x)
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
        for a_ in range(h if p >= 0 else 0):  # θ̈ = ν − G* α⁺ (a root's α⁺ = 0)
            y = splat(0.0)
            for i in range(6):
                y = y + row(r, Go + i * h + a_) * x[i]
            set_row(nu, do + a_, row(nu, do + a_) - y)
        for i in range(6):
            y = splat(0.0)
            for a_ in range(h):
                y = y + row(data, ho + 6 * a_ + i) * row(nu, do + a_)
            set_row(z, no + i, x[i] + y + row(data, ao + i))


# ----------------------------------------------------------------------------- Algorithm 3.1
@kernel
def _newton_euler(layout, data, A, alpha, f, T):
    """Newton–Euler (Algorithm 3.1) in every lane, for ``θ̈`` in ``A``: parents first
    ``α = φ* α(℘) + H* θ̈ + a`` and ``f = M α + b``, then children first ``T = H f`` and
    ``f(℘) += φ f`` (as :func:`sko.engine.rnea.newton_euler`, its sums in another order)."""
    layout, data, A, alpha = borrowed(layout), borrowed(data), borrowed(A), borrowed(alpha)
    f, T = borrowed(f), borrowed(T)
    n = layout.shape[0]
    for j in range(n):
        p, h, no, do = layout[j, Flat.PARENT], layout[j, Flat.HINGE_DIM], layout[j, Flat.NODE], layout[j, Flat.DOF]
        ho, ao, mo, bo = layout[j, Flat.H], layout[j, Flat.A], layout[j, Flat.M], layout[j, Flat.B]
        if p >= 0:
            x = _transpose_times(data, layout[j, Flat.W], _six(alpha, layout[p, Flat.NODE]))
        else:
            zero = splat(0.0)
            x = (zero, zero, zero, zero, zero, zero)
        for i in range(6):
            y = row(data, ao + i) + x[i]
            for c in range(h):
                y = y + row(data, ho + 6 * c + i) * row(A, do + c)
            set_row(alpha, no + i, y)
        a = _six(alpha, no)
        for i in range(6):
            set_row(f, no + i, row(data, bo + i) + rb.dot(_six(data, mo + 6 * i), a))
    for j in range(n - 1, -1, -1):
        p, h, no, do, ho = (layout[j, Flat.PARENT], layout[j, Flat.HINGE_DIM], layout[j, Flat.NODE],
                            layout[j, Flat.DOF], layout[j, Flat.H])
        g = _six(f, no)
        for c in range(h):
            set_row(T, do + c, rb.dot(_six(data, ho + 6 * c), g))
        if p >= 0:
            x = _times(data, layout[j, Flat.W], g)
            npo = layout[p, Flat.NODE]
            for i in range(6):
                _add(f, npo + i, x[i])


# ----------------------------------------------------------------------------- the mass matrix
@inline_kernel
def _three(X, o):
    """Rows ``o … o + 2`` of the lane buffer ``X``."""
    return row(X, o), row(X, o + 1), row(X, o + 2)


@kernel
def _mass(layout, data, roff, r, mass, nv):
    """ℳ (``nv × nv``) in every lane by the composite-rigid-body algorithm on ten inertial
    parameters in each tree's root frame (SKO.md Algorithm 4.2, Lemma 4;
    :mod:`sko.engine.mass_matrix`, whose steps it takes: :func:`~sko.engine.mass_matrix.child_pose`,
    ``root_column``, ``root_inertia``, ``composite_force``). Parents first, each body's pose
    ``(R, p)`` and composite inertia (:data:`~sko.engine.mass_matrix.Node`, in the slot of ``P(k)``
    of the Riccati buffer ``r``) and its hinge columns in the root's frame (in the slot of
    ``G(k)``); then children first, each column's force ``F = ℛ(k) s`` dotted with the columns of
    ``k`` and of its ancestors — ``ℳ(i, k) = ℳ(k, i) = s_iᵀ F``, six products an entry, where
    carrying ``F`` up by ``φ`` costs 27 a level — and ``ℛ(k)`` added into its parent's with no
    transform (the parallel-axis shift was made once, in the scatter). Each entry and its mirror
    into the rows of ``mass`` (row-major; the entries of no ancestor pair are never written: zero
    from :func:`buffers`). Returns ``0 ·`` the sum of the entries: NaN in the lanes with an entry
    that is not finite, else 0."""
    layout, data, roff, r, mass = borrowed(layout), borrowed(data), borrowed(roff), borrowed(r), borrowed(mass)
    n = layout.shape[0]
    for j in range(n):
        p, no, mo, wo = layout[j, Flat.PARENT], roff[j, Riccati.P], layout[j, Flat.M], layout[j, Flat.W]
        if p < 0:
            zero = 0.0 * row(data, mo)
            one = 1.0 + zero
            R, x = (one, zero, zero, zero, one, zero, zero, zero, one), (zero, zero, zero)
        else:
            po = roff[p, Riccati.P]
            R, x = MM.child_pose(_three(r, po + MM.POSE) + _six(r, po + MM.POSE + 3), _three(r, po + MM.Node.position),
                                 _three(data, wo) + _three(data, wo + 6) + _three(data, wo + 12),
                                 _three(data, wo + 3) + _three(data, wo + 9) + _three(data, wo + 15))
        for i in range(9):
            set_row(r, no + MM.POSE + i, R[i])
        for i in range(3):
            set_row(r, no + MM.Node.position + i, x[i])
        ho, go = layout[j, Flat.H], roff[j, Riccati.G]
        for c in range(layout[j, Flat.HINGE_DIM]):
            s = MM.root_column(R, x, _six(data, ho + 6 * c))
            for i in range(6):
                set_row(r, go + 6 * c + i, s[i])
        c10 = MM.root_inertia(R, x, row(data, mo + 35), (row(data, mo + 16), row(data, mo + 5), row(data, mo + 9)),
                              (row(data, mo), row(data, mo + 1), row(data, mo + 2), row(data, mo + 7),
                               row(data, mo + 8), row(data, mo + 14)))  # M = [[Ī, h×], [h×*, m 1]]
        for i in range(10):
            set_row(r, no + MM.COMPOSITE + i, c10[i])
    finite = splat(0.0)
    for k in range(n - 1, -1, -1):
        co, gk = roff[k, Riccati.P] + MM.COMPOSITE, roff[k, Riccati.G]
        dk, hk = layout[k, Flat.DOF], layout[k, Flat.HINGE_DIM]
        c10 = (row(r, co),) + _three(r, co + 1) + _six(r, co + 4)
        for c in range(hk):
            F = MM.composite_force(c10, _six(r, gk + 6 * c))
            for e in range(c + 1):  # k's own columns up to c: one triangle, as one state's (sko.engine.mass_matrix)
                y = rb.dot(_six(r, gk + 6 * e), F)
                finite = finite + 0.0 * y
                set_row(mass, (dk + e) * nv + dk + c, y)
                set_row(mass, (dk + c) * nv + dk + e, y)
            a = layout[k, Flat.PARENT]
            while a >= 0:
                da, ga = layout[a, Flat.DOF], roff[a, Riccati.G]
                for e in range(layout[a, Flat.HINGE_DIM]):
                    y = rb.dot(_six(r, ga + 6 * e), F)
                    finite = finite + 0.0 * y
                    set_row(mass, (da + e) * nv + dk + c, y)
                    set_row(mass, (dk + c) * nv + da + e, y)
                a = layout[a, Flat.PARENT]
        p = layout[k, Flat.PARENT]
        if p >= 0:
            po = roff[p, Riccati.P] + MM.COMPOSITE
            for i in range(10):
                _add(r, po + i, c10[i])
    return finite


@register
def _mass_out(mass, finite, out, status, first, count, size):
    """The ``size`` entries of each lane of the lane buffer ``mass`` into its state's row of
    ``out`` (:func:`block_rows`), the four rows in one sweep of ``mass``, four entries at a time
    (:func:`put_turned`), every entry written (:func:`settle`: a state the fill rejected gets a
    row of zeros, one with an entry that is not finite, ``finite`` from :func:`_mass` not 0 in its
    lane, status −3)."""
    rows = block_rows(out, first, count)
    quarter = size // 4
    for k in range(quarter):
        o = 4 * k
        put_turned(rows, o, row(mass, o), row(mass, o + 1), row(mass, o + 2), row(mass, o + 3))
    for i in range(4 * quarter, size):
        put_lanes(rows, i, row(mass, i))
    settle(out, status, finite, first, count, size)


# ----------------------------------------------------------------------------- a batch
@register
def _copy(arena, data, l, o, n):
    """Entries ``o … o + n − 1`` of a state's arena into lane ``l`` of the lane buffer ``data``."""
    for i in range(o, o + n):
        data[i * LANES + l] = arena[i]


def evaluate(run, w, Q, QD, X, out, status, sizes) -> None:
    """A request's run of blocks ``run`` (one of :data:`REQUESTS`, or a run of the same
    signature of a module above this one) at every state of a batch (module docstring):
    ``forward_dynamics``, ``θ̈ = ℳ^{-1}(T − 𝒞 − hinge)`` for ``X = T``; ``inverse_dynamics``,
    ``T = ℳ θ̈ + 𝒞 + hinge`` for ``X = θ̈`` (Algorithm 3.1); or ``mass_matrix``, ``ℳ`` (its
    ``QD`` zero, ``X`` without columns). ``w`` is the request's vector (float64, filling its
    arena), ``Q`` (B × nq), ``QD`` and ``X`` (B × nv), into ``out`` (B × nv, or B × nv² for ℳ)
    and ``status`` (B; the per-state kernels' codes, :mod:`sko.engine.requests`, ``-3``
    for a result that is not finite). ``sizes``: the flat data's and the Riccati buffer's
    lengths. All arrays C-ordered and writeable."""
    _batch(w, Q, QD, X, out, status, sizes, native_address(run, _CHUNK_TYPES), get_num_threads())


def forward_dynamics(w, Q, QD, X, out, status, sizes) -> None:
    """:func:`evaluate` of ``forward_dynamics``."""
    evaluate(_forward_run, w, Q, QD, X, out, status, sizes)


_F1, _F2, _I1 = types.Array(types.float64, 1, "C"), types.Array(types.float64, 2, "C"), types.Array(types.int64, 1, "C")
#: the type of the lane buffers of :func:`buffers`
_BUFFERS = types.Tuple((_F1, _F1, _F1, _F1, _F1, _F1, _F1, _I1, _F1, _F1, _F1, _I1, _F1, _F1))
#: the argument types a request's run of blocks (:func:`_forward_run`, ...) is compiled for
_CHUNK_TYPES = (_F1, _BUFFERS, _F2, _F2, _F2, _F2, _I1, types.int64, types.int64)
#: ``_call_chunk(address, (local, work, Q, QD, X, out, status, first, stop))``: a request's run of
#: blocks at its address; −1, or −5 when it raised. A call with other argument types does not compile.
_call_chunk = native_caller(types.int64, -5, lambda argtypes: argtypes == _CHUNK_TYPES)


@kernel(entry=True, parallel=True)
def _batch(w, Q, QD, X, out, status, sizes, address, threads):
    """:func:`evaluate`: each of ``threads`` (numba's) a run of consecutive blocks, by the
    request's run kernel at ``address``, on its own copy of ``w`` and lane buffers
    (:func:`buffers`); the states of a run that raised are reported not finite, which the checked
    path answers. The run kernels are called at their addresses, each compiled on its request's
    first batch, so their machine code is generated once, not again inside the driver's."""
    blocks = (Q.shape[0] + LANES - 1) // LANES
    tasks = min(blocks, threads)
    for c in prange(tasks):
        first, stop = c * blocks // tasks, (c + 1) * blocks // tasks
        local = w.copy()
        work = buffers(local, sizes)
        if _call_chunk(address, (local, work, Q, QD, X, out, status, np.int64(first), np.int64(stop))) != -1:
            for s in range(first * LANES, min(Q.shape[0], stop * LANES)):
                status[s] = -3


@kernel
def _forward_run(local, work, Q, QD, X, out, status, first, stop):
    """The blocks ``first … stop − 1`` of a batch of forward dynamics, each by :func:`block`, on a
    thread's own request vector ``local`` and lane buffers ``work``, borrowed (the caller owns
    them for the call: no reference counted in the loops). Returns −1."""
    local, Q, QD, X = borrowed(local), borrowed(Q), borrowed(QD), borrowed(X)
    out, status, work = borrowed(out), borrowed(status), borrowed_buffers(work)
    for b in range(first, stop):
        block(local, work, Q, QD, X, out, status, b * LANES, min(LANES, Q.shape[0] - b * LANES))
    return -1


@kernel
def _inverse_run(local, work, Q, QD, X, out, status, first, stop):
    """:func:`_forward_run` of inverse dynamics, each block by :func:`inverse_block`."""
    local, Q, QD, X = borrowed(local), borrowed(Q), borrowed(QD), borrowed(X)
    out, status, work = borrowed(out), borrowed(status), borrowed_buffers(work)
    for b in range(first, stop):
        inverse_block(local, work, Q, QD, X, out, status, b * LANES, min(LANES, Q.shape[0] - b * LANES))
    return -1


@kernel
def _mass_run(local, work, Q, QD, X, out, status, first, stop):
    """:func:`_forward_run` of ℳ, each block by :func:`mass_block` (``X`` has no columns)."""
    local, Q, QD = borrowed(local), borrowed(Q), borrowed(QD)
    out, status, work = borrowed(out), borrowed(status), borrowed_buffers(work)
    for b in range(first, stop):
        mass_block(local, work, Q, QD, out, status, b * LANES, min(LANES, Q.shape[0] - b * LANES))
    return -1


#: the requests the lanes answer, by name: the kernel of a run of blocks of each
REQUESTS = {"forward_dynamics": _forward_run, "inverse_dynamics": _inverse_run, "mass_matrix": _mass_run}
#: the requests whose run writes every entry of each state's row of ``out``, which may then come
#: uninitialised: of :data:`REQUESTS` (:func:`_mass_out`) and of the runs of
#: :mod:`sko.engine.lane_derivatives`
WHOLE = frozenset({"mass_matrix", "inverse_dynamics_derivatives", "forward_dynamics_derivatives"})


@register
def buffers(local, sizes):
    """The lane buffers of :func:`block` for the request vector ``local`` (a chunk's own copy):
    the flat data ``(φ, H, M, a, b)``, the Riccati buffer, ``z``, ``T``, ``ν``, the
    :data:`LaneScratch`, the lanes' admissibility and first bad node, a state's right-hand side,
    each node's own-frame velocity ``v(k)``, each node's ``cos θ, sin θ, θ, θ̇`` (:func:`_angles`),
    whether the constants are in every lane (:func:`_prime`), the node forces ``f`` of
    Newton–Euler and the ``nv × nv`` entries of ℳ."""
    lwords = local.view(np.int64)
    nv, ns, n = lwords[Header.NV], lwords[Header.NS], lwords[Header.N]
    return (np.zeros(sizes[0] * LANES), np.zeros(sizes[1] * LANES), np.zeros(ns * LANES), np.zeros(nv * LANES),
            np.zeros(nv * LANES), np.zeros(LaneScratch.SIZE * LANES), np.ones(LANES), np.zeros(LANES, dtype=np.int64),
            np.zeros(nv), np.zeros(6 * n * LANES), np.zeros(4 * n * LANES), np.zeros(1, dtype=np.int64),
            np.zeros(ns * LANES), np.zeros(nv * nv * LANES))


@register
def borrowed_buffers(work):
    """The lane buffers ``work`` of :func:`buffers`, each :func:`~sko.engine.borrow.borrowed` (for
    a kernel that got them as an argument)."""
    data, r, z, T, nu, t, ok, bad, rhs, vel, angles, primed, f, mass = work
    return (borrowed(data), borrowed(r), borrowed(z), borrowed(T), borrowed(nu), borrowed(t), borrowed(ok),
            borrowed(bad), borrowed(rhs), borrowed(vel), borrowed(angles), borrowed(primed), borrowed(f),
            borrowed(mass))


@register
def _single_axis(reals, body) -> bool:
    """Whether the body of ``body`` is on a revolute (helical) or prismatic joint, not reversed,
    and its outputs not checked state by state (``Row.CHECK``: a kernel given by a user's
    compiled state): its terms are computed in the lanes (:func:`_rigid_lanes`)."""
    c0 = body[Row.CONSTANTS]
    code = int(reals[c0 + JointConstants.code])
    return (code == HELICAL or code == PRISMATIC) and reals[c0 + JointConstants.reverse] == 0 and body[Row.CHECK] < 0


@register
def _load(lwords, arena, Q, QD, s):
    """State ``s``'s ``q`` and ``θ̇`` into the arena."""
    for i in range(lwords[Header.NQ]):
        arena[lwords[Header.Q] + i] = Q[s, i]
    for i in range(lwords[Header.NV]):
        arena[lwords[Header.V] + i] = QD[s, i]


@register
def _prime(lwords, rows, reals, arena, data, Q, QD, first, count) -> bool:
    """The constants (``M``, the hinge maps of single-axis joints, the zero blocks of ``φ``, the
    records' ``γ = 0``) into every lane and the arena: the first state of the block that a whole
    fill (constants included) accepts, copied to every lane. False when none is accepted (the
    block's states are then all rejected by the fill of :func:`block` too)."""
    size = data.shape[0] // LANES
    for l in range(count):
        _load(lwords, arena, Q, QD, first + l)
        if fill_states(rows, reals, arena, Terms.MOTION, True, 0, rows.shape[0]) == -1:
            for i in range(size):
                x = arena[i]
                for k in range(LANES):
                    data[i * LANES + k] = x
            return True
    return False


@register
def _angles(lwords, rows, layout, reals, angles, Q, QD, first, count):
    """``cos θ, sin θ, θ, θ̇`` of every single-axis node (a prismatic joint: ``1, 0, θ, θ̇``) into
    the rows ``4 j … 4 j + 3`` of ``angles``, each lane's from its state (the tail's from the
    block's last); the sine and cosine of a revolute (helical) joint by :func:`sine_cosine`, of an
    angle beyond :data:`REDUCED` by libm's, lane by lane."""
    q0, v0 = lwords[Header.Q], lwords[Header.V]
    for j in range(layout.shape[0]):
        body = rows[j]
        if not _single_axis(reals, body):
            continue
        helical = int(reals[body[Row.CONSTANTS] + JointConstants.code]) == HELICAL
        o = 4 * j * LANES
        for l in range(LANES):
            s = first + min(l, count - 1)
            theta = Q[s, body[Row.Q] - q0]
            angles[o + l] = 1.0 + 0 * theta
            angles[o + LANES + l] = 0 * theta
            angles[o + 2 * LANES + l] = theta
            angles[o + 3 * LANES + l] = QD[s, body[Row.V] - v0]
        if not helical:
            continue
        sine, cosine = sine_cosine(row(angles, 4 * j + 2))
        set_row(angles, 4 * j, cosine)
        set_row(angles, 4 * j + 1, sine)
        for l in range(LANES):
            theta = angles[o + 2 * LANES + l]
            if abs(theta) > REDUCED and abs(theta) < np.inf:
                angles[o + l], angles[o + LANES + l] = np.cos(theta), np.sin(theta)


@inline_kernel
def _rigid_lanes(body, reals, arena, data, vel, angles, j, p):
    """The terms of a rigid body on a single-axis joint (node ``j``, parent node ``p``) in every
    lane, as the per-state kernel computes them (:func:`sko.engine.bodies.rigid._single_axis`):
    ``ᵏX_o = rot(E) xlt(r)`` (:func:`~sko.engine.bodies.rigid.axis_transform`) from each lane's
    ``cos θ``, ``sin θ``, then ``v_J = S θ̇`` and the rest by :func:`_motion_lanes`."""
    c0 = body[Row.CONSTANTS]
    jp, xt = c0 + JointConstants.parameters, c0 + RigidConstants.placement
    x, y, z = reals[jp], reals[jp + 1], reals[jp + 2]
    c, s, theta, td = row(angles, 4 * j), row(angles, 4 * j + 1), row(angles, 4 * j + 2), row(angles, 4 * j + 3)
    if int(reals[c0 + JointConstants.code]) == HELICAL:
        h = reals[jp + 3]
        lin = h * theta
        sw0, sw1, sw2, sv0, sv1, sv2 = x, y, z, h * x, h * y, h * z
    else:
        lin = theta
        sw0, sw1, sw2, sv0, sv1, sv2 = 0.0, 0.0, 0.0, x, y, z
    E, r0, r1, r2 = axis_transform(reals, xt, x, y, z, c, s, lin)
    vj = (sw0 * td, sw1 * td, sw2 * td, sv0 * td, sv1 * td, sv2 * td)
    _motion_lanes(body, reals, arena, data, vel, E, r0, r1, r2, vj, j, p)


@inline_kernel
def _motion_lanes(body, reals, arena, data, vel, E, r0, r1, r2, vj, j, p):
    """What a rigid body computes in every lane from its ``ᵏX_o = rot(E) xlt(r)`` (``E`` as
    three rows) and ``v_J = S θ̇`` (RIGID.md, *The SKO model in body coordinates*): ``ᵏX_o`` into
    ``φ``'s non-zero blocks, ``v = ᵏX_o v_o + v_J`` (into ``vel``), ``a = ᵏX_o γ_o + v × v_J``
    (``c_J = 0``: a single-axis or a free joint), ``b = v ×* I v``. The inboard ``γ_o`` is a
    constant (the inertial frame's ``−a_g``, a rigid parent's 0), read from the arena, as is a
    root's ``v_o``."""
    c0, io = body[Row.CONSTANTS], body[Row.INBOARD]
    eo, er, ec = body[Row.E], body[Row.E_ROW], body[Row.E_COLUMN]
    for i in range(3 if p >= 0 else 0):  # ᵏX_o = [[E, 0], [−E r×, E]] (a base body has no weight)
        e0, e1, e2 = E[i]
        set_row(data, eo + i * er, e0)
        set_row(data, eo + i * er + ec, e1)
        set_row(data, eo + i * er + 2 * ec, e2)
        lo = eo + (3 + i) * er
        set_row(data, lo, e2 * r1 - e1 * r2)
        set_row(data, lo + ec, e0 * r2 - e2 * r0)
        set_row(data, lo + 2 * ec, e1 * r0 - e0 * r1)
        set_row(data, lo + 3 * ec, e0)
        set_row(data, lo + 4 * ec, e1)
        set_row(data, lo + 5 * ec, e2)
    if p >= 0:
        v = _x_times(E, r0, r1, r2, _six(vel, 6 * p), vj)  # ᵏX_o v_o + v_J
    else:
        v = _x_times(E, r0, r1, r2, rb.held(arena, io + Record.velocity, 6), vj)
    g = rb.held(arena, io + Record.gamma, 6)
    if g[0] == 0 and g[1] == 0 and g[2] == 0 and g[3] == 0 and g[4] == 0 and g[5] == 0:
        cross = motion_cross(v, vj)
        a = cross
    else:
        zero = 0 * vj[0]
        acc = _x_times(E, r0, r1, r2, g, (zero, zero, zero, zero, zero, zero))  # ᵏX_o γ_o
        cross = motion_cross(v, vj)
        a = (acc[0] + cross[0], acc[1] + cross[1], acc[2] + cross[2], acc[3] + cross[3], acc[4] + cross[4],
             acc[5] + cross[5])
    b = bias(reals, c0 + RigidConstants.inertia, v)
    ao, bo = body[Row.A], body[Row.B]
    for i in range(6):
        set_row(data, ao + i, a[i])
        set_row(data, bo + i, b[i])
        set_row(vel, 6 * j + i, v[i])


@register
def _free_joint(reals, body) -> bool:
    """Whether the body of ``body`` is on a free joint, not reversed, and its outputs not checked
    state by state (``Row.CHECK``): its terms are computed in the lanes (:func:`_free_lanes`)."""
    c0 = body[Row.CONSTANTS]
    return (int(reals[c0 + JointConstants.code]) == FREE and reals[c0 + JointConstants.reverse] == 0
            and body[Row.CHECK] < 0)


@inline_kernel
def _free_lanes(lwords, body, reals, arena, data, vel, t, Q, QD, status, first, count, j, p):
    """The terms of a rigid body on a free joint (node ``j``, parent node ``p``; a floating base)
    in every lane, as the per-state kernel computes them (:func:`sko.engine.bodies.rigid.hinge`
    on :func:`sko.engine.joints._free`; RIGID.md, *Joint library*): each lane's quaternion
    scaled by its largest entry, ``E_J = R(q)ᵀ`` (:func:`~sko.engine.joints.quaternion_rows`),
    ``r_J = p``, ``ᵏX_o = X_J X_T`` (:func:`~sko.engine.bodies.rigid.placed_transform`),
    ``v_J = θ̇`` (``S = I``, ``c_J = 0``) and the rest by :func:`_motion_lanes`; ``H = I`` and
    ``M`` are constants (:func:`_prime`). A state whose quaternion the joint rejects
    (:func:`~sko.engine.joints.quaternion_ok`: zero, tiny or not finite) gets the body's row, as
    :func:`_node_per_state` gives it; its lane computes on."""
    c0 = body[Row.CONSTANTS]
    qo, vo = body[Row.Q] - lwords[Header.Q], body[Row.V] - lwords[Header.V]
    Fq, Fp, Fr = _FREE_SCRATCH
    for l in range(LANES):
        s = first + min(l, count - 1)
        w, x, y, z = Q[s, qo], Q[s, qo + 1], Q[s, qo + 2], Q[s, qo + 3]
        if not quaternion_ok(w, x, y, z) and l < count and (status[s] < 0 or status[s] > j):
            status[s] = j
        m = max(abs(w), abs(x), abs(y), abs(z))
        t[Fq * LANES + l], t[(Fq + 1) * LANES + l] = w / m, x / m
        t[(Fq + 2) * LANES + l], t[(Fq + 3) * LANES + l] = y / m, z / m
        for i in range(3):
            t[(Fp + i) * LANES + l] = Q[s, qo + 4 + i]
        for i in range(6):
            t[(Fr + i) * LANES + l] = QD[s, vo + i]
    J = quaternion_rows(row(t, Fq), row(t, Fq + 1), row(t, Fq + 2), row(t, Fq + 3))
    E, r0, r1, r2 = placed_transform(reals, c0 + RigidConstants.placement, J, row(t, Fp), row(t, Fp + 1),
                                     row(t, Fp + 2))
    _motion_lanes(body, reals, arena, data, vel, E, r0, r1, r2, _six(t, Fr), j, p)


@inline_kernel
def _x_times(E, r0, r1, r2, x, add):
    """``add + X x`` for ``X = rot(E) xlt(r)`` (``E`` as three rows) and the six numbers ``x``:
    ``X [w; u] = [E w; E (u − r × w)]`` (:func:`sko.engine.bodies.rigid.transform`)."""
    w0, w1, w2 = x[0], x[1], x[2]
    u0, u1, u2 = x[3] - (r1 * w2 - r2 * w1), x[4] - (r2 * w0 - r0 * w2), x[5] - (r0 * w1 - r1 * w0)
    (e00, e01, e02), (e10, e11, e12), (e20, e21, e22) = E
    return (add[0] + e00 * w0 + e01 * w1 + e02 * w2, add[1] + e10 * w0 + e11 * w1 + e12 * w2,
            add[2] + e20 * w0 + e21 * w1 + e22 * w2, add[3] + e00 * u0 + e01 * u1 + e02 * u2,
            add[4] + e10 * u0 + e11 * u1 + e12 * u2, add[5] + e20 * u0 + e21 * u1 + e22 * u2)


@register
def _node_per_state(lwords, rows, layout, reals, arena, data, vel, Q, QD, status, first, count, j, p):
    """Node ``j`` (parent node ``p``) of a joint the lanes do not compute, in each lane: the
    body's own kernel on the arena holding the lane's ``q``, ``θ̇`` and inboard velocity, its
    ``φ``, ``H``, ``a``, ``b`` and velocity then copied into the lane. A state it rejects gets
    the body's row (the lowest of the rows rejecting it, as a whole fill would)."""
    body = rows[j]
    q0, v0 = lwords[Header.Q], lwords[Header.V]
    io, rec = body[Row.INBOARD], body[Row.RECORDS]
    for l in range(LANES):
        s = first + min(l, count - 1)
        for i in range(body[Row.NQ]):
            arena[body[Row.Q] + i] = Q[s, body[Row.Q] - q0 + i]
        for i in range(body[Row.NV]):
            arena[body[Row.V] + i] = QD[s, body[Row.V] - v0 + i]
        if p >= 0:
            for i in range(6):
                arena[io + Record.velocity + i] = vel[(6 * p + i) * LANES + l]
        if fill_states(rows, reals, arena, Terms.MOTION, False, j, j + 1) != -1 and l < count:
            if status[s] < 0 or status[s] > j:
                status[s] = j
        if p >= 0:
            _copy(arena, data, l, layout[j, Flat.W], 36)
        _copy(arena, data, l, layout[j, Flat.H], 6 * layout[j, Flat.HINGE_DIM])
        _copy(arena, data, l, layout[j, Flat.A], 6)
        _copy(arena, data, l, layout[j, Flat.B], 6)
        for i in range(6):
            vel[(6 * j + i) * LANES + l] = arena[rec + Record.velocity + i]


@register
def _fill(lwords, rows, layout, reals, arena, work, Q, QD, status, first, count):
    """The flat model of the states ``first … first + count − 1`` into the lanes (the tail's
    lanes: copies of the block's last state), parents first: a body on a single-axis joint
    (:func:`_rigid_lanes`) or a free joint (:func:`_free_lanes`, a floating base) in the lanes, any
    other by its own kernel state by state (:func:`_node_per_state`: a spherical joint, a reversed
    joint, a checked kernel); each state's status −1 or the row that rejected it."""
    data, r, z, T, nu, t, ok, bad, rhs, vel, angles, primed, f, mass = work
    if primed[0] == 0 and _prime(lwords, rows, reals, arena, data, Q, QD, first, count):
        primed[0] = 1
    for l in range(count):
        status[first + l] = -1
    _angles(lwords, rows, layout, reals, angles, Q, QD, first, count)
    for j in range(layout.shape[0]):
        body, p = rows[j], layout[j, Flat.PARENT]
        if _single_axis(reals, body):
            _rigid_lanes(body, reals, arena, data, vel, angles, j, p)
        elif _free_joint(reals, body):
            _free_lanes(lwords, body, reals, arena, data, vel, t, Q, QD, status, first, count, j, p)
        else:
            _node_per_state(lwords, rows, layout, reals, arena, data, vel, Q, QD, status, first, count, j, p)


@register
def _hinge_forces(lwords, rows, reals, arena, rhs, Q, QD, status, s, sign) -> None:
    """``rhs += sign · hinge`` at state ``s`` (loaded into the arena), when a body has a compiled
    hinge force and the state is not rejected; a failing hook's status ``2N + k``."""
    if lwords[Header.HINGES] != 0 and status[s] < 0:
        _load(lwords, arena, Q, QD, s)
        k = add_hinge_forces(rows, reals, arena, lwords[Header.V], rhs, sign)
        if k >= 0:
            status[s] = 2 * lwords[Header.N] + k


@register
def _lane_out(x, out, status, s, l, n) -> None:
    """State ``s``'s ``n`` entries, lane ``l`` of the lane buffer ``x``, into ``out[s]``; its status
    −3 when one is not finite."""
    finite = 0.0
    for i in range(n):
        y = x[i * LANES + l]
        out[s, i] = y
        finite += 0.0 * y
    if finite != 0.0:
        status[s] = -3


@register
def block(local, work, Q, QD, X, out, status, first, count):
    """``θ̈`` of the states ``first … first + count − 1`` (``count ≤ LANES``) of ``Q``, ``QD``,
    ``X`` into the same rows of ``out`` and ``status`` (as :func:`forward_dynamics`), on the
    request vector ``local`` and the lane buffers ``work`` of :func:`buffers`: the fill
    (:func:`_fill`), the hinge forces state by state, the passes once, each lane's result and
    status out. The caller borrows ``local`` and ``work`` (:func:`borrowed_buffers`) where it
    holds them as arguments."""
    lwords, rows, layout, roff, reals, arena, ws, at = request_views(local)
    data, r, z, T, nu, t, ok, bad, rhs, vel, angles, primed, f, mass = work
    nv, N = lwords[Header.NV], lwords[Header.N]
    _fill(lwords, rows, layout, reals, arena, work, Q, QD, status, first, count)
    for l in range(LANES):
        s = first + min(l, count - 1)
        for i in range(nv):
            rhs[i] = X[s, i]
        if l < count:
            _hinge_forces(lwords, rows, reals, arena, rhs, Q, QD, status, s, -1.0)
        for i in range(nv):
            T[i * LANES + l] = rhs[i]
    _riccati(rows, reals, layout, data, roff, r, t, ok, bad)
    _gather(layout, data, roff, r, T, z, nu)
    _scatter(layout, data, roff, r, z, nu)
    for l in range(count):
        s = first + l
        if status[s] >= 0:
            continue
        if bad[l] >= 0:
            status[s] = N + layout[bad[l], Flat.BODY]
            continue
        _lane_out(nu, out, status, s, l, nv)


@register
def inverse_block(local, work, Q, QD, X, out, status, first, count):
    """``T = ℳ θ̈ + 𝒞 + hinge`` of the states ``first … first + count − 1`` for ``θ̈`` in ``X``
    (as :func:`block`): the fill, Newton–Euler once (:func:`_newton_euler`), each lane's result
    plus its hinge forces, state by state, out."""
    lwords, rows, layout, roff, reals, arena, ws, at = request_views(local)
    data, r, z, T, nu, t, ok, bad, rhs, vel, angles, primed, f, mass = work
    nv = lwords[Header.NV]
    _fill(lwords, rows, layout, reals, arena, work, Q, QD, status, first, count)
    for l in range(LANES):
        s = first + min(l, count - 1)
        for i in range(nv):
            T[i * LANES + l] = X[s, i]
    _newton_euler(layout, data, T, z, f, nu)
    for l in range(count):
        s = first + l
        for i in range(nv):
            rhs[i] = 0.0
        _hinge_forces(lwords, rows, reals, arena, rhs, Q, QD, status, s, 1.0)
        if status[s] >= 0:
            continue
        for i in range(nv):
            nu[i * LANES + l] += rhs[i]
        _lane_out(nu, out, status, s, l, nv)


@register
def mass_block(local, work, Q, QD, out, status, first, count):
    """``ℳ`` of the states ``first … first + count − 1`` (as :func:`block`; ``QD`` zero): the
    fill, ℳ once on ten inertial parameters (:func:`_mass`), each lane's ``nv × nv`` entries out
    (:func:`_mass_out`: every entry of the states' rows of ``out`` written)."""
    lwords, rows, layout, roff, reals, arena, ws, at = request_views(local)
    data, r, z, T, nu, t, ok, bad, rhs, vel, angles, primed, f, mass = work
    nv = lwords[Header.NV]
    _fill(lwords, rows, layout, reals, arena, work, Q, QD, status, first, count)
    _mass_out(mass, _mass(layout, data, roff, r, mass, nv), out, status, first, count, nv * nv)

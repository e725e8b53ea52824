"""The requests of a system's compiled path, each declared once: the catalogue :data:`REQUESTS`.

A :class:`Request` names the system method that answers it on the reference path, the terms of
the state it reads (:data:`~sko.engine.state_kernels.Terms`), its third input (``dv``, ``tau`` or
none), the shape of one state's result, the buffers of its workspace and its kernel, and the
kernel it takes instead in float64 for a tree of the library's rigid bodies on ten inertial
parameters (:class:`RigidKernel`, :func:`takes_rigid`). The engine
(:mod:`sko.engine.dispatch`) checks the inputs, batches the states and retries a state on the
reference path from the declaration alone; adding a request is one entry and one kernel.

The dynamics add the bodies' compiled hinge forces (:mod:`sko.engine.hooks`) where the
reference path adds their ``hinge_force``. A request kernel has the signature ``kernel(w, x, out) -> status``: ``w`` is a *request vector*
(:func:`request_vector`), ``x`` the third input (``nv`` entries, or none) and ``out`` the zeroed
result (one state, flattened). It takes its tables, arena and buffers from :func:`request_views`,
fills the arena with the state by :func:`fill_arena` (which does nothing when the caller filled
it: bodies whose state only exists in Python) and runs the model kernels of
:mod:`sko.engine.spo`, :mod:`~sko.engine.rnea`, :mod:`~sko.engine.crba` and :mod:`~sko.engine.aba` on it. A request vector holds all a one-state call needs
but the state, in the state's scalar type: a header (:data:`Header`), the offsets of the
workspace's buffers, the state table (:class:`~sko.engine.state_layout.StateLayout`), the flat
layout of the requests and its Riccati offsets, the constants ``reals``, the workspace (the
arena first) and ``nv`` entries where a one-state call copies its third input. A caller keeps
one per request and scalar type and passes it again with each state: nothing is allocated per
call. :func:`one_state_driver` answers one state (:func:`evaluate_one`), :func:`evaluate_batch`
``B`` states, in parallel over chunks of :data:`CHUNK` states (numba's threads); both call the
request kernel through its address, so each compiles once per scalar type, small, and a request
compiles only when it is first used.

``status`` is ``-1``, or ``k`` for a state a joint of the body of row ``k`` of the state table
rejects (a zero quaternion), or ``N + k`` when ``D(k)`` of the ``k``-th body in stacking order is
not positive definite, or ``2N + k`` when the compiled hinge force of the body of row ``k``
failed (:mod:`sko.engine.hooks`); ``-3`` when the result is not finite; for one state also ``-2``
when an input is not finite, ``-4`` when a shape does not fit the system; ``-5`` when the kernel raised.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numba import from_dtype, njit, prange, types

from sko.engine import aba, crba, rigid_rnea, rnea
from sko.engine.borrow import borrowed, flat_view, matrix_view
from sko.engine.fields import columns
from sko.engine.indexing import Compiler
from sko.engine.layout import Flat, max_dims
from sko.engine.jit import FAST_MATH, call_request, cached, kernel, native_address, native_caller, register
from sko.engine.hooks import add_hinge_forces
from sko.engine.state_kernels import DTYPES, Row, Terms
from sko.engine import derivatives as CD
from sko.engine import rigid_blocks as rb
from sko.engine import mass_matrix as MM
from sko.engine.centroidal import (CentroidalWork, RateWork, Result, centroidal, centroidal_buffers, centroidal_rate,
                                   rate_buffers)
from sko.engine.rigid_rnea import rigid_bias, rigid_newton_euler
from sko.engine.rigid_centroidal import RigidWork, rigid_buffers, rigid_centroidal, rigid_centroidal_rate
from sko.engine.regressors import (EnergyWork, TorqueWork, energy_buffers, energy_regressors_request, torque_buffers,
                                   torque_regressor_request)
from sko.engine.request_views import Header, buffer, fill_arena, request_views

__all__ = ["Request", "RigidKernel", "REQUESTS", "Header", "Sizes", "sizes", "CHUNK", "request_views", "fill_arena",
           "request_vector", "takes_rigid", "evaluate_one", "one_state_driver", "evaluate_batch"]

CHUNK = 16  #: states per task of a parallel batch


class Sizes(NamedTuple):
    """The sizes a request's workspace depends on."""

    n: int  #: bodies
    nq: int
    nv: int
    ns: int  #: Σ m_k
    mm: int  #: max m_k (at least 1)
    nn: int  #: max n_k (at least 1)
    riccati: int  #: the Riccati buffer
    arena: int


@dataclass(frozen=True)
class Request:
    """One request of the catalogue (module docstring)."""

    name: str  #: the system method answering it (on the reference path too)
    kernel: object  #: the request kernel, ``kernel(w, x, out) -> status``
    terms: int  #: what of the state it reads (:data:`~sko.engine.state_kernels.Terms`)
    x: str | None  #: its third input's name (``nv`` entries), or None
    velocities: bool  #: whether it reads ``v``
    shape: Callable[[Sizes], tuple]  #: one state's result
    buffers: Callable[[Sizes], tuple]  #: the sizes of its workspace's buffers after the arena
    #: where the hinge forces that run in Python go (tendons, bodies without a compiled hinge
    #: force): ``"result"`` added to it (``T = ℳ θ̈ + 𝒞 + hinge``), ``"input"`` subtracted from
    #: the third input (``θ̈ = ℳ^{-1}(T − 𝒞 − hinge)``), or None (the request reads none)
    hinge: str | None = None
    #: the names of the workspace's buffers (:func:`~sko.engine.fields.columns`), in the order
    #: of :attr:`buffers`: the kernel takes each by its name (:func:`~sko.engine.request_views.buffer`)
    workspace: type | None = None
    #: whether its kernel runs the articulated-body passes (:func:`articulated_passes`, at the
    #: address ``Header.PASSES`` of its request vector)
    passes: bool = False
    #: the kernel it takes instead, for float64 states, on a tree of the library's rigid bodies on
    #: ten inertial parameters (:func:`sko.engine.mass_matrix.applies`; :func:`takes_rigid`), or None
    rigid: RigidKernel | None = None

    def __post_init__(self):
        if self.hinge not in (None, "result", "input"):
            raise ValueError(f"request {self.name!r}: hinge must be 'result', 'input' or None, got {self.hinge!r}")

    def buffer_sizes(self, size: Sizes, rigid: bool = False) -> tuple:
        """The sizes of the workspace's buffers, one per name of :attr:`workspace` (with ``rigid``,
        of the :attr:`rigid` kernel's workspace)."""
        buffers, workspace = self.buffers, self.workspace
        if rigid and self.rigid.buffers is not None:
            buffers, workspace = self.rigid.buffers, self.rigid.workspace
        out = tuple(buffers(size))
        if workspace is not None and len(out) != workspace.WIDTH:
            raise ValueError(f"request {self.name!r}: {len(out)} buffer sizes for the {workspace.WIDTH} "
                             f"buffers of {workspace.__name__}")
        return out

    def address(self, dtype, rigid: bool = False) -> int:
        """The kernel's address for ``dtype`` (compiled or loaded on first use; with ``rigid``,
        the :attr:`rigid` kernel's)."""
        array = types.Array(from_dtype(np.dtype(dtype)), 1, "C")
        return native_address(self.rigid.kernel if rigid else self.kernel, (array, array, array))


@dataclass(frozen=True)
class RigidKernel:
    """A request's kernel for trees of the library's rigid bodies on ten inertial parameters
    (:attr:`Request.rigid`): its signature and status are the request kernel's."""

    kernel: object  #: ``kernel(w, x, out) -> status``
    #: the sizes of its workspace's buffers after the arena, or None: the request's own workspace
    buffers: Callable[[Sizes], tuple] | None = None
    workspace: type | None = None  #: the names of its buffers (with :attr:`buffers`)
    #: ``applies(layout)``: a further condition on the system than
    #: :func:`sko.engine.mass_matrix.applies` (the joints of :mod:`sko.engine.rigid_rnea`), or None
    applies: Callable | None = None


# ----------------------------------------------------------------------------- the workspaces
#: Newton–Euler's: 𝒱, α, f (3 × Σ m_k).
NewtonEulerWork = columns("NewtonEulerWork", "NODES")
#: The articulated-body passes': the Riccati buffer, its scratch (then ε of the passes), ``z``, the
#: right-hand sides.
ArticulatedWork = columns("ArticulatedWork", "RICCATI", "SCRATCH", "Z", "RHS")
#: The mass matrix's: ℛ, its scratch, ``F``, ``Y``.
CompositeWork = columns("CompositeWork", "R", "SCRATCH", "F", "Y")
#: The derivatives' (:mod:`~sko.engine.derivatives`): the nodes, the inertias, the columns, scratch.
DerivativeWork = columns("DerivativeWork", "NODES", "INERTIAS", "COLUMNS", "SCRATCH")
#: The forward dynamics derivatives': those of the derivatives, then the factor, ``ℳ``, the
#: right-hand sides, ``θ̈`` and the tree's positions (``last``, ``perm``, ``lam``).
ForwardDerivativeWork = columns("ForwardDerivativeWork",
                                *(m.name for m in DerivativeWork if m is not DerivativeWork.WIDTH),
                                "FACTOR", "M", "RHS", "QDD", "LAST", "PERM", "LAM")


# ----------------------------------------------------------------------------- the request kernels
@kernel
def _inverse_dynamics(w, x, out):
    """``T = ℳ θ̈ + 𝒞 + hinge`` by Newton–Euler (Algorithm 3.1); buffers: 𝒱, α, f."""
    w, x, out = borrowed(w), borrowed(x), borrowed(out)
    words, rows, layout, roff, reals, arena, ws, at = request_views(w)
    status = fill_arena(words, rows, reals, arena, Terms.MOTION)
    if status >= 0:
        return status
    nodes = matrix_view(ws, at[NewtonEulerWork.NODES], 3, words[Header.NS])
    rb.zero(ws, at[NewtonEulerWork.NODES], at[NewtonEulerWork.NODES] + nodes.size)
    rnea.newton_euler(layout, arena, x, arena[words[Header.V]: words[Header.V] + words[Header.NV]], nodes, out, False)
    return _hinge(words, rows, reals, arena, out, 1.0)


@kernel
def _rigid_inverse_dynamics(w, x, out):
    """``T`` of a tree of rigid bodies on joints of constant ``S`` (:mod:`sko.engine.rigid_rnea`),
    the kernel of the ``inverse_dynamics`` request where it applies; buffers: those of
    :func:`_inverse_dynamics`."""
    w, x, out = borrowed(w), borrowed(x), borrowed(out)
    words, rows, layout, roff, reals, arena, ws, at = request_views(w)
    status = fill_arena(words, rows, reals, arena, Terms.STRUCTURE)
    if status >= 0:
        return status
    rigid_newton_euler(rows, layout, arena, x, arena[words[Header.V]: words[Header.V] + words[Header.NV]],
                       buffer(ws, at, NewtonEulerWork.NODES), out)
    return _hinge(words, rows, reals, arena, out, 1.0)


@register
def _hinge(words, rows, reals, arena, f, sign):
    """``f += sign · hinge`` of the bodies' compiled hinge forces (:mod:`sko.engine.hooks`): −1,
    or ``2N + k`` for the row ``k`` whose hook failed."""
    if words[Header.HINGES] == 0:
        return -1
    bad = add_hinge_forces(rows, reals, arena, words[Header.V], f, sign)
    return -1 if bad < 0 else 2 * words[Header.N] + bad


@kernel
def articulated_passes(w, out, inverse):
    """The Riccati gather and the articulated-body passes (Algorithm 6.1) on the arena of the
    request vector ``w``: with ``inverse``, on the columns of the identity with ``a = b = 0``
    (``ℳ^{-1}``, symmetric), else on the right-hand side in its buffer ``rhs`` with ``a``, ``b``
    (``θ̈``); buffers: r, Riccati scratch, z, rhs. The request kernels call it at its address
    (``Header.PASSES``, :func:`passes_address`): a kernel's machine code holds a copy of every
    kernel it calls directly, optimized and generated again with it, and the two recursions
    would be compiled again in each request running them."""
    w, out = borrowed(w), borrowed(out)
    words, rows, layout, roff, reals, arena, ws, at = request_views(w)
    nv, ns, cols = words[Header.NV], words[Header.NS], out.shape[0] // max(words[Header.NV], 1)
    r, scratch = buffer(ws, at, ArticulatedWork.RICCATI), buffer(ws, at, ArticulatedWork.SCRATCH)
    bad, _ = aba.riccati(layout, arena, roff, r, scratch, False)
    if bad >= 0:
        return words[Header.N] + layout[bad, Flat.BODY]
    z = matrix_view(ws, at[ArticulatedWork.Z], ns, cols)
    rhs = matrix_view(ws, at[ArticulatedWork.RHS], nv, cols)
    rb.zero(ws, at[ArticulatedWork.Z], at[ArticulatedWork.Z] + z.size)
    if inverse:
        rb.zero(ws, at[ArticulatedWork.RHS], at[ArticulatedWork.RHS] + rhs.size)
        for i in range(nv):
            rhs[i, i] = 1
    aba.articulated_body(layout, arena, roff, r, rhs, not inverse, z, matrix_view(out, 0, nv, cols), scratch)
    return -1


def _passes_types(dtype) -> tuple:
    """The numba types of :func:`articulated_passes`' arguments for a request vector of ``dtype``."""
    array = types.Array(from_dtype(np.dtype(dtype)), 1, "C")
    return array, array, types.boolean


def passes_address(dtype) -> int:
    """The address of :func:`articulated_passes` for request vectors of ``dtype`` (``Header.PASSES``)."""
    return native_address(articulated_passes, _passes_types(dtype))


#: ``call_passes(words[Header.PASSES], (w, out, inverse))``: :func:`articulated_passes` at its
#: address; its status, or −5 when it raised.
call_passes = native_caller(types.int64, -5, lambda argtypes: any(argtypes == _passes_types(d) for d in DTYPES))


@kernel
def _forward_dynamics(w, x, out):
    """``θ̈ = ℳ^{-1}(T − 𝒞 − hinge)`` by the articulated-body passes (Algorithm 6.1)."""
    w, x, out = borrowed(w), borrowed(x), borrowed(out)
    words, rows, layout, roff, reals, arena, ws, at = request_views(w)
    status = fill_arena(words, rows, reals, arena, Terms.MOTION)
    if status >= 0:
        return status
    return _articulated(w, x, out)


@kernel
def _rigid_forward_dynamics(w, x, out):
    """``θ̈`` of a tree of rigid bodies on joints of constant ``S``, the kernel of the
    ``forward_dynamics`` request where it applies: the state kernels write ``E`` and ``H``
    (``Terms.STRUCTURE``), :func:`~sko.engine.rigid_rnea.rigid_bias` forms ``a`` and ``b`` from
    them, then the passes of :func:`_forward_dynamics`."""
    w, x, out = borrowed(w), borrowed(x), borrowed(out)
    words, rows, layout, roff, reals, arena, ws, at = request_views(w)
    status = fill_arena(words, rows, reals, arena, Terms.STRUCTURE)
    if status >= 0:
        return status
    rigid_bias(rows, layout, arena, arena[words[Header.V]: words[Header.V] + words[Header.NV]])
    return _articulated(w, x, out)


@register
def _articulated(w, x, out):
    """``θ̈`` of :func:`_forward_dynamics` on the filled arena of ``w``: the right-hand side
    ``T − hinge``, then the passes."""
    words, rows, layout, roff, reals, arena, ws, at = request_views(w)
    rhs = buffer(ws, at, ArticulatedWork.RHS)
    for i in range(x.shape[0]):
        rhs[i] = x[i]
    status = _hinge(words, rows, reals, arena, rhs, -1.0)
    if status >= 0:
        return status
    return call_passes(words[Header.PASSES], (w, out, False))


@kernel
def _mass_matrix_inverse(w, x, out):
    """``ℳ^{-1}`` by the articulated-body passes on the columns of the identity (no dense inversion)."""
    w, x, out = borrowed(w), borrowed(x), borrowed(out)
    words, rows, layout, roff, reals, arena, ws, at = request_views(w)
    status = fill_arena(words, rows, reals, arena, Terms.STRUCTURE)
    if status >= 0:
        return status
    return call_passes(words[Header.PASSES], (w, out, True))


@kernel
def _mass_matrix(w, x, out):
    """``ℳ`` by composite inertias and the block CRBA (Algorithms 4.1, 4.2); buffers: ℛ, its
    scratch, F, Y."""
    w, x, out = borrowed(w), borrowed(x), borrowed(out)
    words, rows, layout, roff, reals, arena, ws, at = request_views(w)
    status = fill_arena(words, rows, reals, arena, Terms.STRUCTURE)
    if status >= 0:
        return status
    nv = words[Header.NV]
    R = buffer(ws, at, CompositeWork.R)
    crba.composite_inertias(layout, arena, R, buffer(ws, at, CompositeWork.SCRATCH))
    crba.mass_matrix(layout, arena, R, matrix_view(out, 0, nv, nv), buffer(ws, at, CompositeWork.F),
                  buffer(ws, at, CompositeWork.Y))
    return -1


@kernel
def _rigid_mass_matrix(w, x, out):
    """``ℳ`` of a tree of rigid bodies on ten inertial parameters (:mod:`sko.engine.mass_matrix`),
    the kernel of the ``mass_matrix`` request where it applies; buffers: those of :func:`_mass_matrix`.
    A vector that fills its arena takes it (:func:`request_vector`): the arena holds the call's ``q``."""
    w, x, out = borrowed(w), borrowed(x), borrowed(out)
    words, rows, layout, roff, reals, arena, ws, at = request_views(w)
    if words[Header.WRITTEN] != 0:  # the constants written: the states of bodies off an axis alone
        status = MM.fill_off_axis(rows, reals, arena)
    else:
        status = fill_arena(words, rows, reals, arena, Terms.STRUCTURE)
    if status >= 0:
        return status
    nv = words[Header.NV]
    MM.rigid_mass_matrix(layout, arena, buffer(ws, at, CompositeWork.R), buffer(ws, at, CompositeWork.F),
                         matrix_view(out, 0, nv, nv), rows, reals)
    return -1


@kernel
def _energies(w, x, out):
    """``[T, V]``: the kinetic energy ``½ Σ 𝒱*(k) M(k) 𝒱(k)`` and the potential ``Σ V(k)``."""
    w, x, out = borrowed(w), borrowed(x), borrowed(out)
    words, rows, layout, roff, reals, arena, ws, at = request_views(w)
    status = fill_arena(words, rows, reals, arena, Terms.POSE)
    if status >= 0:
        return status
    kinetic, potential = 0.0, 0.0
    for k in range(rows.shape[0]):
        m, vo, mo = rows[k, Row.NODE_DIM], rows[k, Row.VELOCITY], rows[k, Row.M]
        for i in range(m):
            s = 0.0
            for j in range(m):
                s += arena[mo + i * m + j] * arena[vo + j]
            kinetic += 0.5 * arena[vo + i] * s
        potential += arena[rows[k, Row.POTENTIAL]]
    out[0], out[1] = kinetic, potential
    return -1


@kernel
def _inverse_dynamics_derivatives(w, x, out):
    """``(∂T/∂θ, ∂T/∂θ̇, ℳ)`` of a rigid tree on joints of constant ``S`` by the O(N·d) recursion
    in world coordinates (DERIVATIVES.md §4–§5, :mod:`~sko.engine.derivatives`).
    Buffers: the nodes, the inertias, the columns, scratch."""
    w, x, out = borrowed(w), borrowed(x), borrowed(out)
    words, rows, layout, roff, reals, arena, ws, at = request_views(w)
    status = fill_arena(words, rows, reals, arena, Terms.POSE)
    if status >= 0:
        return status
    nv, v0 = words[Header.NV], words[Header.V]
    nodes, inertias = buffer(ws, at, DerivativeWork.NODES), buffer(ws, at, DerivativeWork.INERTIAS)
    t = buffer(ws, at, DerivativeWork.SCRATCH)
    cols = matrix_view(ws, at[DerivativeWork.COLUMNS], CD.Columns.WIDTH, 6 * nv)
    CD.sweeps(rows, arena, v0, reals[:3], arena[v0: v0 + nv], x, nodes, inertias, cols, t)
    CD.walks(rows, v0, nodes, inertias, cols, t, matrix_view(out, 0, nv, nv), matrix_view(out, nv * nv, nv, nv),
             matrix_view(out, 2 * nv * nv, nv, nv), True)
    return -1


@kernel
def _forward_dynamics_derivatives(w, x, out):
    """``(∂θ̈/∂θ, ∂θ̈/∂θ̇, ℳ⁻¹)`` at ``θ̈ = FD(q, θ̇, T)`` (DERIVATIVES.md, Eq. 3): the sweeps of
    :func:`_inverse_dynamics_derivatives` at ``θ̈ = 0`` give the bias and ``ℳ``; its sparse
    ``Lᵀ D L`` (SPARSE.md) gives ``θ̈``, where the sweeps run again for ``∂T/∂θ``, ``∂T/∂θ̇``;
    one solve with ``3 nv`` right-hand sides gives ``−ℳ⁻¹ ∂T/∂θ``, ``−ℳ⁻¹ ∂T/∂θ̇`` and ``ℳ⁻¹``.
    Buffers: those of the inverse dynamics derivatives, then the factor, ``ℳ``, the right-hand
    sides, ``θ̈`` and the tree's positions (``last``, ``perm``, ``lam``)."""
    w, x, out = borrowed(w), borrowed(x), borrowed(out)
    words, rows, layout, roff, reals, arena, ws, at = request_views(w)
    status = fill_arena(words, rows, reals, arena, Terms.POSE)
    if status >= 0:
        return status
    nv, v0 = words[Header.NV], words[Header.V]
    nodes, inertias = buffer(ws, at, DerivativeWork.NODES), buffer(ws, at, DerivativeWork.INERTIAS)
    t = buffer(ws, at, DerivativeWork.SCRATCH)
    cols = matrix_view(ws, at[DerivativeWork.COLUMNS], CD.Columns.WIDTH, 6 * nv)
    A = matrix_view(ws, at[ForwardDerivativeWork.FACTOR], nv, nv)
    M = matrix_view(ws, at[ForwardDerivativeWork.M], nv, nv)
    X = matrix_view(ws, at[ForwardDerivativeWork.RHS], nv, 3 * nv)
    qdd, last = buffer(ws, at, ForwardDerivativeWork.QDD), buffer(ws, at, ForwardDerivativeWork.LAST)
    perm, lam = buffer(ws, at, ForwardDerivativeWork.PERM), buffer(ws, at, ForwardDerivativeWork.LAM)
    qd, dq, dv = arena[v0: v0 + nv], matrix_view(out, 0, nv, nv), matrix_view(out, nv * nv, nv, nv)
    rb.zero(qdd, 0, qdd.shape[0])
    CD.sweeps(rows, arena, v0, reals[:3], qd, qdd, nodes, inertias, cols, t)
    CD.joint_forces(rows, v0, nodes, cols, qdd)  # the bias 𝒞 = T(q, θ̇, 0)
    CD.walks(rows, v0, nodes, inertias, cols, t, dq, dv, M, False)
    CD.tree_positions(rows, v0, last, perm, lam)
    rhs = X[:, :1]
    for u in range(nv):
        pu = int(perm[u].real)
        rhs[u, 0] = x[pu] - qdd[pu]
        for c in range(nv):
            A[u, c] = M[pu, int(perm[c].real)]
    bad = CD.ltdl(A, lam)
    if bad >= 0:  # ℳ not positive definite: name the body of that column, as D(k) of the passes does
        return words[Header.N] + layout[CD.row_of_column(rows, v0, int(perm[bad].real)), Flat.BODY]
    CD.ltdl_solve(A, lam, rhs)
    for u in range(nv):
        qdd[int(perm[u].real)] = rhs[u, 0]
    CD.sweeps(rows, arena, v0, reals[:3], qd, qdd, nodes, inertias, cols, t)
    CD.walks(rows, v0, nodes, inertias, cols, t, dq, dv, M, True)
    for u in range(nv):  # rows at positions: [∂T/∂θ | ∂T/∂θ̇ | 1]
        pu = int(perm[u].real)
        for c in range(nv):
            X[u, c], X[u, nv + c], X[u, 2 * nv + c] = dq[pu, c], dv[pu, c], 0.0
        X[u, 2 * nv + pu] = 1.0
    CD.ltdl_solve(A, lam, X)
    for u in range(nv):
        pu = int(perm[u].real)
        for c in range(nv):
            out[pu * nv + c] = -X[u, c]
            out[(nv + pu) * nv + c] = -X[u, nv + c]
            out[(2 * nv + pu) * nv + c] = X[u, 2 * nv + c]
    return -1


def _vector(s: Sizes) -> tuple:
    return (s.nv,)


def _square(s: Sizes) -> tuple:
    return (s.nv, s.nv)


def _derivative_buffers(s: Sizes) -> tuple:
    """:data:`DerivativeWork`: the nodes, the inertias, the columns and the scratch of
    :mod:`~sko.engine.derivatives`."""
    return CD.Node.SIZE * s.n, CD.Inertias.SIZE * s.n, CD.Columns.WIDTH * 6 * s.nv, CD.scratch_size(s.nn)


def _riccati_buffers(s: Sizes, cols: int) -> tuple:
    """:data:`ArticulatedWork`: r, the Riccati scratch (then ε of the passes), z, the right-hand sides."""
    return s.riccati, max(aba.RiccatiScratch.SIZE * max(s.mm, s.nn) ** 2, s.nn * cols), s.ns * cols, s.nv * cols


#: The catalogue: every request of the compiled path, by name.
REQUESTS = {r.name: r for r in (
    Request("inverse_dynamics", _inverse_dynamics, Terms.MOTION, "dv", True, _vector, lambda s: (3 * s.ns,),
            hinge="result", workspace=NewtonEulerWork, rigid=RigidKernel(_rigid_inverse_dynamics, applies=rigid_rnea.applies)),
    Request("forward_dynamics", _forward_dynamics, Terms.MOTION, "tau", True, _vector,
            lambda s: _riccati_buffers(s, 1), hinge="input", workspace=ArticulatedWork, passes=True,
            rigid=RigidKernel(_rigid_forward_dynamics, applies=rigid_rnea.forms_bias)),
    Request("mass_matrix", _mass_matrix, Terms.STRUCTURE, None, False, _square,
            lambda s: (s.arena, s.mm * s.mm, s.mm * max(s.nv, 1), s.mm * max(s.nv, 1)), workspace=CompositeWork,
            rigid=RigidKernel(_rigid_mass_matrix)),
    Request("mass_matrix_inverse", _mass_matrix_inverse, Terms.STRUCTURE, None, False, _square,
            lambda s: _riccati_buffers(s, s.nv), workspace=ArticulatedWork, passes=True),
    Request("inverse_dynamics_derivatives", _inverse_dynamics_derivatives, Terms.POSE, "dv", True,
            lambda s: (3, s.nv, s.nv), _derivative_buffers, workspace=DerivativeWork),
    Request("forward_dynamics_derivatives", _forward_dynamics_derivatives, Terms.POSE, "tau", True,
            lambda s: (3, s.nv, s.nv),
            lambda s: (*_derivative_buffers(s), s.nv * s.nv, s.nv * s.nv, 3 * s.nv * s.nv, s.nv, s.n, s.nv, s.nv),
            workspace=ForwardDerivativeWork),
    Request("energy", _energies, Terms.POSE, None, True, lambda s: (2,), lambda s: ()),
    Request("centroidal_terms", centroidal, Terms.STRUCTURE, None, True, lambda s: (6, s.nv + Result.SIZE),
            centroidal_buffers, workspace=CentroidalWork,
            rigid=RigidKernel(rigid_centroidal, rigid_buffers, RigidWork)),
    Request("centroidal_momentum_matrix", centroidal, Terms.STRUCTURE, None, False, lambda s: (6, s.nv),
            centroidal_buffers, workspace=CentroidalWork,
            rigid=RigidKernel(rigid_centroidal, rigid_buffers, RigidWork)),
    Request("centroidal_momentum_matrix_rate", centroidal_rate, Terms.MOTION, None, True, lambda s: (6, s.nv),
            rate_buffers, workspace=RateWork, rigid=RigidKernel(rigid_centroidal_rate, rigid_buffers, RigidWork)),
    Request("joint_torque_regressor", torque_regressor_request, Terms.MOTION, "dv", True, lambda s: (s.nv, 10 * s.n),
            torque_buffers, workspace=TorqueWork),
    Request("energy_regressors", energy_regressors_request, Terms.MOTION, None, True, lambda s: (2, 10 * s.n),
            energy_buffers, workspace=EnergyWork),
)}


def sizes(layout) -> Sizes:
    """The :class:`Sizes` of the system of ``layout`` (a :class:`~sko.engine.state_layout.StateLayout`)."""
    mm, nn = max_dims(layout.request_layout)
    return Sizes(len(layout.bodies), layout.system.q_size, layout.dof_size, layout.node_size, mm, nn,
                 layout.riccati_size, layout.size)


def takes_rigid(request: Request, layout, dtype) -> bool:
    """Whether ``request`` takes its :attr:`~Request.rigid` kernel for the system of ``layout`` in
    ``dtype``: float64, every body a library rigid body on ten inertial parameters
    (:func:`sko.engine.mass_matrix.applies`). complex128 (the complex step's) keeps the generic
    kernel, which every other body type compiles anyway."""
    rigid = request.rigid
    return (rigid is not None and np.dtype(dtype) == np.float64 and MM.applies(layout)
            and (rigid.applies is None or rigid.applies(layout)))


def request_vector(request: Request, layout, dtype, arena: np.ndarray | None = None,
                   kernels: bool = True) -> np.ndarray:
    """The request vector of ``request`` for the system of ``layout`` (a
    :class:`~sko.engine.state_layout.StateLayout`) in ``dtype``; with ``arena`` (a filled
    arena), the calls do not fill it and the request takes its generic kernel: the arena's ``b``
    may carry external forces, and the :attr:`~Request.rigid` kernels form their terms from the
    state. Without ``kernels`` it names none (``Header.KERNEL`` and
    ``Header.PASSES`` zero), so none is compiled: for a caller that runs its own passes on the
    vector's views (:mod:`sko.engine.lanes`)."""
    dtype = np.dtype(dtype)
    L, size = layout, sizes(layout)
    rigid = arena is None and takes_rigid(request, L, dtype)
    buffers = np.cumsum((L.size, *request.buffer_sizes(size, rigid)))
    tables = (L.table(dtype), L.request_layout, L.riccati_offsets)
    header = np.zeros(Header.WIDTH, dtype=np.int64)
    words = [header, buffers] + [t.ravel() for t in tables]
    starts = np.cumsum([0] + [len(x) for x in words])
    reals_start = int(starts[-1])
    reals_end = reals_start + len(L.reals)
    workspace = -(-reals_end * 8 // dtype.itemsize)
    header[Header.KERNEL] = request.address(dtype, rigid) if kernels else 0
    header[Header.FILL], header[Header.WRITTEN], header[Header.X] = arena is None, 0, request.x is not None
    header[Header.N], header[Header.NV], header[Header.NQ] = size.n, size.nv, size.nq
    header[Header.NS], header[Header.ARENA] = size.ns, size.arena
    header[Header.Q], header[Header.V] = L.q_offset, L.v_offset
    header[Header.BUFFERS], header[Header.ROWS], header[Header.LAYOUT], header[Header.ROFF] = starts[1:5]
    header[Header.REALS], header[Header.REALS_END], header[Header.WORKSPACE] = reals_start, reals_end, workspace
    header[Header.HINGES] = bool(tables[0][:, Row.HINGE].any())
    header[Header.PASSES] = passes_address(dtype) if request.passes and kernels else 0
    w = np.zeros(workspace + int(buffers[-1]) + size.nv, dtype=dtype)  # then x of a one-state call
    w.view(np.int64)[:reals_start] = np.concatenate(words)
    w.view(np.float64)[reals_start: reals_end] = L.reals
    if arena is not None:
        w[workspace: workspace + L.size] = arena
    return w


# ----------------------------------------------------------------------------- one state, a batch
@register
def _finite(x) -> bool:
    """Every entry of ``x`` finite: ``0·x`` is zero for a finite number and NaN for an infinity or
    a NaN, so the sum of the ``0·x_i`` is zero (one pass without a branch, which vectorizes)."""
    s = 0.0
    for i in range(x.shape[0]):
        v = x[i]
        s += 0.0 * v.real + 0.0 * v.imag
    return s == 0.0


@register
def _state_in(w, words, q, qd):
    """``q`` and ``qd`` (``nv`` entries, or none: zero velocities) into the arena of ``w``, when
    the call fills it."""
    if words[Header.FILL] == 0:
        return
    arena = w[words[Header.WORKSPACE]:]
    q0, v0 = words[Header.Q], words[Header.V]
    for i in range(q.shape[0]):
        arena[q0 + i] = q[i]
    if qd.shape[0] == 0:
        for i in range(words[Header.NV]):
            arena[v0 + i] = 0
    else:
        for i in range(qd.shape[0]):
            arena[v0 + i] = qd[i]


@register
def _run_request(w, words, x, out) -> int:
    """The request kernel of ``w`` on the third input ``x`` into ``out`` (flattened), and the
    call's status: ``-3`` for a result that is not finite."""
    flat = flat_view(out)
    status = call_request(words[Header.KERNEL], (w, x, flat))
    if not 0 <= status < words[Header.N]:
        words[Header.WRITTEN] = 1
    if status == -1 and not _finite(flat):
        status = -3
    return status


def _evaluate_one(w, q, qd, x, out):
    """The request of the request vector ``w`` at one state into ``out``, zeroed, of one state's
    result shape; ``x`` (``θ̈`` or ``T``) of ``nv`` entries, or none for a request without one.
    ``q``, ``qd`` and ``x`` are read only, with any strides: ``x`` is copied into the request
    vector's last ``nv`` entries, the kernel's contiguous third input. Returns the status
    (module docstring): nothing is computed for ``-2`` or ``-4`` (the caller reports it as the
    reference path does); ``-3`` is an overflow (the caller takes the checked path, which
    reports it)."""
    w, q, qd, x, out = borrowed(w), borrowed(q), borrowed(qd), borrowed(x), borrowed(out)
    words = w.view(np.int64)
    nv, nq = words[Header.NV], words[Header.NQ]
    if q.shape[0] != nq or qd.shape[0] != nv or x.shape[0] != nv and (words[Header.X] != 0 or x.shape[0] != 0):
        return -4
    if not (_finite(q) and _finite(qd) and _finite(x)):
        return -2
    _state_in(w, words, q, qd)
    third = w[w.shape[0] - x.shape[0]:]
    for i in range(x.shape[0]):
        third[i] = x[i]
    return _run_request(w, words, third, out)


def _evaluate_configuration(w, q, out):
    """:func:`_evaluate_one` at zero velocities, for a request without a third input."""
    w, q, out = borrowed(w), borrowed(q), borrowed(out)
    words = w.view(np.int64)
    if q.shape[0] != words[Header.NQ] or words[Header.X] != 0:
        return -4
    if not _finite(q):
        return -2
    _state_in(w, words, q, w[:0])
    return _run_request(w, words, w[:0], out)


_DRIVERS: dict = {}  # (scalar type, result dimensions, velocities) -> the compiled driver


def one_state_driver(dtype, dimensions: int = 1, velocities: bool = True):
    """The one-state driver for request vectors of ``dtype`` and results of ``dimensions`` axes:
    ``driver(w, q, qd, x, out) -> status`` (:func:`_evaluate_one`), or with ``velocities=False``
    ``driver(w, q, out)`` (zero velocities, a request without a third input). Compiled (or loaded
    from the cache) on first use for exactly these types — ``w`` and ``out`` C-ordered and
    writeable (the caller's own), ``q``, ``qd``, ``x`` any 1-D arrays of ``dtype`` (read only,
    any strides, unaligned) — and never for others: numba's dispatcher raises ``TypeError`` for
    other arguments. That refusal searches numba's conversions first (a hundred microseconds and
    more), so a caller that falls back on it checks the scalar type and dimensions of what it
    passes itself (:mod:`sko.engine.dispatch`)."""
    dtype = np.dtype(dtype)
    key = (dtype.char, dimensions, velocities)
    driver = _DRIVERS.get(key)
    if driver is None:
        scalar = from_dtype(dtype)
        own, given = types.Array(scalar, 1, "C"), types.Array(scalar, 1, "A", readonly=True, aligned=False)
        out = types.Array(scalar, dimensions, "C")
        function = _evaluate_one if velocities else _evaluate_configuration
        driver = cached(njit(fastmath=FAST_MATH, error_model="numpy", pipeline_class=Compiler)(function))
        driver.compile((own, given, given, given, out) if velocities else (own, given, out))
        driver.disable_compile()
        _DRIVERS[key] = driver
    return driver


def evaluate_one(w, q, qd, x, out) -> int:
    """The request of the request vector ``w`` at one state (:func:`_evaluate_one`); ``out`` is
    1-D (one state's result, flattened)."""
    return one_state_driver(w.dtype)(w, q, qd, x, out)


@kernel(entry=True, parallel=True)
def evaluate_batch(w, Q, QD, X, A, out, status):
    """The request of the request vector ``w`` at every state of a batch: ``Q`` (B × nq), ``QD``
    (B × nv), ``X`` (B × nv, or B × 0), into ``out`` (B × one state's result size, zeroed) and
    ``status`` (B; ``-3`` for a result that is not finite, checked while it is in cache, as for
    one state); ``A``: the filled arenas (B × L) when ``w`` does not fill them (else 0 × L).
    Chunks of :data:`CHUNK` states run in parallel, each on its own copy of ``w``."""
    w, Q, QD, X, A, out, status = (borrowed(w), borrowed(Q), borrowed(QD), borrowed(X), borrowed(A), borrowed(out),
                                   borrowed(status))
    words = w.view(np.int64)
    fill, address, start = words[Header.FILL] != 0, words[Header.KERNEL], words[Header.WORKSPACE]
    nq, nv, size = words[Header.NQ], words[Header.NV], words[Header.ARENA]
    for c in prange((Q.shape[0] + CHUNK - 1) // CHUNK):
        local = w.copy()
        arena = local[start: start + size]
        for s in range(c * CHUNK, min(Q.shape[0], c * CHUNK + CHUNK)):
            if fill:
                for i in range(nq):
                    arena[words[Header.Q] + i] = Q[s, i]
                for i in range(nv):
                    arena[words[Header.V] + i] = QD[s, i]
            else:
                for i in range(size):
                    arena[i] = A[s, i]
            status[s] = call_request(address, (local, X[s], out[s]))
            if not 0 <= status[s] < words[Header.N]:
                local.view(np.int64)[Header.WRITTEN] = 1
            if status[s] == -1 and not _finite(out[s]):
                status[s] = -3

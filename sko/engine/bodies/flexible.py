"""The state kernel of a flexible body (module docstring of :mod:`sko.bodies.flexible`; the
contract of :mod:`sko.engine.state_kernels`).

``E = [ᵏX_o; 0]``, ``H = diag(S*, I_r)``, ``M = Σ μ_i B_i* B_i``, ``a = [hinge a; 0]``,
``b = Σ μ_i B_i* (ω × (Φ_i η̇ + u_i)) + [0; K η + C η̇]``, its own frame's record and one record
per modal node (BODIES.md): ``Γ_o = [ᵒX_k, Π_o]``, ``γ_o = Γ̇_o 𝒱(k)``.
"""

from __future__ import annotations

import numpy as np

from sko.engine.fields import offsets
from sko.engine.jit import inline_kernel, kernel, register
from sko.engine.joints import FREE, PLANAR, SPHERICAL, JointConstants, joint_constants
from sko.bodies.contract import CompiledState
from sko.engine.state_kernels import Record, Row, StateKernel, Terms, numeric_state
from sko.engine.bodies.rigid import (HingeWork, Placement, call_hinge, constant_motion, motion_cross, placement_constants,
                                     real_dot, transform)
from sko.engine.rigid_blocks import column6

__all__ = ["FlexibleConstants", "FlexibleWork", "FLEXIBLE", "pack_flexible", "flexible_scratch", "exp_map_coefficients",
           "exp_map_second_derivatives"]

#: A flexible body's constants: its joint and placement, the numbers of particles ``n``, modes
#: ``r`` and modal nodes; then the masses (n), positions (n × 3), mode shapes (n × 3 × r),
#: stiffness and damping (r × r) and, per modal node, its position (3), translation (3 × r) and
#: rotation (3 × r) shapes (all row-major).
FlexibleConstants = offsets("FlexibleConstants", joint=JointConstants.SIZE, placement=Placement.SIZE, particles=1,
                            modes=1, nodes=1)
_SERIES_TERMS = 20
_FACTORIALS = np.cumprod(np.concatenate([[1.0], np.arange(1.0, 2 * _SERIES_TERMS + 4)]))  #: 0!, 1!, 2!, …
#: The coefficients of the series of :func:`exp_map_coefficients` (rows ``A``, ``B``, ``C``, ``dB/ds``,
#: ``dC/ds``; column ``n``): ``(−1)ⁿ [n] / (2n + 1, 2, 3)!``, the same quotients as the Horner steps
#: of :func:`sko.bodies.flexible.exp_map_coefficients` take, divided once here.
_SERIES = np.array([[(-1.0 if n % 2 else 1.0) * (n if derivative else 1) / _FACTORIALS[2 * n + offset]
                     for n in range(_SERIES_TERMS)]
                    for offset, derivative in ((1, False), (2, False), (3, False), (2, True), (3, True))])


@kernel
def exp_map_coefficients(s):
    """``A, B, C, dB/ds, dC/ds`` of :func:`sko.bodies.flexible.exp_map_coefficients`."""
    if abs(s) <= 4.0:
        A = B = C = dB = dC = 0 * s
        c = _SERIES
        for n in range(_SERIES_TERMS - 1, -1, -1):
            A = A * s + c[0, n]
            B = B * s + c[1, n]
            C = C * s + c[2, n]
            if n >= 1:
                dB = dB * s + c[3, n]
                dC = dC * s + c[4, n]
        return A, B, C, dB, dC
    th = np.sqrt(s)
    sin, cos = np.sin(th), np.cos(th)
    return (sin / th, (1 - cos) / s, (th - sin) / (s * th),
            (th * sin / 2 - (1 - cos)) / s**2, ((1 - cos) * th - 3 * (th - sin)) / (2 * th**5))


#: The coefficients of the series of :func:`exp_map_second_derivatives` (rows ``d²B/ds²``, ``d²C/ds²``):
#: ``(−1)ⁿ n (n − 1) / (2n + 2, 3)!``.
_SECOND = np.array([[(-1.0 if n % 2 else 1.0) * n * (n - 1) / _FACTORIALS[2 * n + offset] for n in range(_SERIES_TERMS)]
                    for offset in (2, 3)])


@kernel
def exp_map_second_derivatives(s):
    """``d²B/ds²`` and ``d²C/ds²`` of the coefficients of :func:`exp_map_coefficients` (power
    series for ``|s| ≤ 4``; beyond, with ``θ = √s``, ``(θ f′ − 4 f)/(2 θ⁶)`` for ``dB/ds = f/θ⁴``,
    ``f = θ sin θ/2 − (1 − cos θ)``, and ``(θ g′ − 5 g)/(4 θ⁷)`` for ``dC/ds = g/(2 θ⁵)``,
    ``g = (1 − cos θ) θ − 3 (θ − sin θ)``)."""
    if abs(s) <= 4.0:
        ddB = ddC = 0 * s
        c = _SECOND
        for n in range(_SERIES_TERMS - 1, 1, -1):
            ddB = ddB * s + c[0, n]
            ddC = ddC * s + c[1, n]
        return ddB, ddC
    th = np.sqrt(s)
    sin, cos = np.sin(th), np.cos(th)
    f, df = th * sin / 2 - (1 - cos), (th * cos - sin) / 2
    g, dg = (1 - cos) * th - 3 * (th - sin), th * sin - 2 * (1 - cos)
    return (th * df - 4 * f) / (2 * th**6), (th * dg - 5 * g) / (4 * th**7)


#: The scratch of :func:`_flexible` after the hinge's: a modal node's rotation ``R_o = exp(ψ×)`` and
#: ``J_r(ψ)`` (row-major), ``ψ``, ``ψ̇``, ``r_o`` and ``v_rel``; then ``Π_o`` (6 × r).
FlexibleWork = offsets("FlexibleWork", rotation=9, jacobian=9, psi=3, psi_rate=3, origin=3, relative=6)


def flexible_scratch(m: int, r: int) -> int:
    """The scratch a flexible body with node dimension ``m`` and ``r`` modes declares."""
    return int(HingeWork.SIZE + FlexibleWork.SIZE + 6 * r)


@inline_kernel
def _cross(a, b):
    """``a × b`` for three numbers each."""
    return a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]


@inline_kernel
def _unit_cross(c, a):
    """``e_c × a`` for the unit vector ``e_c`` (``c`` in 0…2) and three numbers ``a``."""
    if c == 0:
        return 0.0 * a[0], -a[2], a[1]
    if c == 1:
        return a[2], 0.0 * a[0], -a[0]
    return -a[1], a[0], 0.0 * a[0]


@inline_kernel
def _counts(reals, c0):
    """From a flexible body's constants at ``c0`` (:data:`FlexibleConstants`): its particles,
    modes, modal nodes, its joint's ``nq`` and ``nv``, and where its masses, particle positions
    and mode shapes start."""
    n = int(reals[c0 + FlexibleConstants.particles])
    mu = c0 + FlexibleConstants.SIZE
    return (n, int(reals[c0 + FlexibleConstants.modes]), int(reals[c0 + FlexibleConstants.nodes]),
            int(reals[c0 + JointConstants.nq]), int(reals[c0 + JointConstants.nv]), mu, mu + n, mu + 4 * n)


def _flexible(arena, row, reals, terms, constants):
    """A :class:`~sko.bodies.flexible.FlexibleBody` (module docstring); every output, whatever
    ``terms`` asks, but ``E``, ``H``, ``M`` and its records' ``Γ`` at ``Terms.RATES`` (which leaves
    them as the arena holds them: they depend on ``q`` alone) and ``M`` and the records' ``Γ`` at
    ``Terms.JOINT`` (they depend on the modes alone); the world poses (its records', the
    gravity potential) are zero below ``Terms.POSE``, as the hinge's. ``M``'s upper triangle below
    its first three rows, ``Σ μ_i`` of the products of the columns ``[I, Φ_i]`` of ``B_i``, is the
    same at every state: written with ``constants`` only. Particle ``i`` is at
    ``r_i = p_i + Φ_i η``; with ``B_i = [−r_i×, I, Φ_i]``, ``M = Σ μ_i B_i* B_i`` and
    ``b = Σ μ_i B_i* (ω × (Φ_i η̇ + u_i)) + [0; K η + C η̇]``, ``u_i = B_i 𝒱``."""
    c0, wo, io = row[Row.CONSTANTS], row[Row.SCRATCH], row[Row.INBOARD]
    if not call_hinge(row[Row.JOINT], (arena, reals, c0, row[Row.Q], row[Row.V], io, wo, terms)):
        return False
    xo, so = wo + HingeWork.X, wo + HingeWork.S
    vel, acc, R, p = wo + HingeWork.v, wo + HingeWork.acc, wo + HingeWork.rotation, wo + HingeWork.position
    n, r, nn, jnq, jnv, mu, positions, shapes = _counts(reals, c0)  # Φ_i(c, j) at shapes + (3 i + c) r + j
    m = 6 + r
    qe, ve = row[Row.Q] + jnq, row[Row.V] + jnv  # η, η̇ in the arena
    stiffness = shapes + 3 * n * r
    damping = stiffness + r * r
    nodes = damping + r * r
    fw = wo + HingeWork.SIZE
    pw = fw + FlexibleWork.SIZE  # Π_o, 6 × r
    zero = 0 * arena[vel]
    eo, er, ec = row[Row.E], row[Row.E_ROW], row[Row.E_COLUMN]
    hb, mo, ao, bo, vo = row[Row.H], row[Row.M], row[Row.A], row[Row.B], row[Row.VELOCITY]
    mm = 0 if terms == Terms.RATES else m  # the columns of E and H written: none at RATES
    mg = 0 if terms == Terms.RATES or terms == Terms.JOINT else mm  # of M and the records' Γ: none at RATES, JOINT
    pose = terms == Terms.POSE
    for i in range(m):  # E = [ᵏX_o; 0], H = diag(S*, I_r), a = [a_hinge; 0], 𝒱 = [v; η̇]
        for j in range(6 if mm else 0):
            arena[eo + i * er + j * ec] = arena[xo + 6 * i + j] if i < 6 else zero
        arena[ao + i] = arena[acc + i] if i < 6 else zero
        arena[vo + i] = arena[vel + i] if i < 6 else arena[ve + i - 6]
        arena[bo + i] = zero
        for j in range(mg if constants or i < 3 else 0):  # M's rows 3… (upper): constants (docstring)
            arena[mo + i * m + j] = zero
    for j in range(jnv + r if mm else 0):
        for i in range(m):
            arena[hb + j * m + i] = (arena[so + 6 * i + j] if i < 6 else zero) if j < jnv else (
                1.0 + zero if i == 6 + j - jnv else zero)
    w = (arena[vel], arena[vel + 1], arena[vel + 2])
    world0 = world1 = world2 = zero
    for i in range(n):  # B_i = [−r_i×, I, Φ_i] in registers: B_i* y = [(−r_i×)ᵀ y; y; Φ_iᵀ y]
        sh = shapes + 3 * i * r  # Φ_i(c, j) at sh + c r + j
        r0, r1, r2 = reals[positions + 3 * i] + zero, reals[positions + 3 * i + 1] + zero, reals[positions + 3 * i + 2] + zero
        d0 = d1 = d2 = zero  # Φ_i η̇
        for j in range(r):
            r0 += reals[sh + j] * arena[qe + j]
            r1 += reals[sh + r + j] * arena[qe + j]
            r2 += reals[sh + 2 * r + j] * arena[qe + j]
            d0 += reals[sh + j] * arena[ve + j]
            d1 += reals[sh + r + j] * arena[ve + j]
            d2 += reals[sh + 2 * r + j] * arena[ve + j]
        cw = _cross(w, (r0, r1, r2))  # u_i = ω × r_i + v + Φ_i η̇, y = ω × (Φ_i η̇ + u_i)
        y = _cross(w, (cw[0] + arena[vel + 3] + 2 * d0, cw[1] + arena[vel + 4] + 2 * d1, cw[2] + arena[vel + 5] + 2 * d2))
        mi = reals[mu + i]
        K = ((zero, r2, -r1), (-r2, zero, r0), (r1, -r0, zero))  # the rows of B_i's first block, −r_i×
        for c in range(3):  # b += μ B_i* y
            arena[bo + c] += mi * (K[0][c] * y[0] + K[1][c] * y[1] + K[2][c] * y[2])
            arena[bo + 3 + c] += mi * y[c]
        for j in range(r):
            arena[bo + 6 + j] += mi * (reals[sh + j] * y[0] + reals[sh + r + j] * y[1] + reals[sh + 2 * r + j] * y[2])
        if mg:  # M += μ B_i* B_i, upper triangle: rows 0…2 (they move with r_i), the rest with the constants
            for a in range(3):  # (−r×)ᵀ(−r×); (−r×)ᵀ = r×; (−r×)ᵀ Φ_i
                for b in range(a, 3):
                    arena[mo + a * m + b] += mi * (K[0][a] * K[0][b] + K[1][a] * K[1][b] + K[2][a] * K[2][b])
            arena[mo + 4] -= mi * r2
            arena[mo + 5] += mi * r1
            arena[mo + m + 3] += mi * r2
            arena[mo + m + 5] -= mi * r0
            arena[mo + 2 * m + 3] -= mi * r1
            arena[mo + 2 * m + 4] += mi * r0
            for j in range(r):
                for a in range(3):
                    arena[mo + a * m + 6 + j] += mi * (K[0][a] * reals[sh + j] + K[1][a] * reals[sh + r + j]
                                                       + K[2][a] * reals[sh + 2 * r + j])
            if constants:
                for a in range(3):
                    arena[mo + (3 + a) * m + 3 + a] += mi
                    for j in range(r):
                        arena[mo + (3 + a) * m + 6 + j] += mi * reals[sh + a * r + j]
                for j in range(r):
                    for l in range(j, r):
                        arena[mo + (6 + j) * m + 6 + l] += mi * (reals[sh + j] * reals[sh + l] + reals[sh + r + j]
                                                                 * reals[sh + r + l] + reals[sh + 2 * r + j]
                                                                 * reals[sh + 2 * r + l])
        if pose:
            world0 += mi * (arena[p] + arena[R] * r0 + arena[R + 1] * r1 + arena[R + 2] * r2)
            world1 += mi * (arena[p + 1] + arena[R + 3] * r0 + arena[R + 4] * r1 + arena[R + 5] * r2)
            world2 += mi * (arena[p + 2] + arena[R + 6] * r0 + arena[R + 7] * r1 + arena[R + 8] * r2)
    for j in range(mg):
        for l in range(j):
            arena[mo + j * m + l] = arena[mo + l * m + j]
    elastic = zero
    for i in range(r):  # b += [0; K η + C η̇], V += ½ ηᵀ K η
        for j in range(r):
            k = reals[stiffness + i * r + j] * arena[qe + j]
            arena[bo + 6 + i] += k + reals[damping + i * r + j] * arena[ve + j]
            elastic += 0.5 * arena[qe + i] * k
    arena[row[Row.POTENTIAL]] = elastic - (world0 * reals[0] + world1 * reals[1] + world2 * reals[2])
    size = Record.SIZE + 6 * m
    rec = row[Row.RECORDS]  # own frame: γ = 0, pose, v, Γ = [I, 0]
    for i in range(6):
        arena[rec + Record.gamma + i] = zero
        arena[rec + Record.velocity + i] = arena[vel + i]
        for j in range(mg):
            arena[rec + Record.SIZE + i * m + j] = 1.0 + zero if i == j else zero
    for i in range(9):
        arena[rec + Record.rotation + i] = arena[R + i]
    for i in range(3):
        arena[rec + Record.position + i] = arena[p + i]
    for node in range(nn):
        _modal_node(arena, reals, nodes + node * (3 + 6 * r), r, m, qe, ve, wo, fw, pw, rec + (node + 1) * size, mg > 0,
                    pose)
    return True


@kernel
def _modal_node(arena, reals, nb, r, m, qe, ve, wo, fw, pw, ra, structure, pose):
    """The record at ``arena[ra]`` of the modal node whose constants start at ``reals[nb]``
    (position ``p_o``, translation ``Φ_o`` and rotation ``Ψ_o`` shapes): ``Γ_o = [ᵒX_k, Π_o]``
    with ``ᵒX_k = rot(R_oᵀ) xlt(p_o + Φ_o η)``, ``R_o = exp(ψ×)``, ``ψ = Ψ_o η``,
    ``Π_o = [J_r(ψ) Ψ_o; R_oᵀ Φ_o]``, and ``γ_o = Γ̇_o 𝒱 = −(v_rel ×) ᵒX_k v + [J̇_r Ψ_o η̇; −ω_rel × v_rel]``
    (BODIES.md); the hinge's :data:`HingeWork` is at ``wo``, ``fw`` and ``pw`` are scratch. ``Γ_o``
    only with ``structure`` (not at ``Terms.RATES`` or ``Terms.JOINT``), the world pose only with ``pose`` (zero
    otherwise, as the hinge's)."""
    zero = 0 * arena[wo + HingeWork.v]
    phi, psi_o = nb + 3, nb + 3 + 3 * r
    po, pd, oo = fw + FlexibleWork.psi, fw + FlexibleWork.psi_rate, fw + FlexibleWork.origin
    for c in range(3):  # ψ = Ψ_o η, ψ̇ = Ψ_o η̇, r_o = p_o + Φ_o η
        arena[po + c], arena[pd + c], arena[oo + c] = zero, zero, reals[nb + c] + zero
        for j in range(r):
            arena[po + c] += reals[psi_o + c * r + j] * arena[qe + j]
            arena[pd + c] += reals[psi_o + c * r + j] * arena[ve + j]
            arena[oo + c] += reals[phi + c * r + j] * arena[qe + j]
    psi, psid = (arena[po], arena[po + 1], arena[po + 2]), (arena[pd], arena[pd + 1], arena[pd + 2])
    ro = (arena[oo], arena[oo + 1], arena[oo + 2])
    A, B, C, dB, dC = exp_map_coefficients(psi[0] * psi[0] + psi[1] * psi[1] + psi[2] * psi[2])
    Ro, Jr = fw + FlexibleWork.rotation, fw + FlexibleWork.jacobian
    for i in range(3):  # R_o = I + A K + B K², J_r = I − B K + C K² with K = ψ×, K² = ψψᵀ − |ψ|² I
        for j in range(3):
            kk = psi[i] * psi[j] - (psi[0] * psi[0] + psi[1] * psi[1] + psi[2] * psi[2] if i == j else zero)
            k = zero if i == j else (psi[3 - i - j] if (j - i) % 3 == 2 else -psi[3 - i - j])
            arena[Ro + 3 * i + j] = (1.0 if i == j else 0.0) + A * k + B * kk
            arena[Jr + 3 * i + j] = (1.0 if i == j else 0.0) - B * k + C * kk
    for i in range(3):  # Π_o = [J_r Ψ_o; R_oᵀ Φ_o]
        for j in range(r):
            s0, s1 = zero, zero
            for l in range(3):
                s0 += arena[Jr + 3 * i + l] * reals[psi_o + l * r + j]
                s1 += arena[Ro + 3 * l + i] * reals[phi + l * r + j]
            arena[pw + i * r + j], arena[pw + (3 + i) * r + j] = s0, s1
    vo = fw + FlexibleWork.relative  # v_rel = Π_o η̇
    for i in range(6):
        arena[vo + i] = zero
        for j in range(r):
            arena[vo + i] += arena[pw + i * r + j] * arena[ve + j]
    vrel = (arena[vo], arena[vo + 1], arena[vo + 2], arena[vo + 3], arena[vo + 4], arena[vo + 5])
    E = ((arena[Ro], arena[Ro + 3], arena[Ro + 6]), (arena[Ro + 1], arena[Ro + 4], arena[Ro + 7]),
         (arena[Ro + 2], arena[Ro + 5], arena[Ro + 8]))  # R_oᵀ
    Xv = transform(E, ro[0], ro[1], ro[2], arena, wo + HingeWork.v, (zero, zero, zero, zero, zero, zero))
    sdot = 2 * (psi[0] * psid[0] + psi[1] * psid[1] + psi[2] * psid[2])
    kp = _cross(psi, psid)
    a1, a2 = _cross(psi, kp), _cross(psid, kp)
    wr, lr = (vrel[0], vrel[1], vrel[2]), (vrel[3], vrel[4], vrel[5])
    g0, g1, g2 = _cross(wr, (Xv[0], Xv[1], Xv[2])), _cross(lr, (Xv[0], Xv[1], Xv[2])), _cross(wr, (Xv[3], Xv[4], Xv[5]))
    g3 = _cross(wr, lr)
    for i in range(3):  # γ = −(v_rel ×) Xv + [J̇_r Ψ η̇; −ω_rel × v_rel]
        arena[ra + Record.gamma + i] = -g0[i] - dB * sdot * kp[i] + dC * sdot * a1[i] + C * a2[i]
        arena[ra + Record.gamma + 3 + i] = -(g1[i] + g2[i]) - g3[i]
    for i in range(6):
        arena[ra + Record.velocity + i] = Xv[i] + vrel[i]
    G = ra + Record.SIZE  # Γ_o = [ᵒX_k, Π_o], 6 × m
    for i in range(3 if structure else 0):
        e0, e1, e2 = E[i]
        for j in range(3):
            arena[G + i * m + j], arena[G + (3 + i) * m + 3 + j] = E[i][j], E[i][j]
            arena[G + i * m + 3 + j] = zero
        arena[G + (3 + i) * m], arena[G + (3 + i) * m + 1], arena[G + (3 + i) * m + 2] = (
            e2 * ro[1] - e1 * ro[2], e0 * ro[2] - e2 * ro[0], e1 * ro[0] - e0 * ro[1])
    for i in range(6 if structure else 0):
        for j in range(r):
            arena[G + i * m + 6 + j] = arena[pw + i * r + j]
    if not pose:
        for i in range(Record.rotation, Record.velocity):
            arena[ra + i] = zero
        return
    R, p = wo + HingeWork.rotation, wo + HingeWork.position  # the world pose: R R_o, p + R r_o
    for i in range(3):
        for j in range(3):
            arena[ra + Record.rotation + 3 * i + j] = (arena[R + 3 * i] * arena[Ro + j] + arena[R + 3 * i + 1]
                                                       * arena[Ro + 3 + j] + arena[R + 3 * i + 2] * arena[Ro + 6 + j])
        arena[ra + Record.position + i] = (arena[p + i] + arena[R + 3 * i] * ro[0] + arena[R + 3 * i + 1] * ro[1]
                                           + arena[R + 3 * i + 2] * ro[2])


@inline_kernel
def _shape(reals, so, arena, xo, r):
    """``Σ_j reals[so + j] arena[xo + j]`` (a row of a mode shape times ``η`` or ``η̇``, real parts)."""
    s = 0.0
    for j in range(r):
        s += reals[so + j] * arena[xo + j].real
    return s


@inline_kernel
def _row(arena, o, e):
    """``Σ_l arena[o + l] e_l`` over six entries (a row of ``ᵒX_k``, real parts, times ``δv``)."""
    return (arena[o].real * e[0] + arena[o + 1].real * e[1] + arena[o + 2].real * e[2] + arena[o + 3].real * e[3]
            + arena[o + 4].real * e[4] + arena[o + 5].real * e[5])


#: the complex step of the joint terms along ``θ̇`` (DERIVATIVES.md Eq. 21), and the terms they are called with
_STEP, _MOTION = 1e-30, int(Terms.MOTION)


@register
def _out(own, m, d, i):
    """Where :func:`_flexible_velocities` puts entry ``i`` of ``ã`` or ``b`` along direction ``d``:
    an offset from ``A`` (``m × 6``, the first ``own`` directions, ``v_o``) or from ``dA`` (a column
    of ``m`` per ``θ̇``)."""
    return i * 6 + d if d < own else (d - own) * m + i


@inline_kernel
def _direction(arena, eo, er, ec, ho, m, jnv, inboard, d):
    """``δv`` of a direction ``d`` of :func:`_flexible_velocities` (six numbers): the column ``d`` of
    ``E`` (``v_o``, with ``inboard``), then ``S e_ι`` (row ``ι`` of ``H``: the joint's ``θ̇``), then
    zero (the modes' ``η̇``)."""
    if inboard and d < 6:
        return (arena[eo + d * ec].real, arena[eo + er + d * ec].real, arena[eo + 2 * er + d * ec].real,
                arena[eo + 3 * er + d * ec].real, arena[eo + 4 * er + d * ec].real, arena[eo + 5 * er + d * ec].real)
    x = d - (6 if inboard else 0)
    if x < jnv:
        h = ho + x * m
        return (arena[h].real, arena[h + 1].real, arena[h + 2].real, arena[h + 3].real, arena[h + 4].real,
                arena[h + 5].real)
    return 0.0, 0.0, 0.0, 0.0, 0.0, 0.0


@inline_kernel
def _particle_motion(reals, po, sh, arena, qe, ve, r, w, Vo):
    """A particle's ``r_i = p_i + Φ_i η`` (``p_i`` at ``po``, ``Φ_i`` at ``sh``) and
    ``t = ω × r_i + v_l + 2 Φ_i η̇`` at the real state (``ω = w``, ``v_l`` the body's velocity's
    last three entries at ``Vo``), for the declared partials."""
    x = (reals[po] + _shape(reals, sh, arena, qe, r), reals[po + 1] + _shape(reals, sh + r, arena, qe, r),
         reals[po + 2] + _shape(reals, sh + 2 * r, arena, qe, r))
    wr = _cross(w, x)
    return x, (wr[0] + arena[Vo + 3].real + 2 * _shape(reals, sh, arena, ve, r),
               wr[1] + arena[Vo + 4].real + 2 * _shape(reals, sh + r, arena, ve, r),
               wr[2] + arena[Vo + 5].real + 2 * _shape(reals, sh + 2 * r, arena, ve, r))


def _flexible_velocities(arena, row, reals, work, inboard, A, B, G, dA, dB, dG, stride):
    """The partials of a flexible body along its ``θ̇`` and (``inboard``) the velocity ``v_o`` of
    the frame it hangs from, in closed form at the real state the arena holds (the ``velocities``
    of :class:`~sko.engine.state_kernels.StateKernel`; DERIVATIVES.md §9). Along ``v_o`` and the
    joint's ``θ̇`` the hinge's ``v = [ω; v_l] = ᵏX_o v_o + S θ̇_J`` moves by ``δv`` (a column of
    ``ᵏX_o`` or of ``S``), along a mode's ``η̇_j`` the modal rates by ``e_j``. Then ``ã`` moves by
    ``δv × v_J`` (``v_o``), by ``s × v_J + v × s`` (the joint's ``θ̇``, ``s = S e_ι``; on a joint
    whose ``S`` moves, by a complex step of the joint terms alone, ``c_J`` too) or not at all; ``b = Σ μ_i B_i* y_i + [0; K η + C η̇]`` with
    ``y_i = ω × (ω × r_i + v_l + 2 Φ_i η̇)`` by ``B_i* δy_i + [0; C δη̇]``,
    ``δy_i = δω × (ω × r_i + v_l + 2 Φ_i η̇) + ω × (δω × r_i + δv_l + 2 Φ_i δη̇)``; a modal node's
    ``γ_o = −v_rel × ᵒX_k v + [J̇_r Ψ_o η̇; 0]`` (``[ᵒX_k, Π_o] = Γ_o``, ``v_rel = Π_o η̇``,
    :func:`_modal_node`) by its derivative in ``v`` and ``η̇``; its own frame's ``γ = 0`` not at all.
    ``δb`` is linear in ``(δω, δv_l, δη̇)``: the particles are summed once into its matrix ``Z``
    (``m × (6 + r)``, a column per unit direction), which each direction then multiplies; a modal
    node's ``δγ_o`` along ``δv`` is ``−(v_rel ×) ᵒX_k δv``, and only a mode's takes the full terms."""
    c0, wo, io = row[Row.CONSTANTS], row[Row.SCRATCH], row[Row.INBOARD]
    n, r, nn, jnq, jnv, mu, positions, shapes = _counts(reals, c0)
    m, nv = 6 + r, row[Row.NV]
    qe, ve, vo = row[Row.Q] + jnq, row[Row.V] + jnv, row[Row.V]
    damping = shapes + 3 * n * r + r * r
    nodes = damping + r * r
    eo, er, ec, ho, Vo = row[Row.E], row[Row.E_ROW], row[Row.E_COLUMN], row[Row.H], row[Row.VELOCITY]
    own = 6 if inboard else 0  # the first direction along θ̇
    first, count = 0, own + nv
    for d in range(first, count):  # zeros, then ∂ã
        for i in range(m):
            work[(A if d < own else dA) + _out(own, m, d, i)] = 0.0
            work[(B if d < own else dB) + _out(own, m, d, i)] = 0.0
    vJ = (real_dot(arena, ho, m, vo, jnv), real_dot(arena, ho + 1, m, vo, jnv), real_dot(arena, ho + 2, m, vo, jnv),
          real_dot(arena, ho + 3, m, vo, jnv), real_dot(arena, ho + 4, m, vo, jnv), real_dot(arena, ho + 5, m, vo, jnv))  # S θ̇
    for d in range(own):  # δv × v_J
        e = _direction(arena, eo, er, ec, ho, m, jnv, inboard, d)
        t0 = _cross((e[0], e[1], e[2]), (vJ[0], vJ[1], vJ[2]))
        t1, t2 = _cross((e[0], e[1], e[2]), (vJ[3], vJ[4], vJ[5])), _cross((e[3], e[4], e[5]), (vJ[0], vJ[1], vJ[2]))
        for i in range(3):
            work[A + i * 6 + d] = t0[i]
            work[A + (3 + i) * 6 + d] = t1[i] + t2[i]
    closed = constant_motion(reals, c0)
    V = (arena[Vo].real, arena[Vo + 1].real, arena[Vo + 2].real, arena[Vo + 3].real, arena[Vo + 4].real,
         arena[Vo + 5].real)
    for x in range(jnv):  # the joint terms' a along θ̇_x: s × v_J + v × s (c_J = 0), else by complex step
        if closed:
            s = _direction(arena, eo, er, ec, ho, m, jnv, False, x)
            p0, p1 = _cross((s[0], s[1], s[2]), (vJ[0], vJ[1], vJ[2])), _cross((s[0], s[1], s[2]), (vJ[3], vJ[4], vJ[5]))
            p2 = _cross((s[3], s[4], s[5]), (vJ[0], vJ[1], vJ[2]))
            q0, q1 = _cross((V[0], V[1], V[2]), (s[0], s[1], s[2])), _cross((V[0], V[1], V[2]), (s[3], s[4], s[5]))
            q2 = _cross((V[3], V[4], V[5]), (s[0], s[1], s[2]))
            for i in range(3):
                work[dA + x * m + i] = p0[i] + q0[i]
                work[dA + x * m + 3 + i] = p1[i] + p2[i] + q1[i] + q2[i]
            continue
        arena[vo + x] = complex(arena[vo + x].real, _STEP)
        moved = call_hinge(row[Row.JOINT], (arena, reals, c0, row[Row.Q], vo, io, wo, np.int64(_MOTION)))
        arena[vo + x] = arena[vo + x].real
        if not moved:
            return False
        for i in range(6):
            work[dA + x * m + i] = arena[wo + HingeWork.acc + i].imag / _STEP
    for j in range(r):  # b's damping along η̇_j
        for i in range(r):
            work[dB + (jnv + j) * m + 6 + i] = reals[damping + i * r + j]
    w = (arena[Vo].real, arena[Vo + 1].real, arena[Vo + 2].real)
    Z = np.zeros((m, 6 + r))  # ∂b per unit δω, δv_l (columns 0…5) and η̇_j (6 + j): Σ_i B_i* ∂y_i
    for i in range(n):
        sh = shapes + 3 * i * r
        x, t = _particle_motion(reals, positions + 3 * i, sh, arena, qe, ve, r, w, Vo)
        mi = reals[mu + i]
        for c in range(6 + r):  # δy = μ (δω × t + ω × (δω × x + δv_l + 2 Φ_i δη̇)) per unit column
            if c < 3:
                u, ux = _unit_cross(c, t), _unit_cross(c, x)
                wx = _cross(w, ux)
                dy = (mi * (u[0] + wx[0]), mi * (u[1] + wx[1]), mi * (u[2] + wx[2]))
            elif c < 6:
                u = _unit_cross(c - 3, w)
                dy = (-mi * u[0], -mi * u[1], -mi * u[2])  # ω × e = −e × ω
            else:
                s = sh + c - 6
                u = _cross(w, (reals[s], reals[s + r], reals[s + 2 * r]))
                dy = (2 * mi * u[0], 2 * mi * u[1], 2 * mi * u[2])
            rd = _cross(x, dy)  # B_i* δy = [r_i × δy; δy; Φ_iᵀ δy]
            for k in range(3):
                Z[k, c] += rd[k]
                Z[3 + k, c] += dy[k]
            for j in range(r):
                Z[6 + j, c] += reals[sh + j] * dy[0] + reals[sh + r + j] * dy[1] + reals[sh + 2 * r + j] * dy[2]
    for d in range(first, count):  # each direction's ∂b: Z δv, or Z's column of its mode
        e = _direction(arena, eo, er, ec, ho, m, jnv, inboard, d)
        mode = d - own - jnv  # η̇_mode, or < 0
        b = B if d < own else dB
        for i in range(m):
            if mode >= 0:
                s = Z[i, 6 + mode]
            else:
                s = (Z[i, 0] * e[0] + Z[i, 1] * e[1] + Z[i, 2] * e[2] + Z[i, 3] * e[3] + Z[i, 4] * e[4]
                     + Z[i, 5] * e[5])
            work[b + _out(own, m, d, i)] += s
    size = Record.SIZE + 6 * m
    for d in range(first, count):  # the own frame's γ = 0
        for i in range(6):
            work[(G + i * 6 + d) if d < own else (dG + (d - own) * 6 + i)] = 0.0
    for k in range(1, nn + 1):
        nb = nodes + (k - 1) * (3 + 6 * r)  # p_o, Φ_o, Ψ_o (3 × r each)
        psi_o = nb + 3 + 3 * r
        go = row[Row.RECORDS] + k * size + Record.SIZE  # Γ_o = [ᵒX_k, Π_o], 6 × m
        psi = (_shape(reals, psi_o, arena, qe, r), _shape(reals, psi_o + r, arena, qe, r),
               _shape(reals, psi_o + 2 * r, arena, qe, r))
        psid = (_shape(reals, psi_o, arena, ve, r), _shape(reals, psi_o + r, arena, ve, r),
                _shape(reals, psi_o + 2 * r, arena, ve, r))
        _, _, C, dB_, dC = exp_map_coefficients(psi[0] * psi[0] + psi[1] * psi[1] + psi[2] * psi[2])
        sdot = 2 * (psi[0] * psid[0] + psi[1] * psid[1] + psi[2] * psid[2])
        kp = _cross(psi, psid)
        wr = (real_dot(arena, go + 6, 1, ve, r), real_dot(arena, go + m + 6, 1, ve, r), real_dot(arena, go + 2 * m + 6, 1, ve, r))
        lr = (real_dot(arena, go + 3 * m + 6, 1, ve, r), real_dot(arena, go + 4 * m + 6, 1, ve, r),
              real_dot(arena, go + 5 * m + 6, 1, ve, r))  # v_rel = Π_o η̇
        xa = (real_dot(arena, go, 1, Vo, 6), real_dot(arena, go + m, 1, Vo, 6), real_dot(arena, go + 2 * m, 1, Vo, 6))
        xl = (real_dot(arena, go + 3 * m, 1, Vo, 6), real_dot(arena, go + 4 * m, 1, Vo, 6), real_dot(arena, go + 5 * m, 1, Vo, 6))
        a1 = _cross(psi, kp)
        for d in range(first, count):
            mode = d - own - jnv
            if mode < 0:  # along δv: ᵒX_k δv moves, v_rel and ψ̇ do not
                e = _direction(arena, eo, er, ec, ho, m, jnv, inboard, d)
                dxa = (_row(arena, go, e), _row(arena, go + m, e), _row(arena, go + 2 * m, e))  # ᵒX_k δv
                dxl = (_row(arena, go + 3 * m, e), _row(arena, go + 4 * m, e), _row(arena, go + 5 * m, e))
                g0, g1, g2 = _cross(wr, dxa), _cross(lr, dxa), _cross(wr, dxl)
                ga = (-g0[0], -g0[1], -g0[2])
                gl = (-(g1[0] + g2[0]), -(g1[1] + g2[1]), -(g1[2] + g2[2]))
            else:  # along η̇_mode: δv_rel = Π_o e_j, δψ̇ = Ψ_o e_j
                pc = go + 6 + mode
                dwr = (arena[pc].real, arena[pc + m].real, arena[pc + 2 * m].real)
                dlr = (arena[pc + 3 * m].real, arena[pc + 4 * m].real, arena[pc + 5 * m].real)
                dpsid = (reals[psi_o + mode], reals[psi_o + r + mode], reals[psi_o + 2 * r + mode])
                dsdot = 2 * (psi[0] * dpsid[0] + psi[1] * dpsid[1] + psi[2] * dpsid[2])
                dkp = _cross(psi, dpsid)
                da1, da2a, da2b = _cross(psi, dkp), _cross(dpsid, kp), _cross(psid, dkp)
                g0, g1, g2, g3a, g3b = _cross(dwr, xa), _cross(dlr, xa), _cross(dwr, xl), _cross(dwr, lr), _cross(wr, dlr)
                ga = (-g0[0] - dB_ * (dsdot * kp[0] + sdot * dkp[0]) + dC * (dsdot * a1[0] + sdot * da1[0])
                      + C * (da2a[0] + da2b[0]),
                      -g0[1] - dB_ * (dsdot * kp[1] + sdot * dkp[1]) + dC * (dsdot * a1[1] + sdot * da1[1])
                      + C * (da2a[1] + da2b[1]),
                      -g0[2] - dB_ * (dsdot * kp[2] + sdot * dkp[2]) + dC * (dsdot * a1[2] + sdot * da1[2])
                      + C * (da2a[2] + da2b[2]))
                gl = (-(g1[0] + g2[0]) - (g3a[0] + g3b[0]), -(g1[1] + g2[1]) - (g3a[1] + g3b[1]),
                      -(g1[2] + g2[2]) - (g3a[2] + g3b[2]))
            for i in range(3):
                if d < own:
                    work[G + k * stride + i * 6 + d] = ga[i]
                    work[G + k * stride + (3 + i) * 6 + d] = gl[i]
                else:
                    work[dG + k * stride + (d - own) * 6 + i] = ga[i]
                    work[dG + k * stride + (d - own) * 6 + 3 + i] = gl[i]
    return True


@register
def _joint_twist(arena, reals, c0, qo, so, jnv):
    """``s = S δθ`` of a joint of constant ``S`` (``c_J = 0``, :func:`constant_motion`) whose
    coordinates the arena carries ``i h`` along a tangent column ``δq = q̇(q, δθ)`` (Eq. 1): a
    helical, prismatic or cylindrical joint (``q̇ = θ̇``: ``δθ = δq``) or a ball joint
    (``q̇ = ½ q ⊗ (0, ω)``: ``ω = 2 vec(q̄ ⊗ δq) / ‖q‖²``, of ``q`` and ``δq`` divided by
    ``max |q_i|``, so no square overflows for a quaternion of any size the hinge takes), ``S`` the
    real parts at ``arena[so]`` (6 × 6, :data:`HingeWork`); with whether the joint is one of these."""
    code, zero = int(reals[c0 + JointConstants.code]), 0.0
    if not constant_motion(reals, c0) or code == FREE or code == PLANAR:
        return False, (zero, zero, zero, zero, zero, zero)
    if code == SPHERICAL:
        g = max(abs(arena[qo].real), abs(arena[qo + 1].real), abs(arena[qo + 2].real), abs(arena[qo + 3].real))
        w, x, y, z = arena[qo].real / g, arena[qo + 1].real / g, arena[qo + 2].real / g, arena[qo + 3].real / g
        d0, d1, d2, d3 = (arena[qo].imag / _STEP / g, arena[qo + 1].imag / _STEP / g, arena[qo + 2].imag / _STEP / g,
                          arena[qo + 3].imag / _STEP / g)
        k = 2.0 / (w * w + x * x + y * y + z * z)
        t = _cross((x, y, z), (d1, d2, d3))
        return True, (k * (w * d1 - d0 * x - t[0]), k * (w * d2 - d0 * y - t[1]), k * (w * d3 - d0 * z - t[2]), zero,
                      zero, zero)
    s = (zero, zero, zero, zero, zero, zero)
    for j in range(jnv):
        d, S = arena[qo + j].imag / _STEP, column6(arena, so + j, 6)
        s = (s[0] + S[0] * d, s[1] + S[1] * d, s[2] + S[2] * d, s[3] + S[3] * d, s[4] + S[4] * d, s[5] + S[5] * d)
    return True, s


def _flexible_joint(arena, row, reals, work, dE, dH, dA, dB, dG, stride):
    """A flexible body's partials along one of its joint's coordinates in closed form (the ``joint``
    partials of :class:`~sko.engine.state_kernels.StateKernel`; DERIVATIVES.md §9): the arena's
    ``q`` carries ``i h`` along the column, its joint's entries only. On a joint of constant ``S``
    (:func:`_joint_twist`: ``s = S δθ``) the hinge's terms move in closed form, read from its work
    at the real state (the body's last full call, or its fill, wrote it; the steps since leave its
    real parts): ``δ(ᵏX_o) = −s × ᵏX_o``, ``δS = 0``, ``δv = −s × ᵏX_o v_o`` and
    ``δa = −s × ᵏX_o γ_o + δv × v_J`` (RIGID.md); on any other joint a complex step of the joint
    terms alone gives ``δ(ᵏX_o)``, ``δS`` (``∂E``, ``∂H``), ``δa`` (the hinge's, ``c_J`` included) and
    ``δv`` of the frame's velocity. ``M``, ``Γ_o`` and the particles do not move, so
    ``b = Σ μ_i B_i* y_i + …`` moves by ``B_i* δy_i``, ``δy_i = δω × (ω × r_i + v_l + 2 Φ_i η̇) +
    ω × (δω × r_i + δv_l)``, and a modal node's ``γ_o = −v_rel × ᵒX_k v + …`` by ``−v_rel × ᵒX_k δv``."""
    c0, wo, io = row[Row.CONSTANTS], row[Row.SCRATCH], row[Row.INBOARD]
    n, r, nn, jnq, jnv, mu, positions, shapes = _counts(reals, c0)
    m, nv = 6 + r, row[Row.NV]
    qe, ve = row[Row.Q] + jnq, row[Row.V] + jnv
    Vo = row[Row.VELOCITY]
    xo, so, vel, acc = wo + HingeWork.X, wo + HingeWork.S, wo + HingeWork.v, wo + HingeWork.acc
    for i in range(m):
        work[dB + i] = 0.0
    for j in range(nv):
        for i in range(m):
            work[dH + j * m + i] = 0.0
    closed, s = _joint_twist(arena, reals, c0, row[Row.Q], so, jnv)
    if closed:  # ∂E = [−s × X; 0], ∂a = [−s × X γ_o + δv × v_J; 0], δv = −s × X v_o (δS = 0)
        vJ, v, a = column6(arena, wo + HingeWork.vJ, 1), column6(arena, vel, 1), column6(arena, acc, 1)
        cross = motion_cross(v, vJ)
        Xv = (v[0] - vJ[0], v[1] - vJ[1], v[2] - vJ[2], v[3] - vJ[3], v[4] - vJ[4], v[5] - vJ[5])
        Xg = (a[0] - cross[0], a[1] - cross[1], a[2] - cross[2], a[3] - cross[3], a[4] - cross[4], a[5] - cross[5])
        for c in range(6):
            dX = motion_cross(s, column6(arena, xo + c, 6))
            for i in range(6):
                work[dE + i * 6 + c] = -dX[i]
        d = motion_cross(s, Xv)
        e = (-d[0], -d[1], -d[2], -d[3], -d[4], -d[5])  # δv
        da, dc = motion_cross(s, Xg), motion_cross(e, vJ)
        for i in range(6):
            work[dA + i] = dc[i] - da[i]
        for i in range(6, m):
            work[dA + i] = 0.0
            for c in range(6):
                work[dE + i * 6 + c] = 0.0
    else:  # a complex step of the joint terms
        if not call_hinge(row[Row.JOINT], (arena, reals, c0, row[Row.Q], row[Row.V], io, wo, np.int64(_MOTION))):
            return False
        for i in range(m):  # ∂E = [δX; 0], ∂H = [δS*, 0], ∂a = [δa; 0]
            for c in range(6):
                work[dE + i * 6 + c] = arena[xo + 6 * i + c].imag / _STEP if i < 6 else 0.0
            work[dA + i] = arena[acc + i].imag / _STEP if i < 6 else 0.0
        for j in range(jnv):
            for i in range(6):
                work[dH + j * m + i] = arena[so + 6 * i + j].imag / _STEP
        e = (arena[vel].imag / _STEP, arena[vel + 1].imag / _STEP, arena[vel + 2].imag / _STEP,
             arena[vel + 3].imag / _STEP, arena[vel + 4].imag / _STEP, arena[vel + 5].imag / _STEP)  # δv
    w = (arena[Vo].real, arena[Vo + 1].real, arena[Vo + 2].real)
    for i in range(n):
        sh = shapes + 3 * i * r
        x, t = _particle_motion(reals, positions + 3 * i, sh, arena, qe, ve, r, w, Vo)
        mi = reals[mu + i]
        dx = _cross((e[0], e[1], e[2]), x)
        y1, y2 = _cross((e[0], e[1], e[2]), t), _cross(w, (dx[0] + e[3], dx[1] + e[4], dx[2] + e[5]))
        dy = (mi * (y1[0] + y2[0]), mi * (y1[1] + y2[1]), mi * (y1[2] + y2[2]))
        rd = _cross(x, dy)
        for c in range(3):
            work[dB + c] += rd[c]
            work[dB + 3 + c] += dy[c]
        for j in range(r):
            work[dB + 6 + j] += reals[sh + j] * dy[0] + reals[sh + r + j] * dy[1] + reals[sh + 2 * r + j] * dy[2]
    size = Record.SIZE + 6 * m
    for i in range(6):  # the own frame's γ = 0
        work[dG + i] = 0.0
    for k in range(1, nn + 1):
        go = row[Row.RECORDS] + k * size + Record.SIZE  # Γ_o = [ᵒX_k, Π_o], 6 × m
        wr = (real_dot(arena, go + 6, 1, ve, r), real_dot(arena, go + m + 6, 1, ve, r), real_dot(arena, go + 2 * m + 6, 1, ve, r))
        lr = (real_dot(arena, go + 3 * m + 6, 1, ve, r), real_dot(arena, go + 4 * m + 6, 1, ve, r),
              real_dot(arena, go + 5 * m + 6, 1, ve, r))  # v_rel = Π_o η̇
        dxa = (_row(arena, go, e), _row(arena, go + m, e), _row(arena, go + 2 * m, e))  # ᵒX_k δv
        dxl = (_row(arena, go + 3 * m, e), _row(arena, go + 4 * m, e), _row(arena, go + 5 * m, e))
        g0, g1, g2 = _cross(wr, dxa), _cross(lr, dxa), _cross(wr, dxl)
        for i in range(3):
            work[dG + k * stride + i] = -g0[i]
            work[dG + k * stride + 3 + i] = -(g1[i] + g2[i])
    return True


@inline_kernel
def _skew(a):
    """``a×`` (row-major, nine numbers)."""
    z = 0.0 * a[0]
    return (z, -a[2], a[1], a[2], z, -a[0], -a[1], a[0], z)


@inline_kernel
def _outer(a, b, d):
    """``a bᵀ − d I`` (row-major, nine numbers)."""
    return (a[0] * b[0] - d, a[0] * b[1], a[0] * b[2], a[1] * b[0], a[1] * b[1] - d, a[1] * b[2],
            a[2] * b[0], a[2] * b[1], a[2] * b[2] - d)


@inline_kernel
def _sum(a, X, b, Y):
    """``a X + b Y`` of two 3 × 3 matrices (nine numbers each)."""
    return (a * X[0] + b * Y[0], a * X[1] + b * Y[1], a * X[2] + b * Y[2], a * X[3] + b * Y[3], a * X[4] + b * Y[4],
            a * X[5] + b * Y[5], a * X[6] + b * Y[6], a * X[7] + b * Y[7], a * X[8] + b * Y[8])


@inline_kernel
def _exp_map_matrix(a, K, b, KK):
    """``1 + a K + b K²`` (``K = ψ×``, ``KK = K²``): ``R_o`` with ``(A, B)``, ``J_r`` with ``(−B, C)``."""
    return (1.0 + a * K[0] + b * KK[0], a * K[1] + b * KK[1], a * K[2] + b * KK[2], a * K[3] + b * KK[3],
            1.0 + a * K[4] + b * KK[4], a * K[5] + b * KK[5], a * K[6] + b * KK[6], a * K[7] + b * KK[7],
            1.0 + a * K[8] + b * KK[8])


@inline_kernel
def _times(X, v):
    """``X v`` of a 3 × 3 matrix (nine numbers) and three numbers."""
    return (X[0] * v[0] + X[1] * v[1] + X[2] * v[2], X[3] * v[0] + X[4] * v[1] + X[5] * v[2],
            X[6] * v[0] + X[7] * v[1] + X[8] * v[2])


@inline_kernel
def _times_transpose(X, v):
    """``Xᵀ v`` of a 3 × 3 matrix (nine numbers) and three numbers."""
    return (X[0] * v[0] + X[3] * v[1] + X[6] * v[2], X[1] * v[0] + X[4] * v[1] + X[7] * v[2],
            X[2] * v[0] + X[5] * v[1] + X[8] * v[2])


@inline_kernel
def _column(reals, o, r, j):
    """Column ``j`` of the 3 × r shape at ``reals[o]`` (row-major)."""
    return reals[o + j], reals[o + r + j], reals[o + 2 * r + j]


@inline_kernel
def _real_shape(reals, o, arena, xo, r):
    """The 3 × r shape at ``reals[o]`` times the real parts of ``arena[xo: xo + r]``."""
    return _shape(reals, o, arena, xo, r), _shape(reals, o + r, arena, xo, r), _shape(reals, o + 2 * r, arena, xo, r)


@inline_kernel
def _added(a, b):
    """``a + b`` of three numbers each."""
    return a[0] + b[0], a[1] + b[1], a[2] + b[2]


@kernel
def _modal_node_partials(arena, reals, nb, r, m, qe, ve, wo, work, dGamma, dG):
    """The partials of the record of the modal node whose constants start at ``reals[nb]``
    (:func:`_modal_node`) along ``δη`` (the imaginary parts / h of the arena's ``η``) at the real
    state: ``Γ_o`` (6 × m, row-major) into ``work[dGamma]``, ``γ_o`` into ``work[dG]``. With
    ``ψ = Ψ_o η``, ``s = ψ·ψ``, ``K = ψ×``: ``δψ = Ψ_o δη``, ``δr_o = Φ_o δη``, ``δs = 2 ψ·δψ``,
    ``δK = δψ×``, ``δK² = δψ ψᵀ + ψ δψᵀ − δs I``; ``R_o = I + A K + B K²`` moves by
    ``δA K + A δK + δB K² + B δK²`` (``dA/ds = (C − B)/2``), ``J_r = I − B K + C K²`` by
    ``−δB K − B δK + δC K² + C δK²``; ``ᵒX_k = rot(R_oᵀ) xlt(r_o)`` and ``Π_o = [J_r Ψ_o; R_oᵀ Φ_o]``
    by the products with these, and ``γ_o`` by the derivative of each of its products, those of
    the coefficients ``dB/ds``, ``dC/ds`` by :func:`exp_map_second_derivatives` (``A``, ``B``,
    ``C``: the exponential map's, :func:`exp_map_coefficients`)."""
    phi, psi_o = nb + 3, nb + 3 + 3 * r
    psi, psid = _real_shape(reals, psi_o, arena, qe, r), _real_shape(reals, psi_o, arena, ve, r)
    ro = _added((reals[nb], reals[nb + 1], reals[nb + 2]), _real_shape(reals, phi, arena, qe, r))
    dpsi, dro = _stepped_shapes(reals, psi_o, arena, qe, r), _stepped_shapes(reals, phi, arena, qe, r)
    s = psi[0] * psi[0] + psi[1] * psi[1] + psi[2] * psi[2]
    ds = 2 * (psi[0] * dpsi[0] + psi[1] * dpsi[1] + psi[2] * dpsi[2])
    A, B, C, dB, dC = exp_map_coefficients(s)
    ddB, ddC = exp_map_second_derivatives(s)
    K, KK, dK = _skew(psi), _outer(psi, psi, s), _skew(dpsi)
    dKK = _sum(1.0, _outer(dpsi, psi, 0.0), 1.0, _outer(psi, dpsi, ds))
    R, J = _exp_map_matrix(A, K, B, KK), _exp_map_matrix(-B, K, C, KK)
    dR = _sum(1.0, _sum(0.5 * (C - B) * ds, K, A, dK), 1.0, _sum(dB * ds, KK, B, dKK))
    dJ = _sum(1.0, _sum(-dB * ds, K, -B, dK), 1.0, _sum(dC * ds, KK, C, dKK))
    fd = _real_shape(reals, phi, arena, ve, r)  # Φ_o η̇
    wr, lr, dwr, dlr = _times(J, psid), _times_transpose(R, fd), _times(dJ, psid), _times_transpose(dR, fd)
    w = (arena[wo + HingeWork.v].real, arena[wo + HingeWork.v + 1].real, arena[wo + HingeWork.v + 2].real)
    u = (arena[wo + HingeWork.v + 3].real, arena[wo + HingeWork.v + 4].real, arena[wo + HingeWork.v + 5].real)
    c = _cross(ro, w)
    ul = (u[0] - c[0], u[1] - c[1], u[2] - c[2])
    xa, xl = _times_transpose(R, w), _times_transpose(R, ul)  # ᵒX_k v
    dxa = _times_transpose(dR, w)
    t1, t2 = _times_transpose(dR, ul), _times_transpose(R, _cross(dro, w))
    dxl = (t1[0] - t2[0], t1[1] - t2[1], t1[2] - t2[2])
    sdot = 2 * (psi[0] * psid[0] + psi[1] * psid[1] + psi[2] * psid[2])
    dsdot = 2 * (dpsi[0] * psid[0] + dpsi[1] * psid[1] + dpsi[2] * psid[2])
    kp, dkp = _cross(psi, psid), _cross(dpsi, psid)
    a1, a2 = _cross(psi, kp), _cross(psid, kp)
    da1, da2 = _added(_cross(dpsi, kp), _cross(psi, dkp)), _cross(psid, dkp)
    g0 = _added(_cross(dwr, xa), _cross(wr, dxa))  # δ(ω_rel × X_a)
    g1 = _added(_added(_cross(dlr, xa), _cross(lr, dxa)), _added(_cross(dwr, xl), _cross(wr, dxl)))
    g3 = _added(_cross(dwr, lr), _cross(wr, dlr))
    for i in range(3):  # γ = −(v_rel ×) X v + [J̇_r Ψ η̇; −ω_rel × v_rel]
        work[dG + i] = (-g0[i] - (ddB * ds * sdot + dB * dsdot) * kp[i] - dB * sdot * dkp[i]
                        + (ddC * ds * sdot + dC * dsdot) * a1[i] + dC * sdot * da1[i] + dC * ds * a2[i] + C * da2[i])
        work[dG + 3 + i] = -g1[i] - g3[i]
    for i in range(3):  # Γ_o = [ᵒX_k, Π_o]: rows i and 3 + i; E = R_oᵀ, its row i R_o's column i
        e, de = (R[i], R[3 + i], R[6 + i]), (dR[i], dR[3 + i], dR[6 + i])
        lower = _added(_cross(dro, e), _cross(ro, de))
        for j in range(3):
            work[dGamma + i * m + j] = de[j]
            work[dGamma + (3 + i) * m + 3 + j] = de[j]
            work[dGamma + (3 + i) * m + j] = lower[j]
    for j in range(r):  # δΠ_o = [δJ_r Ψ_o; δR_oᵀ Φ_o], column j
        upper, lower = _times(dJ, _column(reals, psi_o, r, j)), _times_transpose(dR, _column(reals, phi, r, j))
        for i in range(3):
            work[dGamma + i * m + 6 + j] = upper[i]
            work[dGamma + (3 + i) * m + 6 + j] = lower[i]


@inline_kernel
def _stepped_shape(reals, so, arena, xo, r):
    """``Σ_j reals[so + j] δx_j`` for the tangent ``δx = Im arena[xo: xo + r] / h`` of a complex step
    (a row of a mode shape times ``δη``)."""
    s = 0.0
    for j in range(r):
        s += reals[so + j] * arena[xo + j].imag
    return s / _STEP


@inline_kernel
def _stepped_shapes(reals, o, arena, xo, r):
    """The 3 × r shape at ``reals[o]`` times the tangent ``δx`` of :func:`_stepped_shape`."""
    return (_stepped_shape(reals, o, arena, xo, r), _stepped_shape(reals, o + r, arena, xo, r),
            _stepped_shape(reals, o + 2 * r, arena, xo, r))


def _flexible_modes(arena, row, reals, work, dE, dH, dM, dA, dB, dGamma, dG, stride):
    """A flexible body's partials along its modes in closed form (the ``internal_partials`` of
    :class:`~sko.engine.state_kernels.StateKernel`; DERIVATIVES.md §9): the arena's ``η`` carries
    ``i h`` along the column, ``δη`` its imaginary parts / ``h``. ``E``, ``H``, ``a`` and its own
    frame's record are its joint's and do not move. Particle ``i`` moves by ``δr_i = Φ_i δη``: with
    ``B_i = [−r_i×, I, Φ_i]``, ``M = Σ μ_i B_i* B_i`` by ``Σ μ_i (δB_i* B_i + B_i* δB_i)``,
    ``δB_i = [−δr_i×, 0, 0]`` (its first three rows and columns), and, with the stiffness ``K``,
    ``b = Σ μ_i B_i* y_i + [0; K η + C η̇]`` by ``Σ μ_i [δr_i × y_i + r_i × δy_i; δy_i; Φ_iᵀ δy_i] + [0; K δη]``,
    ``y_i = ω × (ω × r_i + v_l + 2 Φ_i η̇)``, ``δy_i = ω × (ω × δr_i)``, at the real state the arena
    holds; a modal node's ``Γ_o`` and ``γ_o`` by :func:`_modal_node_partials`."""
    c0, wo = row[Row.CONSTANTS], row[Row.SCRATCH]
    n, r, nn, jnq, jnv, mu, positions, shapes = _counts(reals, c0)
    m = 6 + r
    qe, ve, Vo = row[Row.Q] + jnq, row[Row.V] + jnv, row[Row.VELOCITY]
    stiffness = shapes + 3 * n * r
    nodes = stiffness + 2 * r * r
    w = (arena[Vo].real, arena[Vo + 1].real, arena[Vo + 2].real)
    for i in range(n):
        sh = shapes + 3 * i * r
        x, t = _particle_motion(reals, positions + 3 * i, sh, arena, qe, ve, r, w, Vo)
        dx = _stepped_shapes(reals, sh, arena, qe, r)
        mi = reals[mu + i]
        y, dy = _cross(w, t), _cross(w, _cross(w, dx))
        t1, t2 = _cross(dx, y), _cross(x, dy)
        for c in range(3):  # ∂b
            work[dB + c] += mi * (t1[c] + t2[c])
            work[dB + 3 + c] += mi * dy[c]
        for j in range(r):
            work[dB + 6 + j] += mi * (reals[sh + j] * dy[0] + reals[sh + r + j] * dy[1] + reals[sh + 2 * r + j] * dy[2])
        K = ((0.0, x[2], -x[1]), (-x[2], 0.0, x[0]), (x[1], -x[0], 0.0))  # the rows of −r_i×, as _flexible's
        D = ((0.0, dx[2], -dx[1]), (-dx[2], 0.0, dx[0]), (dx[1], -dx[0], 0.0))  # and of −δr_i×
        for a in range(3):  # ∂M's first three rows, upper: K_iᵀ K_i, K_iᵀ (the ±μ r entries), K_iᵀ Φ_i
            for b in range(a, 3):
                work[dM + a * m + b] += mi * (D[0][a] * K[0][b] + D[1][a] * K[1][b] + D[2][a] * K[2][b]
                                              + K[0][a] * D[0][b] + K[1][a] * D[1][b] + K[2][a] * D[2][b])
            for j in range(r):
                work[dM + a * m + 6 + j] += mi * (D[0][a] * reals[sh + j] + D[1][a] * reals[sh + r + j]
                                                  + D[2][a] * reals[sh + 2 * r + j])
        work[dM + 4] -= mi * dx[2]
        work[dM + 5] += mi * dx[1]
        work[dM + m + 3] += mi * dx[2]
        work[dM + m + 5] -= mi * dx[0]
        work[dM + 2 * m + 3] -= mi * dx[1]
        work[dM + 2 * m + 4] += mi * dx[0]
    for a in range(3):  # the lower part of ∂M's first three columns
        for b in range(a + 1, m):
            work[dM + b * m + a] = work[dM + a * m + b]
    for i in range(r):  # b's stiffness
        work[dB + 6 + i] += _stepped_shape(reals, stiffness + i * r, arena, qe, r)
    for k in range(1, nn + 1):
        _modal_node_partials(arena, reals, nodes + (k - 1) * (3 + 6 * r), r, m, qe, ve, wo, work, dGamma + k * stride,
                             dG + k * stride)
    return True


def _flexible_constants(c) -> int:
    """How many constants :func:`_flexible` reads (:data:`FlexibleConstants`, sizes in the header)."""
    n, r, nodes = (int(c[FlexibleConstants.particles]), int(c[FlexibleConstants.modes]),
                   int(c[FlexibleConstants.nodes]))
    return FlexibleConstants.SIZE + 4 * n + 3 * n * r + 2 * r * r + nodes * (3 + 6 * r)


def _joint_coordinates(c) -> int:
    """The hinge velocity coordinates of a flexible body's joint (its first; the modes follow), along
    which neither its ``M`` nor its records' ``Γ`` change (:data:`~sko.engine.state_kernels.Terms`)."""
    return int(c[JointConstants.nv])


#: The flexible body's state kernel.
FLEXIBLE = StateKernel(_flexible, own_frame_identity=True, name="flexible body", constants=_flexible_constants,
                       calls_hinge=True, rates=True, joint=_joint_coordinates, velocities=_flexible_velocities,
                       joint_partials=_flexible_joint, internal_partials=_flexible_modes)


def pack_flexible(body) -> CompiledState | None:
    """The compiled state of a :class:`~sko.bodies.flexible.FlexibleBody` (``None``: user-defined joint)."""
    joint = joint_constants(body.joint, body.name)
    if joint is None:
        return None
    nodes = [np.concatenate([d.position, d.translation.ravel(), d.rotation.ravel()]) for d in body.nodes.values()]
    constants = np.concatenate([joint, placement_constants(body.placement),
                                [body.masses.shape[0], body.r, len(body.nodes)], body.masses, body.positions.ravel(),
                                body.modes.ravel(), body.stiffness.ravel(), body.damping.ravel(), *nodes])
    return numeric_state(FLEXIBLE, constants, flexible_scratch(body.node_dim, body.r))

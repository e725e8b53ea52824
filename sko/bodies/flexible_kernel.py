"""The state kernel of a flexible body (module docstring of :mod:`sko.bodies.flexible`; the
contract of :mod:`sko.bodies.kernels`).

``E = [ᵏX_o; 0]``, ``H = diag(S*, I_r)``, ``M = Σ μ_i B_i* B_i``, ``a = [hinge a; 0]``,
``b = Σ μ_i B_i* (ω × (Φ_i η̇ + u_i)) + [0; K η + C η̇]``, its own frame's record and one record
per modal node (BODIES.md): ``Γ_o = [ᵒX_k, Π_o]``, ``γ_o = Γ̇_o 𝒱(k)``.
"""

from __future__ import annotations

import numpy as np

from sko.algorithms.compiled.borrow import matrix_view
from sko.algorithms.compiled.fields import offsets
from sko.algorithms.compiled.jit import kernel
from sko.bodies.compiled_joints import JointConstants, joint_constants
from sko.bodies.contract import CompiledState
from sko.bodies.kernels import Record, Row, StateKernel
from sko.bodies.rigid_kernels import HingeWork, Placement, hinge, placement_constants

__all__ = ["FlexibleConstants", "FLEXIBLE", "pack_flexible", "exp_map_coefficients"]

#: A flexible body's constants: its joint and placement, the numbers of particles ``n``, modes
#: ``r`` and modal nodes; then the masses (n), positions (n × 3), mode shapes (n × 3 × r),
#: stiffness and damping (r × r) and, per modal node, its position (3), translation (3 × r) and
#: rotation (3 × r) shapes (all row-major).
FlexibleConstants = offsets("FlexibleConstants", joint=JointConstants.SIZE, placement=Placement.SIZE, particles=1,
                            modes=1, nodes=1)
_SERIES_TERMS = 20


@kernel
def exp_map_coefficients(s):
    """``A, B, C, dB/ds, dC/ds`` of :func:`sko.bodies.flexible.exp_map_coefficients`."""
    if abs(s) <= 4.0:
        A = B = C = dB = dC = 0 * s
        fact = np.empty(2 * _SERIES_TERMS + 4)
        fact[0] = 1.0
        for j in range(1, fact.size):
            fact[j] = fact[j - 1] * j
        for n in range(_SERIES_TERMS - 1, -1, -1):
            sign = -1.0 if n % 2 else 1.0
            A = A * s + sign / fact[2 * n + 1]
            B = B * s + sign / fact[2 * n + 2]
            C = C * s + sign / fact[2 * n + 3]
            if n >= 1:
                dB = dB * s + sign * n / fact[2 * n + 2]
                dC = dC * s + sign * n / fact[2 * n + 3]
        return A, B, C, dB, dC
    th = np.sqrt(s)
    sin, cos = np.sin(th), np.cos(th)
    return (sin / th, (1 - cos) / s, (th - sin) / (s * th),
            (th * sin / 2 - (1 - cos)) / s**2, ((1 - cos) * th - 3 * (th - sin)) / (2 * th**5))


@kernel
def _mv(A, x, dt):
    """``A x`` for arrays of different scalar types (numba's ``@`` needs one)."""
    out = np.zeros(A.shape[0], dt)
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            out[i] += A[i, j] * x[j]
    return out


@kernel
def _mm(A, B, dt):
    """``A B`` for arrays of different scalar types."""
    out = np.zeros((A.shape[0], B.shape[1]), dt)
    for i in range(A.shape[0]):
        for l in range(A.shape[1]):
            for j in range(B.shape[1]):
                out[i, j] += A[i, l] * B[l, j]
    return out


@kernel
def _cross(x, y):
    return np.array([x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2], x[0] * y[1] - x[1] * y[0]])


@kernel
def _skew(x):
    return np.array([[0 * x[0], -x[2], x[1]], [x[2], 0 * x[0], -x[0]], [-x[1], x[0], 0 * x[0]]])


def _flexible(arena, row, reals, terms, constants):
    """A :class:`~sko.bodies.flexible.FlexibleBody` (module docstring); every output, whatever
    ``terms`` asks."""
    c0, wo, io = row[Row.CONSTANTS], row[Row.SCRATCH], row[Row.INBOARD]
    if not hinge(arena, reals, c0, row[Row.Q], row[Row.V], io, wo, terms):
        return False
    S, X = matrix_view(arena, wo + HingeWork.S, 6, 6), matrix_view(arena, wo + HingeWork.X, 6, 6)
    t = arena[wo + HingeWork.vJ: wo + HingeWork.SIZE + 6]  # v_J, v, acc, R, p, then 6 of this kernel's own
    n = int(reals[c0 + FlexibleConstants.particles])
    r = int(reals[c0 + FlexibleConstants.modes])
    nn = int(reals[c0 + FlexibleConstants.nodes])
    m = 6 + r
    jnq, jnv = int(reals[c0 + JointConstants.nq]), int(reals[c0 + JointConstants.nv])
    dt = X.dtype
    eta = arena[row[Row.Q] + jnq: row[Row.Q] + jnq + r]
    etad = arena[row[Row.V] + jnv: row[Row.V] + jnv + r]
    base = c0 + FlexibleConstants.SIZE
    mu = reals[base: base + n]
    P = matrix_view(reals, base + n, n, 3)
    phi = base + 4 * n  # Φ_i(c, j) at phi + (3 i + c) r + j
    Kst = matrix_view(reals, phi + 3 * n * r, r, r)
    Cd = matrix_view(reals, phi + 3 * n * r + r * r, r, r)
    nodes = phi + 3 * n * r + 2 * r * r
    v = t[6:12].copy()
    omega = v[:3]
    eo, er, ec = row[Row.E], row[Row.E_ROW], row[Row.E_COLUMN]
    for i in range(m):  # E = [ᵏX_o; 0]
        for j in range(6):
            arena[eo + i * er + j * ec] = X[i, j] if i < 6 else 0 * X[0, 0]
    hb, mo, ao, bo, vo = row[Row.H], row[Row.M], row[Row.A], row[Row.B], row[Row.VELOCITY]
    nk = jnv + r
    for i in range(nk * m):
        arena[hb + i] = 0
    for j in range(jnv):
        for i in range(6):
            arena[hb + j * m + i] = S[i, j]
    for j in range(r):
        arena[hb + (jnv + j) * m + 6 + j] = 1
    for i in range(m):
        arena[ao + i] = t[12 + i] if i < 6 else 0 * X[0, 0]
        arena[vo + i] = v[i] if i < 6 else etad[i - 6]
    Mk = np.zeros((m, m), dt)
    b = np.zeros(m, dt)
    Bi = np.zeros((3, m), dt)
    world = np.zeros(3, dt)
    R = np.empty((3, 3), dt)
    for i in range(9):
        R[i // 3, i % 3] = t[18 + i]
    p = t[27:30].copy()
    y = np.zeros(3, dt)
    for i in range(n):
        # r_i = p_i + Φ_i η and Φ_i η̇; B_i = [−r_i×, I, Φ_i]
        Bi[:, :] = 0
        for c in range(3):
            rc = P[i, c] + 0 * X[0, 0]
            pc = 0 * X[0, 0]
            for j in range(r):
                shape = reals[phi + (3 * i + c) * r + j]
                rc += shape * eta[j]
                pc += shape * etad[j]
                Bi[c, 6 + j] = shape
            t[30 + c], t[33 + c] = rc, pc
        r0, r1, r2 = t[30], t[31], t[32]
        Bi[0, 1], Bi[0, 2], Bi[1, 2] = r2, -r1, r0
        Bi[1, 0], Bi[2, 0], Bi[2, 1] = -r2, r1, -r0
        Bi[0, 3] = Bi[1, 4] = Bi[2, 5] = 1
        # u_i = B_i 𝒱 = ω × r_i + v + Φ_i η̇;  y = ω × (Φ_i η̇ + u_i)
        w0, w1, w2 = omega[0], omega[1], omega[2]
        u0 = w1 * r2 - w2 * r1 + v[3] + 2 * t[33]
        u1 = w2 * r0 - w0 * r2 + v[4] + 2 * t[34]
        u2 = w0 * r1 - w1 * r0 + v[5] + 2 * t[35]
        y[0], y[1], y[2] = w1 * u2 - w2 * u1, w2 * u0 - w0 * u2, w0 * u1 - w1 * u0
        mi = mu[i]
        for j in range(m):  # b += μ B_iᵀ y, M += μ B_iᵀ B_i
            b[j] += mi * (Bi[0, j] * y[0] + Bi[1, j] * y[1] + Bi[2, j] * y[2])
            for l in range(j, m):
                Mk[j, l] += mi * (Bi[0, j] * Bi[0, l] + Bi[1, j] * Bi[1, l] + Bi[2, j] * Bi[2, l])
        for c in range(3):
            world[c] += mi * (p[c] + R[c, 0] * r0 + R[c, 1] * r1 + R[c, 2] * r2)
    for j in range(m):
        for l in range(j):
            Mk[j, l] = Mk[l, j]
    if r > 0:
        b[6:] += _mv(Kst, eta, dt) + _mv(Cd, etad, dt)
    for i in range(m):
        arena[bo + i] = b[i]
        for j in range(m):
            arena[mo + i * m + j] = Mk[i, j]
    size = Record.SIZE + 6 * m
    rec = row[Row.RECORDS]  # own frame: γ = 0, pose, v, Γ = [I, 0]
    for i in range(6):
        arena[rec + Record.gamma + i] = 0
        arena[rec + Record.velocity + i] = v[i]
        for j in range(m):
            arena[rec + Record.SIZE + i * m + j] = 1.0 if i == j else 0.0
    for i in range(9):
        arena[rec + Record.rotation + i] = t[18 + i]
    for i in range(3):
        arena[rec + Record.position + i] = t[27 + i]
    pot = -(world[0] * reals[0] + world[1] * reals[1] + world[2] * reals[2])
    if r > 0:
        pot += 0.5 * np.sum(eta * _mv(Kst, eta, dt))
    arena[row[Row.POTENTIAL]] = pot
    for node in range(nn):  # modal nodes (BODIES.md): Γ_o = [ᵒX_k, Π_o], γ_o = Γ̇_o 𝒱(k)
        nb = nodes + node * (3 + 6 * r)
        po = reals[nb: nb + 3]
        Phio = matrix_view(reals, nb + 3, 3, r)
        Psio = matrix_view(reals, nb + 3 + 3 * r, 3, r)
        psi = _mv(Psio, eta, dt)
        psid = _mv(Psio, etad, dt)
        A_, B_, C_, dB, dC = exp_map_coefficients(np.sum(psi * psi))
        K = _skew(psi)
        K2 = _mm(K, K, dt)
        Ro = np.eye(3).astype(dt) + A_ * K + B_ * K2
        Jr = np.eye(3).astype(dt) - B_ * K + C_ * K2
        ro_ = po + _mv(Phio, eta, dt)
        Xo = np.zeros((6, 6), dt)
        Et = Ro.T.copy()
        Xo[:3, :3] = Et
        Xo[3:, 3:] = Et
        Xo[3:, :3] = -_mm(Et, _skew(ro_), dt)
        Pi = np.zeros((6, r), dt)
        Pi[:3] = _mm(Jr, Psio, dt)
        Pi[3:] = _mm(Et, Phio, dt)
        v_rel = _mv(Pi, etad, dt)
        sdot = 2 * np.sum(psi * psid)
        k_psid = _cross(psi, psid)
        Jr_dot = -dB * sdot * k_psid + dC * sdot * _cross(psi, k_psid) + C_ * _cross(psid, k_psid)
        Xv = _mv(Xo, v, dt)
        # γ = −(v_rel ×) Xv + [J̇_r Ψ η̇; −ω_rel × v_rel_lin]
        w_, l_ = v_rel[:3], v_rel[3:]
        gamma = np.zeros(6, dt)
        gamma[:3] = -_cross(w_, Xv[:3]) + Jr_dot
        gamma[3:] = -(_cross(l_, Xv[:3]) + _cross(w_, Xv[3:])) - _cross(w_, l_)
        ra = rec + (node + 1) * size
        for i in range(6):
            for j in range(m):
                arena[ra + Record.SIZE + i * m + j] = Xo[i, j] if j < 6 else Pi[i, j - 6]
        Rw = _mm(R, Ro, dt)
        pw = p + _mv(R, ro_, dt)
        for i in range(6):
            arena[ra + Record.gamma + i] = gamma[i]
            arena[ra + Record.velocity + i] = Xv[i] + v_rel[i]
        for i in range(3):
            for j in range(3):
                arena[ra + Record.rotation + 3 * i + j] = Rw[i, j]
            arena[ra + Record.position + i] = pw[i]
    return True


#: The flexible body's state kernel.
FLEXIBLE = StateKernel(_flexible, own_frame_identity=True, name="flexible body")


def pack_flexible(body) -> CompiledState | None:
    """The compiled state of a :class:`~sko.bodies.flexible.FlexibleBody` (``None``: user-defined joint)."""
    joint = joint_constants(body.joint)
    if joint is None:
        return None
    nodes = [np.concatenate([d.position, d.translation.ravel(), d.rotation.ravel()]) for d in body.nodes.values()]
    constants = np.concatenate([joint, placement_constants(body.placement),
                                [body.masses.shape[0], body.r, len(body.nodes)], body.masses, body.positions.ravel(),
                                body.modes.ravel(), body.stiffness.ravel(), body.damping.ravel(), *nodes])
    return CompiledState(FLEXIBLE, constants, HingeWork.SIZE + 6)

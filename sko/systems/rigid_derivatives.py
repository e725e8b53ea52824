"""The derivatives of inverse dynamics of a rigid tree by the O(N·d) recursion (DERIVATIVES.md,
Eq. 10–12; ``d`` the depth of the tree).

The readable reference of the analytic path: generic numpy on any scalar type (float, complex,
sympy expressions), one state at a time, in body coordinates. A scatter computes the velocities
``v_k``, accelerations ``α_k`` and forces ``f_k`` of Newton–Euler and, for every column of the
joint of ``k``, the seeds ``σ`` (the change of ``v_k``) and ``ϱ`` (that of ``α_k`` plus
``v_k × σ``), which describe the change of the whole subtree (Eq. 10); a gather sums the forces, the
composite inertias ``ℛ`` and the composite body Coriolis matrices ``𝔅``. Then every body walks
its ancestors twice: once for its row block against the columns of itself and its ancestors,
once for its columns against the rows of its strict ancestors (Eq. 11, Eq. 12). Where the joints'
motion subspaces move with their coordinates (rack-and-pinion, Euler angles, reversed joints,
user-defined joints), the joints' own derivatives enter through
:meth:`~sko.bodies.joints.Joint.kinematics_derivatives`.

It applies to systems of :class:`~sko.bodies.rigid.RigidBody` bodies without hinge forces or
external forces (:func:`applies`); the derivatives of any other system come from the complex
step of :mod:`sko.systems.derivatives`, against which this recursion is checked.
"""

from __future__ import annotations

import numpy as np

from sko.bodies.contract import BodyType
from sko.bodies.rigid import RigidBody
from sko.spatial import crf, crm, skew

__all__ = ["applies", "compiled", "inverse_dynamics_partials"]


def applies(system) -> bool:
    """Whether every body is a plain :class:`~sko.bodies.rigid.RigidBody` with no hinge force, and
    no tendon adds one."""
    return bool(system.bodies) and not system.tendons and all(
        type(system.body(k)) is RigidBody and type(system.body(k)).hinge_force is BodyType.hinge_force
        for k in system.bodies)


def compiled(system) -> bool:
    """Whether the compiled twin of the recursion (:mod:`sko.engine.derivatives`)
    takes the system: :func:`applies`, every joint with a constant ``S`` and ``c_J = 0``
    (:attr:`~sko.bodies.joints.Joint.constant_motion`) and every body compiled."""
    engine = system._engine
    return (applies(system) and all(system.body(k).joint.constant_motion for k in system.bodies)
            and engine.layout is not None and engine.layout.all_compiled)


def _crfb(h) -> np.ndarray:
    """``crfb(h)`` with ``crfb(h) x = x ×* h`` for a force ``h = [n; f]``: ``[[−n×, −f×], [−f×, 0]]``."""
    n, f = skew(h[:3]), skew(h[3:])
    return -np.block([[n, f], [f, 0 * n]])


def inverse_dynamics_partials(system, q, v, dv) -> tuple[np.ndarray, np.ndarray]:
    """``(∂T/∂θ, ∂T/∂θ̇)`` of :meth:`inverse_dynamics` at one state (module docstring); ``q``,
    ``v``, ``dv`` checked 1-D vectors of the system's sizes."""
    bodies = system.bodies
    dtype = np.result_type(q, v, dv, float)
    n = system.dof_size
    dq, dvel = np.zeros((n, n), dtype=dtype), np.zeros((n, n), dtype=dtype)
    g = np.asarray(system.gravity)
    root_acceleration = np.concatenate([np.zeros(3, dtype=g.dtype), -g])  # α(root) = −a_g
    X, S, dS, f, R, B, sigma, rho = {}, {}, {}, {}, {}, {}, {}, {}
    vel, acc = {}, {}
    for k in system.tree.scatter_order():  # base to tips: Newton–Euler and the seeds (Eq. 10)
        body, qs, vs = system.body(k), system.q_slices[k], system.dof_slices[k]
        joint, p = body.joint, body.parent
        XJ, S_k, c = joint.kinematics(q[qs], v[vs])
        X[k], S[k] = XJ @ body.placement, S_k
        V_plus = X[k] @ vel[p] if p is not None else np.zeros(6, dtype=dtype)  # 𝒱⁺(k)
        A_plus = X[k] @ (acc[p] if p is not None else root_acceleration)  # α⁺(k)
        vJ = S_k @ v[vs]
        vel[k] = V_plus + vJ
        acc[k] = A_plus + S_k @ dv[vs] + c + crm(vel[k]) @ vJ
        I = body.inertia
        f[k] = I @ acc[k] + crf(vel[k]) @ (I @ vel[k])
        R[k] = I.astype(dtype)
        B[k] = (crf(vel[k]) @ I - I @ crm(vel[k]) + _crfb(I @ vel[k])) / 2  # B(k) v_k = b(k)
        d = joint.kinematics_derivatives(q[qs], v[vs])
        sigma_q, rho_q, sigma_v, rho_v = [], [], [], []
        for i in range(S_k.shape[1]):
            s, dS_i = S_k[:, i], d.dS[i]
            sq = crm(V_plus) @ s + dS_i @ v[vs]
            sigma_q.append(sq)
            rho_q.append(crm(A_plus) @ s + dS_i @ dv[vs] + d.dc_dq[:, i] + crm(vel[k]) @ (dS_i @ v[vs])
                         + crm(V_plus) @ sq)
            sigma_v.append(s)
            rho_v.append(crm(vel[k] + V_plus) @ s + d.dc_dv[:, i])
        sigma[k] = (_columns(sigma_q, dtype), _columns(sigma_v, dtype))
        rho[k] = (_columns(rho_q, dtype), _columns(rho_v, dtype))
        dS[k] = d.dS
    for k in system.tree.gather_order():  # tips to base: forces and composites
        p = system.body(k).parent
        if p is not None:
            Xs = X[k].T
            f[p] = f[p] + Xs @ f[k]
            R[p] = R[p] + Xs @ R[k] @ X[k]
            B[p] = B[p] + Xs @ B[k] @ X[k]
    for i in bodies:  # Eq. 11, Eq. 12: every body against its ancestors
        vi = system.dof_slices[i]
        Y, Z, j = R[i] @ S[i], 2 * B[i].T @ S[i], i
        while True:  # row block i, columns of j ⪯ i
            vj = system.dof_slices[j]
            dq[vi, vj] += Y.T @ rho[j][0] + Z.T @ sigma[j][0]
            dvel[vi, vj] += Y.T @ rho[j][1] + Z.T @ sigma[j][1]
            p = system.body(j).parent
            if p is None:
                break
            Y, Z, j = X[j].T @ Y, X[j].T @ Z, p
        if dS[i].size:  # ∂T(i)/∂θ_ι += (∂S_i/∂θ_ι)* f(i) for the columns of i (Eq. 11)
            dq[vi, vi] += np.einsum("irc,r->ci", dS[i], f[i])
        force = np.column_stack([crf(S[i][:, c]) @ f[i] for c in range(S[i].shape[1])]) if S[i].shape[1] else 0
        g_q = R[i] @ rho[i][0] + 2 * B[i] @ sigma[i][0] + force
        g_v = R[i] @ rho[i][1] + 2 * B[i] @ sigma[i][1]
        j = i
        while system.body(j).parent is not None:  # columns of i, rows of its strict ancestors
            g_q, g_v, j = X[j].T @ g_q, X[j].T @ g_v, system.body(j).parent
            vj = system.dof_slices[j]
            dq[vj, vi] += S[j].T @ g_q
            dvel[vj, vi] += S[j].T @ g_v
    return dq, dvel


def _columns(vectors: list, dtype) -> np.ndarray:
    return np.column_stack(vectors) if vectors else np.zeros((6, 0), dtype=dtype)

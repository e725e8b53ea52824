"""The state kernel of a cluster of coupled rigid bodies (EMBEDDING.md §4; Python: the
``at_state`` of :class:`~sko.bodies.cluster.RigidCluster`; the contract of
:mod:`sko.engine.state_kernels`).

``θ_C = G θ_ind + d``, ``θ̇_C = G θ̇_ind`` (``Ġ = 0``); each member's hinge
(:func:`~sko.engine.bodies.rigid.hinge`) from its parent member's record (the cluster's inboard
for the first ones), then ``E = Φ B``, ``H* = Φ S G``, ``a = Φ a_int``, ``M = diag(I_j)``,
``b``, the member records ``Γ_j = [0 … I … 0]``, ``γ_j = 0`` (the first member's also as the
cluster's own). A cluster with loops has no compiled state: its closure is solved in Python.
"""

from __future__ import annotations

import numpy as np

from sko.engine.fields import offsets
from sko.engine.joints import JointConstants, joint_constants
from sko.bodies.contract import CompiledState
from sko.engine.state_kernels import Record, Row, StateKernel, numeric_state
from sko.engine.bodies.rigid import HingeWork, RigidConstants, bias, call_hinge, placement_constants

__all__ = ["ClusterConstants", "MemberConstants", "CLUSTER", "pack_cluster"]

#: A cluster's constants: its member count ``c``, ``n_sp`` (θ_C), ``n_ind`` (θ_ind); then ``G``
#: (n_sp × n_ind, row-major), ``d`` (n_sp) and one :data:`MemberConstants` per member, parents first.
ClusterConstants = offsets("ClusterConstants", members=1, spanning=1, independent=1)
#: A member's: its parent member (−1: the cluster's inboard frame), its first column in ``θ_C``,
#: then a rigid body's constants.
MemberConstants = offsets("MemberConstants", parent=1, column=1, rigid=RigidConstants.SIZE)


def _cluster(arena, row, reals, terms, constants):
    """A :class:`~sko.bodies.cluster.RigidCluster` of couplings only (module docstring)."""
    c0, m, wo = row[Row.CONSTANTS], row[Row.NODE_DIM], row[Row.SCRATCH]
    c = int(reals[c0 + ClusterConstants.members])
    n_sp, n_ind = int(reals[c0 + ClusterConstants.spanning]), int(reals[c0 + ClusterConstants.independent])
    go = c0 + ClusterConstants.SIZE
    do = go + n_sp * n_ind
    first = do + n_sp
    to = wo + HingeWork.SIZE  # θ_C, θ̇_C in the scratch, where hinge reads them
    for i in range(n_sp):
        s, sd = reals[do + i] + 0 * arena[row[Row.Q]], 0 * arena[row[Row.V]]
        for j in range(n_ind):
            s += reals[go + i * n_ind + j] * arena[row[Row.Q] + j]
            sd += reals[go + i * n_ind + j] * arena[row[Row.V] + j]
        arena[to + i], arena[to + n_sp + i] = s, sd
    dt = arena.dtype
    Phi = np.zeros((m, m), dt)  # φ_int*: block (j, i) = ʲX_i for i on the path of j
    B = np.zeros((m, 6), dt)  # B: the first members' ᵏX_o
    SG = np.zeros((m, n_ind), dt)  # S G
    a_int = np.empty(m, dt)
    for i in range(m * m):  # the arena is not zeroed: M's off-diagonal blocks
        arena[row[Row.M] + i] = 0
    size = Record.SIZE + 6 * m
    rec0 = row[Row.RECORDS] + size  # the first member's record (the cluster's own frame's comes first)
    X = arena[wo + HingeWork.X: wo + HingeWork.X + 36]
    S = arena[wo + HingeWork.S: wo + HingeWork.S + 36]
    vel, acc, Ro, po = wo + HingeWork.v, wo + HingeWork.acc, wo + HingeWork.rotation, wo + HingeWork.position
    pot = 0 * arena[to]
    for j in range(c):
        mo = first + j * MemberConstants.SIZE
        rc = mo + MemberConstants.rigid
        parent, col = int(reals[mo + MemberConstants.parent]), int(reals[mo + MemberConstants.column])
        nv = int(reals[rc + JointConstants.nv])
        inboard = row[Row.INBOARD] if parent < 0 else rec0 + parent * size
        if not call_hinge(row[Row.JOINT], (arena, reals, rc, to + col, to + n_sp + col, inboard, wo, terms)):
            return False
        rj = 6 * j
        for i in range(6):
            Phi[rj + i, rj + i] = 1.0
        if parent < 0:
            for i in range(6):
                for l in range(6):
                    B[rj + i, l] = X[6 * i + l]
        else:
            rp = 6 * parent
            for i in range(6):
                for col2 in range(m):
                    s = 0.0
                    for l in range(6):
                        s += X[6 * i + l] * Phi[rp + l, col2]
                    Phi[rj + i, col2] += s
        for i in range(6):
            for l in range(nv):
                Sil = S[6 * i + l]
                for p in range(n_ind):
                    SG[rj + i, p] += Sil * reals[go + (col + l) * n_ind + p]
            a_int[rj + i] = arena[acc + i]
            arena[row[Row.VELOCITY] + rj + i] = arena[vel + i]
        # b_j = v ×* I v, M's diagonal block, the member's record, its potential
        ic = rc + RigidConstants.inertia
        b = bias(reals, ic, (arena[vel], arena[vel + 1], arena[vel + 2], arena[vel + 3], arena[vel + 4],
                             arena[vel + 5]))
        for i in range(6):
            arena[row[Row.B] + rj + i] = b[i]
            for l in range(6):
                arena[row[Row.M] + (rj + i) * m + rj + l] = reals[ic + 6 * i + l]
        for copy in range(2 if j == 0 else 1):
            at = rec0 + j * size if copy == 0 else row[Row.RECORDS]
            for i in range(6):
                arena[at + Record.gamma + i] = 0
                arena[at + Record.velocity + i] = arena[vel + i]
                for l in range(m):
                    arena[at + Record.SIZE + i * m + l] = 1.0 if l == rj + i else 0.0
            for i in range(9):
                arena[at + Record.rotation + i] = arena[Ro + i]
            for i in range(3):
                arena[at + Record.position + i] = arena[po + i]
        cm = 0.0
        for i in range(3):
            ci = arena[po + i]
            for l in range(3):
                ci += arena[Ro + 3 * i + l] * reals[rc + RigidConstants.com + l]
            cm -= reals[i] * ci
        pot += reals[rc + RigidConstants.mass] * cm
    arena[row[Row.POTENTIAL]] = pot
    hb, ao = row[Row.H], row[Row.A]  # H = (Φ S G)*, a = Φ a_int, E = Φ B
    eo, er, ec = row[Row.E], row[Row.E_ROW], row[Row.E_COLUMN]
    for i in range(m):
        sa = 0.0
        for l in range(m):
            sa += Phi[i, l] * a_int[l]
        arena[ao + i] = sa
        for p in range(n_ind):
            s = 0.0
            for l in range(m):
                s += Phi[i, l] * SG[l, p]
            arena[hb + p * m + i] = s
        for l in range(6):
            s = 0.0
            for r2 in range(m):
                s += Phi[i, r2] * B[r2, l]
            arena[eo + i * er + l * ec] = s
    return True


def _cluster_constants(c) -> int:
    """How many constants :func:`_cluster` reads (:data:`ClusterConstants`, sizes in the header)."""
    members, n_sp, n_ind = (int(c[ClusterConstants.members]), int(c[ClusterConstants.spanning]),
                            int(c[ClusterConstants.independent]))
    return ClusterConstants.SIZE + n_sp * n_ind + n_sp + members * MemberConstants.SIZE


#: The cluster's state kernel.
CLUSTER = StateKernel(_cluster, own_frame_identity=True, name="rigid cluster", constants=_cluster_constants,
                      calls_hinge=True, rates=True)


def pack_cluster(body) -> CompiledState | None:
    """The compiled state of a :class:`~sko.bodies.cluster.RigidCluster` with couplings only
    (``θ_C = G θ_ind + d``) and library joints; ``None`` otherwise (closed loops are solved by
    Newton's method in Python)."""
    if body.loops:
        return None
    G = np.asarray(body._G)  # sympy entries: numeric_state sends the body to its Python state
    d = np.asarray(body.closed_coordinates(np.zeros(body.q_size)))
    parts = [np.array([body.c, body.n_sp, body.q_size], dtype=float), G.ravel(), d]
    for i, member in enumerate(body.members):
        joint = joint_constants(member.joint, member.name)
        if joint is None:
            return None
        parent = body._parent_index[i]
        mass, com = body._mass_com[i]
        parts += [[-1 if parent is None else parent, body._cols[i].start], joint,
                  placement_constants(body._placement[i]), body._inertia[i].ravel(), [mass], com]
    return numeric_state(CLUSTER, np.concatenate(parts), HingeWork.SIZE + 2 * body.n_sp)

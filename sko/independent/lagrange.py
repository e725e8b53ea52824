"""Equations of motion of a tree of particle bodies from Lagrange's equations.

Each body carries lumped particles (mass ``μ_i``, undeformed position ``p_i`` in the body frame,
modal translations ``Φ_i``), so its deformed particle positions are ``p_i + Φ_i η`` in the body
frame. A body hangs from its parent's frame or from a node ``o`` of its parent, whose pose in the
parent frame is ``[exp((Ψ_o η)×), p_o + Φ_o η]``; then a fixed placement, then its joint. A
geared rotor is a set of particles spinning about an axis through a centre fixed in the
attachment frame, by the angle ``ratio · q_joint``.

Coordinates: per body, in the order given, ``q = (q_joint, η)`` and the velocity coordinates
``θ̇ = (θ̇_joint, η̇)`` with ``q̇ = G(q) θ̇`` (see :mod:`sko.independent.kinematics`). With ``𝒥_i = ∂ẋ_i/∂θ̇``
(the particle Jacobian in the velocity coordinates), Lagrange's equations in these coordinates
(Kane's form, exact for quasi-velocities) read ``ℳ θ̈ + 𝒞 = T`` with

    ℳ = Σ_i μ_i 𝒥_i* 𝒥_i,
    𝒞 = Σ_i μ_i 𝒥_i* (𝒥̇_i θ̇ − g) + [K_k η_k + C_k η̇_k]_k.

``𝒥_i`` is computed by complex-step differentiation of ``x_i(q)`` (exact to rounding) and
``𝒥̇_i θ̇ = d/dt (𝒥_i θ̇)`` by eighth-order central differences of the complex-step velocity
along ``q̇`` (the step halved until converged).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from .kinematics import IndependentJoint, homogeneous, rotation_about, rotation_from_vector

__all__ = ["ParticleRotor", "ParticleBody", "ParticleTree", "particles_from_inertia"]

_H = 1e-30  # complex step
_FD = np.array([4 / 5, -1 / 5, 4 / 105, -1 / 280])  # 8th-order central first-derivative weights


def particles_from_inertia(mass: float, com, inertia) -> tuple[np.ndarray, np.ndarray]:
    """Six particles with the given mass, centre of mass and rotational inertia about it.

    Particles of mass ``m/6`` sit at ``c ± d_j e_j`` on the principal axes ``e_j`` of the second
    moment ``S = ½ tr(I_c) I − I_c``, with ``d_j = √(3 s_j / m)``. Requires ``S`` positive
    semidefinite (the triangle inequality of the principal moments).

    Returns
    -------
    masses (6,), positions (6, 3)
    """
    Ic = np.asarray(inertia, dtype=float)
    S = 0.5 * np.trace(Ic) * np.eye(3) - Ic
    s, E = np.linalg.eigh(S)
    if s.min() < -1e-12 * max(1.0, np.abs(s).max()):
        raise ValueError(f"rotational inertia violates the triangle inequality: second moments {s}")
    d = np.sqrt(3.0 * np.clip(s, 0.0, None) / mass)
    c = np.asarray(com, dtype=float)
    positions = np.array([c + sign * d[j] * E[:, j] for j in range(3) for sign in (1.0, -1.0)])
    return np.full(6, mass / 6.0), positions


@dataclass(frozen=True)
class ParticleRotor:
    """Particles spinning about ``axis`` (unit, attachment-frame coordinates) through ``centre``
    by ``ratio`` times the (one-coordinate) joint angle; ``offsets`` are their positions relative
    to the centre at zero angle."""

    axis: np.ndarray
    centre: np.ndarray
    ratio: float
    masses: np.ndarray
    offsets: np.ndarray


@dataclass(frozen=True)
class ParticleBody:
    """One body of the particle model.

    ``attach``: ``None`` (the parent's frame) or the name of a node of the parent.
    ``placement``: 4 × 4 pose of the joint's predecessor frame in the attachment frame.
    ``modes``: ``(n, 3, r)`` modal translations of the particles (``None``: rigid).
    ``nodes``: ``{name: (p_o, Φ_o, Ψ_o)}`` attachment nodes (``Φ_o, Ψ_o``: 3 × r).
    """

    name: object
    parent: object
    joint: IndependentJoint
    masses: np.ndarray
    positions: np.ndarray
    placement: np.ndarray = field(default_factory=lambda: np.eye(4))
    attach: object = None
    modes: np.ndarray | None = None
    stiffness: np.ndarray | None = None
    damping: np.ndarray | None = None
    nodes: Mapping = field(default_factory=dict)
    rotor: ParticleRotor | None = None

    @property
    def r(self) -> int:
        return 0 if self.modes is None else self.modes.shape[2]


class ParticleTree:
    """A tree of particle bodies; bodies in stacking order, gravity ``g`` (world, m/s²)."""

    def __init__(self, bodies: Sequence[ParticleBody], gravity=(0.0, 0.0, -9.81)):
        self.bodies = tuple(bodies)
        self.gravity = np.asarray(gravity, dtype=float)
        names = [b.name for b in self.bodies]
        self._by_name = dict(zip(names, self.bodies))
        qo = vo = 0
        self.q_slices, self.v_slices = {}, {}
        for b in self.bodies:
            self.q_slices[b.name] = slice(qo, qo + b.joint.nq + b.r)
            self.v_slices[b.name] = slice(vo, vo + b.joint.nv + b.r)
            qo, vo = qo + b.joint.nq + b.r, vo + b.joint.nv + b.r
        self.q_size, self.v_size = qo, vo
        depth = {}
        for b in self.bodies:  # a parent's pose is needed before its children's
            d, p = 0, b.parent
            while p is not None:
                d, p = d + 1, self._by_name[p].parent
            depth[b.name] = d
        self._order = sorted(self.bodies, key=lambda b: depth[b.name])
        self.masses = np.concatenate([self._masses(b) for b in self.bodies])

    @staticmethod
    def _masses(b: ParticleBody) -> np.ndarray:
        return np.concatenate([b.masses, b.rotor.masses]) if b.rotor is not None else np.asarray(b.masses)

    # ----------------------------------------------------------------- kinematics
    def frames(self, q) -> dict:
        """World pose of every body frame and of every node frame: ``{name: T}``,
        ``{(name, node): T}``."""
        poses = {}
        for b in self._order:
            qb = q[self.q_slices[b.name]]
            qj, eta = qb[: b.joint.nq], qb[b.joint.nq:]
            attach = np.eye(4) if b.parent is None else poses[b.parent if b.attach is None else (b.parent, b.attach)]
            poses[b.name] = attach @ b.placement @ b.joint.pose(qj)
            for node, (p_o, Phi_o, Psi_o) in b.nodes.items():
                local = homogeneous(rotation_from_vector(Psi_o @ eta), p_o + Phi_o @ eta)
                poses[(b.name, node)] = poses[b.name] @ local
        return poses

    def positions(self, q) -> np.ndarray:
        """World positions ``x_i(q)`` of all particles, ``(N, 3)``, body by body."""
        q = np.asarray(q)
        poses = self.frames(q)
        out = []
        for b in self.bodies:
            qb = q[self.q_slices[b.name]]
            qj, eta = qb[: b.joint.nq], qb[b.joint.nq:]
            local = b.positions + (b.modes @ eta if b.r else 0.0)
            T = poses[b.name]
            out.append(local @ T[:3, :3].T + T[:3, 3])
            if b.rotor is not None:
                ro = b.rotor
                Ta = np.eye(4) if b.parent is None else poses[b.parent if b.attach is None else (b.parent, b.attach)]
                spun = ro.centre + ro.offsets @ rotation_about(ro.axis, ro.ratio * qj[0]).T
                out.append(spun @ Ta[:3, :3].T + Ta[:3, 3])
        return np.concatenate(out)

    def qdot_map(self, q) -> np.ndarray:
        """``G(q)`` with ``q̇ = G θ̇`` (block diagonal; identity on the modal coordinates)."""
        G = np.zeros((self.q_size, self.v_size), dtype=np.result_type(q, float))
        for b in self.bodies:
            qs, vs = self.q_slices[b.name], self.v_slices[b.name]
            nq, nv = b.joint.nq, b.joint.nv
            G[qs.start:qs.start + nq, vs.start:vs.start + nv] = b.joint.qdot_map(np.asarray(q)[qs][:nq])
            G[qs.start + nq:qs.stop, vs.start + nv:vs.stop] = np.eye(b.r)
        return G

    def _velocity(self, q, v) -> np.ndarray:
        """``ẋ_i = 𝒥_i θ̇`` by one complex step along ``q̇ = G θ̇``."""
        return self.positions(q + 1j * _H * (self.qdot_map(q) @ v)).imag / _H

    def jacobian(self, q) -> np.ndarray:
        """``𝒥`` of shape ``(N, 3, n_v)``: ``ẋ_i = 𝒥_i θ̇``."""
        q = np.asarray(q, dtype=float)
        return np.stack([self._velocity(q, e) for e in np.eye(self.v_size)], axis=-1)

    def velocity_product(self, q, v) -> np.ndarray:
        """``𝒥̇_i θ̇``: the particle accelerations at ``θ̈ = 0`` (``(N, 3)``).

        Eighth-order central differences of ``ẋ(q) = 𝒥(q) θ̇`` along ``q̇``; the step is halved
        until two successive estimates agree to 1e-12 of their size or rounding takes over
        (fast geared rotors need small steps), at most ten times."""
        q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
        qd = self.qdot_map(q) @ v
        delta = 0.05 / max(np.linalg.norm(qd), 1e-300)
        previous, change = None, np.inf
        for _ in range(10):
            out = sum(w * (self._velocity(q + k * delta * qd, v) - self._velocity(q - k * delta * qd, v))
                      for k, w in enumerate(_FD, start=1)) / delta
            if previous is not None:
                new_change = np.abs(out - previous).max()
                if new_change >= change:  # rounding dominates: the previous estimate is the best
                    return previous
                if new_change <= 1e-12 * max(np.abs(out).max(), 1e-300):
                    break
                change = new_change
            previous, delta = out, delta / 2
        return out

    # ----------------------------------------------------------------- dynamics
    def mass_matrix(self, q) -> np.ndarray:
        """``ℳ(q) = Σ μ_i 𝒥_i* 𝒥_i``."""
        J = self.jacobian(q)
        return np.einsum("i,iaj,iak->jk", self.masses, J, J)

    def bias(self, q, v) -> np.ndarray:
        """``𝒞(q, θ̇) = Σ μ_i 𝒥_i* (𝒥̇_i θ̇ − g) + K η + C η̇`` (``T = ℳ θ̈ + 𝒞``)."""
        J = self.jacobian(q)
        acc = self.velocity_product(q, v) - self.gravity
        C = np.einsum("i,iaj,ia->j", self.masses, J, acc)
        for b in self.bodies:
            if b.r:
                eta = np.asarray(q)[self.q_slices[b.name]][b.joint.nq:]
                etad = np.asarray(v)[self.v_slices[b.name]][b.joint.nv:]
                s = self.v_slices[b.name]
                C[s.start + b.joint.nv:s.stop] += _matrix(b.stiffness, b.r) @ eta + _matrix(b.damping, b.r) @ etad
        return C

    def forward_dynamics(self, q, v, tau) -> np.ndarray:
        """``θ̈ = ℳ^{-1} (T − 𝒞)``."""
        return np.linalg.solve(self.mass_matrix(q), np.asarray(tau, dtype=float) - self.bias(q, v))

    def energy(self, q, v) -> float:
        """``½ θ̇* ℳ θ̇ − Σ μ_i g·x_i + Σ_k ½ η_k* K_k η_k``."""
        q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
        xd = self._velocity(q, v)
        kinetic = 0.5 * float(np.einsum("i,ia,ia->", self.masses, xd, xd))
        potential = -float(self.masses @ (self.positions(q) @ self.gravity))
        for b in self.bodies:
            if b.r:
                eta = q[self.q_slices[b.name]][b.joint.nq:]
                potential += 0.5 * float(eta @ _matrix(b.stiffness, b.r) @ eta)
        return kinetic + potential


def _matrix(A, r: int) -> np.ndarray:
    return np.zeros((r, r)) if A is None else np.asarray(A, dtype=float)

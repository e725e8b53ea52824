"""Flexible bodies: assumed modes in a floating frame of reference (BODIES.md, *Flexible body*).

Body ``k`` has ``r`` modal coordinates ``η`` and lumped particles ``i`` (mass ``μ_i``,
undeformed position ``p_i`` in ``F_k``, modal translation ``Φ_i``, 3 × r), deformed position
``r_i = p_i + Φ_i η``. The frame ``F_k`` sits at the inboard hinge.

* Node velocity ``𝒱(k) = [v_k; η̇]`` (``m_k = 6 + r``); ``u_i = B_i 𝒱(k)``,
  ``B_i = [−r_i×, I, Φ_i]``; ``M(k) = Σ μ_i B_i* B_i``.
* ``E_k = [ᵏX_o; 0]``, ``H(k) = diag(S*, I_r)``, ``a(k) = [ᵏX_o γ_o + c_J + v_k × S q̇; 0]``,
  ``b(k) = Σ μ_i B_i* (Ḃ_i 𝒱 + ω × u_i) + [0; K η + C η̇]`` with ``Ḃ_i 𝒱 = ω × (Φ_i η̇)``.
* A node ``o`` (undeformed position ``p_o``, modal translation ``Φ_o``, modal rotation ``Ψ_o``)
  has the pose ``[exp((Ψ_o η)×), p_o + Φ_o η]`` in ``F_k`` (exponential map), so
  ``ᵒX_k = rot(R_oᵀ) xlt(p_o + Φ_o η)`` and the exact

      Π_o = [J_r(Ψ_o η) Ψ_o; R_oᵀ Φ_o],     Γ_o = [ᵒX_k, Π_o],
      γ_o = −(Π_o η̇)× ᵒX_k v_k + [J̇_r Ψ_o η̇; −ω_rel × R_oᵀ Φ_o η̇],

  with ``J_r`` the right Jacobian of the exponential map (body-frame angular velocity) and
  ``ω_rel = J_r Ψ_o η̇``. A child below node ``o`` then gets ``φ*(k, j) = E_j Γ_o``, of shape
  ``m_j × (6 + r)``: ``[[ʲX_o ᵒX_k, ʲX_o Π_o], [0, 0]]`` as in BODIES.md.

With ``r = 0`` this is exactly :class:`~sko.bodies.rigid.RigidBody`.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Hashable, Mapping
from typing import NamedTuple

import numpy as np
import scipy.linalg

from sko.graphs.errors import SKOError
from sko.arrays import check_psd, check_spd, numeric_array
from sko.bodies.joints import Joint
from sko.spatial import crm, float_or_complex, plucker, skew

from sko.bodies.contract import Attachment, BodyError, BodyType, NodeState
from sko.bodies.hinge import checked_placement, hinge_state

__all__ = ["ModalNode", "FlexibleBody", "exp_map_coefficients"]

_SERIES_TERMS = 20
_FACTORIALS = [float(math.factorial(j)) for j in range(2 * _SERIES_TERMS + 4)]


class ModalNode(NamedTuple):
    """An attachment node of a flexible body: position ``p_o``, modal translation ``Φ_o`` and
    modal rotation ``Ψ_o`` (3 × r each, in ``F_k``)."""

    position: np.ndarray
    translation: np.ndarray
    rotation: np.ndarray


def exp_map_coefficients(s):
    """``A = sin θ/θ``, ``B = (1 − cos θ)/θ²``, ``C = (θ − sin θ)/θ³`` and ``dB/ds``, ``dC/ds``
    as functions of ``s = θ²`` (power series for ``|s| ≤ 4``, closed forms beyond).

    ``exp(ψ×) = I + A ψ× + B ψ×²`` and ``J_r(ψ) = I − B ψ× + C ψ×²``.

    >>> A, B, C, dB, dC = exp_map_coefficients(0.0)
    >>> float(A), float(B), float(C), float(dB), float(dC)   # 1, 1/2, 1/6, -1/24, -1/120
    (1.0, 0.5, 0.16666666666666666, -0.041666666666666664, -0.008333333333333333)
    """
    if abs(s) <= 4.0:
        def series(offset, derivative=False):  # Σ_n (−1)^n [n] s^(n[−1]) / (2n + offset)!, Horner
            out = 0.0 * s
            for n in reversed(range(1 if derivative else 0, _SERIES_TERMS)):
                out = out * s + (-1) ** n * (n if derivative else 1) / _FACTORIALS[2 * n + offset]
            return out
        return series(1), series(2), series(3), series(2, True), series(3, True)
    th = np.sqrt(s)
    sin, cos = np.sin(th), np.cos(th)
    return (sin / th, (1 - cos) / s, (th - sin) / (s * th),
            (th * sin / 2 - (1 - cos)) / s**2, ((1 - cos) * th - 3 * (th - sin)) / (2 * th**5))


class FlexibleBody(BodyType):
    """A flexible body with ``r`` assumed modes hanging from its parent through a joint.

    Parameters
    ----------
    name, parent, attach : see :class:`~sko.bodies.contract.BodyType`
    joint : sko.bodies.joints.Joint
    masses : (n,) array
        Particle masses ``μ_i > 0``.
    positions : (n, 3) array
        Undeformed particle positions ``p_i`` in the body frame.
    modes : (n, 3, r) array
        Modal translations ``Φ_i`` (``r = 0`` allowed: a rigid body).
    stiffness, damping : (r, r) arrays, optional
        ``K`` and ``C``, symmetric positive semidefinite (zero if omitted).
    nodes : mapping name -> (p_o, Φ_o[, Ψ_o]), optional
        Attachment nodes for children; ``Ψ_o`` defaults to zero (translation only).
    placement : (6, 6) array, optional
        ``X_T`` from the parent's attachment frame to the joint's predecessor frame.

    Raises
    ------
    BodyError
        On arrays of the wrong shape, non-positive masses, ``K`` or ``C`` not symmetric positive
        semidefinite, particles that leave ``M(k)`` singular, or a node named ``None``.
    """

    def __init__(self, name: Hashable, parent: Hashable | None, joint: Joint, masses, positions, modes,
                 stiffness=None, damping=None, nodes: Mapping | None = None, placement=None,
                 attach: Hashable | None = None):
        super().__init__(name, parent, attach)
        if not isinstance(joint, Joint):
            raise BodyError(f"joint of flexible body {name!r} must be a sko.bodies.joints.Joint, got {type(joint).__name__}")
        self.joint = joint
        self.masses = self._array(masses, "particle masses", ndim=1)
        n = self.masses.shape[0]
        if n == 0 or (self.masses <= 0).any():
            raise BodyError(f"flexible body {name!r} needs at least one particle and positive masses, got {self.masses}")
        self.positions = self._array(positions, "particle positions", (n, 3))
        modes = np.zeros((n, 3, 0)) if modes is None else modes
        self.modes = self._array(modes, "mode shapes", ndim=3)
        if self.modes.shape[:2] != (n, 3):
            raise BodyError(f"mode shapes of flexible body {name!r} have shape {self.modes.shape}; expected ({n}, 3, r) for {n} particles")
        r = self.r = self.modes.shape[2]
        self.stiffness = self._psd(stiffness, "stiffness K")
        self.damping = self._psd(damping, "damping C")
        self.nodes = {}
        if nodes is not None and not isinstance(nodes, Mapping):
            raise BodyError(f"nodes of flexible body {name!r} must be a mapping name -> (p_o, Φ_o[, Ψ_o]), "
                            f"got {type(nodes).__name__}")
        for node, data in (nodes or {}).items():
            if node is None:
                raise BodyError(f"flexible body {name!r}: the node name None is reserved for the body frame")
            if not isinstance(data, (tuple, list)) or len(data) not in (2, 3):
                raise BodyError(f"node {node!r} of flexible body {name!r} must be (p_o, Φ_o) or (p_o, Φ_o, Ψ_o)")
            p_o = self._array(data[0], f"position of node {node!r}", (3,))
            Phi_o = self._array(data[1], f"modal translation Φ_o of node {node!r}", (3, r))
            Psi_o = self._array(data[2] if len(data) == 3 else np.zeros((3, r)), f"modal rotation Ψ_o of node {node!r}", (3, r))
            self.nodes[node] = ModalNode(p_o, Phi_o, Psi_o)
        self.placement = checked_placement(placement, name)
        self.q_size, self.dof_size, self.node_dim = joint.nq + r, joint.nv + r, 6 + r
        try:
            check_spd(self._inertia(self.positions, self._B(self.positions)), "node inertia M(k) at η = 0", name)
        except SKOError as exc:
            raise BodyError(f"the particles of flexible body {name!r} leave M(k) singular "
                            f"(collinear particles, or modes that are rigid motions or linearly dependent): {exc}") from None

    # ------------------------------------------------------------------ input checks
    def _array(self, x, what: str, shape: tuple | None = None, ndim: int | None = None) -> np.ndarray:
        try:
            x = np.array(numeric_array(x, what), dtype=float)
        except (TypeError, ValueError) as exc:
            raise BodyError(f"{what} of flexible body {self.name!r} is not a real array: {exc}") from None
        if (shape is not None and x.shape != shape) or (ndim is not None and x.ndim != ndim):
            raise BodyError(f"{what} of flexible body {self.name!r} has shape {x.shape}, expected {shape or f'{ndim}-D'}")
        if not np.isfinite(x).all():
            raise BodyError(f"{what} of flexible body {self.name!r} contains NaN or infinity")
        return x

    def _psd(self, A, what: str) -> np.ndarray:
        r = self.r
        A = np.zeros((r, r)) if A is None else self._array(A, what, (r, r))
        check_psd(A, f"{what} of flexible body {self.name!r}", 1e-10, BodyError)
        return A

    # ------------------------------------------------------------------ the contract
    @property
    def attachment_names(self) -> tuple:
        return (None, *self.nodes)

    def rigid_part(self, name: Hashable) -> Hashable:
        """A node whose pose does not depend on ``η`` (``Φ_o = Ψ_o = 0``; every node without modes)
        moves with the body frame (``None``); a node with the same ``Φ_o`` and ``Ψ_o`` as one before
        it (and, when they rotate, the same ``p_o``) moves with that one."""
        if name is None:
            return None
        node = self.nodes[name]
        if not node.translation.any() and not node.rotation.any():
            return None
        for other, data in self.nodes.items():
            if other == name:
                break
            if (np.array_equal(data.translation, node.translation) and np.array_equal(data.rotation, node.rotation)
                    and (not node.rotation.any() or np.array_equal(data.position, node.position))):
                return other
        return name

    def _B(self, r_i: np.ndarray) -> np.ndarray:
        """``B_i = [−r_i×, I, Φ_i]`` for all particles, shape ``(n, 3, 6 + r)``."""
        n = r_i.shape[0]
        B = np.zeros((n, 3, 6 + self.r), dtype=r_i.dtype)
        x, y, z = r_i[:, 0], r_i[:, 1], r_i[:, 2]
        B[:, 0, 1], B[:, 0, 2], B[:, 1, 2] = z, -y, x  # −r_i×
        B[:, 1, 0], B[:, 2, 0], B[:, 2, 1] = -z, y, -x
        B[:, :, 3:6] = np.eye(3)
        B[:, :, 6:] = self.modes
        return B

    def _inertia(self, r_i, B) -> np.ndarray:
        return np.einsum("i,iaj,iak->jk", self.masses, B, B)

    def at_state(self, q, qd, inboard: Attachment, gravity) -> NodeState:
        nq, nv, r = self.joint.nq, self.joint.nv, self.r
        qj, eta, qdj, etad = q[:nq], q[nq:], qd[:nv], qd[nv:]
        h = hinge_state(self.joint, self.placement, qj, qdj, inboard)
        dtype = h.v.dtype
        r_i = self.positions + self.modes @ eta
        B = self._B(r_i)
        V = np.concatenate([h.v, etad])
        omega = h.v[:3]
        u = B @ V
        b = np.einsum("i,iaj,ia->j", self.masses, B, np.cross(omega, self.modes @ etad + u))
        b = b.astype(np.result_type(b, self.stiffness, self.damping), copy=False)  # complex K, C: a step in π
        b[6:] += self.stiffness @ eta + self.damping @ etad
        E = np.zeros((6 + r, 6), dtype=h.X.dtype)
        E[:6] = h.X
        H = scipy.linalg.block_diag(h.S.T, np.eye(r)).astype(np.result_type(h.S, float))
        a = np.concatenate([h.a, np.zeros(r, dtype=dtype)])
        Gamma = np.zeros((6, 6 + r), dtype=dtype)
        Gamma[:, :6] = np.eye(6)
        attachments = {None: Attachment(Gamma, np.zeros(6, dtype=dtype), h.rotation, h.position, h.v)}
        for node, data in self.nodes.items():
            attachments[node] = self._node_attachment(data, eta, etad, h)
        world = h.position + r_i @ h.rotation.T
        potential = -(self.masses @ world) @ gravity + 0.5 * eta @ self.stiffness @ eta
        return NodeState(E=E, H=H, M=self._inertia(r_i, B), a=a, b=b, V=V, attachments=attachments, potential=potential)

    def _node_attachment(self, node: ModalNode, eta, etad, h) -> Attachment:
        """``Γ_o = [ᵒX_k, Π_o]`` and ``γ_o = Γ̇_o 𝒱(k)`` of a node (module docstring)."""
        psi, psid = node.rotation @ eta, node.rotation @ etad
        A, B, C, dB, dC = exp_map_coefficients(psi @ psi)
        K = skew(psi)
        R = np.eye(3) + A * K + B * (K @ K)
        Jr = np.eye(3) - B * K + C * (K @ K)
        X = plucker(R.T, node.position + node.translation @ eta)
        Pi = np.concatenate([Jr @ node.rotation, R.T @ node.translation])
        v_rel = Pi @ etad
        sdot = 2 * (psi @ psid)
        k_psid = np.cross(psi, psid)
        Jr_dot = -dB * sdot * k_psid + dC * sdot * np.cross(psi, k_psid) + C * np.cross(psid, k_psid)
        Pi_dot = np.concatenate([Jr_dot, -np.cross(v_rel[:3], v_rel[3:])])
        v_o = X @ h.v + v_rel
        gamma = -crm(v_rel) @ X @ h.v + Pi_dot
        return Attachment(Gamma=np.concatenate([X, Pi], axis=1), gamma=gamma, rotation=h.rotation @ R,
                          position=h.position + h.rotation @ (node.position + node.translation @ eta), velocity=v_o)

    # ------------------------------------------------------------------ coordinates
    def qdot(self, q, qd):
        nq, nv = self.joint.nq, self.joint.nv
        return np.concatenate([self.joint.qdot(q[:nq], qd[:nv]), qd[nv:]])

    def normalize(self, q):
        nq = self.joint.nq
        return np.concatenate([self.joint.normalize(q[:nq]), float_or_complex(q[nq:])])

    def neutral(self):
        return np.concatenate([self.joint.neutral(), np.zeros(self.r)])

    def integrate(self, q, qd, dt):
        nq, nv = self.joint.nq, self.joint.nv
        return np.concatenate([self.joint.integrate(q[:nq], qd[:nv], dt), float_or_complex(q[nq:]) + dt * np.asarray(qd[nv:])])

    def difference(self, q0, q1):
        nq = self.joint.nq
        return np.concatenate([self.joint.difference(q0[:nq], q1[:nq]), np.asarray(q1[nq:], dtype=float) - q0[nq:]])

    def random_configuration(self, rng):
        return np.concatenate([self.joint.random(rng), 0.05 * rng.standard_normal(self.r)])

    # ------------------------------------------------------------------ inertial parameters
    def inertial_parameters(self) -> np.ndarray:
        """The particle masses ``μ_i``, then the upper triangles (row by row) of ``K`` and ``C``:
        ``M(k)`` and ``b(k)`` are linear in the masses, the modal forces ``K η + C η̇`` in ``K``
        and ``C``, the potential energy in the masses and ``K``."""
        iu = np.triu_indices(self.r)
        return np.concatenate([self.masses, self.stiffness[iu], self.damping[iu]])

    def inertial_parameter_names(self) -> tuple:
        iu = list(zip(*np.triu_indices(self.r)))
        return (*(f"mass_{i}" for i in range(len(self.masses))), *(f"K_{i}{j}" for i, j in iu),
                *(f"C_{i}{j}" for i, j in iu))

    def with_inertial_parameters(self, parameters, check: bool = True) -> "FlexibleBody":
        from sko.bodies.rigid import checked_parameters

        n, m = len(self.masses), self.r * (self.r + 1) // 2
        p = checked_parameters(self, parameters, n + 2 * m, check)

        def symmetric(x):
            A = np.zeros((self.r, self.r), dtype=x.dtype)
            A[np.triu_indices(self.r)] = x
            return A + np.triu(A, 1).T

        new = copy.copy(self)
        new.masses, new.stiffness, new.damping = p[:n], symmetric(p[n:n + m]), symmetric(p[n + m:])
        if check:
            if (new.masses <= 0).any():
                raise BodyError(f"particle masses of flexible body {self.name!r} must be positive, got {new.masses}")
            new.stiffness, new.damping = new._psd(new.stiffness, "stiffness K"), new._psd(new.damping, "damping C")
        return new

"""Tutorial, part two: a body type with an internal coordinate that carries children.

The first tutorial's bead (``tutorial_body_type.py``) offers no frame to hang anything from. This
one does, which is what the rest of the contract is about (BODIES.md, *The contract for a new
body type*; ``sko.bodies.contract``): the **attachment frames** a body offers its children, and
for each the record ``(Γ_o, γ_o, pose, v_o)`` from which a child computes its weight
``φ*(℘(k), k) = E_k Γ_o``.

The body is an **arm with a carriage**: a rigid arm (spatial inertia ``I`` about its frame,
body coordinates) on a revolute joint about ``a``, placed at ``r`` with axes ``R₀`` in its
parent's frame ``F_o``, and a carriage, a point mass ``m_c``, sliding along the arm on a straight
track ``p(s) = p_c + s e`` held by a spring ``κ``. Its coordinates are ``q = (θ, s)``, its hinge
velocities ``θ̇ = (θ̇, ṡ)`` and its node velocity ``𝒱 = [v_k; ṡ]`` (7): the arm's spatial
velocity ``v_k = [ω; v]`` in arm coordinates and the slide rate. With ``ᵒR_k = R₀ Rot(a, θ)``,
``ᵏX_o`` the Plücker transform of that pose, ``S = [a; 0]`` and ``P = [−p×, I₃]`` (so the
carriage's velocity is ``u = P v_k + e ṡ``):

    E = [ᵏX_o; 0]                  H = [[Sᵀ, 0], [0, 1]]          (7 × 6, 2 × 7)
    M = [[I + m_c PᵀP, m_c Pᵀe], [m_c eᵀP, m_c]]                  (T = ½ v_kᵀ I v_k + ½ m_c |u|²)
    a = [ᵏX_o γ_o + v_k × S θ̇; 0]
    b = [v_k ×* I v_k; 0] + m_c [Pᵀ; eᵀ] ω × (u + e ṡ)

(``du/dt`` in arm coordinates is ``P v̇_k + e s̈ + ω × e ṡ``, and the carriage's inertia force is
``m_c (du/dt + ω × u)``.) The spring acts across the slide, between arm and carriage: it is the
hinge force ``(0, κ s)``, not part of ``b``.

It offers two attachment frames, its own first (``attachment_names = (None, "carriage")``):

* the arm frame: ``v_k = Γ 𝒱`` with ``Γ = [I₆, 0]`` (6 × 7), ``γ = 0``; this ``Γ`` never changes,
  so its kernel declares ``own_frame_identity=True`` and a child hanging there writes its ``E``
  straight into its weight;
* the carriage frame, at ``p(s)`` with the arm's axes: its spatial velocity in its own
  coordinates is ``[ω; u]``, so ``Γ = [[I₃, 0, 0], [−p×, I₃, e]]`` (6 × 7, depending on ``s``)
  and ``γ = Γ̇ 𝒱 = [0; ω × e ṡ]``.

In a compiled kernel each offered frame is one *record* (``out.records``, own frame first;
:func:`sko.engine.state_kernels.record` gives its fields: ``gamma``, ``rotation``, ``position``,
``velocity`` and ``Gamma``, 6 × m, stored row-major). The kernel :func:`carriage_arm_state`
writes the same numbers as :meth:`CarriageArm.at_state`.

Run ``python papers/tutorial_body_with_children.py``: it builds a pendulum arm whose carriage
carries a bob, with a second arm hanging from the first arm's frame, and compares the system
with the same mechanism built from the library's rigid bodies (a revolute arm, a prismatic
carriage), the compiled state with the Python one, checks energy conservation and runs the
physics checks of ``sko verify`` (``sko verify --model tutorial_body_with_children:build`` from
this folder does the same and more).
"""

from __future__ import annotations

import numpy as np

from sko.bodies import Attachment, BodyType, CompiledState, NodeState, Prismatic, Revolute, RigidBody
from sko.engine import Terms, hinge_force_kernel, record, state_kernel, views
from sko.spatial import axis_angle_matrix, plucker_from_pose, skew, spatial_inertia
from sko.systems import MultibodySystem


# ---------------------------------------------------------------------------- the body type
class CarriageArm(BodyType):
    """A rigid arm on a revolute joint carrying a sliding point mass (module docstring).

    Parameters: the joint ``axis`` and placement (``origin`` ``r`` and axes ``rotation`` ``R₀`` in
    the parent's frame), the arm's spatial ``inertia`` about its frame, the carriage's ``mass``,
    ``start`` ``p_c`` and unit ``direction`` ``e`` of its track (arm coordinates) and the track
    spring's ``stiffness`` ``κ``."""

    q_size = dof_size = 2
    node_dim = 7

    def __init__(self, name, parent, axis, inertia, carriage_mass, start, direction, stiffness=0.0,
                 origin=(0.0, 0.0, 0.0), rotation=np.eye(3), attach=None):
        super().__init__(name, parent, attach)
        self.axis = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
        self.origin, self.rotation = np.asarray(origin, dtype=float), np.asarray(rotation, dtype=float)
        self.inertia = np.asarray(inertia, dtype=float)
        self.carriage_mass, self.stiffness = float(carriage_mass), float(stiffness)
        self.start = np.asarray(start, dtype=float)
        self.direction = np.asarray(direction, dtype=float) / np.linalg.norm(direction)

    @property
    def attachment_names(self):
        return (None, "carriage")  # its own frame first

    def _kinematics(self, q, qd, inboard):
        """``(ᵒR_k, ᵏX_o, v_k, p, u)`` at a state."""
        R = self.rotation @ axis_angle_matrix(self.axis, q[0])
        X = plucker_from_pose(R, self.origin)
        v = X @ inboard.velocity + np.concatenate([self.axis * qd[0], np.zeros(3)])
        p = self.start + q[1] * self.direction
        u = np.cross(v[:3], p) + v[3:] + self.direction * qd[1]
        return R, X, v, p, u

    def at_state(self, q, qd, inboard, gravity):
        R, X, v, p, u = self._kinematics(q, qd, inboard)
        mc, e, I = self.carriage_mass, self.direction, self.inertia
        omega = v[:3]
        P = np.hstack([-skew(p), np.eye(3)])
        E = np.vstack([X, np.zeros((1, 6))])
        H = np.zeros((2, 7))
        H[0, :3], H[1, 6] = self.axis, 1.0
        M = np.block([[I + mc * P.T @ P, mc * (P.T @ e)[:, None]], [mc * (e @ P)[None, :], np.array([[mc]])]])
        Sqd = np.concatenate([self.axis * qd[0], np.zeros(3)])
        rigid_a = X @ inboard.gamma + np.concatenate([np.cross(omega, Sqd[:3]), np.cross(v[3:], Sqd[:3])])
        h = I @ v
        rigid_b = np.concatenate([np.cross(omega, h[:3]) + np.cross(v[3:], h[3:]), np.cross(omega, h[3:])])
        f = mc * np.cross(omega, u + e * qd[1])
        b = np.concatenate([rigid_b, [0.0]]) + np.concatenate([P.T @ f, [e @ f]])
        world_R, world_p = inboard.rotation @ R, inboard.position + inboard.rotation @ self.origin
        carriage_Gamma = np.zeros((6, 7), dtype=P.dtype)  # complex for complex-step states
        carriage_Gamma[:3, :3], carriage_Gamma[3:, :6], carriage_Gamma[3:, 6] = np.eye(3), P, e
        attachments = {
            None: Attachment(Gamma=np.eye(6, 7), gamma=np.zeros(6), rotation=world_R, position=world_p, velocity=v),
            "carriage": Attachment(Gamma=carriage_Gamma, gamma=np.concatenate([np.zeros(3), np.cross(omega, e * qd[1])]),
                                   rotation=world_R, position=world_p + world_R @ p,
                                   velocity=np.concatenate([omega, u])),
        }
        arm_mass, first_moment = I[5, 5], np.array([I[2, 4], I[0, 5], I[1, 3]])  # I[:3, 3:] = (m c)×
        potential = (0.5 * self.stiffness * q[1] ** 2
                     - gravity @ ((arm_mass + mc) * world_p + world_R @ (first_moment + mc * p)))
        return NodeState(E=E, H=H, M=M, a=np.concatenate([rigid_a, [0.0]]), b=b, V=np.concatenate([v, qd[1:]]),
                         attachments=attachments, potential=potential)

    def hinge_force(self, q, qd):
        return np.array([0.0, self.stiffness * q[1]])

    def kinetic_energy(self, q, qd, inboard):
        """``½ v_kᵀ I v_k + ½ m_c |u|²`` from the velocities alone, not from ``M``: the
        ``mass_from_energy`` check of ``sko verify`` then checks ``M`` itself."""
        _, _, v, _, u = self._kinematics(q, qd, inboard)
        return 0.5 * v @ self.inertia @ v + 0.5 * self.carriage_mass * (u @ u)

    def compiled_state(self):
        """The same state by :func:`carriage_arm_state`, with the constants packed as it reads them."""
        if type(self).at_state is not CarriageArm.at_state:  # a subclass with a state of its own
            return None
        constants = np.concatenate([self.axis, self.origin, self.rotation.ravel(), self.inertia.ravel(), self.start,
                                    self.direction, [self.carriage_mass, self.stiffness]])
        return CompiledState(carriage_arm_state, constants, scratch=48, hinge_force=carriage_spring)


# ---------------------------------------------------------------------------- its compiled state
@state_kernel(own_frame_identity=True, rates=True)
def carriage_arm_state(arena, row, reals, terms, constants):
    """:meth:`CarriageArm.at_state` as a state kernel (``sko.engine.state_kernels``). Constants: ``a``
    (0:3), ``r`` (3:6), ``R₀`` (6:15, row-major), ``I`` (15:51, row-major), ``p_c`` (51:54), ``e``
    (54:57), ``m_c`` (57), ``κ`` (58); gravity is ``reals[0:3]``. Scratch (48): ``ᵒR_k``, ``P``,
    the carriage force, ``I v_k``, ``Rot(a, θ)``, ``u``. Writes every output whatever ``terms``
    asks but ``Terms.RATES`` (declared: ``rates=True``), a call at the last call's ``q`` with other
    velocities, where what depends on ``q`` alone (``E``, ``H``, ``M``, the records' poses and
    ``Γ``, the potential) holds the last call's values and is left as it is (the local derivatives'
    columns along the velocities: ``V``, ``a`` and ``b`` read ``E`` from there). Every state is in
    its domain."""
    c, q, v, inboard, out, scratch = views(arena, row, reals)
    theta, s, thd, sd = q[0], q[1], v[0], v[1]
    zero = 0.0 * theta
    R, P, f, h, K, u = scratch[0:9], scratch[9:27], scratch[27:30], scratch[30:36], scratch[36:45], scratch[45:48]
    structure = terms != Terms.RATES  # whether to write what depends on q alone
    a0, a1, a2 = c[0], c[1], c[2]
    if structure:
        # ᵒR_k = R₀ Rot(a, θ) (Rodrigues), row-major
        ct, st = np.cos(theta), np.sin(theta)
        K[0], K[1], K[2] = ct + (1 - ct) * a0 * a0, (1 - ct) * a0 * a1 - st * a2, (1 - ct) * a0 * a2 + st * a1
        K[3], K[4], K[5] = (1 - ct) * a1 * a0 + st * a2, ct + (1 - ct) * a1 * a1, (1 - ct) * a1 * a2 - st * a0
        K[6], K[7], K[8] = (1 - ct) * a2 * a0 - st * a1, (1 - ct) * a2 * a1 + st * a0, ct + (1 - ct) * a2 * a2
        for i in range(3):
            for j in range(3):
                R[3 * i + j] = c[6 + 3 * i] * K[j] + c[7 + 3 * i] * K[3 + j] + c[8 + 3 * i] * K[6 + j]
        # E = [ᵏX_o; 0]: ᵏX_o = [[Rᵀ, 0], [−Rᵀ r×, Rᵀ]]; row i of −Rᵀ r× is r × (column i of R)
        r0, r1, r2 = c[3], c[4], c[5]
        for i in range(3):
            x0, x1, x2 = R[i], R[3 + i], R[6 + i]
            for j in range(3):
                out.E[i, j], out.E[i, 3 + j], out.E[3 + i, 3 + j] = R[3 * j + i], zero, R[3 * j + i]
            out.E[3 + i, 0], out.E[3 + i, 1], out.E[3 + i, 2] = r1 * x2 - r2 * x1, r2 * x0 - r0 * x2, r0 * x1 - r1 * x0
        for j in range(6):
            out.E[6, j] = zero
        # H = [[aᵀ, 0], [0, 1]]
        for j in range(7):
            out.H[0, j] = c[j] if j < 3 else zero
            out.H[1, j] = 1.0 if j == 6 else zero
    # V = [ᵏX_o v_o + S θ̇; ṡ], a = [ᵏX_o γ_o + v_k × S θ̇; 0]
    vo, g = inboard.velocity, inboard.gamma
    for i in range(6):
        x, y = zero, zero
        for j in range(6):
            x += out.E[i, j] * vo[j]
            y += out.E[i, j] * g[j]
        out.V[i], out.a[i] = x, y
    out.V[0] += a0 * thd
    out.V[1] += a1 * thd
    out.V[2] += a2 * thd
    out.V[6], out.a[6] = sd, zero
    w0, w1, w2, l0, l1, l2 = out.V[0], out.V[1], out.V[2], out.V[3], out.V[4], out.V[5]
    m0, m1, m2 = a0 * thd, a1 * thd, a2 * thd
    out.a[0] += w1 * m2 - w2 * m1
    out.a[1] += w2 * m0 - w0 * m2
    out.a[2] += w0 * m1 - w1 * m0
    out.a[3] += l1 * m2 - l2 * m1
    out.a[4] += l2 * m0 - l0 * m2
    out.a[5] += l0 * m1 - l1 * m0
    # P = [−p×, I₃] at p = p_c + s e; u = P v_k + e ṡ
    p0, p1, p2 = c[51] + s * c[54], c[52] + s * c[55], c[53] + s * c[56]
    for i in range(18):
        P[i] = zero
    P[1], P[2], P[6], P[8], P[12], P[13] = p2, -p1, -p2, p0, p1, -p0
    P[3], P[10], P[17] = 1.0, 1.0, 1.0
    for l in range(3):
        x = c[54 + l] * sd
        for i in range(6):
            x += P[6 * l + i] * out.V[i]
        u[l] = x
    # M = [[I + m_c PᵀP, m_c Pᵀe], [m_c eᵀP, m_c]]
    mc = c[57]
    for i in range(6 if structure else 0):
        for j in range(6):
            x = c[15 + 6 * i + j] + zero
            for l in range(3):
                x += mc * P[6 * l + i] * P[6 * l + j]
            out.M[i, j] = x
        x = zero
        for l in range(3):
            x += mc * P[6 * l + i] * c[54 + l]
        out.M[i, 6], out.M[6, i] = x, x
    out.M[6, 6] = mc
    # b = [v_k ×* I v_k; 0] + [Pᵀ; eᵀ] f, f = m_c ω × (u + e ṡ)
    for i in range(6):
        x = zero
        for j in range(6):
            x += c[15 + 6 * i + j] * out.V[j]
        h[i] = x
    out.b[0] = w1 * h[2] - w2 * h[1] + l1 * h[5] - l2 * h[4]
    out.b[1] = w2 * h[0] - w0 * h[2] + l2 * h[3] - l0 * h[5]
    out.b[2] = w0 * h[1] - w1 * h[0] + l0 * h[4] - l1 * h[3]
    out.b[3] = w1 * h[5] - w2 * h[4]
    out.b[4] = w2 * h[3] - w0 * h[5]
    out.b[5] = w0 * h[4] - w1 * h[3]
    d0, d1, d2 = u[0] + c[54] * sd, u[1] + c[55] * sd, u[2] + c[56] * sd
    f[0], f[1], f[2] = mc * (w1 * d2 - w2 * d1), mc * (w2 * d0 - w0 * d2), mc * (w0 * d1 - w1 * d0)
    out.b[6] = c[54] * f[0] + c[55] * f[1] + c[56] * f[2]
    for i in range(6):
        out.b[i] += P[i] * f[0] + P[6 + i] * f[1] + P[12 + i] * f[2]
    # records, own frame first: γ, velocity, then world pose (R_o ᵒR_k, p_o + R_o r) and Γ
    own, carriage = record(out.records, 0), record(out.records, 1)
    for i in range(6):
        own.gamma[i], own.velocity[i] = zero, out.V[i]
    for i in range(3):
        carriage.velocity[i], carriage.velocity[3 + i], carriage.gamma[i] = out.V[i], u[i], zero
    carriage.gamma[3], carriage.gamma[4], carriage.gamma[5] = (w1 * c[56] - w2 * c[55]) * sd, (w2 * c[54] - w0 * c[56]) * sd, \
        (w0 * c[55] - w1 * c[54]) * sd
    if not structure:
        return True
    Ro, po = inboard.rotation, inboard.position
    for i in range(3):
        x = po[i]
        for j in range(3):
            own.rotation[i, j] = Ro[i, 0] * R[j] + Ro[i, 1] * R[3 + j] + Ro[i, 2] * R[6 + j]
            carriage.rotation[i, j] = own.rotation[i, j]
            x += Ro[i, j] * c[3 + j]
        own.position[i] = x
    for i in range(3):
        carriage.position[i] = own.position[i] + own.rotation[i, 0] * p0 + own.rotation[i, 1] * p1 + own.rotation[i, 2] * p2
    for i in range(6):
        for j in range(7):
            own.Gamma[i, j] = 1.0 if i == j else zero
            carriage.Gamma[i, j] = (1.0 if i == j else zero) if i < 3 else (P[6 * (i - 3) + j] if j < 6 else c[51 + i])
    # potential: ½ κ s² − g · ((m_arm + m_c) p_k + R_k (m c_arm + m_c p)), world p_k, R_k
    arm_mass, n0, n1, n2 = c[15 + 35], c[15 + 16] + mc * p0, c[15 + 5] + mc * p1, c[15 + 9] + mc * p2
    height = zero
    for i in range(3):
        height += reals[i] * ((arm_mass + mc) * own.position[i] + own.rotation[i, 0] * n0 + own.rotation[i, 1] * n1
                              + own.rotation[i, 2] * n2)
    out.potential[0] = 0.5 * c[58] * s * s - height
    return True


@hinge_force_kernel
def carriage_spring(q, v, constants, out):
    """:meth:`CarriageArm.hinge_force` as a compiled hook: ``(0, κ s)``, ``κ`` the constants' entry 58."""
    out[0] = 0.0
    out[1] = constants[58] * q[1]
    return True


# ---------------------------------------------------------------------------- a system built from it
ARM = spatial_inertia(1.5, [0.0, 0.0, -0.6], np.diag([0.08, 0.08, 0.01]))
FOREARM = spatial_inertia(0.8, [0.0, 0.0, -0.3], np.diag([0.02, 0.02, 0.004]))
BOB = spatial_inertia(0.4, [0.0, 0.1, -0.2], np.diag([2e-3, 3e-3, 1e-3]))


def build(stiffness: float = 30.0) -> MultibodySystem:
    """A pendulum arm (about y) whose carriage slides along it and carries a bob (revolute about
    x), and a forearm, an arm with a carriage of its own, hanging from the first arm's frame at
    its tip (revolute about a skew axis): 5 coordinates, weights 7 × 6 (bob) and 7 × 7 (forearm)."""
    arm = CarriageArm("arm", None, [0, 1, 0], ARM, 0.5, [0.05, 0.0, -0.3], [0.0, 0.0, -1.0], stiffness)
    bob = RigidBody("bob", "arm", Revolute([1, 0, 0]), BOB, attach="carriage")
    forearm = CarriageArm("forearm", "arm", [0.3, 1.0, 0.2], FOREARM, 0.3, [0.0, 0.05, -0.2], [0.1, 0.0, -1.0],
                          stiffness, origin=[0.0, 0.0, -1.2], rotation=axis_angle_matrix([0, 0, 1], 0.4))
    return MultibodySystem([arm, bob, forearm])


def rigid_equivalent(system: MultibodySystem) -> MultibodySystem:
    """The same mechanism from the library's rigid bodies: each arm on its revolute joint, its
    carriage a point mass on a prismatic joint along the track (springs left out: they are
    hinge forces, ``(0, κ s)`` per arm)."""
    bodies = []
    for k in system.bodies:
        body = system.body(k)
        parent = body.parent if body.attach is None else f"{body.parent}.{body.attach}"
        if not isinstance(body, CarriageArm):
            bodies.append(RigidBody(k, parent, body.joint, body.inertia, placement=body.placement))
            continue
        bodies.append(RigidBody(k, parent, Revolute(body.axis), body.inertia,
                                placement=plucker_from_pose(body.rotation, body.origin)))
        bodies.append(RigidBody(f"{k}.carriage", k, Prismatic(body.direction),
                                spatial_inertia(body.carriage_mass, np.zeros(3), np.zeros((3, 3))),
                                placement=plucker_from_pose(np.eye(3), body.start)))
    return MultibodySystem(bodies, gravity=system.gravity)


def rigid_comparison(seed: int = 0) -> float:
    """Largest relative difference of ℳ, 𝒞 and forward dynamics from :func:`rigid_equivalent`,
    which shares no code with :class:`CarriageArm` (coordinates in the same order: each arm's
    ``θ`` then its carriage's ``s``), at a random state."""
    system = build()
    rigid = rigid_equivalent(system)
    rng = np.random.default_rng(seed)
    q, v, tau = system.random_configuration(rng), rng.uniform(-1, 1, system.nv), rng.standard_normal(system.nv)
    springs = np.zeros(system.nv)
    for k in system.bodies:
        if isinstance(body := system.body(k), CarriageArm):
            springs[system.dof_slices[k]] = body.hinge_force(q[system.q_slices[k]], v[system.dof_slices[k]])

    def rel(x, y):
        return float(np.abs(x - y).max() / np.abs(y).max())

    return max(rel(system.mass_matrix(q), rigid.mass_matrix(q)),
               rel(system.bias_forces(q, v), rigid.bias_forces(q, v) + springs),
               rel(system.forward_dynamics(q, v, tau), rigid.forward_dynamics(q, v, tau - springs)))


def energy_drift(system: MultibodySystem, dt: float, horizon: float) -> float:
    """Relative energy drift of an unforced RK4 run."""
    from sko.simulation.simulate import simulate

    rng = np.random.default_rng(1)
    q, v = system.random_configuration(rng), rng.uniform(-1.0, 1.0, system.nv)
    trajectory = simulate(system, q, v, dt, int(round(horizon / dt)))
    return float(np.abs(trajectory.energy - trajectory.energy[0]).max() / np.abs(trajectory.energy).max())


def compiled_against_python(system: MultibodySystem, seed: int = 3) -> float:
    """Largest relative difference between the compiled state (:func:`carriage_arm_state`) and
    :meth:`CarriageArm.at_state` (the reference backend), over ℳ, inverse dynamics and energy
    at random float and complex states."""
    from sko.engine import use_backend

    rng = np.random.default_rng(seed)
    worst = 0.0
    for dtype in (float, complex):
        q, v, dv = system.random_configuration(rng), rng.uniform(-1, 1, system.nv), rng.standard_normal(system.nv)
        if dtype is complex:
            q, v = q + 1e-3j * rng.standard_normal(system.nq), v + 1e-3j * rng.standard_normal(system.nv)
        compiled = (system.mass_matrix(q), system.inverse_dynamics(q, v, dv), system.energy(q, v))
        with use_backend("reference"):
            reference = (system.mass_matrix(q), system.inverse_dynamics(q, v, dv), system.energy(q, v))
        for x, y in zip(compiled, reference):
            worst = max(worst, float(np.abs(np.asarray(x) - y).max() / max(np.abs(y).max(), 1e-300)))
    return worst


def physics_checks(system: MultibodySystem) -> dict:
    """The physics checks of ``sko verify`` (``sko.verify.physics``): name → (passed, residual)."""
    from sko.verify import run

    names = ["christoffel", "conservative_forces", "power_balance", "mass_from_energy"]
    return {r.name: (r.passed, r.residual) for r in run(models=[system], checks=names)}


if __name__ == "__main__":
    system = build()
    model, _, _ = system.sko_model(system.random_configuration(np.random.default_rng(0)))
    print(system)
    print(f"  {'weights (shapes)':52s} {sorted({w.shape for w in model.phi.values()})}")
    print(f"  {'compiled state against at_state (float, complex)':52s} {compiled_against_python(system):.1e}")
    print(f"  {'against the rigid-body equivalent (ℳ, 𝒞, dv)':52s} {rigid_comparison():.1e}")
    print(f"  {'energy drift, RK4 dt = 4 ms and 2 ms over 0.2 s':52s} "
          f"{energy_drift(system, 4e-3, 0.2):.1e}, {energy_drift(system, 2e-3, 0.2):.1e}")
    for name, (passed, residual) in physics_checks(system).items():
        print(f"  {name:52s} {'pass' if passed else 'FAIL'} {residual:.1e}")

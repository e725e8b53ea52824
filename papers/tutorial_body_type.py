"""Tutorial: a new body type in a few dozen lines, and the SKO identities on a model built from it.

A body type answers, at a state, questions about its own node only (``sko.bodies.contract``):
how its node velocity ``𝒱(k)`` depends on the velocity ``v_o`` of the frame it hangs from
(``𝒱(k) = E v_o + H* θ̇``), its inertia ``M(k)``, and ``a(k)``, ``b(k)``. Nothing else: the
system layer turns the answers into an SKO model, and every recursion of ``algorithms`` runs
on it unchanged.

The toy here is a **bead on a spring**: a particle of mass ``m`` sliding along a straight wire
fixed in its parent's attachment frame ``F_o`` (position ``p(s) = p₀ + s e``), held by a
spring of stiffness ``κ``. Its node velocity is the bead's velocity ``u`` in ``F_o`` coordinates,
a 3-vector, so its weight to a rigid parent is 6 × 3, not square:

    u = [−p×, I] v_o + e ṡ                  E = [−p×, I],  H* = e,  M = m I₃
    du/dt = E (Γ_o α + γ_o) + e s̈ + ω_o × e ṡ         a = E γ_o + ω_o × e ṡ
    m (du/dt + ω_o × u) = force of the wire on the bead              b = m ω_o × u

The spring acts *across the hinge* (between wire and bead): it is the hinge force ``κ s``
(:meth:`~sko.bodies.contract.BodyType.hinge_force`), not part of ``b``, which ``φ`` would carry
to the parent as if an external force pushed the bead.

The same state, written once more as a numba kernel (:func:`bead_state`, registered with
:func:`sko.engine.state_kernels.state_kernel`), and its spring as a compiled hinge force
(:func:`bead_spring`, registered with :func:`sko.engine.hooks.hinge_force_kernel`), let the bead
run compiled like the library's bodies:
one call per request, batches in parallel, complex-step states; the kernel compiles on its
first use in seconds, apart from the rest of the engine. Without it the bead still runs, its
``at_state`` called in Python at every state.

Run ``python papers/tutorial_body_type.py``: it builds a rigid pendulum carrying a flexible beam
with beads on it, checks SKO.md identities on the model, the dynamics against the independent
particle Lagrangian, and energy conservation; then the registry's physics checks, which pass on
the bead and catch a bead whose ``a`` drops its Coriolis term (the identities cannot: they
check the recursions against whatever operators the body type returns).
"""

from __future__ import annotations

import numpy as np

import sko.algorithms as alg
from sko.bodies import BodyType, CompiledState, NodeState, RigidBody, flexible_beam
from sko.engine import hinge_force_kernel, state_kernel, views
from sko.systems import MultibodySystem
from sko.bodies import Revolute
from sko.spatial import pose_transform, skew, spatial_inertia


# ---------------------------------------------------------------------------- the body type
class Bead(BodyType):
    """A bead of mass ``mass`` on a straight wire ``p₀ + s e`` in its parent's frame ``F_o``,
    held at ``s = 0`` by a spring of stiffness ``spring``. Node: the bead's velocity (m_k = 3)."""

    q_size = dof_size = 1
    node_dim = 3

    def __init__(self, name, parent, mass, start, direction, spring=0.0, attach=None):
        super().__init__(name, parent, attach)
        self.mass, self.spring = float(mass), float(spring)
        self.start = np.asarray(start, dtype=float)
        self.direction = np.asarray(direction, dtype=float) / np.linalg.norm(direction)

    @property
    def attachment_names(self):
        return ()  # nothing hangs from a bead

    def at_state(self, q, qd, inboard, gravity):
        e, s = self.direction, q[0]
        p = self.start + s * e
        E = np.hstack([-skew(p), np.eye(3)])
        u = E @ inboard.velocity + e * qd[0]
        omega = inboard.velocity[:3]
        a = E @ inboard.gamma + np.cross(omega, e * qd[0])
        b = self.mass * np.cross(omega, u)
        world = inboard.position + inboard.rotation @ p
        potential = 0.5 * self.spring * s**2 - self.mass * (gravity @ world)
        return NodeState(E=E, H=e[None, :], M=self.mass * np.eye(3), a=a, b=b, V=u, potential=potential)

    def hinge_force(self, q, qd):
        return self.spring * q

    def compiled_state(self):
        """The same state by :func:`bead_state` and the same spring by :func:`bead_spring`, with
        the bead's constants packed as they read them."""
        if type(self).at_state is not Bead.at_state:  # a subclass with a state of its own
            return None
        constants = np.concatenate([[self.mass, self.spring], self.start, self.direction])
        return CompiledState(bead_state, constants, hinge_force=bead_spring if type(self).hinge_force is Bead.hinge_force
                             else None)


@state_kernel(constants=8)
def bead_state(arena, row, reals, terms, constants):
    """:meth:`Bead.at_state` as a state kernel (``sko.engine.state_kernels``): the constants are
    ``[mass, spring, p₀, e]`` (8, declared, so a body packing another number is refused when its
    system is built); gravity is ``reals[0:3]``. It writes every output, whatever ``terms``
    asks, and returns True: every ``s`` is in its domain."""
    c, q, v, inboard, out, _ = views(arena, row, reals)
    mass, spring = c[0], c[1]
    s, sd = q[0], v[0]
    p = (c[2] + s * c[5], c[3] + s * c[6], c[4] + s * c[7])  # p = p₀ + s e
    w, vo, g = inboard.velocity, inboard.velocity, inboard.gamma
    for i in range(3):  # E = [−p×, I], H = eᵀ, M = m I
        out.H[0, i] = c[5 + i]
        for j in range(3):
            out.M[i, j] = mass if i == j else 0.0
            out.E[i, 3 + j] = 1.0 if i == j else 0.0
    out.E[0, 0], out.E[0, 1], out.E[0, 2] = 0.0, p[2], -p[1]
    out.E[1, 0], out.E[1, 1], out.E[1, 2] = -p[2], 0.0, p[0]
    out.E[2, 0], out.E[2, 1], out.E[2, 2] = p[1], -p[0], 0.0
    for i in range(3):  # u = E v_o + e ṡ, a = E γ_o + ω_o × e ṡ
        u, a = c[5 + i] * sd, 0.0 * sd
        for j in range(6):
            u += out.E[i, j] * vo[j]
            a += out.E[i, j] * g[j]
        out.V[i], out.a[i] = u, a
    ed = (c[5] * sd, c[6] * sd, c[7] * sd)
    out.a[0] += w[1] * ed[2] - w[2] * ed[1]
    out.a[1] += w[2] * ed[0] - w[0] * ed[2]
    out.a[2] += w[0] * ed[1] - w[1] * ed[0]
    u = out.V  # b = m ω_o × u
    out.b[0], out.b[1], out.b[2] = (mass * (w[1] * u[2] - w[2] * u[1]), mass * (w[2] * u[0] - w[0] * u[2]),
                                    mass * (w[0] * u[1] - w[1] * u[0]))
    height = 0.0 * s  # g · (p_o + R_o p)
    for i in range(3):
        x = inboard.position[i]
        for j in range(3):
            x += inboard.rotation[i, j] * p[j]
        height += reals[i] * x
    out.potential[0] = 0.5 * spring * s * s - mass * height
    return True


@hinge_force_kernel
def bead_spring(q, v, constants, out):
    """:meth:`Bead.hinge_force` compiled (``sko.engine.hooks``): ``κ s``, so forward dynamics,
    batches and rollouts of a bead with a spring run without Python per state."""
    out[0] = constants[1] * q[0]
    return True


# ---------------------------------------------------------------------------- a model built from it
def build(spring: float = 40.0) -> MultibodySystem:
    """A rigid pendulum (about y) carrying a flexible beam (2 modes) at its end; one bead slides
    on the pendulum, another on the beam's tip node."""
    pendulum = RigidBody("pendulum", None, Revolute([0, 1, 0]), spatial_inertia(2.0, [0.0, 0.0, -0.5], 0.05 * np.eye(3)))
    beam = flexible_beam("beam", "pendulum", Revolute([0, 0, 1]), 1.0, 1.0, 50.0, 2,
                         placement=pose_transform([0.0, 0.0, -1.0]))
    beads = [Bead("bead-on-pendulum", "pendulum", 0.3, [0.1, 0.0, -0.4], [0.0, 0.0, 1.0], spring),
             Bead("bead-on-beam", "beam", 0.2, [0.0, 0.0, 0.0], [0.0, 1.0, 1.0], spring, attach="tip")]
    return MultibodySystem([pendulum, beam, *beads])


def identity_residuals(system: MultibodySystem, seed: int = 0) -> dict:
    """SKO.md identities on the model at a random state: each entry is a relative residual."""
    rng = np.random.default_rng(seed)
    q, qd = system.random_configuration(rng), rng.uniform(-1.0, 1.0, system.nv)
    model, a, b = system.sko_model(q, qd)
    ops = model.dense()
    Mass = ops.mass_matrix
    tau, qdd = rng.standard_normal(model.dof_size), rng.standard_normal(model.dof_size)

    def rel(x, y):
        return float(np.abs(x - y).max() / max(np.abs(y).max(), 1e-300))

    ab = alg.articulated_inertias(model)
    states = system.node_states(q, qd)
    return {
        "weights are non-square (shapes)": sorted({w.shape for w in model.phi.values()}),
        "Eq. 2  mass matrix (Algorithm 4.2) = H φ M φ* H*": rel(alg.mass_matrix(model), Mass),
        "Eq. 1-3 inverse dynamics = ℳ θ̈ + H φ (M φ* a + b)": rel(alg.inverse_dynamics(model, qdd, qd, a, b),
                                                               Mass @ qdd + ops.bias(a, b)),
        "system forward dynamics inverts system inverse dynamics": rel(system.forward_dynamics(q, qd, system.inverse_dynamics(q, qd, qdd)), qdd),
        "Eq. 1  𝒱 = φ* H* θ̇ = the bodies' node velocities": rel(ops.phi.T @ ops.H.T @ qd, np.concatenate([states[k].V for k in model.bodies])),
        "Eq. 53 log det ℳ = Σ log det D(k)": abs(sum(np.linalg.slogdet(ab.D[k])[1] for k in model.bodies)
                                                 - np.linalg.slogdet(Mass)[1]),
        "Eq. 54 forward dynamics (Algorithm 6.1) = ℳ⁻¹(T − 𝒞)": rel(alg.forward_dynamics(model, tau, a, b),
                                                                np.linalg.solve(Mass, tau - ops.bias(a, b))),
        "Eq. 51 ℳ⁻¹ by the innovations operators": rel(alg.mass_matrix_inverse(model), np.linalg.inv(Mass)),
    }


def energy_drift(system: MultibodySystem, dt: float, horizon: float) -> float:
    """Relative energy drift of an undamped, unforced RK4 run."""
    from sko.simulation.simulate import simulate

    rng = np.random.default_rng(1)
    q, qd = system.random_configuration(rng), rng.uniform(-1.0, 1.0, system.nv)
    traj = simulate(system, q, qd, dt, int(round(horizon / dt)))
    return float(np.abs(traj.energy - traj.energy[0]).max() / np.abs(traj.energy).max())


def particle_check(seed: int = 2) -> float:
    """Without springs the beads are particles on prismatic joints: compare ℳ and 𝒞 with the
    independent Lagrangian of :mod:`sko.independent` (which shares no code with the above)."""
    from sko.independent import ParticleBody, ParticleTree, homogeneous, prismatic_joint, revolute_joint

    system = build(spring=0.0)
    beam = system.body("beam")
    m, c = 2.0, np.array([0.0, 0.0, -0.5])
    # the pendulum's six-particle equivalent: second moments ½ tr(I_c) − I_c = 0.025 I per axis
    d = np.sqrt(3 * 0.025 / m)
    parts = [c + s * d * np.eye(3)[j] for j in range(3) for s in (1, -1)]
    bodies = [
        ParticleBody("pendulum", None, revolute_joint([0, 1, 0]), np.full(6, m / 6), np.array(parts)),
        ParticleBody("beam", "pendulum", revolute_joint([0, 0, 1]), beam.masses, beam.positions,
                     placement=homogeneous(np.eye(3), [0, 0, -1.0]), modes=beam.modes, stiffness=beam.stiffness,
                     nodes={n: tuple(v) for n, v in beam.nodes.items()}),
    ]
    for k in ("bead-on-pendulum", "bead-on-beam"):
        bead = system.body(k)
        bodies.append(ParticleBody(k, bead.parent, prismatic_joint(bead.direction), np.array([bead.mass]), np.zeros((1, 3)),
                                   placement=homogeneous(np.eye(3), bead.start), attach=bead.attach))
    particles = ParticleTree(bodies, gravity=system.gravity)
    rng = np.random.default_rng(seed)
    q, qd = system.random_configuration(rng), rng.uniform(-1.0, 1.0, system.nv)
    M1, M2 = system.mass_matrix(q), particles.mass_matrix(q)
    C1, C2 = system.bias_forces(q, qd), particles.bias(q, qd)
    return max(np.abs(M1 - M2).max() / np.abs(M2).max(), np.abs(C1 - C2).max() / np.abs(C2).max())


# ---------------------------------------------------------------------------- physics, not only identities
class BeadWithoutCoriolis(Bead):
    """The bead with a typical slip: the Coriolis term ``ω_o × e ṡ`` dropped from ``a``. The
    identities above still hold (the recursions agree with whatever operators they are given),
    and the energy still looks conserved at small rates; only a physics check sees it."""

    def at_state(self, q, qd, inboard, gravity):
        state = super().at_state(q, qd, inboard, gravity)
        omega = inboard.velocity[:3]
        return NodeState(E=state.E, H=state.H, M=state.M, a=state.a - np.cross(omega, self.direction * qd[0]),
                         b=state.b, V=state.V, potential=state.potential)


def build_with_slip(spring: float = 40.0) -> MultibodySystem:
    """:func:`build` with the bead on the pendulum replaced by :class:`BeadWithoutCoriolis`."""
    system = build(spring)
    bodies = [system.body(k) for k in system.bodies]
    good = system.body("bead-on-pendulum")
    slip = BeadWithoutCoriolis(good.name, good.parent, good.mass, good.start, good.direction, good.spring)
    return MultibodySystem([slip if b.name == good.name else b for b in bodies])


def physics_checks(system: MultibodySystem) -> dict:
    """The registry's physics checks (``sko.verify.physics``) on the system: name → (passed,
    residual). Christoffel consistency compares 𝒞's velocity products with those derived from
    ℳ(q); power balance compares d(T + V)/dt with the power of the forces."""
    from sko.verify import run

    names = ["christoffel", "conservative_forces", "power_balance", "mass_from_energy"]
    return {r.name: (r.passed, r.residual) for r in run(models=[system], checks=names)}


if __name__ == "__main__":
    system = build()
    print(system)
    for name, value in identity_residuals(system).items():
        print(f"  {name:58s} {value if isinstance(value, list) else f'{value:.1e}'}")
    print(f"  {'agreement with the particle Lagrangian (no springs)':58s} {particle_check():.1e}")
    print(f"  {'energy drift, RK4 dt = 4 ms and 2 ms over 0.2 s':58s} "
          f"{energy_drift(system, 4e-3, 0.2):.1e}, {energy_drift(system, 2e-3, 0.2):.1e}")
    print("physics checks (sko.verify.physics), correct bead | bead with ω × e ṡ dropped from a:")
    slip = physics_checks(build_with_slip())
    for name, (passed, residual) in physics_checks(system).items():
        print(f"  {name:24s} {'pass' if passed else 'FAIL'} {residual:.1e} | "
              f"{'pass' if slip[name][0] else 'FAIL'} {slip[name][1]:.1e}")

"""The constraint force algorithm on a free-floating space robot (Liu, Hu and Zhang 2016, §4).

The robot
---------
A main body, a solid regular hexagonal prism (length 1.2 m along z, hexagon edge 0.8 m, the
paper's dimensions), floats freely (a ``Free`` base joint, zero gravity). Two identical 6R arms
(the paper's figures of the arms were lost; these dimensions are chosen as plausible) are
mounted at the centres of two opposite side faces (x = ±0.8·√3/2 m), arm 2 being arm 1 turned
by π about z:

====  =====================  ==========  ========  =================================
link  joint axis (own frame)  length [m]  mass [kg]  shape (inertia about the centre)
====  =====================  ==========  ========  =================================
main  free                    1.2         400       solid hexagonal prism, edge 0.8 m
L1    z  (shoulder yaw)       0.25        12        cylinder along its outward axis x, r 0.06
L2    y  (shoulder pitch)     1.0         18        cylinder, r 0.05
L3    y  (elbow pitch)        1.0         14        cylinder, r 0.05
L4    y  (wrist pitch)        0.2         5         cylinder, r 0.04
L5    z  (wrist yaw)          0.2         4         cylinder, r 0.04
L6    x  (wrist roll)         0.15        3         cylinder, r 0.1 (end effector)
====  =====================  ==========  ========  =================================

Each link's frame sits at its joint; its centre of mass is halfway along its outward axis and the
next joint at its end. The joints are driven by smooth sinusoidal torques with viscous joint
damping (part of ``T``), from rest at a bent configuration; the SKO model has 13 nodes, 18 hinge
dofs and 60 constraint coordinates.

What the script checks and reports
----------------------------------
1. A closed-form case: the physical constraint forces of a planar double pendulum (revolute
   joints about y, gravity −z) from :func:`sko.algorithms.constraint_forces` against the joint
   reactions derived by hand (Newton's law on each link, accelerations from the closed-form
   equations of motion): tight agreement.
2. The space robot simulated by RK4 (the paper: 10 s, step 0.002 s), driven by the serialized
   CFA. At every evaluation the other three methods run on the same SKO model: conventional
   dense (form ℳ by Algorithm 4.2 and 𝒞 by Newton–Euler, then a Cholesky solve), the recursive
   AB algorithm (Algorithm 6.1) and the general CFA. The largest relative difference of θ̈
   from AB along the whole trajectory must stay below 1e-12. A second simulation driven by AB
   alone gives the trajectory-level difference (the paper's Fig. 11, 12).
3. The CPU time of each method's dynamics module (``time.process_time`` around the call; the
   model is built once per evaluation, outside the timings), ranked, as in the paper's table 1.
   The ranking is measured, not assumed: in pure Python the loop overhead per body dominates and
   numpy's dense kernels are cheap for 18 dofs, so the ranking can differ from the paper's
   compiled implementation (dense slowest, AB fastest, serialized CFA faster than general CFA).

Run ``python -m papers.space_robot_cfa`` (about 20 s for the paper's 10 s; progress on stderr)
or ``--horizon 0.1`` for a short run. The figure goes to ``papers/output/space_robot_cfa.png``
(``--output DIR`` for another folder, ``--no-plot`` for none; figures need the ``[plot]`` extra).
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path

import numpy as np
import scipy.linalg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sko.algorithms as alg  # noqa: E402
from sko.bodies import Free, Revolute  # noqa: E402
from sko.systems import SystemBuilder  # noqa: E402
from sko.examples.rigid import rod_inertia  # noqa: E402
from sko.spatial import pose_transform  # noqa: E402
from papers.common import OUTPUT, Progress, pyplot, run_main  # noqa: E402

LENGTH, EDGE, MAIN_MASS = 1.2, 0.8, 400.0
#: (name, joint axis, length, mass) of each arm link, base to tip
ARM = (("L1", (0, 0, 1), 0.25, 12.0), ("L2", (0, 1, 0), 1.0, 18.0), ("L3", (0, 1, 0), 1.0, 14.0),
       ("L4", (0, 1, 0), 0.2, 5.0), ("L5", (0, 0, 1), 0.2, 4.0), ("L6", (1, 0, 0), 0.15, 3.0))
#: radius [m] of each link's rod (the last one is the end effector's gripper body)
RADIUS = (0.06, 0.05, 0.05, 0.04, 0.04, 0.1)
#: torque amplitude [N m], frequency [Hz] and viscous damping [N m s] of each arm joint
TORQUE = ((4.0, 0.10, 4.0), (6.0, 0.15, 6.0), (4.0, 0.20, 4.0), (0.5, 0.25, 0.5), (0.2, 0.30, 0.2), (0.05, 0.35, 0.05))
#: initial arm joint angles [rad] (a bent, non-singular configuration)
Q_ARM = (0.3, -0.6, 1.2, 0.5, -0.4, 0.2)


def hexagonal_prism_inertia(mass: float, edge: float, length: float) -> np.ndarray:
    """Rotational inertia about the centre of a solid regular hexagonal prism along z: the
    hexagon's area moments per unit area are ``5 a²/24`` about an in-plane axis and ``5 a²/12``
    about its normal."""
    transverse = mass * (5 * edge**2 / 24 + length**2 / 12)
    return np.diag([transverse, transverse, mass * 5 * edge**2 / 12])


def space_robot():
    """The free-floating robot of the module docstring as a :class:`~sko.systems.RigidSystem`."""
    b = SystemBuilder(gravity=[0.0, 0.0, 0.0])
    b.add_body("main", None, Free(), mass=MAIN_MASS, com=[0, 0, 0],
               inertia_com=hexagonal_prism_inertia(MAIN_MASS, EDGE, LENGTH))
    apothem = EDGE * np.sqrt(3) / 2
    for arm, yaw in ((1, 0.0), (2, np.pi)):
        parent, placement = "main", pose_transform(apothem * np.array([np.cos(yaw), np.sin(yaw), 0.0]), (0.0, 0.0, yaw))
        for (name, axis, length, mass), radius in zip(ARM, RADIUS):
            link = f"{name[0]}{arm}{name[1]}"  # L11 … L16, L21 … L26
            b.add_body(link, parent, Revolute(axis), placement, mass=mass, com=[length / 2, 0, 0],
                       inertia_com=rod_inertia(mass, length, axis=0, radius=radius))
            parent, placement = link, pose_transform([length, 0.0, 0.0])
    return b.build()


def joint_torques(system, t: float, qd=None) -> np.ndarray:
    """Smooth sinusoidal torques ``A cos(2π f t)`` on the arm joints (none on the free base), arm
    2 in antiphase, minus viscous joint damping ``d θ̇`` when the velocities ``qd`` are given. A
    cosine has a zero-mean integral and the damping bounds the joint rates, so the light wrist
    joints oscillate instead of spinning up."""
    index, scale, frequency, damping = _torque_joints(system)
    wave = {f: np.cos(2 * np.pi * f * t) for f in dict.fromkeys(frequency)}  # both arms share the frequencies
    tau = np.zeros(system.nv)
    tau[index] = scale * np.array([wave[f] for f in frequency]) - (0.0 if qd is None else damping * qd[index])
    return tau


@functools.lru_cache(maxsize=8)
def _torque_joints(system) -> tuple:
    """The θ̇ index, ``sign · amplitude``, frequency and damping of every arm joint (looked up once)."""
    joints = [(system.v_slice(f"{name[0]}{arm}{name[1]}").start, sign * amplitude, frequency, damping)
              for arm, sign in ((1, 1.0), (2, -1.0))
              for (name, *_), (amplitude, frequency, damping) in zip(ARM, TORQUE)]
    index, scale, frequency, damping = zip(*joints)
    return np.array(index), np.array(scale), frequency, np.array(damping)


def initial_state(system) -> tuple[np.ndarray, np.ndarray]:
    q = system.neutral_configuration()
    for arm in (1, 2):
        for (name, *_), angle in zip(ARM, Q_ARM):
            q[system.q_slice(f"{name[0]}{arm}{name[1]}")] = angle
    return q, np.zeros(system.nv)


# ----------------------------------------------------------------------------- the four methods
def dense(model, T, a, b):
    """Conventional: form ℳ (Algorithm 4.2) and 𝒞 (Newton–Euler at θ̈ = 0), Cholesky solve."""
    M = alg.mass_matrix(model)
    C = alg.inverse_dynamics(model, None, a=a, b=b)
    return scipy.linalg.cho_solve(scipy.linalg.cho_factor(M), T - C)


def recursive_ab(model, T, a, b):
    """The articulated body algorithm (Riccati gather + Algorithm 6.1)."""
    return alg.forward_dynamics(model, T, a, b)


def general_cfa(model, T, a, b):
    return alg.constraint_force_algorithm(model, T, a, b).qdd


def serialized_cfa(model, T, a, b):
    return alg.serialized_constraint_force_algorithm(model, T, a, b).qdd


METHODS = {"dense (form ℳ, 𝒞; solve)": dense, "recursive AB": recursive_ab, "general CFA": general_cfa,
           "serialized CFA": serialized_cfa}


# ----------------------------------------------------------------------------- simulation
def _rk4(system, q, qd, t, dt, acceleration):
    def rate(t, q, qd):
        return system.qdot(q, qd), acceleration(t, q, qd)

    k1q, k1v = rate(t, q, qd)
    k2q, k2v = rate(t + dt / 2, q + dt / 2 * k1q, qd + dt / 2 * k1v)
    k3q, k3v = rate(t + dt / 2, q + dt / 2 * k2q, qd + dt / 2 * k2v)
    k4q, k4v = rate(t + dt, q + dt * k3q, qd + dt * k3v)
    return system.normalize(q + dt / 6 * (k1q + 2 * k2q + 2 * k3q + k4q)), qd + dt / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)


def simulate(system, horizon: float, dt: float, compare: bool = True, progress: bool = False) -> dict:
    """RK4 driven by the serialized CFA. With ``compare`` every evaluation also runs the other
    methods on the same model (CPU time per method and the θ̈ differences from AB); with
    ``progress`` a line on stderr at every tenth of the run."""
    cpu = dict.fromkeys(METHODS, 0.0)
    worst = dict.fromkeys(METHODS, 0.0)
    calls = [0]

    def acceleration(t, q, qd):
        model, a, b = system.sko_model(q, qd)
        T = joint_torques(system, t, qd)
        results = {}
        for name, method in (METHODS.items() if compare else [("serialized CFA", serialized_cfa)]):
            start = time.process_time()
            results[name] = method(model, T, a, b)
            cpu[name] += time.process_time() - start
        if compare:
            ref = results["recursive AB"]
            size = np.abs(ref).max()
            for name, qdd in results.items():
                if qdd is not ref:  # AB against itself stays 0
                    worst[name] = max(worst[name], _relative(qdd, ref, size))
        calls[0] += 1
        return results["serialized CFA"]

    q, qd = initial_state(system)
    steps = int(round(horizon / dt))
    ts, qs, qds, forces = [0.0], [q], [qd], []
    report = Progress("CFA-driven simulation, every method timed", steps, progress)
    for i in range(steps):
        if compare:
            forces.append(_arm_forces(system, q, qd, i * dt))
        q, qd = _rk4(system, q, qd, i * dt, dt, acceleration)
        ts.append((i + 1) * dt)
        qs.append(q)
        qds.append(qd)
        report.step(i + 1)
    return {"t": np.array(ts), "q": np.array(qs), "qd": np.array(qds), "cpu": cpu, "worst": worst, "calls": calls[0],
            "forces": np.array(forces)}


def _relative(x: np.ndarray, ref: np.ndarray, size=None) -> float:
    """``‖x − ref‖∞ / ‖ref‖∞`` (0 when both vanish, as at the start from rest without torque);
    ``size`` is ``‖ref‖∞`` when known."""
    error, size = np.abs(x - ref).max(), np.abs(ref).max() if size is None else size
    return error / size if size else (0.0 if error == 0 else np.inf)


def simulate_ab(system, horizon: float, dt: float, progress: bool = False) -> dict:
    """The same simulation driven by the recursive AB algorithm alone."""
    def acceleration(t, q, qd):
        model, a, b = system.sko_model(q, qd)
        return recursive_ab(model, joint_torques(system, t, qd), a, b)

    q, qd = initial_state(system)
    qs, qds = [q], [qd]
    steps = int(round(horizon / dt))
    report = Progress("AB-driven simulation", steps, progress)
    for i in range(steps):
        q, qd = _rk4(system, q, qd, i * dt, dt, acceleration)
        qs.append(q)
        qds.append(qd)
        report.step(i + 1)
    return {"q": np.array(qs), "qd": np.array(qds)}


def _arm_forces(system, q, qd, t) -> np.ndarray:
    """The constrained part ``W W^+ f`` of the physical inter-node force on link L11 (from the
    main body), ``[n; f]`` in L11's frame at its joint (``n_z = 0``: z is the joint axis), then
    the same for the equivalent system (``W F_S``)."""
    model, a, b = system.sko_model(q, qd)
    split = alg.force_split(model)
    c = alg.constraint_forces(model, joint_torques(system, t, qd), a, b, split)
    W, cs = split.W["L11"], split.constraint_slices[model.tree.index("L11")]
    return np.concatenate([W @ c.F_S[cs], W @ c.F_S_equivalent[cs]])


# ----------------------------------------------------------------------------- closed form
def double_pendulum_check(states=((0.3, -0.8, 0.5, -1.2), (1.1, 0.4, -2.0, 0.7), (-0.5, 2.2, 0.0, 0.0))) -> float:
    """Largest relative error of the physical constraint forces of a planar double pendulum
    against the hand-derived joint reactions.

    Links along their x axis (lengths L, centres of mass c, masses m, inertias J about the centre
    of mass), revolute joints about y, gravity −z. With ``u(θ) = (cos θ, 0, −sin θ)`` the
    centres of mass are ``p1 = c1 u(θ1)`` and ``p2 = L1 u(θ1) + c2 u(θ1 + θ2)``;
    ``ü(θ) = u'(θ) θ̈ − u(θ) θ̇²`` with ``u' = (−sin θ, 0, −cos θ)``. The equations of motion
    ``ℳ θ̈ + h + G = T`` are the classical ones (``h₂ = m2 L1 c2 sin θ2``)::

        ℳ = [[J1 + J2 + m1 c1² + m2 (L1² + c2²) + 2 h₁ , J2 + m2 c2² + h₁], [·, J2 + m2 c2²]],  h₁ = m2 L1 c2 cos θ2
        h = [−h₂ (2 θ̇1 θ̇2 + θ̇2²), h₂ θ̇1²]
        G = −g [(m1 c1 + m2 L1) cos θ1 + m2 c2 cos(θ1 + θ2), m2 c2 cos(θ1 + θ2)]

    Newton's law on link 2, then on both links, gives the joint forces in world coordinates,
    ``F2 = m2 (p̈2 − g)`` and ``F1 = F2 + m1 (p̈1 − g)``; all moments about the joints are along y
    (planar motion, principal axes), so the constrained part of ``f(k)`` in link ``k``'s frame
    is ``[0, 0, 0, R_kᵀ F_k]`` with ``R_k`` the rotation about y by ``θ1 (+ θ2)``.
    """
    L1, c1, c2, m1, m2, g = 1.0, 0.45, 0.55, 2.0, 1.5, 9.81
    J1, J2 = 0.2, 0.12
    sb = SystemBuilder()
    sb.add_body("upper", None, Revolute([0, 1, 0]), mass=m1, com=[c1, 0, 0], inertia_com=np.diag([0.01, J1, J1]))
    sb.add_body("lower", "upper", Revolute([0, 1, 0]), pose_transform([L1, 0, 0]), mass=m2, com=[c2, 0, 0],
                inertia_com=np.diag([0.01, J2, J2]))
    system = sb.build()
    u = lambda th: np.array([np.cos(th), 0.0, -np.sin(th)])  # noqa: E731
    du = lambda th: np.array([-np.sin(th), 0.0, -np.cos(th)])  # noqa: E731
    Ry = lambda th: np.array([[np.cos(th), 0, np.sin(th)], [0, 1, 0], [-np.sin(th), 0, np.cos(th)]])  # noqa: E731
    gravity = np.array([0.0, 0.0, -g])
    worst = 0.0
    for q1, q2, w1, w2 in states:
        T = np.array([0.7, -0.3])
        h1, h2 = m2 * L1 * c2 * np.cos(q2), m2 * L1 * c2 * np.sin(q2)
        M = np.array([[J1 + J2 + m1 * c1**2 + m2 * (L1**2 + c2**2) + 2 * h1, J2 + m2 * c2**2 + h1],
                      [J2 + m2 * c2**2 + h1, J2 + m2 * c2**2]])
        h = np.array([-h2 * (2 * w1 * w2 + w2**2), h2 * w1**2])
        G = -g * np.array([(m1 * c1 + m2 * L1) * np.cos(q1) + m2 * c2 * np.cos(q1 + q2), m2 * c2 * np.cos(q1 + q2)])
        a1, a2 = np.linalg.solve(M, T - h - G)
        p1dd = c1 * (du(q1) * a1 - u(q1) * w1**2)
        p2dd = L1 * (du(q1) * a1 - u(q1) * w1**2) + c2 * (du(q1 + q2) * (a1 + a2) - u(q1 + q2) * (w1 + w2) ** 2)
        F2 = m2 * (p2dd - gravity)
        F1 = F2 + m1 * (p1dd - gravity)
        model, a, b = system.sko_model([q1, q2], [w1, w2])
        split = alg.force_split(model)
        c = alg.constraint_forces(model, T, a, b, split)
        worst = max(worst, np.abs(c.qdd - [a1, a2]).max() / np.abs([a1, a2]).max())
        for k, R, F in (("upper", Ry(q1), F1), ("lower", Ry(q1 + q2), F2)):
            W = split.W[k]
            expected = np.concatenate([np.zeros(3), R.T @ F])
            got = W @ c.F_S[split.constraint_slices[model.tree.index(k)]]  # W W^+ f: the constrained part
            worst = max(worst, np.abs(got - expected).max() / np.abs(expected).max())
    return worst


# ----------------------------------------------------------------------------- driver
def run(horizon: float = 10.0, dt: float = 0.002, plot: bool = False, output: Path = OUTPUT,
        progress: bool = False) -> dict:
    """Simulate, compare and time; returns the key numbers (see the module docstring)."""
    system = space_robot()
    model, _, _ = system.sko_model(*initial_state(system))
    split = alg.force_split(model)
    sim = simulate(system, horizon, dt, progress=progress)
    ab = simulate_ab(system, horizon, dt, progress=progress)
    numbers = {
        "closed_form_error": double_pendulum_check(),
        "bodies": len(model.bodies), "dofs": model.dof_size, "constraints": split.constraint_size,
        "segments": len(model.tree.segments()),
        "steps": len(sim["t"]) - 1, "evaluations": sim["calls"],
        "qdd_relative_error": {k: v for k, v in sim["worst"].items() if k != "recursive AB"},
        "trajectory_relative_error": max(_relative(sim["q"], ab["q"]), _relative(sim["qd"], ab["qd"])),
        "cpu": sim["cpu"],
        "ranking": sorted(sim["cpu"], key=sim["cpu"].get),
        "max_L11_constraint_force": np.abs(sim["forces"][:, :6]).max() if len(sim["forces"]) else 0.0,
        "max_L11_axial_moment": np.abs(sim["forces"][:, 2]).max() if len(sim["forces"]) else 0.0,
    }
    if plot:
        numbers["figure"] = _plot(system, sim, ab, output)
    return numbers


def _plot(system, sim, ab, output: Path) -> Path:
    plt = pyplot("the figure of papers.space_robot_cfa (or run with --no-plot)")
    t = sim["t"]
    fig, ax = plt.subplots(3, 1, figsize=(8.5, 8), sharex=True)
    for (name, *_) in ARM:
        j = system.q_slice(f"{name[0]}1{name[1]}").start
        ax[0].plot(t, sim["q"][:, j], label=f"{name[0]}1{name[1]}")
    ax[0].set_ylabel("arm 1 joint angle [rad]")
    ax[0].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)  # outside: hides no curve
    F = sim["forces"]
    for i, label in ((0, "n_x [N m]"), (1, "n_y [N m]"), (3, "f_x [N]"), (4, "f_y [N]"), (5, "f_z [N]")):
        ax[1].plot(t[:-1], F[:, i], label=label)
    ax[1].set_ylabel("L11 constraint force")
    ax[1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    err = np.abs(sim["q"] - ab["q"]).max(axis=1) / np.abs(sim["q"]).max()
    ax[2].semilogy(t, err + 1e-18)
    ax[2].set_ylabel("|q_CFA − q_AB| / max|q|")
    ax[2].set_xlabel("time [s]")
    fig.suptitle("Free-floating space robot: serialized CFA")
    fig.tight_layout()
    output.mkdir(parents=True, exist_ok=True)
    path = output / "space_robot_cfa.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=float, default=10.0, help="simulated time [s] (paper: 10)")
    parser.add_argument("--dt", type=float, default=0.002, help="RK4 step [s] (paper: 0.002)")
    parser.add_argument("--output", type=Path, default=OUTPUT, help=f"folder of the figure (default {OUTPUT})")
    parser.add_argument("--no-plot", action="store_true", help="write no figure")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    parser.add_argument("--plot", action="store_true", help=argparse.SUPPRESS)  # the default now; kept for old scripts
    args = parser.parse_args(argv)
    r = run(args.horizon, args.dt, not args.no_plot, args.output, progress=not args.quiet)
    print(f"closed-form double pendulum constraint forces: relative error {r['closed_form_error']:.2e}")
    print(f"space robot: {r['bodies']} bodies, {r['dofs']} dofs, {r['constraints']} constraint coordinates, "
          f"{r['segments']} segments; {r['steps']} RK4 steps, {r['evaluations']} evaluations")
    for name, err in r["qdd_relative_error"].items():
        print(f"max relative θ̈ difference from AB, {name:<26}: {err:.2e}")
    print(f"CFA-driven vs AB-driven trajectory, max relative difference: {r['trajectory_relative_error']:.2e}")
    print(f"largest L11 physical constraint force/moment component: {r['max_L11_constraint_force']:.3g} "
          f"(moment about the joint axis: {r['max_L11_axial_moment']:.1e})")
    print(f"\nCPU time of the dynamics module over {r['evaluations']} evaluations (process time):")
    print(f"{'rank':<5}{'method':<28}{'total [s]':>10}{'per call [ms]':>15}")
    for rank, name in enumerate(r["ranking"], 1):
        print(f"{rank:<5}{name:<28}{r['cpu'][name]:>10.3f}{1e3 * r['cpu'][name] / r['evaluations']:>15.3f}")
    print(f"figure: {r['figure']}" if "figure" in r else "figure: none (--no-plot)")
    return r


if __name__ == "__main__":
    run_main(main)

"""A flexible two-link arm falling under gravity: assumed modes on an SKO model.

Two uniform links (1 m, 1 kg, EI = 20 N m²), each a flexible body with its clamped-free bending
modes computed from a lumped beam (``sko.bodies.beam``), hang from a shoulder and an elbow joint
(both about y, the elbow at the first link's tip node, which both translates and rotates with
the modes). Released at rest from the horizontal, the arm swings down and its links vibrate. The
script

1. checks the closed-form case: at zero deformation, the joint block of ℳ and the gravity torque
   are those of a rigid double pendulum with the same particles (exact formulas);
2. compares the lumped beam frequencies with the continuous Euler–Bernoulli cantilever;
3. simulates the flexible arm and its rigid counterpart (same particles, no modes) with RK4 at
   two step sizes, reports the energy drift of each (it must shrink at fourth order), the tip
   deflection and how far the flexible arm lags the rigid one;
4. plots joint angles, modal coordinates and energy drift to ``papers/output/flexible_arm.png``
   (``--output DIR`` for another folder; figures need the ``[plot]`` extra).

Run ``python -m papers.flexible_arm`` (about a minute, progress on stderr); ``--horizon 0.1`` or
``run(horizon=…)`` for a short run.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sko.bodies import FlexibleBody, cantilever_modes  # noqa: E402
from sko.systems import MultibodySystem  # noqa: E402
from sko.examples.bodies import flexible_two_link  # noqa: E402
from sko.simulation.simulate import simulate  # noqa: E402
from papers.common import OUTPUT, Progress, pyplot, run_main  # noqa: E402
EULER_BERNOULLI = np.array([1.8751040687, 4.6940911330])  # β_j L of a clamped-free beam


def rigid_counterpart(system: MultibodySystem) -> MultibodySystem:
    """The same arm with every flexible body's modes removed (its particles kept)."""
    bodies = []
    for k in system.bodies:
        b = system.body(k)
        nodes = {n: (d.position, np.zeros((3, 0))) for n, d in b.nodes.items()}
        bodies.append(FlexibleBody(k, b.parent, b.joint, b.masses, b.positions, None, nodes=nodes,
                                   placement=b.placement, attach=b.attach))
    return MultibodySystem(bodies, gravity=system.gravity)


def double_pendulum_check(system: MultibodySystem, q1: float, q2: float) -> float:
    """Largest relative residual of ℳ_θθ and the gravity torque at zero deformation against
    the closed-form double pendulum of the same particles (rotation about y, gravity −z)."""
    up, low = system.body("upper"), system.body("lower")
    L1 = up.nodes["tip"].position[0]
    m1, m2 = up.masses.sum(), low.masses.sum()
    c1, c2 = up.masses @ up.positions[:, 0] / m1, low.masses @ low.positions[:, 0] / m2
    J1 = up.masses @ (up.positions[:, 0] ** 2 + up.positions[:, 2] ** 2)
    J2 = low.masses @ (low.positions[:, 0] ** 2 + low.positions[:, 2] ** 2)
    cos2 = np.cos(q2)
    M_exact = np.array([[J1 + J2 + m2 * L1**2 + 2 * m2 * L1 * c2 * cos2, J2 + m2 * L1 * c2 * cos2],
                        [J2 + m2 * L1 * c2 * cos2, J2]])
    g = 9.81  # positive rotation about y turns x towards −z: the links fall with growing angle
    G_exact = -g * np.array([(m1 * c1 + m2 * L1) * np.cos(q1) + m2 * c2 * np.cos(q1 + q2), m2 * c2 * np.cos(q1 + q2)])
    q = system.neutral_configuration()
    q[system.q_slices["upper"].start], q[system.q_slices["lower"].start] = q1, q2
    joints = [system.dof_slices["upper"].start, system.dof_slices["lower"].start]
    M = system.mass_matrix(q)[np.ix_(joints, joints)]
    G = system.bias_forces(q, np.zeros(system.dof_size))[joints]
    return max(np.abs(M - M_exact).max() / np.abs(M_exact).max(), np.abs(G - G_exact).max() / np.abs(G_exact).max())


def run(horizon: float = 1.0, dt: float = 1e-3, n_modes: int = 2, plot: bool = True, output: Path = OUTPUT,
        progress: bool = False) -> dict:
    """Simulate and return the key numbers (and the figure's path when ``plot``)."""
    arm = flexible_two_link(n_modes=n_modes)
    rigid = rigid_counterpart(arm)
    modes = cantilever_modes(1.0, 1.0, 20.0, n_modes)
    exact = EULER_BERNOULLI[:n_modes] ** 2 * np.sqrt(20.0 / (1.0 * 1.0**3))
    numbers = {
        "closed_form_residual": max(double_pendulum_check(arm, a, b) for a, b in [(0.0, 0.0), (0.4, -1.1), (-2.0, 2.5)]),
        "frequencies": modes.frequencies,
        "frequency_error": np.abs(modes.frequencies / exact[: len(modes.frequencies)] - 1).max(),
    }
    q0, qd0 = arm.neutral_configuration(), np.zeros(arm.dof_size)
    steps = int(round(horizon / dt))
    traj = simulate(arm, q0, qd0, dt, steps, progress=Progress(f"flexible arm, dt = {dt:g}", steps, progress).step)
    half = simulate(arm, q0, qd0, dt / 2, 2 * steps,
                    progress=Progress(f"flexible arm, dt = {dt / 2:g}", 2 * steps, progress).step)
    stiff = simulate(rigid, rigid.neutral_configuration(), np.zeros(rigid.dof_size), dt, steps,
                     progress=Progress("rigid counterpart", steps, progress).step)
    # energy scale: total mass × g × reach (E(0) = 0 here, so drifts are relative to this)
    scale = sum(arm.body(k).masses.sum() for k in arm.bodies) * np.linalg.norm(arm.gravity) * 2.0
    numbers["energy_drift"] = np.abs(traj.energy - traj.energy[0]).max() / scale
    numbers["energy_drift_half_step"] = np.abs(half.energy - half.energy[0]).max() / scale
    numbers["rigid_energy_drift"] = np.abs(stiff.energy - stiff.energy[0]).max() / scale
    eta_up = traj.q[:, arm.q_slices["upper"]][:, 1:]
    tip = arm.body("upper").nodes["tip"].translation
    numbers["max_tip_deflection"] = np.abs(eta_up @ tip[2]).max()
    joints = [arm.q_slices["upper"].start, arm.q_slices["lower"].start]
    numbers["max_joint_lag"] = np.abs(traj.q[:, joints] - stiff.q[:, [0, 1]]).max()
    if plot:
        numbers["figure"] = _plot(traj, stiff, half, arm, joints, dt, Path(output))
    return numbers


def _plot(traj, stiff, half, arm, joints, dt, output: Path) -> Path:
    plt = pyplot("the figure of papers.flexible_arm")
    fig, ax = plt.subplots(3, 1, figsize=(8.5, 8), sharex=True)
    outside = dict(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)  # hides no curve
    for j, name in zip(joints, ("shoulder", "elbow")):
        ax[0].plot(traj.t, traj.q[:, j], label=f"{name} (flexible)")
    ax[0].plot(stiff.t, stiff.q[:, 0], "k--", lw=0.8, label="rigid counterpart")
    ax[0].plot(stiff.t, stiff.q[:, 1], "k--", lw=0.8)
    ax[0].set_ylabel("joint angle [rad]")
    ax[0].legend(**outside)
    for k in ("upper", "lower"):
        s = arm.q_slices[k]
        for i in range(s.stop - s.start - 1):
            ax[1].plot(traj.t, traj.q[:, s.start + 1 + i], label=f"η {k} {i + 1}")
    ax[1].set_ylabel("modal coordinate")
    ax[1].legend(**outside)
    for tr, label in ((traj, f"dt = {dt:g}"), (half, f"dt = {dt / 2:g}")):
        ax[2].semilogy(tr.t[1:], np.abs(tr.energy[1:] - tr.energy[0]) + 1e-18, label=label)
    ax[2].set_ylabel("|E(t) − E(0)| [J]")
    ax[2].set_xlabel("time [s]")
    ax[2].legend(**outside)
    fig.suptitle("Flexible two-link arm released from the horizontal")
    fig.tight_layout()
    output.mkdir(parents=True, exist_ok=True)
    path = output / "flexible_arm.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def main(argv=None) -> dict:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m papers.flexible_arm", description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=float, default=1.0, help="simulated time [s] (default 1)")
    parser.add_argument("--output", type=Path, default=OUTPUT, help=f"folder of the figure (default {OUTPUT})")
    parser.add_argument("--no-plot", action="store_true", help="write no figure")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    args = parser.parse_args(argv)
    results = run(horizon=args.horizon, plot=not args.no_plot, output=args.output, progress=not args.quiet)
    print(f"closed-form double pendulum residual : {results['closed_form_residual']:.2e}")
    print(f"beam frequencies [rad/s]             : {np.array2string(results['frequencies'], precision=3)}"
          f" (error vs Euler–Bernoulli {results['frequency_error']:.2%})")
    print(f"energy drift / (m g L), dt and dt/2  : {results['energy_drift']:.2e}, {results['energy_drift_half_step']:.2e}")
    print(f"rigid counterpart energy drift       : {results['rigid_energy_drift']:.2e}")
    print(f"max tip deflection of the upper link : {results['max_tip_deflection'] * 1e3:.2f} mm")
    print(f"max joint lag behind the rigid arm   : {results['max_joint_lag']:.3f} rad")
    print(f"figure: {results['figure']}" if "figure" in results else "figure: none (--no-plot)")
    return results


if __name__ == "__main__":
    run_main(main)

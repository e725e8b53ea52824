"""Identifying a 7-dof arm's inertial parameters from simulated noisy torques (IDENTIFICATION.md).

The arm of :func:`sko.examples.rigid.arm7` follows a periodic Fourier-series excitation chosen to
keep its base regressor well conditioned (Swevers et al. 1997); its joint torques, from inverse
dynamics, get 1 % Gaussian noise. The script

1. finds the base parameters (Gautier's QR with column pivoting of regressors at random states);
2. estimates them by weighted least squares, with standard errors, and reports how many lie
   within three standard errors of the true values;
3. fits a physically consistent full parameter set (every link's pseudo-inertia positive
   definite, log-Cholesky parameters of Rucker & Wensing 2022);
4. predicts the torques of a second, unseen period with noise of its own from the consistent
   estimate and plots predicted against measured torques, joint by joint, to
   ``papers/output/identification_arm.png`` (``--output DIR`` for another folder).

Run ``python -m papers.identification_arm`` (tens of seconds); ``run(samples=…)`` for a short run.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sko.examples.rigid import arm7  # noqa: E402
from sko.identification import base_parameters, excitation_trajectory, identify, pseudo_inertia  # noqa: E402
from sko.identification.estimate import rigid_blocks  # noqa: E402
from papers.common import OUTPUT, pyplot, run_main  # noqa: E402

NOISE = 0.01  #: torque noise, relative to each joint's torque spread


def run(samples: int = 100, harmonics: int = 4, iterations: int = 100, seed: int = 0, plot: bool = True,
        output: Path = OUTPUT) -> dict:
    """Identify the arm (module docstring); returns the figures of merit (and the figure's path)."""
    system = arm7()
    rng = np.random.default_rng(seed)
    base = base_parameters(system, rng=rng)
    trajectory = excitation_trajectory(system, samples=samples, harmonics=harmonics, candidates=4,
                                       iterations=iterations, base=base, rng=rng)
    tau = system.inverse_dynamics(trajectory.q, trajectory.v, trajectory.dv)
    sigma = NOISE * np.abs(tau).std(axis=0)
    measured = tau + sigma * rng.normal(size=tau.shape)
    result = identify(system, trajectory.q, trajectory.v, trajectory.dv, measured, weights=1 / sigma, base=base)
    true = base.base(system.inertial_parameters())
    z = (result.estimate - true) / result.standard_errors
    consistent = result.consistent
    smallest = min(np.linalg.eigvalsh(pseudo_inertia(consistent[i:i + 10])).min()
                   for i in rigid_blocks(system.inertial_parameter_names()))
    # an unseen period, half a sample step later, with noise of its own
    times = trajectory.times + trajectory.period / (2 * samples)
    q, v, dv = trajectory.at(times)
    unseen = system.inverse_dynamics(q, v, dv) + sigma * rng.normal(size=tau.shape)
    predicted = system.joint_torque_regressor(q, v, dv) @ consistent
    numbers = {"rank": base.rank, "parameters": len(system.inertial_parameters()), "condition_number": result.condition_number,
               "excitation_condition_number": trajectory.condition_number,
               "within_three_standard_errors": int(np.sum(np.abs(z) <= 3)), "largest_z": float(np.abs(z).max()),
               "smallest_pseudo_inertia_eigenvalue": float(smallest),
               "prediction_rms_over_noise": float(np.sqrt(np.mean(((predicted - unseen) / sigma) ** 2)))}
    if plot:
        numbers["figure"] = _plot(times, unseen, predicted, output)
    return numbers


def _plot(times, measured, predicted, output: Path) -> Path:
    plt = pyplot("the identification figure")
    n = measured.shape[1]
    fig, axes = plt.subplots(n, 1, figsize=(7, 1.4 * n + 1), sharex=True)
    for i, ax in enumerate(axes):
        ax.plot(times, measured[:, i], ".", ms=3, color="0.5", label="measured")
        ax.plot(times, predicted[:, i], "-", lw=1.2, color="C0", label="predicted")
        ax.set_ylabel(f"τ{i + 1} [N m]")
    axes[-1].set_xlabel("time [s]")
    axes[0].legend(loc="lower left", bbox_to_anchor=(0.0, 1.02), ncol=2, frameon=False)
    fig.suptitle("7-dof arm: torques of an unseen period, predicted by the consistent estimate")
    fig.tight_layout()
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    path = output / "identification_arm.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def main(argv=None) -> dict:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m papers.identification_arm", description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100, help="samples per period (default 100)")
    parser.add_argument("--output", type=Path, default=OUTPUT, help=f"folder of the figure (default {OUTPUT})")
    parser.add_argument("--no-plot", action="store_true", help="write no figure")
    args = parser.parse_args(argv)
    r = run(samples=args.samples, plot=not args.no_plot, output=args.output)
    print(f"base parameters                       : {r['rank']} of {r['parameters']}")
    print(f"condition number (excitation, weighted): {r['excitation_condition_number']:.3g}, {r['condition_number']:.3g}")
    print(f"within 3 standard errors              : {r['within_three_standard_errors']} of {r['rank']} "
          f"(largest |z| {r['largest_z']:.2f})")
    print(f"smallest pseudo-inertia eigenvalue    : {r['smallest_pseudo_inertia_eigenvalue']:.3g}")
    print(f"unseen period, rms error / noise      : {r['prediction_rms_over_noise']:.3f}")
    print(f"figure: {r['figure']}" if "figure" in r else "figure: none (--no-plot)")
    return r


if __name__ == "__main__":
    run_main(main)

"""The space-robot CFA reproduction runs on a short horizon: the CFA agrees with the recursive
AB algorithm along the trajectory, the closed-form constraint forces hold, every method is timed."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

import sko.algorithms as alg

ROOT = Path(__file__).resolve().parents[1]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "papers" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_space_robot_short_run(tmp_path, capsys):
    paper = _load("space_robot_cfa")
    numbers = paper.run(horizon=0.02, plot=True, output=tmp_path)
    assert numbers["closed_form_error"] < 1e-12
    assert (numbers["bodies"], numbers["dofs"], numbers["constraints"], numbers["segments"]) == (13, 18, 60, 3)
    assert numbers["steps"] == 10 and numbers["evaluations"] == 40
    assert max(numbers["qdd_relative_error"].values()) < 1e-12
    assert numbers["trajectory_relative_error"] < 1e-12
    assert set(numbers["ranking"]) == set(paper.METHODS) and all(t > 0 for t in numbers["cpu"].values())
    assert 0 < numbers["max_L11_constraint_force"] < np.inf
    assert numbers["max_L11_axial_moment"] < 1e-12 * numbers["max_L11_constraint_force"]  # W ⟂ the joint axis
    assert (tmp_path / "space_robot_cfa.png").stat().st_size > 10_000


def test_space_robot_model_and_torques():
    """The robot floats (free base: no constraint on the main body), the arms are identical and
    driven in antiphase, and the serialized CFA reduces each 6-link arm in ⌈log₂ 6⌉ = 3 rounds."""
    paper = _load("space_robot_cfa")
    system = paper.space_robot()
    q, qd = paper.initial_state(system)
    model, a, b = system.sko_model(q, qd)
    split = alg.force_split(model)
    assert split.constraint_dim("main") == 0 and all(split.constraint_dim(k) == 5 for k in model.bodies if k != "main")
    assert np.allclose(system.body("L11").inertia, system.body("L21").inertia)
    tau = paper.joint_torques(system, 0.7)
    assert np.allclose(tau[system.v_slice("L13")], -tau[system.v_slice("L23")]) and not tau[system.v_slice("main")].any()
    r = alg.serialized_constraint_force_algorithm(model, tau, a, b, split)
    assert r.rounds == (0, 3, 3) and set(r.gathered) == {"L11", "L21"}
    assert np.allclose(r.qdd, alg.forward_dynamics(model, tau, a, b), rtol=0, atol=1e-12 * np.abs(r.qdd).max())


def test_command_line_flag(capsys):
    paper = _load("space_robot_cfa")
    paper.main(["--horizon", "0.004"])
    out = capsys.readouterr().out
    assert "2 RK4 steps" in out and "serialized CFA" in out and "rank" in out

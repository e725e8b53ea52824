"""The flexible-arm reproduction runs on a short horizon and its key numbers hold."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "papers" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_flexible_arm_short_run(tmp_path):
    paper = _load("flexible_arm")
    numbers = paper.run(horizon=0.1, dt=2e-3, plot=True, output=tmp_path)
    assert numbers["closed_form_residual"] < 1e-12  # rigid double pendulum, exact formulas
    assert numbers["frequency_error"] < 5e-3  # lumped beam vs Euler–Bernoulli
    assert numbers["energy_drift"] < 1e-7
    assert numbers["energy_drift_half_step"] < numbers["energy_drift"] / 8
    assert numbers["rigid_energy_drift"] < 1e-10
    assert 1e-4 < numbers["max_tip_deflection"] < 0.1  # the links do bend, but mildly
    assert np.isfinite(numbers["max_joint_lag"])
    assert (tmp_path / "flexible_arm.png").stat().st_size > 10_000

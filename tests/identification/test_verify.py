"""The regressor identities of ``sko verify`` pass on systems of every kind with parameters
(rigid trees, coupled and closed-loop systems, rotors, flexible bodies) and do not apply to
bare SKO models (IDENTIFICATION.md, *Identities*)."""

from __future__ import annotations

from sko.verify import run

CHECKS = ["torque_regressor", "regressor_complex_step", "energy_regressors", "energy_regressor_rate", "base_parameters"]


def test_regressor_identities_pass():
    models = ["arm7", "mimic-gripper", "four-bar", "geared-rotor-chain", "flexible-two-link", "random"]
    results = run(checks=CHECKS, models=models)
    assert {r.name for r in results} == set(CHECKS)
    assert {r.model for r in results} == set(models) - {"random"}  # a bare SKO model has no parameters
    failed = [(r.model, r.name, r.detail) for r in results if not r.passed]
    assert not failed

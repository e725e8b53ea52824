"""The body-type tutorial runs: its toy body type passes the SKO identities, agrees with the
independent particle Lagrangian, and conserves energy."""

from __future__ import annotations

from .test_paper import _load


def test_tutorial_body_type():
    tutorial = _load("tutorial_body_type")
    system = tutorial.build()
    residuals = tutorial.identity_residuals(system)
    shapes = residuals.pop("weights are non-square (shapes)")
    assert any(m != n for m, n in shapes)
    assert max(residuals.values()) < 1e-10, residuals
    assert tutorial.particle_check() < 1e-8
    coarse, fine = tutorial.energy_drift(system, 4e-3, 0.2), tutorial.energy_drift(system, 2e-3, 0.2)
    assert coarse < 1e-2 and fine < coarse / 8

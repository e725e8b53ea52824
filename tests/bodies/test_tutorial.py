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


def test_tutorial_physics_checks_catch_a_dropped_term():
    tutorial = _load("tutorial_body_type")
    good = tutorial.physics_checks(tutorial.build())
    assert all(passed for passed, _ in good.values()), good
    slip = tutorial.build_with_slip()
    assert max(tutorial.identity_residuals(slip)[k] for k in tutorial.identity_residuals(slip)
               if k != "weights are non-square (shapes)") < 1e-10  # the identities cannot see it
    bad = tutorial.physics_checks(slip)
    assert not bad["christoffel"][0] and not bad["power_balance"][0], bad

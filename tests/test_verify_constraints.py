"""The constraint checks of :mod:`sko.verify.constraints` hold the last body that offers a frame,
and do not apply to a system with none."""

from __future__ import annotations

from papers.tutorial_body_type import Bead, build
from sko.systems import MultibodySystem
from sko.verify import run

CHECKS = ["constrained_dynamics_kkt", "constraint_stabilisation", "constraint_compliance", "impulse_energy"]


def test_constraint_checks_hold_a_body_with_a_frame_when_the_last_offers_none():
    system = build()
    assert system.body(system.bodies[-1]).attachment_names == ()  # a bead: no frame
    results = run([system], checks=CHECKS)
    assert sorted(r.name for r in results) == sorted(CHECKS)
    assert all(r.passed for r in results), [(r.name, r.detail) for r in results if not r.passed]


def test_constraint_checks_do_not_apply_without_a_frame():
    system = MultibodySystem([Bead("bead", None, 0.3, [0.1, 0.0, -0.4], [0.0, 0.0, 1.0], 4.0)])
    assert run([system], checks=CHECKS) == []

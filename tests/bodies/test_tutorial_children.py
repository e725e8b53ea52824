"""The second body-type tutorial (``papers/tutorial_body_with_children.py``): a body with an
internal coordinate offering two attachment frames (own frame first, Γ row-major in its compiled
records). Its compiled state equals its ``at_state`` on float and complex states and in batches,
its dynamics equal those of the same mechanism built from library rigid bodies, it conserves
energy, and ``sko verify --model`` passes on it; the ``kinetic_energy`` hook it offers makes
``mass_from_energy`` see a wrong ``M``."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from sko.engine import use_backend
from sko.cli import main
from sko.systems import MultibodySystem
from sko.engine.dispatch import engine
from tests.util import SYSTEM_CALLS, assert_close, random_states

from .test_paper import _load

tutorial = _load("tutorial_body_with_children")


def test_the_arm_runs_compiled_and_offers_its_frames_in_order():
    system = tutorial.build()
    assert engine(system).layout.all_compiled
    arm = system.body("arm")
    assert arm.attachment_names == (None, "carriage")
    assert arm.compiled_state().kernel is tutorial.carriage_arm_state
    assert tutorial.carriage_arm_state.own_frame_identity
    model, _, _ = system.sko_model(system.random_configuration(np.random.default_rng(0)))
    assert model.phi["bob"].shape == (7, 6) and model.phi["forearm"].shape == (7, 7)


@pytest.mark.parametrize("complex_step", [False, True])
def test_compiled_equals_at_state(complex_step):
    system = tutorial.build()
    Q, V, X = random_states(system, 3, complex_step)
    for q, v, x in zip(Q, V, X):
        for call in SYSTEM_CALLS.values():
            got = call(system, q, v, x)
            with use_backend("reference"):
                want = call(system, q, v, x)
            assert_close(got, want, 1e-10)
        model, a, b = system.sko_model(q, v)
        with use_backend("reference"):
            ref, ra, rb = system.sko_model(q, v)
        for k in system.bodies:
            for got, want in ((model.M[k], ref.M[k]), (model.H[k], ref.H[k])):
                assert_close(got, want, 1e-12)
            if k in ref.phi:
                assert_close(model.phi[k], ref.phi[k], 1e-12)
        assert_close(a, ra, 1e-12)
        assert_close(b, rb, 1e-12)
    assert tutorial.compiled_against_python(system) < 1e-12


def test_batched_equals_per_state():
    system = tutorial.build()
    Q, V, X = random_states(system, 37, seed=4)  # more than a serial batch: the parallel path
    for call in SYSTEM_CALLS.values():
        batched = call(system, Q, V, X)
        for s in range(len(Q)):
            assert_close(batched[s], call(system, Q[s], V[s], X[s]), 1e-13)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_equals_the_rigid_body_equivalent(seed):
    assert tutorial.rigid_comparison(seed) < 1e-12


def test_energy_is_conserved_with_fourth_order_drift():
    system = tutorial.build()
    coarse, fine = tutorial.energy_drift(system, 4e-3, 0.2), tutorial.energy_drift(system, 2e-3, 0.2)
    assert coarse < 1e-5 and fine < coarse / 8


def test_sko_verify_passes_on_it(capsys):
    assert main(["verify", "--model", "papers.tutorial_body_with_children:build", "--summary"]) == 0
    out = capsys.readouterr().out
    assert " 0 failed" in out


class _CouplingDropped(tutorial.CarriageArm):
    """The arm with ``M``'s coupling between arm and carriage (``m_c Pᵀ e``) dropped."""

    def at_state(self, q, qd, inboard, gravity):
        s = super().at_state(q, qd, inboard, gravity)
        M = s.M.copy()
        M[:6, 6] = M[6, :6] = 0
        return dataclasses.replace(s, M=M)


def test_own_kinetic_energy_lets_mass_from_energy_see_a_wrong_M():
    good = tutorial.physics_checks(tutorial.build())
    assert all(passed for passed, _ in good.values()), good
    system = tutorial.build()
    arm = system.body("arm")
    wrong = _CouplingDropped(arm.name, arm.parent, arm.axis, arm.inertia, arm.carriage_mass, arm.start, arm.direction,
                             arm.stiffness)
    bad = MultibodySystem([wrong, *(system.body(k) for k in system.bodies[1:])])
    assert not tutorial.physics_checks(bad)["mass_from_energy"][0]

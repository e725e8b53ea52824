"""The identities of the derivatives in ``sko verify`` (sko.verify.derivatives): they pass on
every built-in system and fail on derivatives that are wrong; the brackets of the tangent
columns are those of DERIVATIVES.md, Eq. 16."""

from __future__ import annotations

import numpy as np
import pytest

from sko.bodies import Free, Revolute, Spherical
from sko.spatial import pose_transform
from sko.systems import SystemBuilder
from sko.systems.derivatives import InverseDynamicsDerivatives
from sko.verify import derivatives as identities
from sko.verify import run

CHECKS = ["acceleration_derivative", "forward_dynamics_derivatives", "velocity_derivative", "coriolis_skew",
          "kinetic_energy_derivatives", "gravity_hessian", "analytic_derivatives", "local_derivatives"]


def ball_and_free():
    """A free base carrying a ball-jointed arm and a revolute link."""
    b = SystemBuilder(gravity=[0.0, 0.0, -9.81])
    b.add_body("base", None, Free(), mass=3.0, com=[0.1, 0.0, 0.05], inertia_com=np.diag([0.3, 0.2, 0.25]))
    b.add_body("arm", "base", Spherical(), pose_transform([0.2, 0.1, 0.0]), mass=1.0, com=[0.0, 0.0, 0.3],
               inertia_com=np.diag([0.05, 0.04, 0.01]))
    b.add_body("hand", "arm", Revolute([0.0, 1.0, 0.0]), pose_transform([0.0, 0.0, 0.6]), mass=0.5,
               com=[0.1, 0.0, 0.0], inertia_com=np.diag([0.01, 0.02, 0.02]))
    return b.build()


def test_every_identity_passes_on_every_built_in_system():
    results = run(checks=CHECKS)
    assert {r.name for r in results} == set(CHECKS) and len(results) >= 6 * 10
    assert all(r.passed for r in results), [(r.model, r.name, r.residual) for r in results if not r.passed]


def test_every_identity_passes_with_ball_and_free_joints():
    results = run(models=[ball_and_free()], checks=CHECKS)
    # a rigid tree: the analytic recursion's check applies, the local one's does not
    assert {r.name for r in results} == set(CHECKS) - {"local_derivatives"}
    assert all(r.passed for r in results), [(r.name, r.residual) for r in results]


def test_the_brackets_of_a_ball_joint_are_the_cross_product():
    system = ball_and_free()
    q = system.random_configuration(4)
    A = identities.brackets(system, q)
    ball = np.arange(system.dof_slices["arm"].start, system.dof_slices["arm"].stop)
    for i in range(3):
        for k in range(3):
            np.testing.assert_allclose(A[ball, ball[i], ball[k]], np.cross(np.eye(3)[i], np.eye(3)[k]), atol=1e-7)
    revolute = system.dof_slices["hand"].start
    assert np.abs(A[:, revolute, :]).max() < 1e-7 and np.abs(A[:, :, revolute]).max() < 1e-7
    # the free joint: ad(e_i) e_k = crm(e_i) e_k, the 6 × 6 motion cross product
    free = np.arange(6)
    omega_v = np.cross(np.eye(3)[0], np.eye(3)[1])
    np.testing.assert_allclose(A[free, 0, 1], np.concatenate([omega_v, np.zeros(3)]), atol=1e-7)
    np.testing.assert_allclose(A[free, 0, 4], np.concatenate([np.zeros(3), np.cross(np.eye(3)[0], np.eye(3)[1])]),
                               atol=1e-7)


@pytest.mark.parametrize("wrong, failing", [
    ("dtau_dv", {"velocity_derivative", "coriolis_skew"}),
    ("dtau_dq", {"kinetic_energy_derivatives", "gravity_hessian"}),
    ("mass_matrix", {"acceleration_derivative"}),
])
def test_wrong_derivatives_fail(monkeypatch, wrong, failing):
    system = ball_and_free()
    right = type(system).inverse_dynamics_derivatives

    def perturbed(self, *args, **kwargs):
        out = right(self, *args, **kwargs)
        bad = getattr(out, wrong) * 1.001  # scaled: a constant error would cancel in the odd part J_e
        return InverseDynamicsDerivatives(**{**out._asdict(), wrong: bad})

    monkeypatch.setattr(type(system), "inverse_dynamics_derivatives", perturbed)
    results = run(models=[system], checks=CHECKS)
    assert {r.name for r in results if not r.passed} >= failing


def test_without_the_brackets_ball_and_free_joints_fail(monkeypatch):
    """``∂T/∂θ̇`` alone (the Christoffel form) is not the C of Eq. 16 when ``θ̇ ≠ q̇``."""
    monkeypatch.setattr(identities, "brackets", lambda system, q: np.zeros((system.nv,) * 3))
    results = {r.name: r.passed for r in run(models=[ball_and_free()], checks=["coriolis_skew", "gravity_hessian"])}
    assert results == {"coriolis_skew": False, "gravity_hessian": False}

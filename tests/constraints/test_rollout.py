"""Rollouts under constraints (CONSTRAINTS.md Eq. 3, 4): a planar chain with its tip pinned where
it starts swings as a closed loop; Baumgarte stabilisation keeps the pin within 1e-6 m, the drift
reported is the largest position error along the trajectory, and ``sko.rollout`` takes the
constraints."""

import numpy as np
import pytest

import sko
from sko.constraints import ConstraintError, PointContact, constraint_error
from sko.constraints.kinematics import anchored
from sko.examples.rigid import planar_chain
from sko.io import load_urdf


def _swing():
    chain = planar_chain(3)
    q0 = np.array([0.4, -0.9, 0.7])
    pin = [PointContact("tip", baumgarte=(100.0, 20.0), target=np.eye(4))]
    J = chain.constraint_jacobian(q0, pin)
    v0 = np.array([1.0, 0.5, -0.3])
    v0 = v0 - np.linalg.pinv(J) @ (J @ v0)  # a motion the pin allows
    return chain, q0, v0, pin


@pytest.mark.parametrize("integrator, dt, seconds, bound", [("rk4", 2e-3, 1.0, 1e-6), ("euler", 1e-3, 0.5, 5e-3)])
def test_a_pinned_chain_keeps_its_pin(integrator, dt, seconds, bound):
    """RK4 keeps the pin to 1e-6 m over a second; semi-implicit Euler is first order."""
    chain, q0, v0, pin = _swing()
    out = sko.rollout(chain, q0, v0, dt=dt, steps=int(seconds / dt), constraints=pin, integrator=integrator)
    held = anchored(chain, q0, pin)
    errors = [np.abs(constraint_error(chain, q, held)).max() for q in out.q]
    assert out.drift == pytest.approx(max(errors), rel=0, abs=1e-15)
    assert out.drift < bound
    assert np.ptp(out.q[:, 0]) > 0.1  # it does swing
    assert out.forces.shape == (len(out.t) - 1, 3) and np.isfinite(out.forces).all()


def test_batched_constrained_rollouts_equal_single_ones():
    chain, q0, v0, pin = _swing()
    Q0, V0 = np.stack([q0, q0 + 0.1]), np.stack([v0, 0 * v0])
    batch = sko.rollout(chain, Q0, V0, dt=2e-3, steps=20, constraints=pin)
    for s in range(2):
        one = sko.rollout(chain, Q0[s], V0[s], dt=2e-3, steps=20, constraints=pin)
        np.testing.assert_array_equal(batch.q[s], one.q)
        assert batch.drift[s] == one.drift


def test_bad_constrained_rollouts_are_named():
    chain, q0, v0, pin = _swing()
    with pytest.raises(ConstraintError, match="not a constraint"):
        sko.rollout(chain, q0, v0, steps=2, constraints=["tip"])
    with pytest.raises(sko.SKOError, match="integrator"):
        sko.rollout(chain, q0, v0, steps=2, constraints=pin, integrator="verlet")


def standing_solo12(seconds: float, dt: float):
    """solo12 standing on its four feet (3-D point contacts, Baumgarte (100, 20)) under gravity,
    its joints held by a PD controller around the start with the static torques fed forward, from
    a small motion the contacts allow: ``(rollout, q0)``."""
    from tests.rigid.pinocchio_map import robots_dir

    root = robots_dir()
    if root is None:
        pytest.skip("example-robot-data is not installed")
    solo = load_urdf(root / "solo_description/robots/solo12.urdf", floating_base=True)
    feet = [PointContact(f, baumgarte=(100.0, 20.0), target=np.eye(4)) for f in ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")]
    q0 = solo.neutral_configuration()
    held = anchored(solo, q0, feet)
    J = solo.constraint_jacobian(q0, held)
    S = np.eye(solo.nv)[6:]  # the actuated joints
    x = np.linalg.lstsq(np.hstack([S.T, J.T]), solo.gravity_forces(q0), rcond=None)[0]
    tau_static = S.T @ x[: solo.nv - 6]

    def controller(t, q, v):
        return tau_static + S.T @ (5.0 * (q0[7:] - q[7:]) - 0.1 * v[6:])

    v0 = np.random.default_rng(0).normal(size=solo.nv) * 1e-2
    v0 = v0 - np.linalg.pinv(J) @ (J @ v0)
    return sko.rollout(solo, q0, v0, dt=dt, steps=int(round(seconds / dt)), tau=controller, constraints=feet,
                       integrator="euler"), q0


def test_a_standing_quadruped_keeps_its_feet():
    """One second here (``benchmarks/bench_constrained.py`` runs ten): the feet stay within 1e-6 m."""
    out, q0 = standing_solo12(1.0, 2e-3)
    assert out.drift < 1e-6
    assert np.isfinite(out.q).all() and np.abs(out.v[-1]).max() < np.abs(out.v[0]).max()  # it settles

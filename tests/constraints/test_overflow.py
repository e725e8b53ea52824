"""A Baumgarte gain too large for floating point is named with its constraint, on both paths."""

import numpy as np
import pytest

from sko.constraints import FrameContact
from sko.engine.dispatch import use_backend
from sko.examples.rigid import arm7
from sko.graphs.errors import NonFiniteError


def _arm_state():
    """arm7 and a random state ``(q, v, tau)``."""
    system = arm7()
    rng = np.random.default_rng(0)
    q = system.random_configuration(rng)
    v, tau = rng.normal(size=(2, system.nv))
    return system, q, v, tau


@pytest.mark.parametrize("backend", ["compiled", "reference"])
@pytest.mark.parametrize("gains, named", [((1e308, 0.0), r"kp = 1e\+308"), ((0.0, 1e308), r"kd = 1e\+308")])
def test_a_huge_gain_is_named(backend, gains, named):
    system, q, v, tau = _arm_state()
    T = np.eye(4)
    T[:3, 3] = [0.3, 0.2, 0.5]
    C = [FrameContact("arm_link7", target=T), FrameContact("arm_link5", baumgarte=gains, target=T)]
    with use_backend(backend), pytest.raises(NonFiniteError, match=named + r"[^(]* of FrameContact\('arm_link5'"):
        system.constrained_dynamics(q, v, tau, C)


@pytest.mark.parametrize("backend", ["compiled", "reference"])
def test_an_overflowing_baumgarte_acceleration_names_its_constraint(backend):
    system, q, v, tau = _arm_state()
    far = np.eye(4)
    far[:3, 3] = [50.0, 50.0, 50.0]
    C = [FrameContact("arm_link5", baumgarte=(1e308, 0.0), target=far)]
    with use_backend(backend), pytest.raises(NonFiniteError, match=r"arm_link5.*Baumgarte acceleration.*kp = 1e\+308"):
        system.constrained_dynamics(q, v, tau, C)

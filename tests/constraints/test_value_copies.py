"""A constraint is a value (CONSTRAINTS.md §1): its copies and unpickled constraints keep their
placements read-only, so the plans the compiled path keeps by identity stay true."""

import copy
import pickle

import numpy as np
import pytest

from sko.constraints import FrameConstraint, PointContact
from sko.engine.dispatch import use_backend
from sko.examples.rigid import arm7


def _target():
    T = np.eye(4)
    T[:3, 3] = [0.3, 0.1, 0.5]
    return T


@pytest.mark.parametrize("duplicate", [copy.copy, copy.deepcopy, lambda c: pickle.loads(pickle.dumps(c))])
def test_copies_keep_their_placements_read_only(duplicate):
    c = duplicate(FrameConstraint("arm_link7", "arm_link3", placement=_target(), other_placement=_target()))
    for T in (c.placement, c.other_placement):
        assert not T.flags.writeable
        with pytest.raises(ValueError):
            T[0, 3] = 1.0
    np.testing.assert_array_equal(c.other_placement, _target())


def test_a_deep_copy_cannot_leave_a_kept_plan_stale():
    system = arm7()
    rng = np.random.default_rng(0)
    q = system.random_configuration(rng)
    v, tau = rng.normal(size=(2, system.nv))
    C = (copy.deepcopy(PointContact("arm_link7", baumgarte=(20.0, 0.0), target=_target())),)
    dv, lam = system.constrained_dynamics(q, v, tau, C)
    with pytest.raises(ValueError):
        C[0].other_placement[:3, 3] = 0.0
    with use_backend("reference"):
        np.testing.assert_allclose(system.constrained_dynamics(q, v, tau, C)[1], lam, rtol=1e-9, atol=1e-9)

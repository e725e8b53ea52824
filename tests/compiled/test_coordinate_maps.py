"""A system's q̇ and normalisation computed in one indexed step plus the joints with maps of
their own (sko.systems.coordinates) equal the body-by-body definitions exactly: every system
of the engine tests (random rigid systems with every joint and polarity, flexible and rotor
bodies), real and complex-step states."""

import re

import numpy as np
import pytest

from sko.bodies import Free, Spherical
from sko.engine import local_derivatives
from sko.errors import JointError
from sko.systems.coordinates import coordinate_maps
from tests.compiled.test_engine import SYSTEMS, _state


def _by_body(system, q, v):
    return np.concatenate([np.asarray(system.body(k).qdot(q[system.q_slice(k)], v[system.v_slice(k)]))
                           for k in system.bodies])


@pytest.mark.parametrize("complex_step", [False, True])
@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_qdot_and_normalize_equal_the_bodies(name, complex_step):
    system = SYSTEMS[name]()
    rng = np.random.default_rng(17)
    for _ in range(3):
        q, v, _, _ = _state(system, rng, complex_step)
        want = _by_body(system, q, v)
        got = system.qdot(q, v)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        if not complex_step:
            normalized = np.concatenate([system.body(k).normalize(q[system.q_slice(k)]) for k in system.bodies])
            np.testing.assert_array_equal(system.normalize(q), normalized)


def test_maps_call_only_joints_with_maps_of_their_own():
    system = SYSTEMS["rigid:humanoid"]()  # a free pelvis, spherical shoulders and hips, revolute joints
    maps = coordinate_maps(system)
    own = [system.body(k).joint for k in system.bodies if isinstance(system.body(k).joint, (Free, Spherical))]
    assert maps is not None and len(maps.rates) == len(maps.projections) == len(own) > 1
    assert maps.rate_q.size == system.q_size - sum(j.nq for j in own)
    assert maps.rate_v.size == system.nv - sum(j.nv for j in own)


@pytest.mark.parametrize("complex_step", [False, True])
@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_qdot_matrix_equals_the_bodies_columns(name, complex_step):
    """The ball joints' ``G(q)`` taken all at once equal each body's ``q̇`` along each ``e_ι``."""
    system = SYSTEMS[name]()
    maps = coordinate_maps(system)
    if maps is None:
        pytest.skip("no coordinate maps")
    rng = np.random.default_rng(5)
    for _ in range(3):
        q, _, _, _ = _state(system, rng, complex_step)
        want = np.column_stack([_by_body(system, q, e.astype(q.dtype)) for e in np.eye(system.nv)])
        np.testing.assert_array_equal(maps.qdot_matrix(q, system.nv), want)


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_the_compiled_tangent_columns_equal_the_maps(name):
    """The compiled tangent columns of a system whose maps are linear in ``q`` (the ball joints'
    ``G(q)``) equal :meth:`~sko.systems.coordinates.CoordinateMaps.qdot_matrix` bit for bit, also
    on a ``q`` with strides; a system with another map gives no recipe."""
    system = SYSTEMS[name]()
    maps = coordinate_maps(system)
    if maps is None:
        pytest.skip("no coordinate maps")
    recipe = maps.linear_recipe(system.nv)
    if recipe is None:
        assert maps.matrix_rates
        return
    call = local_derivatives.tangent_columns_call(*recipe)
    rng = np.random.default_rng(8)
    for _ in range(3):
        q, _, _, _ = _state(system, rng, False)
        strided = np.repeat(q, 2)[::2]
        for given in (q, strided):
            np.testing.assert_array_equal(call(given), maps.qdot_matrix(q, system.nv))


def test_a_ball_joint_of_zero_quaternion_is_named_in_the_tangent_columns():
    system = SYSTEMS["rigid:humanoid"]()
    maps = coordinate_maps(system)
    assert len(maps.ball_checks) > 1
    balls = [k for k in system.bodies if type(system.body(k).joint) is Spherical]
    q = system.random_configuration(np.random.default_rng(0))
    q[system.q_slice(balls[1])] = 1e-12
    with pytest.raises(JointError, match=re.escape(f"{system.body(balls[1]).joint}: quaternion")):
        maps.qdot_matrix(q, system.nv)
    with pytest.raises(JointError, match="zero norm"):
        system.qdot_matrix(q)

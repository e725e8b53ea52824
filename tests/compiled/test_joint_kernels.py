"""Compiled joint kinematics equal the Python joints' (X_J, S, c_J) at random states, for every
joint of the library, both polarities, float64 and complex128 (complex-step) states."""

import numpy as np
import pytest

from sko.bodies import Cylindrical, Fixed, Free, Helical, Planar, Prismatic, RackAndPinion, Revolute, Spherical, SphericalEulerZYX
from sko.engine.joints import PYTHON, joint_kinematics, pack_joint
from tests.rigid.random_systems import JOINT_MAKERS

JOINTS = {
    "revolute": lambda rng: Revolute(rng.normal(size=3)),
    "prismatic": lambda rng: Prismatic(rng.normal(size=3)),
    "helical": lambda rng: Helical(rng.normal(size=3), rng.uniform(-0.5, 0.5)),
    "cylindrical": lambda rng: Cylindrical(rng.normal(size=3)),
    "planar": lambda rng: Planar(),
    "planar_tilted": lambda rng: Planar(rng.normal(size=3)),
    "planar_near_x": lambda rng: Planar([1.0, 0.01, 0.02]),
    "spherical": lambda rng: Spherical(),
    "euler_zyx": lambda rng: SphericalEulerZYX(),
    "free": lambda rng: Free(),
    "rack_and_pinion": lambda rng: RackAndPinion(rng.uniform(0.05, 0.5)),
    "fixed": lambda rng: Fixed(),
}


def _compiled(joint, q, v, dtype):
    code, reverse, p = pack_joint(joint)
    X, S, c = np.full((6, 6), np.nan, dtype), np.full((6, 6), np.nan, dtype), np.full(6, np.nan, dtype)
    ok = joint_kinematics(code, reverse, p, np.asarray(q, dtype=dtype), np.asarray(v, dtype=dtype), X, S, c)
    return ok, X, S[:, :joint.nv], c


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("name", sorted(JOINTS))
def test_compiled_equals_python(name, reverse, dtype):
    rng = np.random.default_rng(abs(hash((name, reverse))) % 2**32)
    for _ in range(10):
        joint = JOINTS[name](rng)
        joint = joint.reversed() if reverse else joint
        q = joint.random(rng) * rng.uniform(0.5, 2.0)  # non-unit quaternions are normalised
        v = rng.normal(size=joint.nv) * 2
        if dtype is np.complex128:
            q, v = q + 1e-3j * rng.normal(size=q.size), v + 1e-3j * rng.normal(size=v.size)
        ok, X, S, c = _compiled(joint, q, v, dtype)
        X_ref, S_ref, c_ref = joint.kinematics(q, v)
        assert ok
        np.testing.assert_allclose(X, X_ref, rtol=0, atol=1e-12)
        np.testing.assert_allclose(S, S_ref, rtol=0, atol=1e-12)
        np.testing.assert_allclose(c, c_ref, rtol=0, atol=1e-12)


def test_double_reversal_is_the_joint():
    from sko.bodies import ReversedJoint

    joint = Revolute([0, 1, 0])
    assert pack_joint(ReversedJoint(ReversedJoint(joint)))[:2] == pack_joint(joint)[:2] == (pack_joint(joint)[0], False)


@pytest.mark.parametrize("joint", [Spherical(), Free()])
def test_zero_quaternion_is_reported(joint):
    q = np.zeros(joint.nq)
    ok, *_ = _compiled(joint, q, np.zeros(joint.nv), np.float64)
    assert not ok


def test_user_defined_joints_take_the_python_path():
    rng = np.random.default_rng(0)
    custom = JOINT_MAKERS[-1](rng)
    assert pack_joint(custom)[0] == PYTHON and pack_joint(custom.reversed())[0] == PYTHON

"""Cross-checks against Pinocchio on robots of example-robot-data (RIGID.md, *Interoperability*).

Both sides read the same URDF file: ours with :func:`sko.io.urdf.load_urdf`, Pinocchio with
``buildModelFromUrdf`` (plus ``JointModelFreeFlyer`` for floating bases). Coordinates are mapped
by joint name (:mod:`tests.rigid.pinocchio_map`), never by position.
"""

import zlib

import numpy as np
import pytest

from sko.errors import URDFError
from sko.systems import RigidSystem
from tests.rigid.pinocchio_map import CoordinateMap, robots_dir

pin = pytest.importorskip("pinocchio")
ROBOTS_DIR = robots_dir()
if ROBOTS_DIR is None:
    pytest.skip("example-robot-data is not installed", allow_module_level=True)

ROBOTS = {  # name: (path under robots/, floating base)
    "ur5": ("ur_description/urdf/ur5_robot.urdf", False),  # fixed-base arm
    "kinova": ("kinova_description/robots/kinova.urdf", False),  # fixed-base arm, continuous joints
    "xarm7": ("xarm_description/urdf/xarm7.urdf", False),  # fixed-base 7-dof arm
    "solo12": ("solo_description/robots/solo12.urdf", True),  # quadruped
    "anymal": ("anymal_c_simple_description/urdf/anymal.urdf", True),  # quadruped
    "romeo": ("romeo_description/urdf/romeo_small.urdf", True),  # floating-base humanoid
}
STATES = 20
RTOL = 1e-9


@pytest.fixture(scope="module", params=sorted(ROBOTS))
def robot(request):
    rel, floating = ROBOTS[request.param]
    path = str(ROBOTS_DIR / rel)
    system = RigidSystem.from_urdf(path, floating_base=floating)
    model = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(path)
    return request.param, system, model, CoordinateMap(system, model)


def _relative_error(ours, theirs):
    return np.abs(ours - theirs).max() / max(np.abs(theirs).max(), 1e-300)


def test_dimensions_and_joint_names(robot):
    name, system, model, cmap = robot
    assert system.nv == model.nv
    assert set(system.joint_names()) >= {model.names[i] for i in range(1, model.njoints)}
    assert system.total_mass == pytest.approx(sum(model.inertias[i].mass for i in range(1, model.njoints)), rel=1e-12)


def test_mass_matrix_inverse_and_forward_dynamics(robot):
    name, system, model, cmap = robot
    data = model.createData()
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    worst = {"M": 0.0, "ID": 0.0, "FD": 0.0}
    for _ in range(STATES):
        q = system.random_configuration(rng)
        qd, qdd, tau = rng.normal(size=(3, system.nv))
        q_pin = cmap.q(q)
        M_pin = pin.crba(model, data, q_pin)
        M_pin = np.triu(M_pin) + np.triu(M_pin, 1).T
        worst["M"] = max(worst["M"], _relative_error(cmap.matrix(system.mass_matrix(q)), M_pin))
        tau_pin = pin.rnea(model, data, q_pin, cmap.v(qd), cmap.v(qdd))
        worst["ID"] = max(worst["ID"], _relative_error(cmap.v(system.inverse_dynamics(q, qd, qdd)), tau_pin))
        qdd_pin = pin.aba(model, data, q_pin, cmap.v(qd), cmap.v(tau))
        worst["FD"] = max(worst["FD"], _relative_error(cmap.v(system.forward_dynamics(q, qd, tau)), qdd_pin))
    print(f"{name}: worst relative errors over {STATES} states {worst}")
    assert max(worst.values()) < RTOL, f"{name}: worst relative errors {worst}"


def test_mimic_joints_of_a_real_robot_are_rejected():
    with pytest.raises(URDFError, match="mimic joint"):
        RigidSystem.from_urdf(ROBOTS_DIR / "panda_description/urdf/panda.urdf")

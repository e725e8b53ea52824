"""Hostile input of issue 29: the names and slices of coupled systems, the centre of mass of
clustered, massless and empty systems, the command line's ``--model`` factories and
``SKO_BACKEND``, the ``christoffel`` physics check where the velocity products vanish
identically, and inertia repair near the ends of the floating-point range. Each case gets the
project's own error naming what is wrong, or the right answer — never a traceback, a NaN or a
wrong result."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from sko.engine import use_backend
from sko.bodies.joints import Free, Prismatic, Revolute
from sko.errors import RigidSystemError
from sko.examples.embedding import four_bar, mimic_gripper
from sko.graphs.errors import SKOError, UnknownNodeError
from sko.inertia import (check_physical_inertia, inertia_scale, inertia_violation, nearest_physical_inertia,
                         repair_description)
from sko.spatial import pose_transform
from sko.systems.builder import SystemBuilder
from sko.systems.clustered import ClusteredRigidSystem, DependentJointError
from sko.io import load_urdf

ROOT = Path(__file__).resolve().parents[1]


# --------------------------------------------------------------------------- names and slices
def test_every_joint_of_a_cluster_is_a_name_of_the_system():
    system = mimic_gripper()
    assert system.joint_names() == {"shoulder": "link", "wrist": "hand", "finger1_joint": "finger1",
                                    "finger2_joint": "finger2", "tip_joint": "tip"}
    assert "finger2_joint" not in system.independent_joint_names()
    assert "finger1_joint" in system.independent_joint_names()
    assert system.q_slice("finger1_joint") == system.v_slice("finger1_joint") == slice(2, 3)
    assert system.q_slice("finger1") == slice(2, 3)
    assert system.joint("finger2_joint").name == "finger2_joint"
    assert system.joint_body("finger2_joint") == "finger2"
    assert system.body_joint("finger2").name == "finger2_joint"


def test_a_dependent_joint_says_it_is_dependent_and_how_to_get_its_value():
    system = mimic_gripper()
    for name in ("finger2_joint", "finger2"):
        for lookup in (system.q_slice, system.v_slice, system.independent_slice):
            with pytest.raises(DependentJointError, match=r"finger2.*dependent.*joint_positions") as info:
                lookup(name)
            assert isinstance(info.value, UnknownNodeError)  # what independent_slice raised before
    with pytest.raises(DependentJointError, match="coupled to joint 'finger1_joint'"):
        system.q_slice("finger2_joint")


def test_unknown_and_loop_joint_names_are_named_errors():
    with pytest.raises(UnknownNodeError, match="'knee' is a loop joint"):
        four_bar().q_slice("knee")
    with pytest.raises(UnknownNodeError, match="'nope' is neither a body nor a joint.*finger2_joint"):
        mimic_gripper().v_slice("nope")
    with pytest.raises(UnknownNodeError, match="neither a body nor a joint"):
        mimic_gripper().independent_slice(["unhashable"])


def test_per_node_slice_tables_explain_a_body_inside_a_cluster():
    """q_slices / dof_slices stay per node; a body inside a cluster (now a name of the system,
    so callers look it up) gets the system's error, never a bare KeyError."""
    system = mimic_gripper()
    assert list(system.q_slices) == list(system.bodies) and system.q_slices["finger1"] == slice(2, 3)
    for table in (system.q_slices, system.dof_slices):
        with pytest.raises(DependentJointError, match="finger2.*joint_positions"):
            table["finger2"]
        with pytest.raises(UnknownNodeError, match="'nope' is not a node"):
            table["nope"]
    # the cluster's node is its first body, here the dependent one: its own joint is not the node's slice
    b = SystemBuilder()
    b.add_body("f1", None, Prismatic([0, 1, 0], name="f1_joint"), mass=0.1)
    b.add_body("f2", None, Prismatic([0, -1, 0], name="f2_joint"), mass=0.1)
    b.add_coupling("mimic", "f2_joint", "f1_joint", ratio=0.5)
    reversed_ = b.build()
    assert reversed_.bodies == ("f1",) and reversed_.q_slices["f1"] == slice(0, 1)
    assert reversed_.q_slice("f2_joint") == slice(0, 1)
    with pytest.raises(DependentJointError, match="f1_joint.*coupled to joint 'f2_joint'"):
        reversed_.q_slice("f1")
    with pytest.raises(UnknownNodeError, match=r"'f2' is inside the cluster node 'f1'.*q_slice\('f2'\)"):
        reversed_.q_slices["f2"]


def _floating_gripper() -> ClusteredRigidSystem:
    """A free-floating base (7 positions, 6 velocities) carrying a coupled finger pair."""
    b = SystemBuilder(gravity=[0, 0, -9.81])
    b.add_body("base", None, Free(name="root"), mass=3.0, inertia_com=np.diag([0.1, 0.2, 0.3]))
    b.add_body("f1", "base", Prismatic([0, 1, 0], name="f1_joint"), placement=pose_transform([0.1, 0.02, 0]), mass=0.1)
    b.add_body("f2", "base", Prismatic([0, -1, 0], name="f2_joint"), placement=pose_transform([0.1, -0.02, 0]), mass=0.1)
    b.add_body("arm", "base", Revolute([0, 0, 1], name="arm_joint"), placement=pose_transform([0, 0, 0.2]), mass=1.0,
               com=[0.2, 0, 0])
    b.add_coupling("mimic", "f1_joint", "f2_joint", ratio=1.0)
    return b.build()


def test_independent_slices_in_q_and_v_with_a_floating_base():
    """independent_slice is the v slice (as it always returned); q_slice is the q one, one
    further on for the quaternion of the floating base."""
    system = _floating_gripper()
    assert (system.nq, system.nv) == (9, 8)
    assert system.q_slice("f1_joint") == slice(7, 8) and system.v_slice("f1_joint") == slice(6, 7)
    assert system.independent_slice("f1") == system.v_slice("f1")
    assert system.q_slice("arm_joint") == slice(8, 9) and system.v_slice("arm") == slice(7, 8)
    q = system.neutral_configuration()
    q[system.q_slice("f1_joint")] = 0.03
    q[system.q_slice("arm_joint")] = 0.7
    theta = system.joint_positions(q)
    assert theta["f1"][0] == theta["f2"][0] == 0.03 and theta["arm"][0] == 0.7
    v = np.zeros(system.nv)
    v[system.v_slice("f1_joint")] = 1.0
    assert np.allclose(system.constraint_matrices(q, v)[0] @ v, [0] * 6 + [1.0, 1.0, 0.0])


def test_panda_finger_joints_are_names_of_the_coupled_robot():
    from tests.rigid.pinocchio_map import robots_dir

    robots = robots_dir()
    if robots is None:
        pytest.skip("example-robot-data not installed")

    panda = load_urdf(robots / "panda_description/urdf/panda.urdf")
    assert isinstance(panda, ClusteredRigidSystem)
    assert {"panda_finger_joint1", "panda_finger_joint2"} <= set(panda.joint_names())
    assert panda.q_slice("panda_finger_joint1") == slice(7, 8)
    assert panda.joint("panda_finger_joint2").name == "panda_finger_joint2"
    with pytest.raises(DependentJointError, match="panda_finger_joint2.*joint_positions"):
        panda.q_slice("panda_finger_joint2")


# --------------------------------------------------------------------------- centre of mass
@pytest.mark.parametrize("backend", ["compiled", "reference"])
@pytest.mark.parametrize("factory", [mimic_gripper, four_bar])
def test_center_of_mass_of_a_clustered_system_takes_batches(factory, backend):
    system = factory()
    Q = system.neutral_configuration() + 0.05 * np.random.default_rng(1).normal(size=(3, system.nq))
    with use_backend(backend):
        c, J = system.center_of_mass(Q), system.center_of_mass_jacobian(Q)
        assert c.shape == (3, 3) and J.shape == (3, 3, system.nv)
        for s in range(3):
            assert np.array_equal(c[s], system.center_of_mass(Q[s]))
            assert np.array_equal(J[s], system.center_of_mass_jacobian(Q[s]))
        assert system.center_of_mass(Q[:0]).shape == (0, 3)


def _massless() -> object:
    b = SystemBuilder()
    b.add_body("a", None, Revolute([0, 0, 1], name="j"), mass=0.0)
    b.add_body("b", "a", Prismatic([1, 0, 0], name="s"), mass=0.0)
    return b.build()


@pytest.mark.parametrize("backend", ["compiled", "reference"])
def test_center_of_mass_of_a_massless_system_is_undefined_on_both_backends(backend):
    system = _massless()
    with use_backend(backend):
        for q in (np.zeros(2), np.zeros((2, 2))):
            for method in (system.center_of_mass, system.center_of_mass_jacobian):
                with pytest.raises(RigidSystemError, match="centre of mass is undefined: the system is massless"):
                    method(q)


@pytest.mark.parametrize("method", ["centroidal_momentum_matrix", "centroidal_momentum_matrix_rate"])
def test_the_centroidal_terms_of_a_massless_system_say_its_mass_as_a_real_number(method):
    """The rate's complex step said "the total mass is 0j"."""
    system = _massless()
    with pytest.raises(RigidSystemError, match=r"the total mass is 0, so there is no centre of mass and no frame G at it"):
        getattr(system, method)(np.zeros(2), np.ones(2)) if method.endswith("rate") else getattr(system, method)(
            np.zeros(2))


def test_center_of_mass_of_a_system_with_no_moving_body_is_undefined():
    system = SystemBuilder().build()
    for method in (system.center_of_mass, system.center_of_mass_jacobian):
        with pytest.raises(RigidSystemError, match="no moving body"):
            method(np.zeros(0))


# --------------------------------------------------------------------------- the command line
FACTORIES = {
    "raises": "def f():\n    raise RuntimeError('boom')\n",
    "needs_argument": "def f(n):\n    return n\n",
    "syntax_error": "def f(:\n    pass\n",
    "raises_at_import": "raise ValueError('broken at import')\ndef f():\n    pass\n",
}
CAUSES = {"raises": "factory 'f' raised RuntimeError: boom", "needs_argument": "cannot be called without arguments",
          "syntax_error": "SyntaxError", "raises_at_import": "ValueError: broken at import"}


@pytest.mark.parametrize("command", ["verify", "info"])
@pytest.mark.parametrize("kind", sorted(FACTORIES))
def test_a_broken_model_factory_is_one_line_naming_it(tmp_path, monkeypatch, capsys, kind, command):
    from sko.cli import main

    module = f"hostile_factory_{kind}_{command}"
    (tmp_path / f"{module}.py").write_text(FACTORIES[kind])
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main([command, "--model", f"{module}:f"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("error: ") and "Traceback" not in err
    assert f"--model {module}:f" in err and CAUSES[kind] in err, err


def _run(*args: str, env: dict) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), **env)
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_sko_backend_garbage_is_named_at_first_use_and_backend_overrides_it():
    garbage = {"SKO_BACKEND": "garbage"}
    code = ("import numpy as np\nfrom sko.examples.rigid import planar_chain\nfrom sko.engine import use_backend\n"
            "chain = planar_chain(2)\n"  # importing and building do not fail
            "try:\n    chain.mass_matrix(np.zeros(2))\nexcept Exception as exc:\n    print(type(exc).__name__, exc)\n"
            "with use_backend('reference'):\n    print(chain.mass_matrix(np.zeros(2)).shape)\n")
    proc = _run("-c", code, env=garbage)
    assert proc.returncode == 0, proc.stderr
    first, second = proc.stdout.strip().splitlines()
    assert first.startswith("SKOError") and "SKO_BACKEND='garbage'" in first and "'compiled', 'reference'" in first
    assert second == "(2, 2)"
    proc = _run("-m", "sko", "verify", "--model", "jain-tree", "--check", "crba", "--summary", "--backend", "reference",
                env=garbage)
    assert proc.returncode == 0 and "1 passed" in proc.stdout, proc.stderr
    proc = _run("-m", "sko", "info", env=garbage)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "SKO_BACKEND='garbage'" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


# --------------------------------------------------------------------------- christoffel
def _spinners(coupled: bool):
    """Bodies with isotropic inertia spinning about their centres of mass (oblique axes): the
    velocity products vanish identically, both sides of the check are rounding noise."""
    b = SystemBuilder(gravity=[0, 0, -9.81])
    b.add_body("a", None, Revolute([1, 1, 1], name="ja"), placement=pose_transform([0.1, 0.2, 0.3]), mass=1.0,
               inertia_com=0.4 * np.eye(3))
    if coupled:
        b.add_body("b", None, Revolute([1, -2, 0.5], name="jb"), placement=pose_transform([1, 0, 0]), mass=2.0,
                   inertia_com=0.3 * np.eye(3))
        b.add_coupling("gear", "ja", "jb", ratio=-2.0)
    return b.build()


@pytest.mark.parametrize("coupled", [False, True])
def test_christoffel_passes_where_the_velocity_products_vanish_identically(coupled):
    from sko.verify import run
    from sko.verify.models import case_from
    from sko.verify.physics import _even_part, velocity_product_forces

    system = _spinners(coupled)
    case = case_from(system, "spinners", seed=0)
    q, v = np.asarray(case.q, dtype=float), np.asarray(case.v, dtype=float)
    expected, scale = velocity_product_forces(system, q, v)
    assert scale == 0 and np.abs(_even_part(system, q, v)).max() < 1e-15  # noise on one side, exact 0 on the other
    for seed in range(3):
        results = run(models=[case_from(system, "spinners", seed=seed)], checks=["christoffel"])
        assert [r.passed for r in results] == [True], [(r.residual, r.detail) for r in results]


# --------------------------------------------------------------------------- inertia repair
_ROT = np.linalg.qr(np.array([[1.0, 0.3, -0.2], [0.1, 1.0, 0.4], [-0.3, 0.2, 1.0]]))[0]


def _unphysical(size: float) -> np.ndarray:
    """Principal moments 0.5, 0.5, 1.5 (times ``size``) in rotated axes: the triangle inequality
    is broken by 0.2 of m r²."""
    return _ROT @ np.diag([0.5, 0.5, 1.5]) @ _ROT.T * size


@pytest.mark.parametrize("size", [1e-320, 1e-300, 1.0, 1e300, 1e308])
def test_inertia_violation_and_repair_at_any_scale(size):
    Ic = _unphysical(size)
    assert inertia_violation(1.0, [0, 0, 0], Ic) == pytest.approx(0.2, rel=1e-2)
    with pytest.raises(SKOError, match="break the triangle inequality.*by 0.2 "):
        check_physical_inertia(1.0, [0, 0, 0], Ic, "link 'x'")
    fixed = nearest_physical_inertia(Ic)
    assert np.isfinite(fixed).all()
    check_physical_inertia(1.0, [0, 0, 0], fixed, "link 'x'")  # a repaired inertia passes (no "load with repair")
    message = repair_description("link 'x'", Ic, fixed)
    assert "changed by 0 " not in message and "inf" not in message and "nan" not in message
    assert "(0.17 relative)" in message or "(0.174 relative)" in message, message


def test_inertia_scale_does_not_overflow_on_the_way():
    assert inertia_scale(1.0, [0, 0, 0], np.eye(3) * 1e308) == pytest.approx(1.5e308)
    assert inertia_scale(1e-300, [1e200, 0, 0], np.zeros((3, 3))) == pytest.approx(1e100)
    # a huge m‖c‖² makes the violation negligible, by the definition: not an overflow to 0
    assert 0 < inertia_violation(1e300, [1e3, 0, 0], _unphysical(1e300)) < 1e-6


def test_urdf_repair_of_huge_and_tiny_moments_loads(tmp_path):
    """Repair happens at 1e300 (the violation check read 0 once its squares overflowed, and the
    next check then told a user who had asked for a repair to load with inertia='repair')."""
    from sko.inertia import InertiaRepairWarning

    text = """<robot name="r"><link name="base"/>
<joint name="j" type="revolute"><parent link="base"/><child link="l"/><axis xyz="0 0 1"/>
<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
<link name="l"><inertial><mass value="1"/><inertia ixx="{a}" iyy="{a}" izz="{c}" ixy="{d}" ixz="0" iyz="0"/></inertial>
</link></robot>"""
    for size in (1e-300, 1e300):
        path = tmp_path / f"robot_{size:g}.urdf"
        path.write_text(text.format(a=0.5 * size, c=1.5 * size, d=0.1 * size))
        with pytest.raises(SKOError, match="load with inertia='repair'"):
            load_urdf(path)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            system = load_urdf(path, inertia="repair")
        assert any(isinstance(w.message, InertiaRepairWarning) for w in caught)
        assert system.nv == 1

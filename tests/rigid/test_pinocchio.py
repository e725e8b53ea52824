"""Every robot of example-robot-data against Pinocchio (RIGID.md, *Interoperability*).

Each URDF loads with the strict inertia check where its inertias are physical, and otherwise with
``inertia="repair"`` (which must warn); Pinocchio then reads the same file with the repaired
inertias written back, so both sides model the same bodies. Coordinates are mapped by joint name
through :class:`sko.interop.PinocchioMap`. Fixed base for every robot, floating base as well for
legged, humanoid and aerial ones.
"""

import warnings
import xml.etree.ElementTree as ET
import zlib

import numpy as np
import pytest

from sko.errors import URDFError
from sko.graphs.errors import NotPositiveDefiniteError
from sko.inertia import InertiaRepairWarning, nearest_physical_inertia
from sko.interop import InteropError, PinocchioMap
from sko.io.urdf import parse_urdf
from sko.io import load_urdf
from tests.rigid.pinocchio_map import robots_dir

pin = pytest.importorskip("pinocchio")
ROBOTS_DIR = robots_dir()
if ROBOTS_DIR is None:
    pytest.skip("example-robot-data is not installed", allow_module_level=True)

URDFS = sorted(str(p.relative_to(ROBOTS_DIR)) for p in ROBOTS_DIR.rglob("*.urdf"))
#: Robot folders that move freely: legged, humanoid and aerial.
FLOATING = ("a1", "alex", "alexander", "anymal", "b1", "bolt", "borinot", "cassie", "centauro", "g1", "go1", "go2",
            "hector", "hextilt", "human", "hyq", "icub", "iris", "laikago", "quadruped", "romeo", "simple_humanoid",
            "solo", "talos")
STUB = "ur_description/urdf/ur3.urdf"  # an empty <robot> in the package
STATES = 10
RTOL = 1e-9


def _floating(rel: str) -> bool:
    return rel.split("_description")[0].split("_data")[0].split("/")[0] in FLOATING


def _cases():
    for rel in URDFS:
        yield pytest.param(rel, False, id=f"{rel}-fixed")
        if _floating(rel):
            yield pytest.param(rel, True, id=f"{rel}-floating")


def _repaired_text(path) -> str:
    """The URDF with every link inertia replaced by the nearest physical one (what repair does)."""
    tree = ET.parse(path)
    for el in tree.getroot().iter("inertia"):
        keys = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
        ixx, ixy, ixz, iyy, iyz, izz = (float(el.get(k)) for k in keys)
        fixed = nearest_physical_inertia(np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]]))
        for k, (i, j) in zip(keys, ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))):
            el.set(k, repr(float(fixed[i, j])))
    return ET.tostring(tree.getroot(), encoding="unicode")


def _load(path, floating: bool):
    """Ours (strict if physical, repaired otherwise) and Pinocchio's model of the same bodies
    (mimic joints independent on both sides, Pinocchio's default; coupled mimic joints are
    compared in tests/embedding)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            system = load_urdf(path, floating_base=floating, mimic="independent")
        text = None
    except URDFError as exc:
        if "inertia='repair'" not in str(exc):
            raise
        with pytest.warns(InertiaRepairWarning, match="nearest physical"):
            system = load_urdf(path, floating_base=floating, inertia="repair", mimic="independent")
        text = _repaired_text(path)
    root = (pin.JointModelFreeFlyer(),) if floating else ()
    model = pin.buildModelFromXML(text, *root) if text is not None else pin.buildModelFromUrdf(str(path), *root)
    return system, model


def _relative_error(ours, theirs):
    return np.abs(ours - theirs).max(initial=0.0) / max(np.abs(theirs).max(initial=0.0), 1e-300)


@pytest.mark.parametrize("rel, floating", list(_cases()))
def test_robot_agrees_with_pinocchio(rel, floating):
    path = ROBOTS_DIR / rel
    if rel == STUB:
        with pytest.raises(URDFError, match="the URDF has no <link>"):
            load_urdf(path)
        return
    system, model = _load(path, floating)
    cmap = PinocchioMap(system, model)
    assert system.nv == model.nv
    assert system.total_mass == pytest.approx(sum(model.inertias[i].mass for i in range(1, model.njoints)),
                                              rel=1e-12, abs=1e-12)
    data = model.createData()
    rng = np.random.default_rng(zlib.crc32(rel.encode()))
    worst = {"M": 0.0, "ID": 0.0, "FD": 0.0}
    for _ in range(STATES):
        q = system.random_configuration(rng)
        qd, qdd, tau = rng.normal(size=(3, system.nv))
        q_pin = cmap.q(q)
        np.testing.assert_allclose(cmap.q_back(q_pin), q, atol=1e-12)  # angles in (−π, π], unit quaternions
        M_pin = pin.crba(model, data, q_pin)
        M_pin = np.triu(M_pin) + np.triu(M_pin, 1).T
        worst["M"] = max(worst["M"], _relative_error(cmap.matrix(system.mass_matrix(q)), M_pin))
        tau_pin = pin.rnea(model, data, q_pin, cmap.v(qd), cmap.v(qdd))
        worst["ID"] = max(worst["ID"], _relative_error(system.inverse_dynamics(q, qd, qdd), cmap.v_back(tau_pin)))
        if system.nv and np.linalg.eigvalsh(M_pin).min() <= 1e-13 * np.abs(M_pin).max():
            # a massless tip link: ℳ is singular, and the recursion needing ℳ⁻¹ names the body
            with pytest.raises(NotPositiveDefiniteError, match="hinge inertia D = H P H\\* of body"):
                system.forward_dynamics(q, qd, tau)
        elif system.nv:
            qdd_pin = pin.aba(model, data, q_pin, cmap.v(qd), cmap.v(tau))
            worst["FD"] = max(worst["FD"], _relative_error(cmap.v(system.forward_dynamics(q, qd, tau)), qdd_pin))
    assert max(worst.values()) < RTOL, f"{rel}: worst relative errors {worst}"


def test_maps_are_inverse_and_reject_other_models():
    path = ROBOTS_DIR / "solo_description/robots/solo12.urdf"
    system = load_urdf(path, floating_base=True)
    model = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    cmap = PinocchioMap(system, model)
    rng = np.random.default_rng(0)
    v = rng.normal(size=system.nv)
    np.testing.assert_array_equal(cmap.v_back(cmap.v(v)), v)
    M = rng.normal(size=(system.nv, system.nv))
    np.testing.assert_array_equal(cmap.matrix_back(cmap.matrix(M)), M)
    q_pin = pin.randomConfiguration(model, -np.ones(model.nq), np.ones(model.nq))
    np.testing.assert_allclose(cmap.q(cmap.q_back(q_pin)), q_pin, atol=1e-12)
    with pytest.raises(InteropError, match="joints differ"):
        PinocchioMap(system, pin.buildModelFromUrdf(str(path)))  # no root_joint in Pinocchio's model


def test_planar_and_continuous_joints_map_onto_pinocchio():
    """A planar joint is ``(x, y, cos θ, sin θ)`` with ``ν = (v_x, v_y, ω)`` in Pinocchio."""
    inertial = ('<inertial><origin xyz="0.1 0.05 0.02"/><mass value="{}"/>'
                '<inertia ixx="0.1" ixy="0" ixz="0" iyy="0.2" iyz="0" izz="0.25"/></inertial>')
    urdf = f"""<robot name="puck"><link name="ground"/><link name="puck">{inertial.format(2.0)}</link>
      <link name="arm">{inertial.format(1.0)}</link>
      <joint name="slide" type="planar"><parent link="ground"/><child link="puck"/><origin xyz="0 0 0.3" rpy="0.2 0.1 0"/>
       <axis xyz="0 0 1"/></joint>
      <joint name="hinge" type="continuous"><parent link="puck"/><child link="arm"/><origin xyz="0.3 0 0"/>
       <axis xyz="0 1 0"/></joint></robot>"""
    system, model = parse_urdf(urdf), pin.buildModelFromXML(urdf)
    data, cmap = model.createData(), PinocchioMap(system, model)
    rng = np.random.default_rng(11)
    for _ in range(5):
        q = system.random_configuration(rng)
        v, a, tau = rng.normal(size=(3, system.nv))
        np.testing.assert_allclose(cmap.q_back(cmap.q(q)), q, atol=1e-14)
        M = pin.crba(model, data, cmap.q(q))
        np.testing.assert_allclose(cmap.matrix(system.mass_matrix(q)), np.triu(M) + np.triu(M, 1).T, atol=1e-13)
        np.testing.assert_allclose(system.inverse_dynamics(q, v, a),
                                   cmap.v_back(pin.rnea(model, data, cmap.q(q), cmap.v(v), cmap.v(a))), atol=1e-12)
        np.testing.assert_allclose(cmap.v(system.forward_dynamics(q, v, tau)),
                                   pin.aba(model, data, cmap.q(q), cmap.v(v), cmap.v(tau)), atol=1e-11)

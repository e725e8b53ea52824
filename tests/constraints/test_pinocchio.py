"""Constrained and impulse dynamics against Pinocchio's ``constraintDynamics`` and
``impulseDynamics`` (CONSTRAINTS.md §3, §6): solo12 on four 3-D feet, talos on both feet 6-D, a
UR5 with its tool welded (6-D) and held at a point (3-D), each reference frame Pinocchio takes,
and a 6-D constraint on the floating base's root reproducing the fixed-base dynamics."""

import zlib

import numpy as np
import pytest

from sko.constraints import FrameContact, PointContact
from sko.interop import PinocchioMap
from sko.io import load_urdf
from tests.rigid.pinocchio_map import robots_dir

pin = pytest.importorskip("pinocchio")
ROBOTS_DIR = robots_dir()
if ROBOTS_DIR is None:
    pytest.skip("example-robot-data is not installed", allow_module_level=True)

RTOL = 1e-10
STATES = 3
SOLO = ("solo_description/robots/solo12.urdf", True, ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"))
TALOS = ("talos_data/robots/talos_reduced.urdf", True, ("left_sole_link", "right_sole_link"))
UR5 = ("ur_description/urdf/ur5_robot.urdf", False, ("tool0",))
CASES = [(SOLO, "3d"), (TALOS, "6d"), (UR5, "6d"), (UR5, "3d")]
REFERENCES = ("local", "local_world_aligned")  # Pinocchio's rigid constraints take these two


def _relative(ours, theirs) -> float:
    return float(np.abs(ours - theirs).max() / max(np.abs(theirs).max(), 1e-300))


_LOADED: dict = {}


def _load(rel: str, floating: bool):
    if (rel, floating) not in _LOADED:
        path = ROBOTS_DIR / rel
        system = load_urdf(path, floating_base=floating)
        model = pin.buildModelFromUrdf(str(path), *((pin.JointModelFreeFlyer(),) if floating else ()))
        _LOADED[rel, floating] = system, model, PinocchioMap(system, model)
    return _LOADED[rel, floating]


def _pinocchio_constraints(model, frames, kind: str, reference: str):
    ref = {"local": pin.ReferenceFrame.LOCAL, "local_world_aligned": pin.ReferenceFrame.LOCAL_WORLD_ALIGNED}[reference]
    contact = pin.ContactType.CONTACT_3D if kind == "3d" else pin.ContactType.CONTACT_6D
    cms = []
    for f in frames:
        frame = model.frames[model.getFrameId(f)]
        cms.append(pin.RigidConstraintModel(contact, model, frame.parentJoint, frame.placement, ref))
    cms = pin.StdVec_RigidConstraintModel(cms)
    return cms, pin.StdVec_RigidConstraintData([c.createData() for c in cms])


def _exact():
    return pin.ProximalSettings(1e-14, 1e-14, 0.0, 1)  # no proximal regularisation: the exact KKT answer


@pytest.mark.parametrize("reference", REFERENCES)
@pytest.mark.parametrize("robot, kind", CASES, ids=["solo12-3d", "talos-6d", "ur5-6d", "ur5-3d"])
def test_constrained_dynamics_agrees_with_pinocchio(robot, kind, reference):
    rel, floating, frames = robot
    system, model, cmap = _load(rel, floating)
    make = PointContact if kind == "3d" else FrameContact
    ours = [make(f, reference=reference) for f in frames]
    cms, cds = _pinocchio_constraints(model, frames, kind, reference)
    data = model.createData()
    pin.initConstraintDynamics(model, data, cms, cds)
    rng = np.random.default_rng(zlib.crc32(f"{rel}{kind}{reference}".encode()))
    for _ in range(STATES):
        q = system.random_configuration(rng)
        v, tau = rng.normal(size=(2, system.nv))
        a = pin.constraintDynamics(model, data, cmap.q(q), cmap.v(v), cmap.v(tau), cms, cds, _exact())
        dv, lam = system.constrained_dynamics(q, v, tau, ours)
        assert _relative(cmap.v(dv), a) < RTOL
        assert _relative(lam, data.lambda_c) < RTOL
        v_plus_pin = pin.impulseDynamics(model, data, cmap.q(q), cmap.v(v), cms, cds, 0.3, _exact()).copy()
        v_plus, impulses = system.impulse_dynamics(q, v, ours, restitution=0.3)
        assert _relative(cmap.v(v_plus), v_plus_pin) < RTOL
        assert _relative(impulses, data.impulse_c) < RTOL


def test_a_weld_of_the_floating_root_gives_the_fixed_base_dynamics():
    """solo12 with its base at the world origin welded (6-D, at rest) moves its legs as the
    fixed-base solo12 does, in each reference frame."""
    rel = SOLO[0]
    floating, _, _ = _load(rel, True)
    fixed, _, _ = _load(rel, False)
    nb_q, nb_v = floating.nq - fixed.nq, floating.nv - fixed.nv
    weld = floating.bodies[0]
    rng = np.random.default_rng(7)
    for reference in ("local", "world", "local_world_aligned"):
        q_legs = fixed.random_configuration(rng)
        v_legs, tau_legs = rng.normal(size=(2, fixed.nv))
        q = np.concatenate([floating.neutral_configuration()[:nb_q], q_legs])
        v = np.concatenate([np.zeros(nb_v), v_legs])
        tau = np.concatenate([np.zeros(nb_v), tau_legs])
        dv, lam = floating.constrained_dynamics(q, v, tau, [FrameContact(weld, reference=reference)])
        expected = fixed.forward_dynamics(q_legs, v_legs, tau_legs)
        np.testing.assert_allclose(dv[:nb_v], 0.0, atol=1e-10 * np.abs(expected).max())
        assert _relative(dv[nb_v:], expected) < RTOL


@pytest.mark.parametrize("reference", REFERENCES)
@pytest.mark.parametrize("robot, kind", CASES[:2], ids=["solo12-3d", "talos-6d"])
def test_derivatives_agree_with_pinocchio(robot, kind, reference):
    """The complex-step derivatives of ``(v̇, λ)`` equal ``computeConstraintDynamicsDerivatives``
    column by column (tangent columns along ``integrate``, DERIVATIVES.md §1)."""
    rel, floating, frames = robot
    system, model, cmap = _load(rel, floating)
    make = PointContact if kind == "3d" else FrameContact
    cms, cds = _pinocchio_constraints(model, frames, kind, reference)
    data = model.createData()
    pin.initConstraintDynamics(model, data, cms, cds)
    rng = np.random.default_rng(zlib.crc32(f"{rel}{reference}derivatives".encode()))
    q = system.random_configuration(rng)
    v, tau = rng.normal(size=(2, system.nv))
    pin.constraintDynamics(model, data, cmap.q(q), cmap.v(v), cmap.v(tau), cms, cds, _exact())
    pin.computeConstraintDynamicsDerivatives(model, data, cms, cds)
    d = system.constrained_dynamics_derivatives(q, v, tau, [make(f, reference=reference) for f in frames])

    def columns(A):  # our tangent columns in Pinocchio's order (rows are constraint rows)
        return np.array([cmap.v(row) for row in A])

    for ours, theirs in ((cmap.matrix(d.ddv_dq), data.ddq_dq), (cmap.matrix(d.ddv_dv), data.ddq_dv),
                         (cmap.matrix(d.ddv_dtau), data.ddq_dtau), (columns(d.dlam_dq), data.dlambda_dq),
                         (columns(d.dlam_dv), data.dlambda_dv), (columns(d.dlam_dtau), data.dlambda_dtau)):
        assert _relative(ours, theirs) < 1e-10


@pytest.mark.parametrize("reference", REFERENCES)
@pytest.mark.parametrize("robot, kind", CASES[:2], ids=["solo12-3d", "talos-6d"])
def test_baumgarte_stabilisation_agrees_with_pinocchio(robot, kind, reference):
    """Targets away from the frames (0.3 m, 0.8 rad), ``kp``, ``kd``: the position error is
    Pinocchio's (``p1 − p2`` for a point, the SE(3) logarithm ``log(ᶜ²M_c1)`` for a frame)."""
    from scipy.spatial.transform import Rotation

    rel, floating, frames = robot
    system, model, cmap = _load(rel, floating)
    make = PointContact if kind == "3d" else FrameContact
    rng = np.random.default_rng(zlib.crc32(f"{rel}{reference}baumgarte".encode()))
    cms, _ = _pinocchio_constraints(model, frames, kind, reference)
    ours = []
    for cm, f in zip(cms, frames):
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = Rotation.from_rotvec(rng.normal(size=3) * 0.8).as_matrix(), rng.normal(size=3) * 0.3
        cm.joint2_placement = pin.SE3(T[:3, :3], T[:3, 3])
        cm.setBaumgarteCorrectorParameters(pin.BaumgarteCorrectorParameters(7.0, 3.0))
        ours.append(make(f, reference=reference, baumgarte=(7.0, 3.0), target=T))
    cms = pin.StdVec_RigidConstraintModel(list(cms))
    cds = pin.StdVec_RigidConstraintData([c.createData() for c in cms])
    data = model.createData()
    pin.initConstraintDynamics(model, data, cms, cds)
    q = system.random_configuration(rng)
    v, tau = rng.normal(size=(2, system.nv))
    a = pin.constraintDynamics(model, data, cmap.q(q), cmap.v(v), cmap.v(tau), cms, cds, _exact())
    dv, lam = system.constrained_dynamics(q, v, tau, ours)
    assert _relative(cmap.v(dv), a) < RTOL
    assert _relative(lam, data.lambda_c) < RTOL

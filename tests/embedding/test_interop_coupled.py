"""State maps of coupled systems (issue 29, item 4): :class:`sko.interop.PinocchioMap` onto
Pinocchio's mimic model (a permutation) and onto its full model (mimic joints as ordinary joints:
lifted by ``G``, forces and ``ℳ`` projected by ``Gᵀ``), and :class:`sko.interop.MujocoMap` onto an
MJCF with joint equalities (``qpos`` holds every joint).

The references are the peers' own algorithms at the lifted state: ``ℳ = Gᵀ ℳ_full G``,
``τ = Gᵀ τ_full(G q + d, G ν, G ν̇)`` (``Ġ = 0`` for constant ratios), with ``G`` assembled here
from :meth:`~sko.systems.clustered.ClusteredRigidSystem.constraint_matrices` by joint name, not by
the map under test."""

from __future__ import annotations

import numpy as np
import pytest

from sko.graphs.errors import DimensionError
from sko.interop import InteropError, MujocoMap, PinocchioMap
from sko.io.urdf import parse_urdf
from sko.systems.clustered import ClusteredRigidSystem
from sko.io import load_mjcf, load_urdf
from tests.embedding.test_mjcf_coupling import CHAIN, HAND
from tests.embedding.test_mjcf_interop_hostile import FLOATING
from tests.embedding.test_pinocchio_mimic import CROSS_BRANCH, PINOCCHIO, ROBOTS, _load

pin = pytest.importorskip("pinocchio")
mujoco = pytest.importorskip("mujoco")
needs_robots = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data not installed")


def _full_G(system: ClusteredRigidSystem, model, q) -> np.ndarray:
    """``G`` (Pinocchio's full velocity × ours), its rows picked by joint name."""
    G = system.constraint_matrices(q)[0]
    spanning, by_name = system.spanning_system(), system.joint_names()
    out = np.zeros((model.nv, system.nv))
    for i in range(1, model.njoints):
        jm, vs = model.joints[i], spanning.dof_slices[by_name[model.names[i]]]
        out[jm.idx_v:jm.idx_v + jm.nv] = G[vs]
    return out


def _sym(M: np.ndarray) -> np.ndarray:
    return np.triu(M) + np.triu(M, 1).T


def _robot(rel: str, mimic: bool = True):
    """Ours (coupled), Pinocchio's full model and, with ``mimic``, its mimic model."""
    system, text = _load(rel)
    assert isinstance(system, ClusteredRigidSystem)
    return system, pin.buildModelFromXML(text), pin.buildModelFromXML(text, mimic=True) if mimic else None


@needs_robots
@pytest.mark.parametrize("rel", PINOCCHIO + CROSS_BRANCH)
def test_coupled_robot_maps_onto_pinocchios_full_model(rel):
    """Also the couplings across branches, which Pinocchio's mimic model refuses."""
    system, full, _ = _robot(rel, mimic=False)
    data, to_pin = full.createData(), PinocchioMap(system, full)
    assert to_pin.v_perm is None and full.nv > system.nv
    rng = np.random.default_rng(4)
    for _ in range(3):
        q = rng.uniform(-0.5, 0.5, system.nq)
        v, a = rng.normal(size=(2, system.nv))
        G = _full_G(system, full, q)
        np.testing.assert_array_equal(to_pin.lift, G)
        qp = to_pin.q(q)
        theta = system.joint_positions(q)  # every joint's value, by body
        for i in range(1, full.njoints):
            jm, t = full.joints[i], theta[system.joint_names()[full.names[i]]]
            expected = [np.cos(t[0]), np.sin(t[0])] if jm.nq == 2 and jm.nv == 1 else t
            np.testing.assert_allclose(qp[jm.idx_q:jm.idx_q + jm.nq], expected, rtol=0, atol=1e-15)
        M_full = _sym(pin.crba(full, data, qp))
        M = system.mass_matrix(q)
        scale = np.abs(M_full).max()
        np.testing.assert_allclose(G.T @ M_full @ G, M, rtol=0, atol=1e-12 * scale)
        np.testing.assert_allclose(to_pin.matrix_back(M_full), M, rtol=0, atol=1e-12 * scale)
        np.testing.assert_allclose(to_pin.v(v), G @ v, rtol=0, atol=0)
        tau_full = pin.rnea(full, data, qp, G @ v, G @ a)  # q̈_full = G q̈ (Ġ = 0)
        tau = system.inverse_dynamics(q, v, a)
        tol = 1e-11 * max(1.0, np.abs(tau_full).max())
        np.testing.assert_allclose(G.T @ tau_full, tau, rtol=0, atol=tol)
        np.testing.assert_allclose(to_pin.force_back(tau_full), tau, rtol=0, atol=tol)
        # round trips are the identity
        np.testing.assert_allclose(to_pin.q_back(qp), q, rtol=0, atol=1e-14)
        np.testing.assert_allclose(to_pin.v_back(to_pin.v(v)), v, rtol=0, atol=0)


@needs_robots
@pytest.mark.parametrize("rel", PINOCCHIO)
def test_coupled_robot_maps_onto_pinocchios_mimic_model_one_to_one(rel):
    system, full, mimic = _robot(rel)
    assert mimic.nv == system.nv
    data, to_pin, to_full = mimic.createData(), PinocchioMap(system, mimic), PinocchioMap(system, full)
    assert sorted(to_pin.v_perm) == list(range(system.nv))
    rng = np.random.default_rng(5)
    for _ in range(3):
        q = rng.uniform(-0.5, 0.5, system.nq)
        v, a = rng.normal(size=(2, system.nv))
        qp = to_pin.q(q)
        M_pin, M = _sym(pin.crba(mimic, data, qp)), system.mass_matrix(q)
        scale = np.abs(M_pin).max()
        np.testing.assert_allclose(to_pin.matrix(M), M_pin, rtol=0, atol=1e-12 * scale)
        np.testing.assert_allclose(to_pin.matrix_back(M_pin), M, rtol=0, atol=1e-12 * scale)
        tau_pin = pin.rnea(mimic, data, qp, to_pin.v(v), to_pin.v(a))
        tau = system.inverse_dynamics(q, v, a)
        tol = 1e-11 * max(1.0, np.abs(tau_pin).max())
        np.testing.assert_allclose(to_pin.v_back(tau_pin), tau, rtol=0, atol=tol)
        np.testing.assert_allclose(to_pin.force_back(tau_pin), tau, rtol=0, atol=tol)
        # the mimic model and the full model agree through their maps
        tau_full = pin.rnea(full, full.createData(), to_full.q(q), to_full.v(v), to_full.v(a))
        np.testing.assert_allclose(to_full.force_back(tau_full), tau_pin[to_pin.v_perm.argsort()], rtol=0, atol=tol)
        np.testing.assert_allclose(to_pin.q_back(qp), q, rtol=0, atol=1e-14)
        A = rng.normal(size=(system.nv, system.nv))
        np.testing.assert_array_equal(to_pin.matrix_back(to_pin.matrix(A)), A)


@needs_robots
def test_derivatives_of_the_inverse_dynamics_map_back_by_G():
    system, full, _ = _robot("panda_description/urdf/panda.urdf")
    to_pin, rng = PinocchioMap(system, full), np.random.default_rng(6)
    q = rng.uniform(-0.5, 0.5, system.nq)
    v, a = rng.normal(size=(2, system.nv))
    ours = system.inverse_dynamics_derivatives(q, v, a)
    data = full.createData()  # Pinocchio's results are views of it
    dq, dv, da = (np.array(d) for d in pin.computeRNEADerivatives(full, data, to_pin.q(q), to_pin.v(v), to_pin.v(a)))
    for d_ours, d_pin in zip(ours, (dq, dv, _sym(da))):
        tol = 1e-11 * max(1.0, np.abs(d_pin).max())
        np.testing.assert_allclose(to_pin.matrix_back(d_pin), d_ours, rtol=0, atol=tol)


@needs_robots
def test_full_state_that_breaks_a_mimic_coupling_is_refused_naming_the_joint():
    system, full, _ = _robot("panda_description/urdf/panda.urdf")
    to_pin = PinocchioMap(system, full)
    q, v = system.random_configuration(np.random.default_rng(7)), np.linspace(-1, 1, system.nv)
    idx = full.joints[full.getJointId("panda_finger_joint2")].idx_q
    qp, vp = to_pin.q(q), to_pin.v(v)
    kept = qp.copy(), vp.copy()
    qp[idx] += 1e-3
    vp[idx] -= 0.5
    with pytest.raises(InteropError, match=r"Pinocchio's configuration breaks the couplings at joint "
                                           r"'panda_finger_joint2'"):
        to_pin.q_back(qp)
    with pytest.raises(InteropError, match=r"velocity-like vector breaks the couplings at joint 'panda_finger_joint2'"):
        to_pin.v_back(vp)
    # a rounding-sized difference is not an error
    qp, vp = kept[0].copy(), kept[1].copy()
    qp[idx] *= 1 + 1e-13
    np.testing.assert_allclose(to_pin.q_back(qp), q, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(to_pin.v_back(vp), v)
    np.testing.assert_array_equal(vp, kept[1])  # inputs left alone


@needs_robots
def test_shapes_and_maps_with_no_meaning_are_refused():
    system, full, mimic = _robot("panda_description/urdf/panda.urdf")
    to_pin = PinocchioMap(system, full)
    n, m = system.nv, full.nv
    with pytest.raises(DimensionError, match=rf"Pinocchio q has shape \({n},\), expected \({full.nq},\)"):
        to_pin.q_back(np.zeros(n))
    with pytest.raises(DimensionError, match=rf"shape \({n},\), expected \({m},\)"):
        to_pin.v_back(np.zeros(n))
    with pytest.raises(DimensionError, match=rf"peer force has shape \({n},\), expected \({m},\)"):
        to_pin.force_back(np.zeros(n))
    with pytest.raises(DimensionError, match=rf"peer matrix has shape \({n}, {n}\), expected \({m}, {m}\)"):
        to_pin.matrix_back(np.eye(n))
    with pytest.raises(DimensionError, match=rf"velocity-like vector has shape \({m},\), expected \({n},\)"):
        to_pin.v(np.zeros(m))
    with pytest.raises(InteropError, match=r"coupled joints \['panda_finger_joint2'\] as coordinates of their own.*"
                                           r"matrix_back"):
        to_pin.matrix(np.eye(n))


@needs_robots
def test_mimic_model_against_an_uncoupled_or_differently_coupled_system_is_refused():
    path = ROBOTS / "panda_description/urdf/panda.urdf"
    mimic = pin.buildModelFromUrdf(str(path), mimic=True)
    free = load_urdf(path, mimic="independent")
    with pytest.raises(InteropError, match=r"'panda_finger_joint2' is a mimic joint in Pinocchio's model but "
                                           r"independent here \(load the URDF with mimic='couple'\)"):
        PinocchioMap(free, mimic)
    text = path.read_text().replace('<mimic joint="panda_finger_joint1"/>',
                                    '<mimic joint="panda_finger_joint1" multiplier="2" offset="0.01"/>')
    assert text != path.read_text()
    other = parse_urdf(text)
    with pytest.raises(InteropError, match=r"'panda_finger_joint2' mimics with ratio 1(\.0)? and offset 0(\.0)? in "
                                           r"Pinocchio's model, and is coupled here as "
                                           r"2 × 'panda_finger_joint1' \+ 0.01"):
        PinocchioMap(other, mimic)
    PinocchioMap(other, pin.buildModelFromXML(text, mimic=True))  # the same coupling on both sides


def test_closed_loops_are_refused_naming_them():
    from sko.examples.embedding import four_bar

    system = four_bar()
    with pytest.raises(InteropError, match=r"closes the loops \[.*\]: state maps handle coupled joints"):
        PinocchioMap(system, pin.Model())


# ---------------------------------------------------------------------------------- MuJoCo
def _mujoco(model, qpos, qvel=None):
    """MuJoCo's ``ℳ`` (``mj_fullM``), ``qfrc_bias`` and the residuals of its equality rows."""
    data = mujoco.MjData(model)
    data.qpos[:] = qpos
    if qvel is not None:
        data.qvel[:] = qvel
    mujoco.mj_forward(model, data)
    M = np.zeros((model.nv, model.nv))
    mujoco.mj_fullM(model, data, M)
    rows = data.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY
    return M, data.qfrc_bias.copy(), data.efc_pos[rows].copy()


@pytest.mark.parametrize("xml", [CHAIN, HAND], ids=["chain", "floating-hand"])
def test_joint_equalities_map_onto_mujoco(xml):
    system, model = load_mjcf(xml), mujoco.MjModel.from_xml_string(xml)
    to_mj = MujocoMap(system, model)
    assert to_mj.v_perm is None and model.nv > system.nv
    rng = np.random.default_rng(8)
    for _ in range(3):
        q = system.random_configuration(rng)
        v, a = rng.normal(size=(2, system.nv))
        qpos = to_mj.q(q)
        qvel = to_mj.v(v, q)
        M_mj, bias, residual = _mujoco(model, qpos, qvel)
        assert np.abs(residual).max() < 1e-12  # MuJoCo sees its equalities hold at the lifted state
        M, scale = system.mass_matrix(q), np.abs(M_mj).max()
        np.testing.assert_allclose(to_mj.matrix_back(M_mj, q), M, rtol=0, atol=1e-12 * scale)
        tau_mj = M_mj @ to_mj.acceleration(a, q, v) + bias  # MuJoCo's inverse dynamics, no constraint force
        tau = system.inverse_dynamics(q, v, a)
        np.testing.assert_allclose(to_mj.force_back(tau_mj, q), tau, rtol=0, atol=1e-11 * max(1.0, np.abs(tau).max()))
        # round trips are the identity
        np.testing.assert_allclose(to_mj.q_back(qpos), q, rtol=0, atol=1e-15)
        np.testing.assert_allclose(to_mj.v_back(qvel, q), v, rtol=0, atol=1e-14)
        np.testing.assert_allclose(to_mj.acceleration_back(to_mj.acceleration(a, q, v), q, v), a, rtol=0, atol=1e-13)


def test_mujoco_state_that_breaks_a_joint_equality_is_refused_naming_the_joint():
    system, model = load_mjcf(HAND), mujoco.MjModel.from_xml_string(HAND)
    to_mj = MujocoMap(system, model)
    q = system.random_configuration(np.random.default_rng(9))
    v = np.linspace(-1, 1, system.nv)
    qpos, qvel = to_mj.q(q), to_mj.v(v, q)
    rack = model.jnt_qposadr[model.joint("jr").id], model.jnt_dofadr[model.joint("jr").id]
    bad_q, bad_v = qpos.copy(), qvel.copy()
    bad_q[rack[0]] += 0.01
    bad_v[rack[1]] += 0.01
    kept = bad_q.copy()
    with pytest.raises(InteropError, match=r"MuJoCo's qpos breaks the couplings at joint 'jr'"):
        to_mj.q_back(bad_q)
    with pytest.raises(InteropError, match=r"MuJoCo's velocity-like vector breaks the couplings at joint 'jr'"):
        to_mj.v_back(bad_v, q)
    np.testing.assert_array_equal(bad_q, kept)
    with pytest.raises(DimensionError, match=rf"MuJoCo qpos has shape \({system.nq},\), expected \({model.nq},\)"):
        to_mj.q_back(q)
    with pytest.raises(DimensionError, match=rf"MuJoCo qfrc has shape \({system.nv},\), expected \({model.nv},\)"):
        to_mj.force_back(v, q)
    with pytest.raises(DimensionError, match=rf"\({system.nv}, {system.nv}\), expected \({model.nv}, {model.nv}\)"):
        to_mj.matrix_back(np.eye(system.nv), q)
    with pytest.raises(InteropError, match=r"coupled joints \['jr', 'jright'\] as coordinates of their own"):
        to_mj.matrix(np.eye(system.nv), q)


#: a floating torso (``ṗ`` in MuJoCo's world frame, ``v`` in our body frame) with a mimic joint,
#: which MuJoCo's URDF compiler turns into a joint equality
FLOATING_MIMIC = FLOATING.replace("</robot>", """
 <link name="finger"><inertial><origin xyz="0 0.1 0"/><mass value="0.5"/>
  <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.01"/></inertial></link>
 <joint name="finger_joint" type="revolute"><parent link="torso"/><child link="finger"/>
  <origin xyz="-0.1 0 0.2" rpy="0 0.4 0"/><axis xyz="1 0 0"/><limit lower="-3" upper="3" effort="1" velocity="1"/>
  <mimic joint="shoulder" multiplier="-0.5" offset="0.2"/></joint></robot>""")


def test_urdf_mimic_on_a_floating_base_maps_onto_mujoco_with_the_free_joint_rotated():
    system, model = parse_urdf(FLOATING_MIMIC), mujoco.MjModel.from_xml_string(FLOATING_MIMIC)
    assert isinstance(system, ClusteredRigidSystem) and model.neq == 1 and model.nv == system.nv + 1
    to_mj, rng = MujocoMap(system, model), np.random.default_rng(10)
    for _ in range(3):
        q = system.random_configuration(rng)
        v, a = rng.normal(size=(2, system.nv))
        qpos, qvel = to_mj.q(q), to_mj.v(v, q)
        M_mj, bias, residual = _mujoco(model, qpos, qvel)
        assert np.abs(residual).max() < 1e-12
        finger = model.jnt_qposadr[model.joint("finger_joint").id]
        shoulder = model.jnt_qposadr[model.joint("shoulder").id]
        assert qpos[finger] == pytest.approx(-0.5 * qpos[shoulder] + 0.2, abs=1e-15)
        M = system.mass_matrix(q)
        np.testing.assert_allclose(to_mj.matrix_back(M_mj, q), M, rtol=0, atol=1e-12 * np.abs(M_mj).max())
        tau = system.inverse_dynamics(q, v, a)
        tau_mj = M_mj @ to_mj.acceleration(a, q, v) + bias
        tol = 1e-11 * max(1.0, np.abs(tau).max())
        np.testing.assert_allclose(to_mj.force_back(tau_mj, q), tau, rtol=0, atol=tol)
        np.testing.assert_allclose(to_mj.q_back(qpos), q, rtol=0, atol=1e-15)
        np.testing.assert_allclose(to_mj.v_back(qvel, q), v, rtol=0, atol=1e-14)
        np.testing.assert_allclose(to_mj.acceleration_back(to_mj.acceleration(a, q, v), q, v), a, rtol=0, atol=1e-13)
        with pytest.raises(InteropError, match=r"at joint 'finger_joint'.*force_back"):
            to_mj.v_back(tau_mj, q)  # a force is not a velocity: its dependent entry breaks the coupling
    with pytest.raises(InteropError, match="free joint: converting its velocities needs the configuration q"):
        to_mj.force_back(np.zeros(model.nv))

"""MJCF joint equalities ``<joint joint1 joint2 polycoef="c0 c1 0 0 0">`` embedded as couplings,
against MuJoCo's own compiled model: at the full ``qpos`` the coupled system reports, MuJoCo's
equality residual ``efc_pos`` vanishes, and with MuJoCo's ``ℳ`` (``mj_fullM``), bias
``qfrc_bias`` and constraint Jacobian ``efc_J`` the dense constrained reference (EMBEDDING.md §3:
``G`` spanning the null space of ``efc_J``, ``Υ = Gᵀ ℳ G``, the KKT forward dynamics) equals ours.
MuJoCo enforces the equality softly, so its own ``qacc`` is not the reference."""

from __future__ import annotations

import numpy as np
import pytest

from sko.errors import MJCFError
from sko.systems.clustered import ClusteredRigidSystem
from sko.io import load_mjcf

mujoco = pytest.importorskip("mujoco")

_OPT = '<option gravity="0.3 -1 -9.81"><flag contact="disable"/></option>'

#: A chain coupling with joint references (qpos0 ≠ 0), an independent slide, compiled degrees.
CHAIN = f"""<mujoco>{_OPT}<worldbody>
<body name="a"><joint name="ja" axis="0 1 0" ref="17"/><geom type="capsule" fromto="0 0 0 0 0 -1" size="0.05"/>
 <body name="b" pos="0 0 -1"><joint name="jb" axis="1 0.2 0" ref="-11"/><geom type="capsule" fromto="0 0 0 0.5 0 -1" size="0.05"/>
  <body name="tip" pos="0.5 0 -1"><joint name="jt" axis="0 0 1"/><geom type="box" size=".1 .2 .05"/></body></body></body>
<body name="c" pos="1 0 0"><joint name="jc" type="slide" axis="0 0 1"/><geom type="box" size=".1 .2 .3"/></body>
</worldbody><equality><joint name="gear" joint1="jb" joint2="ja" polycoef="0.1 -2 0 0 0"/></equality></mujoco>"""

#: A floating base with a rack and pinion across branches (a hinge driving a slide) and a
#: mimic finger pair, one inactive equality.
HAND = f"""<mujoco>{_OPT}<worldbody>
<body name="palm" pos="0 0 1"><freejoint name="root"/><geom type="box" size=".2 .1 .05"/>
 <body name="pinion" pos="0 0.1 0"><joint name="jp" axis="0 1 0"/><geom type="cylinder" size=".05 .02" euler="90 0 0"/></body>
 <body name="rack" pos="0 -0.1 0"><joint name="jr" type="slide" axis="1 0 0" ref="0.02"/><geom type="box" size=".15 .02 .02"/></body>
 <body name="left" pos="0.2 0.05 0"><joint name="jl" axis="0 0 1"/><geom type="capsule" fromto="0 0 0 0.1 0 0" size=".02"/></body>
 <body name="right" pos="0.2 -0.05 0"><joint name="jright" axis="0 0 1"/><geom type="capsule" fromto="0 0 0 0.1 0 0" size=".02"/></body>
 <body name="spare" pos="-0.2 0 0"><joint name="js" axis="1 0 0"/><geom type="sphere" size=".03"/></body>
</body></worldbody><equality>
 <joint name="rack_pinion" joint1="jr" joint2="jp" polycoef="0 0.05 0 0 0"/>
 <joint name="mimic" joint1="jright" joint2="jl" polycoef="0 -1 0 0 0"/>
 <joint name="off" joint1="js" joint2="jl" active="false"/>
</equality></mujoco>"""


def _reference(model, qpos, qvel):
    """MuJoCo's ``ℳ``, bias, and the equality rows of ``efc_J`` and ``efc_pos`` at a state."""
    data = mujoco.MjData(model)
    data.qpos[:], data.qvel[:] = qpos, qvel
    mujoco.mj_forward(model, data)
    M = np.zeros((model.nv, model.nv))
    mujoco.mj_fullM(model, data, M)
    rows = data.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY
    J = data.efc_J.reshape(data.nefc, model.nv)[rows]
    return M, data.qfrc_bias.copy(), J, data.efc_pos[rows].copy()


def _null_space(system: ClusteredRigidSystem, J: np.ndarray) -> np.ndarray:
    """``G`` (nv_mj × nv) with ``qvel = G ν``: the independent columns picked by name, the
    dependent ones solved from ``J qvel = 0``."""
    spanning = system.spanning_system()
    G = np.zeros((spanning.nv, system.nv))
    ind = []
    for body in system.body_names:
        try:
            cols = system.independent_slice(body)
        except Exception:  # a dependent joint
            continue
        rows = spanning.dof_slices[body]
        G[rows, cols] = np.eye(cols.stop - cols.start)
        ind.extend(range(rows.start, rows.stop))
    dep = [i for i in range(spanning.nv) if i not in ind]
    G[dep] = -np.linalg.solve(J[:, dep], J[:, ind] @ G[ind])
    return G


@pytest.mark.parametrize("xml, couplings", [(CHAIN, 1), (HAND, 2)])
def test_joint_equalities_match_mujocos_constrained_dynamics(xml, couplings):
    model = mujoco.MjModel.from_xml_string(xml)
    system = load_mjcf(xml)
    assert isinstance(system, ClusteredRigidSystem) and len(system.clusters()) == couplings
    assert system.nv == model.nv - couplings
    rng = np.random.default_rng(1)
    for _ in range(3):
        q = system.random_configuration(rng)
        v, tau_full = rng.normal(size=system.nv), rng.normal(size=model.nv)
        qpos = system.spanning_configuration(q)
        M_mj, bias, J, residual = _reference(model, qpos, np.zeros(model.nv))
        assert J.shape[0] == couplings and np.abs(residual).max() < 1e-12  # MuJoCo sees the equality hold
        G = _null_space(system, J)
        qvel = G @ v
        M_mj, bias, J, _ = _reference(model, qpos, qvel)
        scale = np.abs(M_mj).max()
        np.testing.assert_allclose(system.mass_matrix(q), G.T @ M_mj @ G, atol=1e-12 * scale)
        np.testing.assert_allclose(system.bias_forces(q, v), G.T @ bias, atol=1e-12 * max(1.0, np.abs(bias).max()))
        n, m = model.nv, J.shape[0]
        kkt = np.block([[M_mj, J.T], [J, np.zeros((m, m))]])  # constant ratios: J̇ = 0
        qacc = np.linalg.solve(kkt, np.concatenate([tau_full - bias, np.zeros(m)]))[:n]
        dv = system.forward_dynamics(q, v, G.T @ tau_full)
        np.testing.assert_allclose(G @ dv, qacc, atol=1e-10 * max(1.0, np.abs(qacc).max()))


def test_inactive_equality_is_ignored_and_loaded_coordinates_are_mujocos():
    system = load_mjcf(HAND)
    model = mujoco.MjModel.from_xml_string(HAND)
    assert system.nq == model.nq - 2  # rack and pinion, mimic; "off" constrains nothing
    theta = system.joint_positions(system.neutral_configuration())
    assert theta["right"][0] == pytest.approx(-theta["left"][0])
    assert theta["rack"][0] == pytest.approx(model.qpos0[model.jnt_qposadr[2]] + 0.05 * theta["pinion"][0])


@pytest.mark.parametrize("equality, match", [
    ('<joint name="fix" joint1="ja"/>', "equality 'fix' of type joint holds one joint at a constant"),
    ('<joint name="cube" joint1="ja" joint2="jc" polycoef="0 1 0 1 0"/>', "'cube' of type joint has a nonlinear polynomial"),
    ('<joint name="g1" joint1="ja" joint2="jc"/><joint name="g2" joint1="jc" joint2="ja"/>', r"equalities \[.g1., .g2.\] cannot be embedded: couplings .* form a cycle"),
    ('<weld name="w" body1="a" body2="c"/>', "equality 'w' of type weld"),
])
def test_unsupported_joint_equalities_are_named(equality, match):
    xml = CHAIN.replace('<joint name="gear" joint1="jb" joint2="ja" polycoef="0.1 -2 0 0 0"/>', equality)
    with pytest.raises(MJCFError, match=match):
        load_mjcf(xml)


def test_coupled_joint_sharing_its_body_or_with_armature_is_named():
    shared = CHAIN.replace('<joint name="jc" type="slide" axis="0 0 1"/>',
                           '<joint name="jc" type="slide" axis="0 0 1"/><joint name="jc2" axis="1 0 0"/>')
    shared = shared.replace('joint1="jb" joint2="ja"', 'joint1="jc" joint2="ja"')
    with pytest.raises(MJCFError, match="'jc', which shares body 'c' with other joints"):
        load_mjcf(shared)
    armed = CHAIN.replace('<joint name="jb" axis="1 0.2 0" ref="-11"/>', '<joint name="jb" axis="1 0.2 0" ref="-11" armature="0.1"/>')
    with pytest.raises(MJCFError, match="armature"):
        load_mjcf(armed)

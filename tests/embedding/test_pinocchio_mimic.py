"""Mimic joints of example-robot-data against Pinocchio 4 (CRBA, RNEA): ``mimic="couple"``
against ``buildModelFromUrdf(path, mimic=True)``, ``mimic="independent"`` against its default."""

from __future__ import annotations

import numpy as np
import pytest

from sko.systems.clustered import ClusteredRigidSystem
from sko.systems.rigid import RigidSystem
from tests.rigid.pinocchio_map import CoordinateMap, robots_dir

pin = pytest.importorskip("pinocchio")
ROBOTS = robots_dir()
pytestmark = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data not installed")

#: Robots with mimic joints that Pinocchio's mimic=True accepts.
COUPLED = ["panda_description/urdf/panda.urdf", "baxter_description/urdf/baxter.urdf",
           "pr2_description/urdf/pr2.urdf", "tiago_pro_description/robots/tiago_pro.urdf"]
#: Every robot with mimic tags that loads here (talos_full_v2 couples across branches, where
#: Pinocchio's mimic=True gives up; alex_psyonic names an unknown primary, romeo has massless moving links).
ALL = COUPLED + ["talos_data/robots/talos_left_arm.urdf", "talos_data/robots/talos_full_v2.urdf"]


def _pin_maps(system: ClusteredRigidSystem, model):
    """``(q_pin(q), v index map)`` for the independent joints of the Pinocchio model."""
    by_name = system.joint_names()
    spans = {s.name: s for s in system._specs}
    rows = []
    for i in range(1, model.njoints):
        jm = model.joints[i]
        if jm.nv == 0 or jm.shortname() == "JointModelMimic":
            continue
        body = by_name.get(model.names[i]) or next(s.name for s in spans.values() if s.joint.name == model.names[i])
        rows.append((body, jm.idx_q, jm.idx_v, jm.nq, jm.nv))
    perm = np.zeros(system.nv, dtype=int)
    for body, iq, iv, nq, nv in rows:
        sl = system.independent_slice(body)
        perm[iv:iv + nv] = np.arange(sl.start, sl.stop)
    assert sorted(perm) == list(range(system.nv))

    def q_pin(q):
        theta = system.joint_positions(q)
        out = pin.neutral(model)
        for i in range(1, model.njoints):
            jm = model.joints[i]
            if jm.shortname() == "JointModelMimic" or jm.nq == 0:
                continue
            body = by_name.get(model.names[i]) or next(s.name for s in spans.values() if s.joint.name == model.names[i])
            t = theta[body]
            out[jm.idx_q:jm.idx_q + jm.nq] = [np.cos(t[0]), np.sin(t[0])] if jm.nq == 2 and jm.nv == 1 else t
        return out
    return q_pin, perm


@pytest.mark.parametrize("path", COUPLED)
def test_coupled_mass_matrix_and_inverse_dynamics_match_pinocchio(path):
    system = RigidSystem.from_urdf(ROBOTS / path)
    assert isinstance(system, ClusteredRigidSystem) and system.clusters()
    model = pin.buildModelFromUrdf(str(ROBOTS / path), mimic=True)
    data = model.createData()
    assert model.nv == system.nv
    q_pin, perm = _pin_maps(system, model)
    rng = np.random.default_rng(3)
    for _ in range(2):
        q = rng.uniform(-0.5, 0.5, system.nq)
        v, a = rng.normal(size=system.nv), rng.normal(size=system.nv)
        qp = q_pin(q)
        M_pin = pin.crba(model, data, qp)
        M_pin = np.triu(M_pin) + np.triu(M_pin, 1).T
        M = system.mass_matrix(q)
        scale = np.abs(M_pin).max()
        assert np.abs(M[np.ix_(perm, perm)] - M_pin).max() <= 1e-10 * scale
        tau = system.inverse_dynamics(q, v, a)
        tau_pin = pin.rnea(model, data, qp, v[perm], a[perm])
        assert np.abs(tau[perm] - tau_pin).max() <= 1e-9 * max(1.0, np.abs(tau_pin).max())


@pytest.mark.parametrize("path", ALL)
def test_independent_mimic_matches_pinocchio_default(path):
    system = RigidSystem.from_urdf(ROBOTS / path, mimic="independent")
    model = pin.buildModelFromUrdf(str(ROBOTS / path))
    data = model.createData()
    cmap = CoordinateMap(system, model)
    rng = np.random.default_rng(4)
    q = system.random_configuration(rng)
    v, a = rng.normal(size=system.nv), rng.normal(size=system.nv)
    M_pin = pin.crba(model, data, cmap.q(q))
    M_pin = np.triu(M_pin) + np.triu(M_pin, 1).T
    assert np.allclose(cmap.v(system.mass_matrix(q)[:, cmap.v_perm]), M_pin, atol=1e-10 * np.abs(M_pin).max())
    tau_pin = pin.rnea(model, data, cmap.q(q), cmap.v(v), cmap.v(a))
    assert np.allclose(cmap.v(system.inverse_dynamics(q, v, a)), tau_pin, atol=1e-9 * max(1.0, np.abs(tau_pin).max()))


def test_cross_branch_coupling_loads_where_pinocchio_gives_up():
    system = RigidSystem.from_urdf(ROBOTS / "talos_data/robots/talos_full_v2.urdf")
    free = RigidSystem.from_urdf(ROBOTS / "talos_data/robots/talos_full_v2.urdf", mimic="independent")
    assert system.nv < free.nv and system.clusters()
    q = system.random_configuration(0)
    M = system.mass_matrix(q)
    assert np.allclose(M, M.T) and np.linalg.eigvalsh(M).min() > 0

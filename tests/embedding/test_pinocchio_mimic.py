"""Mimic joints of example-robot-data against Pinocchio 4 (CRBA, RNEA): ``mimic="couple"``
against ``buildModelFromUrdf(path, mimic=True)``, ``mimic="independent"`` against its default."""

from __future__ import annotations

import numpy as np
import pytest

from sko.systems.clustered import ClusteredRigidSystem
from sko.systems.rigid import RigidSystem
from sko.interop import PinocchioMap
from tests.rigid.pinocchio_map import robots_dir

pin = pytest.importorskip("pinocchio")
ROBOTS = robots_dir()
pytestmark = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data not installed")

#: Robots with mimic joints that Pinocchio's mimic=True accepts.
#: (pr2 has unphysical link inertias: it loads only with inertia="repair", see below.)
COUPLED = ["panda_description/urdf/panda.urdf", "baxter_description/urdf/baxter.urdf",
           "tiago_pro_description/robots/tiago_pro.urdf"]
#: Every robot with mimic tags that loads here (talos_full_v2 and romeo couple across branches,
#: where Pinocchio's mimic=True gives up; in talos_left_arm every mimic tag sits on a fixed joint).
ALL = COUPLED + ["talos_data/robots/talos_left_arm.urdf", "talos_data/robots/talos_full_v2.urdf",
                 "romeo_description/urdf/romeo.urdf"]


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
    cmap = PinocchioMap(system, model)
    rng = np.random.default_rng(4)
    q = system.random_configuration(rng)
    v, a = rng.normal(size=system.nv), rng.normal(size=system.nv)
    M_pin = pin.crba(model, data, cmap.q(q))
    M_pin = np.triu(M_pin) + np.triu(M_pin, 1).T
    assert np.allclose(cmap.matrix(system.mass_matrix(q)), M_pin, atol=1e-10 * np.abs(M_pin).max())
    tau_pin = pin.rnea(model, data, cmap.q(q), cmap.v(v), cmap.v(a))
    assert np.allclose(cmap.v(system.inverse_dynamics(q, v, a)), tau_pin, atol=1e-9 * max(1.0, np.abs(tau_pin).max()))


@pytest.mark.parametrize("path", ["talos_data/robots/talos_full_v2.urdf", "romeo_description/urdf/romeo.urdf"])
def test_cross_branch_coupling_loads_where_pinocchio_gives_up(path):
    """Checked against the KKT solution of the spanning tree (EMBEDDING.md §3) instead (romeo's
    mimic fingers are massless: its mass matrix is singular, only the structure is checked)."""
    from tests.embedding.test_kkt import kkt_residuals

    system = RigidSystem.from_urdf(ROBOTS / path)
    free = RigidSystem.from_urdf(ROBOTS / path, mimic="independent")
    assert system.nv < free.nv and system.clusters()
    if "romeo" in path:
        return
    rng = np.random.default_rng(0)
    q = rng.uniform(-0.5, 0.5, system.nq)
    residuals = kkt_residuals(system, q, rng.normal(size=system.nv), rng)
    assert max(residuals.values()) < 1e-9, residuals


def test_pr2_couples_as_pinocchio_does():
    system = RigidSystem.from_urdf(ROBOTS / "pr2_description/urdf/pr2.urdf", inertia="repair")
    assert system.nv == pin.buildModelFromUrdf(str(ROBOTS / "pr2_description/urdf/pr2.urdf"), mimic=True).nv

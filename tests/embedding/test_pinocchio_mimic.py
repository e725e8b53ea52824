"""Every example-robot-data URDF with ``<mimic>`` tags, loaded with ``mimic="couple"`` (the
default), against a reference that models the same coupled robot:

- Pinocchio 4's ``buildModelFromUrdf(path, mimic=True)`` (CRBA, RNEA, and ``ℳ⁻¹(T − 𝒞)`` for the
  forward dynamics, since Pinocchio's ABA refuses mimic joints) wherever Pinocchio accepts the file;
- the Lagrange-multiplier (KKT) solution of the spanning tree (EMBEDDING.md §3) where Pinocchio
  refuses it: couplings whose primary joint is not an ancestor of the mimic joint;
- the error naming the joints where the file's mimic tags name joints that do not exist.

Mimic joints made independent (``mimic="independent"``, Pinocchio's default) are compared on
every robot by tests/rigid/test_pinocchio.py.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from sko.errors import URDFError
from sko.systems.clustered import ClusteredRigidSystem
from sko.io import load_urdf
from tests.embedding.test_kkt import kkt_residuals
from tests.rigid.pinocchio_map import robots_dir

pin = pytest.importorskip("pinocchio")
ROBOTS = robots_dir()
pytestmark = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data not installed")

#: Couplings Pinocchio's mimic=True accepts (sibling fingers, chains of mimics).
PINOCCHIO = ["baxter_description/urdf/baxter.urdf", "panda_description/urdf/panda.urdf",
             "panda_description/urdf/panda_collision.urdf", "pr2_description/urdf/pr2.urdf",
             "tiago_pro_description/robots/tiago_pro.urdf"]
#: Every mimic tag on a fixed joint: nothing to couple, a plain rigid system (Pinocchio agrees).
FIXED_TAGS = ["talos_data/robots/talos_left_arm.urdf", "talos_data/robots/talos_reduced.urdf",
              "talos_data/robots/talos_reduced_box.urdf", "talos_data/robots/talos_reduced_corrected.urdf"]
#: Couplings across branches (the primary joint is not an ancestor of the mimic joint): embedded
#: by the nearest-common-ancestor rule here, refused by Pinocchio's mimic=True.
CROSS_BRANCH = ["romeo_description/urdf/romeo.urdf", "talos_data/robots/talos_full_v2.urdf",
                "talos_data/robots/talos_full_v2_box.urdf"]
#: Mimic tags naming primary joints the file does not have ('index_q1' for 'Left_index_q1').
UNKNOWN_PRIMARY = {"alex_description/urdf/alex_psyonic_hands.urdf": "'Left_index_q2': unknown primary joint 'index_q1'"}
PINOCCHIO_REFUSES = "The parent joint of the mimic joint is not in the kinematic tree"


def _mimic_urdfs() -> list[str]:
    if ROBOTS is None:
        return []
    return sorted(str(p.relative_to(ROBOTS)) for p in ROBOTS.rglob("*.urdf") if "<mimic" in p.read_text())


def test_every_mimic_robot_is_classified():
    """A robot added to example-robot-data with mimic tags must join one of the lists above."""
    assert set(_mimic_urdfs()) == {*PINOCCHIO, *FIXED_TAGS, *CROSS_BRANCH, *UNKNOWN_PRIMARY}


def _load(rel: str):
    """Ours with mimic joints coupled (strict inertias if physical, else repaired, warning) and
    the URDF text Pinocchio must read to model the same bodies."""
    from tests.rigid.test_pinocchio import _repaired_text

    path = ROBOTS / rel
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return load_urdf(path), path.read_text()
    except URDFError as exc:
        if "inertia='repair'" not in str(exc):
            raise
    with pytest.warns(Warning, match="nearest physical"):
        system = load_urdf(path, inertia="repair")
    return system, _repaired_text(path)


def _pin_maps(system, model):
    """``(q_pin(q), perm)`` with ``ours[perm] = Pinocchio's`` for velocity-like vectors: every
    Pinocchio joint with coordinates is an independent joint of ``system``, matched by name."""
    by_name = system.joint_names()
    specs = getattr(system, "_specs", None) or [system.body(k) for k in system.bodies]
    joint_of = {s.joint.name: s.name for s in specs}
    rows = []
    for i in range(1, model.njoints):
        jm = model.joints[i]
        if jm.nv == 0 or jm.shortname() == "JointModelMimic":
            continue
        rows.append((by_name.get(model.names[i]) or joint_of[model.names[i]], jm))
    perm = np.zeros(system.nv, dtype=int)
    for body, jm in rows:
        sl = system.independent_slice(body) if isinstance(system, ClusteredRigidSystem) else system.dof_slices[body]
        perm[jm.idx_v:jm.idx_v + jm.nv] = np.arange(sl.start, sl.stop)
    assert sorted(perm) == list(range(system.nv))

    def q_pin(q):
        theta = system.joint_positions(q) if isinstance(system, ClusteredRigidSystem) else \
            {k: q[system.q_slices[k]] for k in system.bodies}
        out = pin.neutral(model)
        for body, jm in rows:
            t = theta[body]
            out[jm.idx_q:jm.idx_q + jm.nq] = [np.cos(t[0]), np.sin(t[0])] if jm.nq == 2 and jm.nv == 1 else t
        return out
    return q_pin, perm


@pytest.mark.parametrize("rel", PINOCCHIO + FIXED_TAGS)
def test_coupled_robot_matches_pinocchio_mimic(rel):
    system, text = _load(rel)
    coupled = rel in PINOCCHIO
    assert isinstance(system, ClusteredRigidSystem) == coupled
    assert bool(coupled and system.clusters()) == coupled
    model = pin.buildModelFromXML(text, mimic=True)
    data = model.createData()
    assert model.nv == system.nv
    q_pin, perm = _pin_maps(system, model)
    rng = np.random.default_rng(3)
    worst = {"M": 0.0, "ID": 0.0, "FD": 0.0}
    for _ in range(3):
        q = rng.uniform(-0.5, 0.5, system.nq)
        v, a, tau = rng.normal(size=(3, system.nv))
        qp = q_pin(q)
        M_pin = pin.crba(model, data, qp)
        M_pin = np.triu(M_pin) + np.triu(M_pin, 1).T
        scale = np.abs(M_pin).max()
        worst["M"] = max(worst["M"], np.abs(system.mass_matrix(q)[np.ix_(perm, perm)] - M_pin).max() / scale)
        tau_pin = pin.rnea(model, data, qp, v[perm], a[perm])
        worst["ID"] = max(worst["ID"], np.abs(system.inverse_dynamics(q, v, a)[perm] - tau_pin).max()
                          / max(1.0, np.abs(tau_pin).max()))
        dv_pin = np.linalg.solve(M_pin, tau[perm] - pin.nonLinearEffects(model, data, qp, v[perm]))
        worst["FD"] = max(worst["FD"], np.abs(system.forward_dynamics(q, v, tau)[perm] - dv_pin).max()
                          / max(1.0, np.abs(dv_pin).max()))
    assert max(worst.values()) < 1e-9, f"{rel}: worst relative errors {worst}"


@pytest.mark.parametrize("rel", CROSS_BRANCH)
def test_cross_branch_coupling_matches_the_kkt_solution(rel):
    """Pinocchio refuses these couplings; the reference is the spanning tree with its coupling
    constraints (EMBEDDING.md §3). romeo's mimic fingers are massless, so its ℳ is singular:
    the inverse dynamics at a random acceleration stands in for the forward dynamics there."""
    with pytest.raises(Exception, match=PINOCCHIO_REFUSES):
        pin.buildModelFromUrdf(str(ROBOTS / rel), mimic=True)
    system, _ = _load(rel)
    free = load_urdf(ROBOTS / rel, mimic="independent")
    assert system.nv < free.nv and system.clusters()
    rng = np.random.default_rng(0)
    for _ in range(2):
        q = rng.uniform(-0.5, 0.5, system.nq)
        residuals = kkt_residuals(system, q, rng.normal(size=system.nv), rng, forward="romeo" not in rel)
        assert max(residuals.values()) < 1e-9, residuals


@pytest.mark.parametrize("rel", sorted(UNKNOWN_PRIMARY))
def test_mimic_of_an_unknown_joint_is_named(rel):
    """Pinocchio's mimic=True refuses the file as well; with mimic joints independent it loads
    (compared with Pinocchio in tests/rigid/test_pinocchio.py)."""
    from sko.inertia import InertiaRepairWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InertiaRepairWarning)  # its hand links' inertias are not physical
        with pytest.raises(URDFError, match=UNKNOWN_PRIMARY[rel]):
            load_urdf(ROBOTS / rel, inertia="repair")
        free = load_urdf(ROBOTS / rel, inertia="repair", mimic="independent")
    with pytest.raises(Exception, match=PINOCCHIO_REFUSES):
        pin.buildModelFromUrdf(str(ROBOTS / rel), mimic=True)
    assert free.nv == pin.buildModelFromUrdf(str(ROBOTS / rel)).nv

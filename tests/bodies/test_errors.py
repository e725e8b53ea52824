"""Bad input to body types and systems gives an SKOError subclass naming the body."""

from __future__ import annotations

import numpy as np
import pytest

from sko import DimensionError, SKOError, UnknownNodeError
from sko.bodies import BodyError, FlexibleBody, GearedRotorLink, RigidBody, cantilever_modes, flexible_beam
from sko.systems import MultibodySystem
from sko.bodies.contract import BodyType, NodeState
from sko.bodies import Revolute, Spherical
from sko.spatial import spatial_inertia

RNG = np.random.default_rng(0)
MASSES = RNG.uniform(0.1, 1.0, 6)
POSITIONS = RNG.standard_normal((6, 3))
MODES = 0.1 * RNG.standard_normal((6, 3, 2))
I6 = spatial_inertia(1.0, [0.1, 0, 0], np.eye(3))


def flexible(**kw):
    args = dict(name="panel", parent=None, joint=Revolute(), masses=MASSES, positions=POSITIONS, modes=MODES,
                stiffness=np.eye(2), nodes={"tip": (np.ones(3), np.zeros((3, 2)), np.zeros((3, 2)))})
    args.update(kw)
    return FlexibleBody(**args)


@pytest.mark.parametrize("kw, match", [
    (dict(modes=np.zeros((6, 2, 2))), "mode shapes of flexible body 'panel' have shape"),
    (dict(modes=np.zeros((5, 3, 2))), "mode shapes of flexible body 'panel'"),
    (dict(positions=np.zeros((6, 2))), "particle positions of flexible body 'panel'"),
    (dict(masses=-MASSES), "positive masses"),
    (dict(stiffness=[[1.0, 2.0], [0.0, 1.0]]), "stiffness K of flexible body 'panel' is not symmetric"),
    (dict(stiffness=-np.eye(2)), "stiffness K of flexible body 'panel' is not positive semidefinite"),
    (dict(stiffness=np.eye(3)), "stiffness K of flexible body 'panel' has shape"),
    (dict(damping=[[1.0, 0.0], [0.0, -1.0]]), "damping C of flexible body 'panel' is not positive semidefinite"),
    (dict(positions=np.outer(np.arange(6.0), [1, 0, 0]), modes=None, stiffness=None, nodes={}), "leave M\\(k\\) singular"),
    (dict(modes=np.repeat(MODES[:, :, :1], 2, axis=2)), "leave M\\(k\\) singular"),
    (dict(nodes={"tip": (np.ones(3), np.zeros((3, 3)))}), "modal translation Φ_o of node 'tip'"),
    (dict(nodes={None: (np.ones(3), np.zeros((3, 2)))}), "reserved"),
    (dict(positions=np.full((6, 3), np.nan)), "NaN"),
])
def test_flexible_body_rejects_bad_data(kw, match):
    with pytest.raises(BodyError, match=match):
        flexible(**kw)


def test_bad_data_is_not_mutated():
    masses = MASSES.copy()
    body = flexible(masses=masses)
    body.masses[0] = 100.0
    assert np.array_equal(masses, MASSES)


def test_attachment_must_exist():
    with pytest.raises(BodyError, match="'arm' hangs from attachment 'elbow' of 'panel'"):
        MultibodySystem([flexible(), RigidBody("arm", "panel", Revolute(), I6, attach="elbow")])
    with pytest.raises(BodyError, match="'arm' hangs from attachment 'tip' of 'base'"):
        MultibodySystem([RigidBody("base", None, Revolute(), I6), RigidBody("arm", "base", Revolute(), I6, attach="tip")])
    MultibodySystem([flexible(), RigidBody("arm", "panel", Revolute(), I6, attach="tip")])  # exists: fine


def test_system_rejects_bad_trees_and_states():
    with pytest.raises(UnknownNodeError, match="'arm'"):
        MultibodySystem([RigidBody("arm", "nowhere", Revolute(), I6)])
    with pytest.raises(BodyError, match="duplicate"):
        MultibodySystem([RigidBody("a", None, Revolute(), I6), RigidBody("a", None, Revolute(), I6)])
    system = MultibodySystem([flexible()])
    with pytest.raises(DimensionError, match="q has length 2, expected nq = 3"):
        system.mass_matrix(np.zeros(2))


def test_rotor_link_rejects_bad_data():
    args = dict(name="link", parent=None, joint=Revolute(), inertia=I6, rotor_axis=[0, 0, 1], gear_ratio=10.0,
                axial_inertia=1e-3, transverse_inertia=1e-3)
    with pytest.raises(BodyError, match="'link' needs a one-dof"):
        GearedRotorLink(**{**args, "joint": Spherical()})
    with pytest.raises(BodyError, match="gear ratio of body 'link'"):
        GearedRotorLink(**{**args, "gear_ratio": 0.0})
    with pytest.raises(BodyError, match="rotor inertias of body 'link'"):
        GearedRotorLink(**{**args, "axial_inertia": 0.0})
    with pytest.raises(BodyError, match="rotor axis of body 'link'"):
        GearedRotorLink(**{**args, "rotor_axis": [0, 0, 0]})


def test_beam_rejects_bad_parameters():
    with pytest.raises(BodyError, match="beam length must be positive"):
        cantilever_modes(-1.0, 1.0, 1.0, 2)
    with pytest.raises(BodyError, match="modes"):
        cantilever_modes(1.0, 1.0, 1.0, 50, stations=10)
    with pytest.raises(BodyError, match="directions"):
        flexible_beam("beam", None, Revolute(), 1.0, 1.0, 1.0, 2, directions=("x",))


class _WrongShapes(BodyType):
    q_size = dof_size = 1
    node_dim = 2

    def at_state(self, q, qd, inboard, gravity):
        return NodeState(E=np.zeros((2, 6)), H=np.ones((1, 3)), M=np.eye(2), a=np.zeros(2), b=np.zeros(2), V=np.zeros(2))


def test_a_body_type_returning_wrong_shapes_is_named():
    with pytest.raises(DimensionError, match="body 'toy' \\(_WrongShapes\\) returned H of shape \\(1, 3\\)"):
        MultibodySystem([_WrongShapes("toy")]).mass_matrix(np.zeros(1))
    assert issubclass(BodyError, SKOError)


class _ForgetsItsFrame(_WrongShapes):
    def at_state(self, q, qd, inboard, gravity):
        return NodeState(E=np.zeros((2, 6)), H=np.ones((1, 2)), M=np.eye(2), a=np.zeros(2), b=np.zeros(2), V=np.zeros(2))


def test_a_body_type_must_return_the_attachments_it_offers():
    with pytest.raises(BodyError, match="'toy' \\(_ForgetsItsFrame\\) offers attachments \\[None\\]"):
        MultibodySystem([_ForgetsItsFrame("toy")]).mass_matrix(np.zeros(1))


class _NegativeRigid(RigidBody):
    """A user's rigid body whose own at_state returns an inertia that is not positive definite."""

    def at_state(self, q, qd, inboard, gravity):
        s = super().at_state(q, qd, inboard, gravity)
        return NodeState(E=s.E, H=s.H, M=-s.M, a=s.a, b=s.b, V=s.V, attachments=s.attachments, potential=s.potential)


@pytest.mark.parametrize("backend", ["compiled", "reference"])
def test_a_subclass_writing_its_own_state_has_its_states_checked(backend):
    """A subclass of a library body type overriding at_state is a new body type: its states are
    checked as any user type's are (the library's were trusted for it, valid by construction),
    so a negative M(k) was a negative mass matrix without a word."""
    from sko.engine import use_backend

    system = MultibodySystem([_NegativeRigid("b", None, Revolute([0, 0, 1]), spatial_inertia(1.0, [0.1, 0, 0], np.eye(3)))])
    with use_backend(backend), pytest.raises(SKOError, match=r"inertia M of body 'b' .* is not positive definite"):
        system.mass_matrix([0.3])

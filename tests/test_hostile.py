"""Hostile input at every public entry point: a clear error of the project's own type (a subclass
of ``SKOError``) whose message names the offending thing, never a wrong answer, a NaN passed on
or a foreign exception; inputs are never changed. One table per layer, then a fuzzer."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from sko.engine import algorithms as alg
from sko.engine import get_backend, use_backend
from sko import SKOModel
from sko.bodies import (Cylindrical, FlexibleBody, Free, GearedRotorLink, Helical, Planar, Prismatic, RackAndPinion,
                        Revolute, RigidBody, Spherical)
from sko.bodies.beam import cantilever_modes, flexible_beam
from sko.bodies.contract import BodyError, BodyType, NodeState
from sko.errors import JointError, RigidSystemError, URDFError
from sko.examples.rigid import planar_chain
from sko.graphs import (ConnectivityGraph, DimensionError, NonFiniteError, NotATreeError, NotPositiveDefiniteError,
                        SKOError, TreeDigraph, UnknownNodeError, bwa_matrix, check_parent_array, nilpotency_index,
                        one_resolvent)
from sko.io import DHLink, dh_system, load_urdf, parse_urdf
from sko.spatial import pose_transform, spatial_inertia
from sko.simulation import simulate
from sko.systems import MultibodySystem, SystemBuilder
from sko.verify import compare, run, run_check
from sko.verify.registry import Case, Registry

I6 = spatial_inertia(1.0, np.array([0.1, 0.0, 0.0]), np.diag([0.1, 0.2, 0.3]))
TREE = {"a": None, "b": "a", "c": "a"}


def _model(**changes):
    data = dict(phi={"b": np.ones((2, 3)), "c": np.ones((2, 1))},
                H={"a": np.array([[1.0, 0.0]]), "b": np.array([[1.0, 0.0, 0.0]]), "c": np.array([[1.0]])},
                M={"a": np.eye(2), "b": np.eye(3), "c": np.eye(1)})
    for key, (node, value) in changes.items():
        data[key] = {**data[key], node: value}
    return SKOModel(TreeDigraph.from_parents(TREE), **data)


def _system():
    return planar_chain(2)


def _rotor(**changes):
    args = dict(name="link", parent=None, joint=Revolute(), inertia=I6, rotor_axis=[0, 0, 1], gear_ratio=10.0,
                axial_inertia=1e-3, transverse_inertia=1e-3)
    return GearedRotorLink(**{**args, **changes})


def _flexible(**changes):
    args = dict(name="f", parent=None, joint=Revolute(), masses=[1.0, 1.0, 1.0],
                positions=[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], modes=np.zeros((3, 3, 1)))
    args["modes"][1, 2, 0] = 1.0
    return FlexibleBody(**{**args, **changes})


def _builder_body(**changes):
    args = dict(name="x", parent=None, joint=Revolute(), mass=1.0, com=[0.0, 0.0, 0.1], inertia_com=np.eye(3) * 0.1)
    return SystemBuilder().add_body(**{**args, **changes})


def _nan_case():
    """A verify case whose ℳ contains NaN (built without validation, as a broken body type would)."""
    tree = TreeDigraph.from_parents({"a": None, "b": "a"})
    M = np.eye(2)
    M[0, 0] = np.nan
    model = SKOModel(tree, {"b": np.eye(2)}, {"a": np.eye(2), "b": np.eye(2)}, {"a": M, "b": np.eye(2)}, validate=False)
    return Case(model, "nan-model")


class _ListKeyed(dict):
    """A mapping whose keys come out as lists (unhashable labels), as a hand-made mapping might."""

    def items(self):
        return [(list(k), np.zeros(6)) for k in self]


MJCF = ('<mujoco><worldbody><body name="arm" pos="{pos}"><joint name="hinge" axis="0 1 0"/>'
        '<geom type="capsule" fromto="0 0 0 0 0 -1" size="0.05" {g}/></body></worldbody></mujoco>')


def _load_mjcf(source):
    from sko.io.mjcf import load_mjcf

    return load_mjcf(source)


def _coupled(couple: bool = False, loop: bool = False) -> SystemBuilder:
    """Two revolute bodies x, y in a chain; coupled or closed into a loop to the world if asked."""
    builder = SystemBuilder()
    for name, parent in (("x", None), ("y", "x")):
        builder.add_body(name, parent, Revolute(), pose_transform([0.5, 0.0, 0.0]), mass=1.0, com=[0.2, 0.0, 0.0],
                         inertia_com=np.eye(3) * 0.1)
    if couple:
        builder.add_coupling("k", "x", "y", 0.5)
    if loop:
        builder.add_loop_joint("L", "y", None, Prismatic([1.0, 0.0, 0.0]))
    return builder


def _mujoco_map():
    import mujoco

    from sko.interop import MujocoMap

    xml = ('<mujoco><worldbody><body name="base"><freejoint/><geom size="0.1"/><body name="arm" pos="0.3 0 0">'
           '<joint name="hinge" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0 0 -1" size="0.05"/></body></body>'
           '</worldbody></mujoco>')
    return MujocoMap(_load_mjcf(xml), mujoco.MjModel.from_xml_string(xml))


def _four_bar():
    from sko.examples.embedding import four_bar

    return four_bar()


def _dh(**changes):
    return DHLink(**{**dict(a=1.0, alpha=0.0, d=0.0, theta=0.0, mass=1.0), **changes})


URDF = """<robot name="r"><link name="base"/>
<link name="l1"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
<joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>{extra}</joint></robot>"""

BOMB = """<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>
<robot name="&lol2;"><link name="base"/></robot>"""


def c(fn, *args, **kwargs):
    return fn, args, kwargs


# (thunk giving (function, args, kwargs), expected error, words the message must contain)
CASES = {
    # ---------------------------------------------------------------- sko.graphs
    "tree-unhashable-parent": (lambda: c(TreeDigraph.from_parents, {"a": None, "b": ["a"]}), NotATreeError, ["'b'"]),
    "tree-cycle": (lambda: c(TreeDigraph.from_parents, {"a": "b", "b": "a"}), NotATreeError, []),
    "tree-not-mapping": (lambda: c(TreeDigraph.from_parents, None), SKOError, []),
    "tree-unknown-parent": (lambda: c(TreeDigraph.from_parents, {"a": None, "b": "zz"}), SKOError, ["'zz'"]),
    "tree-index-unknown": (lambda: c(TreeDigraph.from_parents(TREE).index, "zz"), UnknownNodeError, ["'zz'"]),
    "tree-parent-unknown": (lambda: c(TreeDigraph.from_parents(TREE).parent, "zz"), UnknownNodeError, ["'zz'"]),
    "connectivity-unhashable": (lambda: c(ConnectivityGraph, {"J": (0, ["a"])}), NotATreeError, ["'J'"]),
    "connectivity-negative": (lambda: c(ConnectivityGraph.from_arrays, [-1], [1]), NotATreeError, ["p(1) = -1"]),
    "connectivity-float": (lambda: c(ConnectivityGraph.from_arrays, [0, 1], [1, 2.5]), NotATreeError, ["s(2) = 2.5"]),
    "parent-array-none": (lambda: c(check_parent_array, None), NotATreeError, ["NoneType"]),
    "parent-array-string": (lambda: c(check_parent_array, "012"), NotATreeError, []),
    "one-resolvent-nonsquare": (lambda: c(one_resolvent, np.ones((2, 3))), DimensionError, ["(2, 3)"]),
    "one-resolvent-ragged": (lambda: c(one_resolvent, [[0.0, 1.0], [0.0]]), DimensionError, ["not an array"]),
    "one-resolvent-strings": (lambda: c(one_resolvent, [["a", "b"], ["c", "d"]]), DimensionError, ["dtype"]),
    "one-resolvent-none-object": (lambda: c(one_resolvent, np.array([[None, 0], [0, None]], dtype=object)),
                                  DimensionError, ["None"]),
    "nilpotency-nan": (lambda: c(nilpotency_index, [[0.0, np.nan], [0.0, 0.0]]), NonFiniteError, ["NaN"]),
    "nilpotency-inf": (lambda: c(nilpotency_index, [[0.0, np.inf], [0.0, 0.0]]), NonFiniteError, ["infinity"]),
    "bwa-wrong-weight": (lambda: c(bwa_matrix, TreeDigraph.from_parents(TREE), {"a": 2, "b": 2, "c": 1},
                                   {"b": np.ones((2, 2, 2))}), SKOError, ["'b'"]),
    # ---------------------------------------------------------------- SKOModel
    "model-nan-M": (lambda: c(_model, M=("a", np.array([[np.nan, 0], [0, 1.0]]))), NonFiniteError, ["'a'"]),
    "model-inf-phi": (lambda: c(_model, phi=("b", np.full((2, 3), np.inf))), NonFiniteError, ["'b'"]),
    "model-string-M": (lambda: c(_model, M=("a", [["x", "y"], ["z", "w"]])), DimensionError, ["'a'"]),
    "model-none-object-H": (lambda: c(_model, H=("c", np.array([[None]], dtype=object))), DimensionError, ["None"]),
    "model-string-object-H": (lambda: c(_model, H=("c", np.array([["x"]], dtype=object))), DimensionError, ["'x'"]),
    "model-wrong-shape-H": (lambda: c(_model, H=("b", np.ones((1, 2)))), DimensionError, ["'b'"]),
    "model-not-spd-M": (lambda: c(_model, M=("a", -np.eye(2))), NotPositiveDefiniteError, ["'a'"]),
    "model-unknown-node": (lambda: c(_model, M=("zz", np.eye(2))), SKOError, ["'zz'"]),
    "model-3d-M": (lambda: c(_model, M=("a", np.ones((2, 2, 2)))), DimensionError, ["'a'"]),
    "model-node-vector-short": (lambda: c(_model().node_vector, [1.0, 2.0], "a"), DimensionError, ["a"]),
    "model-node-vector-nan": (lambda: c(_model().node_vector, np.full(6, np.nan), "a"), NonFiniteError, ["a"]),
    "model-dof-vector-string": (lambda: c(_model().dof_vector, "abc", "tau"), DimensionError, ["tau"]),
    # ---------------------------------------------------------------- sko.algorithms
    "alg-mm-solve-ragged": (lambda: c(alg.mass_matrix_solve, _model(), [[1.0, 2.0], [1.0], [2.0]]), DimensionError, ["y"]),
    "alg-mm-solve-3d": (lambda: c(alg.mass_matrix_solve, _model(), np.ones((3, 2, 1))), DimensionError, ["(3, 2, 1)"]),
    "alg-mm-solve-nan": (lambda: c(alg.mass_matrix_solve, _model(), [np.nan, 1.0, 1.0]), NonFiniteError, ["NaN"]),
    "alg-mm-pattern": (lambda: c(alg.mass_matrix_pattern, _model(), np.eye(2)), DimensionError, ["(2, 2)"]),
    "alg-ops-set": (lambda: c(alg.operational_space_inertia, _model(), {"b", "c"}), SKOError, ["ordered sequence"]),
    "alg-ops-unknown": (lambda: c(alg.operational_space_inertia, _model(), ["zz"]), SKOError, ["'zz'"]),
    "alg-fd-tau-short": (lambda: c(alg.forward_dynamics, _model(), [1.0]), DimensionError, ["T has length 1"]),
    "alg-fd-tau-inf": (lambda: c(alg.forward_dynamics, _model(), [np.inf, 0.0, 0.0]), NonFiniteError, ["T (shape (3,))"]),
    "alg-id-qdd-string": (lambda: c(alg.inverse_dynamics, _model(), ["a", "b", "c"]), DimensionError, []),
    "alg-phi-apply-wrong": (lambda: c(alg.phi_apply, _model(), np.ones(2)), DimensionError, []),
    "alg-phi-apply-none-obj": (lambda: c(alg.phi_apply, _model(), np.array([None] * 6, dtype=object)), DimensionError,
                               ["None"]),
    "alg-ltdl-nan": (lambda: c(alg.ltdl, [[np.nan, 0], [0, 1.0]], (0, 1)), NonFiniteError, ["NaN"]),
    "alg-ltdl-not-pd": (lambda: c(alg.ltdl, [[0.0, 0], [0, 1.0]], (0, 1)), NotPositiveDefiniteError, ["dof 1"]),
    "alg-ltdl-solve-zero-pivot": (lambda: c(alg.ltdl_solve, np.array([[1.0, 0], [0.5, 0.0]]), (0, 1), [1.0, 1.0]),
                                  NotPositiveDefiniteError, ["dof 2"]),
    "alg-L-inverse-zero": (lambda: c(alg.L_inverse_apply, np.array([[0.0, 0], [0.5, 1.0]]), (0, 1), [1.0, 1.0]),
                           NotPositiveDefiniteError, ["dof 1"]),
    "alg-L-inverse-T-zero": (lambda: c(alg.L_inverse_transpose_apply, np.array([[1.0, 0], [0.5, 0.0]]), (0, 1),
                                       [1.0, 1.0]), NotPositiveDefiniteError, ["dof 2"]),
    "alg-ltdl-parents-bad": (lambda: c(alg.ltdl, np.eye(2), (0, 5)), SKOError, []),
    "alg-compressed-nan": (lambda: c(alg.compressed_ltdl, [np.nan, 1.0], alg.compressed_layout((0, 0))),
                           NonFiniteError, ["qM"]),
    "alg-sparsity-counts-bad": (lambda: c(alg.sparsity_counts, [0, -3]), SKOError, []),
    "alg-not-a-model": (lambda: c(alg.mass_matrix, _system()), DimensionError, ["mass_matrix", "SKOModel", "RigidSystem"]),
    "alg-none-model": (lambda: c(alg.forward_dynamics, None, [0.0]), DimensionError, ["forward_dynamics", "NoneType"]),
    "alg-longdouble-M": (lambda: c(_model, M=("a", np.array([[np.longdouble("1e4000"), 0], [0, 1]]))),
                         NonFiniteError, ["'a'"]),
    # ---------------------------------------------------------------- joints
    "revolute-string-axis": (lambda: c(Revolute, "z"), JointError, ["axis", "'z'"]),
    "revolute-zero-axis": (lambda: c(Revolute, [0, 0, 0]), JointError, ["axis"]),
    "revolute-nan-axis": (lambda: c(Revolute, [np.nan, 0, 1]), JointError, ["axis"]),
    "revolute-none-axis": (lambda: c(Revolute, None), JointError, ["axis"]),
    "revolute-short-axis": (lambda: c(Revolute, [1.0, 0.0]), JointError, ["axis"]),
    "revolute-object-axis": (lambda: c(Revolute, np.array([None, 1, 0], dtype=object)), JointError, ["axis"]),
    "prismatic-complex-axis": (lambda: c(Prismatic, [1j, 0, 0]), JointError, ["axis"]),
    "cylindrical-inf-axis": (lambda: c(Cylindrical, [np.inf, 0, 0]), JointError, ["axis"]),
    "planar-zero-normal": (lambda: c(Planar, [0, 0, 0]), JointError, ["axis"]),
    "helical-nan-pitch": (lambda: c(Helical, [0, 0, 1], np.nan), JointError, ["pitch"]),
    "helical-inf-pitch": (lambda: c(Helical, [0, 0, 1], np.inf), JointError, ["pitch"]),
    "helical-string-pitch": (lambda: c(Helical, [0, 0, 1], "x"), JointError, ["pitch", "'x'"]),
    "helical-none-pitch": (lambda: c(Helical, [0, 0, 1], None), JointError, ["pitch", "None"]),
    "helical-list-pitch": (lambda: c(Helical, [0, 0, 1], [1.0]), JointError, ["pitch"]),
    "rack-nan-radius": (lambda: c(RackAndPinion, np.nan), JointError, ["radius"]),
    "rack-string-radius": (lambda: c(RackAndPinion, "1"), JointError, ["radius", "'1'"]),
    "rack-none-radius": (lambda: c(RackAndPinion, None), JointError, ["radius"]),
    "spherical-zero-quaternion": (lambda: c(Spherical().kinematics, [0.0, 0, 0, 0]), JointError, ["quaternion"]),
    "spherical-nan-q": (lambda: c(Spherical().kinematics, [np.nan, 0, 0, 1.0]), JointError, ["NaN"]),
    "spherical-string-q": (lambda: c(Spherical().kinematics, ["a", "b", "c", "d"]), JointError, ["q"]),
    "revolute-integrate-string-dt": (lambda: c(Revolute().integrate, [0.0], [1.0], "x"), JointError, ["dt", "'x'"]),
    "spherical-integrate-nan-dt": (lambda: c(Spherical().integrate, [1.0, 0, 0, 0], [0.0, 0, 1], np.nan), JointError,
                                   ["dt", "nan"]),
    "free-integrate-none-dt": (lambda: c(Free().integrate, Free().neutral(), np.zeros(6), None), JointError, ["dt"]),
    "free-wrong-length": (lambda: c(Free().kinematics, [1.0, 0, 0, 0]), JointError, ["(7,)"]),
    "revolute-q-none-object": (lambda: c(Revolute().kinematics, np.array([None], dtype=object)), JointError, ["None"]),
    # ---------------------------------------------------------------- body types
    "rigid-not-joint": (lambda: c(RigidBody, "b", None, "revolute", I6), BodyError, ["'b'"]),
    "rigid-nan-inertia": (lambda: c(RigidBody, "b", None, Revolute(), np.full((6, 6), np.nan)), NonFiniteError, ["'b'"]),
    "rigid-3x3-inertia": (lambda: c(RigidBody, "b", None, Revolute(), np.eye(3)), SKOError, ["'b'"]),
    "rigid-zero-placement": (lambda: c(RigidBody, "b", None, Revolute(), I6, np.zeros((6, 6))), DimensionError,
                             ["placement", "'b'", "rigid"]),
    "rigid-scaled-placement": (lambda: c(RigidBody, "b", None, Revolute(), I6, 2 * np.eye(6)), DimensionError,
                               ["placement", "'b'"]),
    "rigid-4x4-placement": (lambda: c(RigidBody, "b", None, Revolute(), I6, np.eye(4)), DimensionError,
                            ["placement", "(4, 4)"]),
    "rigid-huge-offset": (lambda: c(RigidBody, "b", None, Revolute(), I6, pose_transform([1e200, 0, 0])), DimensionError,
                          ["placement", "overflow"]),
    "rigid-reflection-placement": (lambda: c(RigidBody, "b", None, Revolute(), I6, np.diag([1, 1, -1, 1, 1, -1.0])),
                                   DimensionError, ["rotation"]),
    "rotor-nan-ratio": (lambda: c(_rotor, gear_ratio=np.nan), BodyError, ["gear ratio", "'link'"]),
    "rotor-zero-ratio": (lambda: c(_rotor, gear_ratio=0.0), BodyError, ["gear ratio"]),
    "rotor-string-ratio": (lambda: c(_rotor, gear_ratio="10"), BodyError, ["gear ratio", "'10'"]),
    "rotor-none-mass": (lambda: c(_rotor, rotor_mass=None), BodyError, ["rotor mass"]),
    "rotor-inf-mass": (lambda: c(_rotor, rotor_mass=np.inf), BodyError, ["rotor mass"]),
    "rotor-nan-centre": (lambda: c(_rotor, rotor_centre=[np.nan, 0, 0]), SKOError, ["rotor centre", "'link'"]),
    "rotor-string-centre": (lambda: c(_rotor, rotor_centre="abc"), SKOError, ["rotor centre"]),
    "rotor-list-inertia": (lambda: c(_rotor, axial_inertia=[1.0]), BodyError, ["J_a"]),
    "rotor-zero-axis": (lambda: c(_rotor, rotor_axis=[0, 0, 0]), BodyError, ["rotor axis"]),
    "flexible-nodes-list": (lambda: c(_flexible, nodes=[("tip", ([1, 0, 0], np.zeros((3, 1))))]), BodyError,
                            ["nodes", "'f'"]),
    "flexible-nan-mass": (lambda: c(_flexible, masses=[1.0, np.nan, 1.0]), BodyError, ["masses"]),
    "flexible-string-positions": (lambda: c(_flexible, positions="abc"), BodyError, ["positions"]),
    "flexible-node-not-tuple": (lambda: c(_flexible, nodes={"tip": 3.0}), BodyError, ["'tip'"]),
    "flexible-bad-stiffness": (lambda: c(_flexible, stiffness=-np.eye(1)), BodyError, ["stiffness"]),
    "beam-string-length": (lambda: c(cantilever_modes, "1", 1.0, 1.0, 2), BodyError, ["length"]),
    "beam-nan-EI": (lambda: c(cantilever_modes, 1.0, 1.0, np.nan, 2), BodyError, ["EI"]),
    "beam-float-modes": (lambda: c(cantilever_modes, 1.0, 1.0, 1.0, 2.5), BodyError, ["n_modes"]),
    "beam-none-mass": (lambda: c(cantilever_modes, 1.0, None, 1.0, 2), BodyError, ["mass"]),
    "beam-damping-nan": (lambda: c(flexible_beam, "bm", None, Revolute(), 1.0, 1.0, 1.0, 2, damping_ratio=np.nan),
                         BodyError, ["damping", "'bm'"]),
    "beam-directions-string": (lambda: c(flexible_beam, "bm", None, Revolute(), 1.0, 1.0, 1.0, 2, directions="z"),
                               BodyError, ["directions"]),
    "beam-directions-unhashable": (lambda: c(flexible_beam, "bm", None, Revolute(), 1.0, 1.0, 1.0, 2,
                                             directions=[["z"]]), BodyError, ["directions"]),
    # ---------------------------------------------------------------- systems
    "system-none": (lambda: c(MultibodySystem, None), BodyError, ["NoneType"]),
    "system-single-body": (lambda: c(MultibodySystem, RigidBody("b", None, Revolute(), I6)), BodyError, ["RigidBody"]),
    "system-not-body": (lambda: c(MultibodySystem, [3]), BodyError, ["3"]),
    "system-duplicate": (lambda: c(MultibodySystem, [RigidBody("b", None, Revolute(), I6)] * 2), BodyError, ["'b'"]),
    "system-unknown-parent": (lambda: c(MultibodySystem, [RigidBody("b", "zz", Revolute(), I6)]), UnknownNodeError,
                              ["'b'"]),
    "system-string-gravity": (lambda: c(MultibodySystem, [RigidBody("b", None, Revolute(), I6)], "down"),
                              DimensionError, ["gravity"]),
    "system-string-list-gravity": (lambda: c(MultibodySystem, [RigidBody("b", None, Revolute(), I6)], ["0", "0", "1"]),
                                   DimensionError, ["gravity"]),
    "system-nan-gravity": (lambda: c(MultibodySystem, [RigidBody("b", None, Revolute(), I6)], [0, 0, np.nan]),
                           DimensionError, ["gravity"]),
    "cluster-far-state": (lambda: c(_four_bar().mass_matrix, [1e6]), SKOError, ["cluster 'crank'", "smaller steps"]),
    "cluster-huge-state": (lambda: c(_four_bar().forward_dynamics, [1e200], [0.0], [0.0]), SKOError, ["cluster 'crank'"]),
    "system-q-short": (lambda: c(_system().mass_matrix, [0.0]), DimensionError, ["q"]),
    "system-q-nan": (lambda: c(_system().mass_matrix, [np.nan, 0.0]), NonFiniteError, ["q"]),
    "system-q-strings": (lambda: c(_system().mass_matrix, ["a", "b"]), DimensionError, ["q"]),
    "system-q-none": (lambda: c(_system().mass_matrix, None), DimensionError, ["q"]),
    "system-v-inf": (lambda: c(_system().bias_forces, [0.0, 0.0], [np.inf, 0.0]), NonFiniteError, []),
    "system-tau-string": (lambda: c(_system().forward_dynamics, [0.0, 0.0], [0.0, 0.0], "ab"), DimensionError, ["tau"]),
    "system-force-unknown": (lambda: c(_system().bias_forces, [0.0, 0.0], None, {"zz": np.zeros(6)}),
                             UnknownNodeError, ["'zz'"]),
    "system-force-unhashable": (lambda: c(_system().bias_forces, [0.0, 0.0], None, _ListKeyed({("link1",): 0})),
                                UnknownNodeError, ["['link1']"]),
    "system-random-rng-string": (lambda: c(_system().random_configuration, "seed"), DimensionError, ["'seed'"]),
    "system-force-list": (lambda: c(_system().bias_forces, [0.0, 0.0], None, [np.zeros(6)]), DimensionError,
                          ["mapping"]),
    "system-integrate-dt": (lambda: c(_system().integrate, [0.0, 0.0], [1.0, 1.0], "x"), DimensionError, ["dt"]),
    "system-ops-set": (lambda: c(_system().operational_space_inertia, [0.0, 0.0], {"link1", "link2"}), SKOError,
                       ["ordered sequence"]),
    "simulate-string-dt": (lambda: c(simulate, _system(), [0.0, 0.0], [0.0, 0.0], "0.01", 3), DimensionError, ["dt"]),
    "simulate-nan-dt": (lambda: c(simulate, _system(), [0.0, 0.0], [0.0, 0.0], np.nan, 3), NonFiniteError, ["dt"]),
    "simulate-negative-dt": (lambda: c(simulate, _system(), [0.0, 0.0], [0.0, 0.0], -0.1, 3), DimensionError, ["dt"]),
    "simulate-float-steps": (lambda: c(simulate, _system(), [0.0, 0.0], [0.0, 0.0], 0.01, 2.5), DimensionError,
                             ["steps"]),
    "simulate-none-steps": (lambda: c(simulate, _system(), [0.0, 0.0], [0.0, 0.0], 0.01, None), DimensionError,
                            ["steps"]),
    "simulate-q0-strings": (lambda: c(simulate, _system(), ["a", "b"], [0.0, 0.0], 0.01, 2), DimensionError, ["q"]),
    "simulate-torque-not-callable": (lambda: c(simulate, _system(), [0.0, 0.0], [0.0, 0.0], 0.01, 2, 3.0), SKOError,
                                     ["torque"]),
    "simulate-diverging": (lambda: c(simulate, _system(), [0.1, 0.2], [1e150, 0.0], 0.01, 5), NonFiniteError,
                           ["simulate: step 1", "diverges"]),
    "simulate-torque-nan": (lambda: c(simulate, _system(), [0.0, 0.0], [0.0, 0.0], 0.01, 3, lambda t, q, v: [np.nan, 0]),
                            NonFiniteError, ["simulate: torque(t, q, qd) at t = 0 s", "tau"]),
    "simulate-torque-batch": (lambda: c(simulate, _system(), [0.0, 0.0], [0.0, 0.0], 0.01, 3,
                                        lambda t, q, v: np.zeros((2, 2))), DimensionError, ["tau", "(2, 2)"]),
    "simulate-torque-strings": (lambda: c(simulate, _system(), [0.0, 0.0], [0.0, 0.0], 0.01, 3, lambda t, q, v: "ab"),
                                DimensionError, ["tau"]),
    # ---------------------------------------------------------------- builder
    "builder-string-mass": (lambda: c(_builder_body, mass="1"), RigidSystemError, ["mass", "'x'"]),
    "builder-none-com": (lambda: c(_builder_body, com=[None, 0, 0]), RigidSystemError, ["centre of mass", "'x'"]),
    "builder-nan-com": (lambda: c(_builder_body, com=[0.0, np.nan, 0.0]), RigidSystemError, ["centre of mass"]),
    "builder-list-mass": (lambda: c(_builder_body, mass=[1.0]), RigidSystemError, ["mass"]),
    "builder-inf-mass": (lambda: c(_builder_body, mass=np.inf), RigidSystemError, ["mass"]),
    "builder-zero-placement": (lambda: c(_builder_body, placement=np.zeros((6, 6))), RigidSystemError,
                               ["placement", "'x'"]),
    "builder-4x4-placement": (lambda: c(_builder_body, placement=np.eye(4)), RigidSystemError, ["placement", "(4, 4)"]),
    "builder-string-gravity": (lambda: c(SystemBuilder, "down"), RigidSystemError, ["gravity"]),
    "builder-strings-gravity": (lambda: c(SystemBuilder, ["0", "0", "-9.81"]), RigidSystemError, ["gravity"]),
    "builder-unhashable-name": (lambda: c(_builder_body, name=["x"]), RigidSystemError, ["hashable"]),
    "builder-unhashable-parent": (lambda: c(_builder_body, parent=["base"]), RigidSystemError, ["['base']", "hashable"]),
    "coupling-string-ratio": (lambda: c(_coupled().add_coupling, "k", "x", "y", "2"), RigidSystemError, ["ratio", "'2'"]),
    "coupling-nan-offset": (lambda: c(_coupled().add_coupling, "k", "x", "y", 1.0, np.nan), RigidSystemError, ["offset"]),
    "coupling-to-itself": (lambda: c(_coupled().add_coupling, "k", "x", "x"), RigidSystemError, ["'x'", "itself"]),
    "coupling-unhashable-joint": (lambda: c(_coupled().add_coupling, "k", ["x"], "y"), RigidSystemError, ["['x']"]),
    "coupling-unhashable-name": (lambda: c(_coupled().add_coupling, ["k"], "x", "y"), RigidSystemError, ["['k']"]),
    "loop-zero-placement": (lambda: c(_coupled().add_loop_joint, "L", "x", "y", Revolute(), np.zeros((6, 6))),
                            RigidSystemError, ["placement of loop 'L'", "rigid"]),
    "build-unknown-independent": (lambda: c(_coupled(True).build, independent=["zz"]), UnknownNodeError, ["'zz'"]),
    "build-independent-number": (lambda: c(_coupled(True).build, independent=5), SKOError, ["independent", "int"]),
    "build-initial-list": (lambda: c(_coupled(True).build, initial=[0.1]), SKOError, ["initial", "list"]),
    "build-initial-string": (lambda: c(_coupled(True, loop=True).build, initial={"x": "a"}), SKOError, ["member 'x'", "dtype"]),
    "build-initial-complex": (lambda: c(_coupled(True, loop=True).build, initial={"x": 1j}), SKOError,
                              ["member 'x'", "real"]),
    "builder-joint-string": (lambda: c(_builder_body, joint="revolute"), RigidSystemError, ["joint"]),
    "builder-string-inertia": (lambda: c(_builder_body, mass=None, com=None, inertia_com=None, inertia="I"),
                               RigidSystemError, ["inertia", "'x'"]),
    # ---------------------------------------------------------------- io
    "dh-none": (lambda: c(dh_system, None), RigidSystemError, ["NoneType"]),
    "dh-single-link": (lambda: c(dh_system, _dh()), RigidSystemError, ["DHLink"]),
    "dh-empty": (lambda: c(dh_system, []), RigidSystemError, ["at least one"]),
    "dh-string-a": (lambda: c(dh_system, [_dh(a="x")]), RigidSystemError, ["parameter a", "'x'"]),
    "dh-none-theta": (lambda: c(dh_system, [_dh(theta=None)]), RigidSystemError, ["parameter theta"]),
    "dh-nan-d": (lambda: c(dh_system, [_dh(d=np.nan)]), RigidSystemError, ["parameter d", "non-finite"]),
    "dh-list-alpha": (lambda: c(dh_system, [_dh(alpha=[0.0])]), RigidSystemError, ["parameter alpha"]),
    "dh-4x4-base": (lambda: c(dh_system, [_dh()], base_placement=np.eye(4)), RigidSystemError, ["base placement", "(4, 4)"]),
    "dh-zero-base": (lambda: c(dh_system, [_dh()], base_placement=np.zeros((6, 6))), RigidSystemError,
                     ["base placement", "rigid"]),
    "dh-convention": (lambda: c(dh_system, [_dh()], convention="weird"), RigidSystemError, ["'weird'"]),
    "dh-string-mass": (lambda: c(dh_system, [_dh(mass="heavy")]), RigidSystemError, ["mass", "'heavy'"]),
    "urdf-none": (lambda: c(load_urdf, None), URDFError, ["NoneType"]),
    "urdf-int-path": (lambda: c(load_urdf, 3), URDFError, ["int"]),
    "urdf-missing-file": (lambda: c(load_urdf, "/nonexistent/robot.urdf"), URDFError, ["robot.urdf"]),
    "urdf-parse-none": (lambda: c(parse_urdf, None), URDFError, ["NoneType"]),
    "urdf-entity-bomb": (lambda: c(parse_urdf, BOMB), URDFError, ["DTD or entity"]),
    "urdf-malformed": (lambda: c(parse_urdf, "<robot"), URDFError, ["malformed"]),
    "urdf-huge-origin": (lambda: c(parse_urdf, URDF.format(extra='<origin xyz="1e308 0 0"/>')), URDFError,
                         ["'j1'", "overflow"]),
    "urdf-nan-origin": (lambda: c(parse_urdf, URDF.format(extra='<origin xyz="nan 0 0"/>')), URDFError, ["'j1'"]),
    "urdf-zero-axis": (lambda: c(parse_urdf, URDF.format(extra='<axis xyz="0 0 0"/>')), URDFError, ["'j1'", "axis"]),
    "urdf-word-axis": (lambda: c(parse_urdf, URDF.format(extra='<axis xyz="x y z"/>')), URDFError, ["'j1'", "axis"]),
    "mjcf-none": (lambda: c(_load_mjcf, None), SKOError, ["MJCF source", "NoneType"]),
    "mjcf-list": (lambda: c(_load_mjcf, ["<mujoco/>"]), SKOError, ["MJCF source", "list"]),
    "mjcf-bad-bytes": (lambda: c(_load_mjcf, b"<mujoco \xff/>"), SKOError, ["UTF-8"]),
    "mjcf-malformed": (lambda: c(_load_mjcf, "<mujoco"), SKOError, ["MuJoCo rejects"]),
    "mjcf-nan-position": (lambda: c(_load_mjcf, MJCF.format(pos="nan 0 0", g="")), SKOError, ["'arm'"]),
    "mjcf-huge-position": (lambda: c(_load_mjcf, MJCF.format(pos="1e308 0 0", g="")), SKOError, ["'arm'", "overflow"]),
    "inertia-infinite": (lambda: c(RigidBody, "b", None, Revolute(), np.diag([1, 1, 1, np.inf, np.inf, np.inf])),
                         SKOError, ["'b'"]),
    "interop-string-q": (lambda: c(_mujoco_map().q, ["a"] * 8), DimensionError, ["q", "dtype"]),
    "interop-nan-qvel": (lambda: c(_mujoco_map().v_back, [np.nan] * 7, np.r_[1.0, 0, 0, 0, 0, 0, 0, 0.1]),
                         NonFiniteError, ["qvel"]),
    "interop-wrong-matrix": (lambda: c(_mujoco_map().matrix, np.eye(3)), DimensionError, ["(3, 3)", "(7, 7)"]),
    "interop-complex-v": (lambda: c(_mujoco_map().v, np.ones(7) * 1j, np.r_[1.0, 0, 0, 0, 0, 0, 0, 0.1]),
                          DimensionError, ["real"]),
    "urdf-string-gravity": (lambda: c(parse_urdf, URDF.format(extra=""), gravity="down"), SKOError, ["gravity"]),
    # ---------------------------------------------------------------- verify
    "verify-unknown-check": (lambda: c(run_check, "no_such_check"), SKOError, ["'no_such_check'"]),
    "verify-unknown-model": (lambda: c(run, ["no_such_model"]), SKOError, ["'no_such_model'"]),
    "verify-bad-model-type": (lambda: c(run, [3.5]), SKOError, ["float"]),
    "verify-physics-on-bare-model": (lambda: c(run_check, "christoffel", _model()), SKOError, ["'christoffel'", "system"]),
    "verify-duplicate-check": (lambda: c(_duplicate_check), SKOError, ["'dup'"]),
}


def _duplicate_check():
    registry = Registry()
    registry.add("dup", "Eq. 0", lambda case: compare(0, 0))
    registry.add("dup", "Eq. 0", lambda case: compare(0, 0))


def _fingerprint(x):
    """A comparable snapshot of an input: arrays by dtype, shape and content, containers entry by
    entry, NaN as a marker, other objects (joints, models, systems) by identity."""
    if isinstance(x, np.ndarray):
        content = tuple(map(repr, x.flat)) if x.dtype == object else x.tobytes()
        return ("array", x.dtype.str, x.shape, content)
    if isinstance(x, dict):
        return ("dict", tuple((repr(k), _fingerprint(v)) for k, v in x.items()))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(_fingerprint(e) for e in x))
    if isinstance(x, float) and x != x:
        return ("nan",)
    if x is None or isinstance(x, (bool, int, float, complex, str, bytes, np.number)):
        return ("value", type(x).__name__, repr(x))
    return ("object", id(x))


def _same(a, b) -> bool:
    return _fingerprint(a) == _fingerprint(b)


def test_there_are_at_least_a_hundred_cases():
    assert len(CASES) >= 100


BACKENDS = ("compiled", "reference")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(CASES))
def test_hostile_input_gets_a_clear_project_error(name, backend):
    thunk, error, words = CASES[name]
    fn, args, kwargs = thunk()
    before = _fingerprint((args, kwargs))
    with use_backend(backend), pytest.raises(SKOError) as info:
        fn(*args, **kwargs)
    assert isinstance(info.value, error), f"{type(info.value).__name__}: {info.value}"
    message = str(info.value)
    for word in words:
        assert word in message, message
    assert _fingerprint((args, kwargs)) == before, "the inputs were changed"


# ---------------------------------------------------------------- silent wrong answers, now right or refused
def test_huge_axis_normalises_exactly():
    system = lambda axis: MultibodySystem([RigidBody("b", None, Revolute(axis), I6)])  # noqa: E731
    M = system([0.0, 0.0, 1.0]).mass_matrix([0.3])
    assert np.allclose(system([0.0, 0.0, 1e200]).mass_matrix([0.3]), M, rtol=1e-14)
    assert np.allclose(system([0.0, 0.0, 1e-200]).mass_matrix([0.3]), M, rtol=1e-14)


@pytest.mark.parametrize("backend", BACKENDS)
def test_huge_quaternion_gives_its_rotation(backend):
    system = MultibodySystem([RigidBody("b", None, Free(), I6), RigidBody("c", "b", Spherical(), I6)])
    q = system.random_configuration(3)
    v = np.linspace(-1, 1, system.nv)
    huge = q.copy()
    huge[:4] *= 1e160
    huge[7:11] *= 1e200
    with use_backend(backend):
        assert np.allclose(system.energy(huge, v), system.energy(q, v), rtol=1e-12)
        assert np.allclose(system.forward_dynamics(huge, v, v), system.forward_dynamics(q, v, v), rtol=1e-10)
        assert np.allclose(system.mass_matrix(np.array([huge, q])), system.mass_matrix(q), rtol=1e-12)
    assert np.allclose(Spherical().normalize(q[:4] * 1e300), q[:4], rtol=1e-14)


# ---------------------------------------------------------------- both paths: arrays of every kind, batches
def _floating():
    """A free-floating base with a ball joint and a revolute joint (quaternions, nq ≠ nv)."""
    return MultibodySystem([RigidBody("base", None, Free(), I6), RigidBody("ball", "base", Spherical(), I6),
                            RigidBody("arm", "ball", Revolute([0, 1, 0]), I6, pose_transform([0.3, 0.0, 0.0]))])


def _state(system, batch: int = 3):
    Q = np.array([system.random_configuration(s) for s in range(batch)])
    V = np.linspace(-1.0, 1.0, batch * system.nv).reshape(batch, system.nv)
    return Q, V, V[::-1].copy()


def _read_only(x):
    x = np.array(x)
    x.setflags(write=False)
    return x


METHODS = {
    "mass_matrix": lambda s, q, v, t: s.mass_matrix(q),
    "mass_matrix_inverse": lambda s, q, v, t: s.mass_matrix_inverse(q),
    "inverse_dynamics": lambda s, q, v, t: s.inverse_dynamics(q, v, t),
    "forward_dynamics": lambda s, q, v, t: s.forward_dynamics(q, v, t),
    "forward_dynamics_force": lambda s, q, v, t: s.forward_dynamics(q, v, t, {"arm": np.linspace(1, 2, 6)}),
    "energy": lambda s, q, v, t: s.energy(q, v),
    "gravity_forces": lambda s, q, v, t: s.gravity_forces(q),
}

# each turns a float64 state (Q, V, T of shape (B, n)) into the same numbers in another form
FORMS = {
    "read-only": lambda x: _read_only(x),
    "strided": lambda x: np.repeat(x, 2, axis=-1)[..., ::2],
    "fortran": np.asfortranarray,
    "object": lambda x: x.astype(object),
    "list": lambda x: x.tolist(),
    "float32": lambda x: x.astype(np.float32),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("method", sorted(METHODS))
def test_any_array_form_gives_the_float64_answer(method, form, backend):
    """Read-only, strided, Fortran-ordered, float32, object and list inputs, one state or a batch,
    give the answer of the same numbers as float64 arrays on both paths (never a numba typing
    error), and are left unchanged."""
    system = _floating()
    state = [FORMS[form](x) for x in _state(system)]
    with use_backend("reference"):
        want = METHODS[method](system, *(np.asarray(x, dtype=float) for x in state))
    for batch in (False, True):
        args = state if batch else [FORMS[form](np.asarray(x)[0]) for x in state]
        before = _fingerprint(args)
        with use_backend(backend):
            got = METHODS[method](system, *args)
        assert np.allclose(np.asarray(got, dtype=complex), want if batch else want[0], rtol=1e-9, atol=1e-9), method
        assert _fingerprint(args) == before, "the inputs were changed"


RECURSIONS = {
    "phi_apply": (alg.phi_apply, "node"),
    "phi_star_apply": (alg.phi_star_apply, "node"),
    "inverse_dynamics": (alg.inverse_dynamics, "dof"),
    "forward_dynamics": (alg.forward_dynamics, "dof"),
    "mass_matrix_solve": (alg.mass_matrix_solve, "dof"),
    "innovations_inverse_apply": (alg.innovations_inverse_apply, "dof"),
    "D_inverse_apply": (alg.D_inverse_apply, "dof"),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("name", sorted(RECURSIONS))
def test_the_recursions_take_any_array_form(name, form, backend):
    """The model-level recursions on read-only, strided, Fortran, float32, object and list
    vectors: the float64 answer on both paths (an object vector with a compiled Riccati result
    was a numba TypingError), the input unchanged."""
    function, size = RECURSIONS[name]
    model = _model(M=("a", np.array([[2.0, 0.5], [0.5, 1.0]])))
    n = model.node_size if size == "node" else model.dof_size
    x = FORMS[form](np.linspace(0.5, 1.5, 2 * n).reshape(2, n))[0]
    with use_backend("reference"):
        want = function(model, np.asarray(x, dtype=float))
    before = _fingerprint(x)
    with use_backend(backend):
        got = function(model, x)
    assert np.allclose(np.asarray(got, dtype=complex), want, rtol=1e-12, atol=1e-12)
    assert _fingerprint(x) == before


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("method", sorted(METHODS))
def test_integer_and_bool_states_are_numbers(method, backend):
    system = planar_chain(3)
    with use_backend(backend):
        for kind in (int, bool):
            q = np.array([1, 0, 1]).astype(kind)
            got = METHODS[method](system, q, q, q) if method != "forward_dynamics_force" else None
            if got is not None:
                assert np.allclose(got, METHODS[method](system, q.astype(float), q.astype(float), q.astype(float)))


def _batch_case(change):
    system = _floating()
    Q, V, T = _state(system)
    return (system, *change(system, Q, V, T))


def _zero_quaternion(Q):
    Q = Q.copy()
    Q[1, 7:11] = 0.0  # the ball joint of the second state
    return Q


def _nan_at(x, index):
    x = x.copy()
    x[index] = np.nan
    return x


# (the state as (system, q, v, tau), the expected error, words the message must contain)
BATCH_CASES = {
    "wrong-batch-size": (lambda: _batch_case(lambda s, Q, V, T: (Q, V[:2], T[:2])), DimensionError,
                         ["v", "(2, 10)", "(3, 12)"]),
    "batched-q-plain-v": (lambda: _batch_case(lambda s, Q, V, T: (Q, V[0], T[0])), DimensionError, ["v", "(10,)"]),
    "plain-q-batched-v": (lambda: _batch_case(lambda s, Q, V, T: (Q[0], V, T)), DimensionError, ["v", "(3, 10)"]),
    "three-d": (lambda: _batch_case(lambda s, Q, V, T: (Q[None], V[None], T[None])), DimensionError, ["q", "(1, 3, 12)"]),
    "wrong-width": (lambda: _batch_case(lambda s, Q, V, T: (Q[:, :-1], V, T)), DimensionError, ["q", "11", "nq = 12"]),
    "nan-in-one-state": (lambda: _batch_case(lambda s, Q, V, T: (_nan_at(Q, (1, 5)), V, T)), NonFiniteError,
                         ["q", "first at index [1, 5]"]),
    "inf-velocity-in-one-state": (lambda: _batch_case(lambda s, Q, V, T: (Q, V * [[1], [1], [np.inf]], T)),
                                  NonFiniteError, ["v", "index [2, 0]"]),
    "strings-in-a-batch": (lambda: _batch_case(lambda s, Q, V, T: (np.full(Q.shape, "a", dtype=object), V, T)),
                           DimensionError, ["q", "'a'"]),
    "ragged-batch": (lambda: _batch_case(lambda s, Q, V, T: ([list(Q[0]), list(Q[1][:3])], V, T)), DimensionError,
                     ["q", "not an array"]),
    "zero-quaternion-in-one-state": (lambda: _batch_case(lambda s, Q, V, T: (_zero_quaternion(Q), V, T)),
                                     JointError, ["state 1 of the batch", "quaternion", "zero norm"]),
    "huge-velocity-in-one-state": (lambda: _batch_case(lambda s, Q, V, T: (Q, V * [[1], [1e200], [1]], T)),
                                   NonFiniteError, ["state 1 of the batch", "overflows"]),
    "huge-torque": (lambda: _batch_case(lambda s, Q, V, T: (Q, V, T * 1e308)), NonFiniteError, ["NaN or infinity"]),
    "long-double-beyond-float64": (lambda: _batch_case(lambda s, Q, V, T: (Q, V, T.astype(np.longdouble) *
                                                                          np.longdouble("1e400"))), NonFiniteError,
                                   ["tau"]),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(BATCH_CASES))
def test_hostile_batch_gets_a_clear_project_error(name, backend):
    """Batched states (B, n) the compiled path accepts: every bad one is refused on both paths
    with the project's error naming the argument, shape, state or body."""
    system, q, v, tau = BATCH_CASES[name][0]()
    error, words = BATCH_CASES[name][1:]
    before = _fingerprint((q, v, tau))
    with use_backend(backend), pytest.raises(SKOError) as info:
        system.forward_dynamics(q, v, tau)
    assert isinstance(info.value, error), f"{type(info.value).__name__}: {info.value}"
    for word in words:
        assert word in str(info.value), str(info.value)
    assert _fingerprint((q, v, tau)) == before, "the inputs were changed"


@pytest.mark.parametrize("backend", BACKENDS)
def test_overflow_names_the_body_on_both_paths(backend):
    system = _floating()
    q, v, _ = _state(system, 1)
    with use_backend(backend):
        for call in (system.bias_forces, system.sko_model, system.node_states, system.energy):
            with pytest.raises(NonFiniteError, match="body 'base': its [ab]"):
                call(q[0], v[0] * 1e200)


@pytest.mark.parametrize("method", ["forward_dynamics", "mass_matrix_inverse", "mass_matrix"])
def test_a_flexible_body_overflowing_gets_the_same_named_error_on_both_paths(method):
    """Modal coordinates so large that M(k) overflows: the compiled Riccati pass only saw a D(k)
    that is not positive definite; both paths now name the body whose terms overflowed."""
    from sko.examples.bodies import flexible_examples

    system = flexible_examples()["flexible-two-link"]()
    Q = np.array([system.random_configuration(s) for s in range(2)]) * [[1.0], [1e160]]
    V = np.zeros((2, system.nv))
    messages = []
    for backend in BACKENDS:
        with use_backend(backend), pytest.raises(NonFiniteError) as info:
            METHODS[method](system, Q, V, V)
        messages.append(str(info.value))
    assert messages[0] == messages[1] and "state 1 of the batch" in messages[0] and "'upper'" in messages[0]


class _Toy(BodyType):
    """A researcher's body type (one dof, Python state only) that returns ``bad`` numbers."""

    q_size = dof_size = node_dim = 1
    attachment_names = ()

    def __init__(self, name, parent, field_, value):
        super().__init__(name, parent)
        self.field_, self.value = field_, value

    def at_state(self, q, qd, inboard, gravity):
        s = dict(E=np.zeros((1, 6)), H=np.ones((1, 1)), M=np.eye(1), a=np.zeros(1), b=np.zeros(1), V=qd.copy())
        s[self.field_] = self.value
        return NodeState(**s, attachments={})


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("method", ["mass_matrix", "forward_dynamics", "energy"])
@pytest.mark.parametrize("field_, value, error, word", [
    ("M", -np.eye(1), NotPositiveDefiniteError, "inertia M"),
    ("M", np.full((1, 1), np.nan), NonFiniteError, "inertia M"),
    ("H", np.array([["x"]], dtype=object), DimensionError, "joint map H"),
    ("H", np.zeros((1, 1)), SKOError, "joint map H"),
    ("b", np.array([np.inf]), NonFiniteError, "gyroscopic term b"),
])
def test_a_body_types_bad_state_is_refused_on_both_paths(field_, value, error, word, method, backend):
    """The reference path checked a researcher's state only where it built a model: an energy
    with a negative inertia came out negative, silently."""
    system = MultibodySystem([RigidBody("r", None, Revolute(), I6), _Toy("toy", "r", field_, value)])
    for q in (np.array([0.1, 0.2]), np.array([[0.1, 0.2], [0.3, 0.4]])):
        with use_backend(backend), pytest.raises(error, match=f"{word} of body 'toy'"):
            METHODS[method](system, q, q, q)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("method", ["forward_dynamics", "inverse_dynamics", "energy"])
@pytest.mark.parametrize("field_, value", [("M", np.eye(1) + 1e-3j), ("a", np.array([1e-3j])),
                                           ("E", np.zeros((1, 6)) + 1e-3j)])
def test_a_body_types_complex_state_at_a_real_state_is_refused(field_, value, method, backend):
    """The compiled path dropped the imaginary part (a ComplexWarning), the reference path
    answered complex numbers at a real state."""
    system = MultibodySystem([RigidBody("r", None, Revolute(), I6), _Toy("toy", "r", field_, value)])
    with use_backend(backend), pytest.raises(BodyError, match=rf"body 'toy' \(_Toy\) returned a complex {field_} "
                                                               r"at a real state"):
        METHODS[method](system, np.array([0.1, 0.2]), np.array([0.1, 0.2]), np.array([0.1, 0.2]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_complex_parameters_make_a_body_types_state_complex_at_a_real_state(backend):
    """The regressors' complex step in a body's parameters π (not its state) is not refused."""
    from sko.examples.bodies import flexible_two_link

    system = flexible_two_link()
    rng = np.random.default_rng(0)
    q, v, dv = system.random_configuration(rng), rng.normal(size=system.nv), rng.normal(size=system.nv)
    with use_backend(backend):
        Y = system.joint_torque_regressor(q, v, dv)
        want = system.inverse_dynamics(q, v, dv) - system.hinge_forces(q, v)
    np.testing.assert_allclose(Y @ system.inertial_parameters(), want, rtol=1e-9, atol=1e-9)


class _ToyForce(_Toy):
    """:class:`_Toy` with a good state and the hinge force ``force``."""

    def __init__(self, name, parent, force):
        super().__init__(name, parent, "b", np.zeros(1))
        self.force = force

    def hinge_force(self, q, qd):
        return self.force


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("method", ["forward_dynamics", "inverse_dynamics"])
@pytest.mark.parametrize("force, error, message", [
    (np.array([1e-3j]), BodyError, r"its hinge_force returns complex forces at a real state"),
    (np.array(["1"]), BodyError, r"its hinge_force returns .*dtype <U1"),
    (np.array([np.nan]), NonFiniteError, r"its hinge_force returns NaN or infinity"),
])
def test_a_body_types_bad_hinge_force_is_named(force, error, message, method, backend):
    """numpy's UFuncTypeError came from adding a complex or text force to the real forces."""
    system = MultibodySystem([RigidBody("r", None, Revolute(), I6), _ToyForce("toy", "r", force)])
    with use_backend(backend), pytest.raises(error, match=r"body 'toy' \(_ToyForce\): " + message):
        METHODS[method](system, np.array([0.1, 0.2]), np.array([0.1, 0.2]), np.array([0.1, 0.2]))


def test_a_request_is_linear_in_memory():
    """The compiled request allocated nv × nv (the identity for ℳ^{-1}) and Σm × nv scratch for
    every request: forward dynamics of a 2000-link chain was quadratic (115 ms; 4 ms now). The
    right-hand sides of the articulated passes are ``T − 𝒞`` (nv) or the identity (nv × nv)."""
    from sko.engine import requests as rq
    from sko.engine.dispatch import engine

    system = planar_chain(40)
    sizes = rq.sizes(engine(system).layout)
    nv, ns = system.nv, sizes.ns
    for name, columns in (("forward_dynamics", 1), ("mass_matrix_inverse", nv)):
        *_, z, rhs = rq.REQUESTS[name].buffers(sizes)
        assert z == ns * columns and rhs == nv * columns
    assert rq.REQUESTS["inverse_dynamics"].buffers(sizes) == (3 * ns,)


def test_one_switch_for_systems_and_recursions():
    """``sko.engine.use_backend`` forces the systems' path too (a system never runs compiled
    while the recursions are forced to the reference)."""
    from sko.engine.dispatch import backend

    with use_backend("reference"):
        assert backend() == "reference"
    assert backend() == "compiled"


def test_a_backend_block_in_one_thread_leaves_the_others_alone():
    """The reference path answers a state the kernels overflow on inside a backend block: with a
    process-wide switch, two threads doing so could leave every thread on the reference path."""
    import threading

    inside, release, seen = threading.Event(), threading.Event(), []

    def worker():
        with use_backend("reference"):
            inside.set()
            release.wait(10)
            seen.append(get_backend())

    thread = threading.Thread(target=worker)
    thread.start()
    inside.wait(10)
    seen.append(get_backend())
    release.set()
    thread.join(10)
    assert seen == ["compiled", "reference"] and get_backend() == "compiled"


@pytest.mark.parametrize("backend", BACKENDS)
def test_verify_never_passes_a_non_finite_residual(backend):
    with use_backend(backend):
        _verify_never_passes_a_non_finite_residual()


def _verify_never_passes_a_non_finite_residual():
    result = run_check("crba", _nan_case())
    assert not result.passed and "NaN" in result.detail
    registry = Registry()  # a check whose sides are not finite: max(worst, nan) used to keep worst = 0
    registry.add("nan_side", "Eq. 0", lambda case: [compare(np.zeros(2), np.zeros(2)), compare([np.nan, 0.0], [0.0, 0.0])])
    registry.add("inf_scale", "Eq. 0", lambda case: compare([1.0], [1.0 + 1e-300], scale=np.inf, label="s"))
    for name in ("nan_side", "inf_scale"):
        result = run_check(name, _model(), registry=registry)
        assert not result.passed and "non-finite" in result.detail, result
        assert result.to_json()["residual"] is None  # valid JSON, not NaN
    results = run(models=[_nan_case()])
    assert results and not any(r.passed and r.residual is not None and not np.isfinite(r.residual) for r in results)


def test_empty_system_is_a_system_with_no_dofs():
    system, z = MultibodySystem([]), np.zeros(0)
    assert system.mass_matrix(z).shape == (0, 0) and system.bias_forces(z, z).shape == (0,)
    assert system.energy(z, z) == 0


def test_tree_contains_unhashable_label_is_false():
    tree = TreeDigraph.from_parents(TREE)
    assert ["a"] not in tree and {"a": 1} not in tree and "a" in tree


def test_cli_verify_fails_on_nan_model(tmp_path):
    """``python -m sko verify --check crba`` on a model whose ℳ holds NaN exits 1 (it printed a
    pass with residual 0 and exited 0)."""
    (tmp_path / "nan_model.py").write_text(
        "import numpy as np\n"
        "from sko import SKOModel\n"
        "from sko.graphs import TreeDigraph\n"
        "def build():\n"
        "    M = np.eye(2)\n"
        "    M[0, 0] = np.nan\n"
        "    tree = TreeDigraph.from_parents({'a': None, 'b': 'a'})\n"
        "    return SKOModel(tree, {'b': np.eye(2)}, {'a': np.eye(2), 'b': np.eye(2)}, {'a': M, 'b': np.eye(2)},"
        " validate=False)\n")
    env = {**__import__("os").environ, "PYTHONPATH": str(tmp_path)}
    out = subprocess.run([sys.executable, "-m", "sko", "verify", "--model", "nan_model:build", "--check", "crba"],
                         capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "FAIL" in out.stdout and "0 passed, 1 failed" in out.stdout


def test_cli_verify_runs_physics_checks_on_a_user_system(tmp_path):
    (tmp_path / "user_system.py").write_text(
        "from sko.examples.rigid import planar_chain\n"
        "def build():\n"
        "    return planar_chain(3)\n")
    env = {**__import__("os").environ, "PYTHONPATH": str(tmp_path)}
    out = subprocess.run([sys.executable, "-m", "sko", "verify", "--model", "user_system:build", "--check",
                          "christoffel", "--check", "power_balance"], capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "2 passed, 0 failed" in out.stdout and "christoffel" in out.stdout


def test_huge_but_finite_inertia_is_checked_without_overflow():
    """A body of density 1e308 (MuJoCo computes its inertia) is physical: its checks squared its
    entries and numpy's eigvalsh failed on the infinities (LinAlgError)."""
    system = _load_mjcf(MJCF.format(pos="0 0 0", g='density="1e300"'))
    assert np.isfinite(system.mass_matrix([0.3])).all()
    huge = spatial_inertia(1e200, np.array([0.1, 0.0, 0.0]), np.diag([1e199, 2e199, 2.5e199]))
    assert np.isfinite(MultibodySystem([RigidBody("b", None, Revolute(), huge)]).mass_matrix([0.2])).all()
    with pytest.raises(SKOError, match="'b'"):  # not physical at any scale
        RigidBody("b", None, Revolute(), spatial_inertia(1e200, np.zeros(3), np.diag([1e199, 1e199, 5e199])))


@pytest.mark.parametrize("inertia", [spatial_inertia(1e308, np.zeros(3), np.eye(3)),
                                     spatial_inertia(1.0, np.zeros(3), np.diag([1e305, 1e305, 1e305]))])
def test_an_inertia_whose_products_overflow_is_refused_by_the_body(inertia):
    """A body of mass 1e308 was made, and every call of its system then overflowed (its weight
    m g, I ω² leave the floating-point range): the body refuses it by name, wherever it comes
    from (the builder, MJCF, a user), as a placement too far away is refused."""
    with pytest.raises(BodyError, match=r"spatial inertia of body 'b' has an entry of size 1e\+30[58]: products "
                                        r"with .* would overflow the floating-point range"):
        RigidBody("b", None, Revolute(), inertia)
    with pytest.raises(SKOError, match=r"'arm'.* has an entry of size .*e\+30\d: products"):
        _load_mjcf(MJCF.format(pos="0 0 0", g='density="1e307"'))  # mass 8.4e304



@pytest.mark.parametrize("changes, named", [(dict(axial_inertia=1e308, transverse_inertia=1e308), r"rotor inertia of body "
                                             r"'link' has an entry of size 1e\+308"),
                                             (dict(gear_ratio=1e200), r"rotor inertia of body 'link' through its gear "
                                                                      r"\(N² J_a\) has an entry of size inf")])
def test_a_rotor_whose_products_overflow_is_refused_by_the_body(changes, named):
    """A geared rotor's inertia, and the inertia its joint sees through the gear, follow the rule of
    the spatial inertia: a ratio of 1e200 made N² J_a overflow at every state."""
    with pytest.raises(BodyError, match=named + r": products with .* would overflow"):
        _rotor(**changes)


def test_an_armature_whose_products_overflow_is_refused_by_the_body():
    """An armature on ℳ's diagonal follows the rule of the inertia: MJCF armature="1e308" loaded,
    and inverse dynamics then overflowed at any acceleration beyond 1.8."""
    from sko.bodies import ArmatureBody

    with pytest.raises(BodyError, match=r"armature of body 'b' has an entry of size 1e\+308: products"):
        ArmatureBody("b", None, Revolute(), spatial_inertia(1.0, np.zeros(3), np.eye(3)), [1e308])
    with pytest.raises(SKOError, match=r"armature of body 'arm' has an entry of size 1e\+308"):
        _load_mjcf(MJCF.replace('axis="0 1 0"', 'axis="0 1 0" armature="1e308"').format(pos="0 0 0", g=""))


def test_an_unnamed_mujoco_joint_maps_onto_the_loaded_system():
    """The loader names an unnamed joint 'joint<j>'; the map looked for None and refused."""
    m = _mujoco_map()
    q = np.r_[np.cos(0.2), 0.0, np.sin(0.2), 0.0, 0.1, 0.2, 0.3, 0.4]
    assert np.allclose(m.q_back(m.q(q)), q)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", ["mass_matrix", "composite_inertias", "newton_euler", "forward_dynamics"])
def test_an_unvalidated_nan_model_never_gives_nan(name, backend):
    """A model built with validate=False holding NaN: the compiled composite inertias came back as
    a dict of NaN blocks; every recursion now refuses (a result of NaN is never passed on)."""
    model = _nan_case().model
    args = {"newton_euler": ([1.0] * 4,), "forward_dynamics": ([1.0] * 4,)}.get(name, ())
    with use_backend(backend), pytest.raises(NonFiniteError):
        getattr(alg, name)(model, *args)


def test_longdouble_is_converted_up_front():
    model = _model(M=("a", np.eye(2, dtype=np.longdouble)))
    assert model.M["a"].dtype == np.float64
    assert np.isfinite(alg.mass_matrix(model)).all()


# ---------------------------------------------------------------- the fuzzer
_SCALARS = st.one_of(st.none(), st.text(max_size=3), st.booleans(), st.integers(-3, 3),
                     st.floats(allow_nan=True, allow_infinity=True), st.lists(st.floats(), max_size=3),
                     st.sampled_from([1e308, -1e308, 1e-308, np.longdouble(2), 1j]))
_VECTORS = st.one_of(_SCALARS, st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.none(),
                                                  st.text(max_size=1)), min_size=0, max_size=8))

_ENTRY_POINTS = {
    "revolute": lambda x, y: Revolute(x),
    "helical": lambda x, y: Helical([0, 0, 1], x),
    "rack": lambda x, y: RackAndPinion(x),
    "rotor": lambda x, y: _rotor(gear_ratio=x, rotor_mass=abs(y) if isinstance(y, float) else y),
    "beam": lambda x, y: cantilever_modes(x, 1.0, 1.0, 2),
    "mass": lambda x, y: _system().mass_matrix(x),
    "bias": lambda x, y: _system().bias_forces([0.1, 0.2], x),
    "forward": lambda x, y: _system().forward_dynamics([0.1, 0.2], [0.0, 0.0], x),
    "regressor": lambda x, y: _system().joint_torque_regressor([0.1, 0.2], x, y),
    "energy-regressor": lambda x, y: _system().kinetic_energy_regressor(x, y),
    "parameters": lambda x, y: _system().with_inertial_parameters(x),
    "energy": lambda x, y: MultibodySystem([RigidBody("b", None, Free(), I6)]).energy(x, y),
    "builder": lambda x, y: _builder_body(mass=x, com=y),
    "dh": lambda x, y: dh_system([_dh(a=x, d=y)]),
    "gravity": lambda x, y: MultibodySystem([RigidBody("b", None, Revolute(), I6)], x),
    "simulate": lambda x, y: simulate(_system(), [0.0, 0.0], [0.0, 0.0], x, 2),
    "ltdl-solve": lambda x, y: alg.ltdl_solve(np.array([[2.0, 0.0], [0.5, 1.0]]), (0, 1), x),
    "model": lambda x, y: _model(M=("c", x)),
    "coupling": lambda x, y: _coupled().add_coupling("k", "x", "y", x, y),
    "mjcf": lambda x, y: _load_mjcf(MJCF.format(pos=" ".join(map(str, x)) if isinstance(x, list) else str(x), g="")),
    "interop": lambda x, y: _MUJOCO_MAP.v_back(x, y),
    "loop-initial": lambda x, y: _coupled(True, loop=True).build(initial={"x": x}),
}


_MUJOCO_MAP = _mujoco_map()


def _finite(result) -> bool:
    if hasattr(result, "mass_matrix") or hasattr(result, "joint") or hasattr(result, "frequencies") or \
            hasattr(result, "energy") and hasattr(result, "t"):
        return True
    try:
        return bool(np.isfinite(np.asarray(result, dtype=complex)).all())
    except (TypeError, ValueError):
        return True  # a structured result (a joint, a body, a system)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(entry=st.sampled_from(sorted(_ENTRY_POINTS)), x=_VECTORS, y=_VECTORS)
def test_fuzz_public_entry_points(entry, x, y):
    """A finite result or an SKOError; inputs unchanged."""
    before = _fingerprint((x, y))
    try:
        result = _ENTRY_POINTS[entry](x, y)
    except SKOError:
        pass
    else:
        assert _finite(result), (entry, x, y, result)
    assert _fingerprint((x, y)) == before


_FLOATING = _floating()
_ELEMENTS = st.one_of(st.floats(-3.0, 3.0), st.sampled_from([0.0, np.nan, np.inf, -np.inf, 1e200, -1e300, 1e-300]))


def _single(a):
    with np.errstate(over="ignore"):  # 1e200 becomes inf in single precision: a hostile input too
        return a.astype(np.float32)


@st.composite
def _states(draw):
    """``(q, v, tau)`` for :func:`_floating`: one state or a batch, mostly the right shapes, of
    any dtype, memory order and writeability, with hostile numbers now and then."""
    system = _FLOATING
    batch = draw(st.sampled_from([None, None, 1, 3]))
    out = []
    for n in (system.nq, system.nv, system.nv):
        shape = (n,) if batch is None else (batch, n)
        shape = draw(st.sampled_from([shape] * 6 + [(n + 1,), (2, n), (1, 1, n), ()]))
        x = draw(hnp.arrays(np.float64, shape, elements=_ELEMENTS))
        x = draw(st.sampled_from([lambda a: a, _single, lambda a: a.astype(complex),
                                  lambda a: np.round(a).astype(np.int64) if (np.abs(a) < 1e9).all() else a,
                                  lambda a: a.astype(object), lambda a: a.T.copy().T, _read_only,
                                  lambda a: a.tolist()]))(x)
        out.append(x)
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(state=_states(), method=st.sampled_from(sorted(METHODS)), backend=st.sampled_from(BACKENDS))
def test_fuzz_system_states(state, method, backend):
    """Any state, one or a batch, on either path: a finite result or an SKOError, the inputs
    unchanged; and where both paths answer, the same answer."""
    before = _fingerprint(state)
    try:
        with use_backend(backend):
            result = METHODS[method](_FLOATING, *state)
    except SKOError:
        result = None
    assert _fingerprint(state) == before
    if result is None:
        return
    assert np.isfinite(np.asarray(result, dtype=complex)).all()
    with use_backend("reference" if backend == "compiled" else "compiled"):
        other = METHODS[method](_FLOATING, *state)
    scale = 1.0 + np.abs(np.asarray(result, dtype=complex)).max(initial=0.0)
    assert np.allclose(np.asarray(other, dtype=complex), np.asarray(result, dtype=complex), rtol=1e-7, atol=1e-7 * scale)

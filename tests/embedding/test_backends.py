"""Clustered systems on both backends. A cluster with couplings only has a compiled state
(:mod:`sko.engine.bodies.cluster`); one with closed loops fills its arena entries
from its Python ``at_state`` (Newton's method) and only the recursions are compiled. Every
answer equals the reference path's, batched calls equal per-state calls, and float64 and
complex128 states both work."""

from __future__ import annotations

import numpy as np
import pytest

from sko.bodies.cluster import ClusterError, LoopClosureError, RigidCluster
from sko.examples.embedding import four_bar, four_bar_chain, mimic_gripper
from sko.engine.dispatch import engine, use_backend
from sko.io import load_urdf
from tests.compiled.test_engine import _assert_same, _evaluate
from tests.embedding.random_clusters import random_clustered_system
from tests.rigid.pinocchio_map import robots_dir


def _random(seed: int):
    builder, theta0 = random_clustered_system(seed)
    return builder.build(initial=theta0)


def _panda():
    if robots_dir() is None:
        pytest.skip("example-robot-data is not installed")

    return load_urdf(robots_dir() / "panda_description/urdf/panda.urdf")


def _stacked_clusters():
    """A chain a → b → c → d → e with couplings (a, b) and (c, d): the second cluster hangs from
    member b of the first (a weight through a member's selector Γ), e from member d."""
    from sko import spatial as sp
    from sko.bodies import Prismatic, Revolute
    from sko.systems import SystemBuilder

    b = SystemBuilder(gravity=[0.5, -1.0, -9.81])
    parent = None
    for i, (name, joint) in enumerate(zip("abcde", [Revolute([0, 0, 1]), Revolute([0, 1, 0]), Prismatic([1, 0, 0]),
                                                     Revolute([1, 0, 1]), Revolute([0, 1, 1])])):
        b.add_body(name, parent, joint, sp.pose_transform([0.3, 0.1 * i, -0.2], [0.1 * i, 0.2, 0.0]), mass=1.0 + i,
                   com=[0.1, 0.02 * i, 0.0], inertia_com=np.diag([0.02, 0.03, 0.04]))
        parent = name
    b.add_coupling("ab", "a", "b", -0.7, 0.2)
    b.add_coupling("cd", "c", "d", 1.5, -0.1)
    return b.build()


SYSTEMS = {"stacked": _stacked_clusters, "four_bar": four_bar, "mimic_gripper": mimic_gripper, "four_bar_chain": lambda: four_bar_chain(3),
           "panda": _panda, **{f"random:{seed}": (lambda seed=seed: _random(seed)) for seed in (1, 2, 4, 5, 8, 9, 13, 25)}}


def _states(system, rng, count: int, complex_step: bool = False):
    """States near the assembled configuration (loops close there, on the same branch)."""
    out = []
    for _ in range(count):
        q = system.neutral_configuration() + 0.02 * rng.normal(size=system.nq)
        v = rng.uniform(-1.0, 1.0, system.nv)
        dv, tau = rng.normal(size=(2, system.nv))
        if complex_step:
            q, v = q + 1e-5j * rng.normal(size=q.size), v + 1e-5j * rng.normal(size=v.size)
        out.append((q, v, dv, tau))
    return out


def _system(name: str):
    try:
        system = SYSTEMS[name]()
    except ClusterError:  # a drawn loop over-constraining its cluster: not a case for this test
        pytest.skip(f"{name} draws an over-constrained loop")
    assert any(isinstance(system.body(k), RigidCluster) for k in system.bodies)
    return system


@pytest.mark.parametrize("complex_step", [False, True])
@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_compiled_path_equals_reference_on_clusters(name, complex_step):
    system = _system(name)
    layout = engine(system).layout
    loops = any(system.body(k).loops for k in system.clusters())
    assert layout.all_compiled != loops  # loops: Newton's method in Python; couplings: compiled
    checked = 0
    for q, v, dv, tau in _states(system, np.random.default_rng(len(name)), 3, complex_step):
        try:
            with use_backend("reference"):
                want = _evaluate(system, q, v, dv, tau)
        except LoopClosureError:  # a random loop near a singular configuration
            continue
        got = _evaluate(system, q, v, dv, tau)
        checked += 1
        _assert_same(got, want)
        if complex_step:
            assert np.abs(got["forward_dynamics"].imag).max() > 0
    assert checked


@pytest.mark.parametrize("name", ["four_bar", "mimic_gripper", "panda"])
def test_batches_of_clustered_states_equal_per_state_calls(name):
    system = _system(name)
    states = _states(system, np.random.default_rng(3), 9)
    Q, V, DV, TAU = (np.array(x) for x in zip(*states))
    batched = _evaluate(system, Q, V, DV, TAU)
    for s, (q, v, dv, tau) in enumerate(states):
        with use_backend("reference"):
            single = _evaluate(system, q, v, dv, tau)
        for key, value in single.items():
            assert batched[key].shape == (len(states), *np.shape(value)), key
            np.testing.assert_allclose(batched[key][s], value, rtol=1e-11, atol=1e-11, err_msg=key)


@pytest.mark.parametrize("name", ["stacked", "mimic_gripper", "four_bar_chain", "random:9"])
def test_jacobians_of_member_frames_take_batches_and_agree_on_both_backends(name):
    """``J`` of a frame on a cluster member picks the member through its selector ``Γ``: a batch
    of states gives one ``J`` per state, equal to the reference path's, and ``J ν`` is the frame's
    velocity (computed from the bodies' velocities, not from ``J``)."""
    system = _system(name)
    rng = np.random.default_rng(11)
    states = _states(system, rng, 5)
    Q, V = np.array([q for q, *_ in states]), np.array([v for _, v, *_ in states])
    for frame in system.frames:
        J = system.jacobian(Q, frame)
        assert J.shape == (len(Q), 6, system.nv), frame
        for s in range(len(Q)):
            with use_backend("reference"):
                np.testing.assert_allclose(J[s], system.jacobian(Q[s], frame), atol=1e-12, err_msg=str(frame))
            np.testing.assert_allclose(J[s] @ V[s], system.frame(frame).velocity(Q[s], V[s]), atol=1e-10,
                                       err_msg=str(frame))


@pytest.mark.parametrize("name", ["stacked", "mimic_gripper", "panda", "random:2", "random:4", "random:9", "random:25"])
def test_compiled_cluster_state_fills_the_arena_as_its_python_state(name):
    """A cluster with couplings only has a compiled state (sko.engine.bodies.cluster): every
    entry of the node states in the arena (weights, H, M, a, b, 𝒱, attachment records,
    potentials) equals what its Python ``at_state`` writes, for float and complex states."""
    system = _system(name)
    layout = engine(system).layout
    assert layout.all_compiled
    states = layout.state_entries()
    rng = np.random.default_rng(9)
    for q, v, _, _ in _states(system, rng, 2) + _states(system, rng, 1, complex_step=True):
        compiled = layout.fill(q[None], v[None])[0]
        python = np.zeros_like(compiled)
        for i in layout.order:
            layout._python_state(int(i), q, v, python)
        np.testing.assert_allclose(compiled[states], python[states], rtol=0, atol=1e-12)

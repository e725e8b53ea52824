"""Closed loops assemble by themselves at build, and their closure is a function of the state
(and the assembly branch), not of the states evaluated before it nor of other threads."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from sko.engine import use_backend
from sko.bodies import Revolute
from sko.bodies.cluster import LoopClosureError
from sko.examples.embedding import _bar, four_bar, four_bar_chain
from sko.spatial import pose_transform
from sko.systems.builder import SystemBuilder
from tests.embedding.test_kkt import kkt_residuals


def _plain_four_bar(coupler=1.5, ground=2.0, initial=None):
    """The four-bar of :func:`four_bar`, built the plain way: bodies at neutral, no ``initial``."""
    b = SystemBuilder((0.0, -9.81, 0.0))
    _bar(b, "crank", None, 0.5, mass=0.5)
    _bar(b, "coupler", "crank", coupler, placement=pose_transform([0.5, 0, 0]), mass=1.0)
    _bar(b, "rocker", None, 1.5, placement=pose_transform([ground, 0, 0]), mass=1.2)
    b.add_loop_joint("loop", "coupler", "rocker", Revolute([0, 0, 1]), placement_predecessor=pose_transform([coupler, 0, 0]),
                     placement_successor=pose_transform([1.5, 0, 0]))
    return b.build(independent=["crank"], initial=initial)


def _plain_chain(k: int):
    """:func:`four_bar_chain` without ``initial``."""
    b = SystemBuilder((0.0, -9.81, 0.0))
    parent = None
    for i in range(k):
        _bar(b, f"crank{i}", parent, 0.5, placement=None if parent is None else pose_transform([0.5, 0, 0]), mass=0.5)
        _bar(b, f"coupler{i}", f"crank{i}", 1.5, placement=pose_transform([0.5, 0, 0]), mass=1.0)
        _bar(b, f"rocker{i}", parent, 1.5, placement=pose_transform([2.0 if parent is None else 2.5, 0, 0]), mass=1.2)
        b.add_loop_joint(f"knee{i}", f"coupler{i}", f"rocker{i}", Revolute([0, 0, 1]),
                         placement_predecessor=pose_transform([1.5, 0, 0]), placement_successor=pose_transform([1.5, 0, 0]))
        parent = f"rocker{i}"
    return b.build(independent=[f"crank{i}" for i in range(k)])


def _gap(system, q, pairs) -> float:
    """Largest distance between the two pins of each loop, from the spanning tree's body poses."""
    poses = system.spanning_system().body_poses(system.spanning_configuration(q))
    pin = np.array([1.5, 0, 0, 1])
    return max(np.linalg.norm((poses[u] @ pin - poses[v] @ pin)[:3]) for u, v in pairs)


def test_four_bar_assembles_without_initial_at_every_crank_angle():
    system = _plain_four_bar()
    assert _gap(system, system.neutral_configuration(), [("coupler", "rocker")]) < 1e-12
    for angle in np.linspace(-np.pi, np.pi, 25):
        assert _gap(system, np.array([angle]), [("coupler", "rocker")]) < 1e-12


def test_plain_four_bar_equals_the_example_built_with_initial():
    """Same linkage, same (elbow-up) branch: the same dynamics at a state."""
    plain, example = _plain_four_bar(), four_bar()
    q, v, tau = np.array([1.0]), np.array([0.3]), np.array([0.2])
    np.testing.assert_allclose(plain.spanning_configuration(q), example.spanning_configuration(q), rtol=0, atol=1e-12)
    np.testing.assert_allclose(plain.forward_dynamics(q, v, tau), example.forward_dynamics(q, v, tau), rtol=1e-12)


def test_initial_picks_the_assembly_branch():
    up = _plain_four_bar().spanning_configuration(np.array([0.0]))
    down = _plain_four_bar(initial={"coupler": [-1.0], "rocker": [-2.0]}).spanning_configuration(np.array([0.0]))
    np.testing.assert_allclose(up, [0.0, np.pi / 3, 2 * np.pi / 3], atol=1e-12)
    np.testing.assert_allclose(down, [0.0, -np.pi / 3, -2 * np.pi / 3], atol=1e-12)


def test_chain_of_four_bars_assembles_without_initial():
    system = _plain_chain(3)
    pairs = [(f"coupler{i}", f"rocker{i}") for i in range(3)]
    rng = np.random.default_rng(1)
    for q in (system.neutral_configuration(), *rng.uniform(-3.0, 3.0, (3, 3))):
        assert _gap(system, q, pairs) < 1e-12
        residuals = kkt_residuals(system, q, rng.normal(size=system.nv), rng)
        assert max(residuals.values()) < 1e-10, residuals


@pytest.mark.parametrize("coupler, ground", [(1.5, 4.0), (1.0, 3.1)])
def test_loop_that_cannot_close_is_named(coupler, ground):
    """Coupler and rocker together shorter than the crank end's distance to the rocker pivot."""
    with pytest.raises(LoopClosureError, match=r"cluster 'crank': loops \['loop'\] cannot be closed"):
        _plain_four_bar(coupler, ground)


def test_build_does_not_mutate_initial():
    initial = {"coupler": [-1.0], "rocker": np.array([-2.0])}
    _plain_four_bar(initial=initial)
    assert initial["coupler"] == [-1.0] and initial["rocker"].tolist() == [-2.0]


def _systems():
    return {"four-bar": four_bar, "chain": lambda: four_bar_chain(3)}


def _states(system, n: int, seed: int):
    """``n`` states spread over ±3 rad of every crank around the assembled configuration."""
    rng = np.random.default_rng(seed)
    q = system.neutral_configuration() + rng.uniform(-3.0, 3.0, (n, system.nq))
    return [(q[i], rng.normal(size=system.nv), rng.normal(size=system.nv)) for i in range(n)]


def _evaluate(system, state, backend=None):
    q, v, u = state
    if backend is None:
        return system.forward_dynamics(q, v, u), system.inverse_dynamics(q, v, u)
    with use_backend(backend):  # per calling thread
        return system.forward_dynamics(q, v, u), system.inverse_dynamics(q, v, u)


@pytest.mark.parametrize("name", sorted(_systems()))
def test_a_state_evaluates_the_same_after_any_other(name):
    """A, B, A: bitwise the same A; and the same as on a fresh system that never saw B."""
    factory = _systems()[name]
    system = factory()
    A, B = _states(system, 2, 0)
    B = (B[0] + 2.5, B[1], B[2])  # far from A
    first = _evaluate(system, A)
    _evaluate(system, B)
    again = _evaluate(system, A)
    fresh = _evaluate(factory(), A)
    for x in (again, fresh):
        assert all(np.array_equal(a, b) for a, b in zip(first, x))


@pytest.mark.parametrize("backend", [None, "reference"])
@pytest.mark.parametrize("name", sorted(_systems()))
def test_threads_equal_serial(name, backend):
    """4 threads evaluating 36 states of one (fresh) system equal a serial evaluation."""
    factory = _systems()[name]
    serial_system, threaded_system = factory(), factory()
    states = _states(serial_system, 36, 7)
    serial = [_evaluate(serial_system, s, backend) for s in states]
    with ThreadPoolExecutor(4) as pool:
        threaded = list(pool.map(lambda s: _evaluate(threaded_system, s, backend), states))
    for want, got in zip(serial, threaded):
        assert all(np.array_equal(a, b) for a, b in zip(want, got))

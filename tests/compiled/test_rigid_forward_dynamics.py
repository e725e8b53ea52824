"""Forward dynamics of rigid trees on the blocks (sko.engine.rigid_rnea.rigid_bias): the kernel
the ``forward_dynamics`` request takes for float64 states where every body is a library rigid
body on ten inertial parameters and every joint has a constant S. It equals the generic kernel
and the reference on random forests of every joint kind of constant S and on the example robots;
external forces (an arena the engine fills) take the generic kernel; a batch on the kernel equals
its single calls."""

import dataclasses

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import sko.algorithms as alg
from sko.bodies import Free, Revolute, RigidBody
from sko.engine import aba, use_backend
from sko.engine import requests as rq
from sko.engine.layout import Flat, Riccati
from sko.engine.model import compiled_model
from sko.examples.bodies import flexible_examples
from sko.systems import MultibodySystem
from tests.compiled.rigid_forests import example_robots, inertia
from tests.compiled.test_lane_rollout import _stopped_arm
from tests.compiled.test_rigid_centroidal import _close, shuffled_forest

FD, ID = rq.REQUESTS["forward_dynamics"], rq.REQUESTS["inverse_dynamics"]


def _state(system, seed: int):
    rng = np.random.default_rng(seed)
    return system.random_configuration(rng), *rng.normal(size=(2, system.nv))


def _vector(system, rigid: bool) -> np.ndarray:
    return rq.request_vector(FD if rigid else dataclasses.replace(FD, rigid=None), system._engine.layout, np.float64)


def _kernel(system, q, v, tau, rigid: bool) -> np.ndarray:
    """``θ̈`` at one state by the rigid kernel or the generic one."""
    out = np.zeros(system.nv)
    assert rq.evaluate_one(_vector(system, rigid), q, v, tau, out) == -1
    return out


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), constant=st.booleans())
def test_the_rigid_kernel_equals_the_generic_kernel_and_the_reference(seed, constant):
    system = shuffled_forest(seed, constant)
    takes = rq.takes_rigid(FD, system._engine.layout, np.float64)
    joints = [system.body(k).joint for k in system.bodies]
    assert takes == all(j.constant_motion or j.kind == "fixed" for j in joints)  # reversed joints: generic
    q, v, tau = _state(system, seed)
    got = system.forward_dynamics(q, v, tau)
    if takes:
        _close(_kernel(system, q, v, tau, True), _kernel(system, q, v, tau, False), 1e-12)
    with use_backend("reference"):
        _close(got, system.forward_dynamics(q, v, tau), 1e-9)


def test_the_example_robots_take_it_and_equal_the_reference():
    for _, _, system in example_robots():
        assert rq.takes_rigid(FD, system._engine.layout, np.float64)
        q, v, tau = _state(system, 3)
        got = system.forward_dynamics(q, v, tau)
        _close(got, _kernel(system, q, v, tau, False), 1e-12)
        with use_backend("reference"):
            _close(got, system.forward_dynamics(q, v, tau), 1e-9)


def test_external_forces_take_the_generic_kernel_and_reach_the_result():
    """The engine fills the arena itself for external forces (in each body's ``b``): its request
    vector names the generic kernel, which reads them."""
    system = shuffled_forest(3, True)
    layout = system._engine.layout
    assert rq.takes_rigid(FD, layout, np.float64)
    arena = np.zeros(layout.size)
    filled = rq.request_vector(FD, layout, np.float64, arena).view(np.int64)[rq.Header.KERNEL]
    assert filled == FD.address(np.float64) != FD.address(np.float64, rigid=True)
    rng = np.random.default_rng(0)
    forces = {k: rng.normal(size=6) for k in list(system.bodies)[:2]}
    q, v, tau = _state(system, 0)
    got = system.forward_dynamics(q, v, tau, external_forces=forces)
    assert np.abs(got - system.forward_dynamics(q, v, tau)).max() > 1e-3
    with use_backend("reference"):
        _close(got, system.forward_dynamics(q, v, tau, external_forces=forces), 1e-9)


def test_a_batch_on_the_kernel_equals_its_single_calls():
    """The batch driver on the rigid kernel's request vector, and the system's batch (the lanes),
    against one state at a time."""
    system = shuffled_forest(5, True)
    assert rq.takes_rigid(FD, system._engine.layout, np.float64)
    rng = np.random.default_rng(1)
    B = 37
    Q = np.array([system.random_configuration(rng) for _ in range(B)])
    V, T = rng.normal(size=(2, B, system.nv))
    out, status = np.zeros((B, system.nv)), np.zeros(B, dtype=np.int64)
    rq.evaluate_batch(_vector(system, True), Q, V, T, np.zeros((0, system._engine.layout.size)), out, status)
    assert (status == -1).all()
    batch = system.forward_dynamics(Q, V, T)
    for s in range(B):
        single = _kernel(system, Q[s], V[s], T[s], True)
        _close(out[s], single, 1e-15)
        _close(batch[s], single, 1e-12)


def test_other_systems_keep_the_generic_kernel():
    """A joint whose S varies (a reversed revolute joint), another body type, complex states, a
    body whose outputs are checked at every state (the checks read the a, b and 𝒱 the kernel
    writes: after a state that is not finite they would refuse the next)."""
    rng = np.random.default_rng(2)
    reversed_joint = MultibodySystem([RigidBody("a", None, Revolute([0, 0, 1]).reversed(), inertia(rng))])
    flexible = flexible_examples()["flexible-spacecraft"]()
    rigid = shuffled_forest(3, True)
    checked = _stopped_arm()
    assert checked._engine.layout.checked.any() and rq.takes_rigid(ID, checked._engine.layout, np.float64)
    assert not rq.takes_rigid(FD, checked._engine.layout, np.float64)
    assert not rq.takes_rigid(FD, reversed_joint._engine.layout, np.float64)
    assert not rq.takes_rigid(FD, flexible._engine.layout, np.float64)
    assert not rq.takes_rigid(FD, rigid._engine.layout, np.complex128)


def test_a_floating_base_riccati_step_equals_the_reference():
    """The Riccati gather at a floating base takes ``D = P`` (``H = I``) without the products
    with the identity: with every output asked for (``ψ``, ``P⁺``, ``log det ℳ``) it equals the
    reference gather, at a base and below a parent."""
    rng = np.random.default_rng(6)
    system = MultibodySystem([RigidBody("base", None, Free(), inertia(rng)),
                              RigidBody("arm", "base", Revolute(rng.normal(size=3)), inertia(rng)),
                              RigidBody("float", "arm", Free(), inertia(rng))], gravity=[0, 0, -9.81])
    model, _, _ = system.sko_model(system.random_configuration(rng), rng.normal(size=system.nv))
    got = alg.articulated_inertias(model)
    with use_backend("reference"):
        want = alg.articulated_inertias(model)
        logdet = alg.mass_matrix_logdet(model, want)
    for name in ("P", "P_plus", "D", "G", "psi"):
        for k, block in getattr(want, name).items():
            _close(getattr(got, name)[k], block, 1e-12)
    _close(alg.mass_matrix_logdet(model, got), logdet, 1e-12)


def test_the_passes_gather_takes_a_floating_base_in_registers():
    """Without ``full`` (the passes' gather) a floating base takes its step in registers
    (``D = P``, ``D^{-1}`` by Cholesky): every block the passes read equals the full gather's, and
    a base whose ``P`` is not positive definite or not finite is refused at its node, as the full
    gather refuses it."""
    rng = np.random.default_rng(8)
    system = MultibodySystem([RigidBody("base", None, Free(), inertia(rng)),
                              RigidBody("arm", "base", Revolute(rng.normal(size=3)), inertia(rng)),
                              RigidBody("hand", "arm", Revolute(rng.normal(size=3)), inertia(rng))])
    model, _, _ = system.sko_model(system.random_configuration(rng), rng.normal(size=system.nv))
    cm = compiled_model(model)
    base = int(np.flatnonzero(cm.layout[:, Flat.PARENT] < 0)[0])

    def gather(data, full):
        r = np.zeros(cm.rsize)
        failed, _ = aba.riccati(cm.layout, data, cm.roff, r, aba.riccati_scratch(cm.layout, np.float64), full)
        return failed, r

    data = cm.data(np.float64)
    (failed, got), (_, want) = gather(data, False), gather(data, True)
    assert failed == -1
    for j, row in enumerate(cm.layout):
        m, h = row[Flat.NODE_DIM], row[Flat.HINGE_DIM]
        for column, size in ((Riccati.P, m * m), (Riccati.D, h * h), (Riccati.D_INVERSE, h * h), (Riccati.G, m * h)):
            if j != base or column != Riccati.G:
                o = cm.roff[j, column]
                _close(got[o: o + size], want[o: o + size], 1e-12)
    mo = cm.layout[base, Flat.M]
    for broken in (-1e3 * np.eye(6), np.where(np.eye(6) > 0, np.nan, 0.0)):
        bad = data.copy()
        bad[mo: mo + 36] = broken.ravel()
        with np.errstate(invalid="ignore"):
            assert gather(bad, False)[0] == gather(bad, True)[0] == base

"""The compiled path of the systems equals the reference path (every example system, random
rigid systems with every joint and polarity, random mixed trees of rigid, flexible and rotor
bodies, float64 and complex128 states), and batched calls equal per-state calls."""

import re

import numpy as np
import pytest

from sko.errors import JointError
from sko.examples.bodies import flexible_examples, random_system
from sko.examples.rigid import example_systems
from sko.graphs.errors import DimensionError, NonFiniteError, SKOError
from sko.engine.dispatch import backend, engine, use_backend
from tests.rigid.random_systems import random_rigid_system

SYSTEMS = {
    **{f"rigid:{k}": f for k, f in example_systems().items()},
    **{f"bodies:{k}": f for k, f in flexible_examples().items()},
    **{f"random_rigid:{seed}": (lambda seed=seed: random_rigid_system(seed)) for seed in range(12)},
    **{f"random_mixed:{seed}": (lambda seed=seed: random_system(seed)) for seed in range(6)},
}


def _evaluate(system, q, v, dv, tau):
    return {
        "inverse_dynamics": system.inverse_dynamics(q, v, dv),
        "bias_forces": system.bias_forces(q, v),
        "gravity_forces": system.gravity_forces(q),
        "forward_dynamics": system.forward_dynamics(q, v, tau),
        "mass_matrix": system.mass_matrix(q),
        "mass_matrix_inverse": system.mass_matrix_inverse(q),
        "kinetic_energy": system.kinetic_energy(q, v),
        "potential_energy": system.potential_energy(q),
        "energy": system.energy(q, v),
    }


def _state(system, rng, complex_step: bool):
    q = system.random_configuration(rng)
    v = rng.uniform(-1.0, 1.0, system.nv)
    q = q * rng.uniform(0.8, 1.2)  # non-unit quaternions are normalised on both paths
    dv, tau = rng.normal(size=(2, system.nv))
    if complex_step:
        q = q + 1e-5j * rng.normal(size=q.size)
        v = v + 1e-5j * rng.normal(size=v.size)
    return q, v, dv, tau


def _assert_same(got: dict, want: dict):
    for name in want:
        scale = 1 + np.abs(want[name]).max(initial=0)
        np.testing.assert_allclose(got[name], want[name], rtol=0, atol=1e-9 * scale, err_msg=name)


@pytest.mark.parametrize("complex_step", [False, True])
@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_compiled_equals_reference(name, complex_step):
    system = SYSTEMS[name]()
    rng = np.random.default_rng(len(name))
    for _ in range(2):
        q, v, dv, tau = _state(system, rng, complex_step)
        with use_backend("reference"):
            want = _evaluate(system, q, v, dv, tau)
        got = _evaluate(system, q, v, dv, tau)
        _assert_same(got, want)
        if complex_step:  # the perturbation carries the derivative on both paths
            assert np.iscomplexobj(got["forward_dynamics"]) and np.abs(got["forward_dynamics"].imag).max() > 0


@pytest.mark.parametrize("name", ["rigid:humanoid", "bodies:flexible-geared-arm", "random_rigid:3", "random_mixed:2"])
def test_batches_equal_per_state_calls(name):
    system = SYSTEMS[name]()
    rng = np.random.default_rng(7)
    states = [_state(system, rng, False) for _ in range(37)]  # more than two chunks of states
    Q, V, DV, TAU = (np.array(x) for x in zip(*states))
    batched = _evaluate(system, Q, V, DV, TAU)
    for s, (q, v, dv, tau) in enumerate(states):
        single = _evaluate(system, q, v, dv, tau)
        for key, value in single.items():
            assert batched[key].shape == (len(states), *np.shape(value)), key
            np.testing.assert_allclose(batched[key][s], value, rtol=1e-12, atol=1e-12, err_msg=key)


def test_batched_jacobians_equal_per_state_and_reference():
    system = SYSTEMS["rigid:humanoid"]()
    rng = np.random.default_rng(3)
    Q = np.array([system.random_configuration(rng) for _ in range(5)])
    for frame in list(system.frames)[:4]:
        J = system.jacobian(Q, frame)
        with use_backend("reference"):
            for s in range(len(Q)):
                np.testing.assert_allclose(J[s], system.jacobian(Q[s], frame), atol=1e-12)
            np.testing.assert_allclose(system.jacobian(Q, frame), J, atol=1e-12)


@pytest.mark.parametrize("name", ["rigid:humanoid", "rigid:branched_tree", "random_rigid:3", "random_rigid:8"])
def test_batched_center_of_mass_equals_per_state_and_reference(name):
    """``c`` and ``J_c`` gathered on the arenas of a batch equal the per-body Python gather of
    each state, on both paths, for float64 and complex128 (complex-step) states."""
    from sko.systems.frames import reference_center_of_mass, reference_center_of_mass_jacobian

    system = SYSTEMS[name]()
    rng = np.random.default_rng(5)
    Q = np.array([system.random_configuration(rng) for _ in range(19)])
    for states in (Q, Q + 1e-6j * rng.normal(size=Q.shape)):
        c, J = system.center_of_mass(states), system.center_of_mass_jacobian(states)
        assert c.shape == (len(Q), 3) and J.shape == (len(Q), 3, system.nv) and c.dtype == states.dtype
        for s in range(len(Q)):
            np.testing.assert_allclose(c[s], reference_center_of_mass(system, states[s]), atol=1e-12)
            np.testing.assert_allclose(J[s], reference_center_of_mass_jacobian(system, states[s]), atol=1e-12)
            np.testing.assert_allclose(system.center_of_mass(states[s]), c[s], atol=1e-12)
        with use_backend("reference"):
            np.testing.assert_allclose(system.center_of_mass_jacobian(states), J, atol=1e-12)


def test_reference_path_answers_batches_of_other_scalars():
    import sympy

    system = SYSTEMS["rigid:planar_chain"]()
    Q = np.array([[sympy.Rational(1, 3), sympy.Rational(1, 5), sympy.Rational(1, 7)], [0, sympy.Rational(1, 2), 1]], dtype=object)
    M = system.mass_matrix(Q)
    assert M.shape == (2, 3, 3) and M.dtype == object
    np.testing.assert_allclose(np.array(M, dtype=float), system.mass_matrix(np.array(Q, dtype=float)), atol=1e-12)


def test_bad_batches_raise_the_reference_errors():
    system = SYSTEMS["rigid:humanoid"]()
    rng = np.random.default_rng(0)
    Q = np.array([system.random_configuration(rng) for _ in range(3)])
    V = np.zeros((3, system.nv))
    with pytest.raises(DimensionError, match="leading batch axis"):
        system.forward_dynamics(Q, V[:2], V[:2])
    with pytest.raises(DimensionError, match="nq"):
        system.mass_matrix(Q[:, 1:])
    bad = V.copy()
    bad[1, 2] = np.nan
    with pytest.raises(NonFiniteError):
        system.inverse_dynamics(Q, bad, V)
    with pytest.raises(NonFiniteError):
        system.inverse_dynamics(Q[0], bad[1], V[0])
    free = SYSTEMS["bodies:flexible-spacecraft"]()
    Qf = np.array([free.neutral_configuration()] * 2)
    Qf[1, :4] = 0  # a zero quaternion: no rotation
    with pytest.raises(JointError, match="zero norm"):
        free.mass_matrix(Qf)


def test_backend_switch():
    system = SYSTEMS["rigid:arm7"]()
    assert backend() == "compiled"
    with use_backend("reference"):
        assert backend() == "reference"
        with use_backend("compiled"):  # one switch for the systems and the recursions
            assert backend() == "compiled"
    with pytest.raises(SKOError, match="'fast'"):
        with use_backend("fast"):
            pass
    assert engine(system) is engine(system)


@pytest.mark.parametrize("name", ["rigid:branched_tree", "bodies:flexible-geared-arm", "random_rigid:5", "random_mixed:4"])
def test_arena_starts_with_the_flat_model_data(name):
    """The state kernels write the flat model's data buffer (sko.engine.layout) of
    the reference SKO model at the state, so the model's compiled kernels run on it as it is."""
    from sko.engine.layout import fill_data, from_sko_model

    system = SYSTEMS[name]()
    rng = np.random.default_rng(11)
    q, v, _, _ = _state(system, rng, False)
    with use_backend("reference"):
        model, a, b = system.sko_model(q, v)
    flat = from_sko_model(model)
    layout = engine(system).layout
    np.testing.assert_array_equal(flat.layout, layout.flat.layout)
    want = fill_data(flat, model.weights_by_index, model.H_by_index, model.M_by_index, a, b)
    got = layout.fill(q[None], v[None])[0, :flat.size]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    fast, fast_a, fast_b = system.sko_model(q, v)  # the compiled path's SKO model
    np.testing.assert_allclose(fast_a, a, atol=1e-12)
    np.testing.assert_allclose(fast_b, b, atol=1e-12)
    for k in model.bodies:
        np.testing.assert_allclose(fast.H[k], model.H[k], atol=1e-12)
        np.testing.assert_allclose(fast.M[k], model.M[k], atol=1e-12)
        if k in model.phi:
            np.testing.assert_allclose(fast.phi[k], model.phi[k], atol=1e-12)


@pytest.mark.parametrize("name", ["rigid:humanoid", "bodies:flexible-geared-arm", "bodies:flexible-spacecraft",
                                  "bodies:geared-rotor-chain", "random_rigid:4", "random_rigid:8", "random_mixed:2",
                                  "random_mixed:4"])
def test_a_request_builds_the_terms_it_reads(name):
    """A one-state request fills its own arena with the flat model's weights, H and M equal to
    the full state's, and the dynamics also a and b (the terms of sko.engine.state_kernels.Terms), to
    rounding: the mass matrix and its inverse read no a or b. The constant terms the first call
    wrote serve the next state. Inverse dynamics of rigid bodies on joints of constant S forms a
    and b itself (sko.engine.rigid_rnea): it reads what the mass matrix reads. The mass matrix of
    rigid bodies (sko.engine.mass_matrix) computes the weights of bodies on an axis, and reads
    none of a floating base, after its first call: those it fills then only."""
    from sko.engine import joints as cj
    from sko.engine import mass_matrix as MM
    from sko.engine.layout import Flat
    from sko.engine.requests import REQUESTS, Header, takes_rigid
    from sko.engine.state_kernels import Row

    system = SYSTEMS[name]()
    e = engine(system)
    assert e.layout.all_compiled
    flat = e.layout.flat
    structure = np.ones(flat.size, dtype=bool)
    for row in flat.layout:
        m = row[Flat.NODE_DIM]
        structure[row[Flat.A]: row[Flat.A] + m] = structure[row[Flat.B]: row[Flat.B] + m] = False
    filled = structure.copy()  # what the mass matrix of rigid bodies fills after its first call
    rows, reals = e.layout.table(np.float64), e.layout.reals
    for j, row in enumerate(flat.layout):
        c0 = rows[j, Row.CONSTANTS]
        code, reverse = int(reals[c0 + cj.JointConstants.code]), reals[c0 + cj.JointConstants.reverse]
        skipped = code in (cj.HELICAL, cj.PRISMATIC) or code == cj.FREE and row[Flat.PARENT] < 0
        if MM.applies(e.layout) and not reverse and skipped:
            filled[row[Flat.W]: row[Flat.W] + 36] = False
    rng = np.random.default_rng(5)
    for call_number in range(2):
        q, v, dv, tau = _state(system, rng, False)
        full = e.layout.fill(q[None], v[None])[0, :flat.size]
        rigid = takes_rigid(REQUESTS["inverse_dynamics"], e.layout, np.dtype(float))
        calls = {"inverse_dynamics": (lambda: system.inverse_dynamics(q, v, dv), structure if rigid else slice(None)),
                 "forward_dynamics": (lambda: system.forward_dynamics(q, v, tau), slice(None)),
                 "mass_matrix": (lambda: system.mass_matrix(q), filled if call_number else structure),
                 "mass_matrix_inverse": (lambda: system.mass_matrix_inverse(q), structure)}
        for name, (call, entries) in calls.items():
            call()
            w = e._request_vector(REQUESTS[name], np.dtype(float))
            start = w.view(np.int64)[Header.WORKSPACE]
            scale = max(1.0, np.abs(full).max())  # to rounding: the kernels sum with fused multiply-adds
            np.testing.assert_allclose(w[start: start + flat.size][entries], full[entries], rtol=1e-12,
                                       atol=1e-12 * scale)


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_identity_coordinate_maps_match_the_bodies(name):
    """Systems whose every joint has q̇ = v and no quaternion answer qdot and normalize without
    visiting the bodies; the answer is the bodies' own."""
    system = SYSTEMS[name]()
    rng = np.random.default_rng(5)
    q, v, _, _ = _state(system, rng, False)
    by_body = np.concatenate([np.asarray(system.body(k).qdot(q[system.q_slice(k)], v[system.v_slice(k)]))
                              for k in system.bodies])
    np.testing.assert_allclose(system.qdot(q, v), by_body, atol=1e-15)
    normalized = np.concatenate([system.body(k).normalize(q[system.q_slice(k)]) for k in system.bodies])
    np.testing.assert_allclose(system.normalize(q), normalized, atol=1e-15)
    if engine(system).coordinates_are_velocities:
        assert not any(j.nq != j.nv for j in (getattr(system.body(k), "joint", None) for k in system.bodies) if j)


def _stacked_breadth_first():
    """b0 → (b1 → b3, b2): stacked b0, b1, b2, b3, filled in the preorder b0, b1, b3, b2; b2
    and b3 hang on spherical joints."""
    from sko.bodies import Revolute, Spherical
    from sko.examples.rigid import rod_inertia
    from sko.spatial import pose_transform
    from sko.systems import SystemBuilder

    b = SystemBuilder()
    for name, parent, joint in (("b0", None, Revolute([0, 0, 1])), ("b1", "b0", Revolute([0, 1, 0])),
                                ("b2", "b0", Spherical()), ("b3", "b1", Spherical())):
        b.add_body(name, parent, joint, pose_transform([0.1, 0.0, 0.5]), mass=1.0, com=[0.0, 0.05, 0.25],
                   inertia_com=rod_inertia(1.0, 0.5))
    return b.build()


def test_the_state_table_and_the_arena_follow_the_scatter_order():
    """Rows of the state table, ``𝒱``, records and potentials are in scatter order (a body's
    terms sit near its parent's whatever the stacking order), and the requests' node scratch too."""
    from sko.engine.layout import Flat
    from sko.engine.state_kernels import Row

    for system in (_stacked_breadth_first(), SYSTEMS["rigid:humanoid"](), SYSTEMS["random_rigid:3"]()):
        L = engine(system).layout
        assert not np.array_equal(L.order, np.arange(len(L.order)))  # stacking order ≠ scatter order
        np.testing.assert_array_equal(L.row_of[L.order], np.arange(len(L.order)))
        for j, i in enumerate(L.order):
            p = L.parent[i]
            assert L.rows[j, Row.PARENT] == (-1 if p < 0 else L.row_of[p]) < j
            assert L.rows[j, Row.Q] == L.q_offset + system.q_slices[L.bodies[i]].start
        records = [L.attachment_offsets[(i, None)] for i in L.order]
        assert records == sorted(records)
        velocities = L.V_offsets[L.order]
        first = velocities[0]
        np.testing.assert_array_equal(velocities, first + L.request_layout[:, Flat.NODE])
        assert list(L.rows[:, Row.VELOCITY]) == list(velocities)
        assert list(L.potential_offsets[L.order]) == sorted(L.potential_offsets)
        nodes = L.request_layout[:, Flat.NODE]
        dims = L.request_layout[:, Flat.NODE_DIM]
        np.testing.assert_array_equal(nodes, np.cumsum(dims) - dims)
        rest = [c for c in range(Flat.WIDTH) if c != Flat.NODE]
        np.testing.assert_array_equal(L.request_layout[:, rest], L.flat.layout[:, rest])


@pytest.mark.parametrize("bad", ["b2", "b3"])
def test_a_rejected_state_names_the_body_whatever_the_stacking_order(bad):
    system = _stacked_breadth_first()
    rng = np.random.default_rng(3)
    Q = np.array([system.random_configuration(rng) for _ in range(3)])
    Q[1, system.q_slices[bad]] = 0  # a zero quaternion at the second state
    V = rng.normal(size=(3, system.nv))
    with use_backend("reference"), pytest.raises(JointError) as want:
        system.forward_dynamics(Q[1], V[1], V[1])
    for op in (lambda: system.forward_dynamics(Q[1], V[1], V[1]), lambda: system.mass_matrix(Q[1]),
               lambda: system.kinetic_energy(Q[1], V[1])):
        with pytest.raises(JointError) as got:
            op()
        assert str(got.value) == str(want.value)
    with pytest.raises(JointError, match=f"^state 1 of the batch: {re.escape(str(want.value))}$"):
        system.inverse_dynamics(Q, V, V)
    Q[1] = Q[0]
    for k in range(3):
        _assert_same(_evaluate(system, Q[k], V[k], V[k], V[k]), _reference(system, Q[k], V[k], V[k], V[k]))


def _reference(system, q, v, dv, tau):
    with use_backend("reference"):
        return _evaluate(system, q, v, dv, tau)


def test_articulated_passes_are_called_at_their_address():
    """The forward dynamics and ℳ⁻¹ request vectors hold the address of the articulated-body
    passes for their scalar type (compiled once, not linked into each request kernel); a request
    that does not run them holds none, so it never compiles them."""
    from sko.engine.requests import REQUESTS, Header, passes_address

    system = example_systems()["humanoid"]()
    e = engine(system)
    for name, request in REQUESTS.items():
        words = e._request_vector(request, np.dtype(float)).view(np.int64)
        assert words[Header.PASSES] == (passes_address(np.float64) if request.passes else 0), name
    assert {n for n, r in REQUESTS.items() if r.passes} == {"forward_dynamics", "mass_matrix_inverse"}
    q = system.random_configuration(np.random.default_rng(0))
    np.testing.assert_allclose(system.mass_matrix_inverse(q) @ system.mass_matrix(q), np.eye(system.nv), atol=1e-9)

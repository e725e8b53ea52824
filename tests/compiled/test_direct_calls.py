"""The direct one-state call of the compiled path (1-D float64 arrays, any strides, read-only
too; every body compiled, no external forces): it answers exactly what the checked path answers;
any other input (integer, complex, big-endian, batched, a list, a wrong length, a non-finite
number) falls through to the checked path, with its result or its error, and never makes numba
compile for the new types."""

import numpy as np
import pytest

from sko.engine import set_backend, use_backend
from sko.bodies.beam import flexible_beam
from sko.bodies.joints import Revolute
from sko.errors import JointError
from sko.examples.rigid import example_systems
from sko.graphs.errors import DimensionError, NonFiniteError
from sko.engine import requests as rq
from sko.engine.dispatch import engine
from sko.systems.multibody import MultibodySystem
from tests.rigid.random_systems import random_rigid_system
from tests.util import assert_close

REQUESTS = {
    "inverse_dynamics": lambda s, q, v, x: s.inverse_dynamics(q, v, x),
    "forward_dynamics": lambda s, q, v, x: s.forward_dynamics(q, v, x),
    "mass_matrix": lambda s, q, v, x: s.mass_matrix(q),
    "mass_matrix_inverse": lambda s, q, v, x: s.mass_matrix_inverse(q),
}
MATRICES = ("mass_matrix", "mass_matrix_inverse")


def _state(system, seed: int = 0):
    rng = np.random.default_rng(seed)
    q = system.random_configuration(rng)
    v, x = rng.normal(size=(2, system.nv))
    return q, v, x


def _read_only(x):
    x = x.copy()
    x.flags.writeable = False
    return x


VARIANTS = {
    "read-only": _read_only,
    "strided": lambda x: np.repeat(x, 2)[::2],
    "list": lambda x: list(x),
    "float32": lambda x: x.astype(np.float32),
    "integer": lambda x: x.astype(np.int64),
    "big-endian": lambda x: x.astype(">f8"),
}
READ_AS_GIVEN = ("read-only", "strided")


def _direct(system, op, q, v, x):
    """The direct call's answer, or None when it falls through."""
    return engine(system).direct(op, q, v, x)


@pytest.mark.parametrize("seed", [0, 1, 2, 4])  # every body compiled
@pytest.mark.parametrize("op", sorted(REQUESTS))
def test_the_direct_call_answers_as_the_checked_path(op, seed):
    system = random_rigid_system(seed)
    assert engine(system)._direct
    q, v, x = _state(system, seed)
    got = _direct(system, op, q, v, x)
    assert got is not None  # plain arrays take the direct call
    want = REQUESTS[op](system, q[None], v[None], x[None])[0]  # a batch of one: the checked path
    np.testing.assert_array_equal(got.reshape(want.shape), want)
    np.testing.assert_array_equal(REQUESTS[op](system, q, v, x), want)
    with use_backend("reference"):
        assert _direct(system, op, q, v, x) is None
        ref = REQUESTS[op](system, q, v, x)
    np.testing.assert_allclose(want, ref, rtol=0, atol=1e-9 * (1 + np.abs(ref).max()))


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("op", sorted(REQUESTS))
def test_other_inputs_fall_through_without_compiling(op, variant):
    system = random_rigid_system(4)
    q, v, x = (np.round(a) for a in _state(system))  # numbers every variant holds exactly
    want = REQUESTS[op](system, q, v, x)
    for position in range(1 if op in MATRICES else 3):
        args = [q, v, x]
        args[position] = VARIANTS[variant](args[position])
        original = [a.copy() if isinstance(a, np.ndarray) else list(a) for a in args]
        got = _direct(system, op, *args)
        if variant in READ_AS_GIVEN:  # float64 with other strides or read-only: the direct call reads it
            np.testing.assert_array_equal(got, want)
        else:
            assert got is None
        scale = 1 + np.abs(want).max()  # a big-endian array takes the reference path: rounding apart
        np.testing.assert_allclose(REQUESTS[op](system, *args), want, rtol=0, atol=1e-12 * scale)
        for a, b in zip(args, original):  # inputs are never mutated
            np.testing.assert_array_equal(a, b)
    assert rq._DRIVERS and all(len(driver.overloads) == 1 for driver in rq._DRIVERS.values())


def test_other_dimensions_take_the_checked_path_with_no_numba_method_patched():
    """The compiled code is called at its entry, which reads each argument as the array its
    signature declares: a float64 array of other dimensions in any position (a batch of ``v``
    beside one state of ``q``, a 0-d array) declines before it, and the checked path gives its
    error; the drivers are numba's dispatchers as numba made them, one signature each."""
    system = random_rigid_system(4)
    q, v, x = _state(system)
    for op in sorted(REQUESTS):
        for position in range(1 if op in MATRICES else 3):
            for shape in ((1, -1), (-1, 1), ()):
                args = [q, v, x]
                args[position] = np.asarray(args[position][0]) if shape == () else args[position].reshape(shape)
                assert _direct(system, op, *args) is None
                if op in MATRICES and shape == (1, -1):  # a batch of one state: the batched path answers it
                    np.testing.assert_array_equal(REQUESTS[op](system, *args)[0], REQUESTS[op](system, q, v, x))
                    continue
                with pytest.raises(DimensionError):
                    REQUESTS[op](system, *args)
    assert rq._DRIVERS
    for driver in rq._DRIVERS.values():
        assert not {"_search_new_conversions", "_explain_matching_error"} & set(vars(driver))
        assert len(driver.overloads) == 1


@pytest.mark.parametrize("op", sorted(REQUESTS))
def test_batches_complex_states_and_empty_lists_fall_through(op):
    system = random_rigid_system(4)
    q, v, x = _state(system)
    assert _direct(system, op, q[None], v[None], x[None]) is None
    assert _direct(system, op, q + 0j, v, x) is None
    assert _direct(system, op, [], v, x) is None
    with pytest.raises(DimensionError):
        REQUESTS[op](system, [], v, x)


@pytest.mark.parametrize("op", sorted(REQUESTS))
def test_wrong_lengths_raise_the_checked_paths_error(op):
    system = random_rigid_system(2)
    q, v, x = _state(system)
    for position in range(1 if op in MATRICES else 3):
        args = [q, v, x]
        args[position] = np.append(args[position], 0.0)
        assert _direct(system, op, *args) is None
        with pytest.raises(DimensionError):
            REQUESTS[op](system, *args)


@pytest.mark.parametrize("op", ["inverse_dynamics", "forward_dynamics"])
def test_an_empty_vector_is_not_read_as_none_given(op):
    """Only ``None`` stands for zero accelerations or forces: an empty ``θ̈`` or ``T`` is a
    wrong length, which the kernel itself must refuse now that the call checks no shape."""
    system = random_rigid_system(2)
    q, v, _ = _state(system)
    for position in (1, 2):
        args = [q, v, v]
        args[position] = np.zeros(0)
        assert _direct(system, op, *args) is None
        with pytest.raises(DimensionError):
            REQUESTS[op](system, *args)
    np.testing.assert_array_equal(_direct(system, op, q, v, None), REQUESTS[op](system, q[None], v[None], None)[0])


@pytest.mark.parametrize("bad", [np.nan, np.inf])
@pytest.mark.parametrize("op", sorted(REQUESTS))
def test_non_finite_inputs_raise_the_checked_paths_error(op, bad):
    system = random_rigid_system(1)
    q, v, x = _state(system)
    for position in range(1 if op in MATRICES else 3):
        args = [q.copy(), v.copy(), x.copy()]
        args[position][-1] = bad
        assert _direct(system, op, *args) is None
        with pytest.raises(NonFiniteError):
            REQUESTS[op](system, *args)


def test_the_reference_path_chosen_in_one_thread_stops_the_direct_call_there_only():
    """The backend is a context value the direct call reads: a backend block, or ``set_backend``,
    in one thread stops the direct call there and only there; a thread started later takes the
    default."""
    import threading

    system = random_rigid_system(1)
    q, v, x = _state(system)
    want = _direct(system, "forward_dynamics", q, v, x)
    inside, release, seen = threading.Event(), threading.Event(), []

    def blocked():
        with use_backend("reference"):
            inside.set()
            release.wait(10)
            seen.append(_direct(system, "forward_dynamics", q, v, x))

    thread = threading.Thread(target=blocked)
    thread.start()
    inside.wait(10)
    np.testing.assert_array_equal(_direct(system, "forward_dynamics", q, v, x), want)  # this thread: compiled
    release.set()
    thread.join(10)
    assert seen == [None]

    def chosen():
        set_backend("reference")
        seen.append(_direct(system, "forward_dynamics", q, v, x))
        with use_backend("compiled"):
            seen.append(_direct(system, "forward_dynamics", q, v, x))
        seen.append(_direct(system, "forward_dynamics", q, v, x))

    thread = threading.Thread(target=chosen)
    thread.start()
    thread.join(10)
    assert seen[1] is None and seen[3] is None
    np.testing.assert_array_equal(seen[2], want)
    later = threading.Thread(target=lambda: seen.append(_direct(system, "forward_dynamics", q, v, x)))
    later.start()
    later.join(10)
    np.testing.assert_array_equal(seen[4], want)
    np.testing.assert_array_equal(_direct(system, "forward_dynamics", q, v, x), want)
    with use_backend("reference"):
        assert _direct(system, "forward_dynamics", q, v, x) is None


def test_an_overflow_takes_the_checked_path():
    system = random_rigid_system(2)
    q, v, x = _state(system)
    huge = np.full(system.nv, 1e308)
    assert _direct(system, "forward_dynamics", q, v, huge) is None
    with pytest.raises(NonFiniteError):
        system.forward_dynamics(q, v, huge)


@pytest.mark.parametrize("seed", [1, 2, 7, 11])  # systems with single-axis bodies and others
def test_a_call_after_another_state_answers_as_a_fresh_engine(seed):
    """A request writes the terms no state changes (``M``, a single-axis joint's ``H``, constant
    zeros) into its arena on its first call only: every state-dependent entry must be written on
    every call, so a second state gives exactly what a new engine gives at that state."""
    from sko.engine.dispatch import Engine

    from sko.engine import joints as cj

    system = random_rigid_system(seed)
    (q1, v1, x1), (q2, v2, x2) = _state(system, 10), _state(system, 11)
    used, fresh = engine(system), Engine(system)
    single_axis = [cj.pack_joint(system.body(k).joint)[:2] in ((cj.HELICAL, False), (cj.PRISMATIC, False))
                   for k in system.bodies]
    assert any(single_axis) and not all(single_axis)  # both paths of a rigid body's state kernel
    for op in sorted(REQUESTS):
        used.direct(op, q1, v1, x1)
        np.testing.assert_array_equal(used.direct(op, q2, v2, x2), fresh.direct(op, q2, v2, x2))


def test_a_result_is_fresh_and_a_call_keeps_no_state():
    """Each call returns a new array (the workspace is reused, the result never), and a call
    after an overflowing or rejected one answers as before."""
    system = random_rigid_system(1)
    q, v, x = _state(system)
    first = system.forward_dynamics(q, v, x)
    again = system.forward_dynamics(q, v, x)
    assert first is not again and not np.shares_memory(first, again)
    with pytest.raises(NonFiniteError):
        system.forward_dynamics(q, v, np.full(system.nv, 1e308))
    np.testing.assert_array_equal(system.forward_dynamics(q, v, x), first)
    M = system.mass_matrix(q)
    assert M.shape == (system.nv, system.nv) and M.flags.c_contiguous and M.flags.writeable


def test_a_mass_matrix_after_an_overflow_is_answered_directly():
    """The kernels read no scratch they have not written in the same call: a flexible link with
    no children has ``X = ℛ(k) H*(k)`` written only by the mass matrix step, whose typed zero came
    from the stale ``X``; after a state that overflows there, every later call fell through."""
    system = MultibodySystem([flexible_beam("link", None, Revolute([0.0, 1.0, 0.0]), 1.0, 2.0, 50.0, n_modes=2)])
    assert engine(system)._direct and system.nv == 3  # a 3-dof hinge: the m × h product of the step
    q = np.array([0.3, 0.01, -0.02])
    first = _direct(system, "mass_matrix", q, None, None)
    assert first is not None
    huge = q.copy()
    huge[1] = 1e200  # modal coordinate: the link's inertia overflows
    assert _direct(system, "mass_matrix", huge, None, None) is None
    for _ in range(2):
        np.testing.assert_array_equal(_direct(system, "mass_matrix", q, None, None), first)


def test_request_vectors_keep_tables_constants_and_workspace_apart():
    """The integer tables ride in a float64 or complex128 vector bit for bit (negative parents
    are NaN patterns as floats), the constants after them, the workspace last."""
    from sko.engine.state_kernels import Row

    system = random_rigid_system(0)
    e = engine(system)
    L = e.layout
    for dtype in (np.float64, np.complex128):
        for request in rq.REQUESTS.values():
            w = rq.request_vector(request, L, dtype)
            words = w.view(np.int64)
            H = rq.Header
            assert words[H.KERNEL] == request.address(dtype, rq.takes_rigid(request, L, dtype))
            assert words[H.FILL] == 1 and words[H.WRITTEN] == 0
            rows = words[words[H.ROWS]: words[H.LAYOUT]].reshape(L.rows.shape)
            np.testing.assert_array_equal(rows, L.table(dtype))
            np.testing.assert_array_equal(rows[:, Row.PARENT], L.rows[:, Row.PARENT])
            np.testing.assert_array_equal(words[words[H.LAYOUT]: words[H.ROFF]], L.request_layout.ravel())
            np.testing.assert_array_equal(w.view(np.float64)[words[H.REALS]: words[H.REALS_END]], L.reals)
            assert words[H.WORKSPACE] * w.itemsize >= words[H.REALS_END] * 8
            buffers = words[words[H.BUFFERS]: words[H.ROWS]]
            assert buffers[0] == L.size and w.size - words[H.WORKSPACE] == buffers[-1] + system.nv  # then x of one state


@pytest.mark.parametrize("op", REQUESTS)
def test_the_first_complete_fill_writes_the_constant_terms(op):
    """A request vector's arena keeps the terms no state changes (a rigid body's M, its frame's
    Γ = [I, 0] and γ = 0): the first fill that reaches every body writes them and later fills
    do not; a rejected state (a zero quaternion) leaves them to the next fill."""
    system = example_systems()["humanoid"]()
    e = engine(system)
    words = e._request_vector(rq.REQUESTS[op], np.dtype(np.float64)).view(np.int64)
    q, v, x = _state(system, 3)
    assert words[rq.Header.WRITTEN] == 0
    with pytest.raises(JointError):
        REQUESTS[op](system, np.zeros(system.nq), v, x)  # the floating base's quaternion is zero
    assert words[rq.Header.WRITTEN] == 0
    for seed in (3, 4):
        q, v, x = _state(system, seed)
        got = REQUESTS[op](system, q, v, x)
        assert words[rq.Header.WRITTEN] == 1
        with use_backend("reference"):
            assert_close(got, REQUESTS[op](system, q, v, x), 1e-10)


def test_a_copy_made_after_calls_answers_for_its_own_bodies():
    """A system's methods read the prepared calls bound to it on its first call: a copy made
    after calls (new inertial parameters, ``copy``, a pickle) binds its own engine's, never the
    table of the system it was copied from, and the first system keeps answering as before."""
    import copy
    import pickle

    system = random_rigid_system(1)
    q, v, x = _state(system)
    M, tau = system.mass_matrix(q), system.inverse_dynamics(q, v, x)
    doubled = system.with_inertial_parameters(2 * system.inertial_parameters())
    np.testing.assert_allclose(doubled.mass_matrix(q), 2 * M, rtol=1e-13)
    with use_backend("reference"):
        want = doubled.inverse_dynamics(q, v, x)
    assert_close(doubled.inverse_dynamics(q, v, x), want, 1e-12)
    for other in (doubled, copy.copy(system), pickle.loads(pickle.dumps(system))):
        other.mass_matrix(q)
        assert other._prepared_calls is other._engine.one_state is not system._engine.one_state
    np.testing.assert_array_equal(system.mass_matrix(q), M)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(system)).inverse_dynamics(q, v, x), tau)

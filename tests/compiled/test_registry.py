"""Body types written outside the package reach the compiled engine through the kernel registry
(sko.engine.state_kernels): the tutorial's bead, registered in its own file, runs every request
compiled, equal to its Python state on float and complex states, batched equal to per state;
a bad compiled state is refused naming the body; a new request is one entry of the catalogue."""

from __future__ import annotations

import numpy as np
import pytest

from papers.tutorial_body_type import Bead, bead_state, build
from sko.engine import use_backend
from sko.bodies import BodyError, CompiledState, RigidBody, Revolute
from sko.engine.bodies import compiled_state
from sko.engine.state_kernels import StateKernel, Terms, state_kernel
from sko.graphs.errors import DimensionError
from sko.spatial import spatial_inertia
from sko.systems import MultibodySystem
from sko.engine.dispatch import Engine, engine
from sko.engine.requests import REQUESTS, Request
from tests.compiled.toy_requests import kinetic_energy_kernel as _kinetic
from tests.util import SYSTEM_CALLS, assert_close, random_states


def test_the_bead_runs_compiled_through_its_own_kernel():
    system = build()
    layout = engine(system).layout
    assert layout.all_compiled
    kernels = {type(system.body(k)).__name__: compiled_state(system.body(k)).kernel for k in system.bodies}
    assert kernels["Bead"] is bead_state and isinstance(bead_state, StateKernel)


@pytest.mark.parametrize("complex_step", [False, True])
def test_the_bead_compiled_equals_its_python_state(complex_step):
    system = build()
    Q, V, X = random_states(system, 3, complex_step)
    for q, v, x in zip(Q, V, X):
        for name, call in SYSTEM_CALLS.items():
            got = call(system, q, v, x)
            with use_backend("reference"):
                want = call(system, q, v, x)
            assert_close(got, want, 1e-10)
        model, a, b = system.sko_model(q, v)
        with use_backend("reference"):
            ref, ra, rb = system.sko_model(q, v)
        for k in system.bodies:
            assert_close(model.M[k], ref.M[k], 1e-12)
            assert_close(model.H[k], ref.H[k], 1e-12)
            if k in ref.phi:
                assert_close(model.phi[k], ref.phi[k], 1e-12)
        assert_close(a, ra, 1e-12)
        assert_close(b, rb, 1e-12)


def test_the_bead_batched_equals_per_state():
    system = build()
    Q, V, X = random_states(system, 37, seed=4)  # more than two chunks: the parallel batch
    for name, call in SYSTEM_CALLS.items():
        batched = call(system, Q, V, X)
        for s in range(len(Q)):
            assert_close(batched[s], call(system, Q[s], V[s], X[s]), 1e-13)


def _pendulum(body):
    link = RigidBody("link", None, Revolute([0, 1, 0]), spatial_inertia(1.0, [0, 0, -0.5], 0.01 * np.eye(3)))
    return MultibodySystem([link, body])


class _Declared(Bead):
    def __init__(self, state):
        super().__init__("bead", "link", 0.3, [0.1, 0.0, -0.4], [0.0, 0.0, 1.0])
        self._state = state

    def compiled_state(self):
        return self._state


@pytest.mark.parametrize("state, message", [
    (object(), "must return None or a CompiledState"),
    (CompiledState(bead_state.dispatcher, np.zeros(8)), "StateKernel"),
    (CompiledState(bead_state, np.array([1.0, np.nan])), "finite real numbers"),
    (CompiledState(bead_state, np.zeros((2, 4))), "1-D vector"),
    (CompiledState(bead_state, np.zeros(8), scratch=-1), "scratch"),
])
def test_a_bad_compiled_state_is_refused_naming_the_body(state, message):
    with pytest.raises(BodyError, match=f"body 'bead'.*{message}"):
        _pendulum(_Declared(state)).mass_matrix(np.zeros(2))


@state_kernel
def _never(arena, row, reals, terms, constants):
    return False


def test_a_state_the_kernel_rejects_but_python_accepts_is_a_body_error():
    """A user's kernel and its ``at_state`` disagree: the error names the body, never passes a
    wrong answer."""
    system = _pendulum(_Declared(CompiledState(_never, np.zeros(8))))
    with pytest.raises(BodyError, match="compiled state of body 'bead'.*rejected"):
        system.forward_dynamics(np.zeros(2), np.zeros(2), np.zeros(2))
    with pytest.raises(BodyError, match="compiled state of body 'bead'.*rejected"):  # refused at every call
        system.mass_matrix(np.zeros((3, 2)))


def test_a_new_request_is_one_entry_and_one_kernel(monkeypatch):
    """The engine checks, batches and retries any request of the catalogue from its declaration:
    here the kinetic energy, a kernel written in this file."""
    kinetic = Request("kinetic_energy", _kinetic, Terms.MOTION, None, True, lambda s: (1,), lambda s: ())
    monkeypatch.setitem(REQUESTS, "kinetic_energy", kinetic)
    system = build()
    e = Engine(system)
    Q, V, _ = random_states(system, 5)
    got = e.run("kinetic_energy", system.kinetic_energy, Q, V)
    assert got.shape == (5, 1)
    for s in range(5):
        assert_close(got[s, 0], system.kinetic_energy(Q[s], V[s]), 1e-12)
    assert_close(e.run("kinetic_energy", system.kinetic_energy, Q[0], V[0])[0], system.kinetic_energy(Q[0], V[0]), 1e-12)
    with pytest.raises(DimensionError, match="v has length"):
        e.run("kinetic_energy", system.kinetic_energy, Q, V[:, :-1])

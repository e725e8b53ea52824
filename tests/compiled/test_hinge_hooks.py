"""Compiled hooks of a body type (sko.engine.hooks): its hinge force and its own q̇ map run
compiled, equal to the Python methods they mirror on float and complex states; the dynamics
with them equal the reference path, batched equal per state; rollouts of a bead with a spring
and of a body with its own q̇ map take the compiled loop and equal the stepwise one; a malformed
hook is refused or reported naming its body, never a crash or a silent fallback."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import sko
from papers.tutorial_body_type import Bead, bead_spring, bead_state, build
from sko.engine import use_backend
from sko.bodies import BodyError, BodyType, CompiledState, Revolute, RigidBody
from sko.engine.hooks import (hinge_force_at, hinge_force_kernel, normalize_at, normalize_kernel, qdot_at,
                              qdot_kernel)
from sko.engine.state_kernels import Row, state_kernel
from sko.graphs.errors import NonFiniteError
from sko.spatial import spatial_inertia
from sko.systems import MultibodySystem
from sko.engine import rollout as CR
from sko.engine.dispatch import engine
from sko.simulation.rollout import compiled_maps
from tests.util import assert_close, random_states

ROOT = Path(__file__).resolve().parents[2]


# ----------------------------------------------------------------------------- a body with its own q̇ map
class DiagonalBead(Bead):
    """A bead whose wire coordinate ``s = σ + τ`` is kept twice, ``q = (σ, τ)`` on the diagonal
    ``σ = τ``: ``q̇ = (ṡ/2, ṡ/2)``, normalisation onto the diagonal, a spring and a damper
    ``κ s + c ṡ`` across its hinge."""

    q_size, dof_size = 2, 1

    def __init__(self, name, parent, mass, start, direction, spring=0.0, damping=0.0, attach=None):
        super().__init__(name, parent, mass, start, direction, spring, attach)
        self.damping = float(damping)

    def at_state(self, q, qd, inboard, gravity):
        return super().at_state(q[:1] + q[1:], qd, inboard, gravity)

    def hinge_force(self, q, qd):
        return self.spring * (q[:1] + q[1:]) + self.damping * qd

    def qdot(self, q, qd):
        return 0.5 * np.concatenate([qd, qd])

    def normalize(self, q):
        q = np.asarray(q)
        middle = 0.5 * (q[0] + q[1])
        return np.array([middle, middle], dtype=complex if np.iscomplexobj(q) else float)

    def difference(self, q0, q1):
        return np.array([np.sum(q1) - np.sum(q0)])

    def compiled_state(self):
        constants = np.concatenate([[self.mass, self.spring], self.start, self.direction, [self.damping]])
        return CompiledState(diagonal_state, constants, scratch=1, hinge_force=diagonal_hinge, qdot=diagonal_qdot,
                             normalize=diagonal_normalize)


_bead = bead_state.dispatcher


@state_kernel
def diagonal_state(arena, row, reals, terms, constants):
    """The bead's kernel at ``s = σ + τ`` (written to the scratch, read there as its ``q``)."""
    o = row[Row.SCRATCH]
    arena[o] = arena[row[Row.Q]] + arena[row[Row.Q] + 1]
    own = row.copy()
    own[Row.Q], own[Row.NQ] = o, 1
    return _bead(arena, own, reals, terms, constants)


@hinge_force_kernel
def diagonal_hinge(q, v, constants, out):
    out[0] = constants[1] * (q[0] + q[1]) + constants[8] * v[0]
    return True


@qdot_kernel
def diagonal_qdot(q, v, constants, out):
    out[0] = 0.5 * v[0]
    out[1] = 0.5 * v[0]
    return True


@normalize_kernel
def diagonal_normalize(q, constants):
    middle = 0.5 * (q[0] + q[1])
    q[0] = middle
    q[1] = middle
    return True


def hooked_system() -> MultibodySystem:
    """The tutorial's pendulum, beam and springy beads, and a diagonal bead on the pendulum."""
    bodies = [build().body(k) for k in build().bodies]
    return MultibodySystem([*bodies, DiagonalBead("diagonal", "pendulum", 0.4, [0.0, 0.1, -0.7], [1.0, 0.0, 0.2],
                                                  spring=25.0, damping=0.3)])


# ----------------------------------------------------------------------------- the hooks alone
@pytest.mark.parametrize("complex_step", [False, True])
def test_compiled_hooks_equal_the_python_methods(complex_step):
    system = hooked_system()
    layout = engine(system).layout
    rng = np.random.default_rng(1)
    checked = set()
    for k in system.bodies:
        body, hooks = system.body(k), layout.hooks[layout.index[k]]
        if hooks is None:
            continue
        for _ in range(5):
            q = body.random_configuration(rng) + 3.0 * rng.normal(size=body.q_size)  # off the diagonal too
            v = rng.normal(size=body.dof_size)
            if complex_step:
                q, v = q + 1e-3j * rng.normal(size=q.shape), v + 1e-3j * rng.normal(size=v.shape)
            assert_close(hinge_force_at(body, hooks, q, v), body.hinge_force(q, v), 1e-14)
            assert_close(qdot_at(body, hooks, q, v), body.qdot(q, v), 1e-14)
            assert_close(normalize_at(body, hooks, q), body.normalize(q), 1e-14)
            assert np.iscomplexobj(hinge_force_at(body, hooks, q, v)) == complex_step
        checked.add(type(body).__name__)
    assert checked == {"Bead", "DiagonalBead"}


# ----------------------------------------------------------------------------- the dynamics
@pytest.mark.parametrize("complex_step", [False, True])
def test_dynamics_with_compiled_hinge_forces_equal_the_reference(complex_step):
    system = hooked_system()
    assert not engine(system).layout.hinge_forces  # no hinge force left to Python
    Q, V, X = random_states(system, 3, complex_step=complex_step)
    for q, v, x in zip(Q, V, X):
        for call in (lambda: system.inverse_dynamics(q, v, x), lambda: system.forward_dynamics(q, v, x),
                     lambda: system.bias_forces(q, v)):
            got = call()
            with use_backend("reference"):
                want = call()
            assert_close(got, want, 1e-10)
            if complex_step:  # the imaginary part carries the derivative: it must be right too
                assert_close(got.imag, want.imag, 1e-9 * max(1.0, np.abs(want.imag).max()))


def test_the_spring_is_in_the_dynamics():
    """With the springs the compiled dynamics differ from those without by exactly the hinge forces."""
    springy, slack = build(spring=40.0), build(spring=0.0)
    Q, V, X = random_states(springy, 4, seed=3)
    for q, v, x in zip(Q, V, X):
        hinge = springy.hinge_forces(q, v)
        assert np.abs(hinge).max() > 1e-3
        assert_close(springy.inverse_dynamics(q, v, x), slack.inverse_dynamics(q, v, x) + hinge, 1e-12)
        assert_close(springy.forward_dynamics(q, v, x), slack.forward_dynamics(q, v, x - hinge), 1e-12)


@pytest.mark.parametrize("complex_step", [False, True])
def test_a_batch_equals_its_states_alone(complex_step):
    system = hooked_system()
    Q, V, X = random_states(system, 37, seed=4, complex_step=complex_step)  # more than a parallel chunk
    for method in (system.inverse_dynamics, system.forward_dynamics):
        batch = method(Q, V, X)
        for s in (0, 17, 36):
            np.testing.assert_array_equal(batch[s], method(Q[s], V[s], X[s]))


def test_compiled_and_python_hinge_forces_add_up():
    """A compiled hinge force beside a body whose state and spring run in Python, with external
    forces (the arenas then filled before the requests run): each force counted once."""

    class PythonBead(Bead):
        def compiled_state(self):
            return None

    system = MultibodySystem([*[hooked_system().body(k) for k in hooked_system().bodies],
                              PythonBead("python-bead", "pendulum", 0.1, [0.2, 0.0, -0.3], [0.0, 1.0, 0.0], 60.0)])
    layout = engine(system).layout
    assert not layout.all_compiled and layout.python_hinge_bodies == ("python-bead",)
    Q, V, X = random_states(system, 3, seed=11)
    forces = {"pendulum": np.array([0.1, -0.2, 0.3, 1.0, 0.5, -2.0])}
    for q, v, x in zip(Q, V, X):
        for f in (None, forces):
            for method in ("inverse_dynamics", "forward_dynamics"):
                got = getattr(system, method)(q, v, x, external_forces=f)
                with use_backend("reference"):
                    want = getattr(system, method)(q, v, x, external_forces=f)
                assert_close(got, want, 1e-10)
    batch = system.forward_dynamics(Q, V, X, external_forces=forces)
    for s in range(3):
        assert_close(batch[s], system.forward_dynamics(Q[s], V[s], X[s], external_forces=forces), 1e-13)


def test_compiled_hinge_forces_call_no_python_per_state(monkeypatch):
    system = build()
    e = engine(system)
    assert not e.layout.hinge_forces and e._direct  # the direct path serves one state
    Q, V, X = random_states(system, 20, seed=5)
    want = system.forward_dynamics(Q, V, X), system.inverse_dynamics(Q[0], V[0], X[0])

    def refused(self, q, qd):
        raise AssertionError("a Python hinge_force was called")

    monkeypatch.setattr(Bead, "hinge_force", refused)
    np.testing.assert_array_equal(system.forward_dynamics(Q, V, X), want[0])
    np.testing.assert_array_equal(system.inverse_dynamics(Q[0], V[0], X[0]), want[1])
    assert sko.rollout(system, Q[:3], V[:3], 1e-3, 5).failed.tolist() == [-1, -1, -1]


def test_derivatives_by_complex_step_through_the_compiled_hooks():
    system = hooked_system()
    Q, V, X = random_states(system, 2, seed=6)
    for q, v, x in zip(Q, V, X):
        got = system.forward_dynamics_derivatives(q, v, x)
        with use_backend("reference"):
            want = system.forward_dynamics_derivatives(q, v, x)
        for g, w in zip(got, want):
            assert_close(g, w, 1e-7)


# ----------------------------------------------------------------------------- rollouts
@pytest.mark.parametrize("integrator", ["rk4", "euler"])
def test_rollouts_with_hooks_take_the_compiled_loop_and_equal_the_stepwise_one(integrator):
    for system in (build(), hooked_system()):
        maps = compiled_maps(system)
        assert maps is not None
        hooked = [system.body(k) for k in system.bodies if isinstance(system.body(k), DiagonalBead)]
        assert (maps.table[:, CR.Maps.KIND] == CR.HOOK).sum() == len(hooked)
        rng = np.random.default_rng(7)
        Q0 = np.array([system.random_configuration(rng) for _ in range(5)])
        V0 = rng.normal(size=(5, system.nv))
        T = rng.normal(size=(5, 20, system.nv))
        compiled = sko.rollout(system, Q0, V0, 1e-3, 20, tau=T, integrator=integrator)
        with use_backend("reference"):
            stepwise = sko.rollout(system, Q0, V0, 1e-3, 20, tau=T, integrator=integrator)
        np.testing.assert_allclose(compiled.q, stepwise.q, rtol=0, atol=1e-12)
        np.testing.assert_allclose(compiled.v, stepwise.v, rtol=0, atol=1e-11 * max(1.0, np.abs(stepwise.v).max()))
        assert (compiled.failed == -1).all() and not compiled.errors
        for body in hooked:  # the diagonal stays the diagonal: the normalisation ran
            qs = system.q_slices[body.name]
            np.testing.assert_allclose(compiled.q[:, :, qs.start], compiled.q[:, :, qs.start + 1], atol=1e-15)


def test_a_type_with_its_own_q_map_but_no_hook_stays_stepwise():
    class PythonMaps(DiagonalBead):  # the hinge force compiled, the q̇ map in Python only
        def compiled_state(self):
            state = super().compiled_state()
            return CompiledState(state.kernel, state.constants, state.scratch, hinge_force=state.hinge_force)

    system = MultibodySystem([*[build().body(k) for k in build().bodies], _plain_diagonal(PythonMaps)])
    assert compiled_maps(system) is None
    Q, V, _ = random_states(system, 2, seed=10)
    out = sko.rollout(system, Q, V, 1e-3, 5)
    with use_backend("reference"):
        np.testing.assert_allclose(out.q, sko.rollout(system, Q, V, 1e-3, 5).q, atol=1e-12)

    class HalfHooked(DiagonalBead):  # a normalisation kernel, but its own q̇ map left out
        def compiled_state(self):
            state = super().compiled_state()
            return CompiledState(state.kernel, state.constants, state.scratch, normalize=state.normalize)

    with pytest.raises(BodyError, match="'diagonal'.*no qdot kernel"):
        engine(MultibodySystem([*[build().body(k) for k in build().bodies], _plain_diagonal(HalfHooked)]))


def _plain_diagonal(kind):
    return kind("diagonal", "pendulum", 0.4, [0.0, 0.1, -0.7], [1.0, 0.0, 0.2], spring=5.0)


# ----------------------------------------------------------------------------- malformed hooks
def _bead_with(hook=None, **hooks):
    """A system of one pendulum and a bead whose compiled state has these hooks."""

    class Tampered(Bead):
        def hinge_force(self, q, qd):
            return self.spring * q

        def compiled_state(self):
            return CompiledState(bead_state, np.concatenate([[self.mass, self.spring], self.start, self.direction]),
                                 hinge_force=hook, **hooks)

    pendulum = RigidBody("pendulum", None, Revolute([0, 1, 0]), spatial_inertia(2.0, [0, 0, -0.5], 0.05 * np.eye(3)))
    return MultibodySystem([pendulum, Tampered("tampered", "pendulum", 0.3, [0.1, 0, -0.4], [0, 0, 1], 40.0)])


@hinge_force_kernel
def nan_spring(q, v, constants, out):
    out[0] = np.nan * q[0]
    return True


@hinge_force_kernel
def refusing_spring(q, v, constants, out):
    return q[0].real < 100.0


@hinge_force_kernel
def raising_spring(q, v, constants, out):
    if q[0].real > 0.5:
        raise ValueError("the spring snapped")
    out[0] = constants[1] * q[0]
    return True


@hinge_force_kernel
def overreaching_spring(q, v, constants, out):
    out[0] = constants[1] * q[0]
    out[1] = 1.0  # the bead has one hinge coordinate
    return True


@hinge_force_kernel
def three_parameters(q, v, out):
    out[0] = q[0]
    return True


def test_a_hinge_force_writing_nan_is_named_never_passed_on():
    system = _bead_with(nan_spring)
    Q, V, X = random_states(system, 3, seed=8)
    for call in (lambda: system.forward_dynamics(Q[0], V[0], X[0]), lambda: system.inverse_dynamics(Q, V, X)):
        with pytest.raises(NonFiniteError, match="'tampered'.*nan_spring.*not finite"):
            call()
    out = sko.rollout(system, Q, V, 1e-3, 3)
    assert out.failed.tolist() == [0, 0, 0]
    assert isinstance(out.errors[0], NonFiniteError) and "'tampered'" in str(out.errors[0])


def test_a_hinge_force_rejecting_or_raising_is_named_with_its_message():
    system = _bead_with(refusing_spring)
    q, v = np.array([0.1, 200.0]), np.zeros(2)
    with pytest.raises(BodyError, match="'tampered'.*refusing_spring.*returned False"):
        system.forward_dynamics(q, v)
    system = _bead_with(raising_spring)
    with pytest.raises(BodyError, match="'tampered'.*raised ValueError: the spring snapped"):
        system.inverse_dynamics(np.array([0.1, 0.9]), v, v)
    with pytest.raises(BodyError, match="state 1 of the batch.*'tampered'.*the spring snapped"):
        system.forward_dynamics(np.array([[0.1, 0.1], [0.1, 0.9]]), np.zeros((2, 2)))
    assert_close(system.forward_dynamics(np.array([0.1, 0.2]), v), _reference(system, np.array([0.1, 0.2]), v), 1e-12)
    system = _bead_with(overreaching_spring)
    with pytest.raises(BodyError, match="'tampered'.*overreaching_spring.*raised IndexError"):
        system.forward_dynamics(np.array([0.1, 0.2]), v)


@hinge_force_kernel
def root_spring(q, v, constants, out):
    out[0] = np.sqrt(q[0])  # NaN at a negative float, finite at a complex step of one
    return True


def test_derivatives_check_the_compiled_hinge_force_at_the_real_state():
    """The local recursion takes its complex steps of a compiled hinge force, which may be finite
    where the force is not a number (``√q`` at ``q < 0``): it runs the hook at the real state
    too, and the derivatives raise there as inverse dynamics does; where the hook returns False
    at the real state, its own error."""
    system = _bead_with(root_spring)
    q, v, a = np.array([0.1, -0.2]), np.array([0.3, 0.1]), np.array([0.2, -0.4])
    with pytest.raises(NonFiniteError, match="'tampered'.*root_spring"):
        system.inverse_dynamics_derivatives(q, v, a)
    with pytest.raises(NonFiniteError, match="state 1 of the batch.*'tampered'.*root_spring"):
        system.inverse_dynamics_derivatives(np.array([-q, q]), np.array([v, v]), np.array([a, a]))
    fine = system.inverse_dynamics_derivatives(np.abs(q), v, a)
    exact = system.inverse_dynamics_derivatives(np.abs(q), v, a, method="complex_step")
    for x, y in zip(fine, exact):
        assert_close(x, y, 1e-10)
    system = _bead_with(refusing_spring)
    with pytest.raises(BodyError, match="'tampered'.*refusing_spring.*returned False"):
        system.inverse_dynamics_derivatives(np.array([0.1, 200.0]), v, a)


def _reference(system, q, v):
    with use_backend("reference"):
        return system.forward_dynamics(q, v)


def test_malformed_hooks_are_refused_naming_the_body():
    with pytest.raises(BodyError, match="'tampered'.*three_parameters.*does not compile"):
        _bead_with(three_parameters).forward_dynamics(np.zeros(2))
    with pytest.raises(BodyError, match="'tampered'.*hinge_force.*must be a hinge_force kernel"):
        _bead_with(diagonal_qdot).forward_dynamics(np.zeros(2))
    with pytest.raises(BodyError, match="'tampered'.*must be a hinge_force kernel"):
        _bead_with(lambda q, v, c, out: True).forward_dynamics(np.zeros(2))
    with pytest.raises(BodyError, match="'tampered'.*qdot kernel but its type defines no qdot"):
        _bead_with(bead_spring, qdot=diagonal_qdot).forward_dynamics(np.zeros(2))


def test_a_hook_without_its_python_method_is_refused():
    class Silent(Bead):  # the hook, but no hinge_force for the reference path
        hinge_force = BodyType.hinge_force

        def compiled_state(self):
            state = super().compiled_state()
            return CompiledState(state.kernel, state.constants, hinge_force=bead_spring)

    with pytest.raises(BodyError, match="'silent'.*hinge_force kernel but its type defines no hinge_force"):
        engine(MultibodySystem([Silent("silent", None, 1.0, [0, 0, 0], [1, 0, 0], 3.0)]))


@qdot_kernel
def nan_qdot(q, v, constants, out):
    out[0] = np.nan
    out[1] = 0.5 * v[0]
    return True


def test_a_q_map_writing_nan_stops_the_rollout_naming_the_body():
    class Broken(DiagonalBead):
        def compiled_state(self):
            state = super().compiled_state()
            return CompiledState(state.kernel, state.constants, state.scratch, hinge_force=state.hinge_force,
                                 qdot=nan_qdot, normalize=state.normalize)

    system = MultibodySystem([*[build().body(k) for k in build().bodies], _plain_diagonal(Broken)])
    assert compiled_maps(system) is not None
    Q, V, _ = random_states(system, 2, seed=9)
    out = sko.rollout(system, Q, V, 1e-3, 4)
    assert out.failed.tolist() == [0, 0]
    assert isinstance(out.errors[1], NonFiniteError)
    assert "step 1" in str(out.errors[1]) and "'diagonal'" in str(out.errors[1]) and "nan_qdot" in str(out.errors[1])


def test_a_hook_returning_no_boolean_is_an_error_not_a_crash():
    """``return None``, ``1`` or ``1.0`` from a hook would corrupt the caller's stack: refused when
    compiled (run in a subprocess, where a crash would show as a signal)."""
    script = textwrap.dedent("""
        import numpy as np
        from sko.bodies import BodyError
        from sko.engine.hooks import hinge_force_kernel
        from tests.compiled.test_hinge_hooks import _bead_with

        def none(q, v, constants, out):
            out[0] = q[0]

        def one(q, v, constants, out):
            out[0] = q[0]
            return 1

        def real(q, v, constants, out):
            out[0] = q[0]
            return 1.0

        for function in (none, one, real):
            system = _bead_with(hinge_force_kernel(function))
            for call in (lambda: system.forward_dynamics(np.zeros(2)),
                         lambda: system.forward_dynamics(np.zeros((40, 2)))):
                try:
                    call()
                except BodyError as error:
                    assert "'tampered'" in str(error) and "must return a boolean" in str(error), error
                else:
                    raise AssertionError(function.__name__ + " was accepted")
        print("refused")
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith("refused")

"""A request is declared once: a toy request declared in this file (one declaration, one kernel,
one reference function) becomes a system method with its own signature, checked and batched as
the others, compiled equal to its reference; sweeps, ``sko sample`` and ``sko compile`` take
it. The catalogue's own requests are made the same way and keep their signatures."""

from __future__ import annotations

import inspect
import pydoc

import numpy as np
import pytest

from papers.tutorial_body_type import build
from sko import precompile
from sko.engine import use_backend
from sko.engine.state_kernels import Terms
from sko.graphs.errors import DimensionError, NonFiniteError, SKOError
from sko.scale import sweep
from sko.systems import MultibodySystem, RigidSystem
from sko.systems.catalogue import DECLARATIONS, INPUTS_OF, SHORT_NAMES, declare, withdraw
from sko.systems.declared import Declaration
from sko.engine.requests import REQUESTS, Request
from tests.rigid.random_systems import random_rigid_system
from tests.compiled.toy_requests import kinetic_energy_kernel as _kinetic
from tests.util import assert_close, random_states

NAME = "kinetic_energy_only"


def _kinetic_reference(system, q, v, x, external_forces):
    """The same at one state from the bodies' Python node states."""
    states = system.node_states(q, v)
    return np.array([sum(0.5 * s.V @ s.M @ s.V for s in states.values())])


DECLARATION = Declaration(NAME, "T", reference=_kinetic_reference, velocities=True,
                          doc="``[½ vᵀ ℳ v]``: the kinetic energy alone, as a one-entry array.")
REQUEST = Request(NAME, _kinetic, Terms.MOTION, None, True, lambda s: (1,), lambda s: ())


@pytest.fixture
def declared():
    declare(DECLARATION, REQUEST)
    yield DECLARATION
    withdraw(NAME)


def _systems():
    return [build(), *(random_rigid_system(seed) for seed in range(4))]


def test_a_declared_request_is_a_system_method_with_its_signature(declared):
    system = build()
    assert str(inspect.signature(system.kinetic_energy_only)) == "(q, v=None) -> 'np.ndarray'"
    assert system.kinetic_energy_only.__doc__ == DECLARATION.doc
    assert RigidSystem.kinetic_energy_only is MultibodySystem.kinetic_energy_only  # every system kind has it
    text = pydoc.render_doc(system.kinetic_energy_only, renderer=pydoc.plaintext)
    assert "kinetic_energy_only(q, v=None)" in text and "kinetic energy alone" in text


def test_it_is_gone_once_withdrawn():
    declare(DECLARATION, REQUEST)
    withdraw(NAME)
    assert not hasattr(MultibodySystem, NAME) and NAME not in DECLARATIONS and NAME not in REQUESTS


@pytest.mark.parametrize("complex_step", [False, True])
def test_compiled_equals_reference_one_state_and_batched(declared, complex_step):
    for system in _systems():
        Q, V, _ = random_states(system, 4, complex_step)
        batch = system.kinetic_energy_only(Q, V)
        assert batch.shape == (4, 1)
        for s in range(4):
            one = system.kinetic_energy_only(Q[s], V[s])
            with use_backend("reference"):
                want = system.kinetic_energy_only(Q[s], V[s])
            assert_close(one, want, 1e-12)
            assert_close(batch[s], one, 1e-13)
            assert_close(one[0], system.kinetic_energy(Q[s], V[s]), 1e-12)
        with use_backend("reference"):
            assert_close(system.kinetic_energy_only(Q, V), batch, 1e-12)


def test_the_compiled_path_answers(declared, monkeypatch):
    """The method takes the compiled request (not its reference) for a compiled system."""
    system = build()
    q, v, _ = random_states(system, 1)
    calls = []
    run = type(system._engine).run
    monkeypatch.setattr(type(system._engine), "run", lambda self, name, *a, **k: calls.append(name) or run(self, name, *a, **k))
    system.kinetic_energy_only(q[0], v[0])  # the direct call: nothing else runs
    assert calls == []
    system.kinetic_energy_only(q, v)  # a batch: the checked compiled path
    assert calls == [NAME]


def _error(call, *args):
    with pytest.raises(SKOError) as caught:
        call(*args)
    return type(caught.value), str(caught.value)


def test_it_is_checked_as_the_others(declared):
    """The same errors as the catalogue's own request reading ``q`` and ``v`` (the energy)."""
    system = build()
    Q, V, _ = random_states(system, 3)
    bad = [(Q[0], V[0][:-1]), (Q[0][:-1], V[0]), (Q, V[:2]), (Q, V[0]), (np.full_like(Q[0], np.nan), V[0]),
           (Q[0], np.full_like(V[0], np.inf)), ([[1.0]], V[0]), ("q", V[0])]
    for q, v in bad:
        kind, message = _error(system.kinetic_energy_only, q, v)
        assert (kind, message) == _error(system.energy, q, v)
        assert issubclass(kind, (DimensionError, NonFiniteError))
    with pytest.raises(TypeError):
        system.kinetic_energy_only(Q[0], V[0], V[0])  # no third input


def test_sweeps_samples_and_compile_take_it(declared, tmp_path, monkeypatch):
    assert INPUTS_OF[NAME] is None and SHORT_NAMES["T"] == NAME and NAME in sweep.REQUESTS
    system = build()
    Q, V, _ = random_states(system, 5)
    np.testing.assert_array_equal(sweep._request(system, NAME, Q, V, None), system.kinetic_energy_only(Q, V))
    ran = []
    method = system.kinetic_energy_only
    monkeypatch.setattr(system, NAME, lambda q, v: ran.append(np.ndim(q)) or method(q, v), raising=False)
    precompile._system_step(lambda: system, np.dtype(np.float64), False)()
    assert ran == [1, 2]  # one state, then a batch
    pytest.importorskip("dask.array")
    got = sweep.sweep(system, "T", Q, V, chunk=2)
    np.testing.assert_allclose(got, system.kinetic_energy_only(Q, V), rtol=1e-13)
    pytest.importorskip("zarr")
    group = sweep.sample(system, 4, ["T", "M"], tmp_path / "store", chunk=2)
    np.testing.assert_allclose(group[NAME][:], system.kinetic_energy_only(group["q"][:], group["v"][:]), rtol=1e-13)


def _twice_kinetic_reference(system, q, v, x, external_forces):
    return 2.0 * _kinetic_reference(system, q, v, x, external_forces)


def test_a_store_refuses_a_request_declared_anew_under_its_name(tmp_path):
    """A store records the identity of a request ``declare`` added (the package's own are the
    package version's): the same name declared to compute something else resumed the array."""
    pytest.importorskip("dask.array")
    pytest.importorskip("zarr")
    from sko.scale.stores import StoreError

    system, store = build(), tmp_path / "store"
    for declaration, refused in ((DECLARATION, False), (DECLARATION, False),
                                 (Declaration(NAME, "T", reference=_twice_kinetic_reference, velocities=True,
                                              doc="twice the kinetic energy"), True)):
        declare(declaration, REQUEST)
        try:
            if refused:
                with pytest.raises(StoreError, match=rf"holds '{NAME}' computed from another 'request'"):
                    sweep.sample(system, 4, ["T"], store, chunk=2)
            else:
                sweep.sample(system, 4, ["T"], store, chunk=2)  # the first run, then its resumption
        finally:
            withdraw(NAME)


@pytest.mark.parametrize("name", ["q", "v", "dv", "tau"])
def test_a_request_named_like_an_input_is_refused(name):
    """A sample stores its inputs and requests as arrays by name: a request named ``tau``
    would be written into the drawn torques' array."""
    with pytest.raises(SKOError, match=rf"request {name!r} has the name of an input"):
        declare(Declaration(name, name.upper(), reference=_kinetic_reference, velocities=True, doc=""),
                Request(name, _kinetic, Terms.MOTION, None, True, lambda s: (1,), lambda s: ()))
    assert name not in DECLARATIONS and name not in REQUESTS


def test_declarations_are_refused_when_they_clash():
    with pytest.raises(SKOError, match="already declared"):
        declare(Declaration("mass_matrix", "M2", reference=_kinetic_reference, doc=""))
    with pytest.raises(SKOError, match="is a system method"):
        declare(Declaration("jacobian", "J", reference=_kinetic_reference, doc=""))
    with pytest.raises(SKOError, match="no compiled part"):
        declare(Declaration("nowhere", "N", reference=_kinetic_reference, doc=""))
    with pytest.raises(SKOError, match="the declaration reads"):
        declare(Declaration(NAME, "T", reference=_kinetic_reference, doc=""), REQUEST)  # v not declared
    assert NAME not in REQUESTS and NAME not in DECLARATIONS
    with pytest.raises(SKOError, match="third input"):
        Declaration("toy", "t", reference=None, doc="", x="qdd")
    with pytest.raises(SKOError, match="deprecated keyword"):
        Declaration("toy", "t", reference=None, doc="", renamed={"qd": "v"})


def test_the_catalogue_methods_keep_their_signatures():
    signatures = {
        "mass_matrix": "(q) -> 'np.ndarray'",
        "mass_matrix_inverse": "(q) -> 'np.ndarray'",
        "inverse_dynamics": "(q, v=None, dv=None, external_forces: 'Mapping | None' = None, **renamed) -> 'np.ndarray'",
        "forward_dynamics": "(q, v=None, tau=None, external_forces: 'Mapping | None' = None, **renamed) -> 'np.ndarray'",
        "centroidal_terms": "(q, v=None) -> 'np.ndarray'",
        "centroidal_momentum_matrix": "(q) -> 'np.ndarray'",
        "centroidal_momentum_matrix_rate": "(q, v=None) -> 'np.ndarray'",
        "joint_torque_regressor": "(q, v=None, dv=None, friction: 'bool' = False, armature: 'bool' = False) "
                                  "-> 'np.ndarray'",
        "energy_regressors": "(q, v=None, friction: 'bool' = False, armature: 'bool' = False) -> 'np.ndarray'",
    }
    system = build()
    for name, signature in signatures.items():
        method = getattr(system, name)
        assert str(inspect.signature(method)) == signature
        assert method.__doc__ == DECLARATIONS[name].doc and method.__qualname__ == f"MultibodySystem.{name}"
    for name, declaration in DECLARATIONS.items():
        assert declaration.request.name == name and declaration.request.velocities == declaration.velocities
        assert callable(getattr(system, name))


def test_views_present_their_request_one_state_and_batched():
    from sko.systems.catalogue import VIEWS

    system = build()
    Q, V, _ = random_states(system, 3)
    for name, view in VIEWS.items():
        method = getattr(system, name)
        assert method.__doc__ == view.doc and method.__qualname__ == f"MultibodySystem.{name}"
        options = "".join(f", {o.name}: 'bool' = {o.default}" for o in DECLARATIONS[view.of].options)
        assert str(inspect.signature(method)) == ("(q, v=None" if view.velocities else "(q") + options + ")"
        args = (Q, V) if view.velocities else (Q,)
        batch = method(*args)
        for s in range(3):  # a batch presents each state's result
            one = method(*(a[s] for a in args))
            want = view.present(system, getattr(system, view.of)(*(a[s] for a in args)))
            for got, expected in zip(*((one, want) if isinstance(one, tuple) else ((one,), (want,)))):
                assert_close(got, expected, 0.0)
            for got, expected in zip(*((batch, one) if isinstance(one, tuple) else ((batch,), (one,)))):
                assert_close(got[s], expected, 1e-14)
    h = system.centroidal_momentum(Q[0], V[0])
    assert_close(h, system.centroidal_momentum_matrix(Q[0]) @ V[0], 1e-12)  # h_G = A_G v


def test_a_view_of_no_request_is_refused():
    from sko.systems.catalogue import _check_view
    from sko.systems.declared import View

    with pytest.raises(SKOError, match="not a declared request"):
        _check_view(View("momentum_of_nothing", "no_such_request", lambda system, out: out, doc=""))
    with pytest.raises(SKOError, match="reading v"):
        _check_view(View("mass_times_v", "mass_matrix", lambda system, out: out, doc="", velocities=True))
    with pytest.raises(SKOError, match="public Python identifier"):
        View("_hidden", "mass_matrix", lambda system, out: out, doc="")


def test_deprecated_keywords_still_work():
    system = build()
    q, v, x = (a[0] for a in random_states(system, 1))
    with pytest.warns(DeprecationWarning) as record:
        got = system.inverse_dynamics(q, qd=v, qdd=x)
    assert [str(w.message) for w in record] == ["inverse_dynamics(qd=...) is deprecated; use v=",
                                               "inverse_dynamics(qdd=...) is deprecated; use dv="]
    assert {w.filename for w in record} == {__file__}  # pointing at the caller
    np.testing.assert_array_equal(got, system.inverse_dynamics(q, v, x))
    with pytest.warns(DeprecationWarning, match=r"forward_dynamics\(qd=...\)"):
        np.testing.assert_array_equal(system.forward_dynamics(q, qd=v, tau=x), system.forward_dynamics(q, v, x))
    with pytest.raises(TypeError, match="unexpected keyword argument 'qdd'"):
        system.forward_dynamics(q, qdd=x)
    with pytest.raises(TypeError, match="got both qd="):
        system.inverse_dynamics(q, v, qd=v)

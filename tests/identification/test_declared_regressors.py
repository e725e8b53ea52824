"""The regressors are declared requests (:mod:`sko.systems.catalogue`): their system methods are
generated from the declarations, take the options ``friction`` and ``armature`` positionally or
by keyword, check them (the project's error naming the method and the option) and pass them on;
batches equal single states on every system kind and backend, an empty batch has the options'
columns; sweeps, ``sko sample`` and ``sko compile`` take the energy rows with no code of their
own."""

from __future__ import annotations

import inspect
import itertools

import numpy as np
import pytest

from sko import precompile
from sko.engine import use_backend
from sko.engine import regressors as compiled
from sko.examples.bodies import geared_rotor_chain
from sko.examples.rigid import arm7
from sko.graphs.errors import SKOError
from sko.scale import sweep
from sko.systems import MultibodySystem
from sko.systems.catalogue import DECLARATIONS, INPUTS_OF, SHORT_NAMES, VIEWS
from sko.systems.declared import Declaration, Option
from tests.embedding.random_clusters import random_clustered_system
from tests.util import random_states

OPTIONS = [dict(zip(("friction", "armature"), flags)) for flags in itertools.product((False, True), repeat=2)]
METHODS = {  # name: call(system, q, v, x, **options)
    "joint_torque_regressor": lambda s, q, v, x, **o: s.joint_torque_regressor(q, v, x, **o),
    "energy_regressors": lambda s, q, v, x, **o: s.energy_regressors(q, v, **o),
    "kinetic_energy_regressor": lambda s, q, v, x, **o: s.kinetic_energy_regressor(q, v, **o),
    "potential_energy_regressor": lambda s, q, v, x, **o: s.potential_energy_regressor(q, **o),
}


def _clustered():
    builder, theta0 = random_clustered_system(3)
    return builder.build(initial=theta0)


#: a compiled rigid tree, bodies of another type (geared rotors: the reference path), a coupled system
SYSTEMS = {"rigid": arm7, "rotors": lambda: geared_rotor_chain(2), "clustered": _clustered}


def test_the_methods_are_generated_from_the_declarations():
    for name in ("joint_torque_regressor", "energy_regressors"):
        assert getattr(MultibodySystem, name).declaration is DECLARATIONS[name]
    for name in ("kinetic_energy_regressor", "potential_energy_regressor"):
        assert getattr(MultibodySystem, name).view is VIEWS[name]
    system = arm7()
    options = "friction: 'bool' = False, armature: 'bool' = False"
    assert str(inspect.signature(system.joint_torque_regressor)) == f"(q, v=None, dv=None, {options}) -> 'np.ndarray'"
    assert str(inspect.signature(system.energy_regressors)) == f"(q, v=None, {options}) -> 'np.ndarray'"
    assert str(inspect.signature(system.kinetic_energy_regressor)) == f"(q, v=None, {options})"
    assert str(inspect.signature(system.potential_energy_regressor)) == f"(q, {options})"


@pytest.mark.parametrize("kind", sorted(SYSTEMS))
@pytest.mark.parametrize("name", sorted(METHODS))
@pytest.mark.parametrize("bad", ["yes", 1, 0, None, 1.0, np.array([True]), [True]])
def test_a_bad_option_is_the_projects_error_naming_it(kind, name, bad):
    system = SYSTEMS[kind]()
    Q, V, X = random_states(system, 2)
    call = METHODS[name]
    for option in ("friction", "armature"):
        for q, v, x in ((Q[0], V[0], X[0]), (Q, V, X)):
            for backend in ("compiled", "reference"):
                with use_backend(backend), pytest.raises(SKOError) as caught:
                    call(system, q, v, x, **{option: bad})
                assert f"{name}({option}=)" in str(caught.value)  # the method called, the option
                assert "True or False" in str(caught.value) and repr(bad) in str(caught.value)


def test_options_are_positional_or_keyword_and_numpy_bools_are_taken():
    system = arm7()
    q, v, x = (a[0] for a in random_states(system, 1))
    Y = system.joint_torque_regressor(q, v, x, friction=True, armature=True)
    np.testing.assert_array_equal(system.joint_torque_regressor(q, v, x, True, True), Y)
    np.testing.assert_array_equal(system.joint_torque_regressor(q, v, x, np.True_, np.bool_(True)), Y)
    y = system.energy_regressors(q, v, armature=True)
    np.testing.assert_array_equal(system.energy_regressors(q, v, False, True), y)
    np.testing.assert_array_equal(system.kinetic_energy_regressor(q, v, False, True), y[0])
    np.testing.assert_array_equal(system.potential_energy_regressor(q, False, True), y[1])


@pytest.mark.parametrize("kind", sorted(SYSTEMS))
@pytest.mark.parametrize("backend", ["compiled", "reference"])
def test_batched_equals_per_state_with_every_option(kind, backend):
    system = SYSTEMS[kind]()
    Q, V, X = random_states(system, 3, seed=4)
    p = len(system.inertial_parameters())
    with use_backend(backend):
        for options, (name, call) in itertools.product(OPTIONS, METHODS.items()):
            batch = call(system, Q, V, X, **options)
            for s in range(len(Q)):
                np.testing.assert_array_equal(batch[s], call(system, Q[s], V[s], X[s], **options))
            empty = call(system, Q[:0], V[:0], X[:0], **options)
            columns = len(system.inertial_parameters(**options))
            assert empty.shape == (0, *batch.shape[1:]) and batch.shape[-1] == columns
            if name == "joint_torque_regressor":  # the joint columns after the bodies'
                assert batch.shape == (len(Q), system.nv, columns)
                np.testing.assert_array_equal(batch[..., :p], call(system, Q, V, X))
            if name == "energy_regressors":
                assert batch.shape == (len(Q), 2, columns)
                np.testing.assert_array_equal(batch[:, 0], system.kinetic_energy_regressor(Q, V, **options))
                np.testing.assert_array_equal(batch[:, 1], system.potential_energy_regressor(Q, **options))


def test_the_compiled_kernels_answer_a_rigid_tree_and_never_another_system():
    rigid, rotors = arm7(), geared_rotor_chain(2)
    assert compiled.applies(rigid) and not compiled.applies(rotors)
    for system in (rigid, rotors):
        Q, V, X = random_states(system, 3)
        with use_backend("reference"):
            want = system.joint_torque_regressor(Q, V, X, friction=True), system.energy_regressors(Q, V, armature=True)
        got = system.joint_torque_regressor(Q, V, X, friction=True), system.energy_regressors(Q, V, armature=True)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * np.abs(b).max())
        built = {key[0] for key in system._engine._vectors} if system._engine.layout is not None else set()
        assert ({"joint_torque_regressor", "energy_regressors"} <= built) == (system is rigid)


def test_sweeps_samples_and_compile_take_the_energy_rows(tmp_path, monkeypatch):
    assert INPUTS_OF["energy_regressors"] is None and SHORT_NAMES["YE"] == "energy_regressors"
    assert "energy_regressors" in sweep.REQUESTS
    system = arm7()
    Q, V, _ = random_states(system, 5)
    np.testing.assert_array_equal(sweep._request(system, "energy_regressors", Q, V, None), system.energy_regressors(Q, V))
    ran = []
    method = system.energy_regressors
    monkeypatch.setattr(system, "energy_regressors", lambda q, v: ran.append(np.ndim(q)) or method(q, v),
                        raising=False)
    precompile._system_step(lambda: system, np.dtype(np.float64), False)()
    assert ran == [1, 2]  # one state, then a batch
    monkeypatch.undo()
    pytest.importorskip("dask.array")
    pytest.importorskip("zarr")
    group = sweep.sample(system, 4, ["YE"], tmp_path / "store", chunk=2)
    np.testing.assert_allclose(group["energy_regressors"][:], system.energy_regressors(group["q"][:], group["v"][:]),
                               rtol=1e-13)


def test_declarations_with_options_are_checked():
    def extend(system, result, q, v, x, scale):
        return scale * result

    with pytest.raises(SKOError, match="need an extend"):
        Declaration("toy", "t", reference=None, doc="", options=(Option("scale", 1.0),))
    with pytest.raises(SKOError, match="name of an input"):
        Declaration("toy", "t", reference=None, doc="", velocities=True, options=(Option("v", 1.0),), extend=extend)
    with pytest.raises(SKOError, match="distinct names"):
        Declaration("toy", "t", reference=None, doc="", options=(Option("a", 1), Option("a", 2)), extend=extend)
    with pytest.raises(SKOError, match="public Python identifier"):
        Option("not a name", 1)

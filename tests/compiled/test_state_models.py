"""The SKO models a system builds state after state on the compiled path share the first
model's structure (SKOModel.with_blocks) and their compiled form shares the arena's data
buffer: each equals the model SKOModel builds and validates from the same blocks, block by
block and in every recursion, and a later state never changes an earlier model."""

import numpy as np
import pytest

import sko.algorithms as alg
from sko.engine.model import compiled_model
from sko.engine.layout import fill_data, from_sko_model
from sko.graphs import TreeDigraph
from sko.graphs.errors import DimensionError
from sko.model import SKOModel
from tests.compiled.test_engine import SYSTEMS, _state

NAMES = ["rigid:branched_tree", "rigid:humanoid", "bodies:flexible-geared-arm", "random_rigid:1", "random_rigid:7",
         "random_mixed:0", "random_mixed:3"]


def _validated(model: SKOModel) -> SKOModel:
    return SKOModel(model.tree, phi=dict(model.phi), H=dict(model.H), M=dict(model.M))


def _blocks(model: SKOModel) -> list:
    return [np.array(B) for B in (*model.H_by_index, *model.M_by_index, *(W for W in model.weights_by_index if W is not None))]


@pytest.mark.parametrize("complex_step", [False, True])
@pytest.mark.parametrize("name", NAMES)
def test_state_models_equal_validated_models(name, complex_step):
    system = SYSTEMS[name]()
    rng = np.random.default_rng(3)
    models = []
    for _ in range(4):
        q, v, _, tau = _state(system, rng, complex_step)
        model, a, b = system.sko_model(q, v)
        models.append((model, _blocks(model)))
        want = _validated(model)
        assert model.bodies == want.bodies and model.dtype == want.dtype
        assert model.node_slices == want.node_slices and model.dof_slices == want.dof_slices
        assert (model.node_size, model.dof_size) == (want.node_size, want.dof_size)
        for k in model.bodies:
            for got, ref in ((model.H, want.H), (model.M, want.M), (model.phi, want.phi)):
                if k in ref:
                    assert not got[k].flags.writeable
                    np.testing.assert_array_equal(got[k], ref[k])
            assert (k in model.phi) == (k in want.phi)
        if not complex_step:  # the compiled form of a state model is that of the validated model
            cm, flat = compiled_model(model), from_sko_model(want)
            np.testing.assert_array_equal(cm.layout, flat.layout)
            np.testing.assert_array_equal(cm.data(np.float64),
                                          fill_data(flat, want.weights_by_index, want.H_by_index, want.M_by_index))
        np.testing.assert_array_equal(alg.mass_matrix(model), alg.mass_matrix(want))
        np.testing.assert_array_equal(alg.forward_dynamics(model, tau, a, b), alg.forward_dynamics(want, tau, a, b))
        np.testing.assert_array_equal(alg.inverse_dynamics(model, tau, a=a, b=b), alg.inverse_dynamics(want, tau, a=a, b=b))
    for model, blocks in models:  # later states left the earlier models as they were
        for got, want in zip(_blocks(model), blocks):
            np.testing.assert_array_equal(got, want)


def test_state_models_feed_the_cfa():
    system = SYSTEMS["rigid:branched_tree"]()
    rng = np.random.default_rng(8)
    for _ in range(3):
        q, v, _, tau = _state(system, rng, False)
        model, a, b = system.sko_model(q, v)
        want = _validated(model)
        np.testing.assert_array_equal(alg.serialized_constraint_force_algorithm(model, tau, a, b).F_S,
                                      alg.serialized_constraint_force_algorithm(want, tau, a, b).F_S)


def _model():
    tree = TreeDigraph.from_parents({"a": None, "b": "a"})
    return SKOModel(tree, phi={"b": np.ones((2, 3))}, H={"a": [[1.0, 0.0]], "b": [[1.0, 0.0, 0.0]]},
                    M={"a": np.eye(2), "b": np.eye(3)})


def _read_only(x):
    x = np.array(x, dtype=float)
    x.setflags(write=False)
    return x


def test_with_blocks_takes_read_only_blocks_as_they_are():
    model = _model()
    W, H, M = [None, _read_only(2 * np.ones((2, 3)))], [_read_only([[0.0, 1.0]]), _read_only([[0.0, 0.0, 1.0]])], \
        [_read_only(3 * np.eye(2)), _read_only(4 * np.eye(3))]
    new = model.with_blocks(W, H, M)
    assert new.phi["b"] is W[1] and new.H["a"] is H[0] and new.M["b"] is M[1] and "a" not in new.phi
    assert model.phi["b"][0, 0] == 1.0  # the original is unchanged
    np.testing.assert_array_equal(alg.mass_matrix(new), alg.mass_matrix(_validated(new)))
    trusted = model.with_blocks(W, H, M, check=False)  # a builder's own views: no checks
    assert trusted.phi["b"] is W[1] and trusted.M_by_index == new.M_by_index


@pytest.mark.parametrize("case", ["writeable", "shape", "dtype", "base weight", "missing weight", "count"])
def test_with_blocks_rejects_foreign_blocks(case):
    model = _model()
    W, H, M = [None, _read_only(np.ones((2, 3)))], [_read_only([[0.0, 1.0]]), _read_only([[0.0, 0.0, 1.0]])], \
        [_read_only(np.eye(2)), _read_only(np.eye(3))]
    if case == "writeable":
        M[1] = np.eye(3)
    elif case == "shape":
        H[1] = _read_only([[0.0, 1.0]])
    elif case == "dtype":
        M[0] = np.eye(2, dtype=complex)
        M[0].setflags(write=False)
    elif case == "base weight":
        W[0] = _read_only(np.ones((2, 2)))
    elif case == "missing weight":
        W[1] = None
    else:
        H = H[:1]
    with pytest.raises(DimensionError):
        model.with_blocks(W, H, M)

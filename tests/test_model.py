"""SKOModel: dimensions, stacking, dense operators, immutability and every rejection path."""

import numpy as np
import pytest
import sympy
from hypothesis import given

from sko.graphs import TreeDigraph
from sko import (
    DimensionError,
    NonFiniteError,
    NotPositiveDefiniteError,
    RankDeficientError,
    SKOError,
    SKOModel,
    UnknownNodeError,
)

from .strategies import model_data, random_tree, sko_models


@given(sko_models())
def test_dimensions_slices_and_dense_operators(model):
    tree = model.tree
    starts = 0
    for k in tree.bodies:
        s = model.node_slice(k)
        assert s.start == starts and s.stop - s.start == model.node_dim(k) == model.M[k].shape[0]
        starts = s.stop
        assert model.dof_slice(k).stop - model.dof_slice(k).start == model.dof_dim(k) == model.H[k].shape[0]
        assert 1 <= model.dof_dim(k) <= model.node_dim(k)
    assert starts == model.node_size
    ops = model.dense()
    assert ops.E.shape == ops.phi.shape == ops.M.shape == (model.node_size,) * 2
    assert ops.H.shape == (model.dof_size, model.node_size)
    Mm = ops.mass_matrix
    assert np.allclose(Mm, Mm.T, atol=1e-10 * np.abs(Mm).max())
    assert np.linalg.eigvalsh((Mm + Mm.T) / 2).min() > 0
    assert np.allclose(ops.phi_tilde, ops.E @ ops.phi) and np.allclose(ops.phi_tilde, ops.phi @ ops.E)
    x = np.arange(model.node_size, dtype=float)
    assert all(np.array_equal(v, x[model.node_slice(k)]) for k, v in model.node_split(x).items())
    y = np.arange(model.dof_size, dtype=float)
    parts = model.dof_split(y)
    assert list(parts) == list(model.bodies)
    assert all(np.array_equal(v, y[model.dof_slice(k)]) and v.shape == (model.dof_dim(k),) for k, v in parts.items())
    assert np.array_equal(np.concatenate([parts[k] for k in model.bodies]), y)
    with pytest.raises(DimensionError, match=f"expected {model.dof_size}"):
        model.dof_split(np.ones(model.dof_size + 1))


def test_inputs_are_copied_and_the_model_is_read_only():
    tree = random_tree(4, seed=2, shape="fan")
    phi, H, M = model_data(tree, 5)
    saved = [{k: v.copy() for k, v in d.items()} for d in (phi, H, M)]
    model = SKOModel(tree, phi, H, M)
    for d in (phi, H, M):
        for v in d.values():
            v[...] = 7.0
    for d, mine in zip(saved, (model.phi, model.H, model.M)):
        assert all(np.array_equal(d[k], mine[k]) for k in d)
    with pytest.raises(ValueError):
        model.M[tree.bodies[0]][0, 0] = 1.0
    with pytest.raises(TypeError):
        model.M[tree.bodies[0]] = np.eye(1)


def test_symbolic_models_are_accepted():
    a, b, c = sympy.symbols("a b c", positive=True)
    tree = TreeDigraph.from_parents({"p": None, "q": "p"})
    model = SKOModel(tree, phi={"q": np.array([[a, b]], dtype=object)},
                     H={"p": np.array([[1]], dtype=object), "q": np.array([[c, 1]], dtype=object)},
                     M={"p": np.array([[a]], dtype=object), "q": np.array([[a, 0], [0, b]], dtype=object)})
    assert model.dtype == object
    Mm = sympy.Matrix(model.dense().mass_matrix)
    assert sympy.simplify(Mm - Mm.T) == sympy.zeros(2, 2)


def _chain():
    tree = TreeDigraph.from_parents({"a": None, "b": "a"})
    phi = {"b": np.ones((2, 3))}
    H = {"a": np.array([[1.0, 0.0]]), "b": np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])}
    M = {"a": np.eye(2), "b": np.diag([1.0, 2.0, 3.0])}
    return tree, phi, H, M


@pytest.mark.parametrize(
    "change, error, words",
    [
        (lambda p, h, m: m.update(b=np.eye(3)[:2]), DimensionError, ["'b'", "(2, 3)"]),
        (lambda p, h, m: m.update(b=np.array([[1.0, 2.0, 0], [0, 1.0, 0], [0, 0, 1.0]])), NotPositiveDefiniteError, ["'b'", "not symmetric"]),
        (lambda p, h, m: m.update(b=np.diag([1.0, -2.0, 3.0])), NotPositiveDefiniteError, ["'b'", "positive definite", "-2"]),
        (lambda p, h, m: m.update(a=np.ones(2)), DimensionError, ["'a'", "2-D", "(2,)"]),
        (lambda p, h, m: h.update(b=np.array([[1.0, 0, 0], [2.0, 0, 0]])), RankDeficientError, ["'b'", "rank 1", "(2, 3)"]),
        (lambda p, h, m: h.update(a=np.eye(3, 2)), RankDeficientError, ["'a'", "(3, 2)"]),
        (lambda p, h, m: h.update(b=np.ones((1, 2))), DimensionError, ["'b'", "(1, 2)", "3 columns"]),
        (lambda p, h, m: p.update(b=np.ones((3, 3))), DimensionError, ["'b'", "(3, 3)", "(2, 3)"]),
        (lambda p, h, m: p.pop("b"), DimensionError, ["missing", "'b'"]),
        (lambda p, h, m: p.update(a=np.ones((2, 2))), DimensionError, ["base body 'a'"]),
        (lambda p, h, m: p.update(b=np.full((2, 3), np.nan)), NonFiniteError, ["'b'", "NaN"]),
        (lambda p, h, m: m.update(a=np.array([[np.inf, 0], [0, 1.0]])), NonFiniteError, ["'a'", "infinity"]),
        (lambda p, h, m: h.pop("a"), DimensionError, ["H is missing", "'a'"]),
        (lambda p, h, m: m.update(z=np.eye(1)), UnknownNodeError, ["'z'"]),
        (lambda p, h, m: h.update(a=np.array([["x", "y"]])), DimensionError, ["'a'", "dtype"]),
        (lambda p, h, m: p.update(b=[[1.0, 2.0, 3.0], [1.0]]), DimensionError, ["weight phi('a', 'b') of body 'b'", "not an array"]),
        (lambda p, h, m: p.update(b=np.full((2, 3), "x")), DimensionError, ["weight phi('a', 'b') of body 'b'", "dtype"]),
    ],
)
def test_bad_input_is_rejected_naming_node_and_shapes(change, error, words):
    tree, phi, H, M = _chain()
    change(phi, H, M)
    with pytest.raises(error) as info:
        SKOModel(tree, phi, H, M)
    assert isinstance(info.value, SKOError)
    for w in words:
        assert w in str(info.value)


def test_bad_containers_and_vectors():
    tree, phi, H, M = _chain()
    with pytest.raises(SKOError, match="TreeDigraph"):
        SKOModel({"a": None}, phi, H, M)
    with pytest.raises(SKOError, match="mapping"):
        SKOModel(tree, [phi], H, M)
    model = SKOModel(tree, phi, H, M)
    with pytest.raises(DimensionError, match="length 4, expected 5"):
        model.node_vector(np.ones(4), "x")
    with pytest.raises(NonFiniteError):
        model.dof_vector([1.0, np.nan, 0.0])
    with pytest.raises(UnknownNodeError):
        model.node_dim("zz")


def test_unvalidated_models_check_shapes_only():
    tree, phi, H, M = _chain()
    indefinite = {**M, "b": np.diag([1.0, -2.0, 3.0])}
    model = SKOModel(tree, phi, H, indefinite, validate=False)  # trusted: no definiteness check
    assert np.array_equal(model.M["b"], indefinite["b"])
    with pytest.raises(NotPositiveDefiniteError):
        SKOModel(tree, phi, H, indefinite)
    with pytest.raises(DimensionError, match="'b'.*square"):
        SKOModel(tree, phi, H, {**M, "b": np.ones((3, 2))}, validate=False)
    with pytest.raises(DimensionError, match="'b'"):
        SKOModel(tree, {"b": np.ones((3, 3))}, H, M, validate=False)
    with pytest.raises(DimensionError, match="weight phi\\('a', 'b'\\) of body 'b' is not an array"):
        SKOModel(tree, {"b": [[1.0, 2.0, 3.0], [1.0]]}, H, M, validate=False)

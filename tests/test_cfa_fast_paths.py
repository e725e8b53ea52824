"""Shortcuts of the CFA that give the very same numbers.

A force split reuses the factorizations of the last split of the same structure (a model and
its ``with_blocks`` models, which hold it) for the nodes whose H(k) or M(k) are bit for bit the same: the numbers equal those of a split computed
from scratch, state after state (rigid bodies: constant M and H; flexible and rotor bodies:
varying ones), and a changed block (even only the sign of a zero) is factorized again. The
general CFA's CSC matrix built straight from the block buffer has the arrays of
``constraint_matrix(...).tocsc()``. The compiled steps equal the reference ones."""

import numpy as np
import pytest

import sko.algorithms as reference
from sko.engine import algorithms as engine_algorithms
from sko.engine import cfa as flat
from sko.engine.cfa import FlatForceSplit as ForceSplit
from sko.algorithms.cfa.matrix import constraint_matrix, constraint_matrix_csc
from sko.graphs import TreeDigraph
from sko.model import SKOModel
from tests.compiled.test_engine import SYSTEMS, _state


def _fresh(model) -> np.ndarray:
    """The split of an equal model of its own structure: nothing to reuse."""
    alone = SKOModel(model.tree, phi=dict(model.phi), H=dict(model.H), M=dict(model.M), validate=False)
    assert alone._derived is not model._derived
    return ForceSplit(alone).flat.numbers.copy()


@pytest.mark.parametrize("name", ["rigid:humanoid", "bodies:flexible-geared-arm", "random_rigid:2", "random_mixed:1",
                                  "random_mixed:5"])
def test_reused_split_equals_a_fresh_one(name):
    system = SYSTEMS[name]()
    rng = np.random.default_rng(4)
    for _ in range(4):
        q, v, _, _ = _state(system, rng, False)
        model, _, _ = system.sko_model(q, v)
        got = ForceSplit(model).flat.numbers.copy()
        np.testing.assert_array_equal(got, _fresh(model))
        ForceSplit(model)  # the memo of this structure is this model again


def _chain(H1, M1):
    tree = TreeDigraph.from_parents({"a": None, "b": "a"})
    return SKOModel(tree, phi={"b": np.eye(3)}, H={"a": [[1.0, 0.0, 0.0]], "b": H1}, M={"a": np.eye(3), "b": M1})


@pytest.mark.parametrize("change", ["H", "M", "signed zero", "none"])
def test_changed_blocks_are_factorized_again(change):
    H, M = np.array([[0.0, 1.0, 0.0]]), np.diag([1.0, 2.0, 3.0])
    first = _chain(H, M)
    ForceSplit(first)
    if change == "H":
        H = np.array([[0.0, 0.6, 0.8]])
    elif change == "M":
        M = M + 0.5
    elif change == "signed zero":
        H = np.array([[-0.0, 1.0, 0.0]])
    blocks = [[None if X is None else np.array(X) for X in xs] for xs in
              (first.weights_by_index, (first.H_by_index[0], H), (first.M_by_index[0], M))]
    for X in (X for xs in blocks for X in xs if X is not None):
        X.setflags(write=False)
    model = first.with_blocks(*blocks)  # the same structure: the split of first is reused where it may be
    assert model._derived[flat.FlatSplit] is first._derived[flat.FlatSplit]
    got = ForceSplit(model).flat.numbers.copy()
    want = _fresh(model)
    assert np.array_equal(got, want) and np.array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_csc_matrix_is_that_of_the_csr_matrix(name):
    system = SYSTEMS[name]()
    q, v, _, _ = _state(system, np.random.default_rng(6), False)
    model, _, _ = system.sko_model(q, v)
    split = ForceSplit(model)
    want, got = constraint_matrix(model, split).tocsc(), constraint_matrix_csc(split)
    assert got.shape == want.shape and got.format == "csc"
    for x, y in ((got.indptr, want.indptr), (got.indices, want.indices), (got.data, want.data)):
        np.testing.assert_array_equal(x, y)


def test_csc_matrix_without_constraints():
    model = _chain([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], np.eye(3))
    model = SKOModel(model.tree, phi=dict(model.phi), H={k: np.eye(3) for k in model.bodies}, M=dict(model.M))
    assert constraint_matrix_csc(ForceSplit(model)).shape == (0, 0)


@pytest.mark.parametrize("name", ["rigid:humanoid", "bodies:flexible-geared-arm", "random_mixed:5"])
def test_the_compiled_cfa_equals_the_reference(name):
    """The engine's split, block products, ``A`` and cyclic reduction against the numpy ones of
    :mod:`sko.algorithms.cfa` (the reference never sees a flat split)."""
    system = SYSTEMS[name]()
    q, v, _, _ = _state(system, np.random.default_rng(7), False)
    model, a, b = system.sko_model(q, v)
    T = np.random.default_rng(8).normal(size=model.dof_size)
    compiled_split, reference_split = engine_algorithms.force_split(model), reference.force_split(model)
    assert isinstance(compiled_split, ForceSplit) and not hasattr(reference_split, "flat")
    for attribute in ("W_by_index", "H_plus_by_index", "M_inverse_by_index"):
        for got, want in zip(getattr(compiled_split, attribute), getattr(reference_split, attribute)):
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    want = reference.constraint_matrix(model, reference_split).toarray()
    np.testing.assert_allclose(engine_algorithms.constraint_matrix(model).toarray(), want, rtol=1e-10, atol=1e-12)
    for solve in ("constraint_force_algorithm", "serialized_constraint_force_algorithm"):
        got, want = getattr(engine_algorithms, solve)(model, T, a, b), getattr(reference, solve)(model, T, a, b)
        np.testing.assert_allclose(got.qdd, want.qdd, rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(got.F_S, want.F_S, rtol=1e-9, atol=1e-10)

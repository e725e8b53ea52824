"""Shortcuts of the CFA that give the very same numbers.

A force split reuses the factorizations of the last split of the same structure for the
nodes whose H(k) or M(k) are bit for bit the same: the numbers equal those of a split computed
from scratch, state after state (rigid bodies: constant M and H; flexible and rotor bodies:
varying ones), and a changed block (even only the sign of a zero) is factorized again. The
general CFA's CSC matrix built straight from the block buffer has the arrays of
``constraint_matrix(...).tocsc()``."""

import numpy as np
import pytest

from sko.engine import cfa as flat
from sko.algorithms.cfa.matrix import constraint_matrix, constraint_matrix_csc
from sko.algorithms.cfa.split import ForceSplit
from sko.graphs import TreeDigraph
from sko.model import SKOModel
from tests.compiled.test_engine import SYSTEMS, _state


def _fresh(model) -> np.ndarray:
    flat._LAST.clear()
    return ForceSplit(model).flat.numbers.copy()


@pytest.mark.parametrize("name", ["rigid:humanoid", "bodies:flexible-geared-arm", "random_rigid:2", "random_mixed:1",
                                  "random_mixed:5"])
def test_reused_split_equals_a_fresh_one(name):
    system = SYSTEMS[name]()
    rng = np.random.default_rng(4)
    flat._LAST.clear()
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
    flat._LAST.clear()
    ForceSplit(_chain(H, M))
    if change == "H":
        H = np.array([[0.0, 0.6, 0.8]])
    elif change == "M":
        M = M + 0.5
    elif change == "signed zero":
        H = np.array([[-0.0, 1.0, 0.0]])
    model = _chain(H, M)
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

"""The compiled path against the reference path and the dense operators (SKO.md §4–§12), on the
hypothesis models: forests, arbitrary numbering, non-square, varying and singular weights,
zero-dof nodes; float64 and complex128."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sko.engine import algorithms as alg
from sko.engine import get_backend, set_backend, use_backend
from sko import SKOModel
from sko.engine.backend import compiled_dtype
from sko.engine.layout import Flat, from_structure
from sko.graphs import DimensionError, NonFiniteError, NotPositiveDefiniteError, SKOError, TreeDigraph

from ..strategies import random_model, random_tree, sko_models, trees, vectors
from ..util import assert_close

#: generic shapes, welded nodes, and rigid-body shapes (6 × 6 weights, 1-dof hinges), which take the
#: kernels' unrolled paths (the Riccati step of a rigid body, symmetric congruences)
MODELS = st.one_of(sko_models(max_node_dim=6), sko_models(max_node_dim=6, hinge="zero-some"),
                   sko_models(node_dim=6, hinge="one"))


def _flat(result) -> np.ndarray:
    """Any result (array, scalar, dict of blocks, tuple of arrays) as one 1-D array."""
    if hasattr(result, "values"):
        return np.concatenate([np.ravel(v) for v in result.values()] or [np.zeros(0)])
    if isinstance(result, tuple):
        return np.concatenate([np.ravel(v) for v in result])
    return np.ravel(np.asarray(result))


def _calls(model: SKOModel, seed: int) -> dict:
    x, a, b = (vectors(model, seed + i) for i in range(3))
    T, qd = vectors(model, seed + 3, "dof"), vectors(model, seed + 4, "dof")
    return {
        "phi": lambda: alg.phi_apply(model, x),
        "phi*": lambda: alg.phi_star_apply(model, x),
        "phi~": lambda: alg.phi_tilde_apply(model, x),
        "phi~*": lambda: alg.phi_tilde_star_apply(model, x),
        "H": lambda: alg.H_apply(model, x),
        "H*": lambda: alg.H_star_apply(model, T),
        "newton_euler": lambda: tuple(alg.newton_euler(model, T, qd, a, b)),
        "inverse_dynamics": lambda: alg.inverse_dynamics(model, T, qd, a, b),
        "composite": lambda: alg.composite_inertias(model),
        "mass_matrix": lambda: alg.mass_matrix(model),
        "P": lambda: alg.articulated_inertias(model).P,
        "P+": lambda: alg.articulated_inertias(model).P_plus,
        "D": lambda: alg.articulated_inertias(model).D,
        "G": lambda: alg.articulated_inertias(model).G,
        "psi": lambda: alg.articulated_inertias(model).psi,
        "K": lambda: alg.articulated_inertias(model).K,
        "forward_dynamics": lambda: alg.forward_dynamics(model, T, a, b),
        "solve": lambda: alg.mass_matrix_solve(model, T),
        "inverse": lambda: alg.mass_matrix_inverse(model),
        "logdet": lambda: alg.mass_matrix_logdet(model),
        "innovations": lambda: alg.innovations_apply(model, T),
        "innovations*": lambda: alg.innovations_star_apply(model, T),
        "innovations^-1": lambda: alg.innovations_inverse_apply(model, T),
        "innovations^-*": lambda: alg.innovations_inverse_star_apply(model, T),
        "D_apply": lambda: alg.D_apply(model, T),
        "D_inverse_apply": lambda: alg.D_inverse_apply(model, T),
        "compliance": lambda: alg.operational_space_compliance(model, model.bodies[::-2][:3]),
    }


@settings(max_examples=30, deadline=None)
@given(MODELS, st.integers(0, 1000))
def test_compiled_equals_reference(model, seed):
    calls = _calls(model, seed)
    compiled = {name: _flat(f()) for name, f in calls.items()}
    with use_backend("reference"):
        reference = {name: _flat(f()) for name, f in calls.items()}
    cond = np.linalg.cond(model.dense().mass_matrix) if model.dof_size else 1.0
    for name in calls:
        assert compiled[name].dtype == np.float64 or name == "logdet", name
        scale = max(np.abs(reference[name]).max(initial=0.0), 1.0)  # cancellations to 0 (P⁺ of full hinges)
        assert_close(compiled[name], reference[name], 1e-10 * max(cond, 10.0), scale)


@settings(max_examples=20, deadline=None)
@given(MODELS, st.integers(0, 1000))
def test_compiled_equals_dense(model, seed):
    """The kernels compute the dense operator expressions they implement (Eq. 1, 2, 54)."""
    assert compiled_dtype(model.dtype) == np.float64
    d = model.dense()
    x, a, b = (vectors(model, seed + i) for i in range(3))
    T = vectors(model, seed + 3, "dof")
    Mm = d.mass_matrix
    assert_close(alg.phi_apply(model, x), d.phi @ x, 1e-11)
    assert_close(alg.phi_tilde_star_apply(model, x), d.phi_tilde.T @ x, 1e-11)
    assert_close(alg.mass_matrix(model), Mm, 1e-11)
    assert_close(alg.inverse_dynamics(model, T, None, a, b), Mm @ T + d.bias(a, b), 1e-10)
    if model.dof_size:
        scale = np.linalg.cond(Mm)
        assert_close(alg.forward_dynamics(model, T, a, b), np.linalg.solve(Mm, T - d.bias(a, b)), 1e-11 * scale)
        assert_close(alg.mass_matrix_logdet(model), np.linalg.slogdet(Mm)[1], 1e-11 * scale, max(1.0, abs(np.linalg.slogdet(Mm)[1])))


@settings(max_examples=10, deadline=None)
@given(sko_models(max_node_dim=5), st.integers(0, 1000))
def test_complex_step_through_the_kernels(model, seed):
    """``Im θ̈(M + ih dM) / h`` through the complex128 kernels is the derivative
    ``dθ̈ = −ℳ^{-1} dℳ θ̈`` with ``dℳ = H φ dM φ* H*`` (Eq. 2), on the reference path too."""
    k = model.bodies[-1]
    rng = np.random.default_rng(seed)
    A = rng.standard_normal(model.M[k].shape)
    dM = A + A.T
    T = vectors(model, seed, "dof")
    h = 1e-30
    stepped_model = SKOModel(model.tree, dict(model.phi), dict(model.H), {**model.M, k: model.M[k] + 1j * h * dM})
    stepped = alg.forward_dynamics(stepped_model, T)
    assert stepped.dtype == np.complex128
    d = model.dense()
    dM_full = np.zeros_like(d.M)
    s = model.node_slice(k)
    dM_full[s, s] = dM
    Mm = d.mass_matrix
    derivative = -np.linalg.solve(Mm, d.H @ d.phi @ dM_full @ d.phi.T @ d.H.T @ np.linalg.solve(Mm, T))
    assert_close(stepped.imag / h, derivative, 1e-12 * np.linalg.cond(Mm) ** 2)
    assert_close(stepped.real, alg.forward_dynamics(model, T), 1e-14 * np.linalg.cond(Mm))
    with use_backend("reference"):
        assert_close(stepped, alg.forward_dynamics(stepped_model, T), 1e-13 * np.linalg.cond(Mm))


def test_forests_and_shapes_run_the_same_code():
    """Chains, wide fans and forests of mixed dimensions: compiled and reference agree."""
    for shape in ("chain", "star", "forest", "random"):
        model = random_model(random_tree(40, 7, shape), 3, hinge="zero-some")
        for name, f in _calls(model, 1).items():
            compiled = _flat(f())
            with use_backend("reference"):
                reference = _flat(f())
            assert_close(compiled, reference, 1e-9, max(np.abs(reference).max(initial=0.0), 1.0))


@settings(max_examples=60, deadline=None)
@given(trees(max_bodies=14), st.data())
def test_preorder_columns_make_every_subtree_one_range(tree, data):
    """The flat layout's preorder (PRE, SUBN, PREORDER) lists each subtree as one run of
    positions, and its columns (COL, SUB) number the hinge coordinates so that each subtree's
    are one range: what the block form of the mass matrix carries to the parent."""
    n = len(tree.bodies)
    hinges = data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    layout = from_structure(tree.parent_indices, [6] * n, hinges, tree.scatter_indices).layout
    parent = layout[:, Flat.PARENT]

    def subtree(k):
        return {j for j in range(n) if _is_in(parent, j, k)}

    assert sorted(layout[:, Flat.PREORDER]) == list(range(n))
    col, dim = layout[:, Flat.COL], layout[:, Flat.HINGE_DIM]
    assert sorted(c for j in range(n) for c in range(col[j], col[j] + dim[j])) == list(range(sum(hinges)))
    for k in range(n):
        first = layout[k, Flat.PRE]
        assert layout[first, Flat.PREORDER] == k
        assert set(layout[first: first + layout[k, Flat.SUBN], Flat.PREORDER]) == subtree(k)
        columns = {c for j in subtree(k) for c in range(col[j], col[j] + dim[j])}
        assert columns == set(range(layout[k, Flat.COL], layout[k, Flat.COL] + layout[k, Flat.SUB]))


@settings(max_examples=60, deadline=None)
@given(trees(max_bodies=14), st.data())
def test_runs_cut_the_ancestors_columns_into_ranges(tree, data):
    """RUN: the path from RUN(k) down to k numbers its hinge coordinates as one range that ends
    with k's, and RUN(k) is the highest ancestor with such a path; walked by runs (as
    :func:`~sko.engine.mass_matrix.rigid_mass_matrix` walks them), the ranges give each column
    of k's ancestors once, and nothing else, whatever the numbering of the bodies."""
    n = len(tree.bodies)
    hinges = data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    layout = from_structure(tree.parent_indices, [6] * n, hinges, tree.scatter_indices).layout
    parent, dof, dim, run = (layout[:, c] for c in (Flat.PARENT, Flat.DOF, Flat.HINGE_DIM, Flat.RUN))
    for k in range(n):
        path, j = [k], k
        while j != run[k]:  # RUN(k) is an ancestor of k (or k): the walk up reaches it
            j = parent[j]
            assert j >= 0
            path.append(j)
        assert sorted(c for j in path for c in range(dof[j], dof[j] + dim[j])) == list(range(dof[run[k]], dof[k] + dim[k]))
        assert parent[run[k]] < 0 or dof[run[k]] != dof[parent[run[k]]] + dim[parent[run[k]]]  # the highest
        walked, a = list(range(dof[run[k]], dof[k])), parent[run[k]]
        while a >= 0:
            walked += range(dof[run[a]], dof[a] + dim[a])
            a = parent[run[a]]
        ancestors = [c for j in range(n) if j != k and _is_in(parent, k, j) for c in range(dof[j], dof[j] + dim[j])]
        assert sorted(walked) == sorted(ancestors)


def _is_in(parent, j, k) -> bool:
    """Whether flat node ``j`` is in the subtree of ``k``."""
    while j >= 0 and j != k:
        j = parent[j]
    return j == k


def test_mass_matrix_columns_walk_through_nodes_of_every_size():
    """The columns of a subtree are carried to the parent through 6 × 6 weights in registers
    (kernels._carry66) and by the generic product past a node of another size, zero-dof and
    6-dof nodes included; ℳ equals the dense ℳ and the reference path's."""
    tree = random_tree(10, 3, "chain")
    depth = {}
    for k in tree.bodies:
        p, d = tree.parent(k), 0
        while p is not None:
            p, d = tree.parent(p), d + 1
        depth[k] = d
    dims = [6, 6, 4, 6, 6, 6, 9, 6, 6, 6]
    hinges = [1, 1, 2, 1, 0, 1, 1, 1, 6, 1]
    rng = np.random.default_rng(0)
    phi, H, M = {}, {}, {}
    for k in tree.bodies:
        m = dims[depth[k]]
        H[k] = rng.standard_normal((hinges[depth[k]], m))
        A = rng.standard_normal((m, m))
        M[k] = A @ A.T + m * np.eye(m)
        if tree.parent(k) is not None:
            phi[k] = rng.standard_normal((dims[depth[k] - 1], m)) / np.sqrt(m)
    model = SKOModel(tree, phi=phi, H=H, M=M)
    got = alg.mass_matrix(model)
    assert_close(got, model.dense().mass_matrix, 1e-12)
    with use_backend("reference"):
        assert_close(got, alg.mass_matrix(model), 1e-12)


def _error(f):
    with pytest.raises(SKOError) as info:
        f()
    return type(info.value), str(info.value)


@pytest.mark.parametrize("rigid", [True, False])
def test_a_non_finite_entry_below_the_diagonal_of_M_reaches_the_result(rigid):
    """The 6 × 6 congruences read M's upper triangle; an infinity below the diagonal of an
    unvalidated M of a zero-dof tip (whose ℛ reaches ℳ only through the congruence) still makes
    ℳ non-finite, as on the reference path (rigid: the weight's lower-left block is zero, the
    congruence's short path)."""
    tree = TreeDigraph.from_parents({"base": None, "mid": "base", "tip": "mid"})
    rng = np.random.default_rng(3)
    phi = {k: rng.standard_normal((6, 6)) for k in ("mid", "tip")}
    if rigid:
        for W in phi.values():
            W[3:, :3] = 0
    M = {k: np.eye(6) for k in tree.bodies}
    M["tip"][5, 0] = np.inf
    H = {"base": rng.standard_normal((1, 6)), "mid": rng.standard_normal((1, 6)), "tip": np.zeros((0, 6))}
    model = SKOModel(tree, phi=phi, H=H, M=M, validate=False)
    with np.errstate(invalid="ignore", over="ignore"):
        compiled = _error(lambda: alg.mass_matrix(model))[0]
        with use_backend("reference"):
            reference = _error(lambda: alg.mass_matrix(model))[0]
    assert compiled is reference is NonFiniteError


@pytest.mark.parametrize("entry", [(5, 0), (0, 5), (4, 4)])
def test_a_non_finite_inertia_entry_of_a_rigid_step_is_reported(entry):
    """A non-finite entry anywhere in ``P`` of a rigid body on a 1-dof hinge, even where ``H`` is
    zero, makes ``D`` non-finite: the Riccati step in registers raises the reference path's error."""
    _assert_same_error(_rigid_chain({entry: np.inf}, np.eye(6)[None, 2], 1.0))


def test_an_overflow_below_the_diagonal_of_P_plus_reaches_the_parent():
    """``P⁺ = P − G H P`` is not exactly symmetric: with a finite ``D``, an entry that overflows
    below its diagonal (here ``P⁺(1, 0)``, the upper ``P⁺(0, 1)`` finite) still makes the parent's
    ``P`` non-finite, as on the reference path, though the congruence reads the upper triangle."""
    big = np.finfo(float).max
    _assert_same_error(_rigid_chain({(0, 0): 1e280, (0, 1): 1e293, (1, 0): -big}, np.eye(6)[None, 0], 1e-155))


def _rigid_chain(tip: dict, H: np.ndarray, scale: float) -> SKOModel:
    """An unvalidated chain of three rigid steps (6 × 6 weights of size ``scale``, 1-dof hinges
    ``H``), ``M = I`` but for the ``tip`` entries of the last body's ``M``."""
    tree = TreeDigraph.from_parents({"base": None, "mid": "base", "tip": "mid"})
    rng = np.random.default_rng(5)
    phi = {k: scale * rng.standard_normal((6, 6)) for k in ("mid", "tip")}
    M = {k: np.eye(6) for k in tree.bodies}
    for entry, value in tip.items():
        M["tip"][entry] = value
    return SKOModel(tree, phi=phi, H={k: H.copy() for k in tree.bodies}, M=M, validate=False)


def _assert_same_error(model: SKOModel) -> None:
    T = np.ones(model.dof_size)
    for f in (lambda: alg.forward_dynamics(model, T), lambda: alg.mass_matrix_logdet(model)):
        with np.errstate(invalid="ignore", over="ignore"):
            compiled = _error(f)
            with use_backend("reference"):
                reference = _error(f)
        assert compiled[0] is reference[0]


def test_errors_are_the_same_on_both_paths():
    tree = TreeDigraph.from_parents({"base": None, "tip": "base"})
    model = SKOModel(tree, phi={"tip": np.eye(2)}, H={"base": [[1.0, 0.0]], "tip": [[0.0, 1.0]]},
                     M={"base": np.eye(2), "tip": np.eye(2)})
    broken = copy.copy(model)  # a D(k) that is not positive definite (no valid model holds one)
    broken.M_by_index = (model.M_by_index[0], -np.eye(2))
    cases = [
        lambda: alg.articulated_inertias(broken),
        lambda: alg.forward_dynamics(broken, np.ones(2)),
        lambda: alg.forward_dynamics(model, np.ones(3)),
        lambda: alg.phi_apply(model, np.ones(3)),
        lambda: alg.inverse_dynamics(model, np.ones(2), None, np.ones(3)),
        lambda: alg.mass_matrix_solve(model, np.ones((3, 2))),
        lambda: alg.forward_dynamics(model, [np.nan, 1.0]),
    ]
    for f in cases:
        compiled = _error(f)
        with use_backend("reference"):
            assert _error(f) == compiled
    assert _error(cases[0])[0] is NotPositiveDefiniteError
    assert _error(cases[2])[0] is DimensionError


def test_object_arrays_take_the_reference_path():
    sympy = pytest.importorskip("sympy")
    t = sympy.Symbol("t", positive=True)
    tree = TreeDigraph.from_parents({0: None, 1: 0})
    model = SKOModel(tree, phi={1: [[t]]}, H={0: [[1]], 1: [[1]]}, M={0: [[2]], 1: [[t]]})
    assert compiled_dtype(model.dtype) is None
    assert sympy.simplify(alg.mass_matrix(model)[0, 0] - (2 + t**3)) == 0


def test_backend_switch():
    assert get_backend() == "compiled"
    with use_backend("reference"):
        assert get_backend() == "reference"
        assert compiled_dtype(random_model(random_tree(3, 1), 1).dtype) is None
    assert get_backend() == "compiled"
    with pytest.raises(SKOError, match="unknown backend"):
        set_backend("fast")


@pytest.mark.parametrize("backend", ["compiled", "reference"])
def test_verify_runs_on_either_backend(backend, capsys):
    from sko.cli import main

    assert main(["verify", "--backend", backend, "--model", "chain", "--check", "riccati_equation"]) == 0
    assert "1 passed, 0 failed" in capsys.readouterr().out
    assert get_backend() == "compiled"

"""Sparse LTDL / LTL factorization, products and solves on the branch-induced pattern (SPARSE.md).

Mass matrices ``ℳ = H φ M φ* H*`` of random SKO models (forests, varying hinge dimensions) on
regularly renumbered trees, and random patterns built as ``Lᵀ D L`` from a random unit ``L``:
the factors rebuild ``ℳ``, are unique (so they match the ``L`` and ``D`` used to build ``ℳ``),
LTL matches numpy's Cholesky of the reversed matrix, nothing above the diagonal or at a
branch-induced zero is read and no fill-in occurs, products and solves match dense algebra,
``D1``/``D2`` and the operation counts match instrumented runs, and the compressed factorization
reproduces MuJoCo's own ``qLD``.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy
from hypothesis import given
from hypothesis import strategies as st

import sko.algorithms as alg
from sko.graphs import DimensionError, NonFiniteError, NotATreeError, NotPositiveDefiniteError
from sko.graphs import dof_parent_array, regular_renumbering
from tests.strategies import random_model, trees
from tests.util import assert_close

# ----------------------------------------------------------------------------- data


def _chain(par, k):
    """0-based strict ancestors of 0-based dof ``k`` for a 1-based parent array."""
    found = []
    while par[k]:
        k = par[k] - 1
        found.append(k)
    return found


def _random_parents(n: int, rng: np.random.Generator, shape: str) -> tuple[int, ...]:
    if shape == "dense":
        return tuple(range(n))
    if shape == "flat":
        return (0,) * n
    return tuple(int(rng.integers(max(0, k - 4), k)) if rng.random() > 0.15 else 0 for k in range(1, n + 1))


def _pattern_factor(parents, rng, unit: bool) -> np.ndarray:
    """A random lower-triangular ``L`` with the branch-induced pattern."""
    n = len(parents)
    L = np.zeros((n, n))
    for k in range(n):
        L[k, k] = 1.0 if unit else rng.uniform(0.5, 2.0)
        for j in _chain(parents, k):
            L[k, j] = rng.standard_normal()
    return L


@st.composite
def patterns(draw, max_dofs: int = 14):
    """``(λ', L, D, ℳ = Lᵀ D L)`` on a random branch-induced pattern."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = draw(st.integers(1, max_dofs))
    parents = _random_parents(n, rng, draw(st.sampled_from(("random", "random", "dense", "flat"))))
    L = _pattern_factor(parents, rng, unit=True)
    D = rng.uniform(0.2, 3.0, n)
    return parents, L, D, L.T @ np.diag(D) @ L


@st.composite
def model_mass_matrices(draw):
    """``(λ', ℳ)`` of a random SKO model on a regularly renumbered random tree."""
    tree = regular_renumbering(draw(trees(max_bodies=8)))
    model = random_model(tree, draw(st.integers(0, 2**32 - 1)), max_node_dim=4)
    return dof_parent_array(tree, model.dof_dims()), model.dense().mass_matrix


# ----------------------------------------------------------------------------- factorizations


@given(model_mass_matrices())
def test_ltdl_and_ltl_rebuild_the_mass_matrix(data):
    parents, M = data
    LD = alg.ltdl(M, parents)
    L, D = alg.lower_factor(LD, parents, unit=True), np.diag(LD)
    assert_close(L.T @ np.diag(D) @ L, M, rtol=1e-9)
    assert (D > 0).all()
    R = alg.lower_factor(alg.ltl(M, parents), parents)
    assert_close(R.T @ R, M, rtol=1e-9)
    assert_close(R, np.diag(np.sqrt(D)) @ L, rtol=1e-9)  # LTL = √D · (LTDL's L)


@given(patterns())
def test_ltdl_recovers_the_factors(data):
    """``Lᵀ D L`` with unit ``L`` is unique, so the factorization returns the ``L, D`` that built ℳ."""
    parents, L, D, M = data
    LD = alg.ltdl(M, parents)
    assert_close(alg.lower_factor(LD, parents, unit=True), L, rtol=1e-8, scale=max(1.0, np.abs(L).max()) * np.linalg.cond(M))
    assert_close(np.diag(LD), D, rtol=1e-8, scale=np.abs(D).max() * np.linalg.cond(M))


@given(patterns())
def test_ltl_matches_cholesky_of_the_reversed_matrix(data):
    """``ℳ = Lᵀ L`` ⇔ ``P ℳ P = C Cᵀ`` with ``C = P Lᵀ P`` lower (P reverses the order)."""
    parents, _, _, M = data
    L = alg.lower_factor(alg.ltl(M, parents), parents)
    C = np.linalg.cholesky(M[::-1, ::-1])
    assert_close(L, C.T[::-1, ::-1], rtol=1e-8, scale=np.linalg.cond(M) * np.abs(L).max())


@given(patterns())
def test_nothing_off_the_pattern_is_read_or_written(data):
    """NaN above the diagonal and at every branch-induced zero: the factorizations still
    succeed, and those entries come back untouched (no fill-in)."""
    parents, _, _, M = data
    n = len(parents)
    poisoned = np.tril(M)
    off = np.ones((n, n), dtype=bool)
    for k in range(n):
        off[k, k] = False
        off[k, _chain(parents, k)] = False
    poisoned[off] = np.nan
    for factor, unit in ((alg.ltdl, True), (alg.ltl, False)):
        A = factor(poisoned, parents)
        assert np.isnan(A[off]).all()
        L = alg.lower_factor(A, parents, unit=unit)
        rebuilt = L.T @ np.diag(np.diag(A)) @ L if unit else L.T @ L
        assert_close(rebuilt, M, rtol=1e-8, scale=np.abs(M).max() * np.linalg.cond(M))


@given(patterns())
def test_dense_factorization_has_no_fill_in(data):
    """Treating ℳ as dense (λ'(k) = k − 1) gives zeros at every branch-induced zero: the
    factorization of a branch-sparse matrix has no fill-in (RBDA §6.4)."""
    parents, _, _, M = data
    n = len(parents)
    dense = alg.ltdl(M, tuple(range(n)))
    sparse = alg.ltdl(M, parents)
    for k in range(n):
        chain = set(_chain(parents, k))
        for j in range(k):
            if j in chain:
                assert_close(dense[k, j], sparse[k, j], rtol=1e-8, scale=np.linalg.cond(M) * max(1.0, abs(sparse[k, j])))
            else:
                assert dense[k, j] == 0.0


def test_in_place_factorization_returns_its_argument():
    M = np.array([[4.0, 9.0], [2.0, 3.0]])  # 9.0 above the diagonal is ignored
    A = M.copy()
    assert alg.ltdl_in_place(A, (0, 1)) is A
    assert A[0, 1] == 9.0 and A[1, 0] == pytest.approx(2 / 3) and A[0, 0] == pytest.approx(4 - 4 / 3)
    B = M.copy()
    assert alg.ltl_in_place(B, (0, 1)) is B and B[1, 1] == pytest.approx(np.sqrt(3))
    assert M[1, 0] == 2.0  # the copying versions never mutate their input
    alg.ltdl(M, (0, 1))
    assert M[1, 0] == 2.0


def test_not_positive_definite_names_the_dof():
    with pytest.raises(NotPositiveDefiniteError, match=r"pivot of dof 1 \(row 0\) is -3"):
        alg.ltdl([[1.0, 0.0], [2.0, 1.0]], (0, 1))
    with pytest.raises(NotPositiveDefiniteError, match="pivot of dof 2"):
        alg.ltl([[1.0, 0.0], [0.0, 0.0]], (0, 1))
    layout = alg.compressed_layout((0, 1))
    with pytest.raises(NotPositiveDefiniteError, match="pivot of dof 1"):
        alg.compressed_ltdl(alg.compress_lower([[1.0, 0.0], [2.0, 1.0]], layout), layout)


def test_bad_input():
    with pytest.raises(DimensionError, match="square"):
        alg.ltdl(np.ones((2, 3)), (0, 1))
    with pytest.raises(DimensionError, match="2 entries for a 3 × 3 matrix"):
        alg.ltdl(np.eye(3), (0, 1))
    with pytest.raises(NotATreeError, match=r"λ'\(2\) = 2"):
        alg.ltdl(np.eye(2), (0, 2))
    with pytest.raises(NonFiniteError, match=r"\(2, 1\)"):
        alg.ltdl([[1.0, 0.0], [np.nan, 1.0]], (0, 1))
    with pytest.raises(DimensionError, match=r"shape \(2,\) or \(2, m\)"):
        alg.L_apply(np.eye(2), (0, 1), np.ones(3))
    with pytest.raises(DimensionError, match="dtype"):
        alg.ltdl(np.array([["a", "b"], ["c", "d"]]), (0, 1))
    with pytest.raises(DimensionError, match="writable float"):
        alg.ltdl_in_place(np.eye(2, dtype=int), (0, 1))
    with pytest.raises(DimensionError, match="square numpy array"):
        alg.ltl_in_place([[1.0]], (0,))


def test_vectors_factors_and_compressed_matrices_are_checked():
    """Strings, wrong dimensions and NaN reach the project's errors, not numpy's (and NaN is not
    reported as a failed pivot)."""
    with pytest.raises(DimensionError, match="x has dtype"):
        alg.L_apply(np.eye(2), (0, 1), ["a", "b"])
    with pytest.raises(NonFiniteError, match="x"):
        alg.L_apply(np.eye(2), (0, 1), [1.0, np.nan])
    with pytest.raises(DimensionError, match="x is not an array"):
        alg.L_apply(np.eye(2), (0, 1), [[1.0], [1.0, 2.0]])
    with pytest.raises(DimensionError, match=r"square matrix, got shape \(3,\)"):
        alg.lower_factor(np.ones(3), (0, 1, 1))
    with pytest.raises(DimensionError, match="LD is not an array"):
        alg.ltdl_solve([[1.0], [1.0, 2.0]], (0, 1), [1.0, 1.0])
    layout = alg.compressed_layout((0, 1, 1))
    qM = alg.compress_lower(np.eye(3) * 2.0, layout)
    with pytest.raises(DimensionError, match="qM has dtype"):
        alg.compressed_ltdl(np.array(["a"] * layout.nM), layout)
    with pytest.raises(NonFiniteError, match="qM"):
        alg.compressed_ltdl(np.where(np.arange(layout.nM) == 0, np.nan, qM), layout)
    with pytest.raises(DimensionError, match="q has dtype"):
        alg.decompress_lower(np.array(["a"] * layout.nM), layout)
    assert np.array_equal(qM, alg.compress_lower(np.eye(3) * 2.0, layout))  # inputs untouched


# ----------------------------------------------------------------------------- products and solves


@given(patterns(), st.integers(0, 2**32 - 1), st.booleans())
def test_products_and_solves_match_dense_algebra(data, seed, matrix_rhs):
    parents, _, _, M = data
    n = len(parents)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 3) if matrix_rhs else n)
    L = alg.lower_factor(_pattern_factor(parents, rng, unit=False), parents)
    poisoned = L + np.triu(np.full((n, n), np.nan), 1)  # nothing above the diagonal is read
    for unit in (False, True):
        dense = L - np.diag(np.diag(L)) + np.eye(n) if unit else L
        assert_close(alg.L_apply(poisoned, parents, x, unit=unit), dense @ x)
        assert_close(alg.L_transpose_apply(poisoned, parents, x, unit=unit), dense.T @ x)
        assert_close(alg.L_inverse_apply(poisoned, parents, x, unit=unit), np.linalg.solve(dense, x), rtol=1e-8)
        assert_close(alg.L_inverse_transpose_apply(poisoned, parents, x, unit=unit), np.linalg.solve(dense.T, x), rtol=1e-8)
    assert_close(alg.sparse_mass_matrix_apply(np.tril(M) + np.triu(np.full((n, n), np.nan), 1), parents, x), M @ x)
    exact = np.linalg.solve(M, x)
    scale = np.abs(exact).max() * np.linalg.cond(M)
    assert_close(alg.ltdl_solve(alg.ltdl(M, parents), parents, x), exact, rtol=1e-10, scale=scale)
    assert_close(alg.ltl_solve(alg.ltl(M, parents), parents, x), exact, rtol=1e-10, scale=scale)
    x_before = x.copy()
    alg.L_inverse_apply(L, parents, x)
    assert np.array_equal(x, x_before)  # inputs are never mutated


@given(model_mass_matrices(), st.integers(0, 2**32 - 1))
def test_solve_on_model_mass_matrices(data, seed):
    parents, M = data
    b = np.random.default_rng(seed).standard_normal(len(parents))
    x = alg.ltdl_solve(alg.ltdl(M, parents), parents, b)
    assert_close(M @ x, b, rtol=1e-9, scale=np.abs(M).max() * np.abs(x).max())


def test_complex_step_and_symbolic_entries():
    """Complex (complex-step) and sympy entries flow through: complex symmetric ``ℳ`` is
    rebuilt with plain transposes, and a symbolic LTDL simplifies back to ℳ."""
    rng = np.random.default_rng(3)
    parents = (0, 1, 1, 3)
    L = _pattern_factor(parents, rng, unit=True)
    M = L.T @ np.diag([1.0, 2.0, 3.0, 4.0]) @ L
    E = np.tril(rng.standard_normal((4, 4)))
    for k in range(4):  # perturb along the pattern only, keeping ℳ + iεE branch-sparse
        E[k, [j for j in range(k) if j not in _chain(parents, k)]] = 0
    Mc = M + 1e-20j * (E + np.tril(E, -1).T)
    LD = alg.ltdl(Mc, parents)
    assert LD.dtype == complex
    Lc = alg.lower_factor(LD, parents, unit=True)
    assert_close(Lc.T @ np.diag(np.diag(LD)) @ Lc, Mc)
    assert_close(alg.ltdl_solve(LD, parents, np.ones(4)).real, np.linalg.solve(M, np.ones(4)))

    a, b, c, d, e = sympy.symbols("a b c d e", positive=True)
    S = np.array([[a, 0, 0], [b, c, 0], [d, 0, e]], dtype=object)  # dofs 2 and 3 hang from dof 1
    for factor, unit in ((alg.ltdl, True), (alg.ltl, False)):
        F = factor(S, (0, 1, 1))
        assert F[2, 1] == 0
        Ls = sympy.Matrix(alg.lower_factor(F, (0, 1, 1), unit=unit))
        inner = sympy.diag(*np.diag(F)) if unit else sympy.eye(3)
        full = sympy.Matrix(S) + sympy.Matrix(np.tril(S, -1)).T
        assert sympy.simplify(Ls.T * inner * Ls - full) == sympy.zeros(3, 3)
    x = alg.ltdl_solve(alg.ltdl(S, (0, 1, 1)), (0, 1, 1), np.array([1, 0, 0], dtype=object))
    assert sympy.simplify(sympy.Matrix(full) * sympy.Matrix(x) - sympy.Matrix([1, 0, 0])) == sympy.zeros(3, 1)


# ----------------------------------------------------------------------------- counts


@given(st.integers(1, 40), st.integers(0, 2**32 - 1), st.sampled_from(("random", "dense", "flat")))
def test_D1_D2_formulas_and_bounds(n, seed, shape):
    parents = _random_parents(n, np.random.default_rng(seed), shape)
    c = alg.sparsity_counts(parents)
    depths = [len(_chain(parents, k)) + 1 for k in range(n)]
    assert c.depths == tuple(depths) and c.depth == max(depths)
    assert c.D1 == sum(d - 1 for d in depths) == sum(len(_chain(parents, k)) for k in range(n))
    assert c.D2 == sum(d * (d - 1) // 2 for d in depths)
    assert c.nonzeros == n + 2 * c.D1 and c.density == pytest.approx(c.nonzeros / n**2)
    assert c.D1 <= n * (c.depth - 1) and c.D2 <= n * c.depth * (c.depth - 1) // 2
    assert c.D1 <= (n * n - n) // 2 and c.D2 <= (n**3 - n) // 6
    if shape == "dense":  # no branch-induced sparsity: the dense-case values
        assert (c.D1, c.D2) == ((n * n - n) // 2, (n**3 - n) // 6)
    if shape == "flat":
        assert (c.D1, c.D2, c.nonzeros) == (0, 0, n)


@given(trees(max_bodies=8), st.integers(0, 2**32 - 1))
def test_mass_matrix_has_n_plus_2_D1_nonzeros(tree, seed):
    """A generic model (no singular weights) fills its whole pattern: ``n + 2 D1`` non-zeros."""
    tree = regular_renumbering(tree)
    model = random_model(tree, seed, max_node_dim=4, singular=False)
    parents, M = dof_parent_array(tree, model.dof_dims()), model.dense().mass_matrix
    c = alg.sparsity_counts(parents)
    assert np.count_nonzero(M) == c.nonzeros
    assert np.count_nonzero(np.abs(M) > 1e-12 * np.abs(M).max()) == c.nonzeros
    assert alg.compressed_layout(parents).nM == c.n + c.D1


class Counted:
    """A scalar that counts the arithmetic done on it (multiplications, additions, divisions,
    square roots), so generic code run on an object array reports its operation count."""

    ops = {"m": 0, "a": 0, "d": 0, "sqrt": 0}

    def __init__(self, value):
        self.value = float(value)

    @classmethod
    def reset(cls):
        cls.ops = {"m": 0, "a": 0, "d": 0, "sqrt": 0}

    @staticmethod
    def _v(other):
        return other.value if isinstance(other, Counted) else float(other)

    def _op(self, kind, value):
        Counted.ops[kind] += 1
        return Counted(value)

    def __mul__(self, o):
        return self._op("m", self.value * self._v(o))

    __rmul__ = __mul__

    def __add__(self, o):
        return self._op("a", self.value + self._v(o))

    __radd__ = __add__

    def __sub__(self, o):
        return self._op("a", self.value - self._v(o))

    def __rsub__(self, o):
        return self._op("a", self._v(o) - self.value)

    def __truediv__(self, o):
        return self._op("d", self.value / self._v(o))

    def __rtruediv__(self, o):
        return self._op("d", self._v(o) / self.value)

    def __complex__(self):
        return complex(self.value)


def _counted_sqrt(monkeypatch):
    import sko.algorithms.sparse_ltdl as module

    def sqrt(v):
        Counted.ops["sqrt"] += 1
        return Counted(np.sqrt(v.value))

    monkeypatch.setattr(module, "_sqrt", sqrt)


@pytest.mark.parametrize("shape", ["random", "dense", "flat"])
def test_operation_counts_match_instrumented_runs(shape, monkeypatch):
    _counted_sqrt(monkeypatch)
    rng = np.random.default_rng(7)
    parents = _random_parents(12, rng, shape)
    L = _pattern_factor(parents, rng, unit=True)
    M = L.T @ np.diag(rng.uniform(1, 2, 12)) @ L
    counted = np.vectorize(Counted, otypes=[object])
    expected = alg.operation_counts(parents)
    x = counted(rng.standard_normal(12))
    runs = {
        "ltdl": lambda: alg.ltdl(counted(M), parents),
        "ltl": lambda: alg.ltl(counted(M), parents),
        "sparse_mass_matrix_apply": lambda: alg.sparse_mass_matrix_apply(counted(M), parents, x),
    }
    for name in ("L_apply", "L_transpose_apply", "L_inverse_apply", "L_inverse_transpose_apply"):
        function = getattr(alg, name)
        runs[name] = lambda f=function: f(counted(M), parents, x)
        runs[name + "_unit"] = lambda f=function: f(counted(M), parents, x, unit=True)
    for name, run in runs.items():
        Counted.reset()
        run()
        assert Counted.ops == expected[name], name


# ----------------------------------------------------------------------------- compressed storage


@given(patterns())
def test_compressed_ltdl_matches_the_dense_one(data):
    parents, _, _, M = data
    layout = alg.compressed_layout(parents)
    qM = alg.compress_lower(M, layout)
    assert np.array_equal(alg.decompress_lower(qM, layout), _lower_pattern(M, parents))
    result = alg.compressed_ltdl(qM, layout)
    LD = alg.ltdl(M, parents)
    assert_close(alg.decompress_lower(result.qLD, layout), _lower_pattern(LD, parents), rtol=1e-12)
    D = np.diag(LD)
    assert_close(result.qLDiagInv, 1 / D, rtol=1e-10)
    assert_close(result.qLDiagSqrtInv, 1 / np.sqrt(D), rtol=1e-10)
    assert np.array_equal(qM, alg.compress_lower(M, layout))  # qM not mutated


def _lower_pattern(A, parents):
    n = len(parents)
    out = np.zeros((n, n))
    for k in range(n):
        for j in [k] + _chain(parents, k):
            out[k, j] = A[k, j]
    return out


MJCF = """
<mujoco>
  <worldbody>
    <body name="torso" pos="0 0 1">
      <joint name="yaw" type="hinge" axis="0 0 1"/>
      <geom type="box" size=".2 .1 .05" mass="4" pos=".05 .02 0"/>
      <body name="arm" pos=".3 0 0">
        <joint name="shoulder" type="ball"/>
        <geom type="capsule" fromto="0 0 0 .3 0 0" size=".04" mass="1.5"/>
        <body name="forearm" pos=".3 0 0">
          <joint name="elbow" type="hinge" axis="0 1 0"/>
          <geom type="box" size=".1 .03 .02" mass=".7" pos=".1 .01 0"/>
        </body>
      </body>
      <body name="leg" pos="0 .3 0">
        <joint name="slider" type="slide" axis="1 0 0"/>
        <joint name="knee" type="hinge" axis="1 0 0"/>
        <geom type="box" size=".05 .05 .2" mass="2" pos="0 0 -.2"/>
      </body>
    </body>
    <body name="drone" pos="1 0 1">
      <freejoint/>
      <geom type="box" size=".1 .2 .3" mass="1" pos=".1 .05 .02"/>
    </body>
  </worldbody>
</mujoco>
"""


def test_reproduces_mujoco_qLD():
    """The compressed LTDL of MuJoCo's own mass matrix reproduces ``data.qLD``.

    MuJoCo's ``dof_Madr`` is the layout of SPARSE.md (diagonal first, then the ancestors nearest
    first), and it is compared as such. Since MuJoCo 3.3 ``data.qLD`` (like ``data.M``) is stored
    in CSR form instead (``M_rowadr``, ``M_rownnz``, ``M_colind``: each row's columns ascending,
    the diagonal last) and ``qLDiagSqrtInv`` is gone, so the entries are compared through that
    index map, ``1/√D`` against MuJoCo's ``D``, and ``ℳ = Lᵀ D L`` is rebuilt from both.
    """
    mujoco = pytest.importorskip("mujoco")
    model = mujoco.MjModel.from_xml_string(MJCF)
    data = mujoco.MjData(model)
    data.qpos[:] += 0.4 * np.random.default_rng(1).standard_normal(model.nq)
    mujoco.mj_forward(model, data)
    n = model.nv
    full = np.zeros((n, n))
    mujoco.mj_fullM(model, data, full)

    parents = tuple(int(p) + 1 for p in model.dof_parentid)
    layout = alg.compressed_layout(parents)
    assert layout.dof_parentid == tuple(int(p) for p in model.dof_parentid)
    assert layout.dof_Madr == tuple(int(a) for a in model.dof_Madr) and layout.nM == model.nM
    ours = alg.compressed_ltdl(alg.compress_lower(full, layout), layout)

    theirs_L, theirs_D, theirs_M = np.eye(n), np.zeros(n), np.zeros((n, n))
    for k in range(n):
        start = model.M_rowadr[k]
        columns = model.M_colind[start:start + model.M_rownnz[k]]
        assert list(columns) == sorted(_chain(parents, k)) + [k]  # the same pattern
        for address, j in enumerate(columns, start=start):
            theirs_M[k, j] = data.M[address]
            if j == k:
                theirs_D[k] = data.qLD[address]
            else:
                theirs_L[k, j] = data.qLD[address]
    assert_close(theirs_M, np.tril(full), rtol=1e-14)

    lower = alg.decompress_lower(ours.qLD, layout)
    D = np.diag(lower)
    L = lower - np.diag(D) + np.eye(n)
    assert_close(L, theirs_L, rtol=1e-10)
    assert_close(D, theirs_D, rtol=1e-10)
    assert_close(ours.qLDiagInv, data.qLDiagInv, rtol=1e-10)
    assert_close(ours.qLDiagSqrtInv, 1 / np.sqrt(theirs_D), rtol=1e-10)
    assert_close(L.T @ np.diag(D) @ L, full, rtol=1e-12)
    assert_close(theirs_L.T @ np.diag(theirs_D) @ theirs_L, full, rtol=1e-12)
    # the dense in-place LTDL agrees as well, and the solve matches mujoco's
    assert_close(alg.lower_factor(alg.ltdl(full, parents), parents, unit=True), theirs_L, rtol=1e-10)
    b = np.random.default_rng(2).standard_normal(n)
    x = np.zeros(n)
    mujoco.mj_solveM(model, data, x.reshape(1, n), b.reshape(1, n))
    assert_close(alg.ltdl_solve(alg.ltdl(full, parents), parents, b), x, rtol=1e-10)

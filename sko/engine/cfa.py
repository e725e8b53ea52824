"""Compiled products of the CFA operators on a flat copy of a force split (CFA.md, "The CFA"):
the engine's implementation of the steps :mod:`sko.algorithms.cfa` declares (:data:`STEPS`).

The operators of :mod:`sko.algorithms.cfa.split` and :mod:`sko.algorithms.cfa.operators` are block products over the nodes, each
node touching only itself and its parent: no recursion, so any node order will do. A
:class:`FlatSplit` packs, per node in the model's stacking order, the dimensions, the offsets
of its slices in stacked node, hinge and constraint vectors, and the offsets of its blocks
``φ(℘(k), k)``, ``W(k)``, ``H⁺(k)`` and ``M^{-1}(k)`` in one float64 buffer (row-major). The
kernels below apply

* ``W``, ``W*``, ``H⁺``, ``H⁺*`` (block diagonal), and
* ``Ω = φ^{-*} M^{-1} φ^{-1}`` with ``φ^{-1} = I − ℰ_φ``:
  ``y(℘(k)) −= φ(℘(k), k) x(k)``, ``z = M^{-1} y``, ``z(k) −= φ*(℘(k), k) z(℘(k))``,

in one pass each, the same products as the per-node loops they replace.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from sko.graphs.errors import NonFiniteError

from sko.algorithms.cfa.matrix import CHILD_BLOCK, NODE_BLOCK, PARENT_BLOCK
from sko.algorithms.cfa.serialized import Step
from sko.algorithms.cfa.split import ForceSplit, _constraint_layout
from sko.engine.borrow import matrix_view
from sko.engine.model import compiled_model
from sko.engine.fields import columns
from sko.engine.layout import Flat, from_structure
from sko.engine.jit import kernel

__all__ = ["Split", "FlatSplit", "FlatForceSplit", "block_apply", "omega_apply", "STEPS"]

#: The columns of :attr:`FlatSplit.table`: the parent, ``m_k``, ``n_k``, ``s_k = m_k − n_k``, the
#: offsets of the node in stacked node, hinge and constraint vectors, of its blocks ``φ(℘(k), k)``,
#: ``W(k)``, ``H⁺(k)``, ``M^{-1}(k)`` in the split's buffer, and of ``φ``, ``H``, ``M`` in the
#: model's compiled data buffer.
Split = columns("Split", "PARENT", "NODE_DIM", "HINGE_DIM", "CONSTRAINT_DIM", "NODE", "DOF", "CON", "PHI", "W", "HP",
                "MI", "PHI_IN", "H_IN", "M_IN")


class FlatSplit:
    """A force split's per-node table and block buffer (module docstring): ``W(k)`` and
    ``H⁺(k)`` from one SVD of ``H(k)``, ``M^{-1}(k)``, and a copy of ``φ(℘(k), k)``, computed by
    :func:`split_numbers` from the model's compiled data buffer.

    Raises
    ------
    NonFiniteError
        If the model holds non-finite numbers (built with ``validate=False``).
    """

    def __init__(self, model):
        m = tuple(M.shape[0] for M in model.M_by_index)
        n = tuple(H.shape[0] for H in model.H_by_index)
        self.structure = (model.tree, m, n)  #: what the table depends on
        memo = model._derived.get(FlatSplit)  # held with the model's structure (SplitMemo)
        if memo is None:
            memo = model._derived[FlatSplit] = SplitMemo(*split_structure(model.tree, m, n))
        self.table, size = memo.table, memo.size
        packed = compiled_model(model).data(np.dtype(np.float64))  # φ, H, M (and a = b = 0) of every node
        if not np.isfinite(packed).all():
            raise NonFiniteError("the constraint force algorithm got a model with non-finite numbers (NaN or infinity)")
        self.numbers = split_numbers(self.table, packed, size, *memo.last)
        self.numbers.setflags(write=False)
        memo.last = (packed, self.numbers)  # both read-only, never written again; one assignment

    def blocks(self, column: int, rows: int, cols: int) -> tuple:
        """Read-only views of every node's block at ``column`` (``rows × cols`` columns of the table)."""
        t, x = self.table, self.numbers
        return tuple(x[o: o + r * c].reshape(r, c) for o, r, c in zip(t[:, column].tolist(), t[:, rows].tolist(),
                                                                      t[:, cols].tolist()))


_NONE = (np.zeros(0), np.zeros(0))  # no last split; as a split's, the numbers read-only (one compiled signature)
_NONE[1].setflags(write=False)


class SplitMemo:
    """What the force splits of one structure share, held with it (``model._derived``, shared by
    a model and its :meth:`~sko.SKOModel.with_blocks` models, gone with the last of them): the
    table and the block buffer's size (:func:`split_structure`), and ``last``, the last split's
    ``(model numbers, split numbers)``, from which a simulation's next state reuses the
    factorizations of the nodes whose ``H(k)`` or ``M(k)`` did not change. Two threads may
    replace ``last`` in turn: either pair is a whole split (the reuse compares bit for bit)."""

    def __init__(self, table: np.ndarray, size: int):
        self.table, self.size = table, size
        self.last = _NONE


def split_structure(tree, m: tuple, n: tuple) -> tuple[np.ndarray, int]:
    """The table of a force split of nodes with ``m_k``, ``n_k`` (``s_k = m_k − n_k``; stacked
    offsets in the body order) and the size of its block buffer; it depends on the tree and the
    dimensions only. ``PHI_IN``, ``H_IN`` and ``M_IN`` are the offsets of the model's blocks in
    its compiled data buffer (:mod:`sko.engine.layout`)."""
    parents = tree.parent_indices
    table = np.zeros((len(m), Split.WIDTH), dtype=np.int64)
    table[:, Split.PARENT] = parents
    table[:, Split.NODE_DIM], table[:, Split.HINGE_DIM] = m, n
    table[:, Split.CONSTRAINT_DIM] = np.subtract(m, n)
    for col, dims in ((Split.NODE, m), (Split.DOF, n), (Split.CON, np.subtract(m, n))):
        table[:, col] = np.concatenate([[0], np.cumsum(dims, dtype=np.int64)[:-1]]) if len(m) else []
    layout = from_structure(parents, m, n, tree.scatter_indices).layout
    table[layout[:, Flat.BODY], Split.PHI_IN] = layout[:, Flat.W]
    table[layout[:, Flat.BODY], Split.H_IN] = layout[:, Flat.H]
    table[layout[:, Flat.BODY], Split.M_IN] = layout[:, Flat.M]
    size = 0
    for i, p in enumerate(parents):
        if p >= 0:
            table[i, Split.PHI] = size
            size += m[p] * m[i]
        else:
            table[i, Split.PHI] = table[i, Split.PHI_IN] = -1
        for col, count in ((Split.W, m[i] * (m[i] - n[i])), (Split.HP, m[i] * n[i]), (Split.MI, m[i] * m[i])):
            table[i, col] = size
            size += count
    table.setflags(write=False)
    return table, size




@kernel
def _same(a, a_at, b, b_at, count):
    """True when ``count`` entries of ``a`` from ``a_at`` equal those of ``b`` from ``b_at``, bit
    for bit (int64 views of the float64 numbers: ``−0.0`` differs from ``0.0``)."""
    for j in range(count):
        if a[a_at + j] != b[b_at + j]:
            return False
    return True


@kernel(entry=True)
def split_numbers(table, packed, size, last_packed, last_numbers):
    """``W(k)`` (the last ``m_k − n_k`` right singular vectors of ``H(k) = U Σ V*``), ``H⁺(k) =
    V_n Σ^{-1} U*``, ``M^{-1}(k)`` and ``φ(℘(k), k)`` of every node into one buffer.

    ``last_packed`` and ``last_numbers`` (empty for none) are the model numbers and the result of
    an earlier call with the same ``table``: a node whose ``H(k)`` (or ``M(k)``) has exactly the
    same entries there gets the same ``W(k)``, ``H⁺(k)`` (or ``M^{-1}(k)``) copied, not
    recomputed (rigid bodies: ``M(k)`` and, for most joints, ``H(k)`` are constant)."""
    out = np.zeros(size)
    reuse = last_packed.size == packed.size and last_numbers.size == size
    bits, last_bits = packed.view(np.int64), last_packed.view(np.int64)
    for i in range(table.shape[0]):
        m, n = table[i, Split.NODE_DIM], table[i, Split.HINGE_DIM]
        if table[i, Split.PHI] >= 0:
            count = table[table[i, Split.PARENT], Split.NODE_DIM] * m
            out[table[i, Split.PHI]: table[i, Split.PHI] + count] = packed[table[i, Split.PHI_IN]: table[i, Split.PHI_IN] + count]
        if m == 0:
            continue
        h_in, m_in = table[i, Split.H_IN], table[i, Split.M_IN]
        if reuse and _same(bits, h_in, last_bits, h_in, n * m):
            w, count = table[i, Split.W], m * (m - n) + m * n  # W(k) and H⁺(k) are adjacent
            out[w: w + count] = last_numbers[w: w + count]
        else:
            if n == 0:
                Vh = np.eye(m)
                Hp = np.zeros((m, 0))
            else:
                H = packed[h_in: h_in + n * m].copy().reshape(n, m)
                U, sigma, Vh = np.linalg.svd(H, full_matrices=True)
                Hp = _product(Vh[:n].T.copy(), (U.T / sigma.reshape(n, 1)).copy())
            Wk = Vh[n:].T.copy()
            out[table[i, Split.W]: table[i, Split.W] + Wk.size] = Wk.ravel()
            out[table[i, Split.HP]: table[i, Split.HP] + Hp.size] = Hp.ravel()
        if reuse and _same(bits, m_in, last_bits, m_in, m * m):
            out[table[i, Split.MI]: table[i, Split.MI] + m * m] = last_numbers[table[i, Split.MI]: table[i, Split.MI] + m * m]
        else:
            M = packed[m_in: m_in + m * m].copy().reshape(m, m)
            out[table[i, Split.MI]: table[i, Split.MI] + m * m] = np.linalg.inv(M).ravel()
    return out


@kernel(entry=True)
def block_apply(table, numbers, block, rows, cols, out_at, in_at, transpose, x, out_size):
    """``out(k) = B(k) x(k)`` (or ``B*(k) x(k)``) for the block-diagonal operator whose
    ``rows × cols`` blocks start at column ``block`` of ``table``; ``out_at`` and ``in_at``
    name the columns of the slice offsets of the result and of ``x``."""
    out = np.zeros(out_size)
    for i in range(table.shape[0]):
        r, c, o = table[i, rows], table[i, cols], table[i, block]
        yo, xo = table[i, out_at], table[i, in_at]
        if transpose:  # out has c entries, x has r
            for j in range(c):
                acc = 0.0
                for k in range(r):
                    acc += numbers[o + k * c + j] * x[xo + k]
                out[yo + j] = acc
        else:
            for k in range(r):
                acc = 0.0
                for j in range(c):
                    acc += numbers[o + k * c + j] * x[xo + j]
                out[yo + k] = acc
    return out


@kernel(entry=True)
def omega_apply(table, numbers, x):
    """``φ^{-*} M^{-1} φ^{-1} x`` for a stacked node vector ``x``."""
    y = x.copy()
    for i in range(table.shape[0]):  # φ^{-1} = I − ℰ_φ
        p = table[i, Split.PARENT]
        if p >= 0:
            m, mp, o = table[i, Split.NODE_DIM], table[p, Split.NODE_DIM], table[i, Split.PHI]
            xo, yo = table[i, Split.NODE], table[p, Split.NODE]
            for r in range(mp):
                acc = 0.0
                for c in range(m):
                    acc += numbers[o + r * m + c] * x[xo + c]
                y[yo + r] -= acc
    z = np.zeros_like(y)
    for i in range(table.shape[0]):  # M^{-1}
        m, o, no = table[i, Split.NODE_DIM], table[i, Split.MI], table[i, Split.NODE]
        for r in range(m):
            acc = 0.0
            for c in range(m):
                acc += numbers[o + r * m + c] * y[no + c]
            z[no + r] = acc
    out = z.copy()
    for i in range(table.shape[0]):  # φ^{-*} = I − ℰ_φ*
        p = table[i, Split.PARENT]
        if p >= 0:
            m, mp, o = table[i, Split.NODE_DIM], table[p, Split.NODE_DIM], table[i, Split.PHI]
            zo, no = table[p, Split.NODE], table[i, Split.NODE]
            for c in range(m):
                acc = 0.0
                for r in range(mp):
                    acc += numbers[o + r * m + c] * z[zo + r]
                out[no + c] -= acc
    return out


@kernel
def _block(numbers, offset, rows, cols):
    """A copy of the row-major block at ``offset``."""
    return numbers[offset: offset + rows * cols].copy().reshape(rows, cols)


@kernel
def _product(A, B):
    out = np.zeros((A.shape[0], B.shape[1]))
    for r in range(A.shape[0]):
        for k in range(A.shape[1]):
            a = A[r, k]
            for c in range(B.shape[1]):
                out[r, c] += a * B[k, c]
    return out


@kernel
def _mul(a, ao, ars, acs, b, bo, brs, bcs, rows, inner, cols, out, oo):
    """``out[oo + r cols + c] = Σ_k a[ao + r ars + k acs] b[bo + k brs + c bcs]``: the product of
    two blocks given by their offsets and strides (a transposed row-major block has them swapped),
    summed as :func:`_product` sums (``k`` ascending from zero), row-major into ``out``."""
    for r in range(rows):
        for c in range(cols):
            out[oo + r * cols + c] = 0.0
        for k in range(inner):
            x = a[ao + r * ars + k * acs]
            for c in range(cols):
                out[oo + r * cols + c] += x * b[bo + k * brs + c * bcs]


@kernel(entry=True)
def constraint_block_data(table, numbers, pairs, size):
    """The blocks of ``A = W* φ^{-*} M^{-1} φ^{-1} W`` listed in ``pairs`` (rows ``(kind, i, j,
    offset)``), row-major at their offsets of one buffer of ``size`` entries (see
    :mod:`sko.algorithms.cfa.matrix` for the four formulas)."""
    N = table.shape[0]
    at = np.full(N, -1, dtype=np.int64)  # φ(℘(k), k) W(k) at at[k], Y(k) = M^{-1}(℘(k)) φ(℘(k), k) W(k) after it
    total, widest, tallest = 0, 0, 0
    for i in range(N):
        p, s = table[i, Split.PARENT], table[i, Split.CONSTRAINT_DIM]
        widest, tallest = max(widest, s), max(tallest, table[i, Split.NODE_DIM])
        if p >= 0 and s > 0:
            at[i] = total
            total += 2 * table[p, Split.NODE_DIM] * s
    work = np.empty(total)
    for i in range(N):
        if at[i] >= 0:
            p, m, s = table[i, Split.PARENT], table[i, Split.NODE_DIM], table[i, Split.CONSTRAINT_DIM]
            mp = table[p, Split.NODE_DIM]
            _mul(numbers, table[i, Split.PHI], m, 1, numbers, table[i, Split.W], s, 1, mp, m, s, work, at[i])
            _mul(numbers, table[p, Split.MI], mp, 1, work, at[i], s, 1, mp, mp, s, work, at[i] + mp * s)
    T = np.empty(tallest * widest)
    B = np.empty(widest * widest)
    C = np.empty(widest * widest)
    out = np.zeros(size)
    for row in range(pairs.shape[0]):
        kind, i, j, o = pairs[row, 0], pairs[row, 1], pairs[row, 2], pairs[row, 3]
        si, sj = table[i, Split.CONSTRAINT_DIM], table[j, Split.CONSTRAINT_DIM]
        if kind == NODE_BLOCK:  # W*(i) M^{-1}(i) W(i) + (φ W)*(i) Y(i), symmetrized
            m = table[i, Split.NODE_DIM]
            _mul(numbers, table[i, Split.MI], m, 1, numbers, table[i, Split.W], si, 1, m, m, si, T, 0)
            _mul(numbers, table[i, Split.W], 1, si, T, 0, si, 1, si, m, si, B, 0)
            if table[i, Split.PARENT] >= 0:
                mp = table[table[i, Split.PARENT], Split.NODE_DIM]
                _mul(work, at[i], 1, si, work, at[i] + mp * si, si, 1, si, mp, si, C, 0)
                for e in range(si * si):
                    B[e] += C[e]
            for r in range(si):
                for c in range(si):
                    out[o + r * si + c] = (B[r * si + c] + B[c * si + r]) / 2
            continue
        if kind == CHILD_BLOCK:  # A(℘(j), j) = −W*(i) Y(j) with i = ℘(j)
            m = table[i, Split.NODE_DIM]
            _mul(numbers, table[i, Split.W], 1, si, work, at[j] + m * sj, sj, 1, si, m, sj, out, o)
        elif kind == PARENT_BLOCK:  # A(i, ℘(i)) = −Y*(i) W(j) with j = ℘(i)
            m = table[j, Split.NODE_DIM]
            _mul(work, at[i] + m * si, 1, si, numbers, table[j, Split.W], sj, 1, si, m, sj, out, o)
        else:  # siblings: (φ W)*(i) Y(j)
            mp = table[table[i, Split.PARENT], Split.NODE_DIM]
            _mul(work, at[i], 1, si, work, at[j] + mp * sj, sj, 1, si, mp, sj, out, o)
            continue
        for e in range(si * sj):
            out[o + e] = -out[o + e]
    return out


@kernel
def _view(work, offset, rows, cols):
    return matrix_view(work, offset, rows, cols)


@kernel
def _matvec(A, x):
    out = np.zeros(A.shape[0])
    for r in range(A.shape[0]):
        for c in range(A.shape[1]):
            out[r] += A[r, c] * x[c]
    return out


@kernel(entry=True)
def cyclic_reduction(work, steps):
    """Eliminate, step by step, unknown ``e`` from its neighbours ``l`` and (if ``S_R > 0``)
    ``r`` (Eq. 39–40), in place in the work buffer; ``A(e)^{-1}`` is kept for the
    back-substitution."""
    for k in range(steps.shape[0]):
        se, sl, sr = steps[k, Step.S_E], steps[k, Step.S_L], steps[k, Step.S_R]
        Ainv = _view(work, steps[k, Step.V_E], se, se)
        Ainv[:, :] = np.linalg.inv(_view(work, steps[k, Step.D_E], se, se))
        re = work[steps[k, Step.R_E]: steps[k, Step.R_E] + se]
        X = _product(_view(work, steps[k, Step.C_LE], sl, se), Ainv)
        _view(work, steps[k, Step.D_L], sl, sl)[:, :] -= _product(X, _view(work, steps[k, Step.C_EL], se, sl))
        work[steps[k, Step.R_L]: steps[k, Step.R_L] + sl] -= _matvec(X, re)
        if sr > 0:
            Z = _product(_view(work, steps[k, Step.C_RE], sr, se), Ainv)
            Aer = _view(work, steps[k, Step.C_ER], se, sr)
            _view(work, steps[k, Step.D_R], sr, sr)[:, :] -= _product(Z, Aer)
            work[steps[k, Step.R_R]: steps[k, Step.R_R] + sr] -= _matvec(Z, re)
            Alr = -_product(X, Aer)
            _view(work, steps[k, Step.C_LR], sl, sr)[:, :] = Alr
            _view(work, steps[k, Step.C_RL], sr, sl)[:, :] = Alr.T


@kernel(entry=True)
def back_substitution(work, steps, F_S):
    """``F_S(e) = A(e)^{-1} [r(e) − A(e, l) F_S(l) − A(e, r) F_S(r)]`` in reverse elimination
    order, in place in ``F_S`` (whose survivors are already solved)."""
    for k in range(steps.shape[0] - 1, -1, -1):
        se, sl, sr = steps[k, Step.S_E], steps[k, Step.S_L], steps[k, Step.S_R]
        y = work[steps[k, Step.R_E]: steps[k, Step.R_E] + se] - _matvec(_view(work, steps[k, Step.C_EL], se, sl),
                                                              F_S[steps[k, Step.F_L]: steps[k, Step.F_L] + sl])
        if sr > 0:
            y -= _matvec(_view(work, steps[k, Step.C_ER], se, sr), F_S[steps[k, Step.F_R]: steps[k, Step.F_R] + sr])
        F_S[steps[k, Step.F_E]: steps[k, Step.F_E] + se] = _matvec(_view(work, steps[k, Step.V_E], se, se), y)


# ----------------------------------------------------------------------------- the steps
class FlatForceSplit(ForceSplit):
    """A :class:`~sko.algorithms.cfa.split.ForceSplit` whose blocks are packed for the kernels
    (:class:`FlatSplit`); the blocks it shows are read-only views of that buffer."""

    def __init__(self, model):
        self.model = model
        self.flat = fs = FlatSplit(model)
        self.constraint_dims, self.constraint_slices, self.constraint_size = _constraint_layout(*fs.structure)

    @cached_property
    def _blocks(self) -> tuple[tuple, tuple, tuple]:
        fs = self.flat
        return (fs.blocks(Split.W, Split.NODE_DIM, Split.CONSTRAINT_DIM), fs.blocks(Split.HP, Split.NODE_DIM, Split.HINGE_DIM),
                fs.blocks(Split.MI, Split.NODE_DIM, Split.NODE_DIM))


def _force_split(dtype, model):
    return FlatForceSplit(model) if model.dtype.kind == "f" else NotImplemented


#: the block-diagonal operators of a split: (its blocks, their columns' dimension and offset)
_OPERATORS = {"W": (Split.W, Split.CONSTRAINT_DIM, Split.CON), "H_plus": (Split.HP, Split.HINGE_DIM, Split.DOF)}


def _split_apply(dtype, split, name, transpose, x, out_size):
    if not isinstance(split, FlatForceSplit):
        return NotImplemented
    fs, (block, cols, offset) = split.flat, _OPERATORS[name]
    out_at, in_at = (offset, Split.NODE) if transpose else (Split.NODE, offset)
    return block_apply(fs.table, fs.numbers, int(block), int(Split.NODE_DIM), int(cols), int(out_at), int(in_at),
                       transpose, np.ascontiguousarray(x, dtype=np.float64), out_size)


def _constraint_operator(dtype, split, x):
    if not isinstance(split, FlatForceSplit):
        return NotImplemented
    return omega_apply(split.flat.table, split.flat.numbers, np.ascontiguousarray(x, dtype=np.float64))


def _constraint_block_data(dtype, split, pairs, size):
    if not isinstance(split, FlatForceSplit):
        return NotImplemented
    return constraint_block_data(split.flat.table, split.flat.numbers, pairs, size)


def _cyclic_reduction(dtype, work, steps):
    return cyclic_reduction(work, steps)


def _back_substitution(dtype, work, steps, F_S):
    return back_substitution(work, steps, F_S)


#: the compiled implementations of the CFA's steps (:func:`sko.algorithms.dispatch.run`), each
#: taking the scalar type, then its reference's arguments
STEPS = {"force_split": _force_split, "split_apply": _split_apply, "constraint_operator": _constraint_operator,
         "constraint_block_data": _constraint_block_data, "cyclic_reduction": _cyclic_reduction,
         "back_substitution": _back_substitution}

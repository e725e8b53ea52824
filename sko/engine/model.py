"""The compiled implementations of :mod:`sko.algorithms`: checked input in, kernels of
:mod:`sko.engine.spo`, :mod:`~sko.engine.rnea`, :mod:`~sko.engine.crba` and :mod:`~sko.engine.aba` run.

The public functions of :mod:`sko.algorithms` validate their input (same errors on both paths)
and hand each step to :func:`sko.algorithms.dispatch.run`; run through :mod:`sko.engine.algorithms`,
the implementations of :data:`COMPILED` answer when the numbers are float64 or complex128; each
takes the scalar type, then its reference's arguments. The data
buffer of a model is built once per :class:`sko.SKOModel` and scalar type (the model is
immutable) and held by the model (:func:`compiled_model`), beside its structure, which the models
of one tree share (:func:`~sko.engine.layout.structure`). Every array handed to a kernel
is writeable (the kernels never write their inputs): numba compiles a kernel again for read-only
arrays, so what users see of these buffers are read-only views.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from sko.algorithms.riccati import ArticulatedInertias
from sko.engine import aba, crba, rnea, spo
from sko.engine import operational_space as OS
from sko.engine.layout import Flat, FlatModel, Riccati, fill_data, max_dims, structure

__all__ = ["COMPILED", "CompiledModel", "compiled_model", "FlatArticulatedInertias"]


class CompiledModel:
    """A model's flat structure (:func:`~sko.engine.layout.structure`) and its data buffers, per
    dtype (each made once: the model is immutable; two threads making one make equal ones)."""

    def __init__(self, model):
        self.model = model
        shape = structure(model)
        self.flat: FlatModel = shape.flat
        self.layout, self.roff, self.rsize = shape.layout, shape.roff, shape.rsize
        self._data: dict = {}
        self.woff = np.ascontiguousarray(self.layout[:, Flat.W])

    def with_data(self, model, data: np.ndarray) -> "CompiledModel":
        """The compiled form of ``model`` — a :meth:`sko.SKOModel.with_blocks` model of this one's
        model — whose numbers (``a = b = 0``) are already in ``data``, a buffer of this layout
        that nothing writes (the model's blocks are read-only views of it); cached as
        :func:`compiled_model` of ``model``. The structure is shared, nothing is recomputed."""
        if data.shape != (self.flat.size,):
            raise ValueError(f"data must be a buffer of {self.flat.size} entries")
        if model._derived is not self.model._derived:
            raise ValueError("model must be a with_blocks model of this one's model (the same structure)")
        cm = CompiledModel.__new__(CompiledModel)
        cm.model, cm.flat, cm.layout, cm.roff, cm.rsize, cm.woff = model, self.flat, self.layout, self.roff, self.rsize, self.woff
        cm._data = {data.dtype: data}
        cm.__dict__["node_positions"] = self.node_positions
        model._compiled = cm
        return cm

    def data(self, dtype) -> np.ndarray:
        """The model's numbers (``a = b = 0``) as a buffer of ``dtype`` (for the kernels only)."""
        buf = self._data.get(dtype)
        if buf is None:
            m = self.model
            buf = self._data[dtype] = fill_data(self.flat, m.weights_by_index, m.H_by_index, m.M_by_index, dtype=dtype)
        return buf

    @cached_property
    def node_positions(self) -> tuple[np.ndarray, np.ndarray]:
        """Positions in the data buffer of ``a`` and ``b`` for each stacked node coordinate."""
        a_pos = np.empty(self.flat.node_size, dtype=np.intp)
        b_pos = np.empty(self.flat.node_size, dtype=np.intp)
        for row in self.layout:
            m, no = row[Flat.NODE_DIM], row[Flat.NODE]
            a_pos[no:no + m] = np.arange(row[Flat.A], row[Flat.A] + m)
            b_pos[no:no + m] = np.arange(row[Flat.B], row[Flat.B] + m)
        return a_pos, b_pos

    def data_with(self, dtype, a, b) -> np.ndarray:
        """The data buffer with ``a`` and ``b`` (``None`` = 0) in their slots."""
        data = self.data(dtype)
        if a is None and b is None:
            return data
        data = data.copy()
        a_pos, b_pos = self.node_positions
        if a is not None:
            data[a_pos] = a
        if b is not None:
            data[b_pos] = b
        return data

    def weights_data(self, weights: tuple, dtype) -> np.ndarray:
        """A buffer with other weights (per index, e.g. ψ) at the ``W`` offsets."""
        buf = np.zeros(self.flat.size, dtype=dtype)
        for row in self.layout:
            if row[Flat.W] >= 0:
                Wk = weights[row[Flat.BODY]]
                buf[row[Flat.W]:row[Flat.W] + Wk.size] = Wk.ravel()
        return buf


def compiled_model(model) -> CompiledModel:
    """The :class:`CompiledModel` of an SKO model, made on first use and held by the model
    (``model._compiled``): it lives and dies with the model, and no other model sees it."""
    cm = model._compiled
    if cm is None:
        cm = model._compiled = CompiledModel(model)
    return cm


def _kernel_array(x: np.ndarray, dtype) -> np.ndarray:
    """``x`` as a C-ordered writeable array of ``dtype`` (a copy if it is not one): what the
    kernels are compiled for (module docstring)."""
    return np.require(x, dtype=dtype, requirements=("C", "W"))


# ----------------------------------------------------------------------------- the recursions
def _spo(star: bool, tilde: bool):
    """The SPO product ``φ x``, ``φ* x``, ``φ̃ x`` or ``φ̃* x`` of the weights ``W`` (the model's
    own, or another SPO's per index) into ``y`` of ``dtype``."""

    def apply(dtype, model, x, W, y) -> np.ndarray:
        cm = compiled_model(model)
        wdata = cm.data(dtype) if W is model.weights_by_index else cm.weights_data(W, dtype)
        y = np.zeros(x.shape[0], dtype=dtype)
        spo.spo(cm.layout, wdata, cm.woff, _kernel_array(x, dtype), y, star, tilde)
        return y

    return apply


def _joint_map(star: bool):
    """``H x`` or ``H* x``."""

    def apply(dtype, model, x, y) -> np.ndarray:
        cm = compiled_model(model)
        y = np.zeros(model.node_size if star else model.dof_size, dtype=dtype)
        spo.joint_map(cm.layout, cm.data(dtype), _kernel_array(x, dtype), y, star)
        return y

    return apply


def _newton_euler(model, qdd, qd, a, b, dtype, with_V: bool):
    """``(𝒱, α, f, T)`` of Algorithm 3.1."""
    cm = compiled_model(model)
    nodes = np.zeros((3, model.node_size), dtype=dtype)
    T = np.zeros(model.dof_size, dtype=dtype)
    qd = np.zeros(model.dof_size, dtype=dtype) if qd is None else _kernel_array(qd, dtype)
    rnea.newton_euler(cm.layout, cm.data_with(dtype, a, b), _kernel_array(qdd, dtype), qd, nodes, T, with_V)
    return nodes[0], nodes[1], nodes[2], T


def newton_euler(dtype, model, qdd, qd, a, b):
    return _newton_euler(model, qdd, qd, a, b, dtype, True)


def inverse_dynamics(dtype, model, qdd, a, b):
    return _newton_euler(model, qdd, None, a, b, dtype, False)[3]


def _composite(cm: CompiledModel, dtype) -> np.ndarray:
    R = np.zeros(cm.flat.size, dtype=dtype)
    m = max_dims(cm.layout)[0]
    crba.composite_inertias(cm.layout, cm.data(dtype), R, np.zeros(m * m, dtype=dtype))
    return R


def composite_inertias(dtype, model) -> dict:
    cm = compiled_model(model)
    R = _composite(cm, dtype)
    R.setflags(write=False)
    out = {}
    for row in cm.layout:
        m = row[Flat.NODE_DIM]
        out[model.bodies[row[Flat.BODY]]] = R[row[Flat.M]:row[Flat.M] + m * m].reshape(m, m)
    return {k: out[k] for k in model.bodies}


def mass_matrix(dtype, model) -> np.ndarray:
    cm = compiled_model(model)
    R = _composite(cm, dtype)
    out = np.zeros((model.dof_size, model.dof_size), dtype=dtype)
    size = max_dims(cm.layout)[0] * max(1, model.dof_size)
    crba.mass_matrix(cm.layout, cm.data(dtype), R, out, np.zeros(size, dtype=dtype), np.zeros(size, dtype=dtype))
    return out


# ----------------------------------------------------------------------------- Riccati and after
#: the blocks of an :class:`~sko.algorithms.riccati.ArticulatedInertias` by their column of the
#: Riccati buffer, with the dimensions of their rows and columns
_RICCATI_BLOCKS = {"P": (Riccati.P, "m", "m"), "P_plus": (Riccati.P_PLUS, "m", "m"), "D": (Riccati.D, "n", "n"),
                   "D_inverse": (Riccati.D_INVERSE, "n", "n"), "G": (Riccati.G, "m", "n"),
                   "psi": (Riccati.PSI, "parent", "m")}


class FlatArticulatedInertias(ArticulatedInertias):
    """The compiled gather's :class:`~sko.algorithms.riccati.ArticulatedInertias`: every block
    in one buffer ``r``, laid out per node by :func:`~sko.engine.layout.riccati_layout`, which
    the kernels read as it is; the blocks are read-only views of it."""

    def __init__(self, model, dtype, r: np.ndarray, logdet=None):
        super().__init__(model, dtype, None, logdet)
        self.r = r  # the kernels' buffer (they never write it again)

    def _by_index(self, name: str) -> tuple:
        column, rows, cols = _RICCATI_BLOCKS[name]
        cm = compiled_model(self.model)
        dims = {"m": Flat.NODE_DIM, "n": Flat.HINGE_DIM}
        r = self.r.view()
        r.setflags(write=False)
        out = [None] * len(cm.layout)
        for j, row in enumerate(cm.layout):
            o = cm.roff[j, column]
            if o >= 0:
                a = cm.layout[row[Flat.PARENT], Flat.NODE_DIM] if rows == "parent" else row[dims[rows]]
                b = row[dims[cols]]
                out[row[Flat.BODY]] = r[o:o + a * b].reshape(a, b)
        return tuple(out)


def riccati(dtype, model):
    """The Riccati gather (with ``ψ`` and ``log det ℳ``), or ``NotImplemented`` when a ``D(k)``
    is not positive definite or not finite (the reference gather names the body)."""
    cm = compiled_model(model)
    r = np.zeros(cm.rsize, dtype=dtype)
    with np.errstate(all="ignore"):
        failed, logdet = aba.riccati(cm.layout, cm.data(dtype), cm.roff, r, aba.riccati_scratch(cm.layout, dtype), True)
    return NotImplemented if failed >= 0 else FlatArticulatedInertias(model, dtype, r, logdet)


def _buffer(ab, dtype) -> np.ndarray:
    """The Riccati result's buffer in ``dtype``; a result of the reference gather is packed."""
    r = getattr(ab, "r", None)
    if r is None:
        cm = compiled_model(ab.model)
        r = np.zeros(cm.rsize, dtype=dtype)
        for name, (column, _, _) in _RICCATI_BLOCKS.items():
            for j, block in enumerate(getattr(ab, name + "_by_index")[i] for i in cm.layout[:, Flat.BODY]):
                if block is not None:
                    r[cm.roff[j, column]: cm.roff[j, column] + block.size] = block.ravel()
    return r if r.dtype == dtype else r.astype(dtype)


def articulated_body(dtype, ab, T: np.ndarray, a, b) -> np.ndarray:
    """Algorithm 6.1 on a Riccati result; ``T`` 1-D or 2-D (right-hand sides)."""
    cm = compiled_model(ab.model)
    T2 = _kernel_array(T[:, None] if T.ndim == 1 else T, dtype)
    z = np.zeros((cm.flat.node_size, T2.shape[1]), dtype=dtype)
    out = np.zeros(T2.shape, dtype=dtype)
    with_ab = a is not None or b is not None
    eps = np.zeros(max_dims(cm.layout)[1] * T2.shape[1], dtype=dtype)  # ε(k) of Algorithm 6.1
    aba.articulated_body(cm.layout, cm.data_with(dtype, a, b), cm.roff, _buffer(ab, dtype), T2, with_ab, z, out, eps)
    return out.reshape(T.shape)


def _gain(star: bool):
    """``K x`` (hinge → node) or ``K* x`` (node → hinge)."""

    def apply(dtype, ab, x) -> np.ndarray:
        cm = compiled_model(ab.model)
        y = np.zeros(cm.flat.dof_size if star else cm.flat.node_size, dtype=dtype)
        t = np.zeros(max_dims(cm.layout)[0], dtype=dtype)
        aba.gain_apply(cm.layout, cm.data(dtype), cm.roff, _buffer(ab, dtype), _kernel_array(x, dtype), y, t, star)
        return y

    return apply


def _hinge_blocks(inverse: bool):
    """``D x`` or ``D^{-1} x``."""

    def apply(dtype, ab, x) -> np.ndarray:
        cm = compiled_model(ab.model)
        y = np.zeros(x.shape[0], dtype=dtype)
        offs = np.ascontiguousarray(cm.roff[:, Riccati.D_INVERSE if inverse else Riccati.D])
        aba.hinge_blocks(cm.layout, _buffer(ab, dtype), offs, _kernel_array(x, dtype), y)
        return y

    return apply


def _psi(star: bool):
    """``ψ x`` or ``ψ* x`` with the ψ weights of a Riccati result."""

    def apply(dtype, ab, x) -> np.ndarray:
        cm = compiled_model(ab.model)
        y = np.zeros(x.shape[0], dtype=dtype)
        spo.spo(cm.layout, _buffer(ab, dtype), np.ascontiguousarray(cm.roff[:, Riccati.PSI]), _kernel_array(x, dtype),
              y, star, False)
        return y

    return apply


def compliance_blocks(dtype, ab, nodes):
    """``(i, j) ↦ Ω(i, j)`` among the task nodes, from one compiled scatter over them and their
    ancestors (:mod:`sko.engine.operational_space`)."""
    model = ab.model
    cm = compiled_model(model)
    flat_of = np.empty(len(cm.layout), dtype=np.int64)
    flat_of[cm.layout[:, Flat.BODY]] = np.arange(len(cm.layout))
    tasks = flat_of[np.asarray([model.tree.index(k) for k in nodes], dtype=np.int64)]
    dims = cm.layout[tasks, Flat.NODE_DIM]
    where = dict(zip(nodes, np.concatenate(([0], np.cumsum(dims)[:-1])).tolist()))
    Omega = np.zeros((int(dims.sum()), int(dims.sum())), dtype=dtype)
    OS.compliance_blocks(cm.layout, cm.data(dtype), cm.roff, _buffer(ab, dtype), tasks, Omega)
    return lambda i, j: Omega[where[i]:where[i] + model.node_dim(i), where[j]:where[j] + model.node_dim(j)]


#: The compiled implementations by algorithm step (the names the reference functions hand to
#: :func:`sko.algorithms.dispatch.run`): each takes the scalar type, then the arguments of its
#: reference implementation (:mod:`sko.engine.algorithms` runs them).
COMPILED = {
    "phi_apply": _spo(False, False), "phi_star_apply": _spo(True, False),
    "phi_tilde_apply": _spo(False, True), "phi_tilde_star_apply": _spo(True, True),
    "H_apply": _joint_map(False), "H_star_apply": _joint_map(True),
    "newton_euler": newton_euler, "inverse_dynamics": inverse_dynamics,
    "composite_inertias": composite_inertias, "mass_matrix": mass_matrix,
    "riccati": riccati, "articulated_body": articulated_body,
    "K_apply": _gain(False), "K_star_apply": _gain(True),
    "D_apply": _hinge_blocks(False), "D_inverse_apply": _hinge_blocks(True),
    "psi_apply": _psi(False), "psi_star_apply": _psi(True),
    "compliance_blocks": compliance_blocks,
}

"""The compiled path of :mod:`sko.algorithms`: checked input in, kernels of :mod:`sko.algorithms.compiled.kernels` run.

The public functions of :mod:`sko.algorithms` validate their input (same errors on both paths)
and call the functions here when :func:`.backend.compiled_dtype` accepts the numbers. The flat
structure, the data buffer and the Riccati layout of a model are built once per
:class:`sko.SKOModel` (the model is immutable) and cached with it. Every array handed to a kernel
is writeable (the kernels never write their inputs): numba compiles a kernel again for read-only
arrays, so what users see of these buffers are read-only views.
"""

from __future__ import annotations

import weakref
from functools import cached_property

import numpy as np

from . import kernels as K
from . import operational_space as OS
from .backend import compiled_dtype
from .flat import Flat, FlatModel, Riccati, fill_data, from_sko_model, riccati_layout

__all__ = ["runs", "CompiledModel", "compiled_model"]


class CompiledModel:
    """A model's flat structure, its data buffers (per dtype) and the Riccati layout."""

    def __init__(self, model):
        self.model = model
        self.flat: FlatModel = from_sko_model(model)
        self.layout = np.array(self.flat.layout)
        self._data: dict = {}
        roff, self.rsize = riccati_layout(self.layout)
        self.roff = np.array(roff)
        self.woff = np.ascontiguousarray(self.layout[:, Flat.W])

    def with_data(self, model, data: np.ndarray) -> "CompiledModel":
        """The compiled form of ``model`` — a :meth:`sko.SKOModel.with_blocks` model of this one's
        model — whose numbers (``a = b = 0``) are already in ``data``, a buffer of this layout
        that nothing writes (the model's blocks are read-only views of it); cached as
        :func:`compiled_model` of ``model``. The structure is shared, nothing is recomputed."""
        if data.shape != (self.flat.size,):
            raise ValueError(f"data must be a buffer of {self.flat.size} entries")
        cm = CompiledModel.__new__(CompiledModel)
        cm.model, cm.flat, cm.layout, cm.roff, cm.rsize, cm.woff = model, self.flat, self.layout, self.roff, self.rsize, self.woff
        cm._data = {data.dtype: data}
        cm.__dict__["node_positions"] = self.node_positions
        _CACHE[model] = cm
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


_CACHE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def compiled_model(model) -> CompiledModel:
    """The (cached) :class:`CompiledModel` of an SKO model."""
    cm = _CACHE.get(model)
    if cm is None:
        cm = _CACHE[model] = CompiledModel(model)
    return cm


def _kernel_array(x: np.ndarray, dtype) -> np.ndarray:
    """``x`` as a C-ordered writeable array of ``dtype`` (a copy if it is not one): what the
    kernels are compiled for (module docstring)."""
    return np.require(x, dtype=dtype, requirements=("C", "W"))


def runs(model, *arrays) -> np.dtype | None:
    """The scalar type of the compiled path for this model and these (checked) arrays, or
    ``None`` for the reference path."""
    return compiled_dtype(model.dtype, *(x.dtype for x in arrays if x is not None))


# ----------------------------------------------------------------------------- the recursions
def spo(model, x, weights: tuple | None, dtype, star: bool, tilde: bool) -> np.ndarray:
    cm = compiled_model(model)
    if weights is None:
        wdata = cm.data(dtype)
    else:
        wdata = cm.weights_data(weights, dtype)
    y = np.zeros(x.shape[0], dtype=dtype)
    K.spo(cm.layout, wdata, cm.woff, _kernel_array(x, dtype), y, star, tilde)
    return y


def joint_map(model, x, dtype, star: bool) -> np.ndarray:
    cm = compiled_model(model)
    y = np.zeros(model.node_size if star else model.dof_size, dtype=dtype)
    K.joint_map(cm.layout, cm.data(dtype), _kernel_array(x, dtype), y, star)
    return y


def newton_euler(model, qdd, qd, a, b, dtype, with_V: bool):
    """``(𝒱, α, f, T)`` of Algorithm 3.1."""
    cm = compiled_model(model)
    nodes = np.zeros((3, model.node_size), dtype=dtype)
    T = np.zeros(model.dof_size, dtype=dtype)
    qd = np.zeros(model.dof_size, dtype=dtype) if qd is None else _kernel_array(qd, dtype)
    K.newton_euler(cm.layout, cm.data_with(dtype, a, b), _kernel_array(qdd, dtype), qd, nodes, T, with_V)
    return nodes[0], nodes[1], nodes[2], T


def _composite(cm: CompiledModel, dtype) -> np.ndarray:
    R = np.zeros(cm.flat.size, dtype=dtype)
    m = K.max_dims(cm.layout)[0]
    K.composite_inertias(cm.layout, cm.data(dtype), R, np.zeros(m * m, dtype=dtype))
    return R


def composite_inertias(model, dtype) -> dict:
    cm = compiled_model(model)
    R = _composite(cm, dtype)
    R.setflags(write=False)
    out = {}
    for row in cm.layout:
        m = row[Flat.NODE_DIM]
        out[model.bodies[row[Flat.BODY]]] = R[row[Flat.M]:row[Flat.M] + m * m].reshape(m, m)
    return {k: out[k] for k in model.bodies}


def mass_matrix(model, dtype) -> np.ndarray:
    cm = compiled_model(model)
    R = _composite(cm, dtype)
    out = np.zeros((model.dof_size, model.dof_size), dtype=dtype)
    size = K.max_dims(cm.layout)[0] * max(1, model.dof_size)
    K.mass_matrix(cm.layout, cm.data(dtype), R, out, np.zeros(size, dtype=dtype), np.zeros(size, dtype=dtype))
    return out


# ----------------------------------------------------------------------------- Riccati and after
def riccati(model, dtype) -> tuple[CompiledModel, np.ndarray, object, object]:
    """The Riccati gather: ``(compiled model, buffer r, log det ℳ, failing body or None)``;
    a failing body is one whose ``D(k)`` is not positive definite or not finite."""
    cm = compiled_model(model)
    r = np.zeros(cm.rsize, dtype=dtype)
    with np.errstate(all="ignore"):
        failed, logdet = K.riccati(cm.layout, cm.data(dtype), cm.roff, r, K.riccati_scratch(cm.layout, dtype), True)
    body = model.bodies[cm.layout[failed, Flat.BODY]] if failed >= 0 else None
    return cm, r, logdet, body


def riccati_buffer(ab, dtype) -> np.ndarray:
    return ab.r if ab.r.dtype == dtype else ab.r.astype(dtype)


def articulated_body(ab, T: np.ndarray, a, b, dtype) -> np.ndarray:
    """Algorithm 6.1 on a compiled Riccati result; ``T`` 1-D or 2-D (right-hand sides)."""
    cm = ab.compiled
    T2 = _kernel_array(T[:, None] if T.ndim == 1 else T, dtype)
    z = np.zeros((cm.flat.node_size, T2.shape[1]), dtype=dtype)
    out = np.zeros(T2.shape, dtype=dtype)
    with_ab = a is not None or b is not None
    eps = np.zeros(K.max_dims(cm.layout)[1] * T2.shape[1], dtype=dtype)  # ε(k) of Algorithm 6.1
    K.articulated_body(cm.layout, cm.data_with(dtype, a, b), cm.roff, riccati_buffer(ab, dtype),
                       T2, with_ab, z, out, eps)
    return out.reshape(T.shape)


def gain_apply(ab, x: np.ndarray, dtype, star: bool) -> np.ndarray:
    """``K x`` (hinge → node) or ``K* x`` (node → hinge)."""
    cm = ab.compiled
    y = np.zeros(cm.flat.dof_size if star else cm.flat.node_size, dtype=dtype)
    t = np.zeros(K.max_dims(cm.layout)[0], dtype=dtype)
    K.gain_apply(cm.layout, cm.data(dtype), cm.roff, riccati_buffer(ab, dtype), _kernel_array(x, dtype), y, t,
                 star)
    return y


def hinge_blocks(ab, x: np.ndarray, dtype, inverse: bool) -> np.ndarray:
    """``D x`` or ``D^{-1} x``."""
    cm = ab.compiled
    y = np.zeros(x.shape[0], dtype=dtype)
    offs = np.ascontiguousarray(cm.roff[:, Riccati.D_INVERSE if inverse else Riccati.D])
    K.hinge_blocks(cm.layout, riccati_buffer(ab, dtype), offs, _kernel_array(x, dtype), y)
    return y


def is_compiled(articulated) -> bool:
    """Whether a Riccati result came from the compiled gather (it carries its buffer)."""
    return getattr(articulated, "compiled", None) is not None


def takes(model, articulated, *arrays) -> np.dtype | None:
    """The compiled scalar type for a call with an optional Riccati result, or ``None``: a
    compiled result runs compiled unless an array needs the reference path (``object`` entries,
    or the reference backend forced; a compiled result offers the reference path its blocks), a
    reference result on the reference path."""
    if articulated is not None:
        return compiled_with(articulated, *arrays)
    return runs(model, *arrays)


def compiled_with(articulated, *arrays) -> np.dtype | None:
    """The compiled scalar type for a call on a Riccati result and these (checked) arrays, or
    ``None`` for the reference path: a reference result, ``object`` entries in an array, or the
    reference backend forced (a compiled result offers the reference path its blocks too)."""
    if not is_compiled(articulated):
        return None
    return compiled_dtype(articulated.dtype, *(x.dtype for x in arrays if x is not None))


__all__ += ["spo", "joint_map", "newton_euler", "composite_inertias", "mass_matrix", "riccati",
            "articulated_body", "gain_apply", "hinge_blocks", "takes", "compiled_with", "is_compiled"]


def psi_apply(ab, x: np.ndarray, dtype, star: bool) -> np.ndarray:
    """``ψ x`` or ``ψ* x`` with the ψ weights of a compiled Riccati result."""
    cm = ab.compiled
    y = np.zeros(x.shape[0], dtype=dtype)
    K.spo(cm.layout, riccati_buffer(ab, dtype), np.ascontiguousarray(cm.roff[:, Riccati.PSI]),
          _kernel_array(x, dtype), y, star, False)
    return y


__all__ += ["psi_apply"]


def compliance_blocks(ab, body_indices: list) -> tuple[np.ndarray, list]:
    """The operational space compliance blocks ``Ω(i, j)`` among the task bodies (positions in
    the model's stacking order) from a compiled Riccati result, as one square matrix, and the
    row offset of each task body in it."""
    cm = ab.compiled
    flat_of = np.empty(len(cm.layout), dtype=np.int64)
    flat_of[cm.layout[:, Flat.BODY]] = np.arange(len(cm.layout))
    tasks = flat_of[np.asarray(body_indices, dtype=np.int64)]
    dims = cm.layout[tasks, Flat.NODE_DIM]
    offsets = np.concatenate(([0], np.cumsum(dims)[:-1])).tolist()
    out = np.zeros((int(dims.sum()), int(dims.sum())), dtype=ab.dtype)
    OS.compliance_blocks(cm.layout, cm.data(ab.dtype), cm.roff, riccati_buffer(ab, ab.dtype), tasks, out)
    return out, offsets

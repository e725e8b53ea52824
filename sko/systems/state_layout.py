"""A system's SKO model at a batch of states, built by compiled kernels (SKO.md §14).

:class:`StateLayout` packs a :class:`~sko.systems.multibody.MultibodySystem` once (the integer
table and constants of :mod:`sko.bodies.compiled_state`, the arena offsets) and then, for a
batch of states ``Q`` (``B × nq``), ``QD`` (``B × nv``), fills the arena ``A`` (``B × L``) with
every node's weight ``φ(℘(k), k)``, ``H(k)``, ``M(k)``, the stacked ``a``, ``b``, ``𝒱`` and the
potential energies — what :meth:`MultibodySystem.sko_model` builds in Python, state by state.

Bodies are visited from the base to the tips, in the flat model's scatter order ``order`` (a
depth-first preorder): row ``j`` of the state table ``ints`` is body ``order[j]`` (stacking
position; ``row_of`` is the inverse), and the arena's ``𝒱``, records and potentials follow the
same order, so a body's terms sit near its parent's whatever the stacking order. Consecutive bodies
whose type has a compiled state (:meth:`~sko.bodies.contract.BodyType.compiled_state`) are
filled by one compiled call over the whole batch; a body without one runs its Python
``at_state`` per state (its output is checked as the reference path checks it) and writes the
same buffers. The requests' node vectors are scratch and stacked in that order too
(``request_layout``).

Arena sections (per state): first the data buffer of the flat model
(:mod:`sko.algorithms.compiled.flat`: ``φ(℘(k), k)``, ``H(k)``, ``M(k)``, ``a(k)``, ``b(k)`` node
after node in scatter order, row-major), so the model's compiled kernels run on it as it is;
then ``𝒱(k)`` of every body, the attachment records and one potential per body (scatter order
too).
"""

from __future__ import annotations

import contextlib

import numpy as np

from sko.arrays import checked_array
from sko.algorithms.compiled import flat as fl
from sko.algorithms.compiled.engine import compiled_model
from sko.algorithms.compiled.flat import from_structure
from sko.algorithms.compiled.kernels import riccati_layout
from sko.bodies import compiled_state as cs
from sko.bodies.contract import Attachment, BodyType, check_node_state, root_attachment
from sko.errors import JointError
from sko.graphs.errors import SKOError
from sko.model import SKOModel

__all__ = ["StateLayout", "state_named", "read_only"]


@contextlib.contextmanager
def state_named(s: int | None):
    """Errors raised for state ``s`` of a batch say which state (same error type); ``None``: a
    single state, errors unchanged."""
    try:
        yield
    except SKOError as exc:
        if s is None:
            raise
        message = exc.args[0] if exc.args else str(exc)
        try:
            named = type(exc)(f"state {s} of the batch: {message}")
        except TypeError:  # an error type with a constructor of its own: keep it as it is
            raise exc from None
        raise named from None


class StateLayout:
    """The packed form of a system's state building (module docstring)."""

    def __init__(self, system):
        self.system = system
        tree = system.tree
        bodies = tree.bodies
        self.bodies = bodies
        N = len(bodies)
        self.index = index = {k: i for i, k in enumerate(bodies)}  # body -> position (no O(N) list.index)
        body = [system.body(k) for k in bodies]
        m = np.array([b.node_dim for b in body], dtype=np.int64)
        n = np.array([b.dof_size for b in body], dtype=np.int64)
        parent = np.array([-1 if b.parent is None else index[b.parent] for b in body], dtype=np.int64)
        self.parent, self.node_dims, self.dof_dims = parent, m, n
        self.dof_offsets = np.concatenate([[0], np.cumsum(n)]).astype(np.int64)
        self.node_size, self.dof_size = int(m.sum()), int(self.dof_offsets[-1])
        compiled = [b.compiled_state() for b in body]
        self.compiled = compiled
        ints = np.zeros((N, cs.COLUMNS), dtype=np.int64)
        reals = [np.asarray(system.gravity, dtype=float)]
        pos = 3
        # the flat model's data buffer first (sko.algorithms.compiled.flat: W, H, M, a, b of every
        # node, in scatter order), so the model's kernels run on the arena's first `flat.size` entries
        order = [index[k] for k in tree.scatter_order()]
        self.flat = flat = from_structure(parent, m, n, order)
        self.riccati_offsets, self.riccati_size = riccati_layout(flat.layout)
        # the requests' layout: their node vectors are scratch, stacked in scatter order too (the
        # flat model's NODE offsets are the stacking order's, for callers' node vectors)
        requests = flat.layout.copy()
        requests[:, fl.NODE] = np.cumsum(requests[:, fl.NDIM]) - requests[:, fl.NDIM]
        requests.setflags(write=False)
        self.request_layout = requests
        w_off, h_off, m_off = (np.empty(N, dtype=np.int64) for _ in range(3))
        a_off, b_off = np.empty(N, dtype=np.int64), np.empty(N, dtype=np.int64)
        body_of = flat.layout[:, fl.BODY]
        w_off[body_of], h_off[body_of], m_off[body_of] = flat.layout[:, fl.W], flat.layout[:, fl.H], flat.layout[:, fl.M]
        a_off[body_of], b_off[body_of] = flat.layout[:, fl.A], flat.layout[:, fl.B]
        size = flat.size
        # 𝒱, records and potentials in scatter order, as the data buffer: a body's terms sit near
        # its parent's, whatever the stacking order (𝒱 stacked as the requests' node vectors)
        V_off = np.empty(N, dtype=np.int64)
        V_off[order] = size + requests[:, fl.NODE]
        size += self.node_size
        self.V_offsets = V_off
        att: dict = {}
        att_off = np.zeros(N, dtype=np.int64)
        for i in order:
            att_off[i] = size
            for name in body[i].attachment_names:
                att[(i, name)] = size
                size += cs.record_size(int(m[i]))
        pot_off = np.empty(N, dtype=np.int64)
        pot_off[order] = size + np.arange(N)
        size += N
        self.weight_offsets, self.H_offsets, self.M_offsets, self.potential_offsets = w_off, h_off, m_off, pot_off
        self.a_offsets, self.b_offsets = a_off, b_off
        self.attachment_offsets = att
        self.size = size
        # one row per body in scatter order (row j: body order[j]), so the state kernels walk the
        # table, the constants and the arena forward
        self.row_of = row_of = np.empty(N, dtype=np.int64)
        row_of[order] = np.arange(N)
        for j, i in enumerate(order):
            b, c, row = body[i], compiled[i], ints[j]
            row[cs.PARENT], row[cs.KIND] = -1 if parent[i] < 0 else row_of[parent[i]], -1 if c is None else c.kind
            row[cs.QO], row[cs.NQ] = system.q_slices[b.name].start, b.q_size
            row[cs.VO], row[cs.NV] = system.dof_slices[b.name].start, b.dof_size
            row[cs.DIM] = m[i]
            row[cs.IN_ATT] = -1 if parent[i] < 0 else att[(parent[i], b.attach)]
            row[cs.IN_DIM] = 0 if parent[i] < 0 else m[parent[i]]
            row[cs.ATT], row[cs.W], row[cs.HB], row[cs.MB] = att_off[i], w_off[i], h_off[i], m_off[i]
            row[cs.AO], row[cs.BO] = a_off[i], b_off[i]
            row[cs.NV_] = V_off[i]
            row[cs.POT] = pot_off[i]
            if c is not None:
                row[cs.JOINT], row[cs.REVERSE], row[cs.JNQ], row[cs.JNV] = c.joint, c.reverse, c.joint_q, c.joint_dofs
                row[cs.RO] = pos
                for e, x in enumerate(c.extras):
                    row[cs.X1 + e] = x
                reals.append(np.asarray(c.reals, dtype=float))
                pos += c.reals.size
        self.ints = ints
        self.reals = np.concatenate(reals)
        # runs of consecutive rows (base to tips) filled the same way
        self.order = np.array(order, dtype=np.int64)
        runs: list = []
        for j, i in enumerate(order):
            kind = "python" if compiled[i] is None else "compiled"
            if runs and runs[-1][0] == kind:
                runs[-1][1].append(j)
            else:
                runs.append((kind, [j]))
        self.runs = [(kind, np.array(ix, dtype=np.int64)) for kind, ix in runs]
        self.all_compiled = all(kind == "compiled" for kind, _ in self.runs)
        self._unchecked = frozenset(i for i, b in enumerate(body) if compiled[i] is None and not b.valid_by_construction)
        self._root = root_attachment(system.gravity)
        self._hinge_forces = any(type(b).hinge_force is not BodyType.hinge_force for b in body)
        # reading a model (see model): where each block and the stacked a, b sit in the data buffer
        self._weight_blocks = tuple((int(w_off[i]), int(m[parent[i]]), int(m[i])) if parent[i] >= 0 else (-1, 0, 0)
                                    for i in range(N))
        self._H_blocks = tuple((int(h_off[i]), int(n[i]), int(m[i])) for i in range(N))
        self._M_blocks = tuple((int(m_off[i]), int(m[i])) for i in range(N))
        self._a_index, self._b_index = (np.concatenate([np.arange(o, o + k) for o, k in zip(off, m)] or [np.zeros(0)])
                                        .astype(np.intp) for off in (a_off, b_off))
        self._templates: dict = {}  # scalar type -> (first model, its compiled form or None/False)

    # ------------------------------------------------------------------ filling
    def fill(self, Q: np.ndarray, QD: np.ndarray, batched: bool = False) -> np.ndarray:
        """The arena ``(B, L)`` at the checked 2-D states ``Q``, ``QD`` (module docstring); with
        ``batched``, an error for one state says which."""
        dtype = np.result_type(Q, QD, float)
        A = np.zeros((Q.shape[0], self.size), dtype=dtype)
        for kind, ix in self.runs:
            if kind == "compiled":
                status = np.full(Q.shape[0], -1, dtype=np.int64)
                cs.fill_states(self.ints, self.reals, ix, Q, QD, A, status)
                bad = np.flatnonzero(status >= 0)
                if bad.size:
                    with state_named(int(bad[0]) if batched else None):
                        self._raise_joint(int(status[bad[0]]), Q[bad[0]])
            else:  # a body's terms that overflow are reported by the caller, as the reference path does
                Qr, QDr = read_only(Q), read_only(QD)  # Q may be the caller's array: a body gets no write access
                with np.errstate(over="ignore", invalid="ignore"):
                    for s in range(Q.shape[0]):
                        with state_named(s if batched else None):
                            for j in ix:
                                self._python_state(int(self.order[j]), Qr[s], QDr[s], A[s])
        return A

    def _raise_joint(self, row: int, q: np.ndarray):
        """Raise the joint error of the body of row ``row`` of the state table at ``q``."""
        q = read_only(q)
        body = self.system.body(self.bodies[self.order[row]])
        q = q[self.system.q_slices[body.name]][: body.joint.nq]
        body.joint.kinematics(q)  # raises the joint's own error
        raise JointError(f"{body.joint}: the state {q} is outside the joint's domain")  # pragma: no cover

    def attachment(self, a: np.ndarray, offset: int, m: int) -> Attachment:
        """The attachment record at ``offset`` of a state's arena row ``a``."""
        g = offset + 6 * m
        return Attachment(Gamma=a[offset: g].reshape(6, m), gamma=a[g: g + 6], rotation=a[g + 6: g + 15].reshape(3, 3),
                          position=a[g + 15: g + 18], velocity=a[g + 18: g + 24])

    def _python_state(self, i: int, q: np.ndarray, qd: np.ndarray, a: np.ndarray) -> None:
        system, k = self.system, self.bodies[i]
        b = system.body(k)
        p = self.parent[i]
        if p < 0:
            inboard = self._root
        else:
            inboard = self.attachment(a, self.ints[self.row_of[i], cs.IN_ATT], int(self.node_dims[p]))
        s = b.at_state(q[system.q_slices[k]], qd[system.dof_slices[k]], inboard, system.gravity)
        m, n = int(self.node_dims[i]), int(self.dof_dims[i])
        if i in self._unchecked:
            check_node_state(b, s)
        if p >= 0:
            weight = (np.asarray(s.E) @ inboard.Gamma).T
            if i in self._unchecked:
                checked_array(weight, 2, "weight φ(℘(k), k) of", k)
            w = self.weight_offsets[i]
            a[w: w + weight.size] = weight.ravel()
        a[self.H_offsets[i]: self.H_offsets[i] + n * m] = np.asarray(s.H).ravel()
        a[self.M_offsets[i]: self.M_offsets[i] + m * m] = np.asarray(s.M).ravel()
        a[self.a_offsets[i]: self.a_offsets[i] + m] = s.a
        a[self.b_offsets[i]: self.b_offsets[i] + m] = s.b
        a[self.V_offsets[i]: self.V_offsets[i] + m] = s.V
        a[self.potential_offsets[i]] = s.potential
        for name in b.attachment_names:
            r = self.attachment_offsets[(i, name)]
            att = s.attachments[name]
            g = r + 6 * m
            a[r: g] = np.asarray(att.Gamma).ravel()
            a[g: g + 6] = att.gamma
            a[g + 6: g + 15] = np.asarray(att.rotation).ravel()
            a[g + 15: g + 18] = att.position
            a[g + 18: g + 24] = att.velocity

    # ------------------------------------------------------------------ reading
    def model(self, a: np.ndarray) -> tuple[SKOModel, np.ndarray, np.ndarray]:
        """The :class:`SKOModel` and stacked ``a``, ``b`` of one state's arena row.

        The model's blocks are read-only views of one copy of the row's flat data buffer (``a``
        and ``b`` slots zeroed), which also becomes the buffer of its compiled form
        (:meth:`~sko.algorithms.compiled.engine.CompiledModel.with_data`): the first model of a
        scalar type is built and checked by :class:`SKOModel`, later ones share its structure
        (:meth:`SKOModel.with_blocks`), so a state costs no per-block copy or check."""
        data = a[: self.flat.size].copy()
        a_vec, b_vec = data[self._a_index], data[self._b_index]
        data[self._a_index] = 0
        data[self._b_index] = 0
        data.setflags(write=False)
        template = self._templates.get(data.dtype)
        if template is None:
            model = self._templates[data.dtype] = (self._checked_model(data), None)
            return model[0], a_vec, b_vec
        first, compiled = template
        weights = [None if o < 0 else data[o: o + r * c].reshape(r, c) for o, r, c in self._weight_blocks]
        H = [data[o: o + r * c].reshape(r, c) for o, r, c in self._H_blocks]
        M = [data[o: o + r * r].reshape(r, r) for o, r in self._M_blocks]
        # views of a read-only buffer at this layout's offsets: the second state's are checked, and
        # with them the offsets, later ones are not
        model = first.with_blocks(weights, H, M, check=compiled is None)
        if compiled is None:  # the second state: the structure's compiled form, if its layout is the arena's
            cm = compiled_model(first)
            compiled = cm if np.array_equal(cm.layout, self.flat.layout) else False
            self._templates[data.dtype] = (first, compiled)
        if compiled:
            compiled.with_data(model, data)
        return model, a_vec, b_vec

    def _checked_model(self, data: np.ndarray) -> SKOModel:
        """The model of a flat data buffer built by :class:`SKOModel` (copies, shape checks)."""
        m, n = self.node_dims, self.dof_dims
        phi, H, M = {}, {}, {}
        for i, k in enumerate(self.bodies):
            mi, ni = int(m[i]), int(n[i])
            if self.parent[i] >= 0:
                mp, w = int(m[self.parent[i]]), self.weight_offsets[i]
                phi[k] = data[w: w + mp * mi].reshape(mp, mi)
            H[k] = data[self.H_offsets[i]: self.H_offsets[i] + ni * mi].reshape(ni, mi)
            M[k] = data[self.M_offsets[i]: self.M_offsets[i] + mi * mi].reshape(mi, mi)
        return SKOModel(self.system.tree, phi=phi, H=H, M=M, validate=False)

    def kinetic_energies(self, A: np.ndarray) -> np.ndarray:
        """``½ Σ_k 𝒱*(k) M(k) 𝒱(k)`` for every state of the arena."""
        out = np.zeros(A.shape[0], dtype=A.dtype)
        for i in range(len(self.bodies)):
            mi, o, mo = int(self.node_dims[i]), self.V_offsets[i], self.M_offsets[i]
            V = A[:, o: o + mi]
            M = A[:, mo: mo + mi * mi].reshape(-1, mi, mi)
            out += 0.5 * np.einsum("si,sij,sj->s", V, M, V)
        return out

    def potential_energies(self, A: np.ndarray) -> np.ndarray:
        return A[:, self.potential_offsets].sum(axis=1)


def read_only(x: np.ndarray) -> np.ndarray:
    """A read-only view of ``x`` (the states handed to a body's Python code, as the reference
    path hands it its checked read-only copies)."""
    x = x.view()
    x.flags.writeable = False
    return x

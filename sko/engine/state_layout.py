"""A system's SKO model at a batch of states, built by compiled kernels (SKO.md §14).

:class:`StateLayout` packs a :class:`~sko.systems.multibody.MultibodySystem` once — the state
table (one row per body, columns :data:`~sko.engine.state_kernels.Row`), the constants ``reals``
(gravity, then each body's packed constants) and the *arena* of one state — and then, for a
batch of states ``Q`` (``B × nq``), ``QD`` (``B × nv``), fills the arenas ``A`` (``B × L``) with
every node's weight ``φ(℘(k), k)``, ``H(k)``, ``M(k)``, ``a``, ``b``, ``𝒱`` and potential, and
every attachment record — what :meth:`MultibodySystem.sko_model` builds in Python, state by state.

Bodies are visited from the base to the tips, in the flat model's scatter order ``order`` (a
depth-first preorder): row ``j`` of the table is body ``order[j]`` (stacking position; ``row_of``
is the inverse), and the arena's blocks follow the same order, so a body's terms sit near its
parent's whatever the stacking order. Consecutive bodies whose type has a compiled state
(:mod:`sko.engine.state_kernels`) are filled by one compiled call over the whole batch; a body without
one runs its Python ``at_state`` per state (its output checked as the reference path checks it)
and writes the same blocks.

The arena of a state, in order (:data:`Arena`):

* the data buffer of the flat model (:mod:`sko.engine.layout`: ``φ(℘(k), k)``,
  ``H(k)``, ``M(k)``, ``a(k)``, ``b(k)`` node after node, row-major), so the model's kernels run
  on it as it is;
* ``E`` of the bodies whose ``E`` is not a view of their weight (module docstring of
  :mod:`sko.engine.state_kernels`), m × 6 each;
* ``𝒱`` of every body (stacked as the requests' node vectors), the attachment records
  (:data:`~sko.engine.state_kernels.Record`, then ``Γ``), one potential per body, the inertial
  frame's record;
* the state: ``q`` and ``v`` (the kernels read them there);
* the scratch the state kernels share (the largest any body declared), then the m × m buffer of
  the per-state checks of the bodies whose kernels are checked (``checked``; none for the
  library's bodies: :mod:`sko.engine.state_kernels`, *Checks*, and :mod:`sko.engine.kernel_checks`,
  which also validates those kernels when :meth:`StateLayout.table` is first made for a scalar
  type).
"""

from __future__ import annotations

import contextlib
from functools import cached_property

import numpy as np

from sko.engine.model import compiled_model
from sko.engine.layout import Flat, from_structure, riccati_layout
from sko.engine.local_derivatives import LocalPlan, forward_call, one_state_address, one_state_call, plan
from sko.arrays import checked_array
from sko.bodies.rigid import RigidBody
from sko.bodies.contract import Attachment, BodyError, BodyType, check_node_state, root_attachment, valid_by_construction
from sko.engine.hooks import compiled_hooks, hook_address
from sko.engine.state_kernels import (ROOT_SIZE, KernelError, Record, Row, Terms, check_compiled_state, checker_address,
                                fill_batch, is_checked)
from sko.graphs.errors import SKOError
from sko.model import SKOModel
from sko.engine.bodies import compiled_state
from sko.engine.kernel_checks import diagnose, validate

__all__ = ["StateLayout", "state_named", "read_only", "record_size"]


def record_size(m: int) -> int:
    """Entries of one attachment record of a body with node dimension ``m``."""
    return int(Record.SIZE) + 6 * m


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
        self.bodies = bodies = tree.bodies
        N = len(bodies)
        self.index = index = {k: i for i, k in enumerate(bodies)}  # body -> position (no O(N) list.index)
        body = [system.body(k) for k in bodies]
        m = np.array([b.node_dim for b in body], dtype=np.int64)
        n = np.array([b.dof_size for b in body], dtype=np.int64)
        parent = np.array([-1 if b.parent is None else index[b.parent] for b in body], dtype=np.int64)
        self.parent, self.node_dims, self.dof_dims = parent, m, n
        self.dof_offsets = np.concatenate([[0], np.cumsum(n)]).astype(np.int64)
        self.node_size, self.dof_size = int(m.sum()), int(self.dof_offsets[-1])
        self.compiled = compiled = [check_compiled_state(b, _compiled_state(b)) for b in body]
        #: bodies whose kernel's outputs are checked (sko.engine.state_kernels, *Checks*)
        self.checked = checked = np.array([is_checked(b, c) for b, c in zip(body, compiled)], dtype=bool)
        self.hooks = hooks = [compiled_hooks(b, c) for b, c in zip(body, compiled)]  # sko.engine.hooks
        hinged = [h is not None and h.hinge_force is not None for h in hooks]
        # the flat model's data buffer first (sko.engine.layout), so the model's kernels
        # run on the arena's first `flat.size` entries
        self.order = order = np.array([index[k] for k in tree.scatter_order()], dtype=np.int64)
        self.flat = flat = from_structure(parent, m, n, order)
        self.riccati_offsets, self.riccati_size = riccati_layout(flat.layout)
        # the requests' layout: their node vectors are scratch, stacked in scatter order too (the
        # flat model's NODE offsets are the stacking order's, for callers' node vectors)
        requests = flat.layout.copy()
        requests[:, Flat.NODE] = np.cumsum(requests[:, Flat.NODE_DIM]) - requests[:, Flat.NODE_DIM]
        requests.setflags(write=False)
        self.request_layout = requests
        body_of = flat.layout[:, Flat.BODY]
        self.weight_offsets, self.H_offsets, self.M_offsets, self.a_offsets, self.b_offsets = (
            np.empty(N, dtype=np.int64) for _ in range(5))
        for offsets, column in ((self.weight_offsets, Flat.W), (self.H_offsets, Flat.H), (self.M_offsets, Flat.M),
                                (self.a_offsets, Flat.A), (self.b_offsets, Flat.B)):
            offsets[body_of] = flat.layout[:, column]
        # E of the bodies whose E is not a view of their weight: a child of its parent's own frame
        # whose type declares Γ = [I, 0] there
        aliased = np.array([compiled[i] is not None and parent[i] >= 0 and body[i].attach is None
                            and compiled[parent[i]] is not None and compiled[parent[i]].kernel.own_frame_identity
                            for i in range(N)], dtype=bool)
        size = flat.size
        self.E_offsets = E_off = np.full(N, -1, dtype=np.int64)
        for i in order:
            if (compiled[i] is not None or parent[i] < 0) and not aliased[i]:  # a base body's: the requests' Ψ
                E_off[i] = size
                size += 6 * int(m[i])
        # 𝒱, records and potentials in scatter order, as the data buffer (𝒱 stacked as the
        # requests' node vectors)
        self.V_offsets = V_off = np.empty(N, dtype=np.int64)
        V_off[order] = size + requests[:, Flat.NODE]
        size += self.node_size
        self.attachment_offsets = att = {}
        att_off = np.zeros(N, dtype=np.int64)
        for i in order:
            att_off[i] = size
            for name in body[i].attachment_names:
                att[(i, name)] = size
                size += record_size(int(m[i]))
        self.potential_offsets = pot_off = np.empty(N, dtype=np.int64)
        pot_off[order] = size + np.arange(N)
        size += N
        self.root_offset = root = size
        size += ROOT_SIZE
        self.q_offset, self.v_offset = size, size + system.q_size
        size += system.q_size + system.dof_size
        self.scratch_offset = size
        # (a compiled hinge force is written there after the state, before it is added)
        size += max([c.scratch for c in compiled if c is not None] + [int(n[i]) for i in range(N) if hinged[i]],
                    default=0)
        self.check_offset = size  # the m × m buffer of the per-state checks of checked kernels
        size += max([int(m[i]) ** 2 for i in np.flatnonzero(checked)], default=0)
        self.size = size
        # one row per body in scatter order (row j: body order[j]), so the state kernels walk the
        # table, the constants and the arena forward
        self.row_of = row_of = np.empty(N, dtype=np.int64)
        row_of[order] = np.arange(N)
        rows = np.zeros((N, Row.WIDTH), dtype=np.int64)
        #: per row, how many of its body's leading hinge velocity coordinates its kernel declares it
        #: takes ``Terms.JOINT`` along (:class:`~sko.engine.state_kernels.StateKernel`; 0: none)
        self.joint_columns = joint_columns = np.zeros(N, dtype=np.int64)
        reals = [np.asarray(system.gravity, dtype=float)]
        pos = 3
        for j, i in enumerate(order):
            b, c, row = body[i], compiled[i], rows[j]
            row[Row.PARENT] = -1 if parent[i] < 0 else row_of[parent[i]]
            row[Row.Q], row[Row.NQ] = self.q_offset + system.q_slices[b.name].start, b.q_size
            row[Row.V], row[Row.NV] = self.v_offset + system.dof_slices[b.name].start, b.dof_size
            row[Row.NODE_DIM] = m[i]
            row[Row.INBOARD] = root if parent[i] < 0 else att[(parent[i], b.attach)]
            row[Row.INBOARD_DIM] = 0 if parent[i] < 0 else m[parent[i]]
            row[Row.WEIGHT], row[Row.H], row[Row.M] = self.weight_offsets[i], self.H_offsets[i], self.M_offsets[i]
            row[Row.A], row[Row.B] = self.a_offsets[i], self.b_offsets[i]
            row[Row.VELOCITY], row[Row.POTENTIAL] = V_off[i], pot_off[i]
            row[Row.RECORDS], row[Row.RECORD_COUNT] = att_off[i], len(b.attachment_names)
            row[Row.SCRATCH] = self.scratch_offset
            row[Row.CHECK] = self.check_offset if checked[i] else -1
            if aliased[i]:  # E(r, c) = φ(c, r)
                row[Row.E], row[Row.E_ROW], row[Row.E_COLUMN] = self.weight_offsets[i], 1, m[i]
            else:
                row[Row.E], row[Row.E_ROW], row[Row.E_COLUMN] = E_off[i], 6, 1
            if c is not None:
                constants = np.asarray(c.constants, dtype=float)
                row[Row.CONSTANTS], row[Row.CONSTANTS_SIZE], row[Row.SCRATCH_SIZE] = pos, constants.size, c.scratch
                reals.append(constants)
                pos += constants.size
                try:  # a joint= declaration refused here, checked kernel or not (only unchecked ones use it)
                    joint_columns[j] = c.kernel.joint_columns(constants, b.dof_size)
                except KernelError as exc:
                    raise KernelError(f"body {b.name!r} ({type(b).__name__}): {exc}") from exc.__cause__
        self.rows = rows
        self.reals = np.concatenate(reals)
        self._kernels = [None if c is None else c.kernel for c in (compiled[i] for i in order)]
        self._hinges = [hooks[i].hinge_force if hinged[i] else None for i in order]
        self._tables: dict = {}  # scalar type -> rows with that type's kernel addresses
        # runs of consecutive rows (base to tips) filled the same way
        runs: list = []
        for j, i in enumerate(order):
            kind = "python" if compiled[i] is None else "compiled"
            if runs and runs[-1][0] == kind:
                runs[-1][1].append(j)
            else:
                runs.append((kind, [j]))
        self.runs = [(kind, np.array(ix, dtype=np.int64)) for kind, ix in runs]
        self.all_compiled = all(kind == "compiled" for kind, _ in self.runs)
        #: every body a :class:`~sko.bodies.rigid.RigidBody` itself (not a subclass: its parameters
        #: or node may differ) with a compiled state: what the compiled regressors take
        self.plain_rigid = bool(body) and self.all_compiled and all(type(b) is RigidBody for b in body)
        self._unchecked = frozenset(i for i, b in enumerate(body) if compiled[i] is None and not valid_by_construction(b))
        self._root = root_attachment(system.gravity)
        # hinge forces computed in Python per state (the engine adds them): of bodies without a
        # compiled one, and of the tendons
        self.python_hinge_bodies = tuple(b.name for i, b in enumerate(body)
                                         if type(b).hinge_force is not BodyType.hinge_force and not hinged[i])
        self.hinge_forces = bool(system.tendons) or bool(self.python_hinge_bodies)
        #: any hinge force at all, compiled or in Python (a tendon, a body type overriding ``hinge_force``)
        self.any_hinge_force = bool(system.tendons) or any(type(b).hinge_force is not BodyType.hinge_force for b in body)
        # reading a model (see model): where each block and the stacked a, b sit in the data buffer
        self._weight_blocks = tuple((int(self.weight_offsets[i]), int(m[parent[i]]), int(m[i])) if parent[i] >= 0
                                    else (-1, 0, 0) for i in range(N))
        self._H_blocks = tuple((int(self.H_offsets[i]), int(n[i]), int(m[i])) for i in range(N))
        self._M_blocks = tuple((int(self.M_offsets[i]), int(m[i])) for i in range(N))
        self._a_index, self._b_index = (np.concatenate([np.arange(o, o + k) for o, k in zip(off, m)] or [np.zeros(0)])
                                        .astype(np.intp) for off in (self.a_offsets, self.b_offsets))
        self._templates: dict = {}  # scalar type -> (first model, its compiled form or None/False)

    @cached_property
    def local_plan(self) -> LocalPlan:
        """The plan of the compiled local derivatives (:func:`sko.engine.local_derivatives.plan`,
        DERIVATIVES.md §9), made on first use."""
        return plan(self)

    @cached_property
    def local_call(self):
        """The prepared one-state call of the compiled local derivatives
        (:func:`sko.engine.local_derivatives.one_state_call`; every body compiled), made on first use."""
        return one_state_call(self)

    @cached_property
    def local_forward(self):
        """The prepared forward step of the compiled local derivatives at one state
        (:func:`sko.engine.local_derivatives.forward_call`: ``call(D, X) -> bool``), made on first use."""
        return forward_call()

    @cached_property
    def local_address(self) -> int:
        """The address of the compiled local derivatives at one state, which their batches call
        (:func:`sko.engine.local_derivatives.one_state_address`), made on first use."""
        return one_state_address(self)

    def state_entries(self) -> np.ndarray:
        """The positions in an arena of the node states (the data buffer, ``𝒱``, the records and
        the potentials): what a body's Python ``at_state`` writes too."""
        nodes = int(self.V_offsets.min(initial=self.root_offset))
        return np.r_[0: self.flat.size, nodes: self.root_offset]

    def table(self, dtype) -> np.ndarray:
        """The state table with the addresses of the bodies' kernels for arenas of ``dtype``
        (compiled or loaded from the cache on first use); 0 for a body without one."""
        dtype = np.dtype(dtype)
        rows = self._tables.get(dtype)
        if rows is None:
            rows = self.rows.copy()
            rows[:, Row.KERNEL] = [0 if k is None else self._address(j, dtype) for j, k in enumerate(self._kernels)]
            if self.checked.any():
                rows[self.rows[:, Row.CHECK] >= 0, Row.CHECKER] = checker_address(dtype)
            if any(k is not None and k.calls_hinge for k in self._kernels):
                from sko.engine.bodies.rigid import hinge_address

                rows[:, Row.JOINT] = hinge_address(dtype)
            for j, h in enumerate(self._hinges):
                if h is not None:
                    rows[j, Row.HINGE] = hook_address(self.system.body(self.bodies[self.order[j]]), h, dtype)
            self._tables[dtype] = rows  # writeable, as every array a kernel takes (a second compile otherwise)
            if self.checked.any():  # once per scalar type: the checked kernels alone at random states
                try:
                    validate(self, dtype)
                except BaseException:
                    del self._tables[dtype]
                    raise
        return rows

    def _address(self, j: int, dtype) -> int:
        """The address of the kernel of row ``j`` for ``dtype``; its errors name the body."""
        try:
            return self._kernels[j].address(dtype)
        except KernelError as exc:
            body = self.system.body(self.bodies[self.order[j]])
            raise KernelError(f"body {body.name!r} ({type(body).__name__}): {exc}") from exc.__cause__

    # ------------------------------------------------------------------ filling
    def fill(self, Q: np.ndarray, QD: np.ndarray, batched: bool = False) -> np.ndarray:
        """The arena ``(B, L)`` at the checked 2-D states ``Q``, ``QD`` (module docstring); with
        ``batched``, an error for one state says which."""
        dtype = np.result_type(Q, QD, float)
        A = np.zeros((Q.shape[0], self.size), dtype=dtype)
        A[:, self.q_offset: self.q_offset + Q.shape[1]] = Q
        A[:, self.v_offset: self.v_offset + QD.shape[1]] = QD
        for kind, ix in self.runs:
            if kind == "compiled":
                status = np.full(Q.shape[0], -1, dtype=np.int64)
                fill_batch(self.table(dtype), self.reals, A, int(Terms.POSE), int(ix[0]), int(ix[-1]) + 1, status)
                bad = np.flatnonzero(status >= 0)
                if bad.size:
                    with state_named(int(bad[0]) if batched else None):
                        self.raise_rejected(int(status[bad[0]]), Q[bad[0]], QD[bad[0]])
            else:  # a body's terms that overflow are reported by the caller, as the reference path does
                Qr, QDr = read_only(Q), read_only(QD)  # Q may be the caller's array: a body gets no write access
                with np.errstate(over="ignore", invalid="ignore"):
                    for s in range(Q.shape[0]):
                        with state_named(s if batched else None):
                            for j in ix:
                                self._python_state(int(self.order[j]), Qr[s], QDr[s], A[s])
        return A

    def raise_rejected(self, row: int, q: np.ndarray, qd: np.ndarray):
        """Raise the error of a state the state kernel of the body of row ``row`` rejected (or
        whose outputs its checks refused): the one the bodies' Python states raise there (a
        joint's own error, a zero quaternion), or, if they accept it, a
        :class:`~sko.engine.state_kernels.KernelError` naming the body and the field, or carrying the
        kernel's own exception (:func:`~sko.engine.kernel_checks.diagnose`)."""
        self.system.node_states(read_only(q), read_only(qd))  # raises the body's own error
        diagnose(self, row, q, qd)

    def attachment(self, a: np.ndarray, offset: int, m: int) -> Attachment:
        """The attachment record at ``offset`` of a state's arena row ``a``."""
        return Attachment(Gamma=a[offset + Record.SIZE: offset + record_size(m)].reshape(6, m),
                          gamma=a[offset + Record.gamma: offset + Record.gamma + 6],
                          rotation=a[offset + Record.rotation: offset + Record.rotation + 9].reshape(3, 3),
                          position=a[offset + Record.position: offset + Record.position + 3],
                          velocity=a[offset + Record.velocity: offset + Record.velocity + 6])

    def frame_poses(self, A: np.ndarray, i: int) -> tuple[np.ndarray, np.ndarray]:
        """``(R, p)`` of body ``i``'s own frame in every arena of ``A``: ``(B, 3, 3)``, ``(B, 3)``."""
        o = self.attachment_offsets[(i, None)]
        return (A[:, o + Record.rotation: o + Record.rotation + 9].reshape(-1, 3, 3),
                A[:, o + Record.position: o + Record.position + 3])

    def _python_state(self, i: int, q: np.ndarray, qd: np.ndarray, a: np.ndarray) -> None:
        system, k = self.system, self.bodies[i]
        b = system.body(k)
        p = self.parent[i]
        if p < 0:
            inboard = self._root
        else:
            inboard = self.attachment(a, self.rows[self.row_of[i], Row.INBOARD], int(self.node_dims[p]))
        s = b.at_state(q[system.q_slices[k]], qd[system.dof_slices[k]], inboard, system.gravity)
        m, n = int(self.node_dims[i]), int(self.dof_dims[i])
        if i in self._unchecked:
            check_node_state(b, s, real=a.dtype.kind == "f")
        if p < 0:  # E(k) of a base body (CENTROIDAL.md, Eq. 1)
            e = self.E_offsets[i]
            a[e: e + 6 * m] = np.asarray(s.E).ravel()
        else:
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
            a[r + Record.SIZE: r + record_size(m)] = np.asarray(att.Gamma).ravel()
            a[r + Record.gamma: r + Record.gamma + 6] = att.gamma
            a[r + Record.rotation: r + Record.rotation + 9] = np.asarray(att.rotation).ravel()
            a[r + Record.position: r + Record.position + 3] = att.position
            a[r + Record.velocity: r + Record.velocity + 6] = att.velocity

    # ------------------------------------------------------------------ reading
    def model(self, a: np.ndarray) -> tuple[SKOModel, np.ndarray, np.ndarray]:
        """The :class:`SKOModel` and stacked ``a``, ``b`` of one state's arena row.

        The model's blocks are read-only views of one copy of the row's flat data buffer (``a``
        and ``b`` slots zeroed), which also becomes the buffer of its compiled form
        (:meth:`~sko.engine.model.CompiledModel.with_data`): the first model of a
        scalar type is built and checked by :class:`SKOModel`, later ones share its structure
        (:meth:`SKOModel.with_blocks`), so a state costs no per-block copy or check."""
        data = a[: self.flat.size].copy()
        a_vec, b_vec = data[self._a_index], data[self._b_index]
        data[self._a_index] = 0
        data[self._b_index] = 0
        blocks = data.view()
        blocks.setflags(write=False)
        template = self._templates.get(data.dtype)
        if template is None:
            model = self._templates[data.dtype] = (self._checked_model(blocks), None)
            return model[0], a_vec, b_vec
        first, compiled = template
        weights = [None if o < 0 else blocks[o: o + r * c].reshape(r, c) for o, r, c in self._weight_blocks]
        H = [blocks[o: o + r * c].reshape(r, c) for o, r, c in self._H_blocks]
        M = [blocks[o: o + r * r].reshape(r, r) for o, r in self._M_blocks]
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


def _compiled_state(body):
    """The body's compiled state (:func:`sko.engine.bodies.compiled_state`); what it raises becomes
    a :class:`~sko.bodies.contract.BodyError` naming the body (never a silent fallback to its
    Python state)."""
    try:
        return compiled_state(body)
    except SKOError:
        raise
    except Exception as exc:
        raise BodyError(f"body {body.name!r} ({type(body).__name__}): compiled_state() raised "
                        f"{type(exc).__name__}: {exc}") from exc


def read_only(x: np.ndarray) -> np.ndarray:
    """A read-only view of ``x`` (the states handed to a body's Python code, as the reference
    path hands it its checked read-only copies)."""
    x = x.view()
    x.flags.writeable = False
    return x


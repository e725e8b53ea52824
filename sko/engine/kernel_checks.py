"""A body type's compiled state checked against the contract its ``at_state`` keeps (BODIES.md,
*The contract for a new body type*; :mod:`sko.engine.state_kernels`, *Checks*).

:func:`validate` runs once per system and scalar type, when the engine first makes the state
table of that type: at a few random states (each body's ``random_configuration``, random
velocities), every checked kernel runs alone on an arena holding its inputs (its ``q``, ``v``,
the record it hangs from, the inertial frame's record, the scratch) and a sentinel everywhere
else. A kernel is refused (:class:`~sko.engine.state_kernels.KernelError`, naming the body, the kernel
and the field) when it raises or rejects a state its ``at_state`` accepts, writes outside the
entries the layout gives its body, leaves one of them unwritten (the record of its own frame,
say), writes a number that is not finite, an ``M`` that is not symmetric positive definite or an
``H`` without full row rank, or reads past its constants (its outputs turn NaN when the entries
after them are NaN). It is also refused when it indexes past the arena (it runs bounds-checked
first, :meth:`~sko.engine.state_kernels.StateKernel.python_callable`), when asked for
``Terms.STRUCTURE`` or ``MOTION`` it leaves unwritten, or writes other numbers in, an output the
requests of that level read (:data:`LEVELS`), when, declaring ``rates``, it writes at
``Terms.RATES`` (the last call's ``q``, other velocities) other velocity terms than a call at
every output does, and when its outputs change with what the arena's scratch held before it ran
(it reads its scratch before writing it).

:func:`diagnose` explains a state a kernel rejected, or whose outputs the engine's per-state
checks (:func:`~sko.engine.state_kernels.checked_outputs`) refused, the same way; a kernel that raised
is run once more through numba's Python wrapper (compiled only then), so its exception and its
message surface, chained to the error.

:func:`node_outputs` reads one body's outputs from a filled arena (for these checks and the
``kernel_consistency`` check of :mod:`sko.verify`).
"""

from __future__ import annotations

import numpy as np

from sko.engine.state_kernels import ROOT_SIZE, KernelError, Record, Row, Terms, fill_batch
from sko.graphs.arrays import check_full_row_rank, check_spd
from sko.graphs.errors import SKOError

__all__ = ["validate", "diagnose", "node_outputs", "slots", "STATES"]

#: Random states each checked kernel runs at, once per system and scalar type.
STATES = 3
#: What an arena holds where a kernel under check must write (a number no state computes).
SENTINEL = -7.346810452783e301
#: Entries appended after a body's constants to see whether its kernel reads past them.
_PROBE = 64


def slots(layout, i: int) -> list[tuple[str, int, int]]:
    """``(field, start, size)`` of each output of body ``i`` in an arena of ``layout`` (a
    :class:`~sko.engine.state_layout.StateLayout`): the entries its state writes."""
    m, n, p = int(layout.node_dims[i]), int(layout.dof_dims[i]), int(layout.parent[i])
    out = []
    if layout.E_offsets[i] >= 0:
        out.append(("E", int(layout.E_offsets[i]), 6 * m))
    if p >= 0:
        out.append(("weight φ", int(layout.weight_offsets[i]), int(layout.node_dims[p]) * m))
    out += [("H", int(layout.H_offsets[i]), n * m), ("M", int(layout.M_offsets[i]), m * m),
            ("a", int(layout.a_offsets[i]), m), ("b", int(layout.b_offsets[i]), m), ("V", int(layout.V_offsets[i]), m),
            ("potential", int(layout.potential_offsets[i]), 1)]
    body = layout.system.body(layout.bodies[i])
    for name in body.attachment_names:
        out.append((_record_name(name), int(layout.attachment_offsets[(i, name)]), int(Record.SIZE) + 6 * m))
    return out


def _record_name(name) -> str:
    return "the record of its own frame" if name is None else f"the record of attachment {name!r}"


def node_outputs(layout, a: np.ndarray, i: int) -> dict:
    """Body ``i``'s outputs in the filled arena row ``a``: ``E`` (m × 6), ``H``, ``M``, ``a``,
    ``b``, ``V``, ``potential`` and, per attachment name, its :class:`~sko.bodies.contract.Attachment`."""
    m, n, p = int(layout.node_dims[i]), int(layout.dof_dims[i]), int(layout.parent[i])
    if layout.E_offsets[i] >= 0:
        E = a[layout.E_offsets[i]: layout.E_offsets[i] + 6 * m].reshape(m, 6)
    else:  # a view of the weight: E(r, c) = φ(c, r)
        mp, w = int(layout.node_dims[p]), layout.weight_offsets[i]
        E = a[w: w + mp * m].reshape(mp, m)[:6].T
    out = {"E": E, "H": a[layout.H_offsets[i]: layout.H_offsets[i] + n * m].reshape(n, m),
           "M": a[layout.M_offsets[i]: layout.M_offsets[i] + m * m].reshape(m, m),
           "a": a[layout.a_offsets[i]: layout.a_offsets[i] + m], "b": a[layout.b_offsets[i]: layout.b_offsets[i] + m],
           "V": a[layout.V_offsets[i]: layout.V_offsets[i] + m], "potential": a[layout.potential_offsets[i]]}
    body = layout.system.body(layout.bodies[i])
    out["attachments"] = {name: layout.attachment(a, layout.attachment_offsets[(i, name)], m)
                          for name in body.attachment_names}
    return out


# ----------------------------------------------------------------------------- running one row
def _arena(layout, q: np.ndarray, qd: np.ndarray, dtype) -> np.ndarray:
    """A fresh arena holding the state and the inertial frame's record (``γ = −a_g``, ``R = I``),
    as a fill finds them: a base body's fill writes that record again, with the same numbers."""
    A = np.zeros(layout.size, dtype=dtype)
    o = layout.root_offset
    A[o + Record.gamma + 3: o + Record.gamma + 6] = -np.asarray(layout.system.gravity, dtype=float)
    A[o + Record.rotation: o + Record.rotation + 9] = np.eye(3).ravel()
    A[layout.q_offset: layout.q_offset + q.size] = q
    A[layout.v_offset: layout.v_offset + qd.size] = qd
    return A


def _run(table: np.ndarray, reals: np.ndarray, A: np.ndarray, j: int, terms: Terms = Terms.POSE) -> int:
    """Row ``j``'s compiled state (``terms``: all by default; constants too) on the arena ``A``
    (1-D): its status."""
    status = np.full(1, -1, dtype=np.int64)
    fill_batch(table, reals, A.reshape(1, -1), int(terms), j, j + 1, status)
    return int(status[0])


def _advance(layout, P: np.ndarray, j: int, q, qd, table: np.ndarray) -> None:
    """Row ``j``'s state written into ``P`` as a fill writes it (compiled or in Python)."""
    i = int(layout.order[j])
    if layout.compiled[i] is None:
        layout._python_state(i, q, qd, P)
    elif _run(table, layout.reals, P, j) >= 0:
        layout.raise_rejected(j, q, qd)


def _replay(layout, j: int, X: np.ndarray, table: np.ndarray):
    """``(returned, exception)`` of row ``j``'s kernel run through numba's Python wrapper,
    bounds-checked (:meth:`~sko.engine.state_kernels.StateKernel.python_callable`), on a copy of
    ``X`` (its exception and message reach Python); the constants are followed by :data:`_PROBE`
    NaNs, so a kernel reading a few past its own is told by :func:`_check_constants`."""
    kernel = layout._kernels[j]
    reals = np.concatenate([layout.reals, np.full(_PROBE, np.nan)])
    try:
        return bool(kernel.python_callable()(X.copy(), table[j].copy(), reals, int(Terms.POSE), True)), None
    except Exception as exc:  # the kernel's own error, whatever its type
        return False, exc


def _owner(layout, k: int) -> str:
    """What entry ``k`` of an arena holds."""
    for i, name in enumerate(layout.bodies):
        for field, start, size in slots(layout, i):
            if start <= k < start + size:
                return f"{field} of body {name!r}"
    regions = ((layout.q_offset, layout.system.q_size, "the state q"), (layout.v_offset, layout.dof_size, "the state v"),
               (layout.root_offset, ROOT_SIZE, "the inertial frame's record"))
    for start, size, what in regions:
        if start <= k < start + size:
            return what
    return "no output"


class _Row:
    """Row ``j``'s body, kernel and message prefix."""

    def __init__(self, layout, j: int):
        self.j, self.i = j, int(layout.order[j])
        self.body = layout.system.body(layout.bodies[self.i])
        self.kernel = layout._kernels[j]
        self.name = (f"body {self.body.name!r} ({type(self.body).__name__}), state kernel "
                     f"{getattr(self.kernel, 'name', None)!r}")


def _check_row(layout, j: int, P: np.ndarray, table: np.ndarray, where: str, probe: bool) -> bool:
    """Row ``j``'s kernel alone on the inputs it finds in ``P`` (the rows before it filled) and
    the sentinel elsewhere (module docstring); a :class:`KernelError` for what it breaks, False
    when it rejects the state without raising, True when all holds."""
    r = _Row(layout, j)
    row = table[j]
    X = np.full(layout.size, SENTINEL, dtype=P.dtype)
    inbound = int(Record.SIZE) + 6 * int(row[Row.INBOARD_DIM])
    for start, size in ((layout.q_offset, layout.system.q_size + layout.dof_size), (layout.root_offset, ROOT_SIZE),
                        (int(row[Row.INBOARD]), inbound), (layout.scratch_offset, layout.size - layout.scratch_offset)):
        X[start: start + size] = P[start: start + size]
    before = X.copy()
    _returned(layout, r, before, table, where)  # bounds-checked first: an index past the arena raises there
    failed = _run(table, layout.reals, X, j) >= 0
    fields = slots(layout, r.i)
    unwritten = [(field, start, size, np.flatnonzero(X[start: start + size] == SENTINEL))
                 for field, start, size in fields]
    unwritten = [u for u in unwritten if u[3].size]
    # a kernel that stopped before writing everything raised or rejected the state: ask it which
    # (its faults in what it wrote need no second compilation of it)
    if failed and unwritten and not _returned(layout, r, before, table, where):
        return False
    own = np.zeros(layout.size, dtype=bool)
    for _, start, size in fields:
        own[start: start + size] = True
    own[layout.scratch_offset:] = True
    changed = ~((X == before) | (np.isnan(X) & np.isnan(before)))
    outside = np.flatnonzero(changed & ~own)
    if outside.size:
        more = f" and {outside.size - 1} more" if outside.size > 1 else ""
        raise KernelError(f"{r.name} writes outside its body's entries of the arena: entry {outside[0]} "
                          f"({_owner(layout, int(outside[0]))}){more} ({where})")
    for field, _, size, entries in unwritten:
        raise KernelError(f"{r.name} does not write {field} (entry {entries[0]} of its {size} there) ({where})")
    _check_outputs(r, node_outputs(layout, X, r.i), where)
    if failed and not _returned(layout, r, before, table, where):
        return False
    if probe:
        _check_constants(layout, r, table, before, where)
        _check_levels(layout, r, table, before, X, fields, where)
        _check_rates(layout, r, table, before, X, fields, where)
        _check_scratch(layout, r, table, before, X, fields, where)
    return True


#: The outputs a request reading each level of :data:`~sko.engine.state_kernels.Terms` below
#: ``POSE`` takes from a kernel (the fields of :func:`slots`).
LEVELS = {Terms.STRUCTURE: ("E", "weight φ", "H", "M"), Terms.MOTION: ("E", "weight φ", "H", "M", "a", "b", "V")}


def _differs(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The entries where ``x`` and ``y`` differ beyond rounding (both NaN: equal)."""
    scale = 1.0 + np.abs(y).max(initial=0.0)
    with np.errstate(invalid="ignore"):
        return np.flatnonzero(~((np.abs(x - y) <= 1e-12 * scale) | (np.isnan(x) & np.isnan(y))))


def _check_levels(layout, r: _Row, table: np.ndarray, before: np.ndarray, full: np.ndarray, fields: list,
                  where: str) -> None:
    """Row ``r``'s kernel at each level of :data:`LEVELS` on the same inputs (module docstring):
    it writes what the requests of that level read, the numbers it writes when asked for all."""
    for level, names in LEVELS.items():
        X = before.copy()
        if _run(table, layout.reals, X, r.j, level) >= 0:
            raise KernelError(f"{r.name} rejects at Terms.{level.name} a state it accepts when asked for every "
                              f"output ({where})")
        for field, start, size in fields:
            if field not in names:
                continue
            unwritten = np.flatnonzero(X[start: start + size] == SENTINEL)
            if unwritten.size:
                raise KernelError(f"{r.name} does not write {field} when asked for Terms.{level.name} (entry "
                                  f"{unwritten[0]} of its {size} there), which the requests of that level read "
                                  f"({where})")
            bad = _differs(X[start: start + size], full[start: start + size])
            if bad.size:
                raise KernelError(f"{r.name} writes {field} at Terms.{level.name} other than when asked for every "
                                  f"output (entry {bad[0]} of its {size}) ({where})")


def _check_rates(layout, r: _Row, table: np.ndarray, before: np.ndarray, full: np.ndarray, fields: list,
                 where: str) -> None:
    """Row ``r``'s kernel, when it declares ``rates``, at ``Terms.RATES`` after its call at every
    output (``full``) with other velocities (its ``θ̇`` and the velocity of the record it hangs
    from): it writes ``a``, ``b``, ``V`` and its records' ``γ`` and velocity as a call at every
    output with those velocities does (module docstring): what it leaves depends on ``q`` alone."""
    if not getattr(r.kernel, "rates", False):
        return
    row, rng = table[r.j], np.random.default_rng(r.j)
    moved = [(int(row[Row.V]), int(row[Row.NV]))]
    if row[Row.PARENT] >= 0:  # the inertial frame's record never moves
        moved.append((int(row[Row.INBOARD]) + int(Record.velocity), 6))
    expected, X = before.copy(), full.copy()
    for start, size in moved:
        expected[start: start + size] = X[start: start + size] = before[start: start + size] + rng.uniform(-1, 1, size)
    if _run(table, layout.reals, expected, r.j) >= 0:
        return  # the other velocities are outside its domain: nothing to compare
    if _run(table, layout.reals, X, r.j, Terms.RATES) >= 0:
        raise KernelError(f"{r.name} declares rates=True but rejects at Terms.RATES a state it accepts when asked "
                          f"for every output ({where})")
    for field, start, size in fields:
        if field in ("a", "b", "V"):
            parts = [(0, size, field)]
        elif field.startswith("the record"):
            parts = [(int(Record.gamma), 6, f"γ of {field}"), (int(Record.velocity), 6, f"velocity of {field}")]
        else:  # what depends on q alone
            continue
        for o, n, what in parts:
            bad = _differs(X[start + o: start + o + n], expected[start + o: start + o + n])
            if bad.size:
                raise KernelError(f"{r.name} declares rates=True but writes {what} at Terms.RATES other than when "
                                  f"asked for every output with the same velocities (entry {bad[0]} of its {n}): "
                                  f"it depends on the velocities, which RATES changes ({where})")


def _check_scratch(layout, r: _Row, table: np.ndarray, before: np.ndarray, full: np.ndarray, fields: list,
                   where: str) -> None:
    """Row ``r``'s kernel with other numbers in the arena's scratch: its outputs must not change
    (a kernel reading its scratch before writing it answers by what the last call left there)."""
    X = before.copy()
    X[layout.scratch_offset:] = 0.5
    if _run(table, layout.reals, X, r.j) >= 0:
        raise KernelError(f"{r.name} rejects the state when the arena's scratch holds other numbers: it reads its "
                          f"scratch before writing it ({where})")
    for field, start, size in fields:
        bad = _differs(X[start: start + size], full[start: start + size])
        if bad.size:
            raise KernelError(f"{r.name} reads its scratch before writing it: its {field} (entry {bad[0]} of its "
                              f"{size}) depends on what the scratch held ({where})")


def _returned(layout, r: "_Row", before: np.ndarray, table: np.ndarray, where: str) -> bool:
    """What row ``r``'s kernel returns on a copy of the arena ``before`` (:func:`_replay`); a
    :class:`KernelError` chaining its exception when it raises."""
    returned, exc = _replay(layout, r.j, before, table)
    if exc is not None:
        raise KernelError(f"{r.name} raised {type(exc).__name__}: {exc} ({where})") from exc
    return returned


def _check_outputs(r: _Row, out: dict, where: str) -> None:
    """The outputs as the Python path checks a body's ``at_state`` (``check_node_state``)."""
    fields = [(f, out[f]) for f in ("E", "H", "M", "a", "b", "V", "potential")]
    for name, att in out["attachments"].items():
        fields += [(f"{f} of {_record_name(name)}", getattr(att, f))
                   for f in ("Gamma", "gamma", "rotation", "position", "velocity")]
    for field, x in fields:
        bad = np.flatnonzero(~np.isfinite(np.ravel(x)))
        if bad.size:
            raise KernelError(f"{r.name} wrote {field} with a number that is not finite (NaN or infinity), first at "
                              f"flat index {bad[0]} ({where})")
    try:
        check_spd(np.real(out["M"]), "inertia M", r.body.name)
        check_full_row_rank(np.real(out["H"]), "joint map H", r.body.name)
    except SKOError as exc:
        raise KernelError(f"{r.name}: {exc} ({where})") from None


def _check_constants(layout, r: _Row, table: np.ndarray, before: np.ndarray, where: str) -> None:
    """Row ``j``'s kernel with NaN after its constants: its outputs must not change."""
    row = table[r.j]
    start, size = int(row[Row.CONSTANTS]), int(row[Row.CONSTANTS_SIZE])
    reals = np.concatenate([layout.reals, layout.reals[start: start + size], np.full(_PROBE, np.nan)])
    probed = table.copy()
    probed[r.j, Row.CONSTANTS] = layout.reals.size
    X = before.copy()
    status = _run(probed, reals, X, r.j)
    entries = np.concatenate([np.arange(s, s + n) for _, s, n in slots(layout, r.i)])
    if status >= 0 or not np.isfinite(X[entries]).all():
        raise KernelError(f"{r.name} reads past the {size} constants its body packs: its outputs are not finite "
                          f"when the entries after them are NaN; declare the constants it reads "
                          f"(state_kernel(constants=...)) and pack them all ({where})")


# ----------------------------------------------------------------------------- the two entry points
def _state_text(layout, i: int, q: np.ndarray) -> str:
    return f"q = {np.asarray(q)[layout.system.q_slices[layout.bodies[i]]]}"


def validate(layout, dtype) -> None:
    """Every checked kernel of ``layout`` alone at :data:`STATES` random states of ``dtype``
    (module docstring); the first fault as a :class:`KernelError`."""
    dtype = np.dtype(dtype)
    system = layout.system
    table = layout._tables[dtype]
    checked = layout.checked[layout.order]
    last = int(np.flatnonzero(checked).max())
    rng = np.random.default_rng(0)
    for _ in range(STATES):
        q = np.asarray(system.random_configuration(rng), dtype=float)
        qd = rng.uniform(-1.0, 1.0, system.dof_size)
        if dtype.kind == "c":  # a complex step's states
            q, qd = q + 1e-6j * rng.standard_normal(q.size), qd + 1e-6j * rng.standard_normal(qd.size)
        P = _arena(layout, q, qd, dtype)
        for j in range(last + 1):
            if checked[j]:
                where = f"a random state of {dtype}, {_state_text(layout, int(layout.order[j]), q)}"
                with np.errstate(all="ignore"):
                    accepted = _check_row(layout, j, P, table, where, probe=True)
                if not accepted:
                    _rejected(layout, j, q, qd, where)
            _advance(layout, P, j, q, qd, table)


def _rejected(layout, j: int, q, qd, where: str | None = None):
    """Raise the error of a state row ``j``'s kernel rejected without raising: the bodies' own
    (``at_state`` rejects it too), or a :class:`KernelError` (``where``: a state of the
    validation, named)."""
    q, qd = np.asarray(q).view(), np.asarray(qd).view()
    q.flags.writeable = qd.flags.writeable = False  # a body's Python code gets no write access
    layout.system.node_states(q, qd)
    r = _Row(layout, j)
    raise KernelError(f"the compiled state of body {r.body.name!r} ({type(r.body).__name__}) rejected a state its "
                      f"at_state accepts: {where or _state_text(layout, r.i, q)}")


def diagnose(layout, j: int, q: np.ndarray, qd: np.ndarray):
    """Raise the error of a state (``q``, ``qd``, one state) the kernel of row ``j`` rejected or
    whose outputs the per-state checks refused, once the bodies' ``at_state`` accept it: a
    :class:`KernelError` naming the body, the kernel and the field, or chaining the kernel's own
    exception."""
    dtype = np.result_type(q, qd, float)
    table = layout.table(dtype)
    P = _arena(layout, q, qd, dtype)
    for k in range(j):
        _advance(layout, P, k, q, qd, table)
    where = f"at {_state_text(layout, int(layout.order[j]), q)}"
    with np.errstate(all="ignore"):
        accepted = _check_row(layout, j, P, table, where, probe=False)
    if not accepted:
        _rejected(layout, j, q, qd)
    r = _Row(layout, j)
    raise KernelError(f"{r.name}: its outputs fail the per-state checks (finite, M symmetric positive definite, "
                      f"no zero row of H) ({where})")


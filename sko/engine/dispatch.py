"""The compiled path behind a system's dynamics methods, for one state or a batch of states.

:func:`engine` gives a system's :class:`Engine` (packed once, on first use). :meth:`Engine.run`
answers any request of the catalogue :data:`~sko.engine.requests.REQUESTS` from its declaration:
it takes what the system's method takes — ``q``, ``v`` and the request's third input (``dv`` or
``tau``) as 1-D vectors or with a leading batch axis ``(B, n)`` — checks them (the same errors as
the reference path, before any compiled code runs) and returns the results with the same
leading axis, or ``NotImplemented`` when the reference path must answer: inputs that are not
float64/complex128 (sympy and other object arrays, fractions), or the reference backend forced
by :func:`use_backend`. The common call — one state of float64 vectors, no external
forces — goes first to the request's prepared call :attr:`Engine.one_state` ``[name]``
(:meth:`Engine.one_state_call`), which answers it with the fewest checks, or declines.

A batch is computed without a Python loop over states when every body type has a compiled
state (parallel over chunks of states in numba's threads; forward dynamics of rigid bodies
alone with the states innermost, :mod:`sko.engine.lanes`); otherwise the bodies without one
run their Python ``at_state`` per state and only the recursions are compiled.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import numpy as np

from sko.arrays import checked_array, plain_numbers_as_floats
from sko.engine.backend import BACKEND, COMPILED, get_backend, use_backend
from sko.engine.hooks import hinge_failure
from sko.engine.state_kernels import Record
from sko.graphs.errors import DimensionError, NonFiniteError, NotPositiveDefiniteError
from sko.engine import lanes
from sko.engine import lane_derivatives
from sko.engine import requests as rq
from sko.engine.state_layout import StateLayout, read_only, state_named

__all__ = ["Engine", "prepared_calls", "one_state_kind", "one_state_lines", "ONE_STATE_NAMES", "engine", "use_backend", "backend", "LANE_RUNS"]

#: The requests a float64 batch of rigid trees answers in the lanes (:mod:`sko.engine.lanes`,
#: :mod:`sko.engine.lane_derivatives`), by name: their runs of blocks.
LANE_RUNS = MappingProxyType({**lanes.REQUESTS, **lane_derivatives.RUNS})

_F8 = np.dtype(np.float64)
_NONE = np.zeros(0, dtype=np.int64)  # no state (read only: shared)
_NONE.flags.writeable = False
_FAST = (_F8, np.dtype(np.complex128))


def backend() -> str:
    """``"compiled"`` (default) or ``"reference"``: which path the systems' methods take — the
    one switch of the engine (:func:`sko.engine.use_backend`), so a system and the recursions it
    calls never take different paths."""
    return get_backend()


def engine(system) -> "Engine":
    """The :class:`Engine` of a :class:`~sko.systems.multibody.MultibodySystem` (made on first
    use and cached on it as ``system._engine``, which the dynamics methods read directly)."""
    return system._engine


def _finite(x: np.ndarray) -> bool:
    """Whether every entry of ``x`` is finite; for a large array by its sum, which is finite only
    then (one whose sum overflows takes the checked path), without the mask ``isfinite`` allocates."""
    if x.size <= 512:
        return bool(np.isfinite(x).all())
    with np.errstate(over="ignore", invalid="ignore"):
        return bool(np.isfinite(x.sum()))


def prepared_calls(system, name: str) -> tuple:
    """Request ``name``'s prepared one-state call for ``system`` (:meth:`Engine.one_state_call`),
    where the system's methods did not find it in their table: binds the table
    :attr:`Engine.one_state` to the system as the plain attribute ``_prepared_calls`` (one step to
    read: the engine behind a cached property, and a dict with a ``__missing__``, took two dozen
    nanoseconds more per call) and fills it."""
    engine = system._engine
    system._prepared_calls = engine.one_state
    return engine.one_state_call(name)


def one_state_kind(velocities: bool, x) -> str:
    """The kind of a request's one-state call (:func:`one_state_lines`): ``"third"`` with a third
    input ``x``, ``"velocities"`` reading ``v`` alone, else ``"configuration"``."""
    return "third" if x else "velocities" if velocities else "configuration"


def one_state_lines(kind: str, key: str, q: str, v: str = "v", x: str = "x", result: str = "out",
                    guard: str = "", indent: str = "    ", engine: str = "self") -> list[str]:
    """The source lines that run a request's prepared one-state call (:meth:`Engine.one_state_call`) inline,
    returning ``result`` (an expression of ``out``) when it answers: ``kind`` ``"configuration"``
    (on ``q`` alone), ``"velocities"`` (``q`` and ``v``) or ``"third"`` (``q``, ``v`` and ``x``),
    the inputs' names, the request's name as the expression ``key``, a condition ``guard`` (ending
    in ``and``) and the ``engine`` (``"self"``: a system's method, which reads the table its
    first call binds, :func:`prepared_calls`). They read the names of :data:`ONE_STATE_NAMES`
    and bind ``out`` and names that begin with an underscore."""
    i = indent
    if kind == "configuration":
        call = [f"{i}        if {q}.dtype is F8 and {q}.ndim == 1 and _c(_w, {q}, out := zeros(_shape)) == -1:",
                f"{i}            return {result}"]
    elif kind == "velocities":
        call = [f"{i}        if {q}.dtype is F8 and {q}.ndim == 1:",
                f"{i}            if {v} is None:",
                f"{i}                if _c(_w, {q}, out := zeros(_shape)) == -1:",
                f"{i}                    return {result}",
                f"{i}            elif {v}.dtype is F8 and {v}.ndim == 1 and _d(_w, {q}, {v}, _none, out := zeros(_shape)) == -1:",
                f"{i}                return {result}"]
    else:
        call = [f"{i}        _v, _x = _z if {v} is None else {v}, _z if {x} is None else {x}",
                f"{i}        if ({q}.dtype is F8 and _v.dtype is F8 and _x.dtype is F8 and {q}.ndim == 1 and _v.ndim == 1",
                f"{i}                and _x.ndim == 1 and _d(_w, {q}, _v, _x, out := zeros(_shape)) == -1):",
                f"{i}            return {result}"]
    if engine == "self":  # a system's method: its table, bound on first use (prepared_calls)
        table, missing, errors = "self._prepared_calls", f"prepared_calls(self, {key})", "(AttributeError, KeyError)"
    else:
        table, missing, errors = f"{engine}.one_state", f"{engine}.one_state_call({key})", "KeyError"
    entries = "_c, _d, _w, _shape, _z, _none"
    return [f"{i}try:",
            f"{i}    {entries} = {table}[{key}]",
            f"{i}except {errors}:",
            f"{i}    {entries} = {missing}",
            f"{i}if {guard}chosen() is COMPILED:",
            f"{i}    try:",
            *call,
            f"{i}    except (AttributeError, TypeError):  # not an array",
            f"{i}        pass"]


def _direct_calls() -> dict:
    """:meth:`Engine.direct` by kind of request, from :func:`one_state_lines`."""
    calls = {}
    for kind in ("configuration", "velocities", "third"):
        namespace = dict(ONE_STATE_NAMES)
        source = "\n".join(["def direct(engine, name, q, v, x):",
                            *one_state_lines(kind, "name", "q", engine="engine"), "    return None"])
        exec(compile(source, f"<one state: {kind}>", "exec"), namespace)  # noqa: S102 - the lines above
        calls[kind] = namespace["direct"]
    return calls


def _entry(driver):
    """The Python entry of ``driver``'s machine code (a one-state driver, compiled for one
    signature: :func:`~sko.engine.requests.one_state_driver`), called without numba's
    dispatcher, which would look up the overload of the arguments' types first (a fifth of a
    microsecond per call). The entry converts each argument to the type its signature declares
    and checks only that it is an array (else ``TypeError``): the caller passes 1-D float64
    arrays and nothing else, a float64 array of other dimensions or another scalar type would be
    misread (:meth:`Engine.one_state_call` tests both)."""
    (result,) = driver.overloads.values()
    return result.entry_point


def _declined_status(*arguments) -> int:
    """The status of a call an engine does not prepare: not −1, so the checked path answers."""
    return 0


#: the empty ``x`` of a request without one, and the entries of an engine without prepared calls
_NO_X = read_only(np.zeros(0))
_DECLINED = (_declined_status, _declined_status, None, (0,), _NO_X, _NO_X)
#: the names the lines of :func:`one_state_lines` read
ONE_STATE_NAMES = MappingProxyType({"chosen": BACKEND.get, "COMPILED": COMPILED, "F8": _F8, "zeros": np.zeros,
                                    "prepared_calls": prepared_calls})
#: :meth:`Engine.direct` by kind of request
_DIRECT = _direct_calls()


class Engine:
    """Compiled dynamics of one system (module docstring)."""

    def __init__(self, system):
        self.system = system
        self.nq, self.nv = system.q_size, system.dof_size
        self._direct = False  # the prepared one-state calls apply: every body compiled, no hinge force in Python
        self._zeros = _NO_X  # nv zeros, once a layout is made
        #: the prepared one-state calls by request name (:meth:`one_state_call`)
        self.one_state: dict[str, tuple] = {}
        #: the constraint sets packed for this system (:mod:`sko.constraints.compiled`): by the
        #: identity of a tuple of constraints, and by the constraints' contents
        self.constraint_plans: tuple[dict, dict] = ({}, {})
        self.coordinates_are_velocities = False
        self.layout = None  # the reference path answers: no body, or symbolic parameters
        self._sizes = rq.Sizes(0, self.nq, self.nv, 0, 1, 1, 0, 0)  # the shapes of results; a layout's once made
        if not system.bodies or not _numeric(system.gravity):  # sympy gravity: the reference path
            return
        self.layout = L = StateLayout(system)  # a body's bad compiled state is an error naming it
        self._vectors: dict = {}  # (request name, scalar type, whether it names kernels) -> request vector
        self._sizes = rq.sizes(L)
        self.coordinates_are_velocities = _coordinates_are_velocities(system, L)
        self._direct = L.all_compiled and not L.hinge_forces
        self._zeros = np.zeros(self.nv)
        self._lane_sizes: np.ndarray | None = None  # the lane kernel's sizes, or none (:meth:`_lanes`)

    def _request_vector(self, request: rq.Request, dtype, kernels: bool = True) -> np.ndarray:
        """The request vector of ``request`` in ``dtype`` (:mod:`sko.engine.requests`; without
        ``kernels``, one that names no kernel), made on first use and reused: compiled calls hold
        the GIL, so one call at a time writes its workspace."""
        key = (request.name, dtype.char, kernels)
        w = self._vectors.get(key)
        if w is None:
            w = self._vectors[key] = rq.request_vector(request, self.layout, dtype, kernels=kernels)
        return w

    # ------------------------------------------------------------------ input checks
    def _vector(self, x, name: str, size: int, symbol: str):
        """``x`` as a float64/complex128 array of shape ``(size,)`` or ``(B, size)``, or None when
        the reference path must take it (other scalar types); the reference path's errors."""
        if not (type(x) is np.ndarray and x.dtype in _FAST and x.ndim in (1, 2) and x.shape[-1] == size
                and _finite(x)):
            x = plain_numbers_as_floats(checked_array(x, (1, 2), name), name)
            _check_length(x, name, size, symbol)
            if x.dtype not in _FAST:  # object entries (sympy, fractions); other numbers came as float64
                return None
        return x

    def _inputs(self, q, qd, x=None, xname: str = "", forces: Mapping | None = None):
        """Checked ``(Q, QD, X, batched, forces)``: the vectors with a leading batch axis, one
        scalar type, C-ordered and writeable (what the kernels are compiled for; never the
        caller's read-only or strided array), and the checked external ``forces`` by body; None
        for the reference path. The forces (checked after the vectors, as the reference path
        does) take part in the scalar type: a complex force makes a float state complex, an
        object one sends it to the reference path. A missing ``v`` or ``x`` is zero; without
        ``xname`` (a request without a third input), ``X`` has no columns."""
        if get_backend() != "compiled" or self.layout is None:
            return None
        Q = self._vector(q, "q", self.nq, "nq")
        if Q is None:
            return None
        batched = Q.ndim == 2
        QD = None if qd is None else self._vector(qd, "v", self.nv, "nv")
        X = None if x is None else self._vector(x, xname, self.nv, "nv")
        if (qd is not None and QD is None) or (x is not None and X is None):
            return None
        forces = self.system.external_forces(forces)
        if any(f.dtype not in _FAST for f in forces.values()):
            return None
        B = Q.shape[0] if batched else 1
        dtype = np.result_type(*(v for v in (Q, QD, X) if v is not None), *forces.values())
        out = []
        for v, n, name in ((Q, self.nq, "q"), (QD, self.nv, "v"), (X, self.nv if xname else 0, xname)):
            if v is None:
                v = np.zeros((B, n), dtype=dtype)
            else:
                _same_batch(Q, v, name)
                if v.ndim == 1:
                    v = v[None]
            if not (v.dtype is dtype and v.flags.c_contiguous and v.flags.writeable):  # np.require's test, at
                v = np.require(v, dtype=dtype, requirements=("C", "W"))  # a tenth of its cost when it holds
            out.append(v)
        return (*out, batched, forces)

    # ------------------------------------------------------------------ requests
    def direct(self, name: str, q, v=None, x=None):
        """Request ``name`` (:data:`~sko.engine.requests.REQUESTS`) for the common call, by its
        prepared call :attr:`one_state` ``[name]``: one state of 1-D float64 arrays, no external
        forces, every body compiled. None when it does not apply, or when a shape does not fit or
        an input or the result is not finite: the system's method then takes the checked path,
        which reports it."""
        request = rq.REQUESTS[name]
        return _DIRECT[one_state_kind(request.velocities, request.x)](self, name, q, v, x)

    def one_state_call(self, name: str) -> tuple:
        """Request ``name``'s prepared one-state call, made on first use and held in
        :attr:`one_state`: the tuple ``(configuration, driver, w, shape, zeros, none)`` holds the
        entries of the request's compiled drivers (:func:`~sko.engine.requests.one_state_driver`,
        called at their machine code's entry, :func:`_entry`): ``configuration(w, q, out)`` at
        ``v = 0`` (or on ``q`` alone) and ``driver(w, q, v, x, out)``, each returning the status
        (−1: done); the request vector ``w`` (float64), the result's shape, ``nv`` zeros for an
        omitted ``v`` or ``x`` and the empty ``x`` of a request without one. The system methods
        run it inline (:func:`one_state_lines`, no frame of its own) on one state of 1-D float64
        arrays with no external forces, and :meth:`direct` by the same lines. Its checks cost what
        they must: the compiled backend (one context lookup), ``dtype is float64`` and
        ``ndim == 1`` of each array given (a batch or a complex step declines at once), then the
        driver's compiled code checks the lengths and finiteness; any other status (a wrong
        length, a number that is not finite, an overflow) leaves the call to the checked path
        (:meth:`run`), which reports it. A list or another object declines by the
        ``AttributeError`` of its missing ``dtype`` (or the entry's ``TypeError``: not an array),
        and a float64 array whose dtype is an equal copy of numpy's own (an unpickled array) by
        the identity test. Before its first such state a request holds entries that prepare it
        (and compile its float64 kernels) and then run: a complex step or a batch declines
        without compiling float64 kernels it does not run; an engine without prepared calls (a
        body without a compiled state, a hinge force in Python) holds entries that decline, and
        on the reference backend nothing is held."""
        if BACKEND.get() != COMPILED:  # prepared (and compiled) on the compiled backend only
            return _DECLINED
        entries = self.one_state[name] = self._unprepared(name) if self._direct else _DECLINED
        return entries

    def _unprepared(self, name: str) -> tuple:
        """Request ``name``'s entries until its first state (:meth:`one_state_call`), which prepare it and run."""

        def prepared() -> tuple:
            entries = self.one_state[name] = self._prepared(name)
            return entries

        def configuration(w, q, out) -> int:
            first, _, w, *_ = prepared()
            return first(w, q, out)

        def driver(w, q, v, x, out) -> int:
            _, first, w, *_ = prepared()
            return first(w, q, v, x, out)

        return configuration, driver, None, rq.REQUESTS[name].shape(self._sizes), self._zeros, _NO_X

    def _prepared(self, name: str) -> tuple:
        """The prepared one-state entries of request ``name`` (:meth:`one_state_call`)."""
        request = rq.REQUESTS[name]
        w, shape = self._request_vector(request, _F8), request.shape(self._sizes)
        driver = _entry(rq.one_state_driver(_F8, len(shape))) if request.velocities else _declined_status
        configuration = _declined_status  # a request with x runs its driver at v = 0 too
        if request.x is None:  # at v = 0, or on q alone (ℳ, ℳ⁻¹: any v given is not read)
            configuration = _entry(rq.one_state_driver(_F8, len(shape), velocities=False))
        return configuration, driver, w, shape, self._zeros, _NO_X

    def run(self, name: str, method, q, v=None, x=None, external_forces=None, compiled: bool = True,
            shape=None, **kwargs):
        """Request ``name`` of the catalogue at the states ``q`` (``v``, ``x``: the request's
        other inputs), with the external forces; ``method`` is the system's method answering on
        the reference path (called with the arguments given, ``external_forces`` when given and
        ``kwargs``); the request's ``hinge`` rule says where the hinge forces that run in Python
        go. ``NotImplemented`` for one state the reference path must answer; every state goes
        there when ``compiled`` is false (a kernel that does not take the system).
        ``shape(system)``: one state's result shape on the reference path where the request's
        own may not hold (a system its kernel does not take), for an empty batch's result."""
        request = rq.REQUESTS[name]
        args = {"q": q}
        if request.velocities:
            args["v"] = v
        if request.x is not None:
            args[request.x] = x
        keywords = dict(kwargs)
        if external_forces is not None:
            keywords["external_forces"] = external_forces
        inputs = compiled and self._inputs(q, v if request.velocities else None, x if request.x else None,
                                           request.x or "", external_forces)
        if not inputs:
            return self._reference(method, args, lambda: request.shape(self._sizes) if shape is None
                                   else shape(self.system), **keywords)
        shape = request.shape(self._sizes)
        Q, QD, X, batched, forces = inputs
        hinge = self._hinge_forces(Q, QD, batched) if request.hinge else None
        if hinge is not None and request.hinge == "input":  # θ̈ = ℳ^{-1}(T − 𝒞 − hinge forces)
            X = X - hinge
        out, nonfinite = self._evaluate(request, Q, QD, X, forces, batched, (method, args, keywords))
        out = out.reshape((Q.shape[0], *shape))
        if hinge is not None and request.hinge == "input":  # an overflowing Python hinge force: the reference names it
            nonfinite = np.union1d(nonfinite, np.flatnonzero(~np.isfinite(X).all(axis=1)))
        if hinge is not None and request.hinge == "result":  # T = ℳ θ̈ + 𝒞 + hinge forces
            out, nonfinite = out + hinge, None  # the sum may overflow: _settled looks
        return self._settled(out, batched, method, args, nonfinite, **keywords)

    def _evaluate(self, request: rq.Request, Q, QD, X, forces: dict, batched: bool, call: tuple) -> tuple:
        """Request ``request`` for the checked states and external forces (:meth:`_inputs`): the
        results ``(B, size)`` and the states whose result is not finite (status ``-3``, found by
        the kernels while the result is in cache); ``call`` is ``(method, args, kwargs)`` of the
        system's method, which answers for a state the kernels reject (:meth:`_check`)."""
        L = self.layout
        size = int(np.prod(request.shape(self._sizes)))
        in_lanes = (L.all_compiled and not forces and Q.shape[0] > 1 and request.name in LANE_RUNS
                    and Q.dtype == _F8 and self._lanes())  # their own passes
        whole = in_lanes and request.name in lanes.WHOLE  # every entry written: no zeros to write first
        out = (np.empty if whole else np.zeros)((Q.shape[0], size), dtype=Q.dtype)
        if not Q.shape[0]:  # an empty batch: no arena to fill
            return out, np.zeros(0, dtype=np.int64)
        if L.all_compiled and not forces and Q.shape[0] == 1:
            status = rq.evaluate_one(self._request_vector(request, Q.dtype), Q[0], QD[0], X[0], out[0])
            self._check(status, Q, QD, 0, batched, call)
            return out, np.flatnonzero([status == -3])
        status = np.full(Q.shape[0], -1, dtype=np.int64)
        if L.all_compiled and not forces:
            if in_lanes:
                lanes.evaluate(LANE_RUNS[request.name], self._request_vector(request, Q.dtype, kernels=False), Q, QD, X, out,
                               status, self._lane_sizes)
            else:
                rq.evaluate_batch(self._request_vector(request, Q.dtype), Q, QD, X, np.zeros((0, L.size), dtype=Q.dtype),
                                  out, status)
        else:
            A = L.fill(Q, QD, batched)
            self._apply_forces(A, forces)
            w = rq.request_vector(request, L, Q.dtype, A[0])  # not the shared one: another thread may
            if Q.shape[0] == 1:  # run between the fill and the call
                status[0] = rq.evaluate_one(w, Q[0], QD[0], X[0], out[0])
            else:
                rq.evaluate_batch(w, Q, QD, X, A, out, status)
        if (status == -1).all():  # the common batch: one pass, no index arrays
            return out, _NONE
        bad = np.flatnonzero(status >= 0)
        if bad.size:
            self._check(int(status[bad[0]]), Q, QD, int(bad[0]), batched, call)
        return out, np.flatnonzero(status == -3)

    def _lanes(self) -> bool:
        """Whether a float64 batch of the requests of :data:`LANE_RUNS` (forward and inverse
        dynamics, ℳ, their derivatives) runs with the states innermost (:mod:`sko.engine.lanes`:
        every body a library rigid body); decided once."""
        if self._lane_sizes is None:
            L = self.layout
            applies = lanes.applies(L)
            self._lane_sizes = np.array([L.flat.size, L.riccati_size] if applies else [], dtype=np.int64)
        return self._lane_sizes.size > 0

    def _check(self, status: int, Q: np.ndarray, QD: np.ndarray, s: int, batched: bool, call: tuple) -> None:
        """Raise the error of a state ``s`` the kernels rejected (``status`` ≥ 0): the body's own
        (a joint's), the one naming a body whose compiled hinge force failed
        (:func:`~sko.engine.hooks.hinge_failure`), or the reference path's for a ``D(k)`` that is
        not positive definite (which may be an overflow upstream: the reference names the body
        whose terms overflowed)."""
        if status < 0:
            return
        N = len(self.layout.bodies)
        with state_named(s if batched else None):
            if status < N:
                self.layout.raise_rejected(status, Q[s], QD[s])
            if status >= 2 * N:  # a compiled hinge force failed (sko.engine.hooks)
                i = int(self.layout.order[status - 2 * N])
                hinge_failure(self.system, self.layout.bodies[i], self.layout.hooks[i], Q[s], QD[s])
            self._reference_state(call, s, batched)
            raise NotPositiveDefiniteError(f"hinge inertia D = H P H* of body {self.layout.bodies[status - N]!r} is not "
                                           f"positive definite")

    def _apply_forces(self, A: np.ndarray, forces: dict) -> None:
        """``b(k) −= Γ_kᵀ ᵏX_0^* f^x_k`` for every state (MultibodySystem's module docstring)."""
        L = self.layout
        for k, f in forces.items():
            i = L.index[k]
            m = int(L.node_dims[i])
            r = L.attachment_offsets[(i, None)]
            Gamma = A[:, r + Record.SIZE: r + Record.SIZE + 6 * m].reshape(-1, 6, m)
            R, p = L.frame_poses(A, i)
            n = f[:3] - np.cross(p, f[3:])
            local = np.concatenate([np.einsum("si,sij->sj", n, R), np.einsum("i,sij->sj", f[3:], R)], axis=1)
            o = L.b_offsets[i]
            A[:, o: o + m] -= np.einsum("si,sij->sj", local, Gamma)

    def _hinge_forces(self, Q, QD, batched: bool) -> np.ndarray | None:
        """The hinge forces that run in Python, state by state: the tendons' and those of bodies
        without a compiled hinge force (the requests add the compiled ones); None for none."""
        L = self.layout
        if not L.hinge_forces:
            return None
        out = np.zeros(QD.shape, dtype=np.result_type(Q, QD, float))
        Q, QD = read_only(Q), read_only(QD)  # maybe the caller's arrays: a body's hinge_force gets no write access
        for s in range(Q.shape[0]):
            with state_named(s if batched else None):
                out[s] = self.system._hinge_forces(Q[s], QD[s], L.python_hinge_bodies)
        return out

    @staticmethod
    def _shape(out, batched: bool):
        return out if batched else out[0]

    def _reference(self, method, args: dict, shape, **kwargs):
        """``NotImplemented`` for one state (the caller's reference code answers), the method
        state by state for a batch (object arrays, or the reference backend forced); ``args``
        maps each argument's name to its value, ``shape`` is one state's result shape, or a
        function giving it (the shape of an empty batch's result)."""
        checked = {name: None if x is None else checked_array(x, (1, 2), name) for name, x in args.items()}
        given = [(name, x) for name, x in checked.items() if x is not None]
        if not any(x.ndim == 2 for _, x in given):
            return NotImplemented
        Q = given[0][1]
        for name, x in given:
            size, symbol = (self.nq, "nq") if name == "q" else (self.nv, "nv")
            _check_length(x, name, size, symbol)  # an empty batch has no state to check it
            _same_batch(Q, x, name)
        self.system.external_forces(kwargs.get("external_forces"))  # once for all states, not "state 0"
        rows = []
        for s in range(Q.shape[0]):
            with state_named(s):
                rows.append(method(*(None if x is None else x[s] for x in checked.values()), **kwargs))
        if rows:
            return np.array(rows)
        return np.zeros((0, *(shape() if callable(shape) else shape)), dtype=np.result_type(*(x for _, x in given), float))

    def _settled(self, out: np.ndarray, batched: bool, method, args: dict, nonfinite: np.ndarray | None = None,
                 **kwargs):
        """``out`` (one result per state) once every state's result is finite: a state whose
        compiled result is not finite is answered by the reference path, which names what
        overflowed (a body's terms, the torques) or gives the finite result the kernels could
        not (the reference scales what it normalises). ``nonfinite``: those states when the
        kernels found them (:meth:`_evaluate`), else ``out`` is scanned."""
        bad = np.flatnonzero(~np.isfinite(out).all(axis=tuple(range(1, out.ndim)))) if nonfinite is None else nonfinite
        if bad.size:
            out = out.copy()
            for s in bad:
                with state_named(int(s) if batched else None):
                    value = np.asarray(self._reference_state((method, args, kwargs), int(s), batched))
                    if not np.isfinite(value).all():  # the reference path raises first; never pass it on
                        raise NonFiniteError(f"{method.__name__} overflows (NaN or infinity) at this state")
                    out[s] = value
        return self._shape(out, batched)

    @staticmethod
    def _reference_state(call: tuple, s: int, batched: bool):
        """The system's method on the reference path for state ``s`` (``call`` is ``(method,
        args, kwargs)``; numpy's overflow warnings are silenced: the reference path reports it)."""
        method, args, kwargs = call
        row = [None if x is None else (np.asarray(x)[s] if batched else x) for x in args.values()]
        with use_backend("reference"), np.errstate(over="ignore", invalid="ignore"):
            return method(*row, **kwargs)

    # ------------------------------------------------------------------ energies
    def energies(self, method, q, qd=None, kinetic: bool = True, potential: bool = True):
        """Kinetic and/or potential energies (the ``energy`` request); ``method`` is the system's
        method answering for the reference path."""
        args = {"q": q} if qd is None else {"q": q, "v": qd}
        inputs = self._inputs(q, qd)
        if inputs is None:
            return self._reference(method, args, ())
        Q, QD, X, batched, _ = inputs
        out, _ = self._evaluate(rq.REQUESTS["energy"], Q, QD, X, {}, batched, (method, args, {}))
        out = out[:, 0] * kinetic + out[:, 1] * potential
        return self._settled(out if out.dtype.kind == "c" else out.real, batched, method, args)

    # ------------------------------------------------------------------ kinematics from the arena
    def arena(self, q, qd=None):
        """``(A, batched)``: the filled arenas of the states, or None for the reference path."""
        inputs = self._inputs(q, qd)
        if inputs is None:
            return None
        Q, QD, _, batched, _ = inputs
        return self.layout.fill(Q, QD, batched), batched

    def kinematics(self, method, q, shape: tuple, compute, **kwargs):
        """A configuration-dependent quantity read off the filled arenas of the states:
        ``compute(A)`` gives one result per arena row; ``method`` (the system's, called with
        ``q`` and ``kwargs``) answers on the reference path; ``shape`` is one state's result."""
        got = self.arena(q)
        if got is None:
            return self._reference(method, {"q": q}, shape, **kwargs)
        A, batched = got
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is answered by _settled
            out = compute(A)
        return self._settled(out, batched, method, {"q": q}, **kwargs)

    def jacobian(self, method, q, frame, node, B):
        """``J = ℬ* φ* H*`` of a frame on ``node``, ``B`` mapping ``𝒱(node)`` to the frame's
        velocity (6 × m, or a function of the filled arenas giving it per state, ``(B, 6, m)``),
        from the weights and ``H`` of the arena (``method`` answers for the reference path)."""
        L, tree = self.layout, self.system.tree

        def compute(A):
            J = np.zeros((A.shape[0], 6, self.nv), dtype=A.dtype)
            if node is not None:
                T = B(A) if callable(B) else np.broadcast_to(B, (A.shape[0], *B.shape))
                for j in [node, *tree.ancestors(node)]:
                    i = L.index[j]
                    m, n, h = int(L.node_dims[i]), int(L.dof_dims[i]), L.H_offsets[i]
                    vo = int(L.dof_offsets[i])
                    B_ = A.shape[0]  # not -1: a body without coordinates has n = 0
                    J[:, :, vo: vo + n] = T @ A[:, h: h + n * m].reshape(B_, n, m).transpose(0, 2, 1)
                    p = L.parent[i]
                    if p >= 0:
                        w, mp = L.weight_offsets[i], int(L.node_dims[p])
                        T = T @ A[:, w: w + mp * m].reshape(B_, mp, m).transpose(0, 2, 1)
            return J

        return self.kinematics(method, q, (6, self.nv), compute, frame=frame)

    def sko_model(self, q, v=None, external_forces=None):
        """``(SKOModel, a, b)`` at one state, built by the compiled state kernels (the
        :class:`~sko.model.SKOModel` holds read-only views of a fresh copy of the state's data);
        ``NotImplemented`` (the reference path answers, and names what overflowed) when a number
        is not finite."""
        if not all(_one_state(x) for x in (q, v)):  # the reference path refuses a batch before any other check
            return NotImplemented
        inputs = self._inputs(q, v)
        if inputs is None:
            return NotImplemented
        Q, QD, _, _, _ = inputs
        forces = self.system.external_forces(external_forces)
        if any(np.result_type(f, Q) != Q.dtype for f in forces.values()):
            return NotImplemented  # a complex or object force on a real state: only b takes its type (the reference's)
        A = self.layout.fill(Q, QD)
        self._apply_forces(A, forces)
        if not np.isfinite(A[:, : self.layout.flat.size]).all():
            return NotImplemented
        model, a, b = self.layout.model(A[0])
        return model, a.copy(), b.copy()


def _numeric(x) -> bool:
    """``x`` converts to float64 (not sympy symbols)."""
    try:
        np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        return False
    return True


def _one_state(x) -> bool:
    """``x`` is None or one state's vector (1-D); False for a batch, other shapes and ragged lists."""
    if x is None:
        return True
    try:
        return np.ndim(x) == 1
    except (TypeError, ValueError):
        return False


def _check_length(x: np.ndarray, name: str, size: int, symbol: str) -> None:
    """One state of ``x`` (its last axis) has ``size`` entries, the system's ``symbol``."""
    if x.shape[-1] != size:
        raise DimensionError(f"{name} has length {x.shape[-1]}, expected {symbol} = {size}")


def _same_batch(Q: np.ndarray, x: np.ndarray, name: str) -> None:
    """Every argument has the leading batch axis of ``q``, or none does."""
    if (x.ndim == 2) != (Q.ndim == 2) or (Q.ndim == 2 and x.shape[0] != Q.shape[0]):
        raise DimensionError(f"{name} has shape {x.shape} but q has shape {Q.shape}: give every argument "
                             f"the same leading batch axis, or none")


def _coordinates_are_velocities(system, layout) -> bool:
    """True when every body is a library type whose joint's declared type has ``q̇ = v`` and no
    manifold to project on (:func:`~sko.engine.joints.coordinates_are_velocities`: no
    quaternion, no successor-frame velocities): ``qdot`` and ``normalize`` are then the identity
    for the whole system."""
    from sko.engine.joints import coordinates_are_velocities
    from sko.bodies.flexible import FlexibleBody
    from sko.bodies.hinge import JointCoordinates

    own = (JointCoordinates.qdot, FlexibleBody.qdot, JointCoordinates.normalize, FlexibleBody.normalize)
    for k, c in zip(layout.bodies, layout.compiled):
        body = system.body(k)
        if c is None or not hasattr(body, "joint") or not coordinates_are_velocities(body.joint):
            return False
        if type(body).qdot not in own or type(body).normalize not in own:
            return False
    return True

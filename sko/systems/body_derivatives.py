"""The derivatives of inverse dynamics of a tree of any body types by the O(N·d) recursion on
each body's local partials (DERIVATIVES.md §9, Eq. 22–26, Algorithm 2).

The readable reference: numpy, one state at a time, in each body's own coordinates. No complex
step of the whole tree is taken. Each body's ``at_state`` (and ``hinge_force``) runs in complex
numbers in its own inputs only: along the ``2 n_k`` columns of its own coordinates (a
configuration column along ``q_k + i h q̇(q_k, e_ι)``, Eq. 1) and along the six directions of its
inboard frame's velocity ``v_o``, with the inboard record otherwise fixed (Eq. 21). These local
partials of ``E``, ``H``, ``M``, ``a``, ``b``, the records' ``Γ``, ``γ`` and the hinge force are the
inputs of the recursion: a scatter forms the seeds of every column (Eq. 23, 24) and the frame
transfers ``𝒯`` (Eq. 25), a gather the forces and the composites ``𝒫``, ``𝒦``; then every body
walks its ancestors twice (Eq. 26). The tendons' forces, linear in a few coordinates, add their
own terms.

It takes any :class:`~sko.systems.multibody.MultibodySystem` without external forces (their
``b(k)`` depends on the body's world pose, hence on every ancestor: :func:`applies`), on real
states, and relies on the body-type contract (BODIES.md, *The contract for a new body type*): a
body's outputs depend on its inboard frame through ``v_o`` and, in ``a = E γ_o + ã``, ``γ_o``.
It is checked against the complex step of the whole inverse dynamics (:mod:`sko.systems.derivatives`).
:func:`partials` runs its compiled twin (:mod:`sko.engine.local_derivatives`, :func:`compiled_partials`)
where every body has a compiled state, and this reference elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from sko.bodies.contract import Attachment, BodyError, NodeState
from sko.engine import local_derivatives
from sko.engine.backend import BACKEND, COMPILED, get_backend
from sko.engine.state_kernels import KernelError, Terms, is_checked
from sko.engine.state_layout import state_named
from sko.systems.declared import no_forces
from sko.spatial import skew
from sko.systems.complex_carry import check_complex_carried, own_methods
from sko.systems.overflow import derivatives_overflow
from sko.graphs.errors import DimensionError, SKOError

__all__ = ["applies", "partials", "inverse_dynamics_partials", "compiled_partials", "one_state_call", "plain_state"]

#: the complex step ``h`` of DERIVATIVES.md Eq. 21
_STEP = 1e-30
#: the outputs the state kernels write for the recursion
_MOTION = int(Terms.MOTION)
#: whether every entry of a 1-D boolean array is true, and which entries are finite (the ufuncs
#: themselves: no method wrapper)
_every, _finite = np.logical_and.reduce, np.isfinite
_F8, _ARRAY = np.dtype(np.float64), np.ndarray


def applies(system, external_forces=None) -> bool:
    """Whether the recursion takes ``system``: a tree of body types (a
    :class:`~sko.systems.multibody.MultibodySystem`) and no external forces."""
    return hasattr(system, "_order") and no_forces(external_forces)


def partials(system, Q: np.ndarray, V: np.ndarray, A: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(∂T/∂θ, ∂T/∂θ̇, ℳ)`` at a batch of real states (``B × nq``, ``B × nv``, ``B × nv``), each
    ``B × nv × nv``: by the compiled twin of the recursion (:mod:`sko.engine.local_derivatives`,
    ``ℳ`` from the same pass, the states in parallel) where it runs, else state by state by
    :func:`inverse_dynamics_partials` and ``system.mass_matrix``."""
    out = compiled_partials(system, Q, V, A)
    if out is None:
        triples = []
        for s, (q, v, a) in enumerate(zip(Q, V, A)):
            with state_named(s if len(Q) > 1 else None):
                triples.append((*inverse_dynamics_partials(system, q, v, a), system.mass_matrix(q)))
        n = system.dof_size
        out = tuple(np.array([t[i] for t in triples]).reshape(len(triples), n, n) for i in range(3))
        _check_finite(system, Q, V, A, np.concatenate(out, axis=2))
    return out


def _check_finite(system, Q: np.ndarray, V: np.ndarray, A: np.ndarray, D: np.ndarray) -> None:
    """Raise the error of the first state of a batch whose derivatives ``D`` (``B × nv × …``) left
    the floating-point range, the hinge forces' and tendons' columns included (naming the state
    in a batch of several)."""
    bad = ~np.isfinite(D).all(axis=(1, 2))
    if bad.any():
        s = int(np.flatnonzero(bad)[0])
        _raise_non_finite(system, Q[s], V[s], A[s], s if len(Q) > 1 else None)


def compiled_partials(system, q: np.ndarray, v: np.ndarray, dv: np.ndarray, forward: bool = False) -> tuple | None:
    """``(∂T/∂θ, ∂T/∂θ̇, ℳ)`` by the compiled twin of the recursion
    (:mod:`sko.engine.local_derivatives`) at one state (1-D inputs) or a batch (2-D, results with
    the same leading axis), or ``None`` where it does not run (the reference backend, a body
    without a compiled state, one state with an input that is not finite). A state a kernel
    rejects raises its error naming the body (and the state of a batch), as do derivatives that
    overflow. With ``forward`` (one state, ``dv = FD(q, θ̇, T)``): forward dynamics' derivatives
    ``(−ℳ⁻¹ ∂T/∂θ, −ℳ⁻¹ ∂T/∂θ̇, ℳ⁻¹)`` instead (Eq. 3, :func:`~sko.engine.local_derivatives.forward`
    on the ``ℳ`` of the pass), or ``None`` also where that ``ℳ`` has no Cholesky factor."""
    layout = system._engine.layout
    if get_backend() != "compiled" or layout is None or not layout.all_compiled:
        return None
    if q.ndim == 1:
        return _one_state(system, layout, q, v, dv, forward)
    if forward:
        raise SKOError("compiled_partials: forward=True takes one state (1-D inputs), got a batch")
    plan, size, scratch = layout.local_plan
    n = system.dof_size
    Q, V, X = q, v, dv
    B = Q.shape[0]
    if B == 0:
        return tuple(np.zeros((0, n, n)) for _ in range(3))
    Qdot = np.zeros((B, Q.shape[1], n))
    for s in range(B):
        with state_named(s):  # a state its joints reject (a zero quaternion) says which
            Qdot[s] = _qdot_matrix(system, Q[s])
    _check_bodies(system, Q[0])
    D = np.empty((B, n, 3 * n))  # zeroed by the kernel
    Q, V, X = (np.ascontiguousarray(x, dtype=float) for x in (Q, V, X))
    table = layout.table(np.complex128)
    status = np.full(B, -1, dtype=np.int64)
    arena = np.empty((B, layout.size), dtype=np.complex128)  # zeroed by the kernel
    local_derivatives.batch_partials(table, layout.reals, arena, Q, V, Qdot, X, plan, np.zeros((B, size)),
                                     np.empty((B, scratch)), D, _MOTION, True, local_derivatives.steps(layout), status,
                                     layout.local_address)
    if (status == local_derivatives.NOT_FINITE_HINGE).any():
        s = int(np.flatnonzero(status == local_derivatives.NOT_FINITE_HINGE)[0])
        _raise_hinge(system, Q[s], V[s], X[s], s)
    if (status >= 0).any():
        s = int(np.flatnonzero(status >= 0)[0])
        _raise_rejected(system, layout, Q[s], V[s], int(status[s]), s)
    if (status == local_derivatives.RAISED).any():
        s = int(np.flatnonzero(status == local_derivatives.RAISED)[0])
        raise KernelError(f"the compiled local derivatives (DERIVATIVES.md §9) raised at state {s} of the batch")
    for s in range(B if layout.hinge_forces else 0):
        _add_python_terms(system, layout, Q[s], V[s], Qdot[s], D[s])
    _check_finite(system, Q, V, X, D)
    return D[:, :, :n], D[:, :, n: 2 * n], D[:, :, 2 * n:]


def plain_state(system, q, v, x) -> tuple | None:
    """The common call of the recursion, checked at little cost: ``(q, v, x)`` when each is a 1-D
    float64 array of its size (``v``, ``x`` zero when None), else ``None`` (the caller's full
    checks then run). Whether they are finite is checked where they are read: by the compiled
    recursion (:func:`compiled_partials` declines a state that is not) or, for forward dynamics,
    by ``system.forward_dynamics``."""
    n = system.dof_size
    v = np.zeros(n) if v is None else v
    x = np.zeros(n) if x is None else x
    if (type(q) is _ARRAY and type(v) is _ARRAY and type(x) is _ARRAY and q.dtype is _F8 and v.dtype is _F8
            and x.dtype is _F8 and q.ndim == v.ndim == x.ndim == 1 and len(q) == system.q_size and len(v) == len(x) == n):
        return q, v, x
    return None


def one_state_call(system) -> Callable:
    """The prepared call ``call(q, v, dv, forward) -> (∂T/∂θ, ∂T/∂θ̇, ℳ) | None`` of
    :func:`compiled_partials` at one state for the common call, made once per system: ``q``,
    ``v``, ``dv`` 1-D float64 arrays of the system's sizes (``v``, ``dv`` zero when None), on the
    compiled backend, once its bodies are checked (:func:`_check_bodies`), for a system whose
    bodies are all compiled, with no hinge force in Python and compiled coordinate maps for the
    tangent columns ``q̇(q, e_ι)`` (Eq. 1). With ``forward``, ``dv`` is the torque ``τ``, and the result
    forward dynamics' derivatives at ``FD(q, v, τ)``. ``None`` for any other call, or a state the
    kernel does not answer (an input that is not finite, a state a body rejects, derivatives that
    overflow): the caller's full path then answers or names the error."""
    layout, constant = system._engine.layout, system._constant_qdot
    maps = system._coordinate_maps
    if layout is None or not layout.all_compiled or layout.hinge_forces or (constant is None and maps is None):
        return _declined
    n = system.dof_size
    recipe = None if constant is not None else maps.linear_recipe(n)
    tangents = None  # the compiled tangent columns of a recipe, made on the first call that needs them
    first, second, third = ((slice(None), slice(b * n, (b + 1) * n)) for b in range(3))  # D's blocks

    def call(q, v, dv, forward: bool):
        nonlocal tangents
        if not (system._pose_free and system._complex_carried) or BACKEND.get() is not COMPILED:
            return None
        if (state := plain_state(system, q, v, dv)) is None:
            return None
        q, v, dv = state
        if forward:
            dv = system.forward_dynamics(q, v, dv)
        # a zero quaternion is not looked for: the kernel rejects it, and the checked path names it
        if constant is not None:
            qdot = constant
        elif recipe is not None:
            if tangents is None:
                tangents = local_derivatives.tangent_columns_call(*recipe)
            qdot = tangents(q)
        else:
            qdot = maps.qdot_matrix(q, n, check=False)
        status, D = layout.local_call(q, v, dv, qdot)  # compiled on the first call that gets here
        if status != -1:
            return None
        if forward:
            X = np.empty_like(D)
            if not layout.local_forward(D, X):
                return None
            D = X
        return D[first], D[second], D[third]

    return call


def _vector(x: np.ndarray, name: str, size: int) -> np.ndarray:
    """The 1-D array ``x`` of real numbers as float64 (the kernel reads float64), or the
    :class:`~sko.graphs.errors.DimensionError` naming it."""
    if x.dtype is _F8 and x.shape == (size,):
        return x
    if x.dtype.kind not in "biuf" or x.shape != (size,):
        raise DimensionError(f"compiled_partials: {name} must hold {size} real numbers, got shape {x.shape} of {x.dtype}")
    return x.astype(_F8)


def _declined(q, v, dv, forward: bool) -> None:
    """The prepared call of a system the compiled recursion does not take at one state without checks."""
    return None


def _one_state(system, layout, q: np.ndarray, v: np.ndarray, dv: np.ndarray, forward: bool) -> tuple | None:
    """:func:`compiled_partials` at one state (1-D arrays of real numbers ``q``, ``v``, ``dv``, taken
    as float64), by the layout's prepared call (:func:`~sko.engine.local_derivatives.one_state_call`,
    which also checks that the inputs and the result are finite); ``None`` when an input is not
    (the caller's checks then name it)."""
    q, v, dv = (_vector(x, name, size) for x, name, size in ((q, "q", system.q_size), (v, "v", system.dof_size),
                                                            (dv, "dv", system.dof_size)))
    if not (system._pose_free and system._complex_carried):
        if not _every(_finite(np.concatenate([q, v, dv]))):
            return None  # the caller's checks name the input
        _check_bodies(system, q)
    Qdot = system._constant_qdot
    if Qdot is None:  # the prepared call reads dv and Qdot as C-ordered float64 (the constant one is)
        Qdot = np.ascontiguousarray(_qdot_matrix(system, q), dtype=_F8)
    status, D = layout.local_call(q, v, dv, Qdot)
    if status != -1:
        if status == local_derivatives.NOT_FINITE_INPUT:
            return None  # the caller's checks name the input
        if status >= 0:
            _raise_rejected(system, layout, q, v, status, None)
        if status == local_derivatives.NOT_FINITE_HINGE:
            _raise_hinge(system, q, v, dv, None)
        _raise_non_finite(system, q, v, dv, None)  # NOT_FINITE_RESULT
    if layout.hinge_forces:
        _add_python_terms(system, layout, q, v, Qdot, D)
        if not _every(_finite(D).ravel()):
            _raise_non_finite(system, q, v, dv, None)
    if forward:
        X = np.empty_like(D)
        if not layout.local_forward(D, X):
            return None
        D = X
    n = D.shape[0]
    return D[:, :n], D[:, n: 2 * n], D[:, 2 * n:]


def _add_python_terms(system, layout, q: np.ndarray, v: np.ndarray, Qdot: np.ndarray, D: np.ndarray) -> None:
    """The columns of the hinge forces without a compiled hook (their own complex step) and of
    the tendons."""
    for k in layout.python_hinge_bodies:
        _add_hinge(system, k, q, v, Qdot, D)
    _add_tendons(system, q, D)


def inverse_dynamics_partials(system, q: np.ndarray, v: np.ndarray, dv: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(∂T/∂θ, ∂T/∂θ̇)`` of inverse dynamics at one real state (Algorithm 2 of DERIVATIVES.md
    §9); ``q``, ``v``, ``dv`` checked float vectors of the system's sizes."""
    n = system.dof_size
    D = np.zeros((n, 2 * n))  # [∂T/∂θ | ∂T/∂θ̇], columns ordered by body: θ then θ̇ of each
    columns = {}
    Qdot = system.qdot_matrix(q)
    _check_bodies(system, q)  # a body dropping the imaginary part, or reading its frame's pose: named
    states = system.node_states(q, v)  # checked: a body's bad output is named there
    nodes: dict = {}
    children: dict = {k: [] for k, *_ in system._order}
    for k, body, qs, vs in system._order:  # scatter: states, local partials, seeds, transfers
        p = body.parent
        parent = None if p is None else nodes[p]
        inboard = system._root if p is None else parent.state.attachments[body.attach]
        beta = np.zeros(6) if p is None else inboard.Gamma @ parent.alpha  # β_o = Γ_o α(℘)
        node = _Node(body, states[k], q[qs], v[vs], dv[vs], inboard, beta, Qdot[qs, vs], system.gravity)
        if p is not None:
            children[p].append(k)
            parent.seeds_and_transfer(node, body.attach)
        nodes[k] = node
        columns[k] = np.r_[vs.start:vs.stop, n + vs.start:n + vs.stop]
    for k, *_ in reversed(system._order):  # gather: forces and composites (Eq. 22, 25)
        nodes[k].gather([nodes[c] for c in children[k]])
    for i, body, qs, vs in system._order:  # Eq. 26
        node, cols = nodes[i], columns[i]
        g = node.force_change([nodes[c] for c in children[i]])
        D[vs, cols] += np.einsum("xnm,m->nx", node.dH, node.f) + node.H @ g + node.dh
        x = node.dE.transpose(0, 2, 1) @ node.f  # (2 n_i, 6): ∂E* f(i), per column
        x = x.T + node.E.T @ g  # δu(i)
        j, here = body.parent, node
        while j is not None:  # columns of i, rows of its ancestors
            x = here.inboard.Gamma.T @ x
            above = nodes[j]
            D[system.dof_slices[j], cols] += above.H @ x
            x = above.E.T @ x
            j, here = above.body.parent, above
        Y, l = node.H @ node.P, node
        while l.body.parent is not None:  # rows of i, columns of its ancestors
            j = l.body.parent
            D[vs, columns[j]] += Y @ l.W
            Y, l = Y @ l.T, nodes[j]
    _add_tendons(system, q, D)
    return D[:, :n], D[:, n:]


class _Node:
    """One body at one state: its real node state, Newton–Euler quantities and local partials
    (DERIVATIVES.md §9); ``W`` and ``T`` (the seeds and transfer of its inboard frame) are set by
    its parent, ``f``, ``u``, ``P``, ``K`` by the gather."""

    def __init__(self, body, s: NodeState, q, v, dv, inboard: Attachment, beta, qdot, gravity):
        self.body, self.inboard, self.names = body, inboard, tuple(body.attachment_names)
        self.state, self.E, self.H, self.M = s, s.E, s.H, s.M
        self.alpha = s.E @ beta + s.H.T @ dv + s.a  # Eq. 22
        nk, h = body.dof_size, _STEP
        # own columns: θ along q̇(q, e_ι), then θ̇ (Eq. 1, 21)
        own = [(q + 1j * h * qdot[:, i], v + 0j) for i in range(nk)]
        own += [(q + 0j, v + 1j * h * e) for e in np.eye(nk)]
        states = [body.at_state(qc, vc, inboard, gravity) for qc, vc in own]
        self.dE, self.dH, self.dM, self.da, self.db = (
            _imaginary(states, lambda z, x=x: getattr(z, x), np.shape(getattr(s, x))) for x in ("E", "H", "M", "a", "b"))
        self.dGamma = {c: _imaginary(states, lambda z, c=c: z.attachments[c].Gamma, s.attachments[c].Gamma.shape)
                       for c in self.names}
        self.dgamma = {c: _imaginary(states, lambda z, c=c: z.attachments[c].gamma, (6,)) for c in self.names}
        hinge = [body.hinge_force(qc, vc) for qc, vc in own]
        self.dh = np.zeros((nk, 2 * nk)) if not hinge or hinge[0] is None else np.column_stack(
            [np.asarray(x).imag / h for x in hinge])
        # the inboard frame's velocity: A = ∂ã/∂v_o, B = ∂b/∂v_o, G_c = ∂γ_c/∂v_o (for a base body,
        # whose frame never moves, none is read)
        moved = [] if body.parent is None else [body.at_state(q, v, Attachment(inboard.Gamma, inboard.gamma, inboard.rotation, inboard.position,
                                                inboard.velocity + 1j * h * e), gravity) for e in np.eye(6)]
        m = body.node_dim
        self.A = np.column_stack([z.a.imag / h for z in moved]) if moved else np.zeros((m, 6))
        self.B = np.column_stack([z.b.imag / h for z in moved]) if moved else np.zeros((m, 6))
        self.G = {c: np.column_stack([z.attachments[c].gamma.imag / h for z in moved]) if moved else np.zeros((6, 6))
                  for c in self.names}
        # the seeds of node k (Eq. 23), (m, 2 n_k)
        vo = inboard.velocity
        self.sigma = (self.dE @ vo + np.einsum("xnm,n->xm", self.dH, v)).T
        self.sigma[:, nk:] += s.H.T
        self.rho = (self.dE @ beta + np.einsum("xnm,n->xm", self.dH, dv) + self.da).T

    def seeds_and_transfer(self, child: "_Node", name) -> None:
        """``w_c(ξ)`` of every column of this body (Eq. 24) and ``𝒯_c`` (Eq. 25) for ``child``,
        which hangs from this body's frame ``name``."""
        s, Gamma = self.state, self.state.attachments[name].Gamma
        dG = self.dGamma[name]
        dv_c = (dG @ s.V).T + Gamma @ self.sigma
        da_c = (dG @ self.alpha).T + Gamma @ self.rho + self.dgamma[name].T
        child.W = np.vstack([dv_c, da_c])  # (12, 2 n_parent)
        X = Gamma @ self.E
        child.T = np.block([[X, np.zeros((6, 6))], [Gamma @ self.A + self.G[name], X]])

    def gather(self, children: list) -> None:
        """``f``, ``u`` and the composites ``𝒫``, ``𝒦`` of this body from its children's (Eq. 22, 25)."""
        s = self.state
        f = s.M @ self.alpha + s.b
        P = s.M @ np.hstack([self.A, s.E]) + np.hstack([self.B, np.zeros_like(self.B)])
        for c in children:
            Gamma = s.attachments[c.body.attach].Gamma
            f = f + Gamma.T @ c.u
            P = P + Gamma.T @ (c.K @ c.T)
        self.f, self.u, self.P, self.K = f, s.E.T @ f, P, s.E.T @ P

    def force_change(self, children: list) -> np.ndarray:
        """``g_ξ = δf(k)`` for every column of this body (Eq. 26), ``(m, 2 n_k)``."""
        s = self.state
        g = (self.dM @ self.alpha).T + s.M @ self.rho + self.db.T
        for c in children:
            name = c.body.attach
            Gamma = s.attachments[name].Gamma
            g = g + (self.dGamma[name].transpose(0, 2, 1) @ c.u).T + Gamma.T @ (c.K @ c.W)
        return g


def _check_bodies(system, q: np.ndarray) -> None:
    """The checks of the user body types this recursion relies on, once per system: they carry a
    complex step (:func:`~sko.systems.complex_carry.check_complex_carried`), their hinge forces have
    their shapes, and their outputs do
    not read the pose of the frame they hang from (BODIES.md, *The contract for a new body type*:
    only the potential and their own records' poses do), which a local partial cannot see; raise
    :class:`~sko.bodies.contract.BodyError` naming the first that does."""
    check_complex_carried(system, q)
    if system._pose_free:
        return
    bodies = system._unchecked | {k for k, b, _, _ in system._order if own_methods(b)}
    if bodies:
        system.hinge_forces(q)  # their shapes checked (the recursion reads them column by column)
        states, rng = system.node_states(q, np.zeros(system.dof_size)), np.random.default_rng(0)
        for k, body, qs, vs in system._order:
            if k not in bodies or body.parent is None:  # a base body's frame never moves
                continue
            frame = states[body.parent].attachments[body.attach]
            w, p = rng.standard_normal((2, 3))
            moved = Attachment(frame.Gamma, frame.gamma, frame.rotation @ (np.eye(3) + 1j * _STEP * skew(w)),
                               frame.position + 1j * _STEP * p, frame.velocity)
            z = body.at_state(q[qs] + 0j, np.zeros(body.dof_size, dtype=complex), moved, system.gravity)
            outputs = [(x, getattr(z, x)) for x in ("E", "H", "M", "a", "b", "V")] + [
                (f"record {c!r} {x}", getattr(r, x)) for c, r in z.attachments.items() for x in ("Gamma", "gamma", "velocity")]
            for name, x in outputs:
                if np.any(np.abs(np.imag(x)) > 1e-9 * _STEP * (1.0 + np.abs(np.real(x)).max(initial=0.0))):
                    raise BodyError(f"body {k!r} ({type(body).__name__}): its {name} depends on the pose (rotation or "
                                    "position) of the frame it hangs from, which the contract leaves to the potential "
                                    "and its records' poses (BODIES.md): method='local' (the default for its tree) "
                                    "cannot see it; read the frame's velocity and gamma only, or take "
                                    "method='complex_step'")
    system._pose_free = True


def _imaginary(states: list, field, shape: tuple) -> np.ndarray:
    """``Im field(z) / h`` of each complex-step state ``z``, stacked: ``(len(states), *shape)``."""
    out = np.empty((len(states), *shape))
    for i, z in enumerate(states):
        out[i] = np.imag(field(z)) / _STEP
    return out


def _raise_rejected(system, layout, q: np.ndarray, v: np.ndarray, row: int, s: int | None):
    """The error of a state (``s`` of a batch) that a kernel of the recursion rejected: the
    state's own (the engine's fill names the body, as the dynamics do), or, where the real state
    is accepted, a :class:`~sko.engine.state_kernels.KernelError` naming the body whose kernel
    rejected a complex step of its own inputs (or whose declared partials returned False)."""
    with state_named(s):
        layout.fill(q[None], v[None])
        index = layout.order[row]
        body = system.body(layout.bodies[index])
        compiled = layout.compiled[index]
        declared = [] if compiled is None or is_checked(body, compiled) else \
            [name for name in ("velocities", "joint_partials", "internal_partials")
             if getattr(compiled.kernel, name) is not None]
        also = "" if not declared else (f"; or its declared partials ({', '.join(f'{d}=' for d in declared)}) "
                                        "returned False there: they must take every state the kernel takes")
        raise KernelError(f"body {body.name!r} ({type(body).__name__}): its compiled state or hinge force rejected a "
                          "complex step of its own inputs at this state (the local derivatives, DERIVATIVES.md §9), "
                          f"which the real state passes: keep complex numbers through the kernel{also}")


def _raise_hinge(system, q: np.ndarray, v: np.ndarray, dv: np.ndarray, s: int | None):
    """The error of a state (``s`` of a batch) at which a compiled hinge force returned False or
    a number that is not finite: inverse dynamics' own there, which names the body."""
    with state_named(s), np.errstate(all="ignore"):
        system.inverse_dynamics(q, v, dv)
    raise KernelError(f"a compiled hinge force returned False or a number that is not finite at state {s} (the "
                      "local derivatives, DERIVATIVES.md §9), which inverse dynamics accepts there")


def _raise_non_finite(system, q: np.ndarray, v: np.ndarray, dv: np.ndarray, s: int | None):
    """The error of derivatives that left the floating-point range at state ``s`` of a batch
    (:func:`~sko.systems.overflow.derivatives_overflow`)."""
    with state_named(s):
        derivatives_overflow(system, "inverse_dynamics_derivatives", q, v, dv)


def _qdot_matrix(system, q: np.ndarray) -> np.ndarray:
    """``q̇(q, e_ι)`` column by column (Eq. 1) at a checked ``q``: the system's constant one where it
    does not depend on ``q``, else by its coordinate maps (``system.qdot_matrix(q)`` without its
    checks) where it has them."""
    constant = system._constant_qdot
    if constant is not None:
        return constant
    maps = system._coordinate_maps
    return system.qdot_matrix(q) if maps is None else maps.qdot_matrix(q, system.dof_size)


def _add_hinge(system, k, q: np.ndarray, v: np.ndarray, Qdot: np.ndarray, D: np.ndarray) -> None:
    """Body ``k``'s hinge force's columns, by complex step in its own coordinates (Eq. 1, 21):
    column ``ι`` along ``q̇(q, e_ι)``, column ``n_k + ι`` along ``θ̇_ι``, each call given its own
    row of the complex states; ``Qdot`` the tangent columns."""
    body, qs, vs = system._body[k], system.q_slices[k], system.dof_slices[k]
    n_k = vs.stop - vs.start
    if n_k == 0:
        return
    Zq = np.empty((2 * n_k, qs.stop - qs.start), dtype=complex)
    Zv = np.empty((2 * n_k, n_k), dtype=complex)
    Zq[:], Zv[:] = q[qs], v[vs]
    Zq.imag[:n_k] = _STEP * Qdot[qs, vs].T
    Zv.imag[n_k:] = _STEP * np.eye(n_k)
    first = body.hinge_force(Zq[0], Zv[0])
    if first is None:
        return
    out = np.empty((n_k, 2 * n_k))
    out[:, 0] = np.imag(first)  # a scalar force (one for every θ̇ of the body) broadcasts
    for x in range(1, 2 * n_k):
        out[:, x] = np.imag(body.hinge_force(Zq[x], Zv[x]))
    out /= _STEP
    n = system.dof_size
    D[vs, vs] += out[:, :n_k]
    D[vs, n + vs.start: n + vs.stop] += out[:, n_k:]


def _add_tendons(system, q: np.ndarray, D: np.ndarray) -> None:
    """The tendons' terms: ``k L′(ℓ) c cᵀ`` in ``∂T/∂θ`` and ``d c cᵀ`` in ``∂T/∂θ̇`` on each tendon's
    joints, ``ℓ = c · q`` its length and ``L(ℓ) = ℓ − clamp(ℓ, lo, hi)`` its stretch, whose slope is 1
    outside the dead band ``[lo, hi]`` and 0 inside."""
    n = system.dof_size
    for tendon, qi, vi, c in system._tendon_terms:
        lo, hi = tendon.spring_length
        length = c @ q[qi]
        slope = 1.0 if lo == hi or length > hi or length < lo else 0.0
        cc = np.outer(c, c)
        D[np.ix_(vi, vi)] += tendon.stiffness * slope * cc
        D[np.ix_(vi, n + vi)] += tendon.damping * cc

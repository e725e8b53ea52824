"""The catalogue of the system API's requests: :data:`DECLARATIONS`, each declared once.

Everything about a request follows from its :class:`~sko.systems.declared.Declaration` and
its compiled part (:data:`~sko.engine.requests.REQUESTS`): the system method
(:func:`declared_methods` puts it on :class:`~sko.systems.multibody.MultibodySystem`), what
sweeps and ``sko sample`` evaluate (:data:`INPUTS_OF`, :data:`SHORT_NAMES`), what
``sko compile`` compiles (:mod:`sko.precompile`). Adding a request is one declaration here, one
kernel and its entry in :data:`~sko.engine.requests.REQUESTS`, and one reference function
(:mod:`sko.systems.reference`); :func:`declare` adds one at run time (a user's own).
:data:`VIEWS` are the methods presenting part of a request's result
(:class:`~sko.systems.declared.View`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

import numpy as np

from sko.graphs.errors import SKOError
from sko.systems import centroidal, reference, regressors
from sko.engine import regressors as compiled_regressors
from sko.engine import requests as compiled
from sko.systems.declared import Declaration, View, method, view_method

__all__ = ["DECLARATIONS", "VIEWS", "INPUTS_OF", "SHORT_NAMES", "declared_methods", "declare", "withdraw", "added"]


def _derivatives_compiled(system, dtype) -> bool:
    """The derivatives' compiled recursion takes ``system`` (float64 states only: the complex
    step's states are the dynamics'): :func:`~sko.systems.rigid_derivatives.compiled`, decided
    once per system."""
    return np.dtype(dtype) == np.float64 and system._compiled_derivatives


def _regressors_compiled(system, dtype) -> bool:
    """The regressors' kernels take ``system`` (:func:`~sko.engine.regressors.applies`)."""
    return compiled_regressors.applies(system)


#: every request of the system API, by name
DECLARATIONS: dict[str, Declaration] = {d.name: d for d in (
    Declaration("inverse_dynamics", "id", reference=reference.inverse_dynamics, velocities=True, x="dv",
                external_forces=True, renamed={"qd": "v", "qdd": "dv"},
                doc="``τ = ℳ(q) dv + 𝒞(q, v)`` by Newton–Euler on the SKO model (SKO.md §5, Algorithm 3.1),\n"
                    "        plus the bodies' hinge forces; ``v``, ``dv`` zero when omitted (``qd=``, ``qdd=``: "
                    "deprecated)."),
    Declaration("forward_dynamics", "fd", reference=reference.forward_dynamics, velocities=True, x="tau",
                external_forces=True, renamed={"qd": "v"},
                doc="``dv = ℳ^{-1}(τ − 𝒞)`` by the articulated body recursion (SKO.md §11, Algorithm 6.1);\n"
                    "        ``v``, ``tau`` zero when omitted (``qd=``: deprecated)."),
    Declaration("mass_matrix", "M", reference=reference.mass_matrix,
                doc="``ℳ(q) = H φ M φ* H*`` by the composite body algorithm (SKO.md §6, Algorithm 4.2)."),
    Declaration("mass_matrix_inverse", "Minv", reference=reference.mass_matrix_inverse,
                doc="``ℳ^{-1}(q)`` by the innovations factorization (SKO.md §10, Eq. 51)."),
    # the methods of these are written by hand: the derivatives choose their method, the energy
    # adds the tendons' potential
    Declaration("inverse_dynamics_derivatives", "did", reference=None, velocities=True, x="dv", external_forces=True,
                compiled_for=_derivatives_compiled,
                doc="``(∂τ/∂q, ∂τ/∂v, ℳ)`` (:mod:`sko.systems.derivatives`)."),
    Declaration("forward_dynamics_derivatives", "dfd", reference=None, velocities=True, x="tau",
                external_forces=True, compiled_for=_derivatives_compiled,
                doc="``(∂dv/∂q, ∂dv/∂v, ℳ⁻¹)`` (:mod:`sko.systems.derivatives`)."),
    Declaration("energy", "energy", reference=None, velocities=True,
                doc="Kinetic plus potential energy (:meth:`~sko.systems.multibody.MultibodySystem.energy`)."),
    Declaration("centroidal_terms", "cen", reference=reference.centroidal_terms, velocities=True,
                doc="The packed centroidal terms ``[A_G | I_G | h_G | (c, m, 0, 0)]`` (6 × (nv + 8)) about the\n"
                    "        centre of mass, world axes (CENTROIDAL.md, Eq. 4); :meth:`centroidal` unpacks them."),
    Declaration("centroidal_momentum_matrix", "Ag", reference=reference.centroidal_momentum_matrix,
                doc="``A_G`` (6 × nv) with ``h_G = A_G v`` (CENTROIDAL.md, Eq. 4): the first ``nv`` columns of\n"
                    "        :meth:`centroidal_terms`, computed alone."),
    Declaration("centroidal_momentum_matrix_rate", "dAg", reference=reference.centroidal_momentum_matrix_rate,
                velocities=True, compiled_for=_derivatives_compiled, applies=lambda system: system._compiled_derivatives,
                real=True,
                doc="``Ȧ_G`` (6 × nv) with ``ḣ_G = A_G dv + Ȧ_G v`` (CENTROIDAL.md §4): the recursion of Eq. 6\n"
                    "        for a compiled rigid tree on joints of constant ``S``, else the complex step of ``A_G``."),
    Declaration("joint_torque_regressor", "Y", reference=reference.joint_torque_regressor, velocities=True, x="dv",
                options=regressors.OPTIONS, extend=regressors.joint_columns, shape=regressors.torque_shape,
                applies=compiled_regressors.applies, compiled_for=_regressors_compiled,
                doc="``Y`` (nv × p) with ``inverse_dynamics(q, v, dv) − hinge_forces(q, v) = Y @ π``, π of\n"
                    "        :meth:`inertial_parameters` with the same options (gravity included;\n"
                    "        IDENTIFICATION.md, Eq. 3): the bodies' columns, then with ``friction`` a viscous\n"
                    "        ``diag(v)`` and a Coulomb ``diag(sign v)`` block, with ``armature`` a ``diag(dv)``\n"
                    "        block (:mod:`sko.systems.regressors`). ``q``, ``v``, ``dv`` may carry a leading batch\n"
                    "        axis ``(B, n)``; the result is then ``(B, nv, p)``."),
    Declaration("energy_regressors", "YE", reference=reference.energy_regressors, velocities=True,
                options=regressors.OPTIONS, extend=regressors.joint_energy_entries, shape=regressors.energy_shape,
                applies=compiled_regressors.applies, compiled_for=_regressors_compiled,
                doc="``[y_T; y_V]`` (2 × p) with ``kinetic_energy(q, v) = y_T @ π`` and the bodies' potential\n"
                    "        energy (without tendons) ``= y_V @ π``, π of :meth:`inertial_parameters` with the same\n"
                    "        options (``armature``: ``½ v²`` in ``y_T``); batches ``(B, nq)`` give ``(B, 2, p)``."),
)}

#: the methods presenting part of a request's result, by name
VIEWS: dict[str, View] = {v.name: v for v in (
    View("centroidal", "centroidal_terms", centroidal.unpacked_of, velocities=True,
         doc="``(A_G, h_G, I_G, c, m)`` at the centre of mass in world axes, momenta ``[k_G; l_G]``\n"
             "        (CENTROIDAL.md, Eq. 4; :class:`~sko.systems.centroidal.Centroidal`); batches ``(B, nq)``."),
    View("centroidal_momentum", "centroidal_terms", centroidal.momentum_of, velocities=True,
         doc="``h_G = [k_G; l_G]`` about the centre of mass, world axes (CENTROIDAL.md, Eq. 4)."),
    View("centroidal_inertia", "centroidal_terms", centroidal.inertia_of,
         doc="``I_G`` (6 × 6), the centroidal composite inertia (CENTROIDAL.md, Eq. 4)."),
    View("kinetic_energy_regressor", "energy_regressors", regressors.kinetic_row, velocities=True,
         doc="``y_T`` (p) with ``kinetic_energy(q, v) = y_T @ π`` (the first row of :meth:`energy_regressors`)."),
    View("potential_energy_regressor", "energy_regressors", regressors.potential_row,
         doc="``y_V`` (p) with the bodies' potential energy (without tendons) ``= y_V @ π`` (the second row of\n"
             "        :meth:`energy_regressors`)."),
)}

_OWNERS: list[type] = []  # the classes the methods are made for (declared_methods)
_ADDED: dict[str, bool] = {}  # the requests declare() added: name -> whether it added the compiled part too


class _View(Mapping):
    """A read-only mapping computed from the catalogue at each lookup (a request declared later shows)."""

    def __init__(self, items: Callable[[], dict], what: str):
        self._items, self._what = items, what

    def __getitem__(self, key):
        return self._items()[key]

    def __iter__(self) -> Iterator:
        return iter(self._items())

    def __len__(self) -> int:
        return len(self._items())

    def __repr__(self) -> str:
        return f"<{self._what}: {self._items()!r}>"


#: ``{request: its third input ("dv", "tau") or None}``: what a sweep evaluates and reads
INPUTS_OF: Mapping = _View(lambda: {d.name: d.x for d in DECLARATIONS.values()}, "third inputs of the requests")
#: ``{short name: request}``: the names ``sko sample --what`` takes
SHORT_NAMES: Mapping = _View(lambda: {d.short: d.name for d in DECLARATIONS.values()}, "short names of the requests")


def _check(declaration: Declaration) -> None:
    """The declaration agrees with its compiled part (the engine checks and batches from it)."""
    d = declaration
    request = compiled.REQUESTS.get(d.name)
    if request is None:
        raise SKOError(f"request {d.name!r} has no compiled part: add its Request to sko.engine.requests.REQUESTS")
    if request.velocities != d.velocities or request.x != d.x:
        raise SKOError(f"request {d.name!r}: the declaration reads v={d.velocities}, x={d.x!r} but its compiled part "
                       f"v={request.velocities}, x={request.x!r}")


def _check_view(view: View) -> None:
    """The view presents a declared request and takes no input the request does not read."""
    of = DECLARATIONS.get(view.of)
    if of is None or (view.velocities and not of.velocities):
        raise SKOError(f"view {view.name!r} presents {view.of!r}, which is not a declared request"
                       + ("" if of is None else " reading v"))


def _install(owner: type, declaration: Declaration) -> None:
    if declaration.reference is not None and declaration.name not in vars(owner):
        setattr(owner, declaration.name, method(declaration, owner))


def declared_methods(owner: type) -> type:
    """Class decorator: the system methods of the declared requests and views that ``owner``
    does not write by hand, now and for the requests :func:`declare` adds later."""
    for declaration in DECLARATIONS.values():
        _check(declaration)
        _install(owner, declaration)
    for view in VIEWS.values():
        _check_view(view)
        if view.name not in vars(owner):
            setattr(owner, view.name, view_method(view, owner, DECLARATIONS[view.of].options))
    _OWNERS.append(owner)
    return owner


def declare(declaration: Declaration, request: compiled.Request | None = None) -> Declaration:
    """Add ``declaration`` (and its compiled part ``request``, unless already in
    :data:`~sko.engine.requests.REQUESTS`) to the catalogue: the systems answer it from now on.

    Raises
    ------
    SKOError
        A name already declared or taken by a system method, a compiled part that disagrees.
    """
    name = declaration.name
    if name in DECLARATIONS or any(hasattr(owner, name) for owner in _OWNERS):
        raise SKOError(f"request {name!r} is already declared, or {name!r} is a system method")
    if request is not None:
        if request.name != name or name in compiled.REQUESTS:
            raise SKOError(f"request {name!r}: its compiled part is named {request.name!r} or already in the catalogue")
        compiled.REQUESTS[name] = request
    try:
        _check(declaration)
    except SKOError:
        if request is not None:
            del compiled.REQUESTS[name]
        raise
    DECLARATIONS[name] = declaration
    _ADDED[name] = request is not None
    for owner in _OWNERS:
        _install(owner, declaration)
    return declaration


def added(name: str) -> bool:
    """Whether :func:`declare` added the request ``name`` (a user's code, not the package's)."""
    return name in _ADDED


def withdraw(name: str) -> None:
    """Remove a request :func:`declare` added (its method, its declaration, and its compiled
    part if :func:`declare` added that too); the package's own requests stay.

    Raises
    ------
    SKOError
        ``name`` is not a request :func:`declare` added.
    """
    if name not in _ADDED:
        raise SKOError(f"request {name!r} was not added by declare(): only those can be withdrawn")
    added_compiled = _ADDED.pop(name)
    declaration = DECLARATIONS.pop(name)
    for owner in _OWNERS:
        if getattr(vars(owner).get(name), "declaration", None) is declaration:
            delattr(owner, name)
    if added_compiled:
        del compiled.REQUESTS[name]

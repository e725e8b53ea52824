"""A multibody system of any mix of body types, and its SKO model at a state (SKO.md §14).

:class:`MultibodySystem` holds body types (no state). At a state ``(q, θ̇)`` it walks the tree
once from the base to the tips, asks every body for its :class:`~sko.bodies.contract.NodeState`
hanging from its parent's attachment, and assembles the SKO model

    φ(℘(k), k) = (E_k Γ_o)*,   H(k),   M(k),   and the stacked a, b,

with weights of whatever shape the body types give. Mass matrix, inverse and forward dynamics
then come from the generic recursions of :mod:`algorithms` (Algorithms 3.1, 4.2, 6.1), which
never know which body types they run on.

External forces ``f^x_k = [n; f]`` (world coordinates, about the world origin) act on a body's
own frame ``F_k`` (its attachment ``None``, pose ``(R, p)``): in ``F_k`` coordinates they are
``ᵏX_0^* f^x_k = [Rᵀ (n − p × f); Rᵀ f]``, and since ``v_k = Γ_k 𝒱(k)`` their power is that of
``Γ_kᵀ ᵏX_0^* f^x_k`` against ``𝒱(k)``, so ``b(k) −= Γ_kᵀ ᵏX_0^* f^x_k`` (RIGID.md's
``b(k)`` for a rigid body, where ``Γ_k = I``).

Checks: ``q`` and ``θ̇`` are checked once per call for shape and finiteness. The SKO model is
built with ``SKOModel(validate=False)`` (shapes only) when every body is
:attr:`~sko.bodies.contract.BodyType.valid_by_construction`; otherwise every state is fully
checked, and the shapes a body type returns are checked for the bodies that do not vouch for them.

Fixed tendons (:class:`FixedTendon`, MuJoCo's ``<tendon><fixed>``) couple scalar joints of any
bodies through a spring and damper on the length ``L = Σ_j c_j q_j``: hinge forces of the system
rather than of one body, added where the bodies' are (:meth:`MultibodySystem.hinge_forces`).

Coordinates: ``q`` stacks every body's position coordinates and ``v = θ̇`` its hinge
velocities, both in the tree's stacking order (the order the bodies were given);
``q̇ = system.qdot(q, v)`` maps one to the other body by body.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from functools import cached_property
from numbers import Real
from types import MappingProxyType
from typing import NamedTuple

import numpy as np

from sko.graphs import TreeDigraph
from sko.graphs.errors import DimensionError, NonFiniteError, UnknownNodeError, preview
from sko.arrays import checked_array, checked_scalar, numeric_array, plain_numbers_as_floats
from sko.model import SKOModel
from sko.spatial import cross

from sko.bodies.contract import BodyError, BodyType, root_attachment
from sko.errors import JointError
from sko.bodies.contract import check_node_state as _check_state, checked_hinge_force, valid_by_construction
from sko.engine.state_kernels import Record
from sko.systems.deprecation import BodyLookup, deprecated, renamed_keywords
from sko.systems.catalogue import declared_methods
from sko.systems.coordinates import CoordinateMaps, coordinate_maps
from sko.systems import derivatives, regressors
from sko.systems.derivatives import ForwardDynamicsDerivatives, InverseDynamicsDerivatives
from sko.systems.overflow import finite_result as _finite_result, gravity_cause as _gravity_cause
from sko.engine.dispatch import Engine
from sko.constraints import dynamics as _constraints

__all__ = ["MultibodySystem", "FixedTendon", "fixed_tendon"]


class FixedTendon(NamedTuple):
    """A fixed tendon: the length ``L = Σ_j c_j q_j`` (``coefficients`` ``{joint or body: c_j}``
    over hinge and slide coordinates with ``q̇ = θ̇``), a spring of ``stiffness`` ``k`` slack while
    ``L`` lies in ``spring_length`` ``[lo, hi]`` (a deadband; ``lo = hi`` for a plain spring) and
    a damper ``damping`` ``b`` on ``L̇``. Its hinge forces, added to ``𝒞`` as a joint spring's
    ``κ q`` is, are ``T_j = c_j (k s + b L̇)`` with the stretch ``s = L − clamp(L, lo, hi)``; its
    potential energy is ``½ k s²``. Make checked ones with :func:`fixed_tendon`."""

    name: Hashable
    coefficients: Mapping
    stiffness: float = 0.0
    damping: float = 0.0
    spring_length: tuple[float, float] = (0.0, 0.0)


def fixed_tendon(name: Hashable, coefficients: Mapping, stiffness=0.0, damping=0.0, spring_length=0.0,
                 error: type[Exception] = BodyError) -> FixedTendon:
    """A checked :class:`FixedTendon` (the coefficients copied, read-only); ``spring_length`` is one length or
    a pair ``(lo, hi)``, ``lo ≤ hi``.

    Raises
    ------
    error
        An unhashable name, no coefficients or a non-finite one, a negative or non-finite
        stiffness or damping, a bad spring length; every message names the tendon.
    """
    if not _hashable(name):
        raise error(f"tendon name {name!r} is not hashable")
    if not isinstance(coefficients, Mapping) or not coefficients:
        raise error(f"tendon {name!r}: coefficients must be a non-empty mapping joint -> coefficient, got {coefficients!r}")
    checked = {}
    for joint, c in coefficients.items():
        checked[joint] = checked_scalar(c, f"tendon {name!r}: coefficient of joint {joint!r}", error=error)
    k = checked_scalar(stiffness, f"tendon {name!r}: stiffness", nonnegative=True, error=error)
    b = checked_scalar(damping, f"tendon {name!r}: damping", nonnegative=True, error=error)
    pair = np.ravel(np.asarray(spring_length, dtype=object))
    if pair.size not in (1, 2):
        raise error(f"tendon {name!r}: spring_length must be a length or a pair (lo, hi), got {spring_length!r}")
    lo, hi = (checked_scalar(x, f"tendon {name!r}: spring_length", error=error) for x in (pair[0], pair[-1]))
    if lo > hi:
        raise error(f"tendon {name!r}: spring_length (lo, hi) = ({lo}, {hi}) has lo > hi")
    return FixedTendon(name, MappingProxyType(checked), k, b, (lo, hi))


@declared_methods
class MultibodySystem:
    """A tree of body types under gravity: the system API shared by every system type.

    Every system (this class, :class:`~sko.systems.rigid.RigidSystem`) answers the same calls
    with the arguments in the order ``q, v, tau`` of Pinocchio's ``aba(model, data, q, v, tau)``:
    ``v`` the velocity variables ``θ̇`` (zero when omitted), ``dv`` their rates ``θ̈``, ``tau``
    the generalised forces ``T`` (zero when omitted). Lookups by body name (``body(name)``,
    :meth:`body_joint`) and by joint name (:meth:`joint`, :meth:`joint_body`) are distinct;
    :meth:`q_slice` and :meth:`v_slice` take either.

    Parameters
    ----------
    bodies : sequence of BodyType
        In stacking order; every parent must be one of them (or ``None``).
    gravity : 3- or 6-vector
        ``g`` in world coordinates, or the spatial ``a_g = [0; g]`` of RIGID.md.
    tendons : sequence of FixedTendon
        Checked again here; each joint a tendon names must have one coordinate of ``q`` and
        ``v`` of its own (:attr:`tendons` keeps them).

    Raises
    ------
    BodyError
        Duplicate names, a body hanging from an attachment its parent does not offer, or a
        tendon that is not a :class:`FixedTendon`, shares another's name or acts on a joint
        without exactly one coordinate with ``q̇ = θ̇``.
    NotATreeError, UnknownNodeError
        From the digraph layer (cycles, unknown parents); a tendon naming no joint or body.
    """

    #: what a system derives on first use and a pickle leaves out: the compiled engine (its state
    #: tables, request vectors and kernels) and its prepared one-state calls, the coordinate maps
    #: and whether the compiled derivative recursion takes it
    _DERIVED = ("_engine", "_prepared_calls", "_coordinate_maps", "_compiled_derivatives", "_local_derivatives",
                "_constant_qdot", "_complex_carried", "_pose_free")
    #: whether the bodies carry complex parameters (a regressor's complex step in ``π``): their
    #: states are then complex at a real state too
    _complex_parameters = False
    #: True once the bodies not valid by construction are found to carry a complex step (complex_carry)
    _complex_carried = False
    #: True once they are found not to read the pose of the frame they hang from, as the local
    #: derivatives need (sko.systems.body_derivatives)
    _pose_free = False

    def __getstate__(self) -> dict:
        """The system without what it derives or checks on use (:attr:`_DERIVED`): a pickle is the
        bodies, tree and parameters, small, and the process that loads it rebuilds its compiled
        tables on first use from its own kernel cache (a Dask worker, a subprocess); its identity
        (:func:`~sko.scale.identity.model_identity`) is the same before and after a call."""
        state = self.__dict__.copy()
        for key in self._DERIVED:
            state.pop(key, None)
        return state

    def __init__(self, bodies: Sequence[BodyType], gravity=(0.0, 0.0, -9.81), tendons: Sequence[FixedTendon] = ()):
        bodies = _sequence_of(bodies, BodyType, "bodies")
        names = [b.name for b in bodies]
        unhashable = [n for n in names if not isinstance(n, Hashable)]
        if unhashable:
            raise BodyError(f"body names must be hashable, got {preview(unhashable)}")
        known = set(names)
        if len(known) != len(names):
            raise BodyError(f"duplicate body names in {preview(names)}")
        unknown = [b.name for b in bodies if b.parent is not None and b.parent not in known]
        if unknown:
            raise UnknownNodeError(f"bodies {unknown!r} name parents that are not bodies of the system")
        self.tree = TreeDigraph.from_parents({b.name: b.parent for b in bodies})
        self._body = {b.name: b for b in bodies}
        #: ``body(name)``: the body type of body ``name`` (:class:`~sko.graphs.errors.UnknownNodeError`
        #: for an unknown name); ``body[name]`` still works for one release, with a DeprecationWarning.
        self.body = BodyLookup(self._body, self._body_type)
        for b in bodies:
            offered = (None,) if b.parent is None else self._body[b.parent].attachment_names
            if b.attach not in offered:
                raise BodyError(f"body {b.name!r} hangs from attachment {b.attach!r} of {b.parent!r}, "
                                f"which offers only {offered!r}")
        self.gravity = _gravity(gravity)
        self.q_slices, self.dof_slices = {}, {}
        qo = vo = 0
        for k in self.tree.bodies:
            b = self._body[k]
            self.q_slices[k], self.dof_slices[k] = slice(qo, qo + b.q_size), slice(vo, vo + b.dof_size)
            qo, vo = qo + b.q_size, vo + b.dof_size
        self.q_size, self.dof_size = qo, vo
        self._joint_body, self._shared_joint_names = _joint_bodies(bodies)
        self._root = root_attachment(self.gravity)
        self._order = tuple((k, self._body[k], self.q_slices[k], self.dof_slices[k]) for k in self.tree.scatter_order())
        self._unchecked = frozenset(k for k, b in self._body.items() if not valid_by_construction(b))
        self._set_tendons(tendons)

    def _set_tendons(self, tendons: Sequence[FixedTendon]) -> None:
        """Check the tendons and resolve their joints to ``(q indices, v indices, coefficients)``
        (a joint named twice has its coefficients summed); for a subclass whose lookups by name
        are ready only at the end of its constructor, which calls this again."""
        tendons = _sequence_of(tendons, FixedTendon, "tendons")
        checked = tuple(fixed_tendon(*t) for t in tendons)
        names = [t.name for t in checked]
        if len(set(names)) != len(names):
            raise BodyError(f"duplicate tendon names in {preview(names)}")
        self.tendons = checked
        rates = {}
        if checked:
            maps = coordinate_maps(self)
            rates = {} if maps is None else dict(zip(maps.rate_q.tolist(), maps.rate_v.tolist()))
        self._tendon_terms = tuple(self._tendon_term(t, rates) for t in checked)

    def _tendon_term(self, tendon: FixedTendon, rates: dict) -> tuple:
        """``(tendon, q indices, v indices, coefficients)``; ``rates`` maps each entry of ``q``
        with ``q̇ = θ̇`` to its entry of ``θ̇``."""
        terms: dict = {}
        for joint, c in tendon.coefficients.items():
            try:
                qs, vs = self.q_slice(joint), self.v_slice(joint)
            except UnknownNodeError as exc:  # unknown, or (a cluster's) dependent: no coordinate of its own
                raise type(exc)(f"tendon {tendon.name!r} acts on {joint!r}, which has no coordinate of its own in q "
                                f"and v: {exc.args[0] if exc.args else exc}") from None
            if qs.stop - qs.start != 1 or vs.stop - vs.start != 1 or rates.get(qs.start) != vs.start:
                raise BodyError(f"tendon {tendon.name!r} acts on {joint!r}, which has {qs.stop - qs.start} position and "
                                f"{vs.stop - vs.start} velocity coordinates: a fixed tendon takes hinge and slide joints "
                                "(one coordinate with q̇ = θ̇)")
            terms[(qs.start, vs.start)] = terms.get((qs.start, vs.start), 0.0) + c
        qi, vi = (np.array([key[i] for key in terms], dtype=np.intp) for i in (0, 1))
        return tendon, qi, vi, np.array(list(terms.values()), dtype=float)

    @cached_property
    def _engine(self) -> Engine:
        """The compiled path of this system (:mod:`sko.engine.dispatch`), made on first use."""
        return Engine(self)

    @cached_property
    def _coordinate_maps(self) -> CoordinateMaps | None:
        """The compiled ``q̇`` maps of this system (:mod:`sko.systems.coordinates`), made on first use."""
        return CoordinateMaps.of(self)

    @cached_property
    def _constant_qdot(self) -> np.ndarray | None:
        """:meth:`qdot_matrix` where it does not depend on ``q`` (every joint's coordinates are
        its velocities' integrals, on the compiled maps), else ``None``; made on first use."""
        maps = self._coordinate_maps
        if maps is None or maps.rates:
            return None
        return maps.qdot_matrix(np.zeros(self.q_size), self.dof_size)  # writeable, as the kernels take it

    @cached_property
    def _compiled_derivatives(self) -> bool:
        """Whether the compiled derivative recursion takes this system
        (:func:`sko.systems.rigid_derivatives.compiled`), decided on first use."""
        from sko.systems import rigid_derivatives

        return rigid_derivatives.compiled(self)

    @cached_property
    def _local_derivatives(self):
        """The prepared one-state call of the compiled local derivatives
        (:func:`sko.systems.body_derivatives.one_state_call`), made on first use."""
        from sko.systems import body_derivatives

        return body_derivatives.one_state_call(self)

    @property
    def bodies(self) -> tuple:
        return self.tree.bodies

    @property
    def nq(self) -> int:
        """Number of position variables (``len(q)``)."""
        return self.q_size

    @property
    def nv(self) -> int:
        """Number of velocity variables (``len(v)``, ``len(tau)``)."""
        return self.dof_size

    @property
    def v_slices(self) -> dict:
        """``{body: slice of its velocity variables in v}`` (the same as :attr:`dof_slices`)."""
        return self.dof_slices

    def __repr__(self) -> str:
        kinds = sorted({type(b).__name__ for b in self._body.values()})
        return f"{type(self).__name__}({len(self.bodies)} bodies of types {kinds}, nq={self.nq}, nv={self.nv})"

    # ------------------------------------------------------------------ lookups by name
    def _body_type(self, name: Hashable) -> BodyType:
        """The body type of body ``name`` (see :attr:`body`)."""
        self._check_body(name)
        return self._body[name]

    def _check_body(self, name: Hashable) -> None:
        try:
            known = name in self._body
        except TypeError:
            known = False
        if not known:
            raise UnknownNodeError(f"{name!r} is not a body of this system (bodies: {preview(self.bodies)})")

    def joint_names(self) -> dict:
        """``{joint name: body it moves}`` for the joints that have a name."""
        return dict(self._joint_body)

    def joint_body(self, joint: Hashable) -> Hashable:
        """The body moved by the joint named ``joint``.

        Raises
        ------
        UnknownNodeError
            No joint of that name, or several.
        """
        try:
            return self._joint_body[joint]
        except (KeyError, TypeError):
            if _hashable_in(joint, self._shared_joint_names):
                raise UnknownNodeError(f"{joint!r} names the joints of several bodies "
                                       f"{self._shared_joint_names[joint]!r}: look them up by body") from None
            raise UnknownNodeError(f"{joint!r} is not a joint of this system "
                                   f"(joints: {preview(tuple(self._joint_body))})") from None

    def joint(self, name: Hashable):
        """The joint named ``name`` (a URDF joint name, say ``"shoulder_pan_joint"``).

        For one release a body name is still accepted, with a DeprecationWarning: use
        :meth:`body_joint` for the joint moving a body.
        """
        if not _hashable_in(name, self._joint_body) and _hashable_in(name, self._body):
            deprecated(f"joint({name!r}) with a body name", f"body_joint({name!r})")
            return self.body_joint(name)
        return self.body_joint(self.joint_body(name))

    def body_joint(self, body: Hashable):
        """The inboard joint of body ``body``.

        Raises
        ------
        UnknownNodeError
            Not a body.
        BodyError
            A body type without a joint (``joint`` attribute).
        """
        b = self._body_type(body)
        if not hasattr(b, "joint"):
            raise BodyError(f"body {body!r} ({type(b).__name__}) has no inboard joint")
        return b.joint

    def _body_of(self, name: Hashable) -> Hashable:
        """The body named ``name``, or moved by the joint named ``name`` (not both)."""
        as_joint = self._joint_body.get(name) if _hashable(name) else None
        as_body = name if _hashable_in(name, self._body) else None
        if as_joint is not None and as_body is not None and as_joint != as_body:
            raise UnknownNodeError(f"{name!r} names both body {as_body!r} and the joint of body {as_joint!r}: "
                                   "use the other name of the one you mean")
        if as_joint is None and as_body is None:
            raise UnknownNodeError(f"{name!r} is neither a body nor a joint of this system "
                                   f"(bodies: {preview(self.bodies)})")
        return as_body if as_body is not None else as_joint

    def q_slice(self, name: Hashable) -> slice:
        """Where the position variables of a body (or of the joint of that name) sit in ``q``."""
        return self.q_slices[self._body_of(name)]

    def v_slice(self, name: Hashable) -> slice:
        """Where the velocity variables of a body (or of the joint of that name) sit in ``v``
        (and in ``tau``)."""
        return self.dof_slices[self._body_of(name)]

    # ------------------------------------------------------------------ joint limits
    def _limits(self, field_: str, size: int, slices: dict, fill: float) -> np.ndarray:
        out = np.full(size, fill)
        for k in self.bodies:
            joint = getattr(self._body[k], "joint", None)
            if joint is not None:
                s = slices[k]
                out[s.start:s.start + len(getattr(joint.limits, field_))] = getattr(joint.limits, field_)
        return out

    @property
    def lower_position_limit(self) -> np.ndarray:
        """``(nq,)`` lower position limits of the joints (``−inf`` where none; stored, not enforced)."""
        return self._limits("lower", self.q_size, self.q_slices, -np.inf)

    @property
    def upper_position_limit(self) -> np.ndarray:
        """``(nq,)`` upper position limits of the joints (``inf`` where none)."""
        return self._limits("upper", self.q_size, self.q_slices, np.inf)

    @property
    def velocity_limit(self) -> np.ndarray:
        """``(nv,)`` velocity limits of the joints (``inf`` where none)."""
        return self._limits("velocity", self.dof_size, self.dof_slices, np.inf)

    @property
    def effort_limit(self) -> np.ndarray:
        """``(nv,)`` effort (force, torque) limits of the joints (``inf`` where none)."""
        return self._limits("effort", self.dof_size, self.dof_slices, np.inf)

    # ------------------------------------------------------------------ the state
    def checked_vectors(self, q, v=None) -> tuple[np.ndarray, np.ndarray]:
        """Checked read-only ``(q, v)``: 1-D, finite, of lengths ``nq`` and ``nv``
        (``None`` for ``v`` gives zeros)."""
        q = self._stacked(q, "q", self.q_size, "nq")
        if v is None:
            return q, np.zeros(self.dof_size, dtype=q.dtype)
        return q, self._stacked(v, "v", self.dof_size, "nv")

    @staticmethod
    def _stacked(x, name: str, size: int, symbol: str) -> np.ndarray:
        x = plain_numbers_as_floats(checked_array(x, 1, name), name)
        if x.shape != (size,):
            raise DimensionError(f"{name} has length {x.shape[0]}, expected {symbol} = {size}")
        return x

    def external_forces(self, forces: Mapping | None) -> dict:
        """Checked external forces ``{body: f^x_k}`` (6-vectors ``[n; f]``, world coordinates
        about the world origin); ``None`` for none.

        Raises
        ------
        DimensionError
            Not a mapping, or a force that is not a 6-vector.
        UnknownNodeError
            A key that is not a body.
        BodyError
            A body that offers no frame of its own (attachment ``None``) for the force to act on.
        NonFiniteError
            A force with NaN or infinite entries.
        """
        if forces is None:
            return {}
        if not isinstance(forces, Mapping):
            raise DimensionError(f"external_forces must be a mapping body -> 6-vector, got {type(forces).__name__}")
        out = {}
        for k, f in forces.items():
            if not isinstance(k, Hashable) or k not in self._body:
                raise UnknownNodeError(f"external force on {k!r}, which is not a body (bodies: {preview(self.bodies)})")
            if None not in self._body[k].attachment_names:
                raise BodyError(f"body {k!r} ({type(self._body[k]).__name__}) offers no frame of its own for an external force")
            f = checked_array(f, 1, "external force", k)
            if f.shape != (6,):
                raise DimensionError(f"external force of body {k!r} must have shape (6,), got {f.shape}")
            out[k] = f
        return out

    @renamed_keywords(qd="v")
    def node_states(self, q, v=None) -> dict:
        """``{k: NodeState}`` at ``(q, v)``, computed base to tips (O(N)).

        Raises
        ------
        NonFiniteError
            A body's terms overflow at this (finite but huge) state; the message names the body.
        """
        states = self._node_states(*self.checked_vectors(q, v))
        if not all(_finite_state(s) for s in states.values()):
            _raise_overflow(self.bodies, states, self.body, self.gravity)
        return states

    def _node_states(self, q: np.ndarray, v: np.ndarray) -> dict:
        """The states, unchecked for overflow (the callers check what they use, and name the body)."""
        with np.errstate(over="ignore", invalid="ignore"):
            return self._states_at(q, v)

    def _states_at(self, q: np.ndarray, v: np.ndarray) -> dict:
        root, states = self._root, {}
        for k, b, qs, vs in self._order:
            inboard = root if b.parent is None else states[b.parent].attachments[b.attach]
            try:
                s = b.at_state(q[qs], v[vs], inboard, self.gravity)
            except JointError as exc:  # a joint refusing its state (a zero quaternion) names its body
                raise exc if repr(k) in str(exc) else type(exc)(f"body {k!r}: {exc}") from None
            if k in self._unchecked:
                _check_state(b, s, real=q.dtype.kind == "f" and v.dtype.kind == "f" and not self._complex_parameters)
            states[k] = s
        return states

    @renamed_keywords(qd="v")
    def sko_model(self, q, v=None, external_forces: Mapping | None = None) -> tuple[SKOModel, np.ndarray, np.ndarray]:
        """The SKO model at ``(q, v)`` and the stacked ``a``, ``b`` (SKO.md §3, §14), with
        ``b(k) −= Γ_kᵀ ᵏX_0^* f^x_k`` for the ``external_forces`` (module docstring)."""
        if (fast := self._engine.sko_model(q, v, external_forces)) is not NotImplemented:
            return fast
        forces = self.external_forces(external_forces)
        return self._assemble(self.node_states(q, v), forces)

    def _assemble(self, states: dict, forces: dict):
        phi, b = {}, []
        for k in self.bodies:
            body, s = self._body[k], states[k]
            if body.parent is not None:
                phi[k] = (s.E @ states[body.parent].attachments[body.attach].Gamma).T
            b.append(s.b if k not in forces else s.b - _frame_force(s.attachments[None], forces[k]))
        model = SKOModel(self.tree, phi=phi, H={k: s.H for k, s in states.items()},
                         M={k: s.M for k, s in states.items()}, validate=bool(self._unchecked))
        a, b = _stack([states[k].a for k in self.bodies]), _stack(b)
        if a.dtype != object and b.dtype != object and not (np.isfinite(a).all() and np.isfinite(b).all()
                                                            and all(_finite_state(s) for s in states.values())):
            _raise_overflow(self.bodies, states, self.body, self.gravity)
        return model, a, b

    # ------------------------------------------------------------------ dynamics
    # mass_matrix, inverse_dynamics, forward_dynamics, mass_matrix_inverse: made from their
    # declarations (sko.systems.catalogue)
    @renamed_keywords(qd="v")
    def bias_forces(self, q, v=None, external_forces: Mapping | None = None) -> np.ndarray:
        """``𝒞(q, v) = H φ (M φ* a + b)`` (Coriolis, centrifugal, gravity, hinge and external
        forces): inverse dynamics at ``dv = 0`` (SKO.md §5, Eq. 3)."""
        return self.inverse_dynamics(q, v, None, external_forces)

    def gravity_forces(self, q) -> np.ndarray:
        """The configuration-dependent part of ``𝒞``: bias forces at ``v = 0``."""
        return self.bias_forces(q, None)

    @renamed_keywords(qd="v")
    def hinge_forces(self, q, v=None) -> np.ndarray:
        """Stacked internal hinge forces of the bodies (joint springs, dampers) and of the
        :attr:`tendons` (zero if none)."""
        return self._hinge_forces(*self.checked_vectors(q, v))

    def _hinge_forces(self, q: np.ndarray, v: np.ndarray, bodies=None) -> np.ndarray:
        """The hinge forces of ``bodies`` (default: all) and of the tendons at checked ``q``, ``v``."""
        out = np.zeros(self.dof_size, dtype=np.result_type(q, v, float))
        real = out.dtype.kind == "f"
        for k in self.bodies if bodies is None else bodies:
            f = self._body[k].hinge_force(q[self.q_slices[k]], v[self.dof_slices[k]])
            if f is not None:
                out[self.dof_slices[k]] += checked_hinge_force(self._body[k], f, real)
        for tendon, qi, vi, c in self._tendon_terms:
            with np.errstate(over="ignore", invalid="ignore"):
                f = tendon.stiffness * _stretch(tendon, c @ q[qi]) + tendon.damping * (c @ v[vi])
                out[vi] += c * f
            if isinstance(f, (float, complex, np.inexact)) and not np.isfinite(f):
                raise NonFiniteError(f"tendon {tendon.name!r}: its force overflows (NaN or infinity) at this state; the "
                                     "coordinates or velocities of its joints are too large for floating point")
        return out

    def _tendon_potential(self, q):
        """``Σ ½ k s²`` of the tendons' springs at ``q`` (one state, or a batch ``(B, nq)``)."""
        total = 0.0
        for tendon, qi, _, c in self._tendon_terms:
            if tendon.stiffness:
                s = _stretch(tendon, q[..., qi] @ c)
                total = total + 0.5 * tendon.stiffness * s * s
        return total

    # ------------------------------------------------------------------ derivatives
    def inverse_dynamics_derivatives(self, q, v=None, dv=None, external_forces: Mapping | None = None,
                                     method: str = "auto") -> InverseDynamicsDerivatives:
        """``(∂τ/∂q, ∂τ/∂v, ℳ)`` of :meth:`inverse_dynamics` (``∂τ/∂dv = ℳ``), exact to rounding
        (:mod:`sko.systems.derivatives`; ``method``: :data:`~sko.systems.derivatives.METHODS`).
        ``∂/∂q`` is taken in the tangent space: column ``ι`` is the derivative along
        ``integrate(q, ε e_ι)``, Pinocchio's convention. ``q``, ``v``, ``dv`` may carry a leading
        batch axis ``(B, n)``; results are ``(B, nv, nv)``."""
        return derivatives.inverse_dynamics_derivatives(self, q, v, dv, external_forces, method)

    def forward_dynamics_derivatives(self, q, v=None, tau=None, external_forces: Mapping | None = None,
                                     method: str = "auto") -> ForwardDynamicsDerivatives:
        """``(∂dv/∂q, ∂dv/∂v, ℳ⁻¹)`` of :meth:`forward_dynamics` (``∂dv/∂τ = ℳ⁻¹``): ``−ℳ⁻¹``
        times the derivatives of inverse dynamics at ``dv = FD(q, v, τ)``; tangent columns,
        ``method`` and batches as :meth:`inverse_dynamics_derivatives`."""
        return derivatives.forward_dynamics_derivatives(self, q, v, tau, external_forces, method)

    # ------------------------------------------------------------------ energy
    @renamed_keywords(qd="v")
    def kinetic_energy(self, q, v=None):
        """``½ Σ_k 𝒱*(k) M(k) 𝒱(k)`` (= ``½ vᵀ ℳ v``), in the states' scalar type (float,
        complex for complex-step, an expression for symbolic states)."""
        if (fast := self._engine.energies(self.kinetic_energy, q, v, potential=False)) is not NotImplemented:
            return _finite_result(fast, "kinetic energy")
        states = self.node_states(q, v)
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported by _finite_result
            return _finite_result(sum(0.5 * s.V @ s.M @ s.V for s in states.values()), "kinetic energy")

    def potential_energy(self, q):
        """``Σ_k potential(k)`` (gravity and the bodies' own potentials) plus the tendons' springs'
        ``½ k s²``, in the states' scalar type; for rigid bodies ``−Σ m_k g · c_k``, zero at the
        world origin."""
        return self._with_tendons(self._bodies_potential_energy(q), q, "potential energy")

    def _bodies_potential_energy(self, q):
        if (fast := self._engine.energies(self._bodies_potential_energy, q, kinetic=False)) is not NotImplemented:
            return _finite_result(fast, "potential energy")
        states = self.node_states(q)
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported by _finite_result
            return _finite_result(sum(s.potential for s in states.values()), "potential energy")

    @renamed_keywords(qd="v")
    def energy(self, q, v=None):
        """Kinetic plus potential energy, in the states' scalar type: a float for real states, the
        complex number itself for complex-step states, an expression for symbolic ones."""
        return self._with_tendons(self._bodies_energy(q, v), q, "energy")

    def _bodies_energy(self, q, v=None):
        if (fast := self._engine.energies(self._bodies_energy, q, v)) is not NotImplemented:
            return _finite_result(fast, "energy")
        states = self.node_states(q, v)
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported by _finite_result
            return _finite_result(sum(0.5 * s.V @ s.M @ s.V + s.potential for s in states.values()), "energy")

    def _with_tendons(self, energy, q, what: str):
        """``energy`` (of the bodies, at the checked states ``q``) plus the tendons' potential."""
        if not self._tendon_terms:
            return energy
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported by _finite_result
            return _finite_result(energy + self._tendon_potential(np.asarray(q)), what)

    # ------------------------------------------------------------------ inertial parameters and regressors
    def inertial_parameters(self, friction: bool = False, armature: bool = False) -> np.ndarray:
        """``π``: every body's inertial parameters in body order (a rigid body's ten in
        Pinocchio's order, :mod:`sko.bodies.rigid_parameters`; other types as they declare), then
        zeros for the optional joint columns (:mod:`sko.systems.regressors`; IDENTIFICATION.md)."""
        return regressors.parameters(self, friction, armature)

    def inertial_parameter_names(self, friction: bool = False, armature: bool = False) -> list:
        """One ``(body, name)`` per entry of :meth:`inertial_parameters`."""
        return regressors.parameter_names(self, friction, armature)

    def with_inertial_parameters(self, parameters) -> "MultibodySystem":
        """A new system equal to this one but with the bodies' parameters ``parameters`` (the
        length of :meth:`inertial_parameters` without joint columns); this one is not changed.

        Raises
        ------
        BodyError, NotPositiveDefiniteError
            A wrong length, or parameters of no physical body (the message names the body).
        """
        return self._with_parameters(regressors.checked_body_parameters(self, parameters), check=True)

    def _with_parameters(self, parameters, check: bool) -> "MultibodySystem":
        """:meth:`with_inertial_parameters`; unchecked (complex parameters, a complex step) with
        ``check=False``."""
        slices = regressors.body_parameter_slices(self)
        new = self._with_bodies({k: self._body[k].with_inertial_parameters(parameters[slices[k]], check=check)
                                 for k in self.bodies if slices[k].stop > slices[k].start})
        new._complex_parameters = bool(np.iscomplexobj(parameters))
        return new

    def _with_bodies(self, bodies: Mapping) -> "MultibodySystem":
        """A copy of this system with some bodies replaced (same names, sizes and joints)."""
        new = object.__new__(type(self))
        new.__dict__.update(self.__getstate__())
        new._body = {k: bodies.get(k, b) for k, b in self._body.items()}
        new.body = BodyLookup(new._body, new._body_type)
        new._order = tuple((k, new._body[k], qs, vs) for k, _, qs, vs in self._order)
        return new

    def _body_torque_regressor(self, q: np.ndarray, v: np.ndarray, dv: np.ndarray) -> np.ndarray:
        """The bodies' columns of ``Y`` at one checked state on the reference path (the request
        ``joint_torque_regressor``'s; :func:`~sko.systems.regressors.tree_torque_regressor`)."""
        return regressors.tree_torque_regressor(self, q, v, dv)

    def _body_energy_regressors(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """The bodies' ``[y_T; y_V]`` at one checked state on the reference path (the request
        ``energy_regressors``'; :func:`~sko.systems.regressors.tree_energy_regressors`)."""
        return np.stack(regressors.tree_energy_regressors(self, q, v))

    # ------------------------------------------------------------------ attachment frames
    def jacobian(self, q, frame) -> np.ndarray:
        """``J`` (6 × nv) with ``v_o = J θ̇``: the spatial velocity ``[ω; v]`` of an attachment
        frame ``F_o`` in its own coordinates (SKO.md §12: ``J = ℬ* φ* H*``, here with
        ``ℬ* = Γ_o`` picking ``v_o = Γ_o 𝒱(k)`` from the node velocity of the body ``k`` offering
        the frame, at the state: a flexible body's node moves with its modes).

        ``frame`` is a body (its own frame, attachment ``None``) or a pair ``(body, attachment)``
        naming one of the frames the body offers (``attachment_names``, e.g. a flexible body's
        ``"tip"``). Walks from ``k`` to the root: the column block of an ancestor ``j`` is
        ``Γ_o φ*(j, k) H*(j)``, zero off the path (O(depth)). ``q`` may carry a leading batch
        axis ``(B, nq)``; the result is then ``(B, 6, nv)``.

        Raises
        ------
        UnknownNodeError
            ``frame`` names no body, or an attachment its body does not offer.
        """
        k, name = self._attachment_frame(frame)
        m = self._body[k].node_dim

        def Gamma(A):  # Γ_o of every state, from the body's record in the filled arenas
            L = self._engine.layout
            o = L.attachment_offsets[(L.index[k], name)] + Record.SIZE
            return A[:, o: o + 6 * m].reshape(-1, 6, m)

        if (fast := self._engine.jacobian(self.jacobian, q, frame, k, Gamma)) is not NotImplemented:
            return fast
        q, _ = self.checked_vectors(q, None)
        B = np.asarray(self.node_states(q)[k].attachments[name].Gamma)
        model, _, _ = self.sko_model(q)
        J = np.zeros((6, self.nv), dtype=np.result_type(B, model.dtype))
        for j in [k, *self.tree.ancestors(k)]:
            J[:, self.dof_slices[j]] = B @ model.H[j].T
            if self.tree.parent(j) is not None:
                B = B @ model.phi[j].T
        return J

    def _attachment_frame(self, frame) -> tuple:
        """``(body, attachment)`` of a frame given as a body or a pair ``(body, attachment)``."""
        try:
            own = frame in self._body
        except TypeError:  # unhashable
            own = False
        if own:
            k, name = frame, None
        elif isinstance(frame, tuple) and len(frame) == 2 and _known(frame[0], self._body):
            k, name = frame
        else:
            raise UnknownNodeError(f"frame {frame!r} is neither a body nor a pair (body, attachment) of this system "
                                   f"(bodies: {preview(self.bodies)})")
        offered = self._body[k].attachment_names
        if name not in offered:
            raise UnknownNodeError(f"body {k!r} ({type(self._body[k]).__name__}) offers no attachment frame {name!r} "
                                   f"(it offers {list(offered)!r})")
        return k, name

    # ------------------------------------------------------------------ constraints at frames
    def constraint_jacobian(self, q, constraints) -> np.ndarray:
        """``J`` (``m × nv``) of constraints at frames (:func:`sko.constraints.constraint_jacobian`)."""
        from sko.constraints import constraint_jacobian

        return constraint_jacobian(self, q, constraints)

    def constraint_drift(self, q, v, constraints) -> np.ndarray:
        """``γ = J̇ v`` of constraints at frames (:func:`sko.constraints.constraint_drift`)."""
        from sko.constraints import constraint_drift

        return constraint_drift(self, q, v, constraints)

    def constrained_dynamics(self, q, v, tau, constraints) -> tuple:
        """``(v̇, λ)`` under constraints at frames (:func:`sko.constraints.constrained_dynamics`)."""
        return _constraints.constrained_dynamics(self, q, v, tau, constraints)

    def constrained_dynamics_derivatives(self, q, v, tau, constraints):
        """``∂(v̇, λ)/∂(q, v, τ)`` by complex step (:func:`sko.constraints.constrained_dynamics_derivatives`)."""
        from sko.constraints import constrained_dynamics_derivatives

        return constrained_dynamics_derivatives(self, q, v, tau, constraints)

    def impulse_dynamics(self, q, v_minus, constraints, restitution=0.0) -> tuple:
        """``(v⁺, Λ)`` of an impact on constraints at frames (:func:`sko.constraints.impulse_dynamics`)."""
        from sko.constraints import impulse_dynamics

        return impulse_dynamics(self, q, v_minus, constraints, restitution)

    def constrained_operational_space_inertia(self, q, constraints) -> np.ndarray:
        """``Λ = (J ℳ⁻¹ Jᵀ)⁻¹`` of constraints at frames
        (:func:`sko.constraints.constrained_operational_space_inertia`)."""
        from sko.constraints import constrained_operational_space_inertia

        return constrained_operational_space_inertia(self, q, constraints)

    # ------------------------------------------------------------------ configurations
    def neutral_configuration(self) -> np.ndarray:
        """Every body at its reference configuration (rigid joints: ``X_J = I``)."""
        return _stack([self._body[k].neutral() for k in self.bodies])

    def random_configuration(self, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """A random valid configuration (unit quaternions)."""
        try:
            rng = np.random.default_rng(rng)
        except (TypeError, ValueError):
            raise DimensionError(f"random_configuration takes a numpy Generator, a seed or None, got {rng!r}") from None
        return _stack([self._body[k].random_configuration(rng) for k in self.bodies])

    def normalize(self, q) -> np.ndarray:
        """``q`` projected back onto the configuration manifold, body by body (unit quaternions)."""
        q, _ = self.checked_vectors(q, None)
        if self._engine.coordinates_are_velocities:  # no quaternions: nothing to project
            return np.array(q, dtype=complex if q.dtype.kind == "c" else float)  # a complex step stays complex
        maps = coordinate_maps(self)
        if maps is not None and q.dtype.kind in "fc":  # only the joints with a projection are called
            return maps.normalize(q)
        return _stack([self._body[k].normalize(q[self.q_slices[k]]) for k in self.bodies])

    @renamed_keywords(qd="v")
    def qdot(self, q, v) -> np.ndarray:
        """``q̇`` from ``(q, v)``, body by body (``q̇ = v`` except for quaternions and
        successor-frame velocities)."""
        q, v = self.checked_vectors(q, v)
        if self._engine.coordinates_are_velocities:  # q̇ = v joint by joint
            return np.array(v, dtype=np.result_type(q, v, float))
        maps = coordinate_maps(self)
        if maps is not None and q.dtype.kind in "fc" and v.dtype.kind in "fc":  # only the joints with a map are called
            return maps.qdot(q, v)
        return _stack([np.asarray(self._body[k].qdot(q[self.q_slices[k]], v[self.dof_slices[k]])) for k in self.bodies])

    def qdot_matrix(self, q) -> np.ndarray:
        """``Q(q)`` (nq × nv) with ``q̇ = Q(q) v``: the differential of :meth:`integrate` at zero,
        ``d/dε integrate(q, ε e_ι) = Q(q) e_ι`` (the tangent columns of the derivatives)."""
        q, _ = self.checked_vectors(q, None)
        if self._engine.coordinates_are_velocities:
            return np.eye(self.q_size, self.dof_size, dtype=np.result_type(q, float))
        maps = coordinate_maps(self)
        if maps is not None and q.dtype.kind in "fc":
            return maps.qdot_matrix(q, self.dof_size)
        columns = [np.asarray(self.qdot(q, e)) for e in np.eye(self.dof_size)]
        return np.column_stack(columns) if columns else np.zeros((self.q_size, 0), dtype=q.dtype)

    @renamed_keywords(qd="v")
    def integrate(self, q, v, dt: float = 1.0) -> np.ndarray:
        """The configuration reached from ``q`` at constant velocity ``v`` after ``dt`` (exact on
        each joint's configuration manifold; quaternions stay unit). :meth:`difference` inverts it.

        Raises
        ------
        DimensionError, NonFiniteError
            ``dt`` not a real number, or not finite (and the checks of ``q``, ``v``).
        """
        if not isinstance(dt, Real):
            raise DimensionError(f"time step dt must be a real number, got {dt!r}")
        if not np.isfinite(dt):
            raise NonFiniteError(f"time step dt must be finite, got {dt!r}")
        q, v = self.checked_vectors(q, v)
        return _stack([self._body[k].integrate(q[self.q_slices[k]], v[self.dof_slices[k]], dt) for k in self.bodies])

    def difference(self, q0, q1) -> np.ndarray:
        """The constant velocity ``v`` that takes ``q0`` to ``q1`` in unit time:
        ``integrate(q0, difference(q0, q1)) == q1`` (the rotation of a quaternion joint is
        reached by the shortest way, so ``q1`` comes back up to the quaternion's sign).

        Raises
        ------
        BodyError
            A body type that cannot invert its integration (a user-defined ``q̇`` map).
        """
        q0, q1 = self._stacked(q0, "q0", self.q_size, "nq"), self._stacked(q1, "q1", self.q_size, "nq")
        return _stack([self._body[k].difference(q0[self.q_slices[k]], q1[self.q_slices[k]]) for k in self.bodies])

    # ------------------------------------------------------------------ deprecated spellings
    def neutral(self) -> np.ndarray:
        """Deprecated: :meth:`neutral_configuration`."""
        deprecated("neutral()", "neutral_configuration()")
        return self.neutral_configuration()

    @renamed_keywords(qd="v")
    def bias(self, q, v=None, external_forces: Mapping | None = None) -> np.ndarray:
        """Deprecated: :meth:`bias_forces`."""
        deprecated("bias()", "bias_forces()", stacklevel=4)  # past the keyword wrapper
        return self.bias_forces(q, v, external_forces)

    def random_state(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Deprecated: ``(random_configuration(rng), rng.uniform(-1, 1, nv))``."""
        deprecated("random_state(rng)", "random_configuration(rng)")
        q = self.random_configuration(rng)
        return q, rng.uniform(-1.0, 1.0, self.dof_size)


def _known(key, names: Mapping) -> bool:
    """``key`` is one of ``names`` (False for an unhashable key)."""
    try:
        return key in names
    except TypeError:
        return False


def _stack(parts: list) -> np.ndarray:
    """The bodies' pieces of a stacked vector, one after the other (empty for no body)."""
    return np.concatenate(parts) if parts else np.zeros(0)


def _stretch(tendon: FixedTendon, length):
    """``L − clamp(L, lo, hi)`` of a tendon's length (a number, or one per state): the clamp
    compares real parts, so a complex step passes through.

    Raises
    ------
    BodyError
        A deadband (``lo < hi``) and a symbolic length, which has no side of it.
    """
    lo, hi = tendon.spring_length
    if lo == hi:
        return length - lo
    try:
        real = np.real(length)
        out = np.where(real > hi, length - hi, np.where(real < lo, length - lo, 0 * length))
    except TypeError:
        raise BodyError(f"tendon {tendon.name!r}: its spring length is a range ({lo}, {hi}), which needs a numeric "
                        f"length, got {length!r}") from None
    return out[()] if out.ndim == 0 else out


def _hashable(name) -> bool:
    try:
        hash(name)
    except TypeError:
        return False
    return True


def _hashable_in(name, mapping) -> bool:
    return _hashable(name) and name in mapping


def _joint_bodies(bodies) -> tuple[dict, dict]:
    """``{joint name: body}`` for the bodies whose inboard joint has a name of its own, and
    ``{joint name: bodies}`` for names several joints share (not usable for lookups)."""
    seen: dict = {}
    for b in bodies:
        name = getattr(getattr(b, "joint", None), "name", None)
        if name is not None:
            seen.setdefault(name, []).append(b.name)
    return ({name: ks[0] for name, ks in seen.items() if len(ks) == 1},
            {name: tuple(ks) for name, ks in seen.items() if len(ks) > 1})


def _gravity(gravity) -> np.ndarray:
    """``g`` (3,) from a 3-vector or ``a_g = [0; g]``: finite numbers, or sympy expressions."""
    try:
        g = numeric_array(gravity, "gravity")
    except DimensionError:
        raise DimensionError(f"gravity must be a 3-vector g or 6-vector [0; g] of numbers, got {gravity!r}") from None
    if g.dtype.kind == "c":
        raise DimensionError(f"gravity must be real, got {gravity!r}")
    if g.shape == (6,) and all(e == 0 for e in g[:3]):
        g = g[3:]
    if g.shape != (3,) or (g.dtype != object and not np.isfinite(g).all()):
        raise DimensionError(f"gravity must be a finite 3-vector g or 6-vector [0; g], got {gravity!r}")
    return g


_STATE_FIELDS = ("V", "a", "b", "M", "potential")


def _sequence_of(items, kind: type, what: str) -> tuple:
    """``items`` as a tuple of ``kind`` objects, or the :class:`BodyError` saying what is wrong
    (one object, a string or a mapping given for the sequence; an item of another type)."""
    if isinstance(items, (kind, str, bytes, Mapping)) or not isinstance(items, Iterable):
        raise BodyError(f"{what} must be a sequence of {kind.__name__}, got {type(items).__name__}")
    items = tuple(items)
    for x in items:
        if not isinstance(x, kind):
            raise BodyError(f"{x!r} is not a {kind.__name__}")
    return items


def _finite_state(s) -> bool:
    """Whether a node state's numbers (velocity, ``a``, ``b``, ``M``, potential) are finite."""
    for field_ in _STATE_FIELDS:
        x = np.asarray(getattr(s, field_))
        if x.dtype != object and not np.isfinite(x).all():
            return False
    return True


def _raise_overflow(bodies, states, body_of, gravity=None) -> None:
    """Name the first body whose node terms left the floating-point range (finite but huge
    ``q``, ``v`` or forces: ``v × I v`` overflows beyond about 1e154), and what scales them: the
    body's own number where it says (``overflow_hint``: a coupling's ratio), a huge gravity, or
    the inputs."""
    for k in bodies:
        s = states[k]
        for field_ in _STATE_FIELDS:
            x = np.asarray(getattr(s, field_))
            if x.dtype != object and not np.isfinite(x).all():
                hint = getattr(body_of(k), "overflow_hint", lambda: None)()
                cause = f"its {hint}" if hint else _gravity_cause(gravity) or \
                    "the velocities, coordinates or forces are too large for floating point"
                raise NonFiniteError(f"body {k!r}: its {field_ if field_ != 'potential' else 'potential energy'}(k) "
                                     f"overflows (NaN or infinity) at this state; {cause}")
    raise NonFiniteError("the stacked a, b overflow (NaN or infinity) at this state, or an external force does")


def _frame_force(frame, f) -> np.ndarray:
    """``Γᵀ ᵏX_0^* f^x``: a world force ``[n; f]`` about the world origin, acting on the frame
    ``(R, p)`` of attachment ``frame``, as a generalised force on the node (module docstring)."""
    R, p = frame.rotation, frame.position
    local = np.concatenate([(f[:3] - cross(p, f[3:])) @ R, f[3:] @ R])
    return local @ frame.Gamma

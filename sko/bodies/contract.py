"""The contract for a body type (BODIES.md, *The contract for a new body type*; SKO.md §14).

A body type is what a researcher writes to try a new kind of node. It never sees the tree, the
SKO model or any recursion; it answers, at a state, questions about its own node:

* its sizes: ``q_size`` (position coordinates), ``dof_size`` (hinge velocities ``θ̇(k)``,
  ``n_k``) and ``node_dim`` (``m_k``, the size of its node velocity ``𝒱(k)``);
* how its node velocity depends on where it hangs. The parent offers *attachment frames*
  ``F_o`` (its own frame, nodes of a flexible body, …) and, for each, an :class:`Attachment`:
  ``Γ_o`` (6 × m_parent) with ``v_o = Γ_o 𝒱(℘(k))`` the spatial velocity of ``F_o`` in ``F_o``
  coordinates, ``γ_o = Γ̇_o 𝒱(℘(k))`` its velocity-product acceleration, the world pose of
  ``F_o`` and ``v_o``. The child answers with ``E_k`` (m_k × 6) in

      𝒱(k) = E_k v_o + H*(k) θ̇(k),      so      φ*(℘(k), k) = E_k Γ_o     (any shape);

* its joint map ``H(k)``, inertia ``M(k)`` (kinetic energy ``½ 𝒱*(k) M(k) 𝒱(k)``), and
  ``a(k)``, ``b(k)``: with ``α(k) = d𝒱(k)/dt``, ``a(k) = α(k) − φ*(℘(k), k) α(℘(k)) − H*(k) θ̈(k)``
  (it contains ``E_k γ_o``), and ``M(k) α(k) + b(k)`` is the generalised inertia force of the
  node minus its applied (elastic, damping, external) forces, conjugate to ``𝒱(k)``;
* the attachments it offers its own children, and optionally the map ``θ̇ → q̇``, its
  potential energy (for energy checks), its kinetic energy computed its own way
  (:meth:`BodyType.kinetic_energy`, which the ``mass_from_energy`` check compares ``ℳ`` with)
  and forces acting *across its hinge* (joint springs, dampers: :meth:`BodyType.hinge_force`). Such internal forces must not go into ``b(k)``:
  ``b(k)`` is transmitted to the parent through ``φ``, while a spring between parent and child
  pushes both ways and only shows in the hinge force ``T`` (for the flexible body, ``K η`` is
  the modal part of ``b(k)``, which the weight does not transmit).

Optionally, :meth:`BodyType.compiled_state` names a registered compiled kernel that writes the
same node state into flat buffers, with the body's constants packed for it
(:mod:`sko.engine.state_kernels`; every body type of the library has one, and a type written outside
the package registers its own the same way). A type without one still runs fast: its Python
:meth:`BodyType.at_state` fills the buffers and the recursions run compiled.

Gravity needs no code in a body type: the root is an attachment with ``Γ = 0``, pose the
identity and ``γ = −a_g`` (RIGID.md: the base bodies' ``a(k)`` gets ``ᵏX_0 (−a_g)``), so it
reaches every node through ``E_k γ_o``.

Spatial vectors follow RIGID.md: motion ``[ω; v]``, force ``[n; f]``, body coordinates.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field

import numpy as np

from sko.graphs.arrays import check_full_row_rank, check_spd, checked_array, numeric_array
from sko.graphs.errors import DimensionError, NonFiniteError, SKOError

__all__ = ["BodyError", "Attachment", "NodeState", "BodyType", "CompiledState", "root_attachment", "check_node_state",
           "checked_hinge_force", "valid_by_construction"]


class BodyError(SKOError, ValueError):
    """A body type built from bad data (wrong shapes, a stiffness that is not symmetric positive
    semidefinite, particles that leave ``M(k)`` singular, an attachment that does not exist…).
    The message names the body."""


@dataclass(frozen=True)
class Attachment:
    """Kinematics of an attachment frame ``F_o`` of a body at a state.

    Attributes
    ----------
    Gamma : (6, m) array
        ``Γ_o``: ``v_o = Γ_o 𝒱`` (the body's node velocity ``𝒱``), spatial velocity of ``F_o``
        in ``F_o`` coordinates.
    gamma : (6,) array
        ``γ_o = Γ̇_o 𝒱``, so that the acceleration of ``F_o`` is ``Γ_o α + γ_o``.
    rotation, position : (3, 3), (3,) arrays
        World pose of ``F_o``: its axes (columns) and origin in world coordinates.
    velocity : (6,) array
        ``v_o = Γ_o 𝒱`` at this state.
    """

    Gamma: np.ndarray
    gamma: np.ndarray
    rotation: np.ndarray
    position: np.ndarray
    velocity: np.ndarray


def root_attachment(gravity) -> Attachment:
    """The inertial frame as the attachment of base bodies: ``Γ`` has no columns, ``γ = −a_g``
    (``a_g = [0; g]``), identity pose, zero velocity."""
    g = np.asarray(gravity)
    g = g if g.dtype == object else g.astype(float)  # sympy entries stay exact
    return Attachment(Gamma=np.zeros((6, 0)), gamma=np.concatenate([np.zeros(3, dtype=g.dtype), -g]),
                      rotation=np.eye(3), position=np.zeros(3), velocity=np.zeros(6))


@dataclass(frozen=True)
class NodeState:
    """What a body type returns at a state (see the module docstring).

    ``E`` (m_k × 6), ``H`` (n_k × m_k), ``M`` (m_k × m_k), ``a``, ``b`` (m_k), ``V`` (its node
    velocity ``𝒱(k) = E v_o + H* θ̇``), ``attachments`` (name → :class:`Attachment` for the
    frames it offers its children; ``None`` names its body frame), ``potential`` (its
    gravitational and elastic potential energy).
    """

    E: np.ndarray
    H: np.ndarray
    M: np.ndarray
    a: np.ndarray
    b: np.ndarray
    V: np.ndarray
    attachments: Mapping = field(default_factory=dict)
    potential: object = 0.0  #: a number, or an expression for symbolic states


@dataclass(frozen=True)
class CompiledState:
    """A body's compiled state (optional; :mod:`sko.engine.state_kernels`): the registered
    :class:`~sko.engine.state_kernels.StateKernel` that writes its node state, the body's ``constants``
    packed as that kernel reads them (finite real numbers), and the ``scratch`` entries it needs;
    optionally the compiled hooks of :mod:`sko.engine.hooks` reading the same constants: its
    ``hinge_force`` (mirroring :meth:`BodyType.hinge_force`), ``qdot`` and ``normalize``."""

    kernel: object
    constants: np.ndarray
    scratch: int = 0
    hinge_force: object = None
    qdot: object = None
    normalize: object = None


class BodyType(ABC):
    """Base class of a node type. Subclasses set the sizes and implement :meth:`at_state`.

    Parameters
    ----------
    name : hashable
        The body's node label.
    parent : hashable or None
        Its parent body (``None``: a base body, hanging from the inertial frame).
    attach : hashable or None
        Which attachment frame of the parent it hangs from (``None``: the parent's body frame).
    """

    q_size: int
    dof_size: int
    node_dim: int
    #: True when, for every finite state, :meth:`at_state` returns finite arrays of the shapes in
    #: :class:`NodeState`, every attachment it offers, ``H(k)`` of full row rank and ``M(k)``
    #: symmetric positive definite, because the constructor checked the parameters they come
    #: from. A system of such bodies then builds its SKO model at a state without re-checking
    #: (``SKOModel(validate=False)``). Leave it False for a new type: every state is then checked.
    valid_by_construction: bool = False

    def __init__(self, name: Hashable, parent: Hashable | None = None, attach: Hashable | None = None):
        self.name = name
        self.parent = parent
        self.attach = attach

    # ------------------------------------------------------------------ to implement
    @abstractmethod
    def at_state(self, q: np.ndarray, qd: np.ndarray, inboard: Attachment, gravity: np.ndarray) -> NodeState:
        """The node at position ``q`` (``q_size``) and hinge velocity ``qd`` (``dof_size``),
        hanging from ``inboard``; ``gravity`` (world, 3) is only for the potential energy."""

    @property
    def attachment_names(self) -> tuple:
        """Attachment frames this body offers its children (``None``: its body frame)."""
        return (None,)

    # ------------------------------------------------------------------ optional
    def rigid_part(self, name: Hashable) -> Hashable:
        """The rigid part of the body that the attachment frame ``name`` moves with: two
        attachments of one part never move relative to each other, so a constraint between them
        is refused (CONSTRAINTS.md §1). Default: each attachment its own part; a body whose
        attachments can move together (a flexible body without modes, a cluster's ``None``)
        says so."""
        return name

    def compiled_state(self) -> CompiledState | None:
        """The body's compiled state kernel and packed constants (:mod:`sko.engine.state_kernels`), or
        ``None`` (default): its :meth:`at_state` then runs in Python and only the recursions are
        compiled."""
        return None

    def kinetic_energy(self, q: np.ndarray, qd: np.ndarray, inboard: Attachment):
        """The body's kinetic energy ``T(k)`` at ``(q, qd)`` hanging from ``inboard``, computed its
        own way (from its particles, say), or ``None`` (default). Only the ``mass_from_energy``
        check of ``sko verify`` (:mod:`sko.verify.physics`) reads it, comparing ``ℳ`` with
        ``∂²T/∂θ̇²`` for ``T = Σ_k T(k)``; a body that returns ``None`` counts ``½ 𝒱*(k) M(k) 𝒱(k)``
        of its :meth:`at_state`, which checks ``M(k)`` only as the system assembles it. Return
        the state's scalar type (complex for complex-step states)."""
        return None

    def qdot(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """``q̇`` from ``θ̇`` (default: ``q̇ = θ̇``)."""
        return np.asarray(qd)

    def hinge_force(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray | None:
        """Internal forces across the hinge conjugate to ``θ̇`` (e.g. ``κ q`` of a joint spring),
        added to ``𝒞``; ``None`` (default) for none."""
        return None

    def normalize(self, q: np.ndarray) -> np.ndarray:
        """``q`` projected back onto the configuration manifold (default: unchanged; a complex
        ``q``, a complex step, stays complex)."""
        return np.array(q, dtype=complex if np.iscomplexobj(q) else float)

    def neutral(self) -> np.ndarray:
        """A reference configuration (default: zeros)."""
        return np.zeros(self.q_size)

    def random_configuration(self, rng: np.random.Generator) -> np.ndarray:
        """A random valid configuration (for tests)."""
        return self.normalize(self.neutral() + rng.uniform(-1.0, 1.0, self.q_size))

    def integrate(self, q: np.ndarray, qd: np.ndarray, dt: float) -> np.ndarray:
        """The configuration reached from ``q`` at constant ``θ̇ = qd`` after ``dt`` (default: one
        Euler step of :meth:`qdot`, exact when ``q̇ = θ̇``)."""
        return self.normalize(np.asarray(q) + dt * np.asarray(self.qdot(q, qd)))

    def difference(self, q0: np.ndarray, q1: np.ndarray) -> np.ndarray:
        """The constant ``θ̇`` taking ``q0`` to ``q1`` in unit time, inverse of :meth:`integrate`
        (default: ``q1 − q0``, for bodies whose ``q̇ = θ̇``; others must override it)."""
        if self.q_size != self.dof_size or type(self).qdot is not BodyType.qdot:
            raise BodyError(f"body {self.name!r} ({type(self).__name__}) has its own q̇ map and defines no difference(q0, q1)")
        return np.asarray(q1, dtype=float) - np.asarray(q0, dtype=float)

    # ------------------------------------------------------------------ inertial parameters (optional)
    def inertial_parameters(self) -> np.ndarray:
        """The parameters ``π_k`` that ``M(k)``, ``b(k)`` and the potential energy are linear in
        (IDENTIFICATION.md, *Parameters of a body*); default: none (the body adds no columns to
        the regressors). A type declaring some also overrides :meth:`with_inertial_parameters`."""
        return np.zeros(0)

    def inertial_parameter_names(self) -> tuple:
        """One name per entry of :meth:`inertial_parameters` (default ``"p0"``, ``"p1"``, …)."""
        return tuple(f"p{i}" for i in range(len(self.inertial_parameters())))

    def with_inertial_parameters(self, parameters, check: bool = True) -> "BodyType":
        """A new body equal to this one but with parameters ``parameters`` (this one is never
        changed). ``check=False`` skips the physical checks and accepts complex parameters (a
        complex step in ``π``: the dynamics are linear in them, so the step is exact).

        Raises
        ------
        BodyError
            Parameters of the wrong length (the default declares none), or, checked, of no
            physical body.
        """
        p = np.asarray(parameters)
        if p.shape != (0,):
            raise BodyError(f"body {self.name!r} ({type(self).__name__}) declares no inertial parameters, got {p.shape}")
        return self

    def node_regressor(self, state: NodeState, alpha: np.ndarray) -> np.ndarray | None:
        """``F`` (m_k × p_k) with ``M(k) α(k) + b(k) = F π_k`` at ``state`` and node acceleration
        ``alpha``, or ``None`` (default): the regressors then take the body's columns exactly by
        complex step in ``π_k`` (IDENTIFICATION.md, *Any body type*)."""
        return None

    def energy_regressors(self, state: NodeState, gravity: np.ndarray) -> tuple | None:
        """``(y_T, y_V)`` (p_k each) with the node's kinetic energy ``½ 𝒱* M 𝒱 = y_T · π_k`` and
        potential energy ``y_V · π_k`` at ``state``, or ``None`` (default: by complex step)."""
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, parent={self.parent!r})"


def valid_by_construction(body: BodyType) -> bool:
    """``body.valid_by_construction``, unless a class outside this package replaced the
    ``at_state`` of a library body type (a subclass of :class:`~sko.bodies.rigid.RigidBody`
    writing its own state): the library's constructor vouched for its own states, not for the
    subclass's, which are then checked as any new type's. A new type of a user's vouches for its
    own ``at_state``."""
    if not body.valid_by_construction:
        return False
    mro = type(body).__mro__
    owner = next(i for i, kind in enumerate(mro) if "at_state" in vars(kind))
    if _in_package(mro[owner]):
        return True
    return not any(_in_package(kind) and "at_state" in vars(kind) for kind in mro[owner + 1:] if kind is not BodyType)


def _in_package(kind: type) -> bool:
    return kind.__module__.partition(".")[0] == "sko"


def check_node_state(body: BodyType, s: NodeState, real: bool = False) -> None:
    """What a body type returned at a state, checked as both paths need it: shapes against its
    sizes and attachments, finite numbers, ``M`` symmetric positive definite and ``H`` of full
    row rank, and (``real``: at a real state) no complex entry, named in the error (a
    researcher's new type may err): :class:`DimensionError`, :class:`NonFiniteError`,
    :class:`NotPositiveDefiniteError`, :class:`RankDeficientError` or :class:`BodyError`."""
    m, n = body.node_dim, body.dof_size
    expected = {"E": (m, 6), "H": (n, m), "M": (m, m), "a": (m,), "b": (m,), "V": (m,)}
    for field_, shape in expected.items():
        got = np.shape(getattr(s, field_))
        if got != shape:
            raise DimensionError(f"body {body.name!r} ({type(body).__name__}) returned {field_} of shape {got}, expected {shape}")
        if real and np.iscomplexobj(getattr(s, field_)):  # the compiled path would drop it, the reference keep it
            raise BodyError(f"body {body.name!r} ({type(body).__name__}) returned a complex {field_} at a real state")
    k = body.name
    for field_, what in (("E", "transform E"), ("a", "Coriolis term a"), ("b", "gyroscopic term b"), ("V", "velocity V")):
        checked_array(getattr(s, field_), len(expected[field_]), what, k)
    check_spd(checked_array(s.M, 2, "inertia M", k), "inertia M", k)
    check_full_row_rank(checked_array(s.H, 2, "joint map H", k), "joint map H", k)
    missing = [name for name in body.attachment_names if name not in s.attachments]
    if missing:
        raise BodyError(f"body {body.name!r} ({type(body).__name__}) offers attachments {missing!r} but returned none for them")
    for name, att in s.attachments.items():
        for field_, shape in (("Gamma", (6, m)), ("gamma", (6,)), ("rotation", (3, 3)), ("position", (3,)), ("velocity", (6,))):
            if np.shape(getattr(att, field_)) != shape:
                raise DimensionError(f"body {body.name!r} offers attachment {name!r} with {field_} of shape "
                                     f"{np.shape(getattr(att, field_))}, expected {shape}")
            if real and np.iscomplexobj(getattr(att, field_)):
                raise BodyError(f"body {body.name!r} ({type(body).__name__}) offers attachment {name!r} with a "
                                f"complex {field_} at a real state")


def checked_hinge_force(body: BodyType, f, real: bool) -> np.ndarray:
    """The hinge force ``f`` a body type's ``hinge_force`` returned, as numbers of its ``dof_size``
    (a scalar for every θ̇), real at a ``real`` state and finite; else a :class:`BodyError`
    (:class:`NonFiniteError` for NaN or infinity) naming the body."""
    where = f"body {body.name!r} ({type(body).__name__}): its hinge_force returns"
    try:
        f = numeric_array(f, where, copy=False)
    except DimensionError as error:
        raise BodyError(str(error)) from None
    if f.shape not in ((), (body.dof_size,)):
        raise BodyError(f"{where} shape {f.shape}, expected ({body.dof_size},), one force per θ̇")
    if real and f.dtype.kind in "cO":
        raise BodyError(f"{where} {'complex forces' if f.dtype.kind == 'c' else 'symbols'} at a real state")
    if f.dtype != object and not np.isfinite(f).all():
        raise NonFiniteError(f"{where} NaN or infinity at this state (it overflows, or is not a number): {f}")
    return f

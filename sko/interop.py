"""State conversion between a :class:`~sko.systems.rigid.RigidSystem` and Pinocchio or MuJoCo
(RIGID.md, *Interoperability and checks*).

Joints are matched by name, never by position. The conventions that differ:

==================  =========================================  ======================================
joint               sko (URDF loader)                          peer
==================  =========================================  ======================================
free flyer          ``q = (w, x, y, z, p)``, ``ν = [ω; v]``    Pinocchio: ``q = (p, x, y, z, w)``,
                    (both in the body frame)                   ``ν = [v; ω]`` (body frame);
                                                               MuJoCo: ``qpos = (p, w, x, y, z)``,
                                                               ``qvel = (ṗ in world, ω in body)``
continuous          ``θ``                                      Pinocchio: ``(cos θ, sin θ)``
planar (normal z)   ``(θ, x, y)``, ``ν = (ω, v_x, v_y)``       Pinocchio: ``(x, y, cos θ, sin θ)``,
                                                               ``ν = (v_x, v_y, ω)``
==================  =========================================  ======================================

Velocity-like vectors (``ν``, ``ν̇``) and generalised forces (``τ``) are mapped by the same
rules (a force is conjugate to its velocity, so the free flyer's ``[n; f]`` becomes ``[f; n]``;
MuJoCo's free-joint force is ``(f in world, n in body)``).

Matrices: the peer's velocity is ``ν_peer = T ν`` with ``T`` orthogonal (a permutation for
Pinocchio; for MuJoCo also the rotation ``R`` of a free joint's linear part, so ``T`` depends on
``q``), and then forces map by ``T`` as well (``τ_peer = T⁻ᵀ τ = T τ``). A matrix between
velocity-like and force spaces at one state, ``ℳ`` (``τ = ℳ ν̇``), ``ℳ⁻¹`` and any other such
linear map, becomes ``T A Tᵀ`` (:meth:`~PinocchioMap.matrix`; ``Tᵀ A_peer T`` back): a
congruence and a similarity at once. Derivatives of the dynamics are not such matrices when
``T`` depends on the state: with Pinocchio they map by the permutation alone; MuJoCo's
``∂qfrc/∂qpos`` and ``∂qfrc/∂qvel`` also differentiate ``T`` (and ``qacc``'s ``ω × v`` term) and
have no map here.

Coupled systems (a :class:`~sko.systems.clustered.ClusteredRigidSystem` of couplings: URDF mimic
joints with ``mimic="couple"``, MJCF joint equalities) have the independent coordinates only;
every joint's value is ``θ = G q + d`` (``joint_positions``, ``G`` constant, ``Ġ = 0``). The
peer's velocities are ``ν_peer = L ν`` with ``L`` the rows of ``G`` the peer holds, in its order
(before a MuJoCo free joint's rotation):

- Pinocchio's mimic model (``buildModelFromUrdf(path, mimic=True)``; its ``JointModelMimic``
  joints have no coordinates): ``L`` is a permutation, and everything maps as without couplings;
- Pinocchio's full model (mimic joints as ordinary joints) and MuJoCo (``qpos`` holds every
  joint; the equality is a constraint): ``L = G`` reordered, and each quantity has its map:

  - ``q``: :meth:`~PinocchioMap.q` gives ``G q + d``; ``q_back`` picks the independent joints
    and checks the others;
  - ``ν``, ``ν̇`` (``ν̇_peer = G ν̇``): ``v`` gives ``L ν``; ``v_back`` picks and checks;
  - ``τ``: ``force_back`` gives ``Lᵀ τ_peer`` (a force has no unique lift: no map to the peer);
  - ``ℳ`` and the derivatives of the inverse dynamics: ``matrix_back`` gives ``Lᵀ A_peer L``
    (no map to the peer: ``matrix`` raises);

  so ``τ = Gᵀ τ_peer(G q + d, G ν, G ν̇)`` and ``ℳ = Gᵀ ℳ_peer G``. ``q_back`` and ``v_back``
  raise :class:`InteropError` naming the first dependent joint whose value is not the coupling's
  (relative tolerance ``consistency_tol``). Closed loops (``G`` depends on ``q``) are refused.

Pinocchio and MuJoCo are optional: :class:`PinocchioMap` only reads the peer's model object,
:class:`MujocoMap` imports MuJoCo when built, and a missing peer raises
:class:`~sko.errors.MissingDependencyError` naming the extra (``pip install "sko-multibody[crosscheck]"``).

Examples
--------
A floating-base robot loaded by both (here from a URDF string), one state mapped to Pinocchio
and back::

    import numpy as np, pinocchio as pin
    from sko.io import load_urdf
    from sko.interop import PinocchioMap

    system = load_urdf("robot.urdf", floating_base=True)
    model = pin.buildModelFromUrdf("robot.urdf", pin.JointModelFreeFlyer())
    to_pin = PinocchioMap(system, model)
    q, v, a = system.random_configuration(0), np.ones(system.nv), np.zeros(system.nv)
    tau = pin.rnea(model, model.createData(), to_pin.q(q), to_pin.v(v), to_pin.v(a))
    assert np.allclose(to_pin.v_back(tau), system.inverse_dynamics(q, v, a))
    assert np.allclose(to_pin.q_back(to_pin.q(q)), q)

A robot with mimic joints (coupled, ``mimic="couple"``) against Pinocchio's full model, whose
mimic joints are ordinary joints: the state is lifted by ``G``, the forces projected by ``Gᵀ``::

    system = load_urdf("panda.urdf")
    full = pin.buildModelFromUrdf("panda.urdf")  # mimic=True: one to one, as above
    to_pin = PinocchioMap(system, full)
    tau_full = pin.rnea(full, full.createData(), to_pin.q(q), to_pin.v(v), to_pin.v(a))
    assert np.allclose(to_pin.force_back(tau_full), system.inverse_dynamics(q, v, a))
    assert np.allclose(to_pin.matrix_back(pin.crba(full, full.createData(), to_pin.q(q))), system.mass_matrix(q))
"""

from __future__ import annotations

import numpy as np

from sko.arrays import checked_array, scaled_norm
from sko.graphs.errors import DimensionError, SKOError
from sko.optional import require
from sko.spatial import quaternion_matrix, quaternion_normalize

__all__ = ["InteropError", "PinocchioMap", "MujocoMap", "named_joints"]


class InteropError(SKOError, ValueError):
    """A peer model that does not match the system: a joint missing on either side, or a joint
    kind with no known conversion."""


def _checked_system(system, cls: str):
    """``system`` if it is a multibody system, else :class:`InteropError` naming what it got."""
    from sko.systems.multibody import MultibodySystem

    if not isinstance(system, MultibodySystem):
        raise InteropError(f"{cls} needs a system (sko.systems.RigidSystem, e.g. from sko.io.load_urdf "
                           f"or load_mjcf) as its first argument, got {_described(system)}")
    return system


def _described(x) -> str:
    text = repr(x)
    return f"{type(x).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


class _Lift:
    """Velocity-like vectors and matrices as ``ν_peer = L ν`` (shared by both maps; module
    docstring, *Coupled systems*).

    ``L`` (``n_peer × nv``) is ``G`` of the system's couplings (the identity without any) with
    its rows in the peer's order. When it is a permutation (no coupling, or each dependent joint
    a mimic joint of the peer) :attr:`v_perm` holds it, ``ours[v_perm] = theirs``, and every
    quantity maps by it; otherwise ``v_perm`` is ``None``.
    """

    system = None
    v_perm: np.ndarray | None
    #: The relative tolerance of the coupling check in ``q_back`` / ``v_back`` (of the peer's
    #: dependent coordinates against the ones the couplings give).
    consistency_tol: float = 1e-9
    _peer = "the peer"

    def _init_lift(self, spanning, rows: np.ndarray) -> None:
        """``L`` from ``rows`` (the peer's velocity index → the spanning tree's), and which peer
        coordinate holds each of ours."""
        system = self.system
        G, ind_v, self._ind_q = _spanning_maps(system, spanning)
        self._spanning, self._G, self._ind_v, self._n_peer = spanning, G, ind_v, len(rows)
        self._q_labels, v_labels = _labels(spanning)
        self._v_label = [v_labels[r] for r in rows]
        at = np.full(spanning.nv, -1)
        at[rows] = np.arange(len(rows))
        pick = at[ind_v]
        if (pick < 0).any():
            c = int(np.flatnonzero(pick < 0)[0])
            raise InteropError(f"joint {v_labels[ind_v[c]]!r} is independent here but has no coordinates in "
                               f"{self._peer}'s model (a mimic joint there?)")
        self._v_pick = pick
        self._v_dep = np.setdiff1d(np.arange(len(rows)), pick)
        if G is None or len(rows) == system.nv:  # a permutation
            perm = np.zeros(len(rows), dtype=int)
            perm[pick] = np.arange(system.nv)
            self.v_perm, self._L = perm, None
        else:
            self.v_perm, self._L = None, G[rows]

    @property
    def lift(self) -> np.ndarray:
        """``L`` (``n_peer × nv``), the peer's velocities ``ν_peer = L ν`` before any free-joint
        rotation: ``G`` of the couplings in the peer's order, or a permutation matrix."""
        if self._L is not None:
            return self._L.copy()
        out = np.zeros((self._n_peer, self.system.nv))
        out[np.arange(self._n_peer), self.v_perm] = 1.0
        return out

    def v(self, v) -> np.ndarray:
        """Our ``ν`` or ``ν̇`` in the peer's order and conventions (``L ν``); our ``τ`` too when
        :attr:`v_perm` is set (a force has no lift to dependent joints)."""
        v = self._vector(v, self.system.nv, "velocity-like vector")
        return v[self.v_perm] if self._L is None else self._L @ v

    def v_back(self, v_peer) -> np.ndarray:
        """The peer's ``ν`` or ``ν̇`` in ours: the independent coordinates picked, the dependent
        ones checked against the couplings (:class:`InteropError` naming the joint). With
        :attr:`v_perm` set, the peer's ``τ`` too; else use :meth:`force_back`."""
        v_peer = self._vector(v_peer, self._n_peer, "peer velocity-like vector")
        return self._velocity_back(v_peer)

    def force_back(self, tau_peer) -> np.ndarray:
        """The peer's generalised force ``τ_peer`` (``rnea``, ``qfrc``) as ours: ``Lᵀ τ_peer``
        (the forces of dependent joints projected onto the independent ones by ``Gᵀ``)."""
        tau_peer = self._vector(tau_peer, self._n_peer, "peer force")
        return self._force_back(tau_peer)

    def matrix(self, M) -> np.ndarray:
        """Our ``nv × nv`` matrix (``ℳ``, ``ℳ⁻¹``, a derivative of the dynamics) in the peer's
        order: ``P A Pᵀ`` for the permutation ``P`` (module docstring, *Matrices*).

        Raises
        ------
        InteropError
            The peer's model holds dependent joints as coordinates of their own: ``ℳ`` of the
            coupled system does not determine the peer's (use :meth:`matrix_back`)."""
        M = self._matrix(M, self.system.nv, "matrix")
        if self._L is not None:
            raise InteropError(f"{self._peer}'s model has the coupled joints {self._dependent_names()} as coordinates "
                               "of their own: a matrix of the coupled system has no image there; map the peer's "
                               "matrix back with matrix_back (Gᵀ A G)")
        return M[np.ix_(self.v_perm, self.v_perm)]

    def matrix_back(self, M_peer) -> np.ndarray:
        """A peer's matrix (``n_peer × n_peer``) in our order: ``Lᵀ A_peer L``. Exact for ``ℳ``
        and the derivatives of the inverse dynamics (``τ = Gᵀ τ_peer(G q + d, G ν, G ν̇)`` with a
        constant ``G``); with :attr:`v_perm` set (``Pᵀ A P``) for any matrix."""
        return self._matrix_back(self._matrix(M_peer, self._n_peer, "peer matrix"))

    # ------------------------------------------------------------------ on checked arrays
    def _velocity_back(self, v_peer: np.ndarray) -> np.ndarray:
        if self._L is None:
            out = np.zeros(self.system.nv, dtype=v_peer.dtype)
            out[self.v_perm] = v_peer
            return out
        v = v_peer[self._v_pick]
        self._check_dependent((self._L @ v)[self._v_dep], v_peer[self._v_dep], v_peer, self._v_dep,
                              self._v_label, "velocity-like vector", periodic=None,
                              hint="; a generalised force maps back with force_back")
        return v

    def _force_back(self, tau_peer: np.ndarray) -> np.ndarray:
        return self._velocity_back(tau_peer) if self._L is None else self._L.T @ tau_peer

    def _matrix_back(self, A: np.ndarray) -> np.ndarray:
        if self._L is None:
            inverse = np.argsort(self.v_perm)
            return A[np.ix_(inverse, inverse)]
        return self._L.T @ A @ self._L

    def _full_q(self, q: np.ndarray) -> np.ndarray:
        """Our (checked) ``q`` as the spanning tree's: every joint's value."""
        return q if self._ind_q is None else self.system.spanning_configuration(q)

    def _q_from_full(self, full: np.ndarray, present: np.ndarray, periodic: np.ndarray, what: str) -> np.ndarray:
        """Our ``q`` from the spanning tree's values ``full`` (the peer's, at the indices
        ``present``): the independent ones picked, the other present ones checked."""
        if self._ind_q is None:
            return full
        q = full[self._ind_q]
        dep = np.setdiff1d(present, self._ind_q)
        if len(dep):
            self._check_dependent(self.system.spanning_configuration(q)[dep], full[dep], full[present], dep,
                                  self._q_labels, what, periodic[dep])
        return q

    def _check_dependent(self, lifted, theirs, scale_of, where, labels, what: str, periodic, hint: str = "") -> None:
        """:class:`InteropError` naming the first joint whose peer value ``theirs`` is not the
        coupling's ``lifted`` (angles of ``periodic`` joints modulo 2π)."""
        d = theirs - lifted
        if periodic is not None and periodic.any():
            d = np.where(periodic, np.remainder(d + np.pi, 2 * np.pi) - np.pi, d)
        scale = max(1.0, float(np.max(np.abs(scale_of), initial=0.0)))
        bad = np.flatnonzero(~(np.abs(d) <= self.consistency_tol * scale))
        if len(bad):
            i = bad[0]
            raise InteropError(f"{self._peer}'s {what} breaks the couplings at joint {labels[where[i]]!r}: it holds "
                               f"{theirs[i]:.17g}, the coupling gives {lifted[i]:.17g} from the independent joints "
                               f"(difference {d[i]:.3g}){hint}")

    def _dependent_names(self) -> list:
        return sorted({self._v_label[i] for i in self._v_dep})

    @staticmethod
    def _matrix(M, n: int, what: str) -> np.ndarray:
        M = checked_array(M, 2, what)
        if M.shape != (n, n):
            raise DimensionError(f"{what} has shape {M.shape}, expected ({n}, {n})")
        return M

    @staticmethod
    def _vector(x, n: int, what: str) -> np.ndarray:
        """``x`` as a finite real vector of length ``n`` (the project's errors, never numpy's)."""
        x = checked_array(x, 1, what)
        if x.shape != (n,):
            raise DimensionError(f"{what} has shape {x.shape}, expected ({n},)")
        if x.dtype.kind != "f":
            raise DimensionError(f"{what} must hold real numbers, got dtype {x.dtype}")
        return x


def _spanning_maps(system, spanning) -> tuple:
    """``(G, ind_v, ind_q)``: ``G`` (the spanning tree's velocities = ``G ν``, or None without
    couplings), and the spanning tree's index of each of our velocity and position coordinates
    (``ind_q`` None without couplings)."""
    from sko.systems.clustered import DependentJointError

    if spanning is system:
        return None, np.arange(system.nv), None
    G = system.constraint_matrices(system.neutral_configuration())[0]
    ind_v, ind_q = np.full(system.nv, -1), np.full(system.nq, -1)
    for body in system.body_names:
        try:
            qs, vs = system.q_slice(body), system.v_slice(body)
        except DependentJointError:
            continue
        ind_q[qs] = np.arange(spanning.q_slices[body].start, spanning.q_slices[body].stop)
        ind_v[vs] = np.arange(spanning.dof_slices[body].start, spanning.dof_slices[body].stop)
    if (ind_v < 0).any() or (ind_q < 0).any():
        raise InteropError("the system has partly dependent joints: state maps handle joints whose coordinates are "
                           "all independent or all dependent")
    return G, ind_v, ind_q


def _spanning_of(system, maps: bool = False):
    """The system every joint of which has coordinates: its spanning tree if it is coupled (with
    ``maps``, :class:`InteropError` naming the loops of a system that closes any)."""
    from sko.systems.clustered import ClusteredRigidSystem

    if not isinstance(system, ClusteredRigidSystem):
        return system
    if maps:
        for node in system.clusters():
            loops = [L.name for L in system._body_type(node).loops]
            if loops:
                raise InteropError(f"the cluster of {node!r} closes the loops {loops}: state maps handle coupled "
                                   "joints (mimic joints, joint equalities), whose G is constant, not closed loops")
    return system.spanning_system()


def _labels(spanning) -> tuple[list, list]:
    """The joint name (else the body) of each position and each velocity coordinate of ``spanning``."""
    q_labels, v_labels = [None] * spanning.nq, [None] * spanning.nv
    for body in spanning.bodies:
        qs, vs = spanning.q_slices[body], spanning.dof_slices[body]
        q_labels[qs], v_labels[vs] = [body] * (qs.stop - qs.start), [body] * (vs.stop - vs.start)
    for name, (_, qs, vs) in named_joints(spanning).items():
        q_labels[qs], v_labels[vs] = [name] * (qs.stop - qs.start), [name] * (vs.stop - vs.start)
    return q_labels, v_labels


class PinocchioMap(_Lift):
    """Coordinates of ``system`` (from :func:`sko.io.urdf.load_urdf`) ↔ a ``pinocchio.Model`` of
    the same URDF (``buildModelFromUrdf``, with ``JointModelFreeFlyer()`` for a floating base).

    Methods: :meth:`q` / :meth:`q_back` for configurations, ``v`` / ``v_back`` for velocities
    and accelerations, :meth:`force_back` for forces, ``matrix`` / ``matrix_back`` for ``ℳ``,
    ``ℳ⁻¹`` and the derivatives of the dynamics.

    A coupled system (``mimic="couple"``) maps onto Pinocchio's mimic model
    (``buildModelFromUrdf(path, mimic=True)``: its mimic joints have no coordinates, so ours map
    one to one, and ``v`` / ``v_back`` / ``matrix`` also convert forces and any matrix) or onto its
    full model (mimic joints as ordinary joints: lifted by ``G``, module docstring, *Coupled
    systems*).

    Raises
    ------
    InteropError
        ``system`` is not a system or ``model`` not a ``pinocchio.Model``; a Pinocchio joint with
        no joint of that name in ``system`` (or the other way round), or of a kind with a
        different number of coordinates and no known conversion; a Pinocchio mimic joint that is
        independent here or coupled by another ratio or offset; a system with closed loops.
    """

    _peer = "Pinocchio"

    def __init__(self, system, model):
        _checked_system(system, "PinocchioMap")
        if not all(hasattr(model, a) for a in ("names", "njoints", "joints", "nq", "nv")):
            raise InteropError(f"PinocchioMap needs a pinocchio.Model (e.g. pinocchio.buildModelFromUrdf) as its "
                               f"second argument, got {_described(model)}")
        self.system, self.model = system, model
        spanning = _spanning_of(system, maps=True)
        by_name = spanning.joint_names()
        names = [model.names[i] for i in range(1, model.njoints)]
        missing = sorted(set(names) - set(by_name))
        moving = {name for name, body in by_name.items() if spanning.body_joint(body).nv}
        extra = sorted(moving - set(names))
        if missing or extra:
            raise InteropError(f"joints differ: Pinocchio's {missing} are not in the system, the system's {extra} "
                               "are not in Pinocchio's model")
        self._joints, mimics = [], []
        rows = np.zeros(model.nv, dtype=int)
        present, periodic = [], np.zeros(spanning.nq, dtype=bool)
        for i, name in enumerate(names, start=1):
            jm = model.joints[i]
            body = by_name[name]
            if jm.shortname() == "JointModelMimic":
                mimics.append((name, body, jm))
                continue
            qs, vs = spanning.q_slices[body], spanning.dof_slices[body]
            kind = _pinocchio_kind(jm, qs, vs, name)
            ours = np.arange(vs.start, vs.stop)
            if kind in ("free", "planar"):
                ours = np.concatenate([ours[3:], ours[:3]]) if kind == "free" else ours[[1, 2, 0]]
            rows[jm.idx_v:jm.idx_v + jm.nv] = ours
            self._joints.append((kind, qs, slice(jm.idx_q, jm.idx_q + jm.nq)))
            present.extend(range(qs.start, qs.stop))
            if kind in ("continuous", "planar"):
                periodic[qs.start] = True
        for name, body, _ in mimics:
            if _independent(system, body):
                raise InteropError(f"joint {name!r} is a mimic joint in Pinocchio's model but independent here "
                                   "(load the URDF with mimic='couple')")
        self._init_lift(spanning, rows)
        self._present, self._periodic = np.array(sorted(present), dtype=int), periodic
        lift = self.lift
        for name, body, jm in mimics:
            self._check_mimic(name, body, jm, lift)

    def _check_mimic(self, name: str, body, jm, lift: np.ndarray) -> None:
        """A Pinocchio mimic joint (one of our dependent joints) must have our ratio and offset."""
        spanning, vs = self._spanning, self._spanning.dof_slices[body]
        if vs.stop - vs.start != 1:
            raise InteropError(f"joint {name!r}: a mimic joint of {vs.stop - vs.start} coordinates has no conversion")
        mimic = jm.extract()
        G, names = self._G, [self._v_label[i] for i in self._v_pick]
        row_pin = mimic.scaling * lift[jm.idx_v]  # Pinocchio: q_mimic = scaling q_primary + offset
        q0 = self.system.neutral_configuration()
        full, q_pin = self.system.spanning_configuration(q0), self.q(q0)
        offset = full[spanning.q_slices[body].start] - mimic.scaling * q_pin[jm.idx_q]
        if not (np.allclose(G[vs.start], row_pin, rtol=1e-12, atol=1e-12)
                and np.isclose(offset, mimic.offset, rtol=1e-12, atol=1e-12)):
            raise InteropError(f"joint {name!r} mimics with ratio {mimic.scaling} and offset {mimic.offset} in "
                               f"Pinocchio's model, and is coupled here as {_row_text(G[vs.start], names, offset)}")

    def q(self, q) -> np.ndarray:
        """Our configuration as Pinocchio's (quaternions normalised; dependent joints of its full
        model at the values the couplings give)."""
        q = self._full_q(self._vector(q, self.system.nq, "q"))
        out = np.zeros(self.model.nq)
        for kind, ours, theirs in self._joints:
            x = q[ours]
            if kind == "free":
                if scaled_norm(x[:4]) < 1e-9:
                    raise InteropError(f"q of a free joint holds the quaternion {x[:4]}, of (near) zero norm")
                quat = quaternion_normalize(x[:4])
                out[theirs] = np.concatenate([x[4:], quat[1:], quat[:1]])
            elif kind == "continuous":
                out[theirs] = np.cos(x[0]), np.sin(x[0])
            elif kind == "planar":
                out[theirs] = x[1], x[2], np.cos(x[0]), np.sin(x[0])
            else:
                out[theirs] = x
        return out

    def q_back(self, q_pin) -> np.ndarray:
        """Pinocchio's configuration as ours (continuous angles in ``(−π, π]``): the independent
        joints picked, the dependent ones of its full model checked against the couplings
        (:class:`InteropError` naming the joint; angles modulo 2π)."""
        q_pin = self._vector(q_pin, self.model.nq, "Pinocchio q")
        out = np.zeros(self._spanning.nq)
        for kind, ours, theirs in self._joints:
            x = q_pin[theirs]
            if kind == "free":
                out[ours] = np.concatenate([x[6:], x[3:6], x[:3]])
            elif kind == "continuous":
                out[ours] = np.arctan2(x[1], x[0])
            elif kind == "planar":
                out[ours] = np.arctan2(x[3], x[2]), x[0], x[1]
            else:
                out[ours] = x
        return self._q_from_full(out, self._present, self._periodic, "configuration")


def _independent(system, body) -> bool:
    """Whether ``body``'s joint coordinates are entries of ``system``'s ``q`` and ``v``."""
    from sko.systems.clustered import DependentJointError

    try:
        system.v_slice(body)
    except DependentJointError:
        return False
    return True


def _row_text(row: np.ndarray, names: list, offset: float) -> str:
    """``θ = Σ ratio × joint + offset`` for a row of ``G`` over our coordinates ``names``."""
    terms = [f"{c:g} × {names[j]!r}" for j, c in enumerate(row) if c != 0]
    return " + ".join(terms or ["0"]) + f" + {offset:g}"


def _pinocchio_kind(jm, qs: slice, vs: slice, name: str) -> str:
    short = jm.shortname()
    nq, nv = qs.stop - qs.start, vs.stop - vs.start
    if nv != jm.nv:
        raise InteropError(f"joint {name!r} has {nv} velocity coordinates here and {jm.nv} in Pinocchio ({short})")
    if short == "JointModelFreeFlyer" and nq == 7:
        return "free"
    if short == "JointModelPlanar" and nq == 3:
        return "planar"
    if jm.nq == 2 and jm.nv == 1 and nq == 1:
        return "continuous"
    if jm.nq == nq:
        return "same"
    raise InteropError(f"joint {name!r}: no conversion between {nq} coordinates here and Pinocchio's {short}")


def named_joints(system) -> dict:
    """``{joint name: (joint, q slice, v slice)}`` for every named joint of ``system``, the parts
    of a :class:`~sko.bodies.composite.CompositeJoint` (several joints on one body) included.
    For a coupled system, the joints of its spanning tree (coordinates of ``spanning_configuration``)."""
    system = _spanning_of(system)
    out = {}
    for joint_name, body in system.joint_names().items():
        joint, qs, vs = system.body_joint(body), system.q_slices[body], system.dof_slices[body]
        parts = getattr(joint, "parts", None)
        if parts is None:
            out[joint_name] = (joint, qs, vs)
            continue
        qo, vo = qs.start, vs.start
        for _, part in parts:
            if part.name is not None:
                out[part.name] = (part, slice(qo, qo + part.nq), slice(vo, vo + part.nv))
            qo, vo = qo + part.nq, vo + part.nv
    return out


class MujocoMap(_Lift):
    """Coordinates of ``system`` ↔ a compiled ``mujoco.MjModel`` with joints of the same names
    (e.g. MuJoCo's compilation of the URDF the system was loaded from).

    A system from :func:`sko.io.load_mjcf` already uses MuJoCo's
    ``qpos``, ``qvel`` and ``qfrc``: its map is the identity. For a URDF-loaded system the free
    flyer is the one joint whose velocities differ by a rotation (``ṗ = R v``), so :meth:`v`,
    :meth:`v_back`, :meth:`force_back`, :meth:`matrix` and :meth:`matrix_back` take the
    configuration ``q`` (ours) as well.

    A coupled system (an MJCF joint equality, a URDF mimic joint) maps by ``G``: MuJoCo's
    ``qpos`` holds every joint (its equality is a constraint), module docstring, *Coupled systems*.

    Raises
    ------
    InteropError
        ``system`` is not a system or ``model`` not a ``mujoco.MjModel``, or one whose arrays were
        edited out of shape (:func:`sko.io.mjcf_checks.check_structure`); a moving joint of
        ``system`` with no MuJoCo joint of that name, or the other way round, or different
        numbers of coordinates; a system with closed loops.
    """

    _peer = "MuJoCo"

    def __init__(self, system, model):
        mujoco = require("mujoco", "state conversion with MuJoCo")
        from sko.errors import MJCFError
        from sko.io.mjcf import object_names
        from sko.io.mjcf_checks import check_structure

        _checked_system(system, "MujocoMap")
        if not isinstance(model, mujoco.MjModel):
            raise InteropError(f"MujocoMap needs a mujoco.MjModel (e.g. mujoco.MjModel.from_xml_path) as its second "
                               f"argument, got {_described(model)}")
        self.system, self.model = system, model
        spanning = _spanning_of(system, maps=True)
        ours_by_name = named_joints(spanning)
        try:  # an edited model's addresses are not read as they are
            check_structure(mujoco, model, {kind: object_names(model, kind)
                                            for kind in ("body", "joint", "equality", "tendon", "actuator")})
        except MJCFError as exc:
            raise InteropError(str(exc)) from None
        names = object_names(model, "joint")  # unnamed joints named as the MJCF loader names them
        moving = {name for name, (joint, _, _) in ours_by_name.items() if joint.nv}
        missing, extra = sorted(set(names) - set(ours_by_name)), sorted(moving - set(names))
        if missing or extra:
            raise InteropError(f"joints differ: MuJoCo's {missing} are not in the system, the system's {extra} "
                               "are not in MuJoCo's model")
        if model.nv != spanning.nv:
            raise InteropError(f"MuJoCo's model has nv = {model.nv}, the system nv = {spanning.nv}"
                               + (" (with its dependent joints)" if spanning is not system else ""))
        rows = np.zeros(model.nv, dtype=int)
        joints = []
        for j, name in enumerate(names):
            joint, qs, vs = ours_by_name[name]
            jtype = int(model.jnt_type[j])
            qa, va = int(model.jnt_qposadr[j]), int(model.jnt_dofadr[j])
            nq, nv = {0: (7, 6), 1: (4, 3)}.get(jtype, (1, 1))
            kind = "same"
            if jtype == 0 and joint.kind == "free":
                kind = "free"  # ours (w, x, y, z, p), [ω; v] body; MuJoCo (p, w, x, y, z), (ṗ world, ω body)
            elif (qs.stop - qs.start, vs.stop - vs.start) != (nq, nv):
                raise InteropError(f"joint {name!r} has {qs.stop - qs.start} coordinates here and {nq} in MuJoCo")
            ours = np.arange(vs.start, vs.stop)
            rows[va:va + nv] = np.concatenate([ours[3:], ours[:3]]) if kind == "free" else ours
            joints.append((kind, qs, slice(qa, qa + nq), vs, slice(va, va + nv)))
        self._init_lift(spanning, rows)
        # a free joint is never coupled: its slices in our q and v, for the rotations
        at_q, at_v = np.arange(spanning.nq), np.arange(spanning.nv)
        if self._ind_q is not None:
            at_q, at_v = np.full(spanning.nq, -1), np.full(spanning.nv, -1)
            at_q[self._ind_q], at_v[self._ind_v] = np.arange(system.nq), np.arange(system.nv)
        self._joints = [(kind, qs, theirs_q, vs, theirs_v,
                         slice(at_q[qs.start], at_q[qs.start] + 7) if kind == "free" else None,
                         slice(at_v[vs.start], at_v[vs.start] + 6) if kind == "free" else None)
                        for kind, qs, theirs_q, vs, theirs_v in joints]
        self._free = any(kind == "free" for kind, *_ in self._joints)

    def q(self, q) -> np.ndarray:
        """Our configuration as MuJoCo's ``qpos`` (dependent joints at the values the couplings give)."""
        q = self._full_q(self._vector(q, self.system.nq, "q"))
        out = np.zeros(self.model.nq)
        for kind, ours, theirs, *_ in self._joints:
            x = q[ours]
            out[theirs] = np.concatenate([x[4:], x[:4]]) if kind == "free" else x
        return out

    def q_back(self, qpos) -> np.ndarray:
        """MuJoCo's ``qpos`` as our configuration: the independent joints picked, the dependent
        ones checked against the couplings (:class:`InteropError` naming the joint)."""
        qpos = self._vector(qpos, self.model.nq, "MuJoCo qpos")
        out = np.zeros(self._spanning.nq)
        for kind, ours, theirs, *_ in self._joints:
            x = qpos[theirs]
            out[ours] = np.concatenate([x[3:], x[:3]]) if kind == "free" else x
        return self._q_from_full(out, np.arange(self._spanning.nq), np.zeros(self._spanning.nq, dtype=bool),
                                 "qpos")

    def v(self, v, q=None) -> np.ndarray:
        """Our ``ν`` or ``ν̇`` (``τ`` without couplings) as MuJoCo's ``qvel``, ``qacc``, ``qfrc``
        (``q``, ours, is needed with a free joint: its linear part is rotated to the world frame).

        ``ν̇`` of a free joint maps by the same rotation only at zero angular velocity; convert
        accelerations with :meth:`acceleration`."""
        return self._rotate_free(super().v(v), q, to_world=True)

    def v_back(self, v_peer, q=None) -> np.ndarray:
        """MuJoCo's ``qvel`` (or ``qfrc`` without couplings) as our ``ν`` (``τ``); ``q`` as in
        :meth:`v`. The independent joints are picked, the dependent ones checked against the
        couplings (:class:`InteropError` naming the joint); forces: :meth:`force_back`."""
        v_peer = self._vector(v_peer, self._n_peer, "MuJoCo qvel")
        return self._velocity_back(self._rotate_free(v_peer, q, to_world=False))

    def force_back(self, tau_peer, q=None) -> np.ndarray:
        """MuJoCo's ``qfrc`` as our ``τ``: ``Lᵀ`` of it rotated back (``q`` as in :meth:`v`)."""
        tau_peer = self._vector(tau_peer, self._n_peer, "MuJoCo qfrc")
        return self._force_back(self._rotate_free(tau_peer, q, to_world=False))

    def matrix(self, M, q=None) -> np.ndarray:
        """Our ``nv × nv`` matrix (``ℳ``, ``ℳ⁻¹``) as MuJoCo's (``mj_fullM``): ``T A Tᵀ`` with
        ``qvel = T ν`` (module docstring, *Matrices*; ``q``, ours, is needed with a free joint).
        Not for derivatives of the dynamics, which also differentiate ``T``; not for a coupled
        system (:class:`InteropError`: use :meth:`matrix_back`)."""
        return self._rotate_free_matrix(super().matrix(M), q, to_world=True)

    def matrix_back(self, M_peer, q=None) -> np.ndarray:
        """MuJoCo's matrix (``mj_fullM``'s ℳ, its inverse without couplings) as ours:
        ``Lᵀ Dᵀ A_mj D L`` for the free joints' rotation ``D`` (``q`` as in :meth:`matrix`)."""
        M_peer = self._matrix(M_peer, self._n_peer, "MuJoCo matrix")
        return self._matrix_back(self._rotate_free_matrix(M_peer, q, to_world=False))

    def acceleration(self, qdd, q, v) -> np.ndarray:
        """Our ``ν̇`` as MuJoCo's ``qacc`` at the state ``(q, ν)``: for a free joint
        ``p̈ = R (v̇ + ω × v)`` (the derivative of ``ṗ = R v``); coupled joints by ``G ν̇``
        (``Ġ = 0``)."""
        out = self.v(qdd, q)
        q = self._vector(q, self.system.nq, "q")
        v = self._vector(v, self.system.nv, "velocity")
        for kind, _, _, _, theirs, our_q, our_v in self._joints:
            if kind == "free":
                w, lin = v[our_v][:3], v[our_v][3:]
                out[theirs.start:theirs.start + 3] += quaternion_matrix(q[our_q][:4]) @ np.cross(w, lin)
        return out

    def acceleration_back(self, qacc, q, v) -> np.ndarray:
        """MuJoCo's ``qacc`` as our ``ν̇`` at the state ``(q, ν)`` (ours); inverse of :meth:`acceleration`."""
        qacc = np.array(self._vector(qacc, self._n_peer, "MuJoCo qacc"))
        q = self._vector(q, self.system.nq, "q")
        v = self._vector(v, self.system.nv, "velocity")
        for kind, _, _, _, theirs, our_q, our_v in self._joints:
            if kind == "free":
                w, lin = v[our_v][:3], v[our_v][3:]
                qacc[theirs.start:theirs.start + 3] -= quaternion_matrix(q[our_q][:4]) @ np.cross(w, lin)
        return self.v_back(qacc, q)

    def _free_rotations(self, q, what: str) -> list:
        """``[(slice of MuJoCo's linear velocity, R)]`` for each free joint at our ``q``."""
        if q is None:
            raise InteropError(f"the system has a free joint: converting its {what} needs the configuration q")
        q = self._vector(q, self.system.nq, "q")
        out = []
        for kind, _, _, _, theirs, our_q, _ in self._joints:
            if kind == "free":
                quat = q[our_q][:4]
                if scaled_norm(quat) < 1e-9:  # its rotation would be NaN
                    raise InteropError(f"q of a free joint holds the quaternion {quat}, of (near) zero norm")
                out.append((slice(theirs.start, theirs.start + 3), quaternion_matrix(quat)))
        return out

    def _rotate_free(self, x: np.ndarray, q, to_world: bool) -> np.ndarray:
        """``x`` (in MuJoCo's order) with each free joint's linear part rotated by ``R`` or ``Rᵀ``."""
        if not self._free:
            return x
        x = np.array(x)
        for lin, R in self._free_rotations(q, "velocities"):
            x[lin] = R @ x[lin] if to_world else R.T @ x[lin]
        return x

    def _rotate_free_matrix(self, A: np.ndarray, q, to_world: bool) -> np.ndarray:
        """``D A Dᵀ`` (``to_world``) or ``Dᵀ A D`` for the block rotation ``D`` of :meth:`_rotate_free`."""
        if not self._free:
            return A
        A = np.array(A, dtype=np.result_type(A.dtype, np.float64))  # an integer matrix rotates to floats
        for lin, R in self._free_rotations(q, "matrices"):
            R = R if to_world else R.T
            A[lin, :] = R @ A[lin, :]
            A[:, lin] = A[:, lin] @ R.T
        return A

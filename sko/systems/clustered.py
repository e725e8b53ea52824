"""Rigid systems with coupled joints and closed loops, by constraint embedding (EMBEDDING.md).

:func:`form_clusters` applies the cluster rule of EMBEDDING.md §1 to a spanning tree and its
constraints; :class:`ClusteredRigidSystem` is a :class:`~sko.systems.rigid.RigidSystem` whose
coupled bodies are :class:`~sko.bodies.cluster.RigidCluster` nodes (named by their first body)
and every other body a :class:`~sko.bodies.rigid.RigidBody`. Its ``q``, ``v`` and ``tau`` hold
the independent coordinates only, node by node in body order; :meth:`ClusteredRigidSystem.joint_positions`
gives every joint's value.

Every joint of the spanning tree keeps its name: :meth:`~ClusteredRigidSystem.joint_names` lists
the joints inside clusters too, :meth:`~ClusteredRigidSystem.independent_joint_names` those whose
coordinates are in ``q``. ``q_slice``/``v_slice`` of an independent joint (or of its body) give
its coordinates' place in ``q`` and ``v``; of a dependent one they raise
:class:`DependentJointError`, which says to read its value from ``joint_positions``.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence

import numpy as np

from sko.bodies.cluster import ClusterError, ClusterMember, Coupling, LoopConstraint, RigidCluster
from sko.bodies.hinge import checked_placement
from sko.graphs.errors import DimensionError, NotATreeError, UnknownNodeError, preview
from sko.systems.multibody import MultibodySystem, _hashable, _joint_bodies
from sko.systems import regressors
from sko.bodies.rigid_parameters import rigid_inertia
from sko.engine.dispatch import engine
from sko.systems.frames import Frame
from sko.systems.rigid import RigidSystem, _body, _homogeneous

__all__ = ["form_clusters", "ClusteredRigidSystem", "DependentJointError"]


class DependentJointError(UnknownNodeError, ClusterError):
    """A joint (or body) whose coordinates are dependent (a mimic or coupled joint, or one closing a
    loop): they are not entries of ``q`` and ``v``; ``joint_positions(q)`` gives their value. An
    :class:`~sko.graphs.errors.UnknownNodeError` (``KeyError``) for the callers of the lookups that
    raised one, and a :class:`~sko.bodies.cluster.ClusterError`."""


def _path_up(parents: Mapping, k, stop=None) -> list:
    """``k`` and its ancestors up to ``stop`` excluded (the root ``None`` by default)."""
    out = []
    while k is not None and k != stop:
        out.append(k)
        k = parents[k]
    return out


def _nca(parents: Mapping, bodies) -> Hashable | None:
    """Nearest common ancestor (a body or ``None`` for the root) of ``bodies``; a body counts as
    its own ancestor."""
    common = None
    for k in bodies:
        chain = [k, *_path_up(parents, parents[k])] if k is not None else []
        common = chain if common is None else [a for a in common if a in set(chain)]
    return common[0] if common else None


def coupled_set(parents: Mapping, constraint) -> set:
    """The bodies whose joint coordinates a constraint involves (EMBEDDING.md §1)."""
    if isinstance(constraint, Coupling):
        return {constraint.primary, constraint.dependent}
    u, v = constraint.predecessor, constraint.successor
    top = _nca(parents, [b for b in (u, v) if b is not None]) if u is not None and v is not None else None
    return set(_path_up(parents, u, top)) | set(_path_up(parents, v, top))


def form_clusters(parents: Mapping, constraints: Sequence) -> list[tuple[set, list]]:
    """Clusters ``(bodies, constraints)`` by the rule of EMBEDDING.md §1, merged until disjoint.

    Parameters
    ----------
    parents : mapping body -> parent body or None
    constraints : sequence of Coupling or LoopConstraint

    Raises
    ------
    NotATreeError
        A cluster whose entry bodies do not share one parent (the aggregation condition).
    """
    groups = [(coupled_set(parents, c), [c]) for c in constraints]
    changed = True
    while changed:
        changed = False
        clusters = []
        for B, cs in groups:
            top = _nca(parents, B)
            body_set = set().union(*(_path_up(parents, k, top) for k in B)) | ({top} & B)
            for other in clusters:
                if other[0] & body_set:
                    other[1].update(B)
                    other[2].extend(cs)
                    other[0].update(body_set)
                    changed = True
                    break
            else:
                clusters.append([body_set, set(B), list(cs)])
        groups = [(B, cs) for _, B, cs in clusters]
    out = []
    for body_set, _, cs in clusters:
        entry_parents = {parents[k] for k in body_set if parents[k] not in body_set}
        if len(entry_parents) != 1:
            raise NotATreeError(f"the cluster of bodies {sorted(map(str, body_set))} hangs from several parents "
                                f"{sorted(map(str, entry_parents))}: it cannot be one node of a tree")
        out.append((body_set, cs))
    return out


class ClusteredRigidSystem(RigidSystem):
    """A :class:`~sko.systems.rigid.RigidSystem` with couplings and loop joints (module docstring).

    Parameters
    ----------
    bodies, frames, gravity : as for :class:`~sko.systems.rigid.RigidSystem`
    couplings : sequence of Coupling
    loops : sequence of LoopConstraint
    independent : sequence of bodies, optional
        Bodies whose inboard joints are independent coordinates (see
        :class:`~sko.bodies.cluster.RigidCluster`).
    initial : mapping body -> joint coordinates, optional
        A guess of an assembled configuration of the loops.
    tendons : sequence of FixedTendon, optional
        As for :class:`~sko.systems.rigid.RigidSystem`; their joints must be independent.
    """

    def __init__(self, bodies, frames: Mapping, gravity, couplings=(), loops=(), independent=None, initial=None,
                 tendons=()):
        specs = tuple(bodies)
        parents = {s.name: s.parent for s in specs}
        for c in (*couplings, *loops):
            ends = (c.primary, c.dependent) if isinstance(c, Coupling) else (c.predecessor, c.successor)
            for e in ends:
                if e is not None and e not in parents:
                    raise UnknownNodeError(f"{'coupling' if isinstance(c, Coupling) else 'loop'} {c.name!r} names "
                                           f"{e!r}, which is not a moving body (bodies: {preview(tuple(parents))})")
        clusters = form_clusters(parents, [*couplings, *loops])
        self.member_node = {s.name: s.name for s in specs}
        cluster_of = {}
        for body_set, cs in clusters:
            first = next(s.name for s in specs if s.name in body_set)
            for k in body_set:
                cluster_of[k] = (first, body_set, cs)
                self.member_node[k] = first
        independent, initial = _checked_choices(independent, initial, parents)
        nodes = []
        for s in specs:
            parent_node = None if s.parent is None else self.member_node[s.parent]
            attach = s.parent if s.parent in cluster_of else None  # a member's frame on its cluster node
            if s.name not in cluster_of:
                nodes.append(_rigid_body(s, parent_node, attach))
                continue
            first, body_set, cs = cluster_of[s.name]
            armed = [m.name for m in specs if m.name in body_set and m.armature is not None and np.any(m.armature)]
            if armed:  # a rotor on a dependent joint adds to ℳ_sp, not to the cluster's 6c × 6c inertia
                raise ClusterError(f"bodies {armed} carry joint armature (rotor inertia) inside the cluster of "
                                   f"{sorted(map(str, body_set))}: a cluster of rigid bodies has no armature")
            if first != s.name:
                continue
            members = [ClusterMember(m.name, m.parent if m.parent in body_set else None, m.joint, m.inertia, m.placement)
                       for m in specs if m.name in body_set]
            p = s.parent
            loops_c = [LoopConstraint(L.name, _end(L.predecessor, body_set, p, L.name), _end(L.successor, body_set, p, L.name),
                                      L.joint, L.placement_predecessor, L.placement_successor)
                       for L in cs if isinstance(L, LoopConstraint)]
            ind = None if independent is None else [k for k in independent if k in body_set]
            init = None if initial is None else {k: v for k, v in initial.items() if k in body_set}
            nodes.append(RigidCluster(first, parent_node, members, [c for c in cs if isinstance(c, Coupling)], loops_c,
                                      independent=ind, attach=attach, initial=init))
        self._specs, self._spanning = specs, None
        #: the constructor's other arguments, for :meth:`with_inertial_parameters`
        self._arguments = dict(frames=frames, gravity=gravity, couplings=couplings, loops=loops, independent=independent,
                               initial=initial, tendons=tendons)
        self.body_names = tuple(s.name for s in specs)
        MultibodySystem.__init__(self, nodes, gravity)
        # every joint of the spanning tree by its name, those inside clusters included
        self._joint_body, self._shared_joint_names = _joint_bodies(specs)
        self._spec_of = {s.name: s for s in specs}
        self._loop_names = {L.name for L in loops}
        # per node, as before; a member body that is no node gets an error saying where its slice is
        self.q_slices = _NodeSlices(self.q_slices, self._not_a_node)
        self.dof_slices = _NodeSlices(self.dof_slices, self._not_a_node)
        self.frames = {name: Frame(name, *self._checked_frame(name, spec), system=self) for name, spec in frames.items()}
        for name in self.body_names:
            self.frames.setdefault(name, Frame(name, name, np.eye(6), system=self))
        self._set_tendons(tendons)  # by joint name: once the names of the joints inside clusters are known

    # ------------------------------------------------------------------ structure
    @property
    def total_mass(self):
        return sum(s.inertia[5, 5] for s in self._specs)

    def clusters(self) -> dict:
        """``{node: member bodies}`` of the cluster nodes."""
        return {k: tuple(m.name for m in b.members) for k, b in self._body.items() if isinstance(b, RigidCluster)}

    def joint_positions(self, q) -> dict:
        """Every joint's value ``{body: joint coordinates}`` (closed loops, coupled joints
        included) for the independent coordinates ``q``."""
        q, _ = self.checked_vectors(q, None)
        out = {}
        for k in self.bodies:
            b, qk = self._body[k], q[self.q_slices[k]]
            if isinstance(b, RigidCluster):
                theta = b.closed_coordinates(qk)
                for i, m in enumerate(b.members):
                    out[m.name] = theta[b._cols[i]]
            else:
                out[k] = qk
        return {s.name: out[s.name] for s in self._specs}

    def __repr__(self) -> str:
        return (f"ClusteredRigidSystem({len(self.body_names)} bodies in {len(self.bodies)} nodes, "
                f"{len(self.clusters())} clusters, nq={self.nq}, nv={self.nv})")

    def spanning_system(self) -> RigidSystem:
        """The spanning tree with every joint free (no constraint): the reference of
        EMBEDDING.md §3, whose coordinates are :meth:`spanning_configuration`'s."""
        if self._spanning is None:
            self._spanning = RigidSystem(self._specs, {k: f for k, f in self.frames.items() if k not in self.body_names},
                                         np.concatenate([np.zeros(3), self.gravity]), self.tendons)
        return self._spanning

    def center_of_mass(self, q) -> np.ndarray:
        """The world centre of mass at ``q`` (that of the spanning tree at the closed configuration),
        or ``(B, 3)`` for a batch of states ``(B, nq)``."""
        out = engine(self)._reference(self.center_of_mass, {"q": q}, (3,))
        if out is not NotImplemented:
            return out
        return self.spanning_system().center_of_mass(self.spanning_configuration(q))

    def center_of_mass_jacobian(self, q) -> np.ndarray:
        """3 × nv ``J_c = J_c,sp G`` (``ċ = J_c v``, world coordinates), or ``(B, 3, nv)`` for a
        batch of states."""
        out = engine(self)._reference(self.center_of_mass_jacobian, {"q": q}, (3, self.nv))
        if out is not NotImplemented:
            return out
        G = self.constraint_matrices(q)[0]
        return self.spanning_system().center_of_mass_jacobian(self.spanning_configuration(q)) @ G

    def _body_on_node(self, body) -> tuple:
        """``(k, Γ_b)`` of :meth:`RigidSystem._body_on_node`, ``k`` the node holding ``body`` (the
        body, or the cluster it is a member of: ``Γ_b`` then picks the member's six entries)."""
        node = self.member_node[body]
        b = self._body[node]
        if not isinstance(b, RigidCluster):
            return node, np.eye(6, b.node_dim)
        Gamma = np.zeros((6, b.node_dim))
        i = b._index[body]
        Gamma[:, 6 * i: 6 * i + 6] = np.eye(6)
        return node, Gamma

    def constraint_matrices(self, q, v=None) -> tuple:
        """System-wide ``G`` (n_sp × nv), ``Ġ v`` (n_sp), ``K`` and ``K̇ θ̇_sp`` in the spanning
        tree's coordinates (body order), with ``θ̇_sp = G v``, ``K G = 0`` (EMBEDDING.md §3)."""
        q, v = self.checked_vectors(q, v)
        offsets, o = {}, 0
        for s in self._specs:
            offsets[s.name] = o
            o += s.joint.nv
        n_sp = o
        dtype = np.result_type(q, v, float)
        G, Gdv = np.zeros((n_sp, self.nv), dtype=dtype), np.zeros(n_sp, dtype=dtype)
        K_rows, Kdot = [], []
        for k in self.bodies:
            b, cols = self._body[k], self.dof_slices[k]
            if not isinstance(b, RigidCluster):
                G[offsets[k]: offsets[k] + b.dof_size, cols] = np.eye(b.dof_size)
                continue
            theta = b.closed_coordinates(q[self.q_slices[k]])
            Gk, Gdk = b.constraint_matrices(theta, v[cols])
            Kk, Kdk = b.constraint_jacobian(theta, Gk @ v[cols])
            rows = np.concatenate([np.arange(offsets[m.name], offsets[m.name] + m.joint.nv) for m in b.members])
            G[rows, cols] = Gk
            Gdv[rows] = Gdk
            Kfull = np.zeros((Kk.shape[0], n_sp), dtype=Kk.dtype)
            Kfull[:, rows] = Kk
            K_rows.append(Kfull)
            Kdot.append(Kdk)
        K = np.concatenate(K_rows) if K_rows else np.zeros((0, n_sp))
        return G, Gdv, K, (np.concatenate(Kdot) if Kdot else np.zeros(0))

    def independent_slice(self, body: Hashable) -> slice:
        """Where the independent coordinates of ``body``'s joint (or of the joint of that name)
        sit in ``v`` (and ``tau``).

        The ``v`` slice: it is also the ``q`` slice only when no coordinate before it has
        ``nq ≠ nv`` (a floating base has 7 positions and 6 velocities). :meth:`q_slice` and
        :meth:`v_slice` (by body or joint name) give each one.

        Raises
        ------
        UnknownNodeError
            Neither a body nor a joint.
        DependentJointError
            A body whose joint coordinates are dependent (coupled or closing a loop).
        """
        return self._member_slices(self._body_of(body))[1]

    def joint_names(self) -> dict:
        """``{joint name: body it moves}`` for every named joint of the spanning tree, the joints
        inside clusters (primary and dependent alike) included; :meth:`independent_joint_names`
        gives those whose coordinates are in ``q``."""
        return dict(self._joint_body)

    def independent_joint_names(self) -> dict:
        """``{joint name: body}`` of the named joints whose coordinates are independent (entries
        of ``q`` and ``v``, answered by :meth:`q_slice` and :meth:`v_slice`); the others' values
        come from :meth:`joint_positions`."""
        return {name: k for name, k in self._joint_body.items() if self._is_independent(k)}

    def body_joint(self, body: Hashable):
        """The inboard joint of body ``body`` (a member of a cluster too)."""
        self._member(body)
        return self._spec_of[body].joint

    def q_slice(self, name: Hashable) -> slice:
        """Where the position variables of a body (or of the joint of that name) sit in ``q``.

        Raises
        ------
        UnknownNodeError
            Neither a body nor a joint of this system.
        DependentJointError
            A joint whose coordinates are dependent: its value is ``joint_positions(q)[body]``.
        """
        return self._member_slices(self._body_of(name), name)[0]

    def v_slice(self, name: Hashable) -> slice:
        """Where the velocity variables of a body (or of the joint of that name) sit in ``v``
        (and in ``tau``); errors as :meth:`q_slice`."""
        return self._member_slices(self._body_of(name), name)[1]

    def _member(self, body: Hashable) -> Hashable:
        if not (_hashable(body) and body in self.member_node):
            raise UnknownNodeError(f"{body!r} is not a body of this system (bodies: {preview(self.body_names)})")
        return body

    def _body_of(self, name: Hashable) -> Hashable:
        """The body named ``name``, or moved by the joint named ``name`` (any body, clustered or not)."""
        hashable = _hashable(name)
        as_joint = self._joint_body.get(name) if hashable else None
        as_body = name if hashable and name in self.member_node else None
        if as_joint is not None and as_body is not None and as_joint != as_body:
            raise UnknownNodeError(f"{name!r} names both body {as_body!r} and the joint of body {as_joint!r}: "
                                   "use the other name of the one you mean")
        if as_joint is None and as_body is None:
            if hashable and name in self._shared_joint_names:
                raise UnknownNodeError(f"{name!r} names the joints of several bodies "
                                       f"{self._shared_joint_names[name]!r}: look them up by body")
            if hashable and name in self._loop_names:
                raise UnknownNodeError(f"{name!r} is a loop joint (a constraint closing a loop): it has no coordinates "
                                       "in q or v")
            raise UnknownNodeError(f"{name!r} is neither a body nor a joint of this system "
                                   f"(bodies: {preview(self.body_names)}; joints: {preview(tuple(self._joint_body))})")
        return as_body if as_body is not None else as_joint

    def _not_a_node(self, key) -> Exception:
        """The error of ``q_slices[key]`` / ``dof_slices[key]`` for a key that is no node."""
        if not (_hashable(key) and key in self.member_node):
            return UnknownNodeError(f"{key!r} is not a node of this system (nodes: {preview(self.bodies)}; q_slice and "
                                    "v_slice also take the bodies inside clusters and joint names)")
        node = self.member_node[key]
        try:
            self._member_slices(key)
        except DependentJointError as exc:
            return exc
        return UnknownNodeError(f"body {key!r} is inside the cluster node {node!r}: q_slices and dof_slices are per node "
                                f"(the cluster's independent coordinates sit under {node!r}); q_slice({key!r}) and "
                                f"v_slice({key!r}) give its own")

    def _is_independent(self, body) -> bool:
        node = self.member_node[body]
        b = self._body[node]
        if not isinstance(b, RigidCluster):
            return True
        cols, ind = b._cols[b._index[body]], set(b._ind.tolist())
        return all(j in ind for j in range(cols.start, cols.stop))

    def _member_slices(self, body, name=None) -> tuple[slice, slice]:
        """``(q slice, v slice)`` of ``body``'s joint coordinates, when they are independent."""
        node = self.member_node[body]
        b = self._body[node]
        if not isinstance(b, RigidCluster):
            return self.q_slices[node], self.dof_slices[node]
        cols = b._cols[b._index[body]]
        where = [i for i, j in enumerate(b._ind) if cols.start <= j < cols.stop]
        if len(where) != cols.stop - cols.start:
            joint = self._spec_of[body].joint
            what = f"joint {joint.name!r} of body {body!r}" if getattr(joint, "name", None) is not None \
                else f"the joint of body {body!r}"
            how = "partly dependent" if where else "dependent"
            raise DependentJointError(
                f"{what} is {how} ({self._why_dependent(body)}, in the cluster of {node!r}): its coordinates are "
                f"not in q or v; read its value from joint_positions(q)[{body!r}] (the cluster's independent bodies: "
                f"{preview(b.independent)})")
        # a cluster's members have q̇ = v: its independent coordinates sit at the same offsets in q and v
        q0, v0 = self.q_slices[node].start, self.dof_slices[node].start
        return slice(q0 + where[0], q0 + where[-1] + 1), slice(v0 + where[0], v0 + where[-1] + 1)

    def _why_dependent(self, body) -> str:
        node = self.member_node[body]
        b = self._body[node]
        for c in getattr(b, "couplings", ()) or ():
            if isinstance(c, Coupling) and c.dependent == body:
                primary = getattr(self._spec_of[c.primary].joint, "name", None)
                of = f"joint {primary!r} of body {c.primary!r}" if primary is not None else f"the joint of body {c.primary!r}"
                return f"coupled to {of} by {c.name!r}"
        return "fixed by the loop constraints"

    def spanning_configuration(self, q) -> np.ndarray:
        """:meth:`joint_positions` stacked in body order (the spanning tree's ``θ``)."""
        return np.concatenate(list(self.joint_positions(q).values()))

    # ------------------------------------------------------------------ inertial parameters (IDENTIFICATION.md, *Coupled systems*)
    def inertial_parameters(self, friction: bool = False, armature: bool = False) -> np.ndarray:
        """``π`` of the spanning tree's bodies (every body, coupled or not, in body order), then
        zeros for the joint columns of the independent coordinates."""
        extra = self.nv * (2 * bool(friction) + bool(armature))
        return np.concatenate([self.spanning_system().inertial_parameters(), np.zeros(extra)])

    def inertial_parameter_names(self, friction: bool = False, armature: bool = False) -> list:
        names = self.spanning_system().inertial_parameter_names()
        return names + regressors.parameter_names(self, friction, armature)[len(regressors.parameter_names(self)):]

    def _with_parameters(self, parameters, check: bool) -> "ClusteredRigidSystem":
        """The same couplings and loops on bodies with the inertias of ``parameters`` (checked
        by the constructor, so real ones only)."""
        if not check:
            raise ClusterError("a coupled system takes real inertial parameters only: step its spanning_system()")
        specs, o = [], 0
        for s in self._specs:
            n = 10 + (0 if s.armature is None else s.joint.nv)
            p = np.asarray(parameters[o: o + n], dtype=float)
            specs.append(s._replace(inertia=rigid_inertia(p[:10]), armature=None if s.armature is None else p[10:]))
            o += n
        return type(self)(specs, **self._arguments)

    def _body_torque_regressor(self, q, v, dv) -> np.ndarray:
        """``Gᵀ Y_sp(θ, G v, G v̇ + Ġ v)``: the spanning tree's regressor (compiled where it
        applies) mapped to the independent coordinates (EMBEDDING.md §3; IDENTIFICATION.md,
        *Coupled systems*)."""
        G, Gdv, _, _ = self.constraint_matrices(q, v)
        return G.T @ self.spanning_system().joint_torque_regressor(self.spanning_configuration(q), G @ v, G @ dv + Gdv)

    def _body_energy_regressors(self, q, v) -> np.ndarray:
        """The spanning tree's energy regressors at ``(θ, G v)``."""
        G = self.constraint_matrices(q)[0]
        return self.spanning_system().energy_regressors(self.spanning_configuration(q), G @ v)

    # ------------------------------------------------------------------ kinematics of member bodies
    def _checked_frame(self, name, spec) -> tuple:
        """A frame ``(body or None, ᶠX_body)`` on any body, clustered or not."""
        try:
            body, X = spec
        except (TypeError, ValueError):
            raise DimensionError(f"frame {name!r} must be a pair (body or None, 6 × 6 transform), got {spec!r}") from None
        if body is not None and body not in self.member_node:
            raise UnknownNodeError(f"frame {name!r} is fixed on {body!r}, which is not a body of this rigid system "
                                   f"(bodies: {preview(self.body_names)})")
        return body, checked_placement(X, name, "transform of frame")

    def _states(self, q, v=None) -> dict:
        """Per body: its frame's attachment, as ``{body: state}`` with ``attachments[None]`` and ``V``."""
        states = self.node_states(q, v)
        return {k: _BodyView(states[self.member_node[k]].attachments[None if self.member_node[k] == k else k])
                for k in self.body_names}

    def body_poses(self, q) -> dict:
        states = self._states(q)
        return {k: _pose(states[k]) for k in self.body_names}

    def body_velocities(self, q, v) -> dict:
        states = self._states(q, v)
        return {k: states[k].V for k in self.body_names}

    def frame_pose(self, q, frame: Hashable) -> np.ndarray:
        body, X = self._frame(frame)
        if body is None:
            return _homogeneous(X)
        return _pose(self._states(q)[body]) @ _homogeneous(X)


class _NodeSlices(dict):
    """``{node: slice}``; looking up a body inside a cluster (no node of its own) raises the
    system's error saying so (dependent: how to get its value), never a bare ``KeyError``."""

    def __init__(self, slices, explain):
        super().__init__(slices)
        self._explain = explain

    def __missing__(self, key):
        raise self._explain(key)


def _checked_choices(independent, initial, parents: Mapping) -> tuple:
    """``independent`` as a set and ``initial`` as a dict, both naming moving bodies only (a
    misspelt body was silently ignored: the loop then closed from another guess)."""
    if independent is not None:
        if isinstance(independent, (str, bytes)) or not isinstance(independent, Iterable):
            raise ClusterError(f"independent must be a sequence of bodies, got {type(independent).__name__}")
        independent = list(independent)
    if initial is not None and not isinstance(initial, Mapping):
        raise ClusterError(f"initial must be a mapping body -> joint coordinates, got {type(initial).__name__}")
    for what, names in (("independent", independent or ()), ("initial", initial or {})):
        for k in names:
            if not isinstance(k, Hashable) or k not in parents:
                raise UnknownNodeError(f"{what} names {k!r}, which is not a moving body (bodies: {preview(tuple(parents))})")
    return (None if independent is None else set(independent)), (None if initial is None else dict(initial))


def _rigid_body(spec, parent_node, attach):
    """The body type :class:`~sko.systems.rigid.RigidSystem` makes of ``spec``, hanging from
    ``parent_node`` at attachment ``attach``."""
    body = _body(spec._replace(parent=parent_node))
    body.attach = attach
    return body


def _end(body, body_set, p, loop):
    """A loop end inside a cluster: the member, or ``None`` for the cluster's parent frame."""
    if body in body_set:
        return body
    if body == p:
        return None
    raise ClusterError(f"loop {loop!r}: end {body!r} is neither in its cluster nor the cluster's parent {p!r}")


class _BodyView:
    """A member body's frame at a state, shaped like a node state for the pose helpers."""

    def __init__(self, attachment):
        self.attachments = {None: attachment}
        self.V = attachment.velocity


def _pose(state) -> np.ndarray:
    frame = state.attachments[None]
    T = np.eye(4, dtype=np.result_type(frame.rotation, frame.position))
    T[:3, :3], T[:3, 3] = frame.rotation, frame.position
    return T

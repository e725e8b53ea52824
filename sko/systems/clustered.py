"""Rigid systems with coupled joints and closed loops, by constraint embedding (EMBEDDING.md).

:func:`form_clusters` applies the cluster rule of EMBEDDING.md §1 to a spanning tree and its
constraints; :class:`ClusteredRigidSystem` is a :class:`~sko.systems.rigid.RigidSystem` whose
coupled bodies are :class:`~sko.bodies.cluster.RigidCluster` nodes (named by their first body)
and every other body a :class:`~sko.bodies.rigid.RigidBody`. Its ``q``, ``v`` and ``tau`` hold
the independent coordinates only, node by node in body order; :meth:`ClusteredRigidSystem.joint_positions`
gives every joint's value.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence

import numpy as np

from sko.bodies.cluster import ClusterError, ClusterMember, Coupling, LoopConstraint, RigidCluster
from sko.bodies.hinge import checked_placement
from sko.graphs.errors import DimensionError, NotATreeError, UnknownNodeError, preview
from sko.systems.multibody import MultibodySystem
from sko.systems.frames import Frame
from sko.systems.rigid import RigidSystem, _body, _homogeneous

__all__ = ["form_clusters", "ClusteredRigidSystem"]


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
    """

    def __init__(self, bodies, frames: Mapping, gravity, couplings=(), loops=(), independent=None, initial=None):
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
        self.body_names = tuple(s.name for s in specs)
        MultibodySystem.__init__(self, nodes, gravity)
        self.frames = {name: Frame(name, *self._checked_frame(name, spec), system=self) for name, spec in frames.items()}
        for name in self.body_names:
            self.frames.setdefault(name, Frame(name, name, np.eye(6), system=self))

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
                                         np.concatenate([np.zeros(3), self.gravity]))
        return self._spanning

    def center_of_mass(self, q) -> np.ndarray:
        """The world centre of mass at ``q`` (that of the spanning tree at the closed configuration)."""
        return self.spanning_system().center_of_mass(self.spanning_configuration(q))

    def center_of_mass_jacobian(self, q) -> np.ndarray:
        """3 × nv ``J_c = J_c,sp G`` (``ċ = J_c v``, world coordinates)."""
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
        """Where the independent coordinates of ``body``'s joint sit in ``q`` and ``v``.

        Raises
        ------
        UnknownNodeError
            Not a body, or a body whose joint coordinates are dependent (coupled or closing a loop).
        """
        if body not in self.member_node:
            raise UnknownNodeError(f"{body!r} is not a body of this system (bodies: {preview(self.body_names)})")
        node = self.member_node[body]
        b, start = self._body[node], self.dof_slices[node].start
        if not isinstance(b, RigidCluster):
            return self.dof_slices[node]
        cols = b._cols[b._index[body]]
        where = [i for i, j in enumerate(b._ind) if cols.start <= j < cols.stop]
        if len(where) != cols.stop - cols.start:
            raise UnknownNodeError(f"the joint of {body!r} is a dependent coordinate of cluster {node!r}")
        return slice(start + where[0], start + where[-1] + 1)

    def spanning_configuration(self, q) -> np.ndarray:
        """:meth:`joint_positions` stacked in body order (the spanning tree's ``θ``)."""
        return np.concatenate(list(self.joint_positions(q).values()))

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

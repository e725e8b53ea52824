"""A cluster of rigid bodies as one SKO node: constraint embedding (EMBEDDING.md).

Bodies whose joint coordinates are coupled (mimic joints, gears and belts, closed loops) are
merged into one node. Inside, the bodies form a spanning tree hanging from one parent frame
``p(C)`` (the cluster's attachment, EMBEDDING.md §1); the constraints ``φ(θ_C) = 0`` leave
``n_ind`` independent coordinates, which are the node's hinge coordinates. At a state
(EMBEDDING.md §2):

    𝒱_C = φ_int* B_in v_p + H*(C) θ̇_ind,   H*(C) = φ_int* S_int G,
    a(C) = φ_int* (S_int Ġ θ̇_ind + a_int),   M(C) = diag(I_j),   b(C) = stacked v_j ×* I_j v_j,

so ``E = φ_int* B_in`` (6c × 6) and ``φ*(℘(C), C) = E Γ_o`` in the contract. Each member body
offers its own frame as an attachment (named by the body; ``None`` is the first body's frame),
with ``Γ`` the 6 × 6c selector of its block.

Constraints (EMBEDDING.md §4):

* a :class:`Coupling` ``θ_dep = r θ_primary + c`` (a mimic joint, a gear or belt), ``K`` constant;
  a cluster of couplings only is linear: ``θ_dep = A θ_ind + d``, ``G`` constant, ``Ġ = 0``
  (symbolic states work);
* a :class:`LoopConstraint`: a loop joint between a frame on ``predecessor`` and one on
  ``successor`` (a member, or ``None`` for the frame of ``p(C)``). Its velocity constraint is
  ``Tᵀ v_rel = 0``, ``v_rel`` the velocity of the successor frame relative to the predecessor
  frame in predecessor-frame coordinates and ``T`` the complement of the loop joint's motion
  subspace (pure rotation and translation blocks: revolute, prismatic, spherical, …). Its
  position residual is ``Tᵀ [rotation vector; translation]`` of the relative pose. Rows that are
  redundant at the assembled state (a planar loop keeps 2 of a revolute's 5) are dropped.
  At construction the loops are assembled by least squares (SciPy's trust-region solver, from
  the initial guess, then from perturbed guesses) with the named independent coordinates held;
  the guess only picks the assembly branch. At a state, positions are closed by Newton's method
  with the stopping rule of §4, from the nearest *anchor*: the solution at a lattice point
  ``θ_ind⁰ + PATH_STEP k`` of the independent coordinates, itself followed from the assembled
  configuration along a fixed lattice path. Anchors are memoized (a pure function of ``k``), so
  the answer at a state depends on the state and the assembly branch only, never on the states
  evaluated before, and threads share no mutable solution. Failure raises
  :class:`LoopClosureError` naming the cluster and its loops.

A cluster of couplings only with library joints has a compiled state
(:mod:`sko.engine.bodies.cluster`); one with loops runs this module's Python
``at_state`` on the compiled path.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.linalg

from sko.arrays import checked_array
from sko.bodies.contract import Attachment, BodyError, BodyType, NodeState
from sko.bodies.hinge import checked_placement, checked_spatial_inertia, hinge_state
from sko.bodies.joints import Joint
from sko.spatial import crm, inertia_parameters, plucker_inverse, plucker_rotation, plucker_translation

__all__ = ["ClusterMember", "Coupling", "LoopConstraint", "RigidCluster", "LoopClosureError", "ClusterError"]

#: Newton's stopping rule (EMBEDDING.md §4).
STEP_TOL, RESIDUAL_TOL, MAX_ITERATIONS, MAX_CONDITION = 1e-10, 1e-12, 20, 1e8
#: Spacing of the anchor lattice of the independent coordinates (largest move of one Newton run).
PATH_STEP = 0.1
#: Most lattice steps from the assembled configuration (a move of 1000 at PATH_STEP): beyond, an
#: error, not a hang.
MAX_PATH_STEPS = 10000
#: Assembly: scales of the perturbations of the initial guess tried after it (a neutral planar
#: linkage is often a stationary point of ‖φ‖²), drawn from a fixed seed.
ASSEMBLY_PERTURBATIONS = (0.1, 0.5, 1.0, 1.0, 2.0, 2.0, 3.0, 3.0)


class ClusterError(BodyError):
    """A cluster built from inconsistent constraints: unknown joints, cycles of couplings,
    couplings between joints of different dimensions, redundant or over-constrained loops. The
    message names the joints or the loop."""


class LoopClosureError(ClusterError):
    """The constraints of a cluster cannot be closed at the given independent coordinates (no
    assembly, or a singular constraint Jacobian). Names the cluster, ``‖φ‖`` and ``cond K_dep``."""


@dataclass(frozen=True)
class ClusterMember:
    """A rigid body of a cluster: ``parent`` is a member listed before it, or ``None`` for an
    entry body hanging from the cluster's attachment frame."""

    name: Hashable
    parent: Hashable | None
    joint: Joint
    inertia: np.ndarray
    placement: np.ndarray | None = None


@dataclass(frozen=True)
class Coupling:
    """``θ_dependent = ratio θ_primary + offset`` between the joints of two members (mimic joint,
    gear ``ratio = −N_a/N_b``, belt)."""

    name: Hashable
    primary: Hashable
    dependent: Hashable
    ratio: float = 1.0
    offset: float = 0.0


@dataclass(frozen=True)
class LoopConstraint:
    """A loop joint between a frame on ``predecessor`` and one on ``successor`` (members, or
    ``None`` for the cluster's parent frame); each placement is the Plücker transform from that
    body's frame to the joint's frame on it."""

    name: Hashable
    predecessor: Hashable | None
    successor: Hashable | None
    joint: Joint
    placement_predecessor: np.ndarray | None = None
    placement_successor: np.ndarray | None = None


class RigidCluster(BodyType):
    """Coupled rigid bodies as one node (module docstring).

    Parameters
    ----------
    name, parent, attach : see :class:`~sko.bodies.contract.BodyType`
    members : sequence of ClusterMember
        Parents before children.
    couplings : sequence of Coupling
    loops : sequence of LoopConstraint
    independent : sequence of member names, optional
        Members whose joint coordinates are independent; by default the dependents of the
        couplings, then the first pivots of a column-pivoted QR of the loop Jacobian.
    initial : mapping member -> joint coordinates, optional
        A guess of the assembled configuration, which picks the assembly branch (default: every
        joint neutral).

    Raises
    ------
    ClusterError, LoopClosureError
        See the classes.
    """

    def __init__(self, name: Hashable, parent: Hashable | None, members: Sequence[ClusterMember],
                 couplings: Sequence[Coupling] = (), loops: Sequence[LoopConstraint] = (),
                 independent: Sequence[Hashable] | None = None, attach: Hashable | None = None, initial=None):
        super().__init__(name, parent, attach)
        self.members = tuple(members)
        self.couplings, self.loops = tuple(couplings), tuple(loops)
        self._check_members()
        self.c = len(self.members)
        self.node_dim = 6 * self.c
        index = {m.name: i for i, m in enumerate(self.members)}
        self._index = index
        self._parent_index = [None if m.parent is None else index[m.parent] for m in self.members]
        self._inertia = [checked_spatial_inertia(m.inertia, m.name) for m in self.members]
        self._placement = [checked_placement(m.placement, m.name) for m in self.members]
        # a massless member (romeo's fingers) has no centre of mass and no potential energy
        self._mass_com = [inertia_parameters(I)[:2] if I[5, 5] != 0 else (I[5, 5], np.zeros(3)) for I in self._inertia]
        offsets = np.cumsum([0] + [m.joint.nv for m in self.members])
        self._cols = [slice(int(offsets[i]), int(offsets[i + 1])) for i in range(self.c)]
        self.n_sp = int(offsets[-1])
        self._ancestors = [self._path(i) for i in range(self.c)]
        self._loops = [self._loop_data(L) for L in self.loops]
        self._coupling_rows()
        self.length_scale = max([1.0] + [float(np.linalg.norm(plucker_translation(X))) for X in self._placement])
        theta = self._initial(initial)
        fixed_ind = self._fixed_independent(independent)
        if self._loops:
            theta = self._assemble(theta, [j for j in range(self.n_sp) if j not in fixed_ind])
        self._select(theta, fixed_ind)
        self._neutral = theta[self._ind].copy()
        if self._loops:  # anchor k = 0: the assembled configuration; others memoized on demand
            self._anchors = {(0,) * len(self._ind): (self._neutral, theta[self._dep].copy(), self._slope(theta))}
        self._M = scipy.linalg.block_diag(*self._inertia) if self.c else np.zeros((0, 0))
        self.q_size = self.dof_size = len(self._ind)
        self.valid_by_construction = not any(m.joint.user_defined for m in self.members)

    # ------------------------------------------------------------------ construction
    def _check_members(self):
        seen = set()
        for m in self.members:
            if not isinstance(m.joint, Joint):
                raise ClusterError(f"member {m.name!r} of cluster {self.name!r}: joint must be a sko.bodies Joint")
            if m.name in seen:
                raise ClusterError(f"cluster {self.name!r} lists member {m.name!r} twice")
            if m.parent is not None and m.parent not in seen:
                raise ClusterError(f"member {m.name!r} of cluster {self.name!r}: parent {m.parent!r} is not a member "
                                   "listed before it")
            if not _velocity_is_qdot(m.joint):
                raise ClusterError(f"member {m.name!r} of cluster {self.name!r}: joint {m.joint!r} has velocities ν ≠ q̇; "
                                   "a cluster needs joints whose velocities are the rates of their coordinates θ "
                                   "(no quaternions, no successor-frame velocities)")
            seen.add(m.name)
        names = [m.name for m in self.members]
        for k in self.couplings:
            for role, body in (("primary", k.primary), ("dependent", k.dependent)):
                if body not in seen:
                    raise ClusterError(f"coupling {k.name!r}: {role} joint's body {body!r} is not in cluster "
                                       f"{self.name!r} (members {names!r})")
        for L in self.loops:
            for role, body in (("predecessor", L.predecessor), ("successor", L.successor)):
                if body is not None and body not in seen:
                    raise ClusterError(f"loop {L.name!r}: {role} {body!r} is not in cluster {self.name!r} "
                                       f"(members {names!r})")

    def overflow_hint(self) -> str | None:
        """What of the cluster's own numbers can make its terms overflow: its largest coupling
        ratio or offset (a mimic multiplier, a gear ratio, an MJCF polycoef), when above 1e6."""
        if not self.couplings:
            return None
        k = max(self.couplings, key=lambda c: max(abs(float(c.ratio)), abs(float(c.offset))))
        size = max(abs(float(k.ratio)), abs(float(k.offset)))
        if size <= 1e6:
            return None
        return f"coupling {k.name!r} (ratio {float(k.ratio):.3g}, offset {float(k.offset):.3g}) scales its terms by {size:.3g}"

    def _path(self, i) -> frozenset:
        out = set()
        while i is not None:
            out.add(i)
            i = self._parent_index[i]
        return frozenset(out)

    def _loop_data(self, L: LoopConstraint):
        if not isinstance(L.joint, Joint):
            raise ClusterError(f"loop {L.name!r}: joint must be a sko.bodies Joint")
        S = np.asarray(L.joint.kinematics(L.joint.neutral(), np.zeros(L.joint.nv)).S, dtype=float)
        Ta = scipy.linalg.null_space(S[:3].T) if S[:3].any() else np.eye(3)
        Tl = scipy.linalg.null_space(S[3:].T) if S[3:].any() else np.eye(3)
        if Ta.shape[1] + Tl.shape[1] != 6 - S.shape[1]:
            raise ClusterError(f"loop {L.name!r}: joint {L.joint!r} mixes rotation and translation in one axis; "
                               "loop joints must have pure rotation and translation axes (revolute, prismatic, spherical…)")
        T = scipy.linalg.block_diag(Ta, Tl)
        u = None if L.predecessor is None else self._index[L.predecessor]
        v = None if L.successor is None else self._index[L.successor]
        return (L.name, u, v, checked_placement(L.placement_predecessor, L.name, "predecessor placement of loop"),
                checked_placement(L.placement_successor, L.name, "successor placement of loop"), T)

    def _coupling_rows(self):
        """``K_c θ = c_c`` for the couplings; dependents, and the cycle and dimension checks."""
        rows, rhs, self._coupled_dep = [], [], []
        depends_on = {}
        for k in self.couplings:
            a, b = self._index[k.primary], self._index[k.dependent]
            na, nb = self.members[a].joint.nv, self.members[b].joint.nv
            if na != nb:
                raise ClusterError(f"coupling {k.name!r} between joints of different dimensions: "
                                   f"{k.primary!r} has {na}, {k.dependent!r} has {nb}")
            if b in depends_on:
                raise ClusterError(f"joint of {k.dependent!r} is the dependent of two couplings "
                                   f"({depends_on[b][1]!r} and {k.name!r})")
            depends_on[b] = (a, k.name)
            for j in range(nb):
                row = np.zeros(self.n_sp)
                row[self._cols[b].start + j] += 1.0
                row[self._cols[a].start + j] -= float(k.ratio)
                rows.append(row)
                rhs.append(float(k.offset))
                self._coupled_dep.append(self._cols[b].start + j)
        for b in depends_on:  # mimic cycles: follow primaries
            seen, i = [b], b
            while i in depends_on:
                i = depends_on[i][0]
                if i in seen:
                    cycle = seen[seen.index(i):]
                    names = ", ".join(repr(depends_on[j][1]) for j in cycle)
                    joints = ", ".join(repr(self.members[j].joint.name or self.members[j].name) for j in cycle)
                    raise ClusterError(f"couplings {names} form a cycle: each makes a joint the dependent of the next "
                                       f"(joints {joints}), so none of them has a value; drop one coupling")
                seen.append(i)
        self._Kc = np.array(rows).reshape(len(rows), self.n_sp)
        self._cc = np.array(rhs)

    def _initial(self, initial) -> np.ndarray:
        theta = np.concatenate([m.joint.neutral() for m in self.members]).astype(float) if self.c else np.zeros(0)
        for name, value in dict(initial or {}).items():
            if name not in self._index:
                raise ClusterError(f"initial configuration names {name!r}, not a member of cluster {self.name!r}")
            cols = self._cols[self._index[name]]
            value = checked_array(value, (0, 1), f"initial coordinates of member {name!r} of cluster {self.name!r}")
            if value.dtype.kind != "f":
                raise ClusterError(f"initial coordinates of member {name!r} of cluster {self.name!r} must be real "
                                   f"numbers, got dtype {value.dtype}")
            if value.ndim and value.shape != theta[cols].shape:
                raise ClusterError(f"initial coordinates of member {name!r} of cluster {self.name!r} have shape "
                                   f"{value.shape}, its joint has {theta[cols].size}")
            theta[cols] = value
        return theta

    def _assemble(self, theta, free):
        """``θ_C`` with every loop closed: ``scipy.optimize.least_squares`` on all constraint rows
        in the ``free`` coordinates (the others held), from the initial guess, then from guesses
        perturbed by :data:`ASSEMBLY_PERTURBATIONS` (fixed seed); Gauss–Newton polishes."""
        from scipy.optimize import least_squares

        free = np.asarray(free, dtype=int)
        tol = RESIDUAL_TOL * self.length_scale

        def at(x):
            t = theta.astype(np.result_type(x, float))
            t[free] = x
            return t

        def residual(x):
            return self._residual_all(at(x))

        def jacobian(x):
            return self._residual_jacobian(at(x), self._residual_all, free)

        best, best_norm = theta, np.abs(self._residual_all(theta)).max(initial=0.0)
        if not np.isfinite(best_norm):
            raise LoopClosureError(f"cluster {self.name!r}: the constraints of loops {self._loop_names()} are not finite "
                                   "at the initial configuration")
        rng = np.random.default_rng(0)
        for scale in (0.0, *ASSEMBLY_PERTURBATIONS):
            if best_norm <= tol or not free.size:
                break
            x0 = theta[free] + scale * rng.standard_normal(free.size)
            # a guess far from closure may overflow along the way: its residual below judges it, silently
            with np.errstate(over="ignore", invalid="ignore"):
                try:
                    x = least_squares(residual, x0, jac=jacobian, method="trf", xtol=1e-15, ftol=1e-15, gtol=1e-15).x
                except ValueError:  # residuals not finite along the way: try the next guess
                    continue
                candidate = self._polish(at(x), free, tol)
                norm = np.abs(self._residual_all(candidate)).max(initial=0.0)
            if norm < best_norm:
                best, best_norm = candidate, norm
        if best_norm <= tol:
            return best
        raise LoopClosureError(f"cluster {self.name!r}: loops {self._loop_names()} cannot be closed near the initial "
                               f"configuration (least squares from it and {len(ASSEMBLY_PERTURBATIONS)} perturbed "
                               f"guesses leaves ‖φ‖ = {best_norm:.3g})")

    def _polish(self, theta, free, tol):
        """Gauss–Newton steps (minimum norm in the ``free`` coordinates) to ``‖φ‖ ≤ tol``."""
        for _ in range(10):
            r = self._residual_all(theta)
            if not np.isfinite(r).all() or np.abs(r).max(initial=0.0) <= tol:
                break
            J = self._residual_jacobian(theta, self._residual_all, free)
            theta = theta.copy()
            theta[free] -= np.linalg.lstsq(J, r, rcond=None)[0]
        return theta

    def _fixed_independent(self, independent) -> set:
        """Columns of the members named independent."""
        fixed_ind = set()
        for name in independent or ():
            if name not in self._index:
                raise ClusterError(f"independent coordinate {name!r} is not a member of cluster {self.name!r}")
            cols = range(self._cols[self._index[name]].start, self._cols[self._index[name]].stop)
            if set(cols) & set(self._coupled_dep):
                raise ClusterError(f"joint of {name!r} is the dependent of a coupling: it cannot be independent")
            fixed_ind.update(cols)
        return fixed_ind

    def _select(self, theta, fixed_ind):
        """Rows kept and the split ``θ_C = Π [θ_ind; θ_dep]`` (EMBEDDING.md §4)."""
        n = self.n_sp
        D1 = list(self._coupled_dep)
        self._rows = []
        dep = list(D1)
        if self._loops:
            Kl = self._loop_velocity_matrix(theta, all_rows=True)
            if D1:  # eliminate the coupled dependents: rows of Kl' vanish on D1
                Kl = Kl - Kl[:, D1] @ np.linalg.solve(self._Kc[:, D1], self._Kc)
            scale = max(1.0, np.abs(Kl).max())
            _, R, piv = scipy.linalg.qr(Kl.T, mode="economic", pivoting=True)
            rank = int((np.abs(np.diag(R)) > 1e-9 * scale).sum()) if R.size else 0
            self._rows = sorted(int(i) for i in piv[:rank])
            owner = np.concatenate([[k] * L[5].shape[1] for k, L in enumerate(self._loops)])
            for k, L in enumerate(self._loops):
                if not any(owner[i] == k for i in self._rows):
                    raise ClusterError(f"loop {L[0]!r} is redundant: its constraints repeat those of the other loops "
                                       f"of cluster {self.name!r}")
            avail = [j for j in range(n) if j not in D1 and j not in fixed_ind]
            if rank > len(avail):
                raise ClusterError(f"cluster {self.name!r} is over-constrained: loops {self._loop_names()} impose {rank} "
                                   f"independent constraints on {len(avail)} free coordinates")
            sub = Kl[self._rows][:, avail]
            _, R2, piv2 = scipy.linalg.qr(sub, mode="economic", pivoting=True)
            if rank and abs(R2[rank - 1, rank - 1]) <= 1e-9 * scale:
                raise LoopClosureError(f"cluster {self.name!r}: singular constraint Jacobian of loops {self._loop_names()} "
                                       "for the chosen independent coordinates")
            dep += sorted(avail[int(i)] for i in piv2[:rank])
        self._dep = np.array(sorted(dep), dtype=int)
        self._ind = np.array([j for j in range(n) if j not in set(dep)], dtype=int)
        self.independent = tuple(dict.fromkeys(self.members[self._member_of(j)].name for j in self._ind))
        if not self._loops:  # linear: θ_dep = A θ_ind + d, G constant
            Kd = self._Kc[:, self._dep]
            self._A = -np.linalg.solve(Kd, self._Kc[:, self._ind])
            self._d = np.linalg.solve(Kd, self._cc)
            self._G = self._assemble_G(self._A)

    def _member_of(self, col: int) -> int:
        return next(i for i, s in enumerate(self._cols) if s.start <= col < s.stop)

    def _loop_names(self) -> list:
        return [L[0] for L in self._loops]

    def _assemble_G(self, A) -> np.ndarray:
        G = np.zeros((self.n_sp, len(self._ind)), dtype=np.result_type(A, float))
        G[self._ind] = np.eye(len(self._ind))
        G[self._dep] = A
        return G

    # ------------------------------------------------------------------ kinematics inside the cluster
    def _poses(self, theta) -> list:
        """``ʲX_p`` for every member (``p`` the cluster's attachment frame)."""
        X = []
        for i, m in enumerate(self.members):
            XJ = m.joint.kinematics(theta[self._cols[i]], np.zeros(m.joint.nv, dtype=theta.dtype)).X
            Xi = XJ @ self._placement[i]
            p = self._parent_index[i]
            X.append(Xi if p is None else Xi @ X[p])
        return X

    def _frame(self, X, body, placement):
        return placement if body is None else placement @ X[body]

    def _residual_all(self, theta) -> np.ndarray:
        """Coupling rows then every loop row ``Tᵀ [rotation vector; translation]``."""
        out = [self._Kc @ theta - self._cc] if len(self._cc) else []
        if self._loops:
            out.append(self._loop_residual(theta))
        return np.concatenate(out) if out else np.zeros(0)

    def _loop_residual(self, theta) -> np.ndarray:
        X, rows = self._poses(theta), []
        for _, u, v, Pu, Pv, T in self._loops:
            Xvu = self._frame(X, v, Pv) @ plucker_inverse(self._frame(X, u, Pu))  # ^{Fv}X_{Fu}
            E = plucker_rotation(Xvu)
            W = (E.T - E) / 2
            rows.append(T.T @ np.concatenate([np.array([W[2, 1], W[0, 2], W[1, 0]]), plucker_translation(Xvu)]))
        return np.concatenate(rows)

    def _residual(self, theta) -> np.ndarray:
        """``φ``: coupling rows and the kept loop rows."""
        out = [self._Kc @ theta - self._cc] if len(self._cc) else []
        out.append(self._loop_residual(theta)[self._rows])
        return np.concatenate(out)

    def _residual_jacobian(self, theta, residual, columns=None) -> np.ndarray:
        """``∂φ/∂θ`` (the ``columns`` of it) by complex step (exact to rounding)."""
        h = 1e-30
        cols = []
        for j in range(self.n_sp) if columns is None else columns:
            t = theta.astype(complex)
            t[j] += 1j * h
            cols.append(residual(t).imag / h)
        return np.array(cols).T

    def _loop_velocity_matrix(self, theta, all_rows=False, qd=None):
        """``K`` of the loops (``Tᵀ ∂v_rel/∂θ̇``) and, with ``qd``, ``K̇ θ̇``: with ``α̂`` the
        accelerations at ``θ̈ = 0`` relative to a fixed ``p``,
        ``d v_rel/dt = ᵘX_v α̂_v − α̂_u − v_u × (ᵘX_v v_v)`` (frames ``Fu``, ``Fv``)."""
        dtype = np.result_type(theta, float) if qd is None else np.result_type(theta, qd, float)
        X, vel, acc = [], [], []
        for i, m in enumerate(self.members):
            p = self._parent_index[i]
            qdi = np.zeros(m.joint.nv, dtype=dtype) if qd is None else qd[self._cols[i]]
            XJ, S, cJ = m.joint.kinematics(theta[self._cols[i]], qdi)
            Xi = XJ @ self._placement[i]
            vJ = S @ qdi
            if p is None:
                X.append(Xi)
                vel.append(vJ)
                acc.append(cJ)
            else:
                X.append(Xi @ X[p])
                v = Xi @ vel[p] + vJ
                vel.append(v)
                acc.append(Xi @ acc[p] + cJ + crm(v) @ vJ)
        K, Kdot = [], []
        for _, u, v, Pu, Pv, T in self._loops:
            Xu = self._frame(X, u, Pu)
            Kfull = np.zeros((6, self.n_sp), dtype=dtype)
            up = self._ancestors[u] if u is not None else frozenset()
            vp = self._ancestors[v] if v is not None else frozenset()
            for j in up ^ vp:
                m = self.members[j]
                S = m.joint.kinematics(theta[self._cols[j]], np.zeros(m.joint.nv, dtype=dtype)).S
                Kfull[:, self._cols[j]] = (1 if j in vp else -1) * (Xu @ plucker_inverse(X[j]) @ S)
            K.append(T.T @ Kfull)
            if qd is not None:
                Xuv = Xu @ plucker_inverse(self._frame(X, v, Pv))
                vu = Pu @ vel[u] if u is not None else np.zeros(6, dtype=dtype)
                au = Pu @ acc[u] if u is not None else np.zeros(6, dtype=dtype)
                vv = Pv @ vel[v] if v is not None else np.zeros(6, dtype=dtype)
                av = Pv @ acc[v] if v is not None else np.zeros(6, dtype=dtype)
                Kdot.append(T.T @ (Xuv @ av - au - crm(vu) @ (Xuv @ vv)))
        K = np.concatenate(K)
        if not all_rows:
            K = K[self._rows]
        if qd is None:
            return K
        return K, np.concatenate(Kdot)[self._rows]

    # ------------------------------------------------------------------ closure at a state
    def closed_coordinates(self, q) -> np.ndarray:
        """Every member's joint coordinates ``θ_C`` for the independent ones ``q``; loops closed
        by Newton's method from the nearest anchor (module docstring), so the result depends on
        ``q`` and the assembly branch only."""
        q = np.asarray(q)
        if not self._loops:
            theta = np.zeros(self.n_sp, dtype=np.result_type(q, float))
            theta[self._ind] = q
            theta[self._dep] = self._A @ q + self._d
            return theta
        if q.dtype == object:
            raise BodyError(f"cluster {self.name!r} has closed loops: symbolic states are not supported")
        real = q.real.astype(float)
        offset = (real - self._neutral) / PATH_STEP
        steps = np.abs(np.rint(offset)).sum() if np.isfinite(offset).all() else np.inf
        if steps > MAX_PATH_STEPS:
            distance = np.abs(real - self._neutral).max(initial=0.0)
            raise LoopClosureError(f"cluster {self.name!r} (loops {self._loop_names()}): the independent coordinates "
                                   f"{real.tolist()} are {distance:.3g} from the assembled configuration; the assembly "
                                   f"branch is followed there in smaller steps of {PATH_STEP}, and more than "
                                   f"{MAX_PATH_STEPS} are refused")
        anchor = self._anchor(tuple(int(k) for k in np.rint(offset)))
        theta, _ = self._follow(anchor, real)
        if np.iscomplexobj(q):  # first-order correction along the imaginary part (complex step),
            J = self._residual_jacobian(theta, self._residual, self._dep)  # with ∂φ/∂θ_dep at the solution
            theta = theta.astype(complex)
            theta[self._ind] = q
            theta[self._dep] -= np.linalg.solve(J, self._residual(theta))
        return theta

    def _anchor(self, key: tuple) -> tuple:
        """``(θ_ind, θ_dep, ∂θ_dep/∂θ_ind)`` closed at ``θ_ind⁰ + PATH_STEP key``, followed from
        the assembled configuration along the lattice path (a step of the largest entry of ``key``
        towards 0 at a time); if that path leaves the region where the loops close, the last
        anchor before it. Memoized (``None``: not closable); every value depends on ``key`` alone,
        so threads that race to fill the memo store equal values."""
        path = []
        while key not in self._anchors:
            path.append(key)
            key = _towards_zero(key)
        anchor = self._anchors[key]
        if anchor is None:
            return self._anchors[_towards_zero(key)]  # a key is tried only after its parent closed
        for key in reversed(path):
            target = self._neutral + PATH_STEP * np.array(key, dtype=float)
            try:
                theta, slope = self._follow(anchor, target, True)
            except LoopClosureError:
                self._anchors.setdefault(key, None)
                return anchor
            anchor = self._anchors.setdefault(key, (target, theta[self._dep], slope))
        return anchor

    def _follow(self, start, real, slope=False):
        """Newton's method at ``θ_ind = real`` from the closed ``start`` (an anchor); if it fails,
        again along the straight path in 8 substeps. Returns ``θ_C`` and, if asked, ``∂θ_dep/∂θ_ind``."""
        try:
            return self._newton(start, real, slope)
        except LoopClosureError:
            pass
        point = start
        for s in np.linspace(0.0, 1.0, 9)[1:]:
            x = start[0] + s * (real - start[0]) if s < 1 else real
            theta, dslope = self._newton(point, x, True)
            point = (x, theta[self._dep], dslope)
        return theta, dslope

    def _newton(self, start, real, slope=False):
        """Newton's method for ``θ_dep`` at ``θ_ind = real`` from ``start = (θ_ind, θ_dep, slope)``
        with a first-order predictor and the stopping rule of EMBEDDING.md §4; returns ``θ_C`` and,
        if asked, ``∂θ_dep/∂θ_ind`` there. Mutates nothing."""
        start_ind, start_dep, start_slope = start
        theta = np.zeros(self.n_sp)
        theta[self._ind] = real
        theta[self._dep] = start_dep + start_slope @ (real - start_ind)
        step = np.inf
        for _ in range(MAX_ITERATIONS + 1):
            phi = self._residual(theta)
            if step <= STEP_TOL and np.abs(phi).max() <= RESIDUAL_TOL * self.length_scale:
                break
            J = self._residual_jacobian(theta, self._residual, self._dep)
            cond = np.linalg.cond(J)
            if not np.isfinite(cond) or cond > MAX_CONDITION:
                raise LoopClosureError(f"cluster {self.name!r} (loops {self._loop_names()}): singular constraint Jacobian, "
                                       f"cond K_dep = {cond:.3g}, ‖φ‖ = {np.abs(phi).max():.3g}")
            delta = np.linalg.solve(J, phi)
            theta[self._dep] -= delta
            step = np.abs(delta).max()
        else:
            raise LoopClosureError(f"cluster {self.name!r}: loops {self._loop_names()} cannot be closed at θ_ind = "
                                   f"{real.tolist()} (‖φ‖ = {np.abs(phi).max():.3g}, cond K_dep = {cond:.3g})")
        return theta, (self._slope(theta) if slope else None)

    def _slope(self, theta) -> np.ndarray:
        """``∂θ_dep/∂θ_ind = −K_dep⁻¹ K_ind`` at closed ``θ_C``."""
        K, _ = self.constraint_jacobian(theta)
        return -np.linalg.solve(K[:, self._dep], K[:, self._ind])

    def constraint_jacobian(self, theta, thetad=None):
        """``K`` (coupling rows, then the kept loop rows; ``K G = 0``) at ``θ_C`` and, with
        ``thetad`` (every member's ``θ̇``), ``K̇ θ̇``."""
        K = self._Kc
        if not self._loops:
            return K, (None if thetad is None else np.zeros(len(self._cc)))
        if thetad is None:
            Kl, Kdot = self._loop_velocity_matrix(theta), None
        else:
            Kl, Kdot = self._loop_velocity_matrix(theta, qd=thetad)
            Kdot = np.concatenate([np.zeros(len(self._cc)), Kdot])
        return np.concatenate([K.astype(Kl.dtype), Kl]), Kdot

    def constraint_matrices(self, theta, qd=None):
        """``G`` and, with ``qd`` (independent velocities), ``Ġ θ̇_ind`` at closed ``θ_C``
        (EMBEDDING.md §4: ``G = Π [I; −K_dep^{-1} K_ind]``, ``Ġ θ̇_ind = Π [0; −K_dep^{-1} K̇ θ̇_C]``)."""
        if not self._loops:
            return self._G, (None if qd is None else np.zeros(self.n_sp, dtype=np.result_type(qd, float)))
        K, _ = self.constraint_jacobian(theta)
        Kd = K[:, self._dep]
        G = self._assemble_G(-np.linalg.solve(Kd, K[:, self._ind]))
        if qd is None:
            return G, None
        _, Kdot = self.constraint_jacobian(theta, G @ qd)
        Gdot_qd = np.zeros(self.n_sp, dtype=np.result_type(Kdot, G))
        Gdot_qd[self._dep] = -np.linalg.solve(Kd, Kdot)
        return G, Gdot_qd

    # ------------------------------------------------------------------ the contract
    def at_state(self, q, qd, inboard: Attachment, gravity) -> NodeState:
        theta = self.closed_coordinates(q)
        G, Gdot_qd = self.constraint_matrices(theta, qd)
        thetad = G @ qd
        c, m = self.c, self.node_dim
        hs, atts = [], {}
        for i, mem in enumerate(self.members):
            p = self._parent_index[i]
            inb = inboard if p is None else atts[self.members[p].name]
            h = hinge_state(mem.joint, self._placement[i], theta[self._cols[i]], thetad[self._cols[i]], inb)
            hs.append(h)
            atts[mem.name] = Attachment(Gamma=_IDENTITY, gamma=_ZERO, rotation=h.rotation, position=h.position, velocity=h.v)
        dtype = np.result_type(*[h.X for h in hs], *[h.a for h in hs], G, float)
        Phi = np.zeros((m, m), dtype=dtype)  # φ_int*: block (j, i) = ʲX_i for i on the path of j
        B = np.zeros((m, 6), dtype=dtype)
        S = np.zeros((m, self.n_sp), dtype=dtype)
        for j, h in enumerate(hs):
            rj = slice(6 * j, 6 * j + 6)
            Phi[rj, rj] = np.eye(6)
            p = self._parent_index[j]
            if p is None:
                B[rj] = h.X
            else:
                Phi[rj, : 6 * c] = Phi[rj, : 6 * c] + h.X @ Phi[6 * p: 6 * p + 6, : 6 * c]
            S[rj, self._cols[j]] = h.S
        Hstar = Phi @ (S @ G)
        a_int = np.concatenate([h.a for h in hs])
        a = Phi @ (S @ Gdot_qd + a_int)
        M = self._M if dtype != object else _block_diag_object(self._inertia)
        b = np.concatenate([-((I @ h.v) @ h.v_cross) for I, h in zip(self._inertia, hs)])
        attachments = {}
        for j, mem in enumerate(self.members):
            Gamma = np.zeros((6, m))
            Gamma[:, 6 * j: 6 * j + 6] = np.eye(6)
            attachments[mem.name] = Attachment(Gamma=Gamma, gamma=np.zeros(6), rotation=hs[j].rotation,
                                               position=hs[j].position, velocity=hs[j].v)
        attachments[None] = attachments[self.members[0].name]
        potential = sum(-mass * (gravity @ (h.position + h.rotation @ com)) for (mass, com), h in zip(self._mass_com, hs))
        return NodeState(E=Phi @ B, H=Hstar.T, M=M, a=a, b=b, V=np.concatenate([h.v for h in hs]),
                         attachments=attachments, potential=potential)

    @property
    def attachment_names(self) -> tuple:
        return (None, *(m.name for m in self.members))

    def rigid_part(self, name: Hashable) -> Hashable:
        """``None`` is the first member's frame; a member on a joint without motion moves with its
        parent member."""
        members = {m.name: m for m in self.members}
        member = members[self.members[0].name if name is None else name]
        while member.joint.nv == 0 and member.parent is not None:
            member = members[member.parent]
        return member.name

    def neutral(self) -> np.ndarray:
        """The independent coordinates of the assembled configuration."""
        return self._neutral.copy()

    def random_configuration(self, rng):
        if self._loops:
            return self.neutral()
        return rng.uniform(-1.0, 1.0, self.q_size)


def _towards_zero(key: tuple) -> tuple:
    """The parent of a lattice point: its largest entry (the first of equals) one step nearer 0."""
    i = int(np.argmax(np.abs(key)))
    return key[:i] + (key[i] - int(np.sign(key[i])),) + key[i + 1:]


def _velocity_is_qdot(joint: Joint) -> bool:
    """``q̇ = ν`` for the joint (checked at two random configurations)."""
    if joint.nq != joint.nv:
        return False
    rng = np.random.default_rng(0)
    eye = np.eye(joint.nv)
    return all(np.allclose(joint.qdot(q, e), e, rtol=0, atol=1e-12)
               for q in (joint.random(rng), joint.random(rng)) for e in eye)


_IDENTITY, _ZERO = np.eye(6), np.zeros(6)
_IDENTITY.setflags(write=False)
_ZERO.setflags(write=False)


def _block_diag_object(blocks) -> np.ndarray:
    n = sum(b.shape[0] for b in blocks)
    out = np.zeros((n, n), dtype=object)
    o = 0
    for b in blocks:
        out[o: o + b.shape[0], o: o + b.shape[0]] = b
        o += b.shape[0]
    return out

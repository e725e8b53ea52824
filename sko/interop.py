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

Pinocchio and MuJoCo are optional: :class:`PinocchioMap` only reads the peer's model object,
:class:`MujocoMap` imports MuJoCo when built, and a missing peer raises
:class:`~sko.errors.MissingDependencyError` naming the extra (``pip install "sko-multibody[crosscheck]"``).

Examples
--------
A floating-base robot loaded by both (here from a URDF string), one state mapped to Pinocchio
and back::

    import numpy as np, pinocchio as pin
    from sko.systems import RigidSystem
    from sko.interop import PinocchioMap

    system = RigidSystem.from_urdf("robot.urdf", floating_base=True)
    model = pin.buildModelFromUrdf("robot.urdf", pin.JointModelFreeFlyer())
    to_pin = PinocchioMap(system, model)
    q, v, a = system.random_configuration(0), np.ones(system.nv), np.zeros(system.nv)
    tau = pin.rnea(model, model.createData(), to_pin.q(q), to_pin.v(v), to_pin.v(a))
    assert np.allclose(to_pin.v_back(tau), system.inverse_dynamics(q, v, a))
    assert np.allclose(to_pin.q_back(to_pin.q(q)), q)
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
        raise InteropError(f"{cls} needs a system (sko.systems.RigidSystem, e.g. from_urdf or "
                           f"from_mjcf) as its first argument, got {_described(system)}")
    return system


def _described(x) -> str:
    text = repr(x)
    return f"{type(x).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


class _Permutation:
    """Velocity-like vectors as one permutation ``ours[perm] = theirs`` (shared by both maps)."""

    system = None
    v_perm: np.ndarray

    def v(self, v) -> np.ndarray:
        """Our ``ν``, ``ν̇`` or ``τ`` in the peer's order and conventions."""
        return self._vector(v, self.system.nv, "velocity-like vector")[self.v_perm]

    def v_back(self, v_peer) -> np.ndarray:
        """The peer's ``ν``, ``ν̇`` or ``τ`` in ours."""
        v_peer = self._vector(v_peer, self.system.nv, "peer velocity-like vector")
        out = np.zeros(self.system.nv, dtype=v_peer.dtype)
        out[self.v_perm] = v_peer
        return out

    def matrix(self, M) -> np.ndarray:
        """Our ``nv × nv`` matrix (``ℳ``, ``ℳ⁻¹``, a derivative of the dynamics) in the peer's
        order: ``P A Pᵀ`` for the permutation ``P`` (module docstring, *Matrices*)."""
        return self._matrix(M, "matrix")[np.ix_(self.v_perm, self.v_perm)]

    def matrix_back(self, M_peer) -> np.ndarray:
        """A peer's ``nv × nv`` matrix in our order: ``Pᵀ A_peer P``."""
        inverse = np.argsort(self.v_perm)
        return self._matrix(M_peer, "peer matrix")[np.ix_(inverse, inverse)]

    def _matrix(self, M, what: str) -> np.ndarray:
        n = self.system.nv
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


class PinocchioMap(_Permutation):
    """Coordinates of ``system`` (from :func:`sko.io.urdf.load_urdf`) ↔ a ``pinocchio.Model`` of
    the same URDF (``buildModelFromUrdf``, with ``JointModelFreeFlyer()`` for a floating base).

    Methods: :meth:`q` / :meth:`q_back` for configurations, ``v`` / ``v_back`` for velocities,
    accelerations and forces, ``matrix`` / ``matrix_back`` for ``ℳ``, ``ℳ⁻¹`` and the
    derivatives of the dynamics (Pinocchio's conventions are ours reordered).

    Raises
    ------
    InteropError
        ``system`` is not a system or ``model`` not a ``pinocchio.Model``; a Pinocchio joint with
        no joint of that name in ``system`` (or the other way round), or of a kind with a
        different number of coordinates and no known conversion.
    """

    def __init__(self, system, model):
        _checked_system(system, "PinocchioMap")
        if not all(hasattr(model, a) for a in ("names", "njoints", "joints", "nq", "nv")):
            raise InteropError(f"PinocchioMap needs a pinocchio.Model (e.g. pinocchio.buildModelFromUrdf) as its "
                               f"second argument, got {_described(model)}")
        self.system, self.model = system, model
        by_name = system.joint_names()
        names = [model.names[i] for i in range(1, model.njoints)]
        missing = sorted(set(names) - set(by_name))
        moving = {name for name, body in by_name.items() if system.body_joint(body).nv}
        extra = sorted(moving - set(names))
        if missing or extra:
            raise InteropError(f"joints differ: Pinocchio's {missing} are not in the system, the system's {extra} "
                               "are not in Pinocchio's model")
        self._joints = []
        perm = np.zeros(system.nv, dtype=int)
        for i, name in enumerate(names, start=1):
            jm = model.joints[i]
            body = by_name[name]
            qs, vs = system.q_slices[body], system.dof_slices[body]
            kind = _pinocchio_kind(jm, qs, vs, name)
            ours = np.arange(vs.start, vs.stop)
            if kind in ("free", "planar"):
                ours = np.concatenate([ours[3:], ours[:3]]) if kind == "free" else ours[[1, 2, 0]]
            perm[jm.idx_v:jm.idx_v + jm.nv] = ours
            self._joints.append((kind, qs, slice(jm.idx_q, jm.idx_q + jm.nq)))
        self.v_perm = perm

    def q(self, q) -> np.ndarray:
        """Our configuration as Pinocchio's (quaternions normalised)."""
        q = self._vector(q, self.system.nq, "q")
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
        """Pinocchio's configuration as ours (continuous angles in ``(−π, π]``)."""
        q_pin = self._vector(q_pin, self.model.nq, "Pinocchio q")
        out = np.zeros(self.system.nq)
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
        return out


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
    of a :class:`~sko.bodies.composite.CompositeJoint` (several joints on one body) included."""
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


class MujocoMap(_Permutation):
    """Coordinates of ``system`` ↔ a compiled ``mujoco.MjModel`` with joints of the same names
    (e.g. MuJoCo's compilation of the URDF the system was loaded from).

    A system from :meth:`~sko.systems.rigid.RigidSystem.from_mjcf` already uses MuJoCo's
    ``qpos``, ``qvel`` and ``qfrc``: its map is the identity. For a URDF-loaded system the free
    flyer is the one joint whose velocities differ by a rotation (``ṗ = R v``), so :meth:`v`,
    :meth:`v_back`, :meth:`matrix` and :meth:`matrix_back` take the configuration ``q`` (ours)
    as well.

    Raises
    ------
    InteropError
        ``system`` is not a system or ``model`` not a ``mujoco.MjModel``; a moving joint of
        ``system`` with no MuJoCo joint of that name, or the other way round, or different
        numbers of coordinates.
    """

    def __init__(self, system, model):
        mujoco = require("mujoco", "state conversion with MuJoCo")
        from sko.io.mjcf import object_names

        _checked_system(system, "MujocoMap")
        if not isinstance(model, mujoco.MjModel):
            raise InteropError(f"MujocoMap needs a mujoco.MjModel (e.g. mujoco.MjModel.from_xml_path) as its second "
                               f"argument, got {_described(model)}")
        self.system, self.model = system, model
        ours_by_name = named_joints(system)
        names = object_names(model, "joint")  # unnamed joints named as the MJCF loader names them
        moving = {name for name, (joint, _, _) in ours_by_name.items() if joint.nv}
        missing, extra = sorted(set(names) - set(ours_by_name)), sorted(moving - set(names))
        if missing or extra:
            raise InteropError(f"joints differ: MuJoCo's {missing} are not in the system, the system's {extra} "
                               "are not in MuJoCo's model")
        if model.nv != system.nv:
            raise InteropError(f"MuJoCo's model has nv = {model.nv}, the system nv = {system.nv}")
        perm = np.zeros(system.nv, dtype=int)
        self._joints = []
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
            perm[va:va + nv] = np.concatenate([ours[3:], ours[:3]]) if kind == "free" else ours
            self._joints.append((kind, qs, slice(qa, qa + nq), vs, slice(va, va + nv)))
        self.v_perm = perm
        self._free = any(kind == "free" for kind, *_ in self._joints)

    def q(self, q) -> np.ndarray:
        """Our configuration as MuJoCo's ``qpos``."""
        q = self._vector(q, self.system.nq, "q")
        out = np.zeros(self.model.nq)
        for kind, ours, theirs, _, _ in self._joints:
            x = q[ours]
            out[theirs] = np.concatenate([x[4:], x[:4]]) if kind == "free" else x
        return out

    def q_back(self, qpos) -> np.ndarray:
        """MuJoCo's ``qpos`` as our configuration."""
        qpos = self._vector(qpos, self.model.nq, "MuJoCo qpos")
        out = np.zeros(self.system.nq)
        for kind, ours, theirs, _, _ in self._joints:
            x = qpos[theirs]
            out[ours] = np.concatenate([x[3:], x[:3]]) if kind == "free" else x
        return out

    def v(self, v, q=None) -> np.ndarray:
        """Our ``ν``, ``ν̇`` or ``τ`` as MuJoCo's ``qvel``, ``qacc``, ``qfrc`` (``q``, ours, is needed
        with a free joint: its linear part is rotated to the world frame).

        ``ν̇`` of a free joint maps by the same rotation only at zero angular velocity; convert
        accelerations with :meth:`acceleration`."""
        return self._rotate_free(super().v(v), q, to_world=True)

    def v_back(self, v_peer, q=None) -> np.ndarray:
        """MuJoCo's ``qvel`` or ``qfrc`` as our ``ν`` or ``τ`` (``q`` as in :meth:`v`)."""
        return super().v_back(self._rotate_free(self._vector(v_peer, self.system.nv, "MuJoCo qvel"), q, to_world=False))

    def matrix(self, M, q=None) -> np.ndarray:
        """Our ``nv × nv`` matrix (``ℳ``, ``ℳ⁻¹``) as MuJoCo's (``mj_fullM``): ``T A Tᵀ`` with
        ``qvel = T ν`` (module docstring, *Matrices*; ``q``, ours, is needed with a free joint).
        Not for derivatives of the dynamics, which also differentiate ``T``."""
        return self._rotate_free_matrix(super().matrix(M), q, to_world=True)

    def matrix_back(self, M_peer, q=None) -> np.ndarray:
        """MuJoCo's ``nv × nv`` matrix (``mj_fullM``'s ℳ, its inverse) as ours: ``Tᵀ A_mj T``
        (``q`` as in :meth:`matrix`)."""
        return super().matrix_back(self._rotate_free_matrix(self._matrix(M_peer, "MuJoCo matrix"), q, to_world=False))

    def acceleration(self, qdd, q, v) -> np.ndarray:
        """Our ``ν̇`` as MuJoCo's ``qacc`` at the state ``(q, ν)``: for a free joint
        ``p̈ = R (v̇ + ω × v)`` (the derivative of ``ṗ = R v``)."""
        out = self.v(qdd, q)
        q = self._vector(q, self.system.nq, "q")
        v = self._vector(v, self.system.nv, "velocity")
        for kind, ours, _, vs, theirs in self._joints:
            if kind == "free":
                w, lin = v[vs][:3], v[vs][3:]
                out[theirs.start:theirs.start + 3] += quaternion_matrix(q[ours][:4]) @ np.cross(w, lin)
        return out

    def acceleration_back(self, qacc, q, v) -> np.ndarray:
        """MuJoCo's ``qacc`` as our ``ν̇`` at the state ``(q, ν)`` (ours); inverse of :meth:`acceleration`."""
        qacc = np.array(self._vector(qacc, self.system.nv, "MuJoCo qacc"))
        q = self._vector(q, self.system.nq, "q")
        v = self._vector(v, self.system.nv, "velocity")
        for kind, ours, _, vs, theirs in self._joints:
            if kind == "free":
                w, lin = v[vs][:3], v[vs][3:]
                qacc[theirs.start:theirs.start + 3] -= quaternion_matrix(q[ours][:4]) @ np.cross(w, lin)
        return self.v_back(qacc, q)

    def _free_rotations(self, q, what: str) -> list:
        """``[(slice of MuJoCo's linear velocity, R)]`` for each free joint at our ``q``."""
        if q is None:
            raise InteropError(f"the system has a free joint: converting its {what} needs the configuration q")
        q = self._vector(q, self.system.nq, "q")
        out = []
        for kind, ours, _, _, theirs in self._joints:
            if kind == "free":
                quat = q[ours][:4]
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

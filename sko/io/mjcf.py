"""MJCF input through MuJoCo's own compiler (RIGID.md, *Interoperability*).

MuJoCo compiles the model (``mujoco.MjModel.from_xml_path`` / ``from_xml_string``, so includes,
defaults, meshes, geom-derived inertias and URDF input all work as in MuJoCo), and the compiled
arrays become a :class:`~sko.systems.rigid.RigidSystem`:

* the body tree (``body_parentid``), placements ``body_pos``/``body_quat``, inertias
  ``body_mass``, ``body_ipos``/``body_iquat``, ``body_inertia`` (principal moments);
* joints ``hinge`` (:class:`~sko.bodies.joints.Revolute`), ``slide``
  (:class:`~sko.bodies.joints.Prismatic`), both read at ``qpos − qpos0``
  (:class:`~sko.bodies.composite.OffsetJoint`); ``ball`` (:class:`~sko.bodies.joints.Spherical`,
  ``w``-first quaternion, angular velocity in the body frame); ``free``
  (:class:`~sko.bodies.composite.FreePositionFirst`: position first, linear velocity in the
  world frame, angular velocity in the body frame). A hinge or ball rotates about its anchor
  ``jnt_pos``; several joints on one body become one
  :class:`~sko.bodies.composite.CompositeJoint` applied in MuJoCo's order;
* bodies without joints are welded to their parent (merged, kept as named frames);
* ``dof_armature`` as reflected rotor inertia on ℳ's diagonal
  (:class:`~sko.bodies.armature.ArmatureBody`); gravity ``opt.gravity`` (zero when disabled).

So the system's ``q``, ``ν`` and ``τ`` are MuJoCo's ``qpos``, ``qvel`` and ``qfrc``, in the same
order: ``data.qpos`` and ``data.qvel`` pass straight in. A body's frame in the system is
MuJoCo's body frame moved to its last joint's anchor (named frames keep MuJoCo's body frames:
``"<body>"`` is the moving body and the frame ``"<body>@mjcf"`` is MuJoCo's own where they differ).

The dynamics are those of the rigid bodies: passive forces (joint springs, damping, friction
loss), actuators and contacts are MuJoCo's model of forces, not of the mechanism; compare with
``mj_inverse``/``mj_forward`` with them disabled. Equality constraints and tendons cannot be
represented and are reported by name (:class:`~sko.errors.MJCFError`).
"""

from __future__ import annotations

import os

import numpy as np

from sko.bodies.composite import CompositeJoint, FreePositionFirst, OffsetJoint
from sko.bodies.joints import Prismatic, Revolute, Spherical
from sko.errors import MJCFError
from sko.optional import require
from sko.spatial import plucker_from_pose, quaternion_matrix, spatial_inertia
from sko.systems.rigid import BodySpec, RigidSystem

__all__ = ["load_mjcf"]

_FREE, _BALL, _SLIDE, _HINGE = 0, 1, 2, 3


def load_mjcf(source) -> RigidSystem:
    """A :class:`~sko.systems.rigid.RigidSystem` from MJCF (or any model MuJoCo compiles).

    Parameters
    ----------
    source : str, path-like or mujoco.MjModel
        A file path, an XML string (starting with ``<``), or an already compiled model.

    Raises
    ------
    MJCFError
        MuJoCo rejects the model (its message included), or the model has equality constraints
        or tendons (each named).
    MissingDependencyError
        MuJoCo is not installed.

    Examples
    --------
    >>> system = load_mjcf('''<mujoco><worldbody><body name="arm"><joint name="hinge" axis="0 1 0"/>
    ...     <geom type="capsule" fromto="0 0 0 0 0 -1" size="0.05"/></body></worldbody></mujoco>''')
    >>> system.bodies, system.nq, system.nv
    (('arm',), 1, 1)
    """
    mujoco = require("mujoco", "MJCF import")
    model = source if isinstance(source, mujoco.MjModel) else _compile(mujoco, source)
    _check_supported(mujoco, model)
    return _system(mujoco, model)


def _compile(mujoco, source):
    is_xml = isinstance(source, str) and source.lstrip().startswith("<")
    try:
        if is_xml:
            return mujoco.MjModel.from_xml_string(source)
        return mujoco.MjModel.from_xml_path(os.fspath(source))
    except (ValueError, TypeError) as exc:  # MuJoCo's compiler errors are ValueErrors
        where = "MJCF string" if is_xml else f"MJCF file {os.fspath(source)!r}"
        raise MJCFError(f"MuJoCo rejects the {where}: {str(exc).strip()}") from None


def _name(mujoco, model, kind, i: int, prefix: str) -> str:
    return mujoco.mj_id2name(model, kind, i) or f"{prefix}{i}"


def _check_supported(mujoco, model) -> None:
    problems = []
    for i in range(model.neq):
        eq_type = mujoco.mjtEq(int(model.eq_type[i])).name.removeprefix("mjEQ_").lower()
        hint = " (a polynomial coupling of joints: not supported yet)" if eq_type == "joint" else ""
        problems.append(f"equality {_name(mujoco, model, mujoco.mjtObj.mjOBJ_EQUALITY, i, 'equality')!r} "
                        f"of type {eq_type}{hint}")
    for i in range(model.ntendon):
        problems.append(f"tendon {_name(mujoco, model, mujoco.mjtObj.mjOBJ_TENDON, i, 'tendon')!r}")
    if problems:
        raise MJCFError("the MJCF model has constructs a rigid tree system cannot represent: " + "; ".join(problems))


def _translation(d) -> np.ndarray:
    """Plücker transform to a frame moved by ``d`` (same axes)."""
    return plucker_from_pose(np.eye(3), d)


def _system(mujoco, model) -> RigidSystem:
    body_name = [_name(mujoco, model, mujoco.mjtObj.mjOBJ_BODY, i, "body") for i in range(model.nbody)]
    owner = {0: None}  # MuJoCo body -> our body carrying it (None: the world)
    to_mj = {0: np.eye(6)}  # MuJoCo body -> ⁱX_owner, from the owner's frame to MuJoCo's body frame
    specs, frames, inertia = {}, {}, {}
    for i in range(1, model.nbody):
        p = int(model.body_parentid[i])
        X_parent = plucker_from_pose(quaternion_matrix(model.body_quat[i]), model.body_pos[i]) @ to_mj[p]
        I_body = spatial_inertia(float(model.body_mass[i]), model.body_ipos[i],
                                 _rotated(model.body_iquat[i], model.body_inertia[i]))
        joints = range(model.body_jntadr[i], model.body_jntadr[i] + model.body_jntnum[i])
        name = body_name[i]
        if not joints:  # welded to its parent
            owner[i], to_mj[i] = owner[p], X_parent
            frames[name] = (owner[p], X_parent)
            if owner[p] is not None:
                inertia[owner[p]] = inertia[owner[p]] + X_parent.T @ I_body @ X_parent
            continue
        if model.jnt_type[joints[0]] == _FREE:  # its qpos is the world pose: body_pos/quat only set qpos0
            X_parent = to_mj[p]
        parts, anchor = [], np.zeros(3)
        for j in joints:
            jtype = int(model.jnt_type[j])
            new_anchor = anchor if jtype in (_SLIDE, _FREE) else np.asarray(model.jnt_pos[j], dtype=float)
            parts.append((_translation(new_anchor - anchor), _joint(mujoco, model, j, jtype)))
            anchor = new_anchor
        first, _ = parts[0]
        parts[0] = (None, parts[0][1])
        joint = parts[0][1] if len(parts) == 1 else CompositeJoint(parts, name="+".join(jt.name for _, jt in parts))
        owner[i], to_mj[i] = name, _translation(-anchor)
        if anchor.any():
            frames[f"{name}@mjcf"] = (name, to_mj[i])
        inertia[name] = to_mj[i].T @ I_body @ to_mj[i]
        start = int(model.body_dofadr[i])
        armature = np.array(model.dof_armature[start:start + joint.nv], dtype=float)
        specs[name] = (owner[p], joint, first @ X_parent, armature if armature.any() else None)
    bodies = [BodySpec(name, parent, joint, X_T, inertia[name], armature)
              for name, (parent, joint, X_T, armature) in specs.items()]
    gravity = np.zeros(3) if model.opt.disableflags & int(mujoco.mjtDisableBit.mjDSBL_GRAVITY) else model.opt.gravity
    return RigidSystem(bodies, frames, np.concatenate([np.zeros(3), gravity]))


def _rotated(quat, principal) -> np.ndarray:
    R = quaternion_matrix(quat)
    return (R * np.asarray(principal, dtype=float)) @ R.T


def _joint(mujoco, model, j: int, jtype: int):
    name = _name(mujoco, model, mujoco.mjtObj.mjOBJ_JOINT, j, "joint")
    if jtype == _FREE:
        return FreePositionFirst(name=name)
    if jtype == _BALL:
        return Spherical(name=name)
    axis = np.asarray(model.jnt_axis[j], dtype=float)
    joint = Revolute(axis, name=name) if jtype == _HINGE else Prismatic(axis, name=name)
    offset = float(model.qpos0[model.jnt_qposadr[j]])
    return OffsetJoint(joint, [offset]) if offset else joint

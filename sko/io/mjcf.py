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
* ``dof_armature``, plus ``armature · gear²`` of the actuators driving a hinge or slide, as
  reflected rotor inertia on ℳ's diagonal (:class:`~sko.bodies.armature.ArmatureBody`); gravity ``opt.gravity`` (zero when disabled);
* joint limits (:class:`~sko.bodies.joints.JointLimits`, as from URDF, stored and not enforced):
  a hinge's or slide's ``range`` when it is ``limited`` gives its position limits (in ``qpos``
  units, radians or metres); its effort limit is the largest magnitude of the force its
  actuators can apply, ``max(|lo|, |hi|)`` of the interval (see :func:`_effort_ranges`). A ball
  joint's ``range`` is a cone, not a box on its quaternion: it is not kept. MuJoCo has no
  velocity limits.

So the system's ``q``, ``ν`` and ``τ`` are MuJoCo's ``qpos``, ``qvel`` and ``qfrc``, in the same
order: ``data.qpos`` and ``data.qvel`` pass straight in. A body's frame in the system is
MuJoCo's body frame moved to its last joint's anchor (named frames keep MuJoCo's body frames:
``"<body>"`` is the moving body and the frame ``"<body>@mjcf"`` is MuJoCo's own where they differ).
An unnamed body, joint or equality ``i`` is named ``body<i>``, ``joint<i>``, ``equality<i>``,
suffixed when that is another's explicit name (:func:`object_names`): every MuJoCo body is one
body or frame of its own.

A joint equality ``<equality><joint joint1 joint2 polycoef>`` with a linear polynomial,
``y − y0 = c0 + c1 (x − x0)`` (``y``, ``x`` the hinge or slide coordinates of ``joint1``,
``joint2``; ``y0``, ``x0`` their ``qpos0``), is the coupling ``y = c1 x + (y0 + c0 − c1 x0)``,
embedded as a cluster node (EMBEDDING.md §1): the system is then a
:class:`~sko.systems.clustered.ClusteredRigidSystem` whose ``q``, ``ν``, ``τ`` hold the
independent coordinates (``joint_positions`` / ``spanning_configuration`` give MuJoCo's full
``qpos``). MuJoCo enforces the equality softly (``solref``, ``solimp``); here it holds exactly.
An equality inactive at the start (``active="false"``) constrains nothing and is ignored; a
``polycoef`` with NaN or infinity is rejected, active or not.

A fixed tendon ``<tendon><fixed>`` of hinge and slide joints, each its body's only joint, is a
:class:`~sko.systems.multibody.FixedTendon` of the system: its length ``Σ coef · qpos``, its
``stiffness`` slack within the compiled ``springlength`` range (``tendon_lengthspring``) and its
``damping`` give hinge forces, MuJoCo's tendon terms of ``qfrc_passive`` with the opposite sign
(zero when the ``spring`` or ``damper`` flag is disabled), and the spring's potential counts in
the potential energy. A tendon's length limits, friction loss, armature, nonlinear stiffness or
damping and plasticity are not represented and are reported by name (limits and friction loss
only while the ``limit``, ``frictionloss`` and ``constraint`` flags leave them acting), as are
spatial tendons, tendons on a joint sharing its body with others or on a joint an equality makes
dependent (MuJoCo's compiler refuses ball and free joints in fixed tendons, naming them). Actuators acting through tendons are not modelled (nor are
any actuators): such a model loads with a warning naming the tendons.

The dynamics are those of the rigid bodies and tendons: the joints' passive forces (springs,
damping, friction loss), actuators and contacts are MuJoCo's model of forces, not of the
mechanism; compare with ``mj_inverse``/``mj_forward`` with them disabled. Other equality
constraints (connect, weld, tendon, flex, a joint equality with a nonlinear polynomial or without
``joint2``) cannot be represented and are reported by name (:class:`~sko.errors.MJCFError`).
"""

from __future__ import annotations

import os
import warnings

import numpy as np

from sko.bodies.cluster import Coupling
from sko.bodies.composite import CompositeJoint, FreePositionFirst, OffsetJoint
from sko.bodies.joints import Joint, Prismatic, Revolute, Spherical
from sko.io.mjcf_checks import check_numbers, check_structure
from sko.io.text import decoded, is_xml_text
from sko.errors import MJCFError
from sko.graphs.errors import SKOError
from sko.inertia import RTOL, InertiaRepairWarning, inertia_violation, nearest_physical_inertia, repair_description
from sko.optional import require
from sko.spatial import plucker_from_pose, quaternion_matrix, spatial_inertia
from sko.systems.clustered import ClusteredRigidSystem
from sko.systems.multibody import FixedTendon, fixed_tendon
from sko.systems.rigid import BodySpec, RigidSystem

__all__ = ["load_mjcf", "object_names"]

_FREE, _BALL, _SLIDE, _HINGE = 0, 1, 2, 3


def load_mjcf(source, inertia: str = "strict") -> RigidSystem:
    """A :class:`~sko.systems.rigid.RigidSystem` from MJCF (or any model MuJoCo compiles).

    Parameters
    ----------
    source : str, path-like or mujoco.MjModel
        A file path, an XML string (starting with ``<``), or an already compiled model.
    inertia : {"strict", "repair"}
        MuJoCo's compiler rejects inertias breaking the triangle inequality first (unless the
        model sets ``balanceinertia``); of the compiled ones, ``"strict"`` rejects any no physical
        body has by the body's own scale (:mod:`sko.inertia`), ``"repair"`` replaces it by the
        nearest physical one and warns.

    Raises
    ------
    MJCFError
        MuJoCo rejects the model (its message included); a compiled model's arrays were edited
        out of shape, or a number the loader reads is NaN or infinite (each named, with its
        attribute: :mod:`sko.io.mjcf_checks`); or the model has equality constraints
        other than linear joint couplings or tendons other than fixed tendons with a spring and
        damper (each named, module docstring), or couplings that cannot be embedded (a cycle, a
        coupled joint sharing its body with other joints).
    MissingDependencyError
        MuJoCo is not installed.

    Warns
    -----
    InertiaRepairWarning
        ``inertia="repair"`` changed some body inertias (each named, with the change).
    UserWarning
        Actuators act through tendons (named): the actuation is not modelled.

    Examples
    --------
    >>> system = load_mjcf('''<mujoco><worldbody><body name="arm"><joint name="hinge" axis="0 1 0"/>
    ...     <geom type="capsule" fromto="0 0 0 0 0 -1" size="0.05"/></body></worldbody></mujoco>''')
    >>> system.bodies, system.nq, system.nv
    (('arm',), 1, 1)
    """
    if inertia not in ("strict", "repair"):
        raise MJCFError(f"inertia must be 'strict' or 'repair', got {inertia!r}")
    mujoco = require("mujoco", "MJCF import")
    model = source if isinstance(source, mujoco.MjModel) else _compile(mujoco, source)
    names = {kind: object_names(model, kind) for kind in ("body", "joint", "equality", "tendon", "actuator")}
    check_structure(mujoco, model, names)
    check_numbers(mujoco, model, names)
    couplings, tendons = _check_supported(mujoco, model, names)
    actuated = sorted({names["tendon"][int(model.actuator_trnid[a, 0])] for a in range(model.nu)
                       if int(model.actuator_trntype[a]) == int(mujoco.mjtTrn.mjTRN_TENDON)})
    if actuated:
        warnings.warn(f"actuators act through tendons {actuated}: actuation is not modelled (tau is the joints' "
                      "generalised forces; a tendon force f gives tau_j = coef_j f)", UserWarning, stacklevel=2)
    repairs: list[str] | None = [] if inertia == "repair" else None
    system = _system(mujoco, model, names, repairs, couplings, tendons)
    if repairs:
        warnings.warn(InertiaRepairWarning(
            f"replaced {len(repairs)} body inertia{'s' if len(repairs) > 1 else ''} by the nearest physical one: "
            + "; ".join(repairs), repairs), stacklevel=3)
    return system


def _compile(mujoco, source):
    if isinstance(source, (bytes, bytearray)):
        try:
            source = decoded(source) if is_xml_text(source) else os.fsdecode(bytes(source))
        except UnicodeDecodeError as exc:
            raise MJCFError(f"MJCF bytes are not UTF-8 (or UTF-16 with its byte-order mark) XML: {exc}") from None
    if not isinstance(source, (str, os.PathLike)):
        raise MJCFError(f"MJCF source must be a path, an XML string or a mujoco.MjModel, got {type(source).__name__}")
    is_xml = is_xml_text(source)
    try:
        if is_xml:
            return mujoco.MjModel.from_xml_string(source)
        return mujoco.MjModel.from_xml_path(os.fspath(source))
    except (ValueError, TypeError) as exc:  # MuJoCo's compiler errors are ValueErrors
        where = "MJCF string" if is_xml else f"MJCF file {os.fspath(source)!r}"
        raise MJCFError(f"MuJoCo rejects the {where}: {str(exc).strip()}") from None


def object_names(model, kind: str) -> list[str]:
    """The names of all objects of ``kind`` (``"body"``, ``"joint"``, ``"equality"``,
    ``"tendon"`` or ``"actuator"``) of a compiled ``mujoco.MjModel``, by index.

    An explicit name is kept; an unnamed object ``i`` is ``"<kind><i>"``, or ``"<kind><i>_<k>"``
    with the smallest ``k ≥ 1`` free when an explicit name already is that, so that no two
    objects of a kind share a name (MuJoCo's own names of a kind are unique). The MJCF loader
    and :class:`~sko.interop.MujocoMap` both name objects this way.
    """
    mujoco = require("mujoco", "MJCF import")
    count = {"body": model.nbody, "joint": model.njnt, "equality": model.neq, "tendon": model.ntendon,
             "actuator": model.nu}[kind]
    obj = getattr(mujoco.mjtObj, f"mjOBJ_{kind.upper()}")
    names = [mujoco.mj_id2name(model, obj, i) or None for i in range(count)]
    taken = {name for name in names if name is not None}
    for i, name in enumerate(names):
        if name is None:
            name, k = f"{kind}{i}", 0
            while name in taken:
                k += 1
                name = f"{kind}{i}_{k}"
            taken.add(name)
            names[i] = name
    return names


def _check_supported(mujoco, model, names: dict) -> tuple[list, list]:
    """The joint couplings ``(name, joint1, joint2, ratio, offset)`` of the active linear joint
    equalities and the fixed tendons with a spring or damper (module docstring); every construct
    that cannot be represented is reported."""
    problems, couplings = [], []
    for i in range(model.neq):
        eq_type = mujoco.mjtEq(int(model.eq_type[i])).name.removeprefix("mjEQ_").lower()
        name = names["equality"][i]
        if eq_type != "joint":
            problems.append(f"equality {name!r} of type {eq_type}")
            continue
        j1, j2 = int(model.eq_obj1id[i]), int(model.eq_obj2id[i])
        c = np.asarray(model.eq_data[i, :5], dtype=float)
        if not np.isfinite(c).all():  # rejected even when inactive: it would give NaN once activated
            joints = [names["joint"][j] for j in (j1, j2) if j >= 0]
            problems.append(f"equality {name!r} of type joint (joints {joints}) has a non-finite polycoef {c.tolist()}")
            continue
        if not model.eq_active0[i]:
            continue
        if j2 < 0:
            problems.append(f"equality {name!r} of type joint holds one joint at a constant (no joint2)")
        elif c[2:].any():
            problems.append(f"equality {name!r} of type joint has a nonlinear polynomial (polycoef {c.tolist()}): "
                            "only c0 + c1 x couples joints")
        elif any(int(model.jnt_type[j]) not in (_HINGE, _SLIDE) for j in (j1, j2)):
            problems.append(f"equality {name!r} of type joint couples a ball or free joint")
        else:
            y0, x0 = float(model.qpos0[model.jnt_qposadr[j1]]), float(model.qpos0[model.jnt_qposadr[j2]])
            with np.errstate(over="ignore", invalid="ignore"):
                offset = y0 + float(c[0]) - float(c[1]) * x0
            if not np.isfinite(offset):
                problems.append(f"equality {name!r} of type joint (joints {[names['joint'][j] for j in (j1, j2)]}): "
                                f"its offset y0 + c0 - c1 x0 = {y0} + {c[0]} - {c[1]} * {x0} overflows")
            else:
                couplings.append((name, j2, j1, float(c[1]), offset))
    dependent = {d: name for name, _, d, _, _ in couplings}
    tendons = [t for i in range(model.ntendon) if (t := _tendon(mujoco, model, i, names, dependent, problems))]
    _actuator_armature(mujoco, model, names, problems)
    if problems:
        raise MJCFError("the MJCF model has constructs a rigid tree system cannot represent: " + "; ".join(problems))
    return couplings, tendons


def _actuator_armature(mujoco, model, names: dict, problems: list | None = None) -> np.ndarray:
    """The armature actuators add to the dofs (``nv``): ``armature · gear²`` on the hinge or slide
    an actuator drives (MuJoCo's reflected rotor inertia; MuJoCo allows armature on joint and
    tendon transmissions only). Armature on a ball or free joint is appended to ``problems``; a
    tendon's is reported with the tendon."""
    out = np.zeros(model.nv)
    for a in range(model.nu):
        armature = float(model.actuator_armature[a])
        if not armature or int(model.actuator_trntype[a]) == int(mujoco.mjtTrn.mjTRN_TENDON):
            continue
        j = int(model.actuator_trnid[a, 0])
        if int(model.jnt_type[j]) in (_HINGE, _SLIDE):
            out[int(model.jnt_dofadr[j])] += armature * float(model.actuator_gear[a, 0]) ** 2
        elif problems is not None:
            problems.append(f"actuator {names['actuator'][a]!r} adds armature {armature} to the ball or free joint "
                            f"{names['joint'][j]!r}")
    return out


def _tendon(mujoco, model, i: int, names: dict, dependent: dict, problems: list) -> FixedTendon | None:
    """Tendon ``i`` as a :class:`FixedTendon` when its spring or damper acts (``None`` when neither
    does); what cannot be represented is appended to ``problems`` (module docstring). ``dependent``
    maps each joint an equality makes dependent to that equality."""
    name, flags = names["tendon"][i], int(model.opt.disableflags)
    off = {flag: bool(flags & int(getattr(mujoco.mjtDisableBit, f"mjDSBL_{flag.upper()}")))
           for flag in ("spring", "damper", "limit", "frictionloss", "constraint")}
    if int(model.tendon_type[i]) != int(mujoco.mjtTendon.mjTENDON_FIXED):
        problems.append(f"tendon {name!r} is spatial (routed through sites and geometry)")
        return None
    before, coefficients = len(problems), {}
    for w in range(int(model.tendon_adr[i]), int(model.tendon_adr[i]) + int(model.tendon_num[i])):
        j = int(model.wrap_objid[w])
        joint, body = names["joint"][j], int(model.jnt_bodyid[j])
        if int(model.body_jntnum[body]) != 1:  # a hinge or slide: MuJoCo's compiler refuses ball and free joints
            problems.append(f"tendon {name!r} acts on joint {joint!r}, which shares body {names['body'][body]!r} with "
                            "other joints: only a body's single joint can be in a tendon")
        elif j in dependent:
            problems.append(f"tendon {name!r} acts on joint {joint!r}, which equality {dependent[j]!r} makes "
                            "dependent: a tendon's joints must be independent coordinates")
        coefficients[joint] = coefficients.get(joint, 0.0) + float(model.wrap_prm[w])
    if model.tendon_limited[i] and not (off["limit"] or off["constraint"]):
        problems.append(f"tendon {name!r} has length limits (range {model.tendon_range[i].tolist()})")
    if model.tendon_frictionloss[i] and not (off["frictionloss"] or off["constraint"]):
        problems.append(f"tendon {name!r} has friction loss (frictionloss {float(model.tendon_frictionloss[i])})")
    if model.tendon_armature[i]:
        problems.append(f"tendon {name!r} has armature {float(model.tendon_armature[i])} (an inertia of its length)")
    if np.any(model.tendon_stiffnesspoly[i]) or np.any(model.tendon_dampingpoly[i]):
        problems.append(f"tendon {name!r} has a nonlinear stiffness or damping (stiffnesspoly "
                        f"{model.tendon_stiffnesspoly[i].tolist()}, dampingpoly {model.tendon_dampingpoly[i].tolist()})")
    if int(model.tendon_plasticadr[i]) >= 0 or model.tendon_springyield[i]:
        problems.append(f"tendon {name!r} is plastic (springyield {float(model.tendon_springyield[i])})")
    for a in range(model.nu):
        if (int(model.actuator_trntype[a]) == int(mujoco.mjtTrn.mjTRN_TENDON) and int(model.actuator_trnid[a, 0]) == i
                and model.actuator_armature[a]):
            problems.append(f"actuator {names['actuator'][a]!r} adds armature {float(model.actuator_armature[a])} "
                            f"to tendon {name!r} (an inertia of its length)")
    stiffness = 0.0 if off["spring"] else float(model.tendon_stiffness[i])
    damping = 0.0 if off["damper"] else float(model.tendon_damping[i])
    if len(problems) > before or not (stiffness or damping):
        return None
    return fixed_tendon(name, coefficients, stiffness, damping, tuple(model.tendon_lengthspring[i]), error=MJCFError)


def _translation(d) -> np.ndarray:
    """Plücker transform to a frame moved by ``d`` (same axes)."""
    return plucker_from_pose(np.eye(3), d)


def _system(mujoco, model, names: dict, repairs: list | None, couplings: list, tendons: list) -> RigidSystem:
    body_name = names["body"]
    owner = {0: None}  # MuJoCo body -> our body carrying it (None: the world)
    to_mj = {0: np.eye(6)}  # MuJoCo body -> ⁱX_owner, from the owner's frame to MuJoCo's body frame
    specs, frames, inertia = {}, {}, {}
    effort = _effort_ranges(mujoco, model)
    dof_armature = np.asarray(model.dof_armature, dtype=float) + _actuator_armature(mujoco, model, names)
    named = {}  # every body and frame name -> what it names: one namespace, no name may mean two things

    def claim(key: str, what: str) -> None:
        if key in named:
            raise MJCFError(f"{named[key]} and {what} would both be named {key!r}: rename the MJCF body")
        named[key] = what

    for i in range(1, model.nbody):
        p = int(model.body_parentid[i])
        X_parent = plucker_from_pose(quaternion_matrix(model.body_quat[i]), model.body_pos[i]) @ to_mj[p]
        name = body_name[i]
        I_body = spatial_inertia(float(model.body_mass[i]), model.body_ipos[i], _body_inertia(model, i, name, repairs))
        joints = range(model.body_jntadr[i], model.body_jntadr[i] + model.body_jntnum[i])
        claim(name, f"body {name!r}")
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
            joint = _joint(model, j, jtype, names["joint"][j])
            parts.append((_translation(new_anchor - anchor), _limited(joint, model, j, effort[j])))
            anchor = new_anchor
        first, _ = parts[0]
        parts[0] = (None, parts[0][1])
        joint = parts[0][1] if len(parts) == 1 else CompositeJoint(parts, name="+".join(jt.name for _, jt in parts))
        owner[i], to_mj[i] = name, _translation(-anchor)
        if anchor.any():
            claim(f"{name}@mjcf", f"MuJoCo's frame of body {name!r}")
            frames[f"{name}@mjcf"] = (name, to_mj[i])
        inertia[name] = to_mj[i].T @ I_body @ to_mj[i]
        start = int(model.body_dofadr[i])
        armature = dof_armature[start:start + joint.nv].copy()
        specs[name] = (owner[p], joint, first @ X_parent, armature if armature.any() else None)
    bodies = [BodySpec(name, parent, joint, X_T, inertia[name], armature)
              for name, (parent, joint, X_T, armature) in specs.items()]
    gravity = np.zeros(3) if model.opt.disableflags & int(mujoco.mjtDisableBit.mjDSBL_GRAVITY) else model.opt.gravity
    gravity = np.concatenate([np.zeros(3), gravity])
    if not couplings:
        return RigidSystem(bodies, frames, gravity, tendons)
    return _coupled(model, names, bodies, frames, gravity, couplings, tendons)


def _coupled(model, names: dict, bodies, frames, gravity, couplings, tendons) -> RigidSystem:
    """The system with each joint coupling ``(name, primary joint, dependent joint, ratio,
    offset)`` embedded (module docstring), and the tendons."""
    body_of = {}
    for name, *ends, _, _ in couplings:
        for j in ends:
            i = int(model.jnt_bodyid[j])
            if model.body_jntnum[i] != 1:
                raise MJCFError(f"equality {name!r} couples joint {names['joint'][j]!r}, which shares body "
                                f"{names['body'][i]!r} with other joints: only a body's single joint can be coupled")
            body_of[j] = names["body"][i]
    try:
        return ClusteredRigidSystem(bodies, frames, gravity, [Coupling(name, body_of[p], body_of[d], ratio, offset)
                                                              for name, p, d, ratio, offset in couplings],
                                    tendons=tendons)
    except SKOError as exc:
        names = [c[0] for c in couplings]
        raise MJCFError(f"the MJCF model's joint equalities {names} cannot be embedded: {exc}") from None


def _body_inertia(model, i: int, name: str, repairs: list | None) -> np.ndarray:
    """Body ``i``'s rotational inertia about its centre of mass in its frame; with a list
    ``repairs``, an unphysical one is projected and the change appended to it."""
    Ic = _rotated(model.body_iquat[i], model.body_inertia[i])
    if repairs is not None and inertia_violation(float(model.body_mass[i]), model.body_ipos[i], Ic) > RTOL:
        fixed = nearest_physical_inertia(Ic)
        repairs.append(repair_description(f"body {name!r}", Ic, fixed))
        Ic = fixed
    return Ic


def _effort_ranges(mujoco, model) -> np.ndarray:
    """``(njnt, 2)`` interval of the actuator force each hinge or slide joint can receive
    (``±inf``: unbounded or unknown).

    An actuator on a joint (``trntype`` joint) applies ``gear · clamp(force, forcerange)``, its
    force being ``gain · ctrl`` with ``ctrl`` clamped to ``ctrlrange`` for a plain motor (fixed
    gain, no bias, no activation dynamics); the joint receives the sum over its actuators, clamped
    to its ``actuatorfrcrange``. Joints without actuators, and all joints when an actuator acts
    through anything else (a site, body, tendon or slider-crank, whose joint forces depend on the
    state), keep only ``actuatorfrcrange``."""
    out = np.tile([-np.inf, np.inf], (model.njnt, 1))
    scalar = [j for j in range(model.njnt) if int(model.jnt_type[j]) in (_HINGE, _SLIDE)]
    joint_trn = (int(mujoco.mjtTrn.mjTRN_JOINT), int(mujoco.mjtTrn.mjTRN_JOINTINPARENT))
    if model.nu and all(int(t) in joint_trn for t in model.actuator_trntype):
        clamp_ctrl = not model.opt.disableflags & int(mujoco.mjtDisableBit.mjDSBL_CLAMPCTRL)
        total = {}
        for a in range(model.nu):
            j = int(model.actuator_trnid[a, 0])
            if j not in scalar:
                continue
            force = np.array([-np.inf, np.inf])
            motor = (model.actuator_gaintype[a] == 0 and model.actuator_biastype[a] == 0 and model.actuator_dyntype[a] == 0)
            if motor and clamp_ctrl and model.actuator_ctrllimited[a]:
                force = np.sort(model.actuator_gainprm[a, 0] * model.actuator_ctrlrange[a])
            if model.actuator_forcelimited[a]:
                force = np.clip(force, *model.actuator_forcerange[a])
            gear = float(model.actuator_gear[a, 0])
            total[j] = total.get(j, np.zeros(2)) + (np.sort(gear * force) if gear else np.zeros(2))
        for j, interval in total.items():
            out[j] = interval
    for j in scalar:
        if model.jnt_actfrclimited[j]:
            out[j] = np.clip(out[j], *model.jnt_actfrcrange[j])
    return out


def _limited(joint: Joint, model, j: int, effort) -> Joint:
    """A hinge's or slide's position limits (``range`` when ``limited``) and effort limit."""
    lower, upper = model.jnt_range[j] if model.jnt_limited[j] and joint.nq == 1 else (-np.inf, np.inf)
    bound = float(np.max(np.abs(effort))) if joint.nq == 1 else np.inf
    return joint.with_limits(lower, upper, effort=bound) if np.isfinite([lower, upper, bound]).any() else joint


def _rotated(quat, principal) -> np.ndarray:
    R = quaternion_matrix(quat)
    return (R * np.asarray(principal, dtype=float)) @ R.T


def _joint(model, j: int, jtype: int, name: str):
    if jtype == _FREE:
        return FreePositionFirst(name=name)
    if jtype == _BALL:
        return Spherical(name=name)
    axis = np.asarray(model.jnt_axis[j], dtype=float)
    joint = Revolute(axis, name=name) if jtype == _HINGE else Prismatic(axis, name=name)
    offset = float(model.qpos0[model.jnt_qposadr[j]])
    return OffsetJoint(joint, [offset]) if offset else joint

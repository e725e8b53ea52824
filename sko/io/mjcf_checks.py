"""A compiled ``mujoco.MjModel`` checked before the MJCF loader reads it (RIGID.md, *Interoperability*).

MuJoCo's compiler makes consistent models, but a model's arrays are writable: a user may edit one
after compiling it (in a notebook, reparenting a body or moving a joint), and the compiler lets
NaN and infinity through with a warning (``gear="nan"``). The loader reads the arrays as indices
and numbers, so each is judged here, once, with every problem named by its object and its
MJCF attribute (:class:`~sko.errors.MJCFError`), never a ``KeyError`` or a silent NaN:

* :func:`check_structure`: the names and indices the loader follows — no two objects of a kind
  share a name, each body's parent comes before it, each body's joints are its own and the
  joints' coordinates and velocities are laid out in order, the joints of actuators, equalities
  and tendons exist;
* :func:`check_numbers`: every number the loader reads is finite, except that a range (a joint's
  ``range`` and ``actuatorfrcrange``, an actuator's ``ctrlrange`` and ``forcerange``) may be
  unbounded (``±inf``); a body's quaternions must be nonzero.
"""

from __future__ import annotations

import numpy as np

from sko.errors import MJCFError

__all__ = ["check_structure", "check_numbers"]

_FREE, _BALL, _SLIDE, _HINGE = 0, 1, 2, 3
#: coordinates and velocities of each joint type (free, ball, slide, hinge)
_NQ, _NV = (7, 4, 1, 1), (6, 3, 1, 1)


def check_structure(mujoco, model, names: dict) -> None:
    """:class:`~sko.errors.MJCFError` listing every index of ``model`` the loader would follow
    out of the model or to the wrong object (module docstring); ``names`` are the objects' names
    by kind (:func:`~sko.io.mjcf.object_names`)."""
    problems = []
    body, joint = names["body"], names["joint"]
    for kind, named in names.items():
        twice = sorted({name for name in named if named.count(name) > 1})
        if twice:
            problems.append(f"{kind} names {twice} are each given to more than one {kind}")
    for i in range(1, model.nbody):
        p = int(model.body_parentid[i])
        if not 0 <= p < i:
            problems.append(f"body {body[i]!r} has parent index {p}, not a body before it (0 to {i - 1})")
    _joint_layout(model, body, joint, problems)
    transmission = {int(mujoco.mjtTrn.mjTRN_JOINT): ("joint", model.njnt),
                    int(mujoco.mjtTrn.mjTRN_JOINTINPARENT): ("joint", model.njnt),
                    int(mujoco.mjtTrn.mjTRN_TENDON): ("tendon", model.ntendon)}
    for a in range(model.nu):
        kind, count = transmission.get(int(model.actuator_trntype[a]), (None, 0))
        if kind is not None and not 0 <= int(model.actuator_trnid[a, 0]) < count:
            problems.append(f"actuator {names['actuator'][a]!r} acts on {kind} {int(model.actuator_trnid[a, 0])}, "
                            f"which does not exist (the model has {count})")
    for e in range(model.neq):
        if int(model.eq_type[e]) == int(mujoco.mjtEq.mjEQ_JOINT):
            j1, j2 = int(model.eq_obj1id[e]), int(model.eq_obj2id[e])
            if not (0 <= j1 < model.njnt and -1 <= j2 < model.njnt):
                problems.append(f"equality {names['equality'][e]!r} couples joints {j1} and {j2}, which do not exist "
                                f"(the model has {model.njnt})")
    for t in range(model.ntendon):
        start, count = int(model.tendon_adr[t]), int(model.tendon_num[t])
        if not (0 <= start and 0 <= count and start + count <= model.nwrap):
            problems.append(f"tendon {names['tendon'][t]!r} has wraps {start} to {start + count - 1}, beyond the "
                            f"model's {model.nwrap}")
            continue
        for w in range(start, start + count):
            if int(model.wrap_type[w]) == int(mujoco.mjtWrap.mjWRAP_JOINT) and not 0 <= int(model.wrap_objid[w]) < model.njnt:
                problems.append(f"tendon {names['tendon'][t]!r} acts on joint {int(model.wrap_objid[w])}, which does "
                                f"not exist (the model has {model.njnt})")
    if problems:
        raise MJCFError("the mujoco.MjModel's arrays do not describe one model (edited after it was compiled? compile "
                        "the edited model again, e.g. from its mujoco.MjSpec): " + "; ".join(problems))


def _joint_layout(model, body: list, joint: list, problems: list) -> None:
    """Each body's joints follow the previous body's and name it as their body, and the joints
    lay out their coordinates and velocities in order (as the compiler does); the first break of
    the layout is appended to ``problems`` (what follows it cannot be judged)."""
    expected, q, v = 0, 0, 0
    for i in range(model.nbody):
        start, count = int(model.body_jntadr[i]), int(model.body_jntnum[i])
        if count == 0:
            continue
        if count < 0 or start != expected or start + count > model.njnt:
            problems.append(f"body {body[i]!r} has joints {start} to {start + count - 1}, expected from {expected} "
                            f"within the model's {model.njnt} joints")
            return
        for j in range(start, start + count):
            kind = int(model.jnt_type[j])
            if kind not in (_FREE, _BALL, _SLIDE, _HINGE):
                problems.append(f"joint {joint[j]!r} has type {kind}, none of free, ball, slide or hinge (0 to 3)")
                return
            if int(model.jnt_bodyid[j]) != i:
                problems.append(f"joint {joint[j]!r} of body {body[i]!r} names body {int(model.jnt_bodyid[j])} as its own")
            if (int(model.jnt_qposadr[j]), int(model.jnt_dofadr[j])) != (q, v):
                problems.append(f"joint {joint[j]!r} has qposadr {int(model.jnt_qposadr[j])} and dofadr "
                                f"{int(model.jnt_dofadr[j])}, expected {q} and {v} (the joints in order)")
                return
            if j == start and int(model.body_dofadr[i]) != v:
                problems.append(f"body {body[i]!r} has dofadr {int(model.body_dofadr[i])}, expected {v}")
            q, v = q + _NQ[kind], v + _NV[kind]
        expected = start + count
    if expected != model.njnt or (q, v) != (model.nq, model.nv):
        problems.append(f"the bodies hold {expected} joints with {q} coordinates and {v} velocities, but the "
                        f"model has {model.njnt} joints, nq = {model.nq} and nv = {model.nv}")


def check_numbers(mujoco, model, names: dict) -> None:
    """:class:`~sko.errors.MJCFError` listing every number the loader reads that is NaN, or
    infinite where no bound is meant, and every zero quaternion (module docstring)."""
    problems = []

    def finite(kind: str, i: int, attribute: str, value, bounds: bool = False) -> None:
        x = np.asarray(value, dtype=float)
        if np.isnan(x).any() or not (bounds or np.isfinite(x).all()):
            shown = x.tolist() if x.ndim else float(x)
            problems.append(f"{kind} {names[kind][i]!r}: {attribute} = {shown} is {'NaN' if bounds else 'not finite'}")

    def rotation(i: int, attribute: str, quat) -> None:
        finite("body", i, attribute, quat)
        if np.isfinite(quat).all() and not np.any(quat):
            problems.append(f"body {names['body'][i]!r}: {attribute} = {np.asarray(quat).tolist()} is a zero quaternion")

    for i in range(1, model.nbody):
        finite("body", i, "pos", model.body_pos[i])
        rotation(i, "quat", model.body_quat[i])
        finite("body", i, "mass", model.body_mass[i])
        finite("body", i, "inertial pos", model.body_ipos[i])
        rotation(i, "inertial quat", model.body_iquat[i])
        finite("body", i, "diaginertia", model.body_inertia[i])
    for j in range(model.njnt):
        finite("joint", j, "pos", model.jnt_pos[j])
        finite("joint", j, "axis", model.jnt_axis[j])
        kind, adr = int(model.jnt_type[j]), int(model.jnt_qposadr[j])
        if kind in (_SLIDE, _HINGE):
            finite("joint", j, "ref (qpos0)", model.qpos0[adr])
            if model.jnt_limited[j]:
                finite("joint", j, "range", model.jnt_range[j], bounds=True)
            if model.jnt_actfrclimited[j]:
                finite("joint", j, "actuatorfrcrange", model.jnt_actfrcrange[j], bounds=True)
        dof = int(model.jnt_dofadr[j])
        finite("joint", j, "armature", model.dof_armature[dof: dof + _NV[kind]])
    for a in range(model.nu):
        finite("actuator", a, "gear", model.actuator_gear[a])
        finite("actuator", a, "armature", model.actuator_armature[a])
        finite("actuator", a, "gainprm", model.actuator_gainprm[a, 0])
        if model.actuator_ctrllimited[a]:
            finite("actuator", a, "ctrlrange", model.actuator_ctrlrange[a], bounds=True)
        if model.actuator_forcelimited[a]:
            finite("actuator", a, "forcerange", model.actuator_forcerange[a], bounds=True)
    for t in range(model.ntendon):
        for w in range(int(model.tendon_adr[t]), int(model.tendon_adr[t]) + int(model.tendon_num[t])):
            finite("tendon", t, "coef", model.wrap_prm[w])
        for attribute, value in (("stiffness", model.tendon_stiffness[t]), ("damping", model.tendon_damping[t]),
                                 ("springlength", model.tendon_lengthspring[t])):
            finite("tendon", t, attribute, value)
    if not np.isfinite(model.opt.gravity).all():
        problems.append(f"option gravity = {model.opt.gravity.tolist()} is not finite")
    if problems:
        raise MJCFError("the MJCF model has numbers the loader cannot use: " + "; ".join(problems))

"""URDF loader (RIGID.md, *Interoperability*), with ``defusedxml`` (no DTDs, no entities).

Rules:

* Links: ``<inertial>`` with ``<origin xyz rpy>`` (the centre-of-mass frame), ``<mass value>``
  and ``<inertia ixx ixy ixz iyy iyz izz>`` (about the centre of mass, in that frame). Each is
  judged by the link's own scale (:mod:`sko.inertia`): a negative mass is an error, and so are
  principal moments breaking the triangle inequality beyond a relative tolerance of the link's
  ``m r²``, unless ``inertia="repair"``, which replaces them by the nearest physical inertia and
  warns (:class:`~sko.inertia.InertiaRepairWarning`, listing every link and how much changed).
  Zero mass (or no ``<inertial>``) makes a massless link and zero rotational inertia a point
  mass: both are allowed, also as moving bodies (chains of massless links between joints);
  the articulated-body recursion reports a body whose ``D(k)`` is singular.
* Joints: ``revolute`` and ``continuous`` (:class:`Revolute`), ``prismatic``, ``fixed``
  (the child is merged into its parent and kept as a named frame), ``floating``
  (:class:`Free`), ``planar`` (:class:`Planar`, normal = axis). ``<origin>`` places the joint
  (and the child link frame) in the parent link frame; ``rpy`` is fixed-axis roll-pitch-yaw,
  ``R = R_z(yaw) R_y(pitch) R_x(roll)``; ``<axis>`` defaults to ``(1, 0, 0)``.
* The root link is the fixed base; with ``floating_base=True`` it becomes a body on a
  :class:`Free` joint named ``"root_joint"`` (``q = (w, x, y, z, p)``, ``ν = [ω; v]`` in the
  base frame).
* ``<limit lower upper velocity effort>`` of revolute, continuous (velocity and effort only) and
  prismatic joints is kept on the joint (:attr:`~sko.bodies.joints.Joint.limits`, and the
  system's ``lower_position_limit`` … ``effort_limit``); ``<dynamics>``, visual and collision
  data are ignored.
* ``<mimic joint multiplier offset>`` (``θ = multiplier θ_joint + offset``): with
  ``mimic="couple"`` (default) each mimic joint is coupled to its primary joint by constraint
  embedding (EMBEDDING.md; the system's ``q``, ``v``, ``tau`` hold the independent coordinates);
  with ``mimic="independent"`` every mimic joint is an independent joint. A ``<mimic>`` on a
  ``fixed`` joint is ignored (there is no coordinate to couple). An unknown or fixed primary
  joint, or mimic joints forming a cycle, is an error naming the joints.
* Anything the loader cannot represent without changing the model — closed
  loops, a link with two parent joints, several root links, unknown joint types, missing or
  malformed attributes, bad inertial data (above) — raises :class:`URDFError` naming the link or joint.
* A URDF whose links are all fixed to the root gives a system with no moving body (``nv = 0``).

Body names are link names; each body's joint carries the URDF joint name.
"""

from __future__ import annotations

import os
import warnings
import xml.etree.ElementTree as ET

import defusedxml
import defusedxml.ElementTree as SafeET

import numpy as np

from sko.inertia import (RTOL, InertiaRepairWarning, check_physical_inertia, inertia_violation, nearest_physical_inertia,
                         repair_description)
from sko.spatial import check_inertia_size, pose_transform, rpy_matrix, spatial_inertia

from sko.io.text import is_xml_text
from sko.systems.builder import SystemBuilder
from sko.errors import JointError, RigidSystemError, URDFError
from sko.graphs.errors import SKOError
from sko.bodies.joints import Fixed, Free, Planar, Prismatic, Revolute

__all__ = ["load_urdf", "parse_urdf"]

_JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
_INERTIA_MODES = ("strict", "repair")


def load_urdf(source, floating_base: bool = False, gravity=None, inertia: str = "strict", mimic: str = "couple"):
    """A :class:`~sko.systems.rigid.RigidSystem` from a URDF file or text.

    Parameters
    ----------
    source : str, bytes or path-like
        A file path, or the XML text itself (a str or bytes starting with ``<``, as
        :func:`parse_urdf` takes).
    floating_base : bool
        Put the root link on a free 6-dof joint named ``"root_joint"``.
    gravity : 3- or 6-vector, optional
        Default ``[0, 0, −9.81]``.
    inertia : {"strict", "repair"}
        ``"strict"`` rejects a link inertia no physical body has; ``"repair"`` replaces it by the
        nearest physical one (:func:`sko.inertia.nearest_physical_inertia`) and warns.
    mimic : {"couple", "independent"}
        Couple mimic joints to their primary joints (default) or make them independent.

    Raises
    ------
    URDFError
        Unreadable file, malformed XML or any unsupported feature (see the module docstring).

    Warns
    -----
    InertiaRepairWarning
        ``inertia="repair"`` changed some link inertias (each named, with the change).
    """
    if not isinstance(source, (str, bytes, os.PathLike)):
        raise URDFError(f"URDF source must be a path or the XML text, got {type(source).__name__}")
    if is_xml_text(source):
        text = source
    else:
        try:
            with open(os.fspath(source), "rb") as fh:
                text = fh.read()
        except (OSError, ValueError) as exc:  # ValueError: a path with a NUL byte
            raise URDFError(f"cannot read URDF file {os.fspath(source)!r}: {exc}") from None
    return parse_urdf(text, floating_base=floating_base, gravity=gravity, inertia=inertia, mimic=mimic)


def parse_urdf(text, floating_base: bool = False, gravity=None, inertia: str = "strict", mimic: str = "couple"):
    """Like :func:`load_urdf`, from the XML text (str or bytes)."""
    if inertia not in _INERTIA_MODES:
        raise URDFError(f"inertia must be one of {_INERTIA_MODES}, got {inertia!r}")
    if mimic not in ("couple", "independent"):
        raise URDFError(f"mimic must be 'couple' or 'independent', got {mimic!r}")
    if not isinstance(floating_base, (bool, np.bool_)):  # "no" is truthy: it would add a free joint
        raise URDFError(f"floating_base must be True or False, got {floating_base!r} ({type(floating_base).__name__})")
    if not isinstance(text, (str, bytes, bytearray)):
        raise URDFError(f"URDF text must be str or bytes, got {type(text).__name__}")
    try:  # no DTD, no entity: a URDF needs neither, and they are the vector of expansion attacks
        root = SafeET.fromstring(text, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except ET.ParseError as exc:
        raise URDFError(f"malformed URDF XML: {exc}") from None
    except defusedxml.DefusedXmlException as exc:
        raise URDFError(f"URDF XML with a DTD or entity declaration is rejected: {exc}") from None
    if root.tag != "robot":
        raise URDFError(f"URDF root element must be <robot>, got <{root.tag}>")

    links, repairs = {}, []
    for el in root.findall("link"):
        name = _attr(el, "name", "a <link>")
        if name in links:
            raise URDFError(f"link {name!r} is defined twice")
        links[name] = _inertia(el, name, repairs if inertia == "repair" else None)
    if not links:
        raise URDFError("the URDF has no <link>")
    if repairs:
        warnings.warn(InertiaRepairWarning(
            f"replaced {len(repairs)} link inertia{'s' if len(repairs) > 1 else ''} by the nearest physical one: "
            + "; ".join(repairs), repairs), stacklevel=3)

    joints, parent_of, children, mimics = {}, {}, {name: [] for name in links}, []
    for el in root.findall("joint"):
        name = _attr(el, "name", "a <joint>")
        if name in joints:
            raise URDFError(f"joint {name!r} is defined twice")
        joints[name] = el
        jtype = _attr(el, "type", f"joint {name!r}")
        if jtype not in _JOINT_TYPES:
            raise URDFError(f"joint {name!r} has unsupported type {jtype!r} (supported: {', '.join(_JOINT_TYPES)})")
        if el.find("mimic") is not None and jtype != "fixed" and mimic == "couple":
            mimics.append((name, el.find("mimic")))
        parent = _attr(_child(el, "parent", f"joint {name!r}"), "link", f"<parent> of joint {name!r}")
        child = _attr(_child(el, "child", f"joint {name!r}"), "link", f"<child> of joint {name!r}")
        for role, link in (("parent", parent), ("child", child)):
            if link not in links:
                raise URDFError(f"joint {name!r}: {role} link {link!r} is not defined")
        if child in parent_of:
            raise URDFError(f"link {child!r} has two parent joints ({parent_of[child]!r} and {name!r}): "
                            "closed kinematic loops are not supported")
        parent_of[child] = name
        children[parent].append((name, child))

    roots = [name for name in links if name not in parent_of]
    if len(roots) > 1:
        raise URDFError(f"the URDF has several root links {roots}: a robot must be a single tree")
    if not roots:
        raise URDFError("the URDF has no root link: its joints form a closed loop")
    base = roots[0]

    builder = SystemBuilder(gravity)
    reached = {base}
    stack = []
    if floating_base:
        if "root_joint" in joints:
            raise URDFError("floating_base=True adds a free joint named 'root_joint', and the URDF has a joint of "
                            "that name")
        builder.add_body(base, None, Free(name="root_joint"), inertia=links[base])
    else:
        builder.add_frame(base, None)
    stack.extend(reversed(children[base]))
    while stack:
        jname, child = stack.pop()
        reached.add(child)
        el = joints[jname]
        joint = _joint(el, jname)
        parent = _attr(_child(el, "parent", f"joint {jname!r}"), "link", f"<parent> of joint {jname!r}")
        try:
            builder.add_body(child, parent, joint, placement=_origin(el, f"joint {jname!r}"), inertia=links[child])
        except RigidSystemError as exc:
            raise URDFError(f"joint {jname!r} / link {child!r}: {exc}") from None
        stack.extend(reversed(children[child]))
    unreached = [name for name in links if name not in reached]
    if unreached:
        names = ", ".join(repr(name) for name in unreached)
        raise URDFError(f"link {names} not connected to the root link {base!r}: their joints form a closed loop")
    child_of = {joint: link for link, joint in parent_of.items()}  # a joint by the body it moves: a
    for jname, el in mimics:  # joint may have the name of another link
        primary = _attr(el, "joint", f"<mimic> of joint {jname!r}")
        if primary not in joints:
            raise URDFError(f"mimic joint {jname!r}: unknown primary joint {primary!r}")
        if joints[primary].get("type") == "fixed":
            raise URDFError(f"mimic joint {jname!r}: primary joint {primary!r} is fixed, it has no coordinate")
        ratio = _floats(el.get("multiplier"), 1, f"<mimic multiplier> of joint {jname!r}", [1.0])[0]
        offset = _floats(el.get("offset"), 1, f"<mimic offset> of joint {jname!r}", [0.0])[0]
        try:
            builder.add_coupling(f"mimic {jname}", child_of[primary], child_of[jname], ratio, offset)
        except RigidSystemError as exc:
            raise URDFError(f"mimic joint {jname!r}: {exc}") from None
    try:
        return builder.build()
    except (RigidSystemError, SKOError) as exc:
        if isinstance(exc, URDFError):
            raise
        raise URDFError(str(exc)) from None


def _attr(el, key: str, where: str) -> str:
    value = el.get(key)
    if value is None or value == "":
        raise URDFError(f"{where} is missing the attribute {key!r}")
    return value


def _child(el, tag: str, where: str):
    found = el.find(tag)
    if found is None:
        raise URDFError(f"{where} is missing the element <{tag}>")
    return found


def _floats(text: str | None, n: int, where: str, default) -> np.ndarray:
    if text is None:
        return np.array(default, dtype=float)
    try:
        values = np.array([float(x) for x in text.split()])
    except ValueError:
        raise URDFError(f"{where}: expected {n} numbers, got {text!r}") from None
    if values.shape != (n,) or not np.isfinite(values).all():
        raise URDFError(f"{where}: expected {n} finite numbers, got {text!r}")
    return values


def _origin(el, where: str) -> np.ndarray:
    """Plücker transform from the parent frame to the frame given by ``<origin xyz rpy>``."""
    origin = el.find("origin")
    if origin is None:
        return np.eye(6)
    xyz = _floats(origin.get("xyz"), 3, f"{where} <origin xyz>", [0, 0, 0])
    rpy = _floats(origin.get("rpy"), 3, f"{where} <origin rpy>", [0, 0, 0])
    return pose_transform(xyz, rpy)


def _inertia(link, name: str, repairs: list | None) -> np.ndarray:
    """Spatial inertia of a link about its frame origin (zero without ``<inertial>``). With a list
    ``repairs``, an unphysical rotational inertia is projected and the change appended to it."""
    inertial = link.find("inertial")
    if inertial is None:
        return np.zeros((6, 6))
    where = f"link {name!r}"
    mass_el = _child(inertial, "mass", f"<inertial> of {where}")
    mass = _floats(_attr(mass_el, "value", f"<mass> of {where}"), 1, f"<mass> of {where}", None)[0]
    if mass < 0:
        raise URDFError(f"{where} has negative mass {mass}")
    inertia_el = _child(inertial, "inertia", f"<inertial> of {where}")
    keys = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
    ixx, ixy, ixz, iyy, iyz, izz = (
        _floats(_attr(inertia_el, k, f"<inertia> of {where}"), 1, f"<inertia {k}> of {where}", None)[0] for k in keys)
    Ic = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    origin = inertial.find("origin")
    xyz = _floats(None if origin is None else origin.get("xyz"), 3, f"{where} <inertial><origin xyz>", [0, 0, 0])
    rpy = _floats(None if origin is None else origin.get("rpy"), 3, f"{where} <inertial><origin rpy>", [0, 0, 0])
    if repairs is not None and inertia_violation(mass, xyz, Ic) > RTOL:
        fixed = nearest_physical_inertia(Ic)
        repairs.append(repair_description(f"link {name!r}", Ic, fixed))
        Ic = fixed
    check_physical_inertia(mass, xyz, Ic, where, URDFError)
    R = rpy_matrix(*rpy)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is named below
        I6 = spatial_inertia(mass, xyz, R @ Ic @ R.T)
    check_inertia_size(I6, f"{where}: its spatial inertia (mass {mass:.3g}, rotational inertia up to "
                           f"{np.abs(Ic).max():.3g}, centre of mass {xyz.tolist()})", URDFError)
    return I6


def _joint(el, name: str):
    jtype = el.get("type")
    if jtype == "fixed":
        return Fixed(name=name)
    if jtype == "floating":
        return Free(name=name)
    axis_el = el.find("axis")
    axis = _floats(None if axis_el is None else axis_el.get("xyz"), 3, f"joint {name!r} <axis xyz>", [1, 0, 0])
    if not np.abs(axis).max() > 0:
        raise URDFError(f"joint {name!r} has a zero axis")
    if jtype in ("revolute", "continuous"):
        return _limited(Revolute(axis, name=name), el, name, bounded=jtype == "revolute")
    if jtype == "prismatic":
        return _limited(Prismatic(axis, name=name), el, name, bounded=True)
    return Planar(axis, name=name)


def _limited(joint, el, name: str, bounded: bool):
    """The joint with the ``<limit lower upper velocity effort>`` of its element (lower and
    upper default to 0 as in the URDF specification, and are ignored on continuous joints;
    velocity and effort default to unbounded)."""
    limit = el.find("limit")
    if limit is None:
        return joint
    where = f"<limit> of joint {name!r}"
    value = {key: _floats(limit.get(key), 1, f"{where} {key}", [default])[0]
             for key, default in (("lower", 0.0), ("upper", 0.0), ("velocity", np.inf), ("effort", np.inf))}
    if not bounded:
        value["lower"], value["upper"] = -np.inf, np.inf
    try:
        return joint.with_limits(**value)
    except JointError as exc:
        raise URDFError(f"{where}: {exc}") from None

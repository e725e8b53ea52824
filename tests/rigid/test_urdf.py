"""The URDF loader: semantics on small hand-written files and every rejection path."""

import numpy as np
import pytest

from sko import spatial as sp
from sko.bodies import Free, Planar, Prismatic, Revolute
from sko.errors import URDFError
from sko.io.urdf import load_urdf, parse_urdf
from tests.util import assert_close

INERTIAL = """<inertial><origin xyz="{xyz}" rpy="{rpy}"/><mass value="{mass}"/>
  <inertia ixx="{ixx}" ixy="0.01" ixz="0" iyy="0.3" iyz="0" izz="0.4"/></inertial>"""


def link(name, mass=1.0, xyz="0 0 0", rpy="0 0 0", ixx=0.2):
    return f'<link name="{name}">{INERTIAL.format(xyz=xyz, rpy=rpy, mass=mass, ixx=ixx)}</link>'


def joint(name, jtype, parent, child, xyz="0 0 0", rpy="0 0 0", axis="0 0 1", extra=""):
    return (f'<joint name="{name}" type="{jtype}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}" rpy="{rpy}"/><axis xyz="{axis}"/>{extra}</joint>')


def robot(*parts):
    return '<robot name="test">' + "".join(parts) + "</robot>"


ARM = robot(
    '<link name="world"/>',
    link("base", xyz="0 0 0.1"),
    joint("anchor", "fixed", "world", "base", xyz="0 0 0.5"),
    link("upper", xyz="0.1 0.2 0.3", rpy="0.3 -0.2 0.5"),
    joint("shoulder", "revolute", "base", "upper", xyz="0 0 0.2", rpy="0.1 0.2 0.3", axis="0 1 0"),
    link("lower"),
    joint("elbow", "continuous", "upper", "lower", xyz="0.5 0 0", axis="1 1 0"),
    link("slider"),
    joint("slide", "prismatic", "lower", "slider", xyz="0.3 0 0", axis="0 0 1"),
    '<link name="tool"/>',
    joint("tool_mount", "fixed", "slider", "tool", xyz="0 0 0.1"),
)


def test_arm_semantics():
    system = parse_urdf(ARM)
    assert system.bodies == ("upper", "lower", "slider")
    kinds = [type(system.body_joint(k)) for k in system.bodies]
    assert kinds == [Revolute, Revolute, Prismatic]
    assert system.joint_names() == {"shoulder": "upper", "elbow": "lower", "slide": "slider"}
    # rpy is fixed-axis roll-pitch-yaw; the base link is fixed 0.5 above the world
    X_T = system.body("upper").placement
    assert_close(sp.plucker_rotation(X_T).T, sp.rpy_matrix(0.1, 0.2, 0.3), 1e-15)
    assert_close(sp.plucker_translation(X_T), [0, 0, 0.7], 1e-15)
    assert_close(system.body_joint("lower").axis, np.array([1, 1, 0]) / np.sqrt(2), 1e-15)
    # inertial origin: centre of mass at xyz, rotational inertia rotated by rpy
    m, c, Ic = sp.inertia_parameters(system.body("upper").inertia)
    R = sp.rpy_matrix(0.3, -0.2, 0.5)
    assert np.isclose(m, 1.0) and np.allclose(c, [0.1, 0.2, 0.3])
    assert_close(Ic, R @ np.array([[0.2, 0.01, 0], [0.01, 0.3, 0], [0, 0, 0.4]]) @ R.T, 1e-14)
    # fixed links become frames; the tool is massless
    assert system.frames["tool"].body == "slider" and system.frames["world"].body is None
    assert system.frames["base"].body is None
    T = system.frame_pose(np.zeros(3), "tool")
    assert_close(T[:3, 3], sp.rpy_matrix(0.1, 0.2, 0.3) @ [0.8, 0, 0.1] + [0, 0, 0.7], 1e-14)


def test_floating_base_and_merging(tmp_path):
    path = tmp_path / "arm.urdf"
    path.write_text(ARM)
    system = load_urdf(path, floating_base=True)
    assert system.bodies[0] == "world" and isinstance(system.body_joint("world"), Free)
    assert system.body_joint("world").name == "root_joint"
    # the base link (1 kg) is merged into the massless world link through the fixed joint
    assert np.isclose(system.body("world").inertia[5, 5], 1.0)
    assert (system.nq, system.nv) == (10, 9)
    assert system.total_mass == pytest.approx(4.0)


def test_planar_and_floating_joint_types():
    system = parse_urdf(robot(
        link("base"), link("puck"), link("drone"),
        joint("glide", "planar", "base", "puck", axis="0 0 1"),
        joint("fly", "floating", "base", "drone"),
    ))
    assert isinstance(system.body_joint("puck"), Planar) and isinstance(system.body_joint("drone"), Free)
    assert (system.nq, system.nv) == (10, 9)


def test_axis_default_is_x():
    text = robot(link("a"), link("b"), '<joint name="j" type="revolute"><parent link="a"/><child link="b"/></joint>')
    assert_close(parse_urdf(text).body_joint("b").axis, [1, 0, 0], 0, scale=1.0)


BAD = {
    "mimic": (robot(link("a"), link("b"), link("c"), joint("j1", "revolute", "a", "b"),
                    joint("j2", "revolute", "a", "c", extra='<mimic joint="j9"/>')), "'j2': unknown primary joint 'j9'"),
    "two_parents": (robot(link("a"), link("b"), link("c"), joint("j1", "revolute", "a", "b"), joint("j2", "revolute", "a", "c"),
                          joint("j3", "revolute", "b", "c")), "link 'c' has two parent joints"),
    "cycle": (robot(link("a"), link("b"), link("c"), joint("j1", "revolute", "a", "b"), joint("j2", "revolute", "c", "c")),
              "link 'c'"),
    "loop_no_root": (robot(link("a"), link("b"), joint("j1", "revolute", "a", "b"), joint("j2", "revolute", "b", "a")),
                     "closed loop"),
    "detached_loop": (robot(link("r"), link("a"), link("b"), joint("j1", "revolute", "a", "b"),
                            joint("j2", "revolute", "b", "a")), "several root|closed loop"),
    "several_roots": (robot(link("a"), link("b")), "several root links"),
    "unknown_type": (robot(link("a"), link("b"), joint("j", "ball", "a", "b")), "joint 'j' has unsupported type 'ball'"),
    "missing_type": (robot(link("a"), link("b"), '<joint name="j"><parent link="a"/><child link="b"/></joint>'),
                     "joint 'j' is missing the attribute 'type'"),
    "missing_name": (robot(link("a"), '<link/>'), "missing the attribute 'name'"),
    "missing_child": (robot(link("a"), '<joint name="j" type="fixed"><parent link="a"/></joint>'),
                      "joint 'j' is missing the element <child>"),
    "unknown_link": (robot(link("a"), joint("j", "fixed", "a", "ghost")), "child link 'ghost' is not defined"),
    "duplicate_link": (robot(link("a"), link("a")), "link 'a' is defined twice"),
    "duplicate_joint": (robot(link("a"), link("b"), link("c"), joint("j", "fixed", "a", "b"), joint("j", "fixed", "a", "c")),
                        "joint 'j' is defined twice"),
    "negative_mass": (robot(link("a"), link("b", mass=-1.0), joint("j", "revolute", "a", "b")), "link 'b' has negative mass"),
    "missing_mass_value": (robot(link("a"), '<link name="b"><inertial><mass/></inertial></link>', joint("j", "revolute", "a", "b")),
                           "<mass> of link 'b' is missing the attribute 'value'"),
    "missing_inertia": (robot(link("a"), '<link name="b"><inertial><mass value="1"/></inertial></link>',
                              joint("j", "revolute", "a", "b")), "missing the element <inertia>"),
    "non_psd_inertia": (robot(link("a"), link("b", ixx=-0.5), joint("j", "revolute", "a", "b")),
                        "link 'b': rotational inertia is not positive semidefinite"),
    "bad_numbers": (robot(link("a"), link("b", xyz="0 zero 0"), joint("j", "revolute", "a", "b")), "expected 3 numbers"),
    "short_origin": (robot(link("a"), link("b"), joint("j", "revolute", "a", "b", xyz="0 0")), "joint 'j' <origin xyz>"),
    "zero_axis": (robot(link("a"), link("b"), joint("j", "revolute", "a", "b", axis="0 0 0")), "joint 'j' has a zero axis"),
    "no_links": (robot(), "no <link>"),
    "not_robot": ("<model/>", "must be <robot>"),
    "malformed": ("<robot><link name='a'></robot>", "malformed URDF XML"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_rejections(case):
    text, match = BAD[case]
    with pytest.raises(URDFError, match=match):
        parse_urdf(text)


def test_missing_file(tmp_path):
    with pytest.raises(URDFError, match="cannot read"):
        load_urdf(tmp_path / "none.urdf")


def test_a_mimic_names_its_primary_joint_when_another_link_has_that_name():
    """Joint 'A' moves link 'B', and a link is named 'A': the mimic follows joint 'A'."""
    text = robot(link("base"), link("A"), link("B"), link("C"), joint("shoulder", "continuous", "base", "A"),
                 joint("A", "continuous", "A", "B", xyz="0.3 0 0", axis="0 1 0"),
                 joint("jc", "continuous", "B", "C", xyz="0.3 0 0", axis="0 1 0",
                       extra='<mimic joint="A" multiplier="2.0" offset="0.1"/>'))
    system = parse_urdf(text)
    positions = system.joint_positions(np.array([0.3, 0.5]))
    assert_close(positions["C"], [2.0 * positions["B"][0] + 0.1], 1e-15)


def test_a_floating_base_beside_a_joint_named_root_joint_is_refused():
    text = robot(link("a"), link("b"), joint("root_joint", "revolute", "a", "b"))
    assert parse_urdf(text).nv == 1
    with pytest.raises(URDFError, match="'root_joint'"):
        parse_urdf(text, floating_base=True)


@pytest.mark.parametrize("encode", [str, lambda t: t.encode(), lambda t: t[1:].encode("utf-16"),  # its own mark
                                    lambda t: t.encode("utf-16-be")], ids=["str", "utf-8", "utf-16", "utf-16-be"])
def test_text_with_a_byte_order_mark_is_read_as_text(encode, tmp_path):
    """UTF-16 text (its byte-order mark first) was taken for a path, quoted whole in the error."""
    text = "\ufeff" + ARM
    assert load_urdf(encode(text)).bodies == ("upper", "lower", "slider")
    path = tmp_path / "arm.urdf"
    path.write_text(text, encoding="utf-8")
    assert load_urdf(path).bodies == ("upper", "lower", "slider")


@pytest.mark.parametrize("value", ["no", "yes", 1, None, np.array([True, False])])
def test_floating_base_is_true_or_false(value):
    """``floating_base="no"`` loaded a floating base (any truthy value did), an array raised
    numpy's ValueError."""
    with pytest.raises(URDFError, match=r"floating_base must be True or False, got"):
        parse_urdf(ARM, floating_base=value)
    assert parse_urdf(ARM, floating_base=np.bool_(True)).nq == parse_urdf(ARM).nq + 7


_HUGE_INERTIA = ('<link name="b"><inertial><mass value="1"/><inertia ixx="1e308" ixy="0" ixz="0" iyy="1e308" iyz="0" '
                 'izz="1e308"/></inertial></link>')


@pytest.mark.parametrize("b, named", [
    (link("b", mass="1e308"), r"link 'b': its spatial inertia \(mass 1e\+308, .*\) has an entry of size 1e\+308"),
    (link("b", mass="1e200", xyz="1e60 0 0"), r"link 'b': its spatial inertia \(mass 1e\+200, .*centre of mass "
                                              r"\[1e\+60, 0.0, 0.0\]\) has an entry of size inf"),
    (_HUGE_INERTIA, r"link 'b': its spatial inertia \(mass 1, rotational inertia up to 1e\+308, .*\) has an entry of size 1e\+308"),
])
def test_an_inertia_whose_products_overflow_is_refused_at_load(b, named):
    """A link of mass 1e308 loaded, and then every call overflowed (its weight m g is beyond the
    floating-point range), blaming the state; its spatial inertia is refused where it is read,
    naming the link and its numbers, as a placement too far away is. 1e200 still loads."""
    bad = robot(link("a"), b, joint("j", "revolute", "a", "b"))
    with pytest.raises(URDFError, match=named + r": products with .* would overflow the floating-point range"):
        parse_urdf(bad)
    system = load_urdf(robot(link("a"), link("b", mass="1e200"), joint("j", "revolute", "a", "b")))
    assert np.isfinite(system.forward_dynamics([0.3], [1.0], [0.0])).all()

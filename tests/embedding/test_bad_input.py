"""Bad couplings and loops get the project's own errors naming the joints or the loop."""

from __future__ import annotations

import numpy as np
import pytest

from sko.bodies import Cylindrical, Prismatic, Revolute, Spherical
from sko.bodies.cluster import ClusterError, LoopClosureError
from sko.errors import RigidSystemError, URDFError
from sko.examples.embedding import four_bar
from sko.graphs.errors import SKOError
from sko.io.urdf import parse_urdf
from sko.spatial import pose_transform
from sko.systems import SystemBuilder

LINK = '<link name="{0}"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>'


def _urdf(joints: str, links=("base", "a", "b", "c")) -> str:
    return f'<robot name="r">{"".join(LINK.format(k) for k in links)}{joints}</robot>'


def _joint(name, parent, child, kind="revolute", mimic=""):
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="0.1 0 0"/><axis xyz="0 0 1"/>{mimic}</joint>')


def _chain(n=3):
    b = SystemBuilder()
    for i in range(n):
        b.add_body(f"l{i}", None if i == 0 else f"l{i - 1}", Revolute([0, 0, 1], name=f"j{i}"),
                   placement=None if i == 0 else pose_transform([1.0, 0, 0]), mass=1.0, com=[0.5, 0, 0],
                   inertia_com=0.01 * np.eye(3))
    return b


def test_unknown_primary_joint_is_named():
    text = _urdf(_joint("ja", "base", "a") + _joint("jb", "base", "b", mimic='<mimic joint="nope"/>') + _joint("jc", "b", "c"))
    with pytest.raises(URDFError, match="'jb'.*'nope'"):
        parse_urdf(text)
    b = _chain()
    with pytest.raises(RigidSystemError, match="unknown joint 'nope'"):
        b.add_coupling("gear", "nope", "j1")


def test_mimic_on_a_fixed_joint_is_ignored_and_independent_frees_mimics():
    fixed = _urdf(_joint("ja", "base", "a") + _joint("jb", "a", "b", "fixed", '<mimic joint="ja"/>') + _joint("jc", "b", "c"))
    assert parse_urdf(fixed).nv == 2
    coupled = _urdf(_joint("ja", "base", "a") + _joint("jb", "base", "b", mimic='<mimic joint="ja" multiplier="2" offset="0.1"/>')
                    + _joint("jc", "b", "c"))
    system = parse_urdf(coupled)
    assert system.nv == 2 and parse_urdf(coupled, mimic="independent").nv == 3
    q = np.array([0.3, -0.2])
    theta = system.joint_positions(q)
    assert np.isclose(theta["b"][0], 2 * theta["a"][0] + 0.1)
    with pytest.raises(URDFError, match="mimic must be"):
        parse_urdf(coupled, mimic="yes")


def test_mimic_cycle_is_named():
    text = _urdf(_joint("ja", "base", "a", mimic='<mimic joint="jb"/>') + _joint("jb", "base", "b", mimic='<mimic joint="ja"/>')
                 + _joint("jc", "b", "c"))
    with pytest.raises(URDFError, match="cycle"):
        parse_urdf(text)


def test_coupling_between_joints_of_different_dimensions_is_named():
    b = _chain(2)
    b.add_body("sleeve", "l1", Cylindrical([1, 0, 0], name="sleeve_joint"), mass=1.0, inertia_com=0.01 * np.eye(3))
    b.add_coupling("bad", "j0", "sleeve_joint")
    with pytest.raises(SKOError, match="'bad'"):
        b.build()


def test_loop_between_unknown_bodies_is_named():
    b = _chain()
    with pytest.raises(RigidSystemError, match="loop 'knee'.*'ghost'"):
        b.add_loop_joint("knee", "l2", "ghost", Revolute([0, 0, 1]))


def test_redundant_loop_is_named():
    b = SystemBuilder()
    b.add_body("slider", None, Prismatic([1, 0, 0]), mass=1.0, inertia_com=0.01 * np.eye(3))
    b.add_loop_joint("rail", None, "slider", Prismatic([1, 0, 0]))
    with pytest.raises(ClusterError, match="'rail'"):
        b.build()


def test_over_constrained_loop_is_named():
    b = _chain(2)
    b.add_loop_joint("weld", None, "l1", Spherical(), placement_successor=pose_transform([1.0, 0, 0]),
                     placement_predecessor=pose_transform([2.0, 0, 0]))
    with pytest.raises(ClusterError, match="over-constrained|redundant|singular"):
        b.build(independent=["l0", "l1"])


def test_loop_that_cannot_close_is_named():
    b = _chain(2)
    b.add_loop_joint("far", None, "l1", Spherical(), placement_predecessor=pose_transform([5.0, 0, 0]))
    with pytest.raises(LoopClosureError, match="'far'"):
        b.build()


def test_rocker_driven_four_bar_raises_at_the_dead_point_and_where_it_cannot_close():
    """EMBEDDING.md §5 (b): at π/2 crank and coupler are aligned (singular K_dep); at 1.4 rad the
    loop does not close."""
    system = four_bar(angle=2.0, driver="rocker")
    cluster = system._body[system.bodies[0]]
    cluster.closed_coordinates(np.array([2.0]))
    for angle in (np.pi / 2, 1.4):
        with pytest.raises(LoopClosureError, match="'knee'"):
            cluster.closed_coordinates(np.array([angle]))
        cluster.closed_coordinates(np.array([2.0]))


def _two_coupled(ratio):
    b = SystemBuilder()
    for name, parent in (("x", None), ("y", "x")):
        b.add_body(name, parent, Revolute(), pose_transform([0.5, 0.0, 0.0]), mass=1.0, com=[0.2, 0.0, 0.0],
                   inertia_com=np.eye(3) * 0.1)
    b.add_coupling("k", "x", "y", ratio)
    return b.build()


@pytest.mark.parametrize("backend", ["compiled", "reference"])
def test_an_overflow_from_a_huge_coupling_ratio_names_the_coupling(backend):
    from sko.engine import use_backend
    from sko.graphs.errors import NonFiniteError

    system = _two_coupled(1e300)
    with use_backend(backend):
        for call in (lambda: system.forward_dynamics([0.3], [1.0]), lambda: system.inverse_dynamics([0.3], [1.0]),
                     lambda: system.mass_matrix([0.3]), lambda: system.mass_matrix_inverse([0.3])):
            with pytest.raises(NonFiniteError, match=r"coupling 'k' \(ratio 1e\+300"):
                call()


def test_a_cycle_of_couplings_names_the_couplings():
    b = _chain(3)
    b.add_coupling("k1", "j0", "j1", 0.5)
    b.add_coupling("k2", "j1", "j2", 0.5)
    b.add_coupling("k3", "j2", "j0", 0.5)
    with pytest.raises(ClusterError, match=r"couplings ('k\d', ){2}'k\d' form a cycle.*joints 'j\d', 'j\d', 'j\d'"):
        b.build()

"""Example systems with coupled joints and closed loops (EMBEDDING.md §5).

* :func:`mimic_gripper` — a wrist with two prismatic fingers, the second a mimic of the first
  (``θ_f2 = 0.8 θ_f1 + 0.005``), a tip body on the second finger (example a).
* :func:`four_bar` — a planar four-bar linkage in a vertical plane, driven by its crank
  (example b): one cluster node of three bodies, one independent coordinate.
* :func:`four_bar_chain` — ``k`` four-bars in series, each hanging from the previous rocker.

Masses and inertias are plausible, not those of a real product.

>>> system = four_bar()
>>> system.nq, system.clusters()
(1, {'crank': ('crank', 'coupler', 'rocker')})
"""

from __future__ import annotations

import numpy as np

from sko.bodies.joints import Prismatic, Revolute
from sko.model import SKOModel
from sko.spatial import pose_transform
from sko.systems.builder import SystemBuilder

__all__ = ["mimic_gripper", "four_bar", "four_bar_chain"]


def _bar(b: SystemBuilder, name, parent, length, placement=None, mass=1.0):
    """A slender bar along x about z, of ``length``, from its joint."""
    inertia = np.diag([1e-3, mass * length**2 / 12, mass * length**2 / 12 + 1e-3])
    return b.add_body(name, parent, Revolute([0, 0, 1]), placement=placement, mass=mass, com=[length / 2, 0, 0],
                      inertia_com=inertia)


def mimic_gripper():
    """Link → hand (revolute) → two prismatic fingers along ±y, coupled by a mimic joint."""
    b = SystemBuilder()
    b.add_body("link", None, Revolute([0, 0, 1], name="shoulder"), mass=2.0, com=[0.25, 0, 0],
               inertia_com=np.diag([0.01, 0.05, 0.05]))
    b.add_body("hand", "link", Revolute([0, 1, 0], name="wrist"), placement=pose_transform([0.5, 0, 0]), mass=0.5,
               com=[0.05, 0, 0], inertia_com=np.diag([1e-3, 1e-3, 1e-3]))
    b.add_body("finger1", "hand", Prismatic([0, 1, 0], name="finger1_joint"), placement=pose_transform([0.1, 0.02, 0]),
               mass=0.1, com=[0.02, 0.01, 0], inertia_com=1e-4 * np.eye(3))
    b.add_body("finger2", "hand", Prismatic([0, -1, 0], name="finger2_joint"), placement=pose_transform([0.1, -0.02, 0]),
               mass=0.1, com=[0.02, -0.01, 0], inertia_com=1e-4 * np.eye(3))
    b.add_body("tip", "finger2", Revolute([1, 0, 0], name="tip_joint"), placement=pose_transform([0.04, 0, 0]),
               mass=0.02, com=[0.01, 0, 0], inertia_com=1e-5 * np.eye(3))
    b.add_coupling("finger_mimic", "finger1_joint", "finger2_joint", ratio=0.8, offset=0.005)
    return b.build()


def four_bar(crank=0.5, coupler=1.5, rocker=1.5, ground=2.0, angle=1.0, gravity=(0.0, -9.81, 0.0), driver="crank"):
    """A four-bar in the x–y plane (gravity along −y): crank pinned at the origin, rocker to the
    ground at ``(ground, 0, 0)``, the loop cut between the coupler's end and the rocker's end.
    The ``driver`` (``"crank"`` or ``"rocker"``, the independent coordinate) starts at ``angle``;
    the guess picks the elbow-up branch (``build`` assembles the loop without one too)."""
    b = SystemBuilder(gravity)
    _bar(b, "crank", None, crank, mass=0.5)
    _bar(b, "coupler", "crank", coupler, placement=pose_transform([crank, 0, 0]), mass=1.0)
    _bar(b, "rocker", None, rocker, placement=pose_transform([ground, 0, 0]), mass=1.2)
    b.add_loop_joint("knee", "coupler", "rocker", Revolute([0, 0, 1]), placement_predecessor=pose_transform([coupler, 0, 0]),
                     placement_successor=pose_transform([rocker, 0, 0]))
    guess = {"crank": [angle], "coupler": [0.0], "rocker": [angle + 1.0]} if driver == "crank" else \
        {"crank": [angle - 1.0], "coupler": [0.0], "rocker": [angle]}
    return b.build(independent=[driver], initial=guess)


def four_bar_chain(k: int, gravity=(0.0, -9.81, 0.0)):
    """``k`` four-bars in series: the ``i``-th one's ground is the previous rocker (an x–y planar
    mechanism with ``k`` cluster nodes of three bodies, ``k`` independent coordinates)."""
    b = SystemBuilder(gravity)
    parent, initial = None, {}
    for i in range(k):
        crank, coupler, rocker = f"crank{i}", f"coupler{i}", f"rocker{i}"
        base = None if parent is None else pose_transform([0.5, 0, 0])
        _bar(b, crank, parent, 0.5, placement=base, mass=0.5)
        _bar(b, coupler, crank, 1.5, placement=pose_transform([0.5, 0, 0]), mass=1.0)
        rocker_base = pose_transform([2.0, 0, 0]) if parent is None else pose_transform([2.5, 0, 0])
        _bar(b, rocker, parent, 1.5, placement=rocker_base, mass=1.2)
        b.add_loop_joint(f"knee{i}", coupler, rocker, Revolute([0, 0, 1]), placement_predecessor=pose_transform([1.5, 0, 0]),
                         placement_successor=pose_transform([1.5, 0, 0]))
        initial.update({crank: [1.0], coupler: [0.0], rocker: [2.0]})
        parent = rocker
    return b.build(independent=[f"crank{i}" for i in range(k)], initial=initial)


def symbolic_gripper():
    """``(model, a, b)`` of a hand on a slider with two prismatic fingers coupled by
    ``θ_f2 = θ_f1/2 + 1/4``, at a symbolic state ``(q1, q2)``, ``(v1, v2)`` (sympy). Every
    parameter is a dyadic rational, exact in binary, so the identities cancel exactly."""
    import sympy

    b = SystemBuilder(gravity=(0.0, 0.0, -8.0))
    b.add_body("hand", None, Prismatic([1, 0, 0]), mass=1.0, com=[0.5, 0, 0], inertia_com=np.diag([0.25, 0.25, 0.125]))
    b.add_body("finger1", "hand", Prismatic([0, 1, 0]), mass=0.5, com=[0.25, 0, 0], inertia_com=np.eye(3) / 8)
    b.add_body("finger2", "hand", Prismatic([0, -1, 0]), mass=0.5, com=[0.25, 0, 0], inertia_com=np.eye(3) / 8)
    b.add_coupling("finger_mimic", "finger1", "finger2", ratio=0.5, offset=0.25)
    system = b.build()
    q = np.array(sympy.symbols("q1 q2"), dtype=object)
    v = np.array(sympy.symbols("v1 v2"), dtype=object)
    model, a, b = system.sko_model(q, v)
    exact = np.vectorize(lambda e: sympy.nsimplify(e, rational=True), otypes=[object])  # dyadic floats, exactly
    return (SKOModel(model.tree, phi={k: exact(w) for k, w in model.phi.items()}, H={k: exact(h) for k, h in model.H.items()},
                     M={k: exact(m) for k, m in model.M.items()}), exact(a), exact(b))


def verify_systems() -> dict:
    """``{name: system factory}`` of the cluster examples for ``python -m sko verify``."""
    return {"mimic-gripper": mimic_gripper, "four-bar": four_bar, "four-bar-chain": lambda: four_bar_chain(3)}

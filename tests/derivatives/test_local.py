"""The local recursion of DERIVATIVES.md §9 (``method="local"``, :mod:`sko.systems.body_derivatives`)
against the complex step of the whole inverse dynamics, on random trees of every body kind:
flexible bodies (children on their modal nodes), geared rotors, clusters (couplings and loop
closures), researchers' own body types (with and without a compiled state, with a hinge spring),
tendons; forward dynamics through Eq. 3; batches; the errors."""

from __future__ import annotations

from functools import cached_property

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from numba import njit

from papers import tutorial_body_type, tutorial_body_with_children
from sko.bodies import CompiledState, Free, NodeState, Revolute, RigidBody, Spherical
from sko.engine import state_kernel, views
from sko.engine.local_derivatives import Plan
from sko.engine.state_kernels import Terms
from sko.examples.bodies import flexible_examples, random_system
from sko.graphs.errors import SKOError
from sko.spatial import spatial_inertia
from sko.systems import MultibodySystem
from sko.systems.multibody import fixed_tendon
from tests.bodies.helpers import random_state
from tests.embedding.random_clusters import drawn_clustered_system

RTOL = 1e-10


def _relative(actual, expected, scale: float) -> float:
    """The largest difference relative to ``|expected|``, or to ``1e-3 scale`` where the matrix is
    (structurally) zero to rounding."""
    return float(np.abs(actual - expected).max(initial=0.0) / max(np.abs(expected).max(initial=0.0), 1e-3 * scale))


def _agree(system, seed: int, norms: dict[str, float] | None = None) -> None:
    """Both derivatives of inverse and forward dynamics, local recursion against the whole
    complex step, at a random state with sizeable deformations; the (unit) quaternions of the
    bodies named in ``norms`` scaled to those norms."""
    rng = np.random.default_rng(seed)
    q, v = random_state(system, rng)
    for name, norm in (norms or {}).items():
        q[system.q_slices[name].start: system.q_slices[name].start + 4] *= norm
    a, tau = rng.standard_normal((2, system.nv))
    for function, x in ((system.inverse_dynamics_derivatives, a), (system.forward_dynamics_derivatives, tau)):
        local = function(q, v, x, method="local")
        reference = function(q, v, x, method="complex_step")
        scale = max(np.abs(y).max(initial=1e-300) for y in reference)
        for got, expected in zip(local, reference):
            assert got.shape == expected.shape
            assert _relative(got, expected, scale) < RTOL


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 8), shape=st.sampled_from(["chain", "fan", "random", "forest"]))
def test_random_trees_of_flexible_bodies_rotors_and_rigid_bodies(seed, n, shape):
    _agree(random_system(seed, n_bodies=n, shape=shape), seed)


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**16))
@example(seed=1792)  # a loop that cannot be closed near its initial configuration
def test_random_clusters(seed):
    _agree(drawn_clustered_system(seed), seed)


@pytest.mark.parametrize("name", sorted(flexible_examples()))
def test_the_built_in_flexible_and_rotor_systems(name):
    _agree(flexible_examples()[name](), 5)


class PythonBead(tutorial_body_type.Bead):
    """The tutorial's bead without its compiled state: its ``at_state`` runs in Python."""

    def compiled_state(self):
        return None


def _python_beads(system: MultibodySystem) -> MultibodySystem:
    bodies = [system.body(k) for k in system.bodies]
    return MultibodySystem([PythonBead(b.name, b.parent, b.mass, b.start, b.direction, b.spring, attach=b.attach)
                            if isinstance(b, tutorial_body_type.Bead) else b for b in bodies], gravity=system.gravity)


@pytest.mark.parametrize("make", [tutorial_body_type.build, tutorial_body_with_children.build,
                                  lambda: _python_beads(tutorial_body_type.build())],
                         ids=["bead (compiled state, hinge spring)", "arm with carriage", "bead in Python"])
@pytest.mark.parametrize("seed", [0, 1])
def test_researchers_own_body_types(make, seed):
    _agree(make(), seed)


@njit
def _bead(arena, row, reals, structure, motion):
    """The tutorial's bead (:func:`papers.tutorial_body_type.bead_state`), writing ``E``, ``H``,
    ``M`` only with ``structure`` and ``a``, ``b``, ``V`` only with ``motion`` (zero otherwise);
    ``u`` reads ``E`` from the arena, so a call that skips ``E`` reads the last one's."""
    c, q, v, inboard, out, _ = views(arena, row, reals)
    s, sd, w = q[0], v[0], inboard.velocity
    if structure:
        p = (c[2] + s * c[5], c[3] + s * c[6], c[4] + s * c[7])
        for i in range(3):
            out.H[0, i] = c[5 + i]
            for j in range(3):
                out.M[i, j] = c[0] if i == j else 0.0
                out.E[i, 3 + j] = 1.0 if i == j else 0.0
        out.E[0, 0], out.E[0, 1], out.E[0, 2] = 0.0, p[2], -p[1]
        out.E[1, 0], out.E[1, 1], out.E[1, 2] = -p[2], 0.0, p[0]
        out.E[2, 0], out.E[2, 1], out.E[2, 2] = p[1], -p[0], 0.0
    ed = (c[5] * sd, c[6] * sd, c[7] * sd)
    for i in range(3):
        u, a = ed[i], 0.0 * sd
        for j in range(6):
            u += out.E[i, j] * w[j]
            a += out.E[i, j] * inboard.gamma[j]
        out.V[i], out.a[i] = (u, a) if motion else (0.0 * u, 0.0 * a)
    u = out.V
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        out.a[i] += (w[j] * ed[k] - w[k] * ed[j]) if motion else 0.0 * sd
        out.b[i] = c[0] * (w[j] * u[k] - w[k] * u[j])
    out.potential[0] = 0.0 * s
    return True


def _leaving_structure_at_rates(arena, row, reals, terms, constants):
    return _bead(arena, row, reals, terms != Terms.RATES, terms != Terms.STRUCTURE)


def _motion_only_as_named(arena, row, reals, terms, constants):
    return _bead(arena, row, reals, True, terms == Terms.MOTION or terms == Terms.POSE)


#: a kernel that takes Terms.RATES and leaves E, H, M then (as the flexible body's does), and one
#: that does not declare it and writes a, b, V only when ``terms`` names MOTION or POSE
_BEAD_KERNELS = {"takes RATES": state_kernel(_leaving_structure_at_rates, constants=8, rates=True),
                 "motion only as named": state_kernel(_motion_only_as_named, constants=8)}


class _KernelBead(tutorial_body_type.Bead):
    """The tutorial's bead with one of :data:`_BEAD_KERNELS` (``kernel``, a class attribute)."""

    kernel = None

    def compiled_state(self):
        return CompiledState(self.kernel, np.concatenate([[self.mass, self.spring], self.start, self.direction]),
                             hinge_force=tutorial_body_type.bead_spring)


@pytest.mark.parametrize("name", sorted(_BEAD_KERNELS))
def test_the_columns_along_the_velocities_call_a_kernel_with_the_terms_it_takes(name):
    """A kernel declaring ``rates`` is called with ``Terms.RATES`` in the columns along the
    velocities, where it may leave ``E``, ``H``, ``M`` as the last call at the same ``q`` wrote
    them; one that does not declare it is called with ``Terms.MOTION`` (it may not know RATES).
    Both give the complex step's derivatives, and the plan marks the first only."""
    bead = type("Bead", (_KernelBead,), {"kernel": _BEAD_KERNELS[name]})
    system = tutorial_body_type.build()
    system = MultibodySystem([bead(b.name, b.parent, b.mass, b.start, b.direction, b.spring, attach=b.attach)
                              if isinstance(b, tutorial_body_type.Bead) else b for b in map(system.body, system.bodies)],
                             gravity=system.gravity)
    layout = system._engine.layout
    marked = {layout.bodies[layout.order[j]]: int(row[Plan.RATES]) for j, row in enumerate(layout.local_plan.plan)}
    assert marked == {"pendulum": 1, "beam": 1, "bead-on-pendulum": int(name == "takes RATES"),
                      "bead-on-beam": int(name == "takes RATES")}
    for seed in (0, 1):
        _agree(system, seed)


@pytest.mark.parametrize("seed", [3, 11])
def test_the_columns_along_a_flexible_bodys_joint_call_its_kernel_with_terms_joint(seed):
    """The flexible body's kernel declares its joint's coordinates (``joint``): the plan marks
    them, its columns along them call it with ``Terms.JOINT`` (``M`` and the modal frames' ``Γ``
    left as the real state's), and the derivatives are still the whole complex step's."""
    from sko.bodies.flexible import FlexibleBody

    system = random_system(seed, n_bodies=6)
    layout = system._engine.layout
    marked = {layout.bodies[layout.order[j]]: int(row[Plan.JOINT]) for j, row in enumerate(layout.local_plan.plan)}
    expected = {k: system.body(k).joint.nv if isinstance(system.body(k), FlexibleBody) else 0 for k in system.bodies}
    assert marked == expected and any(marked.values())
    _agree(system, seed)


def _declaring_a_joint(arena, row, reals, terms, constants):
    return _bead(arena, row, reals, True, terms != Terms.STRUCTURE)


def _mass_moving_along_a_declared_joint(arena, row, reals, terms, constants):
    """The bead with ``M = (m + s²) I`` (it moves along the bead's coordinate ``s``), declared
    ``joint=1`` all the same: at ``Terms.JOINT`` it writes ``M = m I``, as if it did not move
    (deliberately wrong)."""
    _bead(arena, row, reals, True, terms != Terms.STRUCTURE)
    c, q, _, _, out, _ = views(arena, row, reals)
    mass = c[0] if terms == Terms.JOINT else c[0] + q[0] * q[0]
    for i in range(3):
        out.M[i, i] = mass
    return True


def _beads_with(kernel: object) -> MultibodySystem:
    """The tutorial's system with its beads' compiled state run by ``kernel``."""
    bead = type("Bead", (_KernelBead,), {"kernel": kernel})
    system = tutorial_body_type.build()
    return MultibodySystem([bead(b.name, b.parent, b.mass, b.start, b.direction, b.spring, attach=b.attach)
                            if isinstance(b, tutorial_body_type.Bead) else b for b in map(system.body, system.bodies)],
                           gravity=system.gravity)


def _joint_columns(system: MultibodySystem) -> dict:
    layout = system._engine.layout
    return {layout.bodies[layout.order[j]]: int(row[Plan.JOINT]) for j, row in enumerate(layout.local_plan.plan)}


@pytest.mark.parametrize("checks", [True, False])
def test_a_joint_declaration_is_trusted_only_without_checks(checks):
    """A kernel declaring ``joint`` is called with ``Terms.JOINT`` along it only where its checks
    are off. One whose ``M`` does move there, and that writes a wrong ``M`` at ``Terms.JOINT``:
    checked, the derivatives are the whole complex step's (``Terms.JOINT`` never passed);
    unchecked, its declaration is trusted and they are not."""
    system = _beads_with(state_kernel(_mass_moving_along_a_declared_joint, constants=8, joint=1, checks=checks))
    marked = _joint_columns(system)
    assert marked["bead-on-pendulum"] == marked["bead-on-beam"] == (0 if checks else 1)
    if checks:
        _agree(system, 0)
    else:
        with pytest.raises(AssertionError):
            _agree(system, 0)
    _agree(_beads_with(state_kernel(_declaring_a_joint, constants=8, joint=1, checks=checks)), 0)  # a true one


_CARRIAGE = njit(tutorial_body_with_children.carriage_arm_state.py_func)


def _carriage_arm_reading_its_mass(arena, row, reals, terms, constants):
    """The tutorial's carriage arm, declared ``joint=1``: its ``M`` moves with the carriage's
    ``s`` alone, so at ``Terms.JOINT`` it leaves ``M`` as the last call wrote it (the contract),
    and its ``b`` gains ``0.1 M (θ̇, ṡ)``, read back from the arena."""
    _, _, v, _, out, _ = views(arena, row, reals)
    M = out.M.copy()
    _CARRIAGE(arena, row, reals, terms, constants)
    if terms == Terms.JOINT:
        out.M[:, :] = M
    for i in range(7):
        out.b[i] += 0.1 * (out.M[i, 0] * v[0] + out.M[i, 6] * v[1])
    return True


class _ArmReadingItsMass(tutorial_body_with_children.CarriageArm):
    def compiled_state(self):
        base = super().compiled_state()
        return CompiledState(state_kernel(_carriage_arm_reading_its_mass, own_frame_identity=True, checks=False,
                                          joint=1), base.constants, scratch=48)


def test_a_kernel_called_at_joint_reads_the_real_state():
    """Along its declared joint a kernel reads the ``M`` and ``Γ_o`` of the real state, as a fill
    leaves them: the first call of a body that is not filled (its column after the joint's, a
    complex step) leaves them complex, and they are made real again before the joint's columns.
    Without that, this unchecked arm's ``b`` read ``M``'s step along ``s`` in its θ column (4e-5)."""
    arms = tutorial_body_with_children.build()
    system = MultibodySystem([_ArmReadingItsMass(b.name, b.parent, b.axis, b.inertia, b.carriage_mass, b.start,
                                                 b.direction, b.stiffness, b.origin, b.rotation, attach=b.attach)
                              if isinstance(b, tutorial_body_with_children.CarriageArm) else b
                              for b in map(arms.body, arms.bodies)], gravity=arms.gravity)
    assert set(_joint_columns(system).values()) >= {1}
    _agree(system, 0)
    _agree(system, 1)


def _partials_work(system, q, v, a, plan) -> np.ndarray:
    """The work buffer of the compiled local derivatives at one state, run with ``plan``."""
    from sko.engine import local_derivatives

    layout = system._engine.layout
    _, size, scratch = layout.local_plan
    arena = np.empty(layout.size, dtype=np.complex128)  # zeroed by the kernel
    work, D = np.zeros(size), np.zeros((system.nv, 3 * system.nv))
    status = local_derivatives.partials(layout.table(np.complex128), layout.reals, arena, q, v,
                                        np.ascontiguousarray(system.qdot_matrix(q)), a, plan, work, np.zeros(scratch), D,
                                        int(Terms.MOTION), True, local_derivatives.steps(layout))
    assert status == -1
    return work


@pytest.mark.parametrize("seed", [3, 5, 11])
def test_partials_along_the_velocities_in_closed_form(seed):
    """The flexible body's and the rotor link's kernels declare their partials along their ``θ̇`` and
    the velocity ``v_o`` of the frame they hang from (``velocities``), the flexible body's along its
    joint too (``joint_partials``): the plan marks every such body, and its ``∂a``, ``∂b`` and its
    records' ``∂γ`` along ``θ̇``, ``A``, ``B``, ``G`` along ``v_o``, ``∂E``, ``∂H``, ``∂a``, ``∂b``,
    ``∂γ`` and the flags of the blocks that move along the joint are those of the complex steps the
    plan takes without the declarations, entry by entry; the derivatives are the whole complex step's."""
    from sko.bodies.flexible import FlexibleBody
    from sko.bodies.rotor import GearedRotorLink
    from sko.engine.state_kernels import Row

    system = random_system(seed, n_bodies=7)
    layout = system._engine.layout
    plan = layout.local_plan.plan
    kinds = (FlexibleBody, GearedRotorLink)
    declared = [j for j in range(plan.shape[0]) if plan[j, Plan.VELOCITIES] != 0]
    assert declared == [j for j in range(plan.shape[0]) if isinstance(system.body(layout.bodies[layout.order[j]]), kinds)]
    stepped = plan.copy()
    stepped[:, Plan.VELOCITIES] = stepped[:, Plan.JOINT_PARTIALS] = 0
    rng = np.random.default_rng(seed)
    q, v = random_state(system, rng)
    a = rng.standard_normal(system.nv)
    closed, steps = _partials_work(system, q, v, a, plan), _partials_work(system, q, v, a, stepped)
    moving = set()  # the kinds of block seen nonzero, and the body types with a parent
    for j in declared:
        m, n, stride = layout.rows[j, Row.NODE_DIM], layout.rows[j, Row.NV], plan[j, Plan.RECORD_STRIDE]
        xc, child = 3 * n, layout.rows[j, Row.PARENT] >= 0
        blocks = [("a", slice(plan[j, Plan.DA] + n * m, plan[j, Plan.DA] + 2 * n * m)),
                  ("b", slice(plan[j, Plan.DB] + n * m, plan[j, Plan.DB] + 2 * n * m))]
        if child:
            blocks += [("A", slice(plan[j, Plan.A], plan[j, Plan.A] + 6 * m)),
                       ("B", slice(plan[j, Plan.B], plan[j, Plan.B] + 6 * m))]
            moving.add(type(system.body(layout.bodies[layout.order[j]])))
        joint = plan[j, Plan.JOINT] if plan[j, Plan.JOINT_PARTIALS] else 0  # its columns along the joint
        blocks += [("∂E", slice(plan[j, Plan.DE], plan[j, Plan.DE] + joint * m * 6)),
                   ("∂H", slice(plan[j, Plan.DH], plan[j, Plan.DH] + joint * n * m)),
                   ("∂a", slice(plan[j, Plan.DA], plan[j, Plan.DA] + joint * m)),
                   ("∂b", slice(plan[j, Plan.DB], plan[j, Plan.DB] + joint * m))]
        blocks += [(f"flag {block}", slice(plan[j, Plan.NONZERO] + block * xc, plan[j, Plan.NONZERO] + block * xc + joint))
                   for block in range(3 + layout.rows[j, Row.RECORD_COUNT])]
        for k in range(layout.rows[j, Row.RECORD_COUNT]):  # the body's own frame (k = 0): γ = 0
            rates = plan[j, Plan.RECORDS] + k * stride + xc * 6 * m
            blocks.append(("γ" if k else "γ own", slice(rates + n * 6, rates + 2 * n * 6)))
            blocks.append(("∂γ" if k else "∂γ own", slice(rates, rates + joint * 6)))
            if child:
                blocks.append(("G" if k else "G own", slice(rates + xc * 6, rates + xc * 6 + 36)))
        for kind, block in blocks:
            scale = np.abs(steps[block]).max(initial=0.0)
            if scale > 0:
                moving.add(kind)
            # to 1e-12 of the block, or of 1 where the steps' block is rounding (a closed form's exact zero)
            np.testing.assert_allclose(closed[block], steps[block], rtol=1e-12, atol=1e-12 * max(scale, 1.0))
    assert moving == {"a", "b", "γ", "A", "B", "G", "∂E", "∂a", "∂b", "∂γ", "flag 0", *kinds}
    _agree(system, seed)


def test_partials_along_the_velocities_on_joints_whose_motion_subspace_moves():
    """On a joint whose ``S`` moves (a rack and pinion: ``c_J ≠ 0``) the declared partials take the
    joint terms' ``a`` along ``θ̇`` by a complex step of the joint terms alone: the flexible body's
    and the rotor link's agree with the whole complex step."""
    from sko.bodies import GearedRotorLink, RackAndPinion
    from sko.examples.bodies import _random_flexible, _random_inertia, _random_placement

    rng = np.random.default_rng(5)
    bodies = [RigidBody("a", None, Revolute([0.3, 1.0, 0.2]), _random_inertia(rng)),
              _random_flexible(rng, "f", "a", RackAndPinion(0.2), None, 2, True, _random_placement(rng), []),
              GearedRotorLink("r", "f", RackAndPinion(0.3), _random_inertia(rng), rotor_axis=[0.2, 0.1, 1.0],
                              gear_ratio=12.0, axial_inertia=4e-3, transverse_inertia=3e-3, attach="node0"),
              _random_flexible(rng, "g", "r", RackAndPinion(0.1), None, 1, True, _random_placement(rng), [])]
    system = MultibodySystem(bodies)
    plan = system._engine.layout.local_plan.plan
    assert (plan[:, Plan.VELOCITIES] != 0).sum() == 3
    for seed in (0, 1):
        _agree(system, seed)


def test_a_flexible_bodys_joint_partials_in_closed_form_on_joints_of_constant_motion_subspace():
    """On a helical (of nonzero pitch), revolute, prismatic, cylindrical or ball joint, not reversed,
    the flexible body's partials along its joint are in closed form, ``s = S δθ`` decoded from the
    column's ``δq`` (the ball joint's ``ω = 2 vec(q̄ ⊗ δq)/‖q‖²``): the plan marks every body,
    and its ``∂E``, ``∂H``, ``∂a``, ``∂b`` there are the complex steps' entry by entry; the
    derivatives are the whole complex step's. Ball joints at the root and below, their quaternions
    of norm 3 and of norm ``1e155`` (whose square overflows), a body without modes (its state a fill,
    no call of its own), a reversed helical joint (a complex step of its joint terms)."""
    from sko.bodies import Cylindrical, Helical, Prismatic, ReversedJoint
    from sko.engine.state_kernels import Row
    from sko.examples.bodies import _random_flexible, _random_placement

    rng = np.random.default_rng(7)
    joints = [("root", None, Spherical(), None, 2), ("helical", "root", Helical([0.3, -0.5, 0.8], pitch=0.37), "node0", 2),
              ("cylindrical", "helical", Cylindrical([0.6, 0.2, -0.7]), "node1", 1),
              ("prismatic", "cylindrical", Prismatic([-0.2, 0.9, 0.3]), None, 2),
              ("revolute", "prismatic", Revolute([0.1, 0.4, 1.0]), "node0", 1),
              ("ball", "revolute", Spherical(), "node1", 2), ("no modes", "ball", Spherical(), None, 0),
              ("reversed", "no modes", ReversedJoint(Helical([1.0, 0.2, 0.1], pitch=-0.2)), "node0", 1)]
    system = MultibodySystem([_random_flexible(rng, name, parent, joint, attach, r, True, _random_placement(rng), [])
                              for name, parent, joint, attach, r in joints])
    layout = system._engine.layout
    plan = layout.local_plan.plan
    marked = {layout.bodies[layout.order[j]]: (int(row[Plan.JOINT]), bool(row[Plan.JOINT_PARTIALS]))
              for j, row in enumerate(plan)}
    assert marked == {name: (joint.nv, True) for name, _, joint, _, _ in joints}
    stepped = plan.copy()
    stepped[:, Plan.JOINT_PARTIALS] = 0
    for seed, norm in ((0, 1.0), (1, 3.0), (2, 1e155)):
        norms = {"root": norm, "ball": norm, "no modes": norm}
        q, v = random_state(system, np.random.default_rng(seed))
        for name in norms:
            q[system.q_slices[name].start: system.q_slices[name].start + 4] *= norm
        a = np.random.default_rng(seed).standard_normal(system.nv)
        closed, steps = _partials_work(system, q, v, a, plan), _partials_work(system, q, v, a, stepped)
        for j, row in enumerate(layout.rows):
            m, n, joint = row[Row.NODE_DIM], row[Row.NV], plan[j, Plan.JOINT]
            for block, size in ((Plan.DE, m * 6), (Plan.DH, n * m), (Plan.DA, m), (Plan.DB, m)):
                at = slice(plan[j, block], plan[j, block] + joint * size)
                scale = np.abs(steps[at]).max(initial=0.0)
                np.testing.assert_allclose(closed[at], steps[at], rtol=1e-12, atol=1e-12 * max(scale, 1.0))
        _agree(system, seed, norms)


def _modal_tree(r: int) -> MultibodySystem:
    """Flexible bodies of ``r`` modes on a ball joint at the root and below, on a helical joint (of
    nonzero pitch) and on a planar joint (whose ``S`` moves), hanging at modal nodes."""
    from sko.bodies import Helical, Planar
    from sko.examples.bodies import _random_flexible, _random_placement

    rng = np.random.default_rng(r)
    joints = [("root", None, Spherical(), None), ("helical", "root", Helical([0.3, -0.5, 0.8], pitch=0.37), "node0"),
              ("planar", "helical", Planar(), "node1"), ("ball", "helical", Spherical(), "node0")]
    return MultibodySystem([_random_flexible(rng, name, parent, joint, attach, r, True, _random_placement(rng), [])
                            for name, parent, joint, attach in joints])


@pytest.mark.parametrize("r", [2, 6])
def test_a_flexible_bodys_partials_along_its_modes_in_closed_form(r):
    """The flexible body declares its partials along its modes (``internal_partials``: its particles
    in closed form, its modal nodes by the derivative of the exponential map): the plan marks every
    body, and in each column along a mode but the first (whose complex step of the kernel gives the
    real state) its ``∂E``, ``∂H``, ``∂M``, ``∂a``, ``∂b``, its records' ``∂Γ``, ``∂γ`` and the flags
    of the blocks that move are those of the complex steps the plan takes without the declaration,
    entry by entry; the derivatives are the whole complex step's."""
    from sko.engine.local_derivatives import Nonzero
    from sko.engine.state_kernels import Row

    system = _modal_tree(r)
    layout = system._engine.layout
    plan = layout.local_plan.plan
    assert (plan[:, Plan.INTERNAL_PARTIALS] != 0).all()
    stepped = plan.copy()
    stepped[:, Plan.INTERNAL_PARTIALS] = 0
    for seed in (0, 1):
        q, v = random_state(system, np.random.default_rng(seed))
        a = np.random.default_rng(seed).standard_normal(system.nv)
        closed, steps = _partials_work(system, q, v, a, plan), _partials_work(system, q, v, a, stepped)
        for j, row in enumerate(layout.rows):
            m, n, joint, x = row[Row.NODE_DIM], row[Row.NV], plan[j, Plan.JOINT], 3 * row[Row.NV]
            columns = range(joint + 1, n)
            blocks = [(plan[j, block], size) for block, size in
                      ((Plan.DE, m * 6), (Plan.DH, n * m), (Plan.DM, m * m), (Plan.DA, m), (Plan.DB, m))]
            for k in range(row[Row.RECORD_COUNT]):
                at = plan[j, Plan.RECORDS] + k * plan[j, Plan.RECORD_STRIDE]
                blocks += [(at, 6 * m), (at + x * 6 * m, 6)]  # ∂Γ, ∂γ of record k
            for start, size in blocks:
                for c in columns:
                    at = slice(start + c * size, start + (c + 1) * size)
                    scale = np.abs(steps[at]).max(initial=0.0)
                    np.testing.assert_allclose(closed[at], steps[at], rtol=1e-12, atol=1e-12 * max(scale, 1.0))
            for block in range(Nonzero.records + row[Row.RECORD_COUNT]):
                flags = slice(plan[j, Plan.NONZERO] + block * x + joint + 1, plan[j, Plan.NONZERO] + block * x + n)
                np.testing.assert_array_equal(closed[flags], steps[flags])
        _agree(system, seed)


def _wrong_internal_partials(arena, row, reals, work, dE, dH, dM, dA, dB, dGamma, dG, stride):
    """Partials along the modes that are all zero (deliberately wrong)."""
    return True


def test_the_second_derivatives_of_the_exp_map_coefficients():
    """``d²B/ds²`` and ``d²C/ds²`` (``exp_map_second_derivatives``, which a modal node's ``δγ_o``
    takes) are the complex steps of ``dB/ds`` and ``dC/ds`` on both sides of the switch at
    ``s = 4`` from the power series to the closed forms, at ``s = 0`` and far beyond."""
    from sko.engine.bodies.flexible import exp_map_coefficients, exp_map_second_derivatives

    coefficients, second = exp_map_coefficients.py_func, exp_map_second_derivatives.py_func
    h = 1e-30
    for s in (0.0, 1e-8, 0.5, 3.9, 4.0, 4.0 + 1e-9, 4.1, 9.0, (2 * np.pi) ** 2, 400.0):
        _, _, _, dB, dC = coefficients(s + 1j * h)
        np.testing.assert_allclose(second(s), (dB.imag / h, dC.imag / h), rtol=1e-12)


@pytest.mark.parametrize("deformation", [0.0, 12.0])
def test_partials_along_the_modes_with_modal_nodes_unrotated_and_rotated_far(deformation):
    """The closed-form partials along the modes (``internal_partials``) at ``η = 0`` (every
    ``ψ = 0``, the series at its first term) and at modal rotations of ``|ψ|² > 4`` at every node
    (the closed forms of the coefficients and their derivatives): the derivatives of one state and
    of a batch are the whole complex step's."""
    system = _modal_tree(3)
    rng = np.random.default_rng(5)
    Q, V = zip(*(random_state(system, rng, deformation) for _ in range(2)))
    Q, V, X = np.array(Q), np.array(V), rng.standard_normal((2, system.nv))
    s = [np.sum((node.rotation @ Q[k, system.q_slices[name]][system.body(name).joint.nq:]) ** 2)
         for k in range(2) for name in system.bodies for node in system.body(name).nodes.values()]
    assert max(s) == 0.0 if deformation == 0.0 else min(s) > 4.0
    for function in (system.inverse_dynamics_derivatives, system.forward_dynamics_derivatives):
        batch = function(Q, V, X, method="local")
        for k in range(2):
            reference = function(Q[k], V[k], X[k], method="complex_step")
            scale = max(np.abs(y).max(initial=1e-300) for y in reference)
            for one, many, expected in zip(function(Q[k], V[k], X[k], method="local"), batch, reference):
                assert _relative(one, expected, scale) < RTOL
                assert _relative(many[k], expected, scale) < RTOL


@pytest.mark.parametrize("checks", [True, False])
def test_internal_partials_are_trusted_only_without_checks(checks):
    """A kernel's closed-form partials along its coordinates past its joint (``internal_partials``)
    are called only where its checks are off. A wrong one: checked, the derivatives are the whole
    complex step's (the declaration never called); unchecked, it is trusted and they are not."""
    from dataclasses import replace

    from sko.bodies import FlexibleBody
    from sko.engine.bodies import flexible
    from sko.engine.state_kernels import StateKernel

    F = flexible.FLEXIBLE
    kernel = StateKernel(F.py_func, own_frame_identity=True, constants=F.constants, calls_hinge=True, checks=checks,
                         joint=F.joint, internal_partials=_wrong_internal_partials)

    class Wrong(FlexibleBody):
        def compiled_state(self):
            return replace(flexible.pack_flexible(self), kernel=kernel)

    body = _modal_tree(2).body("root")
    system = MultibodySystem([Wrong(body.name, None, body.joint, body.masses, body.positions, body.modes,
                                    body.stiffness, body.damping, nodes=body.nodes, placement=body.placement)])
    assert bool(system._engine.layout.local_plan.plan[0, Plan.INTERNAL_PARTIALS]) == (not checks)
    if checks:
        _agree(system, 0)
    else:
        with pytest.raises(AssertionError):
            _agree(system, 0)
    with pytest.raises(SKOError, match="internal_partials must be a function"):
        state_kernel(_declaring_a_joint, internal_partials=3)


def _wrong_velocities(arena, row, reals, work, inboard, A, B, G, dA, dB, dG, stride):
    """Partials along the velocities that are all zero (deliberately wrong for the bead)."""
    for i in range(3):
        work[dA + i] = 0.0
        work[dB + i] = 0.0
    for i in range(18 if inboard else 0):
        work[A + i] = 0.0
        work[B + i] = 0.0
    return True


@pytest.mark.parametrize("checks", [True, False])
def test_a_velocities_declaration_is_trusted_only_without_checks(checks):
    """A kernel's closed-form partials along its velocities (``velocities``) are called only where
    its checks are off. A wrong one: checked, the derivatives are the whole complex step's (the
    declaration never called); unchecked, it is trusted and they are not."""
    system = _beads_with(state_kernel(_declaring_a_joint, constants=8, checks=checks, velocities=_wrong_velocities))
    _trusted_only_without_checks(system, Plan.VELOCITIES, checks)
    with pytest.raises(SKOError, match="velocities must be a function"):
        state_kernel(_declaring_a_joint, velocities=3)


def _trusted_only_without_checks(system, column: int, checks: bool) -> None:
    """The beads' plan marks a (deliberately wrong) declaration in ``column`` only without checks;
    checked, the derivatives are the whole complex step's, unchecked they are not."""
    layout = system._engine.layout
    marked = {layout.bodies[layout.order[j]]: bool(row[column]) for j, row in enumerate(layout.local_plan.plan)}
    assert marked["bead-on-pendulum"] == marked["bead-on-beam"] == (not checks)
    if checks:
        _agree(system, 0)
    else:
        with pytest.raises(AssertionError):
            _agree(system, 0)


def _wrong_joint_partials(arena, row, reals, work, dE, dH, dA, dB, dG, stride):
    """Partials along the joint that are all zero (deliberately wrong for the bead)."""
    for i in range(3):
        work[dA + i] = 0.0
        work[dB + i] = 0.0
    return True


@pytest.mark.parametrize("checks", [True, False])
def test_joint_partials_are_trusted_only_without_checks(checks):
    """A kernel's closed-form partials along its declared joint (``joint_partials``) are called only
    where its checks are off (where ``joint`` is trusted). A wrong one: checked, the derivatives are
    the whole complex step's; unchecked, it is trusted and they are not."""
    system = _beads_with(state_kernel(_declaring_a_joint, constants=8, joint=1, checks=checks,
                                      joint_partials=_wrong_joint_partials))
    _trusted_only_without_checks(system, Plan.JOINT_PARTIALS, checks)
    with pytest.raises(SKOError, match="joint_partials must be a function"):
        state_kernel(_declaring_a_joint, joint_partials=3)


@pytest.mark.parametrize("checks", [True, False])
@pytest.mark.parametrize("joint, message", [(5, "joint declaration gives 5"),
                                            (lambda c: c[100], "joint declaration fails on 8 packed constants")])
def test_a_wrong_joint_declaration_is_refused_when_the_system_is_built(checks, joint, message):
    """A ``joint`` that is not a number of the body's coordinates (the bead has one), or whose
    function fails, is an error naming the body when the system's state layout is built (as a wrong
    ``constants``), checked kernel or not, before any derivative is asked for."""
    system = _beads_with(state_kernel(_declaring_a_joint, constants=8, checks=checks, joint=joint))
    with pytest.raises(SKOError, match=f"bead-on-(pendulum|beam).*{message}"):
        system._engine.layout
    with pytest.raises(SKOError, match="joint must be a non-negative number"):
        state_kernel(_declaring_a_joint, joint=-1)


@pytest.mark.parametrize("name", ["velocities", "joint_partials", "internal_partials"])
def test_a_declared_function_of_the_wrong_arguments_is_refused(name):
    """A ``velocities``, ``joint_partials`` or ``internal_partials`` declaration taking other
    arguments than the engine passes is a BodyError naming the kernel when it is declared, not a TypeError of numba's when
    the derivatives first compile it."""
    def partials(arena, row, reals):
        return True

    with pytest.raises(SKOError, match=f"_declaring_a_joint.*{name} must be a function of 1[02] positional"):
        state_kernel(_declaring_a_joint, constants=8, joint=1, checks=False, **{name: partials})


def test_declared_partials_returning_false_are_named():
    """A ``velocities`` declaration that refuses a state the kernel takes is a KernelError naming
    the body and the declaration."""
    def refusing(arena, row, reals, work, inboard, A, B, G, dA, dB, dG, stride):
        return False

    system = _beads_with(state_kernel(_declaring_a_joint, constants=8, checks=False, velocities=refusing))
    rng = np.random.default_rng(0)
    q, v = system.random_configuration(rng), rng.uniform(-1.0, 1.0, system.nv)
    with pytest.raises(SKOError, match=r"body 'bead-on-.*declared partials \(velocities=\) returned False"):
        system.inverse_dynamics_derivatives(q, v, np.zeros(system.nv))


@pytest.mark.parametrize("spring_length", [(0.3, 0.3), (-10.0, 10.0), (-0.1, 0.2)],
                         ids=["no dead band", "inside the dead band", "a dead band"])
def test_tendons_and_hinge_forces(spring_length):
    inertia = spatial_inertia(1.0, [0.0, 0.0, -0.3], 0.02 * np.eye(3))
    bodies = [RigidBody("a", None, Revolute([0, 1, 0]), inertia), RigidBody("b", "a", Revolute([1, 0, 0]), inertia),
              tutorial_body_type.Bead("bead", "b", 0.3, [0.1, 0.0, -0.4], [0.0, 0.0, 1.0], 20.0)]
    tendon = fixed_tendon("t", {"a": 1.0, "b": -0.5}, stiffness=7.0, damping=0.3, spring_length=spring_length)
    _agree(MultibodySystem(bodies, tendons=[tendon]), 3)


def _fresh_call(system):
    """A prepared call of the compiled local derivatives on buffers of its own."""
    from sko.engine.local_derivatives import one_state_call

    return one_state_call(system._engine.layout)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 7), shape=st.sampled_from(["chain", "fan", "random", "forest"]))
def test_a_call_on_the_buffers_of_earlier_calls_equals_a_call_on_fresh_ones(seed, n, shape):
    """The work buffer is not zeroed per call: every call writes the same entries before it reads
    them, so a call after others (a rejected state among them) gives a fresh call's answer bit for bit."""
    _same_on_used_buffers(random_system(seed, n_bodies=n, shape=shape), seed)


@pytest.mark.parametrize("make", [*flexible_examples().values(), tutorial_body_type.build,
                                  tutorial_body_with_children.build],
                         ids=[*flexible_examples(), "bead", "arm with carriage"])
def test_a_call_on_used_buffers_of_other_body_kinds(make):
    _same_on_used_buffers(make(), 2)


def _same_on_used_buffers(system, seed: int) -> None:
    assert system._engine.layout.all_compiled
    rng = np.random.default_rng(seed)
    used = _fresh_call(system)
    states = []
    for _ in range(3):
        q, v = random_state(system, rng)
        states.append((q, v, rng.standard_normal(system.nv), np.ascontiguousarray(system.qdot_matrix(q))))
    q, v, a, qdot = states[0]
    assert used(q, v * np.nan, a, qdot)[0] == -2  # a state refused on the way
    for q, v, a, qdot in states:
        status, D = used(q, v, a, qdot)
        status_fresh, fresh = _fresh_call(system)(q, v, a, qdot)
        assert status == status_fresh == -1
        np.testing.assert_array_equal(D, fresh)


def _velocities_into_zeros(arena, row, reals, work, inboard, A, B, G, dA, dB, dG, stride):
    """Refuses entries that are not zero, then leaves ones there (wrong partials of the bead)."""
    for block, size in ((dA, 3), (dB, 3), (A, 18 if inboard else 0), (B, 18 if inboard else 0)):
        for i in range(size):
            if work[block + i] != 0.0:
                return False
            work[block + i] = 1.0
    return True


def _joint_partials_into_zeros(arena, row, reals, work, dE, dH, dA, dB, dG, stride):
    """Refuses entries that are not zero, then leaves ones there (wrong partials of the bead)."""
    for block, size in ((dE, 18), (dH, 3), (dA, 3), (dB, 3)):
        for i in range(size):
            if work[block + i] != 0.0:
                return False
            work[block + i] = 1.0
    return True


def test_declared_partials_write_into_zeros_at_every_call():
    """A declared function's entries are zero when it is called, at the second call too (the work
    buffer is not zeroed per call: the recursion zeroes them)."""
    system = _beads_with(state_kernel(_declaring_a_joint, constants=8, joint=1, checks=False,
                                      velocities=_velocities_into_zeros, joint_partials=_joint_partials_into_zeros))
    layout = system._engine.layout
    for j, row in enumerate(layout.local_plan.plan):
        if layout.bodies[layout.order[j]] in ("bead-on-pendulum", "bead-on-beam"):
            assert row[Plan.VELOCITIES] != 0 and row[Plan.JOINT_PARTIALS] != 0
    rng = np.random.default_rng(0)
    for _ in range(2):
        q, v = random_state(system, rng)
        system.inverse_dynamics_derivatives(q, v, rng.standard_normal(system.nv), method="local")


def test_a_batch_equals_its_states():
    system = random_system(4, n_bodies=5)
    rng = np.random.default_rng(0)
    Q = np.array([random_state(system, rng)[0] for _ in range(3)])
    V, A = rng.standard_normal((2, 3, system.nv))
    batch = system.inverse_dynamics_derivatives(Q, V, A, method="local")
    for s in range(3):
        one = system.inverse_dynamics_derivatives(Q[s], V[s], A[s], method="local")
        for x, y in zip(batch, one):
            np.testing.assert_array_equal(x[s], y)


def test_a_batch_of_forward_dynamics_derivatives_equals_its_states():
    """The batch takes ℳ⁻¹ from the ℳ of the recursion's own pass, as one state does."""
    system = tutorial_body_with_children.build()
    rng = np.random.default_rng(2)
    Q = np.array([system.random_configuration(rng) for _ in range(3)])
    V, T = rng.standard_normal((2, 3, system.nv))
    batch = system.forward_dynamics_derivatives(Q, V, T, method="local")
    for s in range(3):
        one = system.forward_dynamics_derivatives(Q[s], V[s], T[s], method="local")
        for x, y in zip(batch, one):
            np.testing.assert_allclose(x[s], y, rtol=1e-13, atol=1e-13 * np.abs(y).max())
    np.testing.assert_array_equal(batch.mass_matrix_inverse, np.swapaxes(batch.mass_matrix_inverse, 1, 2))


def test_forward_dynamics_from_the_mass_matrix_of_the_pass():
    """Eq. 3 from ``ℳ`` and inverse dynamics' derivatives: ``ℳ⁻¹`` of one state by Cholesky, of a
    batch or of an ``ℳ`` Cholesky refuses by numpy's inverse; each equals ``ℳ⁻¹`` applied column
    by column, and is symmetric."""
    from sko.systems.derivatives import _forward

    rng = np.random.default_rng(5)
    X = rng.standard_normal((4, 4))
    for M in (X @ X.T + 4 * np.eye(4), np.diag([2.0, -1.0, 3.0, 0.5])):  # positive definite, then indefinite
        dq, dvel = rng.standard_normal((2, 4, 4))
        expected = (-np.linalg.solve(M, dq), -np.linalg.solve(M, dvel), np.linalg.inv(M))
        for got in (_forward(dq, dvel, M), [x[0] for x in _forward(dq[None], dvel[None], M[None])]):
            for x, y in zip(got, expected):
                np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12)
            np.testing.assert_array_equal(got[2], got[2].T)


def test_the_compiled_forward_step_is_the_cholesky_solve_of_the_pass():
    """``local_derivatives.forward`` (Eq. 3 at one state) equals ``ℳ⁻¹`` applied column by column,
    ``ℳ⁻¹`` exactly symmetric, and declines an ``ℳ`` without a Cholesky factor (the caller then
    inverts it otherwise); ``D`` is not written."""
    from sko.engine.local_derivatives import forward_call

    rng = np.random.default_rng(7)
    for n in (1, 5, 16):
        X = rng.standard_normal((n, n))
        for M in (X @ X.T + n * np.eye(n), np.diag(np.r_[2.0, -np.ones(n - 1)]) if n > 1 else -np.eye(1)):
            D = np.ascontiguousarray(np.concatenate([rng.standard_normal((n, 2 * n)), M], axis=1))
            kept, out = D.copy(), np.empty_like(D)
            solved = forward_call()(D, out)
            np.testing.assert_array_equal(D, kept)
            if np.linalg.eigvalsh(M).min() <= 0:
                assert not solved
                continue
            assert solved
            expected = np.concatenate([-np.linalg.solve(M, D[:, :2 * n]), np.linalg.inv(M)], axis=1)
            np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12 * np.abs(expected).max())
            np.testing.assert_array_equal(out[:, 2 * n:], out[:, 2 * n:].T)


def _derived(cls) -> set:
    """The names of the attributes ``cls`` declares as derived or checked on first use (cached
    properties, and what a system lists in its ``_DERIVED``)."""
    return {name for klass in cls.__mro__ for name, x in vars(klass).items() if isinstance(x, cached_property)} | set(
        getattr(cls, "_DERIVED", ()))


def test_the_recursion_keeps_only_declared_attributes():
    """What the local derivatives keep between calls (the plan, the constant tangent columns, the
    result of the body checks) is declared by the system and its state layout, not written onto
    them from outside."""
    system = tutorial_body_with_children.build()
    layout = system._engine.layout
    system_before, layout_before = set(vars(system)), set(vars(layout))
    rng = np.random.default_rng(0)
    q, v, a = system.random_configuration(rng), *rng.standard_normal((2, system.nv))
    for function in (system.inverse_dynamics_derivatives, system.forward_dynamics_derivatives):
        function(q, v, a, method="local")
        function(q[None], v[None], a[None], method="local")
    assert set(vars(system)) - system_before <= _derived(type(system))
    assert set(vars(layout)) - layout_before <= _derived(type(layout))
    assert layout.local_plan is layout.local_plan


@pytest.mark.parametrize("joint", [Revolute([0, 1, 0]), Free()], ids=["revolute", "free"])
def test_the_constant_tangent_columns_are_the_systems(joint):
    """``q̇(q, e_ι)`` is kept once only where it does not depend on ``q``."""
    inertia = spatial_inertia(1.0, [0.0, 0.0, -0.3], 0.02 * np.eye(3))
    system = MultibodySystem([RigidBody("a", None, joint, inertia),
                              tutorial_body_type.Bead("bead", "a", 0.3, [0.1, 0.0, -0.4], [0.0, 0.0, 1.0], 20.0)])
    constant = system._constant_qdot
    assert (constant is None) == isinstance(joint, Free)
    if constant is not None:
        for seed in range(3):
            np.testing.assert_array_equal(constant, system.qdot_matrix(system.random_configuration(seed)))


def test_inputs_are_not_mutated_and_errors_are_named():
    system = random_system(2, n_bodies=3)
    q, v, a = system.random_configuration(0), np.ones(system.nv), np.ones(system.nv)
    copies = [x.copy() for x in (q, v, a)]
    system.inverse_dynamics_derivatives(q, v, a, method="local")
    for x, y in zip((q, v, a), copies):
        np.testing.assert_array_equal(x, y)
    with pytest.raises(SKOError, match="external forces"):
        system.inverse_dynamics_derivatives(q, v, a, external_forces={system.bodies[0]: np.ones(6)}, method="local")


def test_the_prepared_one_state_call_takes_arrays_of_any_strides_and_declines_the_rest():
    """The common call (:func:`~sko.systems.body_derivatives.one_state_call`) answers 1-D float64
    arrays of any strides, read-only ones too, as the checked path does; it declines (None, the
    checked path then answers or names the error) lists, batches, a state that is not finite and
    the reference backend; tangent columns that depend on ``q`` come from the coordinate maps."""
    from sko.engine import use_backend

    system = tutorial_body_with_children.build()
    rng = np.random.default_rng(4)
    q, v, a = system.random_configuration(rng), *rng.standard_normal((2, system.nv))
    for forward, method in ((False, system.inverse_dynamics_derivatives), (True, system.forward_dynamics_derivatives)):
        expected = method(q, v, a, method="local")  # checks the bodies once: the prepared call applies after
        strided = [np.repeat(x, 2)[::2] for x in (q, v, a)]
        strided[0].setflags(write=False)
        for got in (system._local_derivatives(q, v, a, forward), system._local_derivatives(*strided, forward),
                    method(*strided)):
            for x, y in zip(got, expected):
                np.testing.assert_array_equal(x, y)
        assert system._local_derivatives(list(q), v, a, forward) is None
        assert system._local_derivatives(q[None], v[None], a[None], forward) is None
        if not forward:  # forward dynamics, first, names it
            assert system._local_derivatives(q, np.full(system.nv, np.nan), a, forward) is None
        with use_backend("reference"):
            assert system._local_derivatives(q, v, a, forward) is None
    with pytest.raises(SKOError, match="not finite|NaN|nan"):
        system.inverse_dynamics_derivatives(q, np.full(system.nv, np.nan), a)
    floating = random_system(2, n_bodies=3, floating_base=True)  # q̇(q, e_ι) depends on q: by the coordinate maps
    q = floating.random_configuration(0)
    expected = floating.inverse_dynamics_derivatives(q, method="local")
    for x, y in zip(floating._local_derivatives(q, None, None, False), expected):
        np.testing.assert_array_equal(x, y)
    q[floating.q_slices[floating.bodies[0]]] = 0.0  # the base's quaternion too
    with pytest.raises(SKOError, match="quaternion"):
        floating.inverse_dynamics_derivatives(q)


def test_compiled_partials_takes_real_arrays_as_float64_and_names_the_rest():
    """The public :func:`~sko.systems.body_derivatives.compiled_partials` reads float64: integers
    and float32 are taken as their values (not their bytes), another length or complex numbers
    are an error naming the input."""
    from sko.graphs.errors import DimensionError
    from sko.systems import body_derivatives

    system = tutorial_body_with_children.build()
    q, v, a = np.array([1, 0, 1, 0, 1]), np.array([1.0, 0.5, -0.3, 0.2, 0.1]), np.zeros(5)
    expected = system.inverse_dynamics_derivatives(q.astype(float), v, a, method="local")
    for positions in (q, q.astype(np.float32)):
        for x, y in zip(body_derivatives.compiled_partials(system, positions, v, a), expected):
            np.testing.assert_array_equal(x, y)
    for bad, words in ((np.ones(3), "q must hold 5"), (np.ones(5) + 0j, "q must hold 5 real")):
        with pytest.raises(DimensionError, match=words):
            body_derivatives.compiled_partials(system, bad, v, a)


def test_derivatives_leave_the_model_identity_as_it_was():
    """The checks the derivatives make once per system are not part of what the system is: its
    identity (what a result store records) is the same before and after, and a pickled system
    checks its bodies again in the process that loads it."""
    import pickle

    from sko.scale.identity import model_identity

    system = tutorial_body_with_children.build()
    before = model_identity(system)
    q = system.random_configuration(0)
    expected = system.inverse_dynamics_derivatives(q)
    assert system._pose_free and model_identity(system) == before
    loaded = pickle.loads(pickle.dumps(system))
    assert not loaded._pose_free and not loaded._complex_carried
    for x, y in zip(loaded.inverse_dynamics_derivatives(q), expected):
        np.testing.assert_array_equal(x, y)


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 7))
def test_the_compiled_twin_equals_the_reference_recursion(seed, n):
    """The kernel (:mod:`sko.engine.local_derivatives`) runs, and gives what the numpy recursion
    and the mass matrix request give, ℳ included."""
    from sko.engine import use_backend
    from sko.systems import body_derivatives

    system = random_system(seed, n_bodies=n)
    rng = np.random.default_rng(seed)
    q, v = random_state(system, rng)
    a = rng.standard_normal(system.nv)
    compiled = body_derivatives.compiled_partials(system, q, v, a)
    assert compiled is not None
    reference = (*body_derivatives.inverse_dynamics_partials(system, q, v, a), system.mass_matrix(q))
    with use_backend("reference"):
        assert body_derivatives.compiled_partials(system, q, v, a) is None
    scale = max(np.abs(y).max(initial=1e-300) for y in reference)
    for got, expected in zip(compiled, reference):
        assert _relative(got, expected, scale) < 1e-12


def test_an_overflowing_state_is_named():
    from sko.graphs.errors import NonFiniteError

    system = random_system(2, n_bodies=4)
    q, v, a = system.random_configuration(0), np.full(system.nv, 1e200), np.zeros(system.nv)
    with pytest.raises(NonFiniteError, match="body"):
        system.inverse_dynamics_derivatives(q, v, a, method="local")
    with pytest.raises(NonFiniteError, match="state 1 of the batch"):
        system.inverse_dynamics_derivatives(np.array([q, q]), np.array([0 * v, v]), np.array([a, a]), method="local")


@pytest.mark.parametrize("row", [0, 1])
@pytest.mark.parametrize("path", ["compiled", "reference"])
def test_a_state_its_joints_reject_is_named_in_a_batch(path, row):
    """A zero quaternion in a state of a batch (the first call of a fresh system): the joint's
    error says which state."""
    from sko.engine import use_backend
    from sko.errors import JointError

    system = flexible_examples()["flexible-spacecraft"]()
    rng = np.random.default_rng(0)
    Q = np.array([system.random_configuration(rng) for _ in range(3)])
    Q[row, :4] = 0.0
    V, A = rng.normal(size=(2, 3, system.nv))
    with use_backend(path), pytest.raises(JointError, match=f"^state {row} of the batch: .*zero norm"):
        system.inverse_dynamics_derivatives(Q, V, A)


@pytest.mark.parametrize("method", ["auto", "local", "complex_step"])
@pytest.mark.parametrize("path", ["compiled", "reference"])
def test_a_zero_quaternion_of_a_body_below_the_base_is_named_at_one_state(path, method):
    """The tangent columns of a ball joint (the coordinate maps) name the body whose quaternion
    has no rotation, as the dynamics do."""
    from sko.engine import use_backend
    from sko.errors import JointError

    system = random_system(3, n_bodies=6)
    balls = [k for k in system.bodies if isinstance(getattr(system.body(k), "joint", None), Spherical)]
    assert balls and balls[-1] != system.bodies[0]
    q = system.random_configuration(0)
    q[system.q_slices[balls[-1]].start: system.q_slices[balls[-1]].start + 4] = 0.0
    with use_backend(path), pytest.raises(JointError, match=f"body {balls[-1]!r}: .*zero norm"):
        system.inverse_dynamics_derivatives(q, method=method)
    with pytest.raises(JointError, match=f"body {balls[-1]!r}: .*zero norm"):
        system.qdot_matrix(q)


class _OverflowingSpring(RigidBody):
    """A rigid body with a hinge spring in Python that overflows for ``q > 0.9``."""

    def hinge_force(self, q, qd):
        return np.exp(800.0 * q[:1]) + 0.0 * qd


class _PythonOverflowingSpring(_OverflowingSpring):
    def compiled_state(self):
        return None


@pytest.mark.parametrize("kind", [_OverflowingSpring, _PythonOverflowingSpring], ids=["compiled state", "Python state"])
def test_an_overflowing_python_hinge_force_is_named(kind):
    """The Python hinge forces' columns are checked too: their overflow raises, as the dynamics
    and the complex step do, instead of passing infinities on (or, in the compiled forward
    dynamics, a zero θ̈)."""
    from sko.graphs.errors import NonFiniteError

    inertia = spatial_inertia(1.0, [0.1, 0.0, -0.3], np.diag([0.02, 0.03, 0.04]))
    system = MultibodySystem([RigidBody("a", None, Revolute([0, 1, 0]), inertia), kind("b", "a", Revolute([1, 0, 0]), inertia)])
    q, v, a = np.array([0.3, 1.0]), np.array([0.2, -0.1]), np.array([0.1, 0.5])
    with np.errstate(over="ignore"):
        for function in (system.forward_dynamics, system.inverse_dynamics):  # the compiled dynamics too
            with pytest.raises(NonFiniteError, match="overflow"):
                function(q, v, a)
            with pytest.raises(NonFiniteError, match="state 1 of the batch"):
                function(np.array([0 * q, q]), np.array([v, v]), np.array([a, a]))
        for function in (system.inverse_dynamics_derivatives, system.forward_dynamics_derivatives):
            with pytest.raises(NonFiniteError, match="overflow"):
                function(q, v, a, method="local")
            with pytest.raises(NonFiniteError, match="state 1 of the batch"):
                function(np.array([0 * q, q]), np.array([v, v]), np.array([a, a]), method="local")


class _BeadOfChangingShape(PythonBead):
    """A bead whose ``a`` loses an entry at complex states: a contract violation."""

    def at_state(self, q, qd, inboard, gravity):
        s = super().at_state(q, qd, inboard, gravity)
        if not (np.iscomplexobj(q) and np.imag(q).any()):
            return s
        return NodeState(E=s.E, H=s.H, M=s.M, a=s.a[:2], b=s.b, V=s.V, potential=s.potential)


@pytest.mark.parametrize("method", ["local", "complex_step"])
def test_a_body_whose_outputs_change_shape_at_complex_states_is_named(method):
    from sko.bodies import BodyError

    base = tutorial_body_type.build()
    system = MultibodySystem([_BeadOfChangingShape(b.name, b.parent, b.mass, b.start, b.direction, b.spring, attach=b.attach)
                              if isinstance(b, tutorial_body_type.Bead) else b for b in map(base.body, base.bodies)],
                             gravity=base.gravity)
    q = system.random_configuration(1)
    with pytest.raises(BodyError, match=r"its a has shape \(2,\) at a complex state but \(3,\)"):
        system.inverse_dynamics_derivatives(q, np.ones(system.nv), np.ones(system.nv), method=method)


class _SpringDroppingTheStep(RigidBody):
    """A user's rigid body with a hinge spring ``3 |q|`` (``abs`` drops a complex step's part)."""

    def hinge_force(self, q, qd):
        return 3.0 * np.abs(q)


@pytest.mark.parametrize("method", ["local", "complex_step"])
def test_a_library_subclass_overriding_the_hinge_force_is_checked(method):
    """A subclass of a library type that is valid by construction is checked as a user body type
    where it overrides ``hinge_force``: not derivatives silently missing its spring."""
    from sko.bodies import BodyError

    inertia = spatial_inertia(1.0, [0.1, 0.0, -0.3], np.diag([0.02, 0.03, 0.04]))
    system = MultibodySystem([RigidBody("a", None, Revolute([0, 1, 0]), inertia),
                              _SpringDroppingTheStep("b", "a", Revolute([1, 0, 0]), inertia)])
    q, v, a = np.array([0.3, 0.4]), np.array([0.2, -0.1]), np.array([0.1, 0.5])
    with pytest.raises(BodyError, match="body 'b' .*hinge_force drops the imaginary part"):
        system.inverse_dynamics_derivatives(q, v, a, method=method)


def _refusing_complex_steps():
    """The tutorial's bead kernel refusing a state whose coordinate carries an imaginary part as
    small as a complex step's (the engine's random complex states, with larger ones, pass)."""
    from sko.engine.state_kernels import state_kernel, views
    from tests.compiled.malformed_kernels import BEAD

    @state_kernel
    def refuses_complex_steps(arena, row, reals, terms, constants):
        BEAD(arena, row, reals, terms, constants)
        q = views(arena, row, reals)[1]
        return q[0].imag == 0.0 or abs(q[0].imag) > 1e-20

    return refuses_complex_steps


def test_a_kernel_refusing_a_complex_step_is_named():
    """A user's state kernel that takes the real state but refuses a complex step of its own
    coordinate: a KernelError naming the body (and the state of a batch), not a wrong column."""
    from sko.engine.state_kernels import KernelError
    from tests.compiled.malformed_kernels import system_with

    system = system_with(_refusing_complex_steps())
    q, v, a = np.array([0.4, 0.2, 0.3]), np.array([0.5, -0.3, 0.8]), np.array([0.1, 0.2, -0.3])
    system.inverse_dynamics(q, v, a)  # the real state is taken
    with pytest.raises(KernelError, match="body 'bead2' .*rejected a complex step of its own inputs"):
        system.inverse_dynamics_derivatives(q, v, a, method="local")
    with pytest.raises(KernelError, match="state 0 of the batch: body 'bead2'"):
        system.inverse_dynamics_derivatives(np.array([q, q]), np.array([v, v]), np.array([a, a]), method="local")


class _BuoyantBead(PythonBead):
    """A bead with a lift ``½ m Rᵀ g`` in ``b``, read from its frame's world rotation: against the
    contract (the pose is for the potential and the records' poses only)."""

    def at_state(self, q, qd, inboard, gravity):
        s = super().at_state(q, qd, inboard, gravity)
        return NodeState(E=s.E, H=s.H, M=s.M, a=s.a, b=s.b + 0.5 * self.mass * (inboard.rotation.T @ gravity), V=s.V,
                         potential=s.potential)


def test_a_body_reading_its_frames_pose_is_named_not_differentiated_wrongly():
    """The local partials cannot see a dependence on the inboard frame's pose: such a body type
    is named (the default method too) while the whole complex step still takes it."""
    from sko.bodies import BodyError

    base = tutorial_body_type.build()
    system = MultibodySystem([_BuoyantBead(b.name, b.parent, b.mass, b.start, b.direction, b.spring, attach=b.attach)
                              if isinstance(b, tutorial_body_type.Bead) else b for b in map(base.body, base.bodies)],
                             gravity=base.gravity)
    q, v, a = system.random_configuration(1), np.ones(system.nv), np.ones(system.nv)
    for method in ("auto", "local"):
        with pytest.raises(BodyError, match=r"body 'bead-on-beam' \(_BuoyantBead\): its b depends on the pose"):
            system.inverse_dynamics_derivatives(q, v, a, method=method)
    assert np.isfinite(system.inverse_dynamics_derivatives(q, v, a, method="complex_step").dtau_dq).all()


class _TwoForcesForOneJoint(RigidBody):
    def hinge_force(self, q, qd):
        return np.r_[q, q]


@pytest.mark.parametrize("method", ["local", "complex_step"])
def test_a_hinge_force_of_the_wrong_shape_is_named(method):
    from sko.bodies import BodyError

    inertia = spatial_inertia(1.0, [0.1, 0.0, -0.3], np.diag([0.02, 0.03, 0.04]))
    system = MultibodySystem([RigidBody("a", None, Revolute([0, 1, 0]), inertia),
                              _TwoForcesForOneJoint("b", "a", Revolute([1, 0, 0]), inertia)])
    q, v = np.array([0.3, 0.2]), np.array([0.2, -0.1])
    with pytest.raises(BodyError, match=r"body 'b' .*hinge_force returns shape \(2,\), expected \(1,\)"):
        system.inverse_dynamics_derivatives(q, v, v, method=method)
    with pytest.raises(BodyError, match=r"hinge_force returns shape \(2,\)"):
        system.forward_dynamics(q, v, v)


class _RootSpring(RigidBody):
    """A hinge force that is NaN for ``q < 0`` but finite at complex states (``√q``)."""

    def hinge_force(self, q, qd):
        return np.sqrt(q + 0j if np.iscomplexobj(q) or np.iscomplexobj(qd) else q) + 0 * qd


@pytest.mark.parametrize("method", ["auto", "local", "complex_step"])
def test_a_hinge_force_that_is_not_a_number_at_the_real_state_is_named(method):
    """Where the dynamics are not numbers the derivatives do not exist: a hinge force NaN at the
    real state (finite at the complex states of a step) raises, as the dynamics do, instead of
    giving finite derivatives."""
    from sko.graphs.errors import NonFiniteError

    inertia = spatial_inertia(1.0, [0.1, 0.0, -0.3], np.diag([0.02, 0.03, 0.04]))
    system = MultibodySystem([RigidBody("a", None, Revolute([0, 1, 0]), inertia),
                              _RootSpring("b", "a", Revolute([1, 0, 0]), inertia)])
    q, v, a = np.array([0.3, -0.5]), np.array([0.2, -0.1]), np.array([0.1, 0.5])
    with np.errstate(invalid="ignore"):
        with pytest.raises(NonFiniteError):
            system.inverse_dynamics(q, v, a)
        with pytest.raises(NonFiniteError):
            system.inverse_dynamics_derivatives(q, v, a, method=method)
        with pytest.raises(NonFiniteError, match="state 1 of the batch"):
            system.inverse_dynamics_derivatives(np.array([-q, q]), np.array([v, v]), np.array([a, a]), method=method)
        with pytest.raises(NonFiniteError):
            system.forward_dynamics_derivatives(q, v, a, method=method)
    fine = system.inverse_dynamics_derivatives(np.abs(q), v, a, method=method)  # where it is a number: finite
    assert np.isfinite(fine.dtau_dq).all()


def _work_after_a_call(system, q, v, a):
    """The work buffer of the compiled recursion after one call at ``(q, v, a)``, and ``D``."""
    from sko.engine import local_derivatives as ld
    from sko.systems.body_derivatives import _qdot_matrix

    layout = system._engine.layout
    plan, size, scratch = layout.local_plan
    argtypes = ld.signature(layout)
    ld.partials.compile(argtypes)
    entry = ld.partials.overloads[argtypes].entry_point
    arena = np.empty(layout.size, dtype=complex)  # zeroed by the kernel
    work, D = np.empty(size), np.zeros((system.nv, 3 * system.nv))
    status = entry(layout.table(np.complex128), layout.reals, arena, q, v, np.ascontiguousarray(_qdot_matrix(system, q)),
                   a, plan, work, np.empty(scratch), D, int(Terms.MOTION), True, ld.steps(layout))
    assert status == -1
    return layout, work, D


@pytest.mark.parametrize("seed", [3, 5])
def test_the_structural_zeros_are_the_partials_that_are_zero(seed):
    """Each body's flags (:data:`~sko.engine.local_derivatives.Nonzero`) say, column by column,
    whether its ``∂E``, ``∂H``, ``∂M`` and each record's ``∂Γ`` hold a nonzero; for a flexible body
    on a ball joint ``∂E`` moves along the joint's columns only, ``∂M`` along the modes' only,
    ``∂H`` never, and no column along the velocities or accelerations moves any of them. The
    recursion that skips the zero blocks still gives the whole complex step (``_agree``)."""
    from sko.bodies.flexible import FlexibleBody
    from sko.engine.local_derivatives import Nonzero

    system = random_system(seed, n_bodies=6)
    rng = np.random.default_rng(seed)
    q, v = random_state(system, rng)
    layout, work, _ = _work_after_a_call(system, q, v, rng.standard_normal(system.nv))
    seen = 0
    for j, pl in enumerate(layout.local_plan.plan):
        body = system.body(layout.bodies[layout.order[j]])
        n, m = body.dof_size, body.node_dim
        xc, flags = 3 * n, pl[Plan.NONZERO]
        blocks = {"E": (pl[Plan.DE], m * 6), "H": (pl[Plan.DH], n * m), "M": (pl[Plan.DM], m * m)}
        for name, (start, size) in blocks.items():
            flag = work[flags + getattr(Nonzero, name) * xc: flags + (getattr(Nonzero, name) + 1) * xc]
            partial = work[start: start + xc * size].reshape(xc, size)
            np.testing.assert_array_equal(flag != 0, (partial != 0).any(axis=1), err_msg=f"{body.name} ∂{name}")
            assert not flag[n:].any()  # θ̇ (Terms.RATES or not: E, H, M depend on q alone) and θ̈
        if isinstance(body, FlexibleBody) and type(body.joint) is Spherical and body.r > 0:
            seen += 1
            joint = body.joint.nv
            flag = lambda name: work[flags + getattr(Nonzero, name) * xc: flags + getattr(Nonzero, name) * xc + n] != 0
            assert flag("E")[:joint].all() and not flag("E")[joint:].any()
            assert flag("M")[joint:].all() and not flag("M")[:joint].any()
            assert not flag("H").any()
    assert seen > 0
    _agree(system, seed)

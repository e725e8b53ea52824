"""Centroidal dynamics (CENTROIDAL.md): the identities on random rigid, flexible, geared and
coupled systems, the compiled path against the reference path, batches against single states,
and Pinocchio's ``ccrba``/``dccrba`` on example-robot-data robots (rows ``[l; k]`` there,
``[k; l]`` here; columns through :class:`sko.interop.PinocchioMap`)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sympy

from papers.tutorial_body_type import Bead
from papers.tutorial_body_type import build as build_beads
from sko import spatial as sp
from sko.bodies import BodyError, Fixed, Free, NodeState, Prismatic, Revolute, Spherical
from sko.errors import RigidSystemError
from sko.graphs.errors import NonFiniteError
from sko.examples.bodies import flexible_examples, random_system
from sko.systems import MultibodySystem, SystemBuilder
from sko.verify import run
from sko.systems.centroidal import Packed, momentum_matrix_rate_by_complex_step
from sko.engine.dispatch import use_backend
from tests.bodies.helpers import random_state
from tests.embedding.random_clusters import random_clustered_system
from tests.rigid.random_systems import random_rigid_system

SWAP = np.r_[3:6, 0:3]  #: Pinocchio's rows [l; k] from ours [k; l], and back


def _close(actual, expected, rtol=1e-12):
    actual, expected = np.asarray(actual), np.asarray(expected)
    scale = max(np.abs(expected).max(initial=0.0), 1.0)
    assert np.abs(actual - expected).max(initial=0.0) <= rtol * scale, np.abs(actual - expected).max() / scale


def _floating_system(seed: int):
    """A free-floating base with a random tree of revolute, prismatic and ball joints under gravity."""
    rng = np.random.default_rng(seed)
    b = SystemBuilder(gravity=rng.normal(size=3) * 5)
    makers = [lambda: Revolute(rng.normal(size=3)), lambda: Prismatic(rng.normal(size=3)), lambda: Spherical()]
    names = ["base"]
    x = rng.uniform(0.05, 0.15, 3)  # principal moments (y + z, x + z, x + y): physical
    b.add_body("base", None, Free(), np.eye(6), mass=rng.uniform(1, 5), com=rng.normal(size=3) * 0.1,
               inertia_com=np.diag([x[1] + x[2], x[0] + x[2], x[0] + x[1]]))
    for i in range(int(rng.integers(1, 6))):
        parent = names[int(rng.integers(len(names)))]
        x = rng.uniform(0.01, 0.1, 3)
        b.add_body(f"b{i}", parent, makers[int(rng.integers(3))](),
                   sp.pose_transform(rng.normal(size=3) * 0.3, rng.uniform(-np.pi, np.pi, 3)),
                   mass=rng.uniform(0.2, 3.0), com=rng.normal(size=3) * 0.2,
                   inertia_com=np.diag([x[1] + x[2], x[0] + x[2], x[0] + x[1]]))
        names.append(f"b{i}")
    return b.build()


def _clustered(seed: int):
    builder, theta0 = random_clustered_system(seed)
    return builder.build(initial=theta0)


def _systems():
    """Every system kind: rigid forests, a floating base, flexible and geared examples, random
    mixed trees and coupled (clustered) systems."""
    out = [(f"rigid-{s}", lambda s=s: random_rigid_system(s)) for s in range(3)]
    out += [(f"floating-{s}", lambda s=s: _floating_system(s)) for s in range(2)]
    out += [(name, make) for name, make in sorted(flexible_examples().items())]
    out += [(f"mixed-{s}", lambda s=s: random_system(s, n_bodies=6)) for s in range(2)]
    out += [(f"clustered-{s}", lambda s=s: _clustered(s)) for s in range(3)]
    return out


SYSTEMS = _systems()


def _base_wrench_map(system, q):
    """``X_G^* ⁰X_B^*`` (6 × 6) of the (one) base body, from its world pose."""
    (base,) = system.tree.base_bodies()
    frame = system.node_states(q)[base].attachments[None]
    R, p = np.asarray(frame.rotation), np.asarray(frame.position)
    c = system.centroidal(q).center_of_mass
    X = np.zeros((6, 6))
    X[:3, :3], X[3:, 3:], X[:3, 3:] = R, R, sp.skew(p - c) @ R
    return X


@pytest.fixture(params=SYSTEMS, ids=[name for name, _ in SYSTEMS])
def case(request):
    system = request.param[1]()
    rng = np.random.default_rng(5)
    return system, *random_state(system, rng), rng.standard_normal(system.nv)


def test_momentum_is_the_matrix_times_v_and_compiled_equals_reference(case):
    system, q, v, _ = case
    out = system.centroidal(q, v)
    _close(out.momentum, out.momentum_matrix @ v)
    _close(system.centroidal_momentum(q, v), out.momentum)
    _close(system.centroidal_momentum_matrix(q), out.momentum_matrix, 0.0)  # A_G alone: the same kernel's numbers
    with use_backend("reference"):
        ref = system.centroidal(q, v)
    for a, b in zip(out, ref):
        _close(a, b)
    I = out.inertia  # Eq. 4: block diagonal, m 1 below, the rotational inertia about c symmetric above
    _close(I[:3, 3:], np.zeros((3, 3)))
    _close(I[3:, 3:], out.mass * np.eye(3))
    _close(I[:3, :3], I[:3, :3].T)
    assert np.linalg.eigvalsh(I[:3, :3]).min() > 0


def test_rate_against_the_complex_step_and_the_reference(case):
    system, q, v, _ = case
    rate = system.centroidal_momentum_matrix_rate(q, v)
    _close(rate, momentum_matrix_rate_by_complex_step(system, q, v), 1e-10)
    with use_backend("reference"):
        _close(system.centroidal_momentum_matrix_rate(q, v), rate, 1e-10)


def test_batches_equal_single_states(case):
    system, q, v, _ = case
    rng = np.random.default_rng(2)
    Q, V = zip(*(random_state(system, rng) for _ in range(3)))
    Q, V = np.array(Q), np.array(V)
    batch = system.centroidal(Q, V)
    rate = system.centroidal_momentum_matrix_rate(Q, V)
    for s in range(3):
        one = system.centroidal(Q[s], V[s])
        for a, b in zip(batch, one):
            _close(a[s], b)
        _close(rate[s], system.centroidal_momentum_matrix_rate(Q[s], V[s]))
    np.testing.assert_array_equal(system.centroidal_momentum_matrix(Q), batch.momentum_matrix)
    assert system.centroidal(Q[:0], V[:0]).momentum_matrix.shape == (0, 6, system.nv)


def test_floating_base_rows_of_the_mass_matrix_and_the_net_external_wrench(case):
    """CENTROIDAL.md §3, §4: for a free-floating base, ``A_G = X_G^* ⁰X_B^* ℳ(B, :)`` and
    ``A_G dv + Ȧ_G v = [0; m g] + X_G^* ⁰X_B^* τ_B`` with ``τ_B`` the base's six generalised
    forces of the inverse dynamics."""
    system, q, v, dv = case
    bases = system.tree.base_bodies()
    if len(bases) != 1 or system.body(bases[0]).dof_size != 6 or type(getattr(system.body(bases[0]), "joint", None)) is not Free:
        pytest.skip("no free-floating base")
    B = system.v_slice(bases[0])
    X = _base_wrench_map(system, q)
    out = system.centroidal(q, v)
    _close(out.momentum_matrix, X @ system.mass_matrix(q)[B], 1e-11)
    tau = system.inverse_dynamics(q, v, dv)[B]
    gravity = np.concatenate([np.zeros(3), out.mass * np.asarray(system.gravity)[-3:]])
    _close(out.momentum_matrix @ dv + system.centroidal_momentum_matrix_rate(q, v) @ v, gravity + X @ tau, 1e-10)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_random_rigid_trees_identities(seed):
    """On random rigid forests of constant-``S`` joints (the recursion of Eq. 6) and of every
    joint (the complex step): compiled against reference, rate against the complex step."""
    system = random_rigid_system(seed, constant_motion=bool(seed % 2))
    rng = np.random.default_rng(seed)
    q, v = system.random_configuration(rng), rng.standard_normal(system.nv)
    out = system.centroidal(q, v)
    with use_backend("reference"):
        ref = system.centroidal(q, v)
    _close(out.momentum_matrix, ref.momentum_matrix)
    _close(out.center_of_mass, system.center_of_mass(q))
    _close(system.centroidal_momentum_matrix_rate(q, v), momentum_matrix_rate_by_complex_step(system, q, v), 1e-10)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_random_floating_bases(seed):
    system = _floating_system(seed)
    rng = np.random.default_rng(seed)
    q, v, dv = system.random_configuration(rng), rng.standard_normal(system.nv), rng.standard_normal(system.nv)
    X = _base_wrench_map(system, q)
    A = system.centroidal_momentum_matrix(q)
    _close(A, X @ system.mass_matrix(q)[:6], 1e-11)
    gravity = np.concatenate([np.zeros(3), system.centroidal(q).mass * np.asarray(system.gravity)[-3:]])
    rate = system.centroidal_momentum_matrix_rate(q, v)
    _close(A @ dv + rate @ v, gravity + X @ system.inverse_dynamics(q, v, dv)[:6], 1e-10)


@pytest.mark.parametrize("distance", [1e6, 1e16])
@pytest.mark.parametrize("path", ["compiled", "reference"])
@pytest.mark.parametrize("make", [flexible_examples()["flexible-spacecraft"],
                                  lambda: random_system(1, n_bodies=6, floating_base=True),
                                  lambda: _floating_system(0)], ids=["spacecraft", "mixed", "rigid"])
def test_a_translated_system_keeps_its_centroidal_terms(make, path, distance):
    """A floating system moved far in the world keeps ``A_G``, ``I_G``, ``h_G`` and ``Ȧ_G`` to
    rounding and its centre of mass moves by as much, with no numpy warning: about its first base
    body's origin ``o`` (CENTROIDAL.md §3), with the base's ``Ψ`` written by blocks and ``p − o``
    a difference of positions, no digit depends on the distance (formed as ``E ⁰X_o``, ``I_G``
    was off by 1e-8 relative at 10⁸, by 3 at 10¹⁶)."""
    system = make()
    (base,) = system.tree.base_bodies()
    assert isinstance(system.body(base).joint, Free)
    rng = np.random.default_rng(2)
    q, v = random_state(system, rng)
    far = q.copy()
    far[system.q_slice(base)][4:] += distance * np.array([1.0, -0.7, 0.3])  # a free joint's q: (quaternion, position)
    d = np.subtract(*(system.node_states(x)[base].attachments[None].position for x in (far, q)))  # in world axes
    with use_backend(path), warnings.catch_warnings():
        warnings.simplefilter("error")
        near_terms, far_terms = system.centroidal_terms(q, v), system.centroidal_terms(far, v)
        rates = system.centroidal_momentum_matrix_rate(q, v), system.centroidal_momentum_matrix_rate(far, v)
    centre = Packed.of(system.nv).center
    _close(far_terms[:3, centre], near_terms[:3, centre] + d, 1e-14)
    _close(far_terms[:, :centre], near_terms[:, :centre], 1e-12)
    _close(rates[1], rates[0], 1e-12)


@pytest.mark.parametrize("path", ["compiled", "reference"])
def test_a_rigid_system_at_1e200_keeps_its_centroidal_terms(path):
    """Far enough that ``Ψᵀ M Ψ`` formed from ``E ⁰X_o`` overflowed (NaN, numpy warnings only)."""
    system = _floating_system(0)
    rng = np.random.default_rng(0)
    q, v = system.random_configuration(rng), rng.normal(size=system.nv)
    far = q.copy()
    far[system.q_slice(system.bodies[0])][4:] += 1e200
    with use_backend(path), warnings.catch_warnings():
        warnings.simplefilter("error")
        near_terms, far_terms = system.centroidal_terms(q, v), system.centroidal_terms(far, v)
    centre = Packed.of(system.nv).center
    _close(far_terms[:, :centre], near_terms[:, :centre], 1e-12)
    _close(far_terms[:3, centre], near_terms[:3, centre] + 1e200, 1e-14)


@pytest.mark.parametrize("path", ["compiled", "reference"])
def test_centroidal_terms_that_overflow_are_a_non_finite_error_naming_q_and_v(path):
    system = _floating_system(0)
    rng = np.random.default_rng(3)
    q, v = system.random_configuration(rng), rng.normal(size=system.nv)
    v *= 1e308 / np.abs(v).max()
    with use_backend(path), pytest.raises(NonFiniteError, match=r"centroidal terms overflow .*max \|q\| = .*"
                                                                r"max \|v\| = 1e\+308"):
        system.centroidal_terms(q, v)


def test_a_massless_system_has_no_centre_of_mass():
    b = SystemBuilder()
    b.add_body("a", None, Revolute([0, 0, 1]), np.eye(6), mass=0.0, com=np.zeros(3), inertia_com=np.zeros((3, 3)))
    try:
        system = b.build()
    except RigidSystemError:
        pytest.skip("the builder refuses a massless system")
    for path in ("compiled", "reference"):
        with use_backend(path), pytest.raises(RigidSystemError, match="total mass"):
            system.centroidal_momentum_matrix(np.zeros(1))


def _two_links(m1: float, m2: float, floating: bool = False) -> MultibodySystem:
    """Two links with rotational inertia, of masses ``m1`` and ``m2``, on a fixed or free base."""
    b = SystemBuilder()
    b.add_body("a", None, Free() if floating else Revolute([0, 0, 1]), None, mass=m1, com=np.zeros(3),
               inertia_com=np.diag([0.1, 0.2, 0.25]))
    b.add_body("b", "a", Revolute([0, 1, 0]), sp.pose_transform([1.0, 0, 0]), mass=m2, com=np.zeros(3),
               inertia_com=np.diag([0.1, 0.1, 0.15]))
    return b.build()


@pytest.mark.parametrize("floating", [False, True])
@pytest.mark.parametrize("path", ["compiled", "reference"])
def test_zero_total_mass_with_rotational_inertia_has_no_centre_of_mass_on_every_path(path, floating):
    """CENTROIDAL.md §2–§3: the centroidal terms are about the centre of mass ``c = h / m``, the
    frame G at it; at total mass 0 (bodies with rotational inertia only) there is none, however
    defined the angular momentum about a point is. Every request refuses it saying so, one state
    or a batch, real or complex (the rate's complex step): the compiled kernels answered the
    complex step with a finite ``A_G`` while the reference refused it."""
    system = _two_links(0.0, 0.0, floating)
    rng = np.random.default_rng(4)
    q, v = system.random_configuration(rng), rng.normal(size=system.nv)
    calls = {"A_G": lambda: system.centroidal_momentum_matrix(q), "terms": lambda: system.centroidal_terms(q, v),
             "rate": lambda: system.centroidal_momentum_matrix_rate(q, v),
             "batch": lambda: system.centroidal_momentum_matrix(np.stack([q, q])),
             "complex A_G": lambda: system.centroidal_momentum_matrix(q + 1e-30j * system.qdot(q, v)),
             "complex step": lambda: momentum_matrix_rate_by_complex_step(system, q, v)}
    for name, call in calls.items():
        with use_backend(path), pytest.raises(RigidSystemError, match=r"the total mass is 0, so there is no centre of "
                                                                     r"mass and no frame G at it"):
            call()


@pytest.mark.parametrize("masses", [(0.0, 2.0), (2.0, 0.0)])
def test_a_massless_subtree_with_rotational_inertia_keeps_its_angular_momentum(masses):
    """A massless body with rotational inertia in a system of positive mass: its spin counts in
    the angular momentum, alike on both paths and as the momentum of the Pinocchio-free check
    ``A_G v = h_G``."""
    system = _two_links(*masses, floating=True)
    rng = np.random.default_rng(5)
    q, v = system.random_configuration(rng), rng.normal(size=system.nv)
    with use_backend("reference"):
        reference = system.centroidal(q, v)
    with use_backend("compiled"):
        compiled = system.centroidal(q, v)
    for ours, theirs in zip(compiled, reference):
        _close(ours, theirs, 1e-12)
    spin = np.zeros(system.nv)
    spin[system.v_slice("b")] = 1.0  # the second link turning alone about its own axis
    assert abs(system.centroidal_momentum_matrix(q) @ spin)[:3].max() > 0.05


def test_a_subnormal_total_mass_has_its_rate_on_both_paths():
    """Total mass 1e-320 (subnormal) is positive: its centre of mass is defined, and the compiled
    path gave the rate; the reference's complex step divided by the complex mass, which numpy
    overflows for a subnormal divisor, and blamed q and v ("the coordinates q or the velocities v
    are too large")."""
    system = _two_links(1e-320, 1e-320)
    rng = np.random.default_rng(6)
    q, v = system.random_configuration(rng), rng.normal(size=system.nv)
    with use_backend("compiled"):
        compiled = system.centroidal_momentum_matrix_rate(q, v), system.centroidal_momentum_matrix(q)
    with use_backend("reference"):
        reference = system.centroidal_momentum_matrix_rate(q, v), system.centroidal_momentum_matrix(q)
    for ours, theirs in zip(compiled, reference):  # (c itself keeps the few digits of a subnormal h / m)
        _close(ours, theirs, 1e-12)
    assert np.abs(compiled[0][:3]).max() > 0.01  # the links' spin about the centre of mass


# ----------------------------------------------------------------------------- Pinocchio
pin = pytest.importorskip("pinocchio")

ROBOTS = [("ur_description/urdf/ur5_robot.urdf", False), ("panda_description/urdf/panda.urdf", False),
          ("solo_description/robots/solo12.urdf", True), ("talos_data/robots/talos_reduced.urdf", True)]


def _robot(rel: str, floating: bool):
    from tests.rigid.pinocchio_map import robots_dir
    from tests.rigid.test_pinocchio import _load

    root = robots_dir()
    if root is None or not (root / rel).exists():
        pytest.skip(f"example-robot-data has no {rel}")
    return _load(root / rel, floating)


@pytest.mark.parametrize("rel, floating", ROBOTS, ids=[r.split("/")[-1] for r, _ in ROBOTS])
def test_against_pinocchio(rel, floating):
    from sko.interop import PinocchioMap

    system, model = _robot(rel, floating)
    data, to_pin = model.createData(), PinocchioMap(system, model)
    L = to_pin.lift
    rng = np.random.default_rng(0)
    for _ in range(3):
        q, v = system.random_configuration(rng), rng.standard_normal(system.nv)
        qp, vp = to_pin.q(q), to_pin.v(v)
        Ag = pin.ccrba(model, data, qp, vp).copy()
        hg, Ig, com = data.hg.vector.copy(), data.Ig.matrix().copy(), data.com[0].copy()
        dAg = pin.dccrba(model, data, qp, vp).copy()
        for path in ("compiled", "reference"):
            with use_backend(path):
                out = system.centroidal(q, v)
                rate = system.centroidal_momentum_matrix_rate(q, v)
            _close(out.momentum_matrix, Ag[SWAP] @ L)
            _close(out.momentum, hg[SWAP])
            _close(out.inertia, Ig[np.ix_(SWAP, SWAP)])
            _close(out.center_of_mass, com)
            _close(rate, dAg[SWAP] @ L)


def test_coupled_panda_against_pinocchio_full_model():
    """The panda's coupled finger (``mimic="couple"``, a cluster) against Pinocchio's full model,
    whose mimic joint is an ordinary one (its mimic model takes no ``ccrba``):
    ``A_G = A_G,pin L`` and ``Ȧ_G = Ȧ_G,pin L`` with ``ν_pin = L ν`` (``L`` constant)."""
    from sko.interop import PinocchioMap
    from sko.io import load_urdf
    from tests.rigid.pinocchio_map import robots_dir

    root = robots_dir()
    if root is None:
        pytest.skip("example-robot-data is not installed")
    path = root / "panda_description/urdf/panda.urdf"
    system = load_urdf(path)
    model = pin.buildModelFromUrdf(str(path))
    data, to_pin = model.createData(), PinocchioMap(system, model)
    assert system.nv < model.nv  # coupled: fewer coordinates than Pinocchio's full model
    rng = np.random.default_rng(1)
    for _ in range(3):
        q, v = system.random_configuration(rng), rng.standard_normal(system.nv)
        qp, vp = to_pin.q(q), to_pin.v(v)
        Ag = pin.ccrba(model, data, qp, vp).copy()
        hg = data.hg.vector.copy()
        dAg = pin.dccrba(model, data, qp, vp).copy()
        out = system.centroidal(q, v)
        _close(out.momentum_matrix, Ag[SWAP] @ to_pin.lift)
        _close(out.momentum, hg[SWAP])
        _close(system.centroidal_momentum_matrix_rate(q, v), dAg[SWAP] @ to_pin.lift)


@pytest.mark.parametrize("path", ["compiled", "reference"])
@pytest.mark.parametrize("name", ["rigid-0", "flexible-spacecraft"])
def test_bad_inputs_are_named_and_inputs_are_not_mutated(path, name):
    from sko.graphs.errors import DimensionError, NonFiniteError

    system = dict(SYSTEMS)[name]()
    q, v = random_state(system, np.random.default_rng(3))
    q0, v0 = q.copy(), v.copy()
    with use_backend(path):
        with pytest.raises(DimensionError, match="nq"):
            system.centroidal_momentum_matrix(np.zeros(system.nq + 1))
        with pytest.raises(NonFiniteError, match="q"):
            system.centroidal_momentum(np.full(system.nq, np.nan), v)
        with pytest.raises(DimensionError, match="nv"):
            system.centroidal_momentum_matrix_rate(q, np.zeros(system.nv + 2))
        with pytest.raises(NonFiniteError, match="v"):
            system.centroidal_momentum_matrix_rate(q, np.full(system.nv, np.inf))
        for bad in (q + 1e-20j, list(map(sympy.Float, q)), [sympy.Symbol("x")] * system.nq):  # no complex step there
            with pytest.raises(DimensionError, match="q must be real floating-point numbers"):
                system.centroidal_momentum_matrix_rate(bad, v)
        with pytest.raises(DimensionError, match="v must be real floating-point numbers"):
            system.centroidal_momentum_matrix_rate(q, v + 1e-20j)
        system.centroidal(q, v)
        system.centroidal_momentum_matrix_rate(q, v)
    np.testing.assert_array_equal(q, q0)
    np.testing.assert_array_equal(v, v0)


@pytest.mark.parametrize("path", ["compiled", "reference"])
def test_a_massless_first_base_does_not_hold_the_point(path):
    """A massless marker at the world origin listed first, a floating robot 10⁶ away: the point
    ``o`` is the robot's base (the first base body with a mass, CENTROIDAL.md §3), so its terms
    keep their digits (about the marker ``I_G`` was off by 3e-3 relative)."""
    builder = SystemBuilder(gravity=[0.0, 0.0, -9.81])
    builder.add_body("marker", None, Revolute([0, 0, 1]), np.eye(6), mass=0.0, com=np.zeros(3), inertia_com=np.zeros((3, 3)))
    builder.add_body("base", None, Free(), np.eye(6), mass=3.0, com=[0.1, 0, 0], inertia_com=np.diag([0.1, 0.12, 0.15]))
    builder.add_body("arm", "base", Spherical(), sp.pose_transform([0.4, 0, 0]), mass=1.0, com=[0.2, 0, 0],
                     inertia_com=np.diag([0.01, 0.02, 0.02]))
    system = builder.build()
    q, v = random_state(system, np.random.default_rng(0))
    far = q.copy()
    far[system.q_slices["base"]][4:] += 1e6
    with use_backend(path):
        near_terms, far_terms = system.centroidal_terms(q, v), system.centroidal_terms(far, v)
    centre = Packed.of(system.nv).center
    _close(far_terms[:, :centre], near_terms[:, :centre], 1e-9)


@pytest.mark.parametrize("path", ["compiled", "reference"])
def test_a_system_without_moving_bodies_has_no_centroidal_terms(path):
    """One body welded to the world (nv = 0): the requests name why, as the centre of mass does."""
    builder = SystemBuilder()
    builder.add_body("a", None, Fixed(), np.eye(6), mass=1.0, com=[0.1, 0.0, 0.0], inertia_com=0.01 * np.eye(3))
    system = builder.build()
    with use_backend(path):
        for call in (lambda: system.centroidal(np.zeros(0)), lambda: system.centroidal_momentum_matrix(np.zeros((2, 0))),
                     lambda: system.centroidal_momentum_matrix_rate(np.zeros(0), np.zeros(0))):
            with pytest.raises(RigidSystemError, match="no moving body"):
                call()


class _RealBead(Bead):
    """The tutorial's bead with an ``at_state`` that drops the imaginary part of ``E``."""

    def compiled_state(self):
        return None

    def at_state(self, q, qd, inboard, gravity):
        s = super().at_state(q, qd, inboard, gravity)
        return NodeState(E=np.real(s.E), H=s.H, M=s.M, a=s.a, b=s.b, V=s.V, potential=s.potential)


@pytest.mark.parametrize("path", ["compiled", "reference"])
def test_a_body_dropping_the_imaginary_part_is_named_by_the_rate(path):
    """``Ȧ_G`` of a system of other body types is a complex step of ``A_G``: a body type that drops
    the imaginary part is named (as the derivatives name it), not a wrong rate, and
    ``sko verify``'s ``centroidal_rate`` fails on it."""
    good = build_beads()
    bodies = [good.body(k) for k in good.bodies]
    bodies = [_RealBead(b.name, b.parent, b.mass, b.start, b.direction, b.spring, attach=b.attach)
              if type(b) is Bead else b for b in bodies]
    system = MultibodySystem(bodies, gravity=good.gravity)
    q, v = random_state(system, np.random.default_rng(0))
    with use_backend(path):
        with pytest.raises(BodyError, match="drops the imaginary part"):
            system.centroidal_momentum_matrix_rate(q, v)
    (result,) = run(models=[system], checks=["centroidal_rate"])
    assert not result.passed

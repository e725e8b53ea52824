"""The newer surfaces' hostile input (derivatives, rollouts, sweeps and sampling) and the older
surfaces' remaining foreign errors: each case gives the right answer or an error of the project's
own type naming the argument, body, joint, rollout or field — one validation per surface."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from sko.bodies import CustomJoint
from sko.bodies.contract import BodyError
from sko.errors import JointError
from sko.graphs.errors import DimensionError, NonFiniteError, SKOError
from sko.io import load_mjcf
from sko.scale.stores import StoreError

SCALE = importlib.util.find_spec("dask") is not None and importlib.util.find_spec("zarr") is not None
needs_scale = pytest.mark.skipif(not SCALE, reason="needs the scale extra (dask, zarr)")
ARM = "sko.examples.rigid:arm7"


def _arm():
    from sko.examples.rigid import arm7

    return arm7()


def _humanoid():
    from sko.examples.rigid import example_systems

    return example_systems()["humanoid"]()


def _spacecraft():
    from sko.examples.bodies import flexible_examples

    make = flexible_examples()["flexible-spacecraft"]
    return make() if callable(make) else make


# ----------------------------------------------------------------------------- derivatives
def _derivatives_overflow():
    system = _arm()
    system.inverse_dynamics_derivatives(system.random_configuration(0), np.full(7, 1e200), np.zeros(7))


def _derivatives_overflow_batch():
    system = _arm()
    system.forward_dynamics_derivatives(system.random_configuration(0)[None], np.full((1, 7), 1e200),
                                        np.zeros((1, 7)))


# ----------------------------------------------------------------------------- rollouts
def _zero_quaternion_in_rollout_2():
    from sko.simulation.rollout import rollout

    system = _humanoid()
    rng = np.random.default_rng(0)
    Q = np.array([system.random_configuration(rng) for _ in range(4)])
    Q[2, system.q_slice("pelvis")][:4] = 0.0  # the free joint's quaternion
    rollout(system, Q, None, 1e-3, 2)


def _failing_forces(t, Q, V):
    raise JointError("the controller's own check failed")


def _tau_raising_an_skoerror():
    from sko.simulation.rollout import rollout

    system = _arm()
    rng = np.random.default_rng(0)
    rollout(system, np.array([system.random_configuration(rng) for _ in range(3)]), None, 1e-3, 2, tau=_failing_forces)


# ----------------------------------------------------------------------------- sweeps and samples
def _sweep(**kw):
    from sko.scale.sweep import sweep

    Q = np.array([_arm().random_configuration(np.random.default_rng(s)) for s in range(4)])
    return lambda: sweep(ARM, **{"what": "mass_matrix", "q": Q, **kw})


def _dask(x):
    import dask.array as da

    return da.from_array(x, chunks=2)


def _symbolic_states():
    import sympy

    Q = np.zeros((2, 7), dtype=object)
    Q[0, 0] = sympy.Symbol("q")
    return Q


def _sample(tmp, **kw):
    from sko.scale.sweep import sample

    return lambda: sample(ARM, **{"states": 5, "what": "fd", "store": tmp / "s.zarr", **kw})


def _file(tmp):
    (tmp / "file").write_text("not a folder")
    return True


# ----------------------------------------------------------------------------- older surfaces
def _phi_apply_with_a_list():
    import sko.algorithms as alg
    from sko.verify.models import make_case

    model = make_case("random").model
    alg.phi_apply(model, np.zeros(model.node_size), [np.eye(2)])


def _segment_blocks_of_the_wrong_size():
    from sko.algorithms.sparsity import segment_blocks
    from sko.graphs import TreeDigraph

    segment_blocks(TreeDigraph.from_parents({1: None, 2: 1, 3: 1}), np.ones((5, 5), dtype=bool))


def _compress_lower_with_a_dict():
    from sko.algorithms.sparse_ltdl import compress_lower

    compress_lower(np.eye(3), {"dof_parentid": [-1, 0, 1]})


def _ragged_custom_joint():
    joint = CustomJoint(1, 1, lambda q, v: (np.eye(6), [[1.0, 0.0], [0.0], [0.0], [0.0], [0.0], [0.0]], np.zeros(6)),
                        name="wobbly")
    joint.kinematics(np.zeros(1), np.zeros(1))


_S_Z = np.array([[0.0, 0.0, 1.0, 0.0, 0.0, 0.0]]).T


def _turn_z(q):
    from sko.spatial import rot, rz

    return rot(rz(q[0]))


def _custom_joint_system(kinematics=None, normalize=None):
    from sko.systems.builder import SystemBuilder

    b = SystemBuilder()
    joint = CustomJoint(1, 1, kinematics or (lambda q, v: (_turn_z(q), _S_Z, np.zeros(6))), normalize=normalize,
                        name="hand-made")
    b.add_body("link", None, joint, mass=1.0, com=[0.1, 0.0, 0.0], inertia_com=np.eye(3))
    return b.build()


def _custom_joint_call(method, **kw):
    system = _custom_joint_system(**kw)
    return lambda: getattr(system, method)(np.array([0.3]), np.array([0.5]))


def _custom_joint_normalize(normalize):
    system = _custom_joint_system(normalize=normalize)
    return lambda: system.normalize(np.array([0.3]))


def _infinite_rotor():
    from tests.test_hostile import _rotor

    _rotor(axial_inertia=np.inf)


_HUGE_GRAVITY = """<mujoco><option gravity="0 0 -1.7e308"/><worldbody><body name="a"><joint name="h" axis="0 1 0"/>
<geom type="capsule" fromto="0 0 0 0.3 0 -0.5" size="0.05"/></body></worldbody></mujoco>"""


def _overflowing_mjcf_gravity(tmp):
    pytest.importorskip("mujoco")

    path = tmp / "g.xml"
    path.write_text(_HUGE_GRAVITY)
    system = load_mjcf(str(path))
    return lambda: system.inverse_dynamics(system.random_configuration(0), np.zeros(1), np.zeros(1))


CASES = {
    "derivatives overflow": (lambda tmp: _derivatives_overflow, NonFiniteError, r"^body 'arm_link1': its b\(k\)"),
    "derivatives overflow, a batch": (lambda tmp: _derivatives_overflow_batch, NonFiniteError,
                                      r"state 0 of the batch: body 'arm_link1'"),
    "zero quaternion in rollout 2": (lambda tmp: _zero_quaternion_in_rollout_2, JointError,
                                     r"^rollout 2 \(q0\[2\]\): Free 'root_joint': quaternion"),
    "tau raising its own SKOError": (lambda tmp: _tau_raising_an_skoerror, JointError,
                                     r"^the controller's own check failed$"),
    "sweep what a list": (lambda tmp: _sweep(what=["forward_dynamics"]), SKOError,
                          r"sweep: what must be one request name \(a string\), got list"),
    "sweep what None": (lambda tmp: _sweep(what=None), SKOError, r"sweep: what must be one request name"),
    "sweep chunk 0": (lambda tmp: _sweep(chunk=0), DimensionError, r"sweep: chunk must be a positive integer, got 0"),
    "sweep chunk -5": (lambda tmp: _sweep(chunk=-5), DimensionError, r"sweep: chunk must be a positive integer, got -5"),
    "sweep chunk 2.5": (lambda tmp: _sweep(chunk=2.5), DimensionError, r"sweep: chunk must be a positive integer"),
    "sweep overwrite a string": (lambda tmp: _sweep(store=tmp / "s.zarr", overwrite="yes"), SKOError,
                                 r"sweep: overwrite must be True or False, got 'yes'"),
    "sweep client an address": (lambda tmp: _sweep(client="tcp://127.0.0.1:9"), SKOError,
                                r"sweep: client must be a dask.distributed.Client"),
    "sweep complex q": (lambda tmp: _sweep(q=np.zeros((3, 7)) + 1e-3j), DimensionError,
                        r"sweep: q must hold real numbers, got complex128"),
    "sweep complex dask v": (lambda tmp: _sweep(what="fd", v=_dask(np.zeros((4, 7), dtype=complex))), DimensionError,
                             r"sweep: v must hold real numbers, got complex128"),
    "sweep symbolic q": (lambda tmp: _sweep(q=_symbolic_states()), DimensionError,
                         r"sweep: q must hold real numbers, got object"),
    "sample states beyond what a graph of tasks holds": (
        lambda tmp: _sample(tmp, states=10**12), DimensionError,
        r"sample: 1000000000000 states in chunks of 4096 are 244140625 tasks, more than 1048576: give a larger chunk"),
    "sample store None": (lambda tmp: _sample(tmp, store=None), SKOError, r"sample: store must be the path"),
    "sample store a number": (lambda tmp: _sample(tmp, store=3), SKOError, r"sample: store must be the path"),
    "sample what None": (lambda tmp: _sample(tmp, what=None), SKOError, r"sample: what must be a request name or"),
    "sample what empty": (lambda tmp: _sample(tmp, what=[]), SKOError, r"sample: what must be a request name or"),
    "sample chunk 0": (lambda tmp: _sample(tmp, chunk=0), DimensionError, r"sample: chunk must be a positive integer"),
    "sample seed -1": (lambda tmp: _sample(tmp, seed=-1), SKOError, r"sample: seed must be a non-negative integer, got -1"),
    "sample seed 1.5": (lambda tmp: _sample(tmp, seed=1.5), SKOError, r"sample: seed must be a non-negative integer"),
    "sample states True": (lambda tmp: _sample(tmp, states=True), DimensionError, r"sample: states must be a positive"),
    "sample store in a missing folder of a read-only place": (
        lambda tmp: _sample(tmp, store="/proc/no/s.zarr"), StoreError,
        r"sample: cannot write store '/proc/no/s.zarr'"),
    "sweep store under a file": (lambda tmp: _file(tmp) and _sweep(store=tmp / "file" / "s.zarr"), StoreError,
                                 r"sweep: cannot write store '.*file/s.zarr'"),
    "phi_apply weights a list": (lambda tmp: _phi_apply_with_a_list, DimensionError,
                                 r"weights must be a mapping body → weight array phi\(parent, body\), got list"),
    "segment_blocks of the wrong size": (lambda tmp: _segment_blocks_of_the_wrong_size, DimensionError,
                                         r"segment_blocks: pattern has shape \(5, 5\), expected .* \(3, 3\)"),
    "compress_lower layout a dict": (lambda tmp: _compress_lower_with_a_dict, DimensionError,
                                     r"compress_lower: layout must be a CompressedLayout .* got dict"),
    "custom joint ragged S": (lambda tmp: _ragged_custom_joint, JointError, r"CustomJoint 'wobbly': S returned by"),
    "custom joint complex X_J at a real state": (
        lambda tmp: _custom_joint_call("forward_dynamics", kinematics=lambda q, v: (_turn_z(q) + 1e-3j, _S_Z,
                                                                                    np.zeros(6))),
        JointError, r"CustomJoint 'hand-made': X_J returned by the user's function is complex at a real state"),
    "custom joint complex S at a real state": (
        lambda tmp: _custom_joint_call("inverse_dynamics", kinematics=lambda q, v: (_turn_z(q), _S_Z + 1e-3j,
                                                                                    np.zeros(6))),
        JointError, r"CustomJoint 'hand-made': S returned by the user's function is complex at a real state"),
    "custom joint text X_J": (
        lambda tmp: _custom_joint_call("forward_dynamics", kinematics=lambda q, v: (np.full((6, 6), "1"), _S_Z,
                                                                                    np.zeros(6))),
        JointError, r"CustomJoint 'hand-made': X_J returned by the user's function has dtype <U1"),
    "custom joint X_J not rigid": (
        lambda tmp: lambda: _custom_joint_system(kinematics=lambda q, v: (2.0 * np.eye(6), _S_Z, np.zeros(6))),
        JointError, r"CustomJoint 'hand-made': X_J returned by the user's function at q = \[0\.\] is not a rigid "
                    r"Plücker transform"),
    "custom joint normalize of the wrong size": (lambda tmp: _custom_joint_normalize(lambda q: np.zeros(3)), JointError,
                                                 r"CustomJoint 'hand-made': normalize returned shape \(3,\), "
                                                 r"expected \(1,\)"),
    "custom joint normalize complex": (lambda tmp: _custom_joint_normalize(lambda q: q + 1e-3j), JointError,
                                       r"CustomJoint 'hand-made': normalize returned by the user's function is complex"),
    "custom joint normalize text": (lambda tmp: _custom_joint_normalize(lambda q: "x"), JointError,
                                    r"CustomJoint 'hand-made': normalize returned by the user's function has dtype"),
    "rotor infinite axial inertia": (lambda tmp: _infinite_rotor, BodyError,
                                     r"body 'link': axial_inertia \(J_a\) is non-finite"),
    "MJCF gravity overflowing": (_overflowing_mjcf_gravity, NonFiniteError, r"the gravity g = .*1\.7e\+308.* too large"),
}
SCALE_CASES = {name for name in CASES if name.startswith(("sweep", "sample"))}


@pytest.mark.parametrize("name", [pytest.param(n, marks=needs_scale) if n in SCALE_CASES else n for n in CASES])
def test_a_hostile_input_is_named(name, tmp_path):
    make, error, message = CASES[name]
    call = make(tmp_path)
    with pytest.raises(error, match=message) as caught:
        call()
    assert "reference" not in str(caught.value) and "Traceback" not in str(caught.value)


# ----------------------------------------------------------------------------- right answers
def test_derivatives_of_an_empty_batch_by_complex_step():
    system = _spacecraft()
    n = system.nv
    empty = (np.zeros((0, system.nq)), np.zeros((0, n)), np.zeros((0, n)))
    for out in (system.inverse_dynamics_derivatives(*empty, method="complex_step"),
                system.forward_dynamics_derivatives(*empty, method="complex_step")):
        assert [x.shape for x in out] == [(0, n, n)] * 3


def test_a_rollout_of_no_states():
    from sko.simulation.rollout import rollout

    system = _arm()
    out = rollout(system, np.zeros((0, 7)), None, 1e-3, 3)
    assert out.q.shape == (0, 4, 7) and out.v.shape == (0, 4, 7) and out.failed.shape == (0,) and out.errors == {}


@needs_scale
def test_a_sweep_of_no_states_is_empty(tmp_path):
    from sko.scale.sweep import sweep

    assert sweep(ARM, "mass_matrix", np.zeros((0, 7))).shape == (0, 7, 7)
    assert sweep(ARM, "did", np.zeros((0, 7))).shape == (0, 3, 7, 7)
    with pytest.raises(DimensionError, match="sweep: q holds no state: there is nothing to store"):
        sweep(ARM, "fd", np.zeros((0, 7)), store=tmp_path / "s.zarr")


@needs_scale
@pytest.mark.parametrize("lazy", [False, True])
def test_a_sweep_of_more_tasks_than_a_graph_holds_is_refused_before_it_is_built(monkeypatch, lazy):
    """A sweep of 10⁹ states in chunks of 1 built its graph for hours."""
    from sko.scale import sweep as module

    monkeypatch.setattr(module, "MAX_TASKS", 4)
    q = np.zeros((9, 7))
    with pytest.raises(DimensionError, match=r"sweep: 9 states in chunks of 2 are 5 tasks, more than 4: give a "
                                             r"larger chunk"):
        module.sweep(ARM, "mass_matrix", _dask(q) if lazy else q, chunk=2)
    assert module.sweep(ARM, "mass_matrix", q, chunk=3).shape == (9, 7, 7)


@needs_scale
def test_a_sample_takes_numpy_integers_and_a_chunk_beyond_its_states(tmp_path):
    from sko.scale.sweep import sample, sweep

    group = sample(ARM, np.int64(10), ["fd"], tmp_path / "s.zarr", chunk=10**9, seed=np.int64(2))
    assert group["q"].shape == (10, 7) and group["q"].chunks[0] == 10 and group["forward_dynamics"].chunks[0] == 10
    Q = group["q"][:]
    z = sweep(ARM, "mass_matrix", Q, chunk=10**9, store=tmp_path / "m.zarr")
    assert z.chunks[0] == 10
    np.testing.assert_array_equal(z[:], _arm().mass_matrix(Q))


@needs_scale
@pytest.mark.parametrize("argv, message", [
    (["--seed", "-1"], "error: sample: seed must be a non-negative integer, got -1"),
    (["--scheduler", "tcp://127.0.0.1:9"], "error: sko sample --scheduler tcp://127.0.0.1:9: cannot connect to a Dask "
                                           "scheduler there"),
])
def test_sko_sample_bad_options_are_one_error_line(tmp_path, capsys, argv, message):
    import dask

    from sko.cli import main

    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        status = main(["sample", "--model", ARM, "--states", "5", "--out", str(tmp_path / "s.zarr"), "--quiet", *argv])
    err = capsys.readouterr().err
    assert status == 2 and err.startswith(message) and len(err.strip().splitlines()) == 1, err

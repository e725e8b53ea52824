"""Result stores that know what they hold (sko.scale.stores): a store resumes what matches,
computes what a run adds per request, refuses a run asking another question (naming the field
and the way out), is written by one process at a time, and resumes to the same bytes after its
writer is killed in the middle of a chunk."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("dask.array")
zarr = pytest.importorskip("zarr")

from sko.scale import stores  # noqa: E402
from sko.scale.identity import model_identity  # noqa: E402
from sko.scale.stores import StoreError  # noqa: E402
from sko.scale.sweep import sample, sweep, system_of  # noqa: E402

ARM = "sko.examples.rigid:arm7"
ROOT = Path(__file__).resolve().parents[1]


def _states(n: int, seed: int = 0):
    system = system_of(ARM)
    rng = np.random.default_rng(seed)
    Q = np.array([system.random_configuration(rng) for _ in range(n)])
    return Q, *rng.normal(size=(2, n, system.nv))


def _bits(x) -> bytes:
    return np.ascontiguousarray(x).tobytes()


def test_a_sweep_of_another_request_adds_its_array(tmp_path):
    system = system_of(ARM)
    Q, V, X = _states(45)
    store = tmp_path / "s.zarr"
    fd = sweep(ARM, "forward_dynamics", Q, V, X, chunk=16, store=store)[:]
    M = sweep(ARM, "mass_matrix", Q, chunk=16, store=store)
    assert M.shape == (45, 7, 7)
    np.testing.assert_array_equal(M[:], system.mass_matrix(Q))
    group = zarr.open_group(str(store), mode="r")
    assert sorted(group.array_keys()) == ["forward_dynamics", "mass_matrix"]
    assert _bits(group["forward_dynamics"][:]) == _bits(fd)
    again = sweep(ARM, "fd", Q, V, X, chunk=16, store=store)  # a short name: the same array, resumed
    assert _bits(again[:]) == _bits(fd)


@pytest.mark.parametrize("change, field", [
    ("q", "q (the token of the states)"),
    ("v", "computed from another 'v'"),
    ("tau", "computed from another 'tau'"),
    ("states", "states = 45; this sweep has 44"),
    ("chunk", "chunk = 16; this sweep has 15"),
    ("model", "model (the identity of its description)"),
    ("version", "sko version"),
])
def test_a_sweep_asking_another_question_is_refused(tmp_path, monkeypatch, change, field):
    Q, V, X = _states(45)
    store = tmp_path / "s.zarr"
    sweep(ARM, "forward_dynamics", Q, V, X, chunk=16, store=store)
    model, chunk = ARM, 16
    if change == "q":
        Q = Q.copy()
        Q[3, 0] += 1e-3
    elif change == "v":
        V = V + 1.0
    elif change == "tau":
        X = X + 1.0
    elif change == "states":
        Q, V, X = Q[:44], V[:44], X[:44]
    elif change == "chunk":
        chunk = 15
    elif change == "model":
        model = "tests.sweep_models:arm7_on_the_moon"
    else:
        monkeypatch.setattr(stores, "package_version", lambda: "0.0.0-other")
        monkeypatch.setattr("sko.scale.sweep.package_version", lambda: "0.0.0-other")
    before = _bits(zarr.open_group(str(store), mode="r")["forward_dynamics"][:])
    with pytest.raises(StoreError, match=f"{re.escape(repr(str(store)))}.*{re.escape(field)}.*give a new path, or overwrite=True"):
        sweep(model, "forward_dynamics", Q, V, X, chunk=chunk, store=store)
    assert _bits(zarr.open_group(str(store), mode="r")["forward_dynamics"][:]) == before  # untouched
    replaced = sweep(model, "forward_dynamics", Q, V, X, chunk=chunk, store=store, overwrite=True)
    np.testing.assert_array_equal(replaced[:], system_of(model).forward_dynamics(Q, V, X))


def test_a_sample_of_another_seed_is_refused_and_overwrite_replaces_it(tmp_path):
    store = tmp_path / "d.zarr"
    three = sample(ARM, 50, ["fd"], store, chunk=16, seed=3)["q"][:]
    with pytest.raises(StoreError, match="seed = 3; this sample has 4: give a new path, or overwrite=True"):
        sample(ARM, 50, ["fd"], store, chunk=16, seed=4)
    four = sample(ARM, 50, ["fd"], store, chunk=16, seed=4, overwrite=True)["q"][:]
    fresh = sample(ARM, 50, ["fd"], tmp_path / "fresh.zarr", chunk=16, seed=4)["q"][:]
    assert not np.array_equal(three, four) and _bits(four) == _bits(fresh)
    with pytest.raises(StoreError, match="states = 50; this sample has 60"):
        sample(ARM, 60, ["fd"], store, chunk=16, seed=4)


def test_a_sample_rerun_with_more_requests_computes_only_those(tmp_path):
    system = system_of(ARM)
    store = tmp_path / "d.zarr"
    sample(ARM, 50, ["fd"], store, chunk=16, seed=3)
    writable = zarr.open_group(str(store), mode="r+")
    writable["forward_dynamics"][0:16] = 7.0  # finished: a rerun with more requests leaves it
    group = sample(ARM, 50, ["fd", "M", "id"], store, chunk=16, seed=3)
    assert (group["forward_dynamics"][0:16] == 7.0).all()
    Q, V = group["q"][:], group["v"][:]
    np.testing.assert_array_equal(group["mass_matrix"][:], system.mass_matrix(Q))
    np.testing.assert_array_equal(group["inverse_dynamics"][:], system.inverse_dynamics(Q, V, group["dv"][:]))
    assert np.abs(group["dv"][:]).min() > 0
    fresh = sample(ARM, 50, ["id", "M", "fd"], tmp_path / "fresh.zarr", chunk=16, seed=3)
    for name in ("q", "v", "tau", "dv", "inverse_dynamics", "mass_matrix"):  # what a run draws does not depend on
        assert _bits(fresh[name][:]) == _bits(group[name][:]), name  # the requests it asks for


def test_a_store_without_a_record_or_of_the_wrong_shape_is_refused(tmp_path):
    Q, V, X = _states(45)
    old = tmp_path / "old.zarr"  # the layout of an earlier version: one shared chunks_done array
    group = zarr.open_group(str(old), mode="w")
    group.create_array("forward_dynamics", shape=(44, 7), chunks=(16, 7), dtype=float)
    group.create_array("chunks_done", shape=(3,), chunks=(1,), dtype=bool)
    with pytest.raises(StoreError, match="holds no record of what it holds"):
        sweep(ARM, "forward_dynamics", Q, V, X, chunk=16, store=old)
    assert sweep(ARM, "forward_dynamics", Q, V, X, chunk=16, store=old, overwrite=True).shape == (45, 7)
    store = tmp_path / "s.zarr"
    sweep(ARM, "forward_dynamics", Q, V, X, chunk=16, store=store)
    group = zarr.open_group(str(store), mode="r+")
    group.create_array("mass_matrix", shape=(44, 7, 7), chunks=(16, 7, 7), dtype=float)  # a hand-made array
    with pytest.raises(StoreError, match=r"holds 'mass_matrix' of shape \(44, 7, 7\).*writes \(45, 7, 7\)"):
        sweep(ARM, "mass_matrix", Q, chunk=16, store=store)
    (tmp_path / "file").write_text("x")
    with pytest.raises(StoreError, match="is not a Zarr group"):
        sample(ARM, 5, "fd", tmp_path / "file")


def test_an_array_removed_from_a_store_is_computed_again_whatever_flags_it_left(tmp_path):
    """The chunk flags of a removed array are not the new array's: they raised zarr's
    ContainsArrayError (and, read as the new array's, would have marked zeros as done)."""
    Q, V, X = _states(20)
    store = tmp_path / "s.zarr"
    fd = sweep(ARM, "fd", Q, V, X, chunk=8, store=store)[:]
    group = zarr.open_group(str(store), mode="r+")
    del group["forward_dynamics"]  # by hand: its flags, all set, stay
    assert stores.finished(group, "forward_dynamics").all()
    np.testing.assert_array_equal(sweep(ARM, "fd", Q, V, X, chunk=8, store=store)[:], fd)


@pytest.mark.parametrize("kind", ["sweep", "sample"])
def test_a_worker_that_builds_another_model_than_the_store_records_is_refused(tmp_path, monkeypatch, kind):
    """A factory that builds another system in a worker's process (unseeded random parameters,
    other code on a cluster's node) wrote its chunks into a store that records the first."""
    from sko.examples.rigid import planar_chain
    from sko.scale import sweep as module

    built = []

    def another_each_time(model):  # the first system in the caller, another in each task
        built.append(planar_chain(2, mass=1.0 + len(built)))
        return built[-1]

    monkeypatch.setattr(module, "system_of", another_each_time)
    store = tmp_path / "s.zarr"
    with pytest.raises(StoreError, match=rf"{kind}: a task built another model from 'chain:factory' than the store "
                                         r"'.*s.zarr' records \(identity .*\): a factory must build the same system "
                                         r"in every process"):
        if kind == "sweep":
            module.sweep("chain:factory", "mass_matrix", np.zeros((4, 2)), chunk=2, store=store)
        else:
            module.sample("chain:factory", 4, "M", store, chunk=2)
    assert not stores.finished(zarr.open_group(str(store), mode="r"), "mass_matrix").any()  # nothing written


_SEEN: dict = {}  # filled as the joint below is evaluated: data its function reads, changing with use


def _remembering(q, v):
    _SEEN[float(q[0])] = True
    return _turn(q, 1.0)


def memo_system():
    """A factory whose system's joint function fills a global dict as it runs."""
    return _custom(_remembering)


def test_a_model_whose_functions_fill_their_data_as_they_run_keeps_its_identity(tmp_path):
    """The identity is taken before the system is used, once per system: a joint function that
    remembers what it saw (a global cache) changed its model's identity with every chunk, and the
    tasks' check refused the store's own model."""
    store = tmp_path / "s.zarr"
    first = sample("tests.test_stores:memo_system", 6, "M", store, chunk=2)["mass_matrix"][:]
    again = sample("tests.test_stores:memo_system", 6, ["M", "fd"], store, chunk=2)  # resumed, one request added
    np.testing.assert_array_equal(again["mass_matrix"][:], first)


def test_the_model_identity_is_its_description():
    from sko.examples.rigid import arm7

    system = arm7()
    before = model_identity(system)
    rng = np.random.default_rng(0)
    system.forward_dynamics(system.random_configuration(rng), rng.normal(size=7), rng.normal(size=7))
    assert model_identity(system) == before == model_identity(arm7())  # use derives nothing it hashes
    assert model_identity(arm7(gravity=[0.0, 0.0, -1.62])) != before
    code = "from sko.examples.rigid import arm7; from sko.scale.identity import model_identity; " \
           "print(model_identity(arm7()))"
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert other.stdout.split()[-1] == before  # another process (another hash seed, other addresses)


_S = np.array([[0.0, 0.0, 1.0, 0.0, 0.0, 0.0]]).T
_SCALE = 1.0


def _custom(kinematics):
    """A one-body system on a CustomJoint of ``kinematics``."""
    from sko.bodies.joints import CustomJoint
    from sko.systems.builder import SystemBuilder

    b = SystemBuilder()
    b.add_body("a", None, CustomJoint(1, 1, kinematics, name="j"), mass=1.0, com=[0.1, 0.0, 0.0],
               inertia_com=np.eye(3))
    return b.build()


def _turn(q, s):
    from sko.spatial import rot, rz

    return rot(rz(s * q[0])), s * _S, np.zeros(6)


def _alike(f, name: str = "kinematics"):
    """``f`` under one name, so that only what it computes tells two of them apart."""
    f.__name__ = f.__qualname__ = name
    return f


def _with_default(scale):
    return _alike(lambda q, v, s=scale: _turn(q, s))


def _with_keyword_default(scale):
    return _alike(lambda q, v, *, s=scale: _turn(q, s))


class _Scaled:
    def __init__(self, scale):
        self.scale = scale

    def kinematics(self, q, v):
        return _turn(q, self.scale)


def _with_nested_code(scale):
    if scale == 1.0:
        return _alike(lambda q, v: _turn(q, (lambda: 1.0)()))
    return _alike(lambda q, v: _turn(q, (lambda: 2.0)()))


def _reading_a_global(q, v):
    return _turn(q, _SCALE)


def _scaled_global(scale):
    global _SCALE
    _SCALE = scale
    return _reading_a_global


def _helper_one(q):
    return 1.0


def _helper_two(q):
    return 2.0


def _calling_a_helper(scale):
    def kinematics(q, v):
        return _turn(q, _helper(q))

    global _helper
    _helper = _alike(_helper_one if scale == 1.0 else _helper_two, "_helper")
    return kinematics


def _revolute_subclass(scale):
    from sko.bodies.joints import Revolute

    if scale == 1.0:
        class Turning(Revolute):
            def _kinematics(self, q, v):
                return super()._kinematics(q, v)
    else:
        class Turning(Revolute):
            def _kinematics(self, q, v):
                k = super()._kinematics(q, v)
                return k._replace(S=2.0 * k.S)
    Turning.__qualname__ = "Turning"
    from sko.systems.builder import SystemBuilder

    b = SystemBuilder()
    b.add_body("a", None, Turning([0, 0, 1], name="j"), mass=1.0, com=[0.1, 0.0, 0.0], inertia_com=np.eye(3))
    return b.build()


def _revolute_with_a_property(scale):
    from sko.bodies.joints import Revolute
    from sko.systems.builder import SystemBuilder

    if scale == 1.0:
        class Geared(Revolute):
            @property
            def ratio(self):
                return 1.0

            def _kinematics(self, q, v):
                k = super()._kinematics(q, v)
                return k._replace(S=self.ratio * k.S)
    else:
        class Geared(Revolute):
            @property
            def ratio(self):
                return 2.0

            def _kinematics(self, q, v):
                k = super()._kinematics(q, v)
                return k._replace(S=self.ratio * k.S)
    Geared.__qualname__ = "Geared"
    b = SystemBuilder()
    b.add_body("a", None, Geared([0, 0, 1], name="j"), mass=1.0, com=[0.1, 0.0, 0.0], inertia_com=np.eye(3))
    return b.build()


@pytest.mark.parametrize("build", [
    lambda s: _custom(_with_default(s)),
    lambda s: _custom(_with_keyword_default(s)),
    lambda s: _custom(_Scaled(s).kinematics),
    lambda s: _custom(__import__("functools").partial(_turn_qv, s=s)),
    lambda s: _custom(_with_nested_code(s)),
    lambda s: _custom(_scaled_global(s)),
    lambda s: _custom(_calling_a_helper(s)),
    _revolute_subclass,
    _revolute_with_a_property,
], ids=["default", "keyword default", "bound method", "partial", "nested code", "global", "helper", "joint subclass",
        "joint property"])
def test_systems_that_compute_differently_have_other_identities(build):
    """What a user's function or class computes with is its identity: defaults, the object a
    method is bound to, a partial's arguments, nested code, the globals and helpers it reads, a
    subclass's methods (else a store of one model resumes as another's)."""
    q, v = np.array([0.3]), np.array([0.5])
    (one, tau_one), (two, tau_two), (again, _) = [(model_identity(system), system.inverse_dynamics(q, v, v))
                                                  for system in map(build, (1.0, 2.0, 1.0))]  # each built, then used
    assert not np.allclose(tau_one, tau_two)  # they do compute differently
    assert one != two and one == again


def _turn_qv(q, v, s):
    return _turn(q, s)


def test_a_symbolic_systems_identity_names_sympys_classes_without_their_code():
    """Library classes count by name (their version stands for them): describing every sympy
    class's methods and the globals they read ran for more than ten minutes."""
    from sko.examples.symbolic import symbolic_pendulum
    from sko.scale.identity import description

    text = description(symbolic_pendulum(2)[0])
    assert "type:sympy." in text and "function:sympy." not in text and "global:" not in text


def test_a_system_with_user_functions_has_one_identity_in_every_process():
    code = "from sko.examples.rigid import branched_tree; from sko.scale.identity import model_identity; " \
           "print(model_identity(branched_tree()))"
    from sko.examples.rigid import branched_tree

    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
            for _ in range(2)]
    assert runs[0].stdout.split()[-1] == runs[1].stdout.split()[-1] == model_identity(branched_tree())


# ----------------------------------------------------------------------------- one writer, killed writers
_WRITER = """
import os, signal, sys, time
from pathlib import Path
import numpy as np
import sko.scale.sweep as S
from sko.scale.stores import write_chunk

mode, store, go = sys.argv[1], sys.argv[2], Path(sys.argv[3])
system = S.system_of("sko.examples.rigid:arm7")
rng = np.random.default_rng(5)
Q = np.array([system.random_configuration(rng) for _ in range(40)])
V, X = rng.normal(size=(2, 40, 7))

def patched(path, name, i, start, value):
    if mode == "kill" and i == 2:  # half of chunk 2 written, then the process killed
        import zarr
        zarr.open_group(path, mode="r+")[name][start:start + len(value) // 2] = value[: len(value) // 2]
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "wait":
        deadline = time.monotonic() + 120
        while not go.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
    write_chunk(path, name, i, start, value)

S.write_chunk = patched
S.sweep("sko.examples.rigid:arm7", "forward_dynamics", Q, V, X, chunk=10, store=store)
print("done")
"""


def _writer(mode: str, store: Path, go: Path, **kw):
    return subprocess.Popen([sys.executable, "-c", _WRITER, mode, str(store), str(go)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def _arm_states_of_the_writer():
    system = system_of(ARM)
    rng = np.random.default_rng(5)
    Q = np.array([system.random_configuration(rng) for _ in range(40)])
    return Q, *rng.normal(size=(2, 40, 7))


def test_a_sweep_killed_in_the_middle_of_a_chunk_resumes_to_the_same_bytes(tmp_path):
    store = tmp_path / "killed.zarr"
    writer = _writer("kill", store, tmp_path / "go")
    writer.communicate(timeout=300)
    assert writer.returncode == -9
    lock = store.with_name(store.name + ".lock")
    assert json.loads(lock.read_text())["pid"] == writer.pid  # left behind by the dead writer: taken over
    group = zarr.open_group(str(store), mode="r")
    assert not group["chunks_done/forward_dynamics"][2] and (group["forward_dynamics"][20:25] != 0).all()
    Q, V, X = _arm_states_of_the_writer()
    resumed = sweep(ARM, "forward_dynamics", Q, V, X, chunk=10, store=store)[:]
    whole = sweep(ARM, "forward_dynamics", Q, V, X, chunk=10, store=tmp_path / "whole.zarr")[:]
    assert _bits(resumed) == _bits(whole) and not lock.exists()


def test_two_writers_of_one_store_are_refused(tmp_path):
    store, go = tmp_path / "busy.zarr", tmp_path / "go"
    lock = store.with_name(store.name + ".lock")
    writer = _writer("wait", store, go)
    try:
        deadline = time.monotonic() + 240
        while not lock.exists() and writer.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert lock.exists(), writer.stderr.read() if writer.poll() is not None else "no lock"
        Q, V, X = _arm_states_of_the_writer()
        with pytest.raises(StoreError, match=f"is being written by process {writer.pid} on"):
            sweep(ARM, "forward_dynamics", Q, V, X, chunk=10, store=store)
        with pytest.raises(StoreError, match=f"is being written by process {writer.pid}"):
            sweep(ARM, "forward_dynamics", Q, V, X, chunk=10, store=store, overwrite=True)
    finally:
        go.touch()
        out, err = writer.communicate(timeout=300)
    assert writer.returncode == 0 and "done" in out, err
    np.testing.assert_array_equal(zarr.open_group(str(store), mode="r")["forward_dynamics"][:],
                                  system_of(ARM).forward_dynamics(Q, V, X))
    assert not lock.exists()


def test_a_lock_of_a_dead_process_is_taken_over(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          timeout=60)
    store = tmp_path / "s.zarr"
    lock = store.with_name(store.name + ".lock")
    import socket

    lock.write_text(json.dumps({"pid": int(dead.stdout), "host": socket.gethostname()}))
    Q, V, X = _states(12)
    sweep(ARM, "forward_dynamics", Q, V, X, chunk=4, store=store)
    assert not lock.exists()
    lock.write_text(json.dumps({"pid": os.getppid(), "host": socket.gethostname()}))  # alive: refused
    with pytest.raises(StoreError, match=f"process {os.getppid()}"):
        sweep(ARM, "forward_dynamics", Q, V, X, chunk=4, store=store)


def test_sko_sample_refuses_another_seed_and_overwrites_on_request(tmp_path, capsys):
    from sko.cli import main

    out = str(tmp_path / "d.zarr")
    argv = ["sample", "--model", ARM, "--states", "12", "--chunk", "5", "--out", out, "--quiet"]
    assert main([*argv, "--seed", "3"]) == 0
    capsys.readouterr()
    assert main([*argv, "--seed", "4"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: sample: store") and "seed = 3; this sample has 4" in err and "--overwrite" in err
    assert main([*argv, "--seed", "4", "--overwrite", "--what", "fd,M"]) == 0
    assert sorted(zarr.open_group(out, mode="r").array_keys()) == ["forward_dynamics", "mass_matrix", "q", "tau", "v"]

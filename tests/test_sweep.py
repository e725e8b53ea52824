"""Sweeps on Dask (sko.scale.sweep): equal to the batched methods, in-process and on a local
cluster of worker processes; written to Zarr chunk by chunk and resumed; bad input refused."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("dask.array")
pytest.importorskip("zarr")

from sko.graphs.errors import DimensionError, NonFiniteError, SKOError  # noqa: E402
from sko.scale.stores import StoreError  # noqa: E402
from sko.scale.sweep import REQUESTS, sweep, system_of  # noqa: E402
from sko.systems.catalogue import DECLARATIONS  # noqa: E402

ARM = "sko.examples.rigid:arm7"


def _states(system, n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    Q = np.array([system.random_configuration(rng) for _ in range(n)])
    return Q, *rng.normal(size=(2, n, system.nv))


def _batch(system, what: str, Q, V, X):
    """The system method of ``what`` on the batch, called with the inputs its declaration reads."""
    out = DECLARATIONS[what].evaluate(system, Q, V, X)
    return np.stack(out, axis=1) if isinstance(out, tuple) else out


@pytest.mark.parametrize("what", list(REQUESTS))
def test_a_sweep_equals_the_batch(what):
    system = system_of(ARM)
    Q, V, X = _states(system, 45)
    out = sweep(ARM, what, Q, V, X, chunk=16)  # chunks of 16, 16 and 13 states
    np.testing.assert_array_equal(out, _batch(system, what, Q, V, X))


def test_any_body_type_and_a_dask_input():
    da = pytest.importorskip("dask.array")
    model = "sko.examples.bodies:flexible_spacecraft"
    system = system_of(model)
    Q, V, X = _states(system, 20, 1)
    out = sweep(model, "forward_dynamics", da.from_array(Q, chunks=(7, system.nq)), V, X)
    np.testing.assert_array_equal(out, system.forward_dynamics(Q, V, X))


def test_a_store_is_written_chunk_by_chunk_and_resumed(tmp_path):
    system = system_of(ARM)
    Q, V, X = _states(system, 40, 2)
    store = tmp_path / "fd.zarr"
    expected = system.forward_dynamics(Q, V, X)
    z = sweep(ARM, "forward_dynamics", Q, V, X, chunk=10, store=store)
    np.testing.assert_array_equal(z[:], expected)
    import zarr

    group = zarr.open_group(str(store), mode="r+")
    group["forward_dynamics"][0:10] = 7.0  # a finished chunk: a rerun must not touch it
    group["forward_dynamics"][20:30] = 0.0  # an interrupted one: not flagged done
    group["chunks_done/forward_dynamics"][2] = False
    z = sweep(ARM, "forward_dynamics", Q, V, X, chunk=10, store=store)
    assert (z[0:10] == 7.0).all()
    np.testing.assert_array_equal(z[10:], expected[10:])
    with pytest.raises(StoreError, match="states = 40; this sweep has 30: give a new path, or overwrite=True"):
        sweep(ARM, "forward_dynamics", Q[:30], V[:30], X[:30], chunk=10, store=store)
    with pytest.raises(StoreError, match="chunk = 10; this sweep has 11"):
        sweep(ARM, "forward_dynamics", Q, V, X, chunk=11, store=store)
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("not a store")
    with pytest.raises(StoreError, match="is not a Zarr group"):
        sweep(ARM, "forward_dynamics", Q, V, X, store=other, overwrite=True)  # never deleted
    assert (other / "notes.txt").exists()


def test_a_sample_draws_its_states_per_chunk_and_resumes(tmp_path):
    import zarr

    from sko.scale.sweep import sample

    store = tmp_path / "data.zarr"
    group = sample(ARM, 50, ["fd", "did", "M"], store, chunk=16, seed=3)
    system = system_of(ARM)
    Q, V, T = group["q"][:], group["v"][:], group["tau"][:]
    assert Q.shape == (50, system.nq) and "dv" in group
    np.testing.assert_array_equal(group["forward_dynamics"][:], system.forward_dynamics(Q, V, T))
    np.testing.assert_array_equal(group["mass_matrix"][:], system.mass_matrix(Q))
    np.testing.assert_array_equal(group["inverse_dynamics_derivatives"][:],
                                  _batch(system, "inverse_dynamics_derivatives", Q, V, group["dv"][:]))
    writable = zarr.open_group(str(store), mode="r+")
    writable["chunks_done/q"][1] = False  # interrupted: chunk 1 of q is drawn and written again, the same
    writable["q"][16:32] = 0.0
    again = sample(ARM, 50, ["fd", "did", "M"], store, chunk=16, seed=3)
    np.testing.assert_array_equal(again["q"][:], Q)
    with pytest.raises(SKOError, match="not a request"):
        sample(ARM, 5, "jacobian", tmp_path / "x.zarr")
    with pytest.raises(DimensionError, match="states must be a positive integer"):
        sample(ARM, 0, "fd", tmp_path / "y.zarr")


def test_a_local_cluster_of_processes_equals_the_batch():
    distributed = pytest.importorskip("distributed")
    system = system_of(ARM)
    Q, V, X = _states(system, 64, 3)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        forward = sweep(ARM, "forward_dynamics", Q, V, X, chunk=16, client=client)
        given = sweep(system, "forward_dynamics", Q, V, X, chunk=16, client=client)  # the system pickled, used
        derivatives = sweep(ARM, "inverse_dynamics_derivatives", Q, V, X, chunk=16, client=client)
    np.testing.assert_array_equal(forward, system.forward_dynamics(Q, V, X))
    np.testing.assert_array_equal(given, forward)
    # A kernel this process compiled and the same kernel a worker loads from numba's cache may
    # round differently (numba inlines a callee compiled in the same process, not a cached one):
    # the derivatives agree to rounding here, bit for bit between processes that load the cache.
    expected = _batch(system, "inverse_dynamics_derivatives", Q, V, X)
    np.testing.assert_allclose(derivatives, expected, rtol=0, atol=1e-13 * np.abs(expected).max())


def test_a_used_system_pickles_small_and_computes_the_same():
    import pickle

    from sko.examples.embedding import four_bar

    for system in (system_of(ARM), four_bar()):
        Q, V, X = _states(system, 8)
        expected = system.forward_dynamics(Q, V, X)  # the engine and its tables built
        data = pickle.dumps(system)
        assert len(data) < 50_000
        np.testing.assert_array_equal(pickle.loads(data).forward_dynamics(Q, V, X), expected)


def test_a_sweep_survives_a_worker_that_dies(tmp_path, monkeypatch):
    distributed = pytest.importorskip("distributed")
    monkeypatch.setenv("SKO_TEST_DEATH_MARKER", str(tmp_path / "died"))  # the workers inherit it
    system = system_of(ARM)
    Q, V, X = _states(system, 48, 4)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        out = sweep("tests.sweep_models:arm_whose_worker_dies_once", "forward_dynamics", Q, V, X, chunk=8,
                    client=client, store=tmp_path / "fd.zarr")
    assert (tmp_path / "died").exists()  # a worker did die
    np.testing.assert_array_equal(out[:], system.forward_dynamics(Q, V, X))


def test_bad_input_is_refused():
    system = system_of(ARM)
    Q, V, X = _states(system, 4)
    with pytest.raises(SKOError, match="what must be one of"):
        sweep(ARM, "jacobian", Q)
    with pytest.raises(SKOError, match="package.module:function"):
        sweep("arm7", "mass_matrix", Q)
    with pytest.raises(SKOError, match="cannot be imported"):
        sweep("sko.examples.rigid:nothing", "mass_matrix", Q)
    with pytest.raises(SKOError, match="model must be"):
        sweep(3.0, "mass_matrix", Q)
    with pytest.raises(DimensionError, match=r"q has shape \(4, 3\)"):
        sweep(ARM, "mass_matrix", Q[:, :3])
    with pytest.raises(DimensionError, match="v has 3 states but q has 4"):
        sweep(ARM, "forward_dynamics", Q, V[:3])
    with pytest.raises(NonFiniteError, match="tau"):
        sweep(ARM, "forward_dynamics", Q, V, np.full_like(X, np.nan))


def test_sko_sample_on_the_command_line(tmp_path, capsys):
    from sko.cli import main

    out = tmp_path / "data.zarr"
    assert main(["sample", "--model", ARM, "--states", "20", "--what", "fd,M", "--out", str(out), "--chunk", "8",
                 "--quiet"]) == 0
    import zarr

    group = zarr.open_group(str(out), mode="r")
    system = system_of(ARM)
    np.testing.assert_array_equal(group["mass_matrix"][:], system.mass_matrix(group["q"][:]))
    assert "data.zarr" in capsys.readouterr().out
    assert main(["sample", "--model", "sko.examples.rigid:nothing", "--states", "5", "--out", str(tmp_path / "x")]) == 2
    assert capsys.readouterr().err.startswith("error: model 'sko.examples.rigid:nothing' cannot be imported")


def test_sko_sample_imports_a_factory_from_the_current_folder(tmp_path, monkeypatch, capsys):
    """The command line imports a factory's module from the current folder, as python -m does
    (sko verify and sko compile did); sko sample said "No module named ...", and a model without
    degrees of freedom samples its empty results."""
    from sko.cli import main

    (tmp_path / "my_arm.py").write_text(f"from sko.io import load_urdf\n\ndef build():\n    return load_urdf({_URDF!r})\n"
                                         f"\ndef welded():\n    return load_urdf({_WELDED!r})\n")
    monkeypatch.chdir(tmp_path)
    assert main(["sample", "--model", "my_arm:build", "--states", "3", "--out", "arm.zarr", "--quiet"]) == 0
    assert main(["sample", "--model", "my_arm:welded", "--states", "2", "--what", "fd,M", "--out", "w.zarr", "--quiet"]) == 0
    import zarr

    assert zarr.open_group(str(tmp_path / "w.zarr"), mode="r")["mass_matrix"].shape == (2, 0, 0)
    assert "error" not in capsys.readouterr().err


_WELDED = """<robot name="w"><link name="base"/>
<link name="a"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
<joint name="j" type="fixed"><parent link="base"/><child link="a"/></joint></robot>"""
_URDF = """<robot name="r"><link name="base"/>
<link name="a"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
<joint name="j" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/>
<limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>"""
_MJCF = """<mujoco><worldbody><body name="a"><joint name="h" axis="0 1 0"/>
<geom type="capsule" fromto="0 0 0 0.3 0 -0.5" size="0.05"/></body></worldbody></mujoco>"""


def test_sko_verify_on_a_directory_of_models(tmp_path, capsys):
    from sko.cli import main

    (tmp_path / "sub").mkdir()
    (tmp_path / "arm.urdf").write_text(_URDF)
    (tmp_path / "sub" / "pendulum.xml").write_text(_MJCF)
    (tmp_path / "notes.txt").write_text("not a model")
    assert main(["verify", "--models", str(tmp_path), "--summary", "--check", "mass_matrix_columns"]) == 0
    assert "on 2 models" in capsys.readouterr().out
    (tmp_path / "broken.urdf").write_text("<robot name='x'><link name='a'/><joint name='j' type='revolute'/></robot>")
    assert main(["verify", "--models", str(tmp_path / "*.urdf"), "--failed", "--check", "mass_matrix_columns"]) == 1
    captured = capsys.readouterr()
    assert "broken.urdf" in captured.out and "load" in captured.out and "arm.urdf" not in captured.out
    assert main(["verify", "--models", str(tmp_path / "none*.urdf")]) == 2
    assert "no URDF (.urdf) or MJCF (.xml) file" in capsys.readouterr().err


def test_sko_verify_on_models_on_a_cluster(tmp_path, capsys):
    distributed = pytest.importorskip("distributed")
    from sko.cli import main

    for i in range(3):
        (tmp_path / f"arm{i}.urdf").write_text(_URDF)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        status = main(["verify", "--models", str(tmp_path), "--json", "--check", "mass_matrix_columns",
                       "--scheduler", cluster.scheduler_address])
    assert status == 0
    import json

    rows = json.loads(capsys.readouterr().out)
    assert sorted(r["model"] for r in rows) == ["arm0.urdf", "arm1.urdf", "arm2.urdf"] and all(r["passed"] for r in rows)

"""``sko compile`` and the first ``sko verify``: the steps that fill numba's cache, the order of
the checks (physics checks last, results in model order), and when the complex kernels compile
in a second process."""

from __future__ import annotations

import argparse
import subprocess
import sys

import numpy as np
import pytest

from sko import cli, precompile
from sko.verify import REGISTRY, run


def test_every_step_names_its_scalar_type():
    for dtype in (np.float64, np.complex128):
        labels = [label for label, _ in precompile.steps(dtype)]
        assert labels and all(str(np.dtype(dtype)) in label for label in labels)
        assert len(set(labels)) == len(labels)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_every_step_runs(dtype):
    """Each step's calls are valid (on the reference path, which compiles nothing but the
    constraint force algorithm)."""
    from sko.engine import use_backend

    with use_backend("reference"):
        for _, step in precompile.steps(dtype):
            step()


def test_the_steps_reach_every_compiled_algorithm(monkeypatch):
    from sko.algorithms import dispatch
    from sko.engine import use_backend
    from sko.engine.algorithms import IMPLEMENTED

    reached = set()
    reference_run = dispatch.run
    monkeypatch.setattr(dispatch, "run", lambda name, *args: reached.add(name) or reference_run(name, *args))
    with use_backend("reference"):
        for label, step in precompile.steps(np.float64):
            if "sko.algorithms" in label or "constraint force" in label:
                step()
    assert reached >= set(IMPLEMENTED)


def test_compile_kernels_runs_every_step_once(monkeypatch):
    ran = []
    monkeypatch.setattr(precompile, "steps", lambda dtype: [(f"{np.dtype(dtype)} {i}", lambda d=dtype, i=i: ran.append((d, i)))
                                                            for i in range(2)])
    seconds = precompile.compile_kernels(jobs=1, progress=False)
    assert seconds >= 0 and sorted(ran, key=str) == sorted([(d, i) for d in (np.float64, np.complex128) for i in range(2)],
                                                          key=str)


def test_compile_rejects_no_workers(capsys):
    with pytest.raises(SystemExit):
        cli.main(["compile", "--jobs", "0"])
    assert "--jobs must be at least 1" in capsys.readouterr().err


def test_physics_checks_run_last_and_results_keep_the_model_order():
    calls = []
    order = []
    checks = ["torque_regressor", "christoffel", "nilpotency", "crba"]
    results = run(models=["chain", "planar_chain"], checks=checks,
                  progress=lambda done, total, model, check: order.append((model, check)),
                  before_physics=lambda: calls.append(("physics", len(order))), last=["torque_regressor"],
                  before_last=lambda: calls.append(("last", len(order))))
    physics = [i for i, (_, check) in enumerate(order) if REGISTRY.get(check).system]
    assert physics and min(physics) > max(i for i in range(len(order)) if i not in physics)
    assert order[-1] == ("planar_chain", "torque_regressor") and order.count(order[-1]) == 1
    assert calls == [("physics", min(physics)), ("last", len(order) - 1)]  # once each, just before
    assert [(r.model, r.name) for r in results] == [(m, c) for m in ("chain", "planar_chain") for c in checks
                                                    if m == "planar_chain" or not REGISTRY.get(c).system]
    assert all(r.passed for r in results)


def test_results_handed_over_for_the_last_checks_are_taken_in_place_of_running_them():
    """What ``before_last`` returns (the second process's results of the checks of ``last``) is
    reported in place of running those checks; a check of ``last`` it has no result for runs."""
    from sko.verify.registry import Result

    handed = Result("planar_chain", "torque_regressor", "elsewhere", 0.0, None, True, "from the other process")
    results = run(models=["chain", "planar_chain"], checks=["torque_regressor", "energy_regressors", "crba"],
                  last=["torque_regressor", "energy_regressors"], before_last=lambda: [handed])
    by = {(r.model, r.name): r for r in results}
    assert by["planar_chain", "torque_regressor"] is handed
    assert by["planar_chain", "energy_regressors"].equation != "elsewhere" and by["planar_chain", "energy_regressors"].passed
    assert [(r.model, r.name) for r in results][-3:] == [("planar_chain", c) for c in
                                                         ("torque_regressor", "energy_regressors", "crba")]


def test_the_second_process_runs_its_checks_on_the_compiled_backend():
    """``sko verify`` starts it on the compiled backend only, and it reports as the compiled
    path whatever backend the context (``SKO_BACKEND``) names: ``kernel_consistency``, which
    applies on the compiled path alone, gives its results under the reference backend too."""
    import multiprocessing

    from sko.engine import use_backend

    receiver, sender = multiprocessing.Pipe(duplex=False)
    with use_backend("reference"):
        precompile.verify_kernels(["planar_chain"], ["kernel_consistency"], None, sender)
    assert [(r.model, r.name, r.passed) for r in receiver.recv()] == [("planar_chain", "kernel_consistency", True)]


def _args(**kw):
    return argparse.Namespace(**{"symbolic": False, "backend": None, **kw})


@pytest.mark.parametrize("args, models, cold, started", [
    (_args(), None, True, True),
    (_args(), ["planar_chain"], True, True),
    (_args(), None, False, False),  # the cache holds the complex kernels already
    (_args(symbolic=True), None, True, False),
    (_args(backend="reference"), None, True, False),
    (_args(), [object()], True, False),  # a user's model: it is not rebuilt in another process
])
def test_the_kernels_compile_aside_only_on_a_first_run(monkeypatch, args, models, cold, started):
    seen = []
    monkeypatch.setattr(precompile, "cached", lambda dtype: not cold)
    monkeypatch.setattr(precompile, "start_verify_kernels",
                        lambda names, checks: seen.append((list(names), checks)) or precompile.Aside(print, print))
    checks = REGISTRY.select(None, args.symbolic)
    keywords = cli._kernels_aside(args, models, checks)
    assert bool(keywords) == started and bool(seen) == started
    if started:
        assert set(keywords) == {"before_physics", "last", "before_last"}
        # the checks of the constrained dynamics, centroidal terms and regressors, and no other
        assert seen[0][1] == keywords["last"] and {"constrained_dynamics_kkt", "centroidal_momentum",
                                                   "torque_regressor"} <= set(keywords["last"])
        assert not {"christoffel", "acceleration_derivative", "kernel_consistency"} & set(keywords["last"])
        assert all(REGISTRY.get(c).function.__module__ in precompile.ASIDE for c in keywords["last"])
    if started and models is not None:
        assert seen[0][0] == models


def test_no_helper_without_physics_checks(monkeypatch):
    monkeypatch.setattr(precompile, "cached", lambda dtype: False)
    assert cli._kernels_aside(_args(), None, REGISTRY.select(["nilpotency"], False)) == {}


# ----------------------------------------------------------------------------- dead workers end the command
_KILLED = """
import multiprocessing, os, signal, sys, threading, time
from sko.graphs.errors import SKOError
from sko.precompile import compile_kernels

def kill_a_worker():
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        workers = multiprocessing.active_children()
        if workers:
            time.sleep(1.0)  # mid-compile: the steps take far longer
            os.kill(workers[0].pid, signal.SIGKILL)
            return
        time.sleep(0.05)

if __name__ == "__main__":
    threading.Thread(target=kill_a_worker, daemon=True).start()
    try:
        compile_kernels(jobs=2, progress=False)
    except SKOError as error:
        print(error)
        sys.exit(3)
"""


def test_a_compiling_worker_killed_ends_sko_compile_with_an_error(tmp_path):
    script = tmp_path / "compile_and_kill.py"
    script.write_text(_KILLED)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 3, done.stderr
    assert "worker process (pid" in done.stdout and "was killed by SIGKILL" in done.stdout


def test_a_script_without_the_main_guard_is_told_so(tmp_path):
    script = tmp_path / "unguarded.py"
    script.write_text("from sko.precompile import compile_kernels\ncompile_kernels(jobs=2, progress=False)\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("sko.graphs.errors.SKOError: sko compile:") and "unguarded.py" in last
    assert 'without `if __name__ == "__main__":`' in last


def test_the_kernel_process_of_verify_is_watched():
    import multiprocessing
    import os
    import signal

    from sko.graphs.errors import SKOError

    aside = precompile.start_verify_kernels(["no such model"])  # fails in the process: exit status 1
    with pytest.raises(SKOError, match=r"compiling the kernels .* exited with status 1; run `sko compile` first"):
        aside.complex()
    with pytest.raises(SKOError, match=r"exited with status 1"):
        aside.done()
    before = {p.pid for p in multiprocessing.active_children()}
    aside = precompile.start_verify_kernels(["planar_chain"], ["torque_regressor"])
    assert [(r.model, r.name, r.passed) for r in aside.done()] == [("planar_chain", "torque_regressor", True)]
    before = {p.pid for p in multiprocessing.active_children()}
    aside = precompile.start_verify_kernels(["chain"], ["torque_regressor"])
    (process,) = [p for p in multiprocessing.active_children() if p.pid not in before]
    os.kill(process.pid, signal.SIGKILL)
    with pytest.raises(SKOError, match=f"pid {process.pid}.* was killed by SIGKILL"):
        aside.complex()
    with pytest.raises(SKOError, match=f"pid {process.pid}.* was killed by SIGKILL"):
        aside.done()

"""``python -m sko verify`` / ``info`` as a researcher runs them (subprocesses)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str, code: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    command = [sys.executable, "-c", code, *args] if code else [sys.executable, "-m", "sko", *args]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_verify_json_parses_and_passes_on_every_builtin_model():
    proc = _run("verify", "--json")
    assert proc.returncode == 0, proc.stderr
    results = json.loads(proc.stdout)
    assert isinstance(results, list)
    for r in results:
        assert list(r) == ["model", "name", "equation", "residual", "exact", "passed"]
        assert isinstance(r["residual"], float) and r["exact"] is None and r["passed"] is True
    assert {"random", "chain", "forest", "jain-tree"} <= {r["model"] for r in results}
    assert len({r["name"] for r in results}) >= 20


def test_verify_table_one_row_per_check():
    proc = _run("verify", "--model", "chain")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split()[:5] == ["model", "check", "equation", "residual", "result"]
    rows = [line for line in lines[1:] if line.startswith("chain ")]
    assert len(rows) >= 20 and all(line.endswith("pass") for line in rows)
    assert "0 failed" in lines[-1]


def test_a_broken_registered_check_makes_verify_exit_nonzero():
    code = (
        "import sys, numpy as np\n"
        "from sko.verify import register, compare\n"
        "@register('broken_identity', 'Eq. 0')\n"
        "def broken(case):\n"
        "    x = case.node_vector('x')\n"
        "    return compare(case.dense.phi @ x, x)\n"
        "from sko.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    proc = _run("verify", "--json", "--model", "chain", code=code)
    assert proc.returncode == 1
    results = json.loads(proc.stdout)
    broken = [r for r in results if r["name"] == "broken_identity"]
    assert broken and broken[0]["passed"] is False and broken[0]["residual"] > 1e-3
    assert all(r["passed"] for r in results if r["name"] != "broken_identity")
    assert "FAILED chain: broken_identity" in proc.stderr


def test_symbolic_selection_reports_exact():
    proc = _run("verify", "--symbolic", "--json", "--check", "psi_inverse", "--check", "innovations_inverse_product")
    assert proc.returncode == 0, proc.stderr
    results = json.loads(proc.stdout)
    assert [r["name"] for r in results if r["model"] == "symbolic"] == ["psi_inverse", "innovations_inverse_product"]
    assert all(r["exact"] is True and r["residual"] is None and r["model"] in {"symbolic", "symbolic-pendulum", "mimic-symbolic"}
               for r in results)
    assert "symbolic: psi_inverse" in proc.stderr  # progress on stderr


def test_usage_errors_exit_2_with_a_message():
    proc = _run("verify", "--model", "no_such_model")
    assert proc.returncode == 2 and "no model named 'no_such_model'" in proc.stderr
    proc = _run("verify", "--check", "no_such_check")
    assert proc.returncode == 2 and "no check named" in proc.stderr
    proc = _run("verify", "--urdf", "does_not_exist.urdf")
    assert proc.returncode == 2 and proc.stderr.startswith("error:")


def test_list_and_info():
    proc = _run("verify", "--list")
    assert proc.returncode == 0 and "riccati_equation" in proc.stdout and "jain-tree" in proc.stdout
    proc = _run("info", "--model", "jain-tree")
    assert proc.returncode == 0, proc.stderr
    assert "serial-chain segments" in proc.stdout and "sparsity of ℳ" in proc.stdout
    assert proc.stdout.count("parent segment") == 5


# --------------------------------------------------------------------------- options
FACTORIES = '''
import numpy as np
from sko.examples.rigid import planar_chain
from sko.verify.models import random_sko_model
from sko.graphs import TreeDigraph


def chain_system():
    return planar_chain(3)


def bare_model():
    return random_sko_model(TreeDigraph.from_parents({"a": None, "b": "a"}), 1)


def not_a_system():
    return 42
'''


def _run_with(tmp_path, *args: str) -> subprocess.CompletedProcess:
    (tmp_path / "my_factories.py").write_text(FACTORIES)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "sko", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_model_factories_of_a_user_module(tmp_path):
    proc = _run_with(tmp_path, "info", "--model", "my_factories:chain_system")
    assert proc.returncode == 0 and "model my_factories:chain_system: 3 bodies" in proc.stdout, proc.stderr
    proc = _run_with(tmp_path, "verify", "--json", "--model", "my_factories:chain_system", "--model", "my_factories:bare_model",
                     "--check", "crba", "--check", "forward_dynamics")
    assert proc.returncode == 0, proc.stderr
    results = json.loads(proc.stdout)
    assert [(r["model"], r["name"]) for r in results] == [
        ("my_factories:chain_system", "crba"), ("my_factories:chain_system", "forward_dynamics"),
        ("my_factories:bare_model", "crba"), ("my_factories:bare_model", "forward_dynamics")]
    assert all(r["passed"] for r in results)
    for spec, message in (("my_factories:not_a_system", "returned int"), ("my_factories:missing", "no function 'missing'"),
                          ("no_such_module:f", "cannot import module 'no_such_module'")):
        proc = _run_with(tmp_path, "verify", "--model", spec)
        assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1


def test_repeated_options_run_once_and_summary_prints_one_line():
    proc = _run("verify", "--model", "chain", "--model", "chain", "--check", "crba", "--check", "crba", "--summary")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [proc.stdout.strip()] and proc.stdout.startswith("1 results (1 checks on 1 model)")


def test_contradictory_options_are_rejected():
    for args, message in ((["verify", "--floating-base"], "--floating-base needs --urdf"),
                          (["info", "--floating-base"], "--floating-base needs --urdf"),
                          (["verify", "--json", "--summary"], "not allowed with"),
                          (["verify", "--summary", "--failed"], "not allowed with"),
                          (["verify", "--list", "--json"], "no output format"),
                          (["verify", "--model", "chain", "--urdf", "x.urdf"], "not allowed with")):
        proc = _run(*args)
        assert proc.returncode == 2 and message in proc.stderr, (args, proc.stderr)


def test_failed_prints_only_failing_rows():
    code = (
        "import sys\n"
        "from sko.verify import register, compare\n"
        "@register('broken_identity', 'Eq. 0')\n"
        "def broken(case):\n"
        "    x = case.node_vector('x')\n"
        "    return compare(case.dense.phi @ x, x)\n"
        "from sko.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    proc = _run("verify", "--failed", "--model", "chain", "--model", "forest", code=code)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert lines[0].split()[:2] == ["model", "check"]
    assert sorted(line.split()[:2][0] for line in lines[1:-1]) == ["chain", "forest"]
    assert all("broken_identity" in line and line.endswith("FAIL") for line in lines[1:-1])
    assert "2 failed" in lines[-1]


def _column_starts(line: str) -> list[int]:
    """Display columns where the cells of a row start (cells are separated by two spaces or more)."""
    import re
    import unicodedata

    width = lambda s: sum(0 if unicodedata.combining(c) else 1 for c in s)  # noqa: E731
    return [width(line[:m.end()]) for m in re.finditer(r" {2,}", line)]


def test_list_and_results_columns_are_aligned():
    checks, models = _run("verify", "--list").stdout.split("\n\n")
    checks = checks.splitlines()
    assert len({tuple(_column_starts(line)) for line in checks}) == 1 and len(_column_starts(checks[0])) == 2
    assert any("τ̄" in line for line in checks)  # a combining mark, which takes no column
    models = models.splitlines()
    assert models[0].split()[:3] == ["model", "kind", "description"] and len(models) > 10
    assert len({tuple(_column_starts(line)[:2]) for line in models}) == 1
    assert any(line.startswith("symbolic-pendulum ") and " symbolic " in line for line in models)
    table = _run("verify", "--model", "chain").stdout.splitlines()[:-1]
    assert len({tuple(_column_starts(line)) for line in table}) == 1


def test_a_missing_optional_dependency_is_one_line_naming_the_extra():
    code = "import sys\nsys.modules['sympy'] = None\nfrom sko.cli import main\nsys.exit(main(sys.argv[1:]))\n"
    proc = _run("verify", "--symbolic", code=code)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == 'error: sympy is needed for --symbolic: pip install "sko-multibody[symbolic]"'


# --------------------------------------------------------------------------- robot files
MJCF = """<mujoco><worldbody>
  <body name="upper"><joint name="shoulder" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.05"/>
    <body name="lower" pos="0 0 -0.5"><joint name="elbow" axis="0 1 0" range="-90 90"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.04"/></body></body>
</worldbody></mujoco>"""


def _robot(rel: str) -> Path:
    import pytest

    from tests.rigid.pinocchio_map import robots_dir

    root = robots_dir()
    if root is None:
        pytest.skip("example-robot-data is not installed")
    return root / rel


def test_verify_a_robot_with_unphysical_inertias_strictly_and_repaired():
    go1 = str(_robot("go1_description/urdf/go1.urdf"))  # its base inertia breaks the triangle inequality
    proc = _run("verify", "--urdf", go1, "--summary")
    assert proc.returncode == 2 and "link 'base'" in proc.stderr and "run with --inertia repair" in proc.stderr
    assert _run("verify", "--urdf", go1, "--inertia", "strict", "--summary").returncode == 2
    proc = _run("verify", "--urdf", go1, "--inertia", "repair", "--floating-base", "--summary")
    assert proc.returncode == 0, proc.stderr
    assert " 0 failed" in proc.stdout
    warned = [line for line in proc.stderr.splitlines() if line.startswith("warning:")]
    assert len(warned) == 1 and warned[0].startswith("warning: repaired inertia: link 'base' changed by")


def test_every_repaired_link_is_one_warning_line():
    allegro = str(_robot("allegro_hand_description/urdf/allegro_left_hand.urdf"))
    proc = _run("info", "--urdf", allegro, "--inertia", "repair")
    assert proc.returncode == 0, proc.stderr
    warned = [line for line in proc.stderr.splitlines() if line.startswith("warning: repaired inertia: link ")]
    assert len(warned) == 4 and len({line.split("'")[1] for line in warned}) == 4
    assert "model allegro_left_hand.urdf: 16 bodies" in proc.stdout


def test_verify_and_info_an_mjcf_file(tmp_path):
    path = tmp_path / "arm.xml"
    path.write_text(MJCF)
    proc = _run("verify", "--mjcf", str(path), "--json")
    assert proc.returncode == 0, proc.stderr
    results = json.loads(proc.stdout)
    assert {r["model"] for r in results} == {"arm.xml"} and len(results) >= 20 and all(r["passed"] for r in results)
    proc = _run("info", "--mjcf", str(path), "--inertia", "strict")
    assert proc.returncode == 0 and "warning" not in proc.stderr, proc.stderr
    assert "model arm.xml: 2 bodies" in proc.stdout and "'lower'" in proc.stdout
    path.write_text(MJCF.replace('axis="0 1 0"/>', 'axis="0 1 0"/><inertial pos="0 0 0" mass="1" diaginertia="1 1 3"/>', 1))
    proc = _run("verify", "--mjcf", str(path))
    assert proc.returncode == 2 and "MuJoCo rejects" in proc.stderr and "A + B >= C" in proc.stderr


def test_file_options_need_a_file():
    for args, message in ((["verify", "--inertia", "repair"], "--inertia needs --urdf FILE, --mjcf FILE or --models"),
                          (["info", "--inertia", "strict"], "--inertia needs --urdf FILE or --mjcf FILE"),
                          (["verify", "--scheduler", "tcp://x:1"], "--scheduler needs --models"),
                          (["verify", "--inertia", "fix", "--urdf", "x.urdf"], "invalid choice: 'fix'"),
                          (["verify", "--urdf", "x.urdf", "--mjcf", "x.xml"], "not allowed with"),
                          (["info", "--model", "chain", "--mjcf", "x.xml"], "not allowed with"),
                          (["verify", "--mjcf", "x.xml", "--floating-base"], "--floating-base needs --urdf")):
        proc = _run(*args)
        assert proc.returncode == 2 and message in proc.stderr, (args, proc.stderr)


_FIXED_ROBOT = """<robot name="bolted"><link name="base"/>
<link name="arm"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
<joint name="weld" type="fixed"><parent link="base"/><child link="arm"/></joint></robot>"""


def test_verify_and_compile_a_model_without_degrees_of_freedom(tmp_path, monkeypatch, capsys):
    """A URDF whose links are all fixed loads as a system with nv = 0 (sko.io.urdf): no check
    applies to it, and it has no kernels of its own. Checks failed on it with numpy's errors
    (IndexError, "need at least one array to stack") and sko compile --model with IndexError."""
    from sko.cli import main

    path = tmp_path / "bolted.urdf"
    path.write_text(_FIXED_ROBOT)
    assert main(["verify", "--urdf", str(path), "--summary"]) == 0
    out = capsys.readouterr()
    assert "FAILED" not in out.err and "model bolted.urdf has no degrees of freedom: no check applies" in out.err
    (tmp_path / "bolted_robot.py").write_text(f"from sko.io import load_urdf\n\ndef build():\n"
                                              f"    return load_urdf({str(path)!r})\n")
    monkeypatch.chdir(tmp_path)
    assert main(["compile", "--model", "bolted_robot:build", "--quiet"]) == 0, capsys.readouterr().err
    assert main(["verify", "--model", "bolted_robot:build", "--summary"]) == 0
    assert "FAILED" not in capsys.readouterr().err


def test_verify_models_without_degrees_of_freedom_in_a_directory(tmp_path, capsys):
    """``--models DIR`` whose every file loads as a system with nv = 0: each is said to have no
    check that applies, as ``--urdf`` says it, and the run succeeds (it ended in "no check ran",
    status 1). Beside a model with degrees of freedom, the one without is still named."""
    from sko.cli import main

    (tmp_path / "bolted.urdf").write_text(_FIXED_ROBOT)
    (tmp_path / "welded.xml").write_text('<mujoco><worldbody><body name="b"><geom size="0.1"/></body></worldbody></mujoco>')
    assert main(["verify", "--models", str(tmp_path), "--summary"]) == 0
    err = capsys.readouterr().err
    assert "error" not in err and "FAILED" not in err
    for name in ("bolted.urdf", "welded.xml"):
        assert f"model {name} has no degrees of freedom: no check applies" in err
    (tmp_path / "arm.xml").write_text(MJCF)
    assert main(["verify", "--models", str(tmp_path), "--summary", "--check", "mass_matrix_columns"]) == 0
    captured = capsys.readouterr()
    assert "on 1 model" in captured.out and "model bolted.urdf has no degrees of freedom" in captured.err

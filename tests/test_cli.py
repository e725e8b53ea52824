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
    assert all(r["exact"] is True and r["residual"] is None and r["model"] in {"symbolic", "symbolic-pendulum"} for r in results)
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

"""A researcher's own files, run as a new user runs them: the body-type tutorial from any folder,
and ``sko compile --model`` / ``sko verify --model`` on a module in the current folder, through
the installed ``sko`` script (subprocesses)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SKO = Path(sys.executable).parent / "sko"  # the console script installed beside this interpreter


def _run(command: list, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in command], cwd=cwd, capture_output=True, text=True, timeout=600)


def test_tutorial_runs_from_another_folder(tmp_path):
    proc = _run([sys.executable, ROOT / "papers" / "tutorial_body_type.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "agreement with the particle Lagrangian" in proc.stdout
    rows = [line.split() for line in proc.stdout.splitlines() if line.strip().startswith(("christoffel", "power_balance"))]
    assert [row[1] for row in rows] == ["pass", "pass"] and [row[4] for row in rows] == ["FAIL", "FAIL"], proc.stdout


@pytest.fixture(scope="module")
def user_folder(tmp_path_factory) -> Path:
    """A folder holding a user's module ``my_bead.py`` (the tutorial's bead, its kernel cached
    beside this copy, so nothing is compiled before the test compiles it)."""
    folder = tmp_path_factory.mktemp("user")
    shutil.copy(ROOT / "papers" / "tutorial_body_type.py", folder / "my_bead.py")
    return folder


def _cached(folder: Path) -> list:
    """Whether the bead kernel of ``folder/my_bead.py`` loads from numba's cache, per scalar type
    (asked in a fresh process, which compiles nothing)."""
    code = ("import sys; sys.path.insert(0, '.')\n"
            "import numpy as np, my_bead\n"
            "from sko.engine.state_kernels import DTYPES, _arguments\n"
            "d = my_bead.bead_state.dispatcher\n"
            "print([d._cache.load_overload(_arguments(t), d.targetctx) is not None for t in DTYPES])\n")
    proc = _run([sys.executable, "-c", code], folder)
    assert proc.returncode == 0, proc.stderr
    return eval(proc.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not SKO.exists(), reason="the sko console script is not installed beside this interpreter")
def test_compile_model_precompiles_a_user_kernel(user_folder):
    assert _cached(user_folder) == [False, False]
    proc = _run([SKO, "compile", "--model", "my_bead:build", "--quiet"], user_folder)
    assert proc.returncode == 0, proc.stderr
    assert "kernels of my_bead:build compiled" in proc.stderr
    assert _cached(user_folder) == [True, True]


@pytest.mark.skipif(not SKO.exists(), reason="the sko console script is not installed beside this interpreter")
def test_verify_model_imports_from_the_current_folder(user_folder):
    proc = _run([SKO, "verify", "--model", "my_bead:build", "--check", "mass_from_energy", "--check", "power_balance"],
                user_folder)
    assert proc.returncode == 0, proc.stderr
    rows = [line.split() for line in proc.stdout.splitlines() if line.startswith("my_bead:build ")]
    assert sorted(row[1] for row in rows) == ["mass_from_energy", "power_balance"]
    assert all(row[-1] == "pass" for row in rows)
    elsewhere = _run([SKO, "verify", "--model", "my_bead:build"], user_folder.parent)
    assert elsewhere.returncode == 2 and "cannot import module 'my_bead'" in elsewhere.stderr


@pytest.mark.skipif(not SKO.exists(), reason="the sko console script is not installed beside this interpreter")
def test_compile_model_errors_name_the_factory(user_folder):
    proc = _run([SKO, "compile", "--model", "my_bead:missing"], user_folder)
    assert proc.returncode == 2 and "module 'my_bead' has no function 'missing'" in proc.stderr
    proc = _run([SKO, "compile", "--model", "my_bead:identity_residuals"], user_folder)
    assert proc.returncode == 2 and "identity_residuals" in proc.stderr
    proc = _run([SKO, "compile", "--model", "my_bead:build", "--jobs", "2"], user_folder)
    assert proc.returncode == 2 and "--jobs" in proc.stderr

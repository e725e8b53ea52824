"""numba's cache of the kernels is keyed by every kernel source (sko.engine.cache), and the first
compilation in a process says so on standard error."""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sko.engine import cache as kernel_cache
from sko.engine.cache import KERNEL_MODULES, kernel_files


def _name(node) -> str:
    node = node.func if isinstance(node, ast.Call) else node
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")


def _compiles(path: Path) -> bool:
    """Whether a module defines compiled code: a function decorated by numba or by the package's
    kernel decorators (``sko.engine.jit``), or a state kernel registered
    (``sko.engine.state_kernels``)."""
    tree = ast.parse(path.read_text())
    compilers = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if module.split(".")[0] == "numba" or module.split(".")[-1] == "jit" or module.endswith("engine.state_kernels"):
                compilers |= {a.asname or a.name for a in node.names}
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "numba" for a in node.names):
            return True
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and any(_name(d) in compilers for d in node.decorator_list):
            return True
        if isinstance(node, ast.Call) and _name(node) in compilers & {"StateKernel", "state_kernel"}:
            return True
    return False


def test_every_module_with_kernels_is_stamped():
    """A new kernel module must join KERNEL_MODULES, or its callers could run stale code; the
    modules listed without kernels are the declared layouts the kernels compile in and the
    cache itself."""
    found = set()
    for package in ("sko", "sko.algorithms", "sko.graphs"):
        root = Path(next(iter(importlib.util.find_spec(package).submodule_search_locations)))
        found |= {p.resolve() for p in root.rglob("*.py") if "__pycache__" not in p.parts and _compiles(p)}
    stamped = {p.resolve() for p in kernel_files()}
    assert found <= stamped
    assert {p.name for p in stamped - found} == {"fields.py", "layout.py", "cache.py"}
    assert len(stamped) == len(KERNEL_MODULES)


def test_the_stamp_follows_the_contents(tmp_path, monkeypatch):
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("x = 1\n")
    b.write_text("y = 1\n")
    monkeypatch.setattr(kernel_cache, "kernel_files", lambda: [a, b])
    stamps = []
    for text in ("y = 1\n", "y = 1\n", "y = 22\n"):
        b.write_text(text)
        kernel_cache.stamp.cache_clear()
        stamps.append(kernel_cache.stamp())
    kernel_cache.stamp.cache_clear()
    assert stamps[0] == stamps[1] != stamps[2]


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_kernel_compiled_under_another_stamp_is_not_loaded(tmp_path, monkeypatch):
    """The cache entry of a kernel is keyed by the stamp: the same source loads its cached code
    while the stamp holds, and compiles afresh when any kernel source changed."""
    source = tmp_path / "kernels_here.py"
    source.write_text("from sko.engine.jit import kernel\n\n\n@kernel(entry=True)\n"
                      "def plus_one(x):\n    return x + 1\n")
    first = _load(source, "kernels_here").plus_one
    assert first(1) == 2 and sum(first.stats.cache_misses.values()) == 1
    again = _load(source, "kernels_here").plus_one
    assert again(1) == 2 and sum(again.stats.cache_hits.values()) == 1
    monkeypatch.setattr(kernel_cache, "stamp", lambda: "another set of kernel sources")
    changed = _load(source, "kernels_here").plus_one
    assert changed(1) == 2 and sum(changed.stats.cache_misses.values()) == 1


def test_the_first_compilation_says_so_once(tmp_path):
    """A process that compiles kernels prints one line naming the cache; one that loads them
    from the cache prints nothing."""
    (tmp_path / "two_kernels.py").write_text(
        "from sko.engine.jit import kernel\n\n\n@kernel(entry=True)\ndef one(x):\n    return x + 1\n\n\n"
        "@kernel(entry=True)\ndef two(x):\n    return x + 2\n")
    script = f"import sys\nsys.path.insert(0, {str(tmp_path)!r})\nimport two_kernels\nassert two_kernels.one(two_kernels.two(1)) == 4\n"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    cold = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    lines = [line for line in cold.stderr.splitlines() if line.startswith("sko:")]
    assert len(lines) == 1 and "once" in lines[0] and str(tmp_path / "cache") in lines[0] and "sko compile" in lines[0]
    warm = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    assert "sko:" not in warm.stderr


@pytest.mark.parametrize("module", KERNEL_MODULES)
def test_the_listed_modules_exist(module):
    assert importlib.util.find_spec(module) is not None


#: One built-in model of every kind of node: a generic SKO model, rigid bodies (with the
#: constrained, centroidal and regressor checks), flexible bodies with geared rotors, a cluster.
EVERY_KIND = ("random", "arm7", "flexible-geared-arm", "four-bar")


def test_the_reference_backend_compiles_nothing(tmp_path):
    """``sko verify --backend reference`` on an empty cache: the systems' states are built in
    Python too, and no kernel is compiled or cached."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    models = [a for name in EVERY_KIND for a in ("--model", name)]
    done = subprocess.run([sys.executable, "-m", "sko", "verify", "--backend", "reference", "--summary", *models],
                          env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "sko:" not in done.stderr
    assert not [p for p in tmp_path.rglob("*") if p.is_file()]


def test_a_kernel_of_a_module_loaded_from_a_path_runs_again_in_a_new_process(tmp_path):
    """A notebook's or script's body type (a module loaded from a path, which numba records as
    '<dynamic>'): a later process that cannot import '<dynamic>' from the cache entry compiles
    the kernel again instead of failing (the tutorial's bead did, on its second run)."""
    module = tmp_path / "user_body.py"
    module.write_text("import numpy as np\n\nfrom sko.engine.jit import kernel\n\n"
                      "TABLE = np.arange(3.0)  # a global array: numba's environment names the module\n\n\n"
                      "@kernel(entry=True)\ndef scaled(x):\n    return TABLE[2] * x\n")
    script = ("import importlib.util\n"
              f"spec = importlib.util.spec_from_file_location('user_body', {str(module)!r})\n"
              "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
              "print(m.scaled(2.0))\n")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    for _ in range(2):
        run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr

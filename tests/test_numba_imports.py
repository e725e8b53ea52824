"""numba is the engine's: every module of the installed package that imports it (at module level
or inside a function) lives in ``sko.engine``. The reference path (``sko.algorithms``,
``sko.bodies``, ``sko.graphs``) and the layers above the engine reach compiled code through
``sko.engine`` only; a user's kernels (``papers/``, the tests' own body and joint types) import
numba themselves, outside the package."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

PACKAGES = ("sko", "sko.algorithms", "sko.graphs")


def _imports_numba(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "numba" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "numba":
            return True
    return False


def _files() -> dict[Path, str]:
    """Every source file of the installed package, with its module name."""
    found = {}
    for package in PACKAGES:
        root = Path(next(iter(importlib.util.find_spec(package).submodule_search_locations)))
        for path in root.rglob("*.py"):
            if "__pycache__" not in path.parts:
                parts = path.relative_to(root).with_suffix("").parts
                found[path.resolve()] = ".".join((package, *parts)).removesuffix(".__init__")
    return found


def test_only_the_engine_imports_numba():
    importers = {module for path, module in _files().items() if _imports_numba(path)}
    assert "sko.engine.jit" in importers  # the check sees an import where there is one
    outside = sorted(m for m in importers if m != "sko.engine" and not m.startswith("sko.engine."))
    assert not outside, f"modules outside sko.engine import numba: {outside}"


def test_the_check_finds_an_import_inside_a_function(tmp_path):
    path = tmp_path / "lazy.py"
    path.write_text("def f():\n    from numba import njit\n    return njit\n", encoding="utf-8")
    assert _imports_numba(path)
    path.write_text("import numpy\nfrom . import numba\n", encoding="utf-8")
    assert not _imports_numba(path)

"""numba's cache of the kernels is cleared when any kernel source changes (sko.kernel_cache)."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

from sko.kernel_cache import CONSTANT_SOURCES, KERNEL_SOURCES, kernel_files, refresh


def _uses_numba(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "numba":
            return True
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "numba" for a in node.names):
            return True
    return False


def test_every_module_with_kernels_is_stamped():
    """A new kernel module must join KERNEL_SOURCES, or its callers could run stale code."""
    found = set()
    for package in ("sko", "sko.algorithms", "sko.graphs"):
        root = Path(next(iter(importlib.util.find_spec(package).submodule_search_locations)))
        found |= {p.resolve() for p in root.rglob("*.py") if "__pycache__" not in p.parts and _uses_numba(p)}
    stamped = {p.resolve() for p in kernel_files()}
    assert found <= stamped
    constants = stamped - found
    assert {p.name for p in constants} == {"flat.py"} and not any(_uses_numba(p) for p in constants)
    assert sum(len(paths) for paths in KERNEL_SOURCES.values()) == len(found)
    assert sum(len(paths) for paths in CONSTANT_SOURCES.values()) == len(constants)


def test_the_kernels_constants_are_stamped():
    """The flat layout's columns are compiled into the kernels as constants: an edit there (a
    column added or moved) must clear the cache as an edit of a kernel does."""
    stamped = {p.resolve() for p in kernel_files()}
    flat = Path(importlib.util.find_spec("sko.algorithms.compiled.flat").origin).resolve()
    assert flat in stamped


def _entries(cache: Path) -> set[str]:
    return {p.name for p in cache.iterdir() if p.suffix in (".nbi", ".nbc")}


def test_a_changed_source_clears_every_stamped_cache(tmp_path):
    a, b = tmp_path / "a.py", tmp_path / "sub" / "b.py"
    b.parent.mkdir()
    a.write_text("x = 1\n")
    b.write_text("y = 1\n")
    caches = [tmp_path / "__pycache__", b.parent / "__pycache__"]

    def populate():
        for cache, stem in zip(caches, ("a", "b")):
            cache.mkdir(exist_ok=True)
            for name in (f"{stem}.f-1.py311.nbi", f"{stem}.f-1.py311.0.nbc", "other.g-3.py311.nbi"):
                (cache / name).write_text("")

    populate()
    assert refresh([a, b])  # no stamp yet: the caches may predate it
    assert _entries(caches[0]) == _entries(caches[1]) == {"other.g-3.py311.nbi"}
    populate()
    assert not refresh([a, b])  # nothing changed: kept
    assert len(_entries(caches[0])) == 3
    b.write_text("y = 22\n")  # one source changes: the other file's kernels may inline it
    assert refresh([a, b])
    assert _entries(caches[0]) == _entries(caches[1]) == {"other.g-3.py311.nbi"}

"""numba's on-disk cache of the compiled kernels, kept consistent across modules.

numba keys a cached kernel by its own source file only: a kernel that inlines or calls kernels
of another file (the system requests of ``sko.systems.compiled`` inline the state kernels of
``sko.bodies`` and the recursions of ``sko.algorithms.compiled.kernels``) keeps its cached
machine code after that other file changes, and runs the old code. :func:`refresh`, run when
``sko`` is imported, stamps every kernel source (size and modification time) and, when the stamp
differs from the one recorded beside the cache, removes the cached kernels of all of them, so
they compile afresh on first use.

It handles numba's default in-tree cache (``__pycache__`` beside each source). A cache placed
elsewhere (``NUMBA_CACHE_DIR``, or numba's user-wide directory for a read-only install) is left
to numba; clear it by hand after editing a kernel there.
"""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Iterable
from pathlib import Path

__all__ = ["KERNEL_SOURCES", "CONSTANT_SOURCES", "kernel_files", "refresh"]

#: Every module that defines numba kernels or intrinsics, by package and path inside it.
KERNEL_SOURCES = {
    "sko": ("bodies/compiled_joints.py", "bodies/compiled_state.py", "systems/compiled.py"),
    "sko.algorithms": ("compiled/borrow.py", "compiled/kernels.py", "compiled/operational_space.py", "cfa/flat.py"),
}
#: Modules without kernels whose constants the kernels compile in: the flat layout's columns.
CONSTANT_SOURCES = {"sko.algorithms": ("compiled/flat.py",)}

STAMP = "sko-kernels.stamp"


def kernel_files() -> list[Path]:
    """The kernel source files of the installed package (packages located, not imported)."""
    files = []
    for sources in (KERNEL_SOURCES, CONSTANT_SOURCES):
        for package, paths in sources.items():
            spec = importlib.util.find_spec(package)
            root = Path(next(iter(spec.submodule_search_locations)))
            files += [root / p for p in paths]
    return files


def refresh(files: Iterable[Path] | None = None) -> bool:
    """Remove the cached kernels of ``files`` (default :func:`kernel_files`) when any of them
    changed since the stamp was recorded; True when it removed them. Silent when the cache is
    not writable (numba then recompiles in memory or caches elsewhere)."""
    files = sorted(kernel_files() if files is None else files)
    digest = hashlib.sha256()
    for f in files:
        try:
            st = f.stat()
        except OSError:
            continue
        digest.update(f"{f}|{st.st_mtime_ns}|{st.st_size}\n".encode())
    stamp = digest.hexdigest()
    caches = sorted({f.parent / "__pycache__" for f in files})
    record = caches[0] / STAMP if caches else None
    try:
        if record is None or (record.exists() and record.read_text() == stamp):
            return False
        for cache in caches:
            stems = {f.stem for f in files if f.parent / "__pycache__" == cache}
            for entry in cache.glob("*.nb[ic]") if cache.is_dir() else ():
                if entry.name.split(".", 1)[0] in stems:
                    entry.unlink(missing_ok=True)
        record.parent.mkdir(exist_ok=True)
        record.write_text(stamp)
    except OSError:
        return False
    return True

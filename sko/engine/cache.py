"""numba's on-disk cache of the compiled kernels, keyed by every kernel source.

numba keys a cached kernel by its own source file: a kernel that calls kernels of another file
(a system request calls the recursions of ``sko.engine.aba``) would keep its
cached machine code after that other file changed, and run the old code. Every kernel of the
package (:func:`sko.engine.jit.kernel`) and every registered body-type kernel
(:mod:`sko.engine.state_kernels`) is cached by :class:`StampedCache` instead, whose key adds
:func:`stamp`: a hash of the contents of all the kernel sources below (modules with kernels,
and the modules whose constants the kernels compile in). An edited source gives new keys, so
nothing stale is ever loaded, in numba's default in-tree cache as in ``NUMBA_CACHE_DIR`` or the
user-wide cache of a read-only install.

The first compilation in a process prints one line on standard error (:func:`announce`): the
kernels compile once, on first use, and are cached in the directory it names.
``sko compile`` fills the cache ahead of time.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
import threading
from functools import lru_cache
from pathlib import Path

from numba.core import event
from numba.core.caching import FunctionCache, IndexDataCacheFile

__all__ = ["KERNEL_MODULES", "kernel_files", "stamp", "StampedCache", "CheckedCache", "announce", "cache_directory"]

#: Every module whose source a compiled kernel depends on: modules defining kernels, and those
#: whose constants (declared layouts) the kernels compile in.
KERNEL_MODULES = (
    "sko.engine.cache",
    "sko.engine.fields",
    "sko.engine.layout",
    "sko.engine.jit",
    "sko.engine.indexing",
    "sko.engine.borrow",
    "sko.engine.blocks",
    "sko.engine.rigid_blocks",
    "sko.engine.spo",
    "sko.engine.rnea",
    "sko.engine.crba",
    "sko.engine.aba",
    "sko.engine.operational_space",
    "sko.engine.derivatives",
    "sko.engine.local_derivatives",
    "sko.engine.rollout",
    "sko.engine.cfa",
    "sko.engine.state_kernels",
    "sko.engine.hooks",
    "sko.engine.joint_registry",
    "sko.engine.joints",
    "sko.engine.toolkit",
    "sko.engine.bodies.rigid",
    "sko.engine.bodies.flexible",
    "sko.engine.bodies.cluster",
    "sko.engine.requests",
    "sko.engine.request_views",
    "sko.engine.mass_matrix",
    "sko.engine.rigid_rnea",
    "sko.engine.lanes",
    "sko.engine.lane_derivatives",
    "sko.engine.lane_rollout",
    "sko.engine.regressors",
    "sko.engine.centroidal",
    "sko.engine.rigid_centroidal",
    "sko.engine.constrained",
)


def kernel_files() -> list[Path]:
    """The source files of :data:`KERNEL_MODULES` (located, not imported)."""
    return [Path(importlib.util.find_spec(name).origin) for name in KERNEL_MODULES]


@lru_cache(maxsize=1)
def stamp() -> str:
    """A hash of the contents of every kernel source (computed once per process)."""
    digest = hashlib.sha256()
    for path in kernel_files():
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


class StampedCache(FunctionCache):
    """numba's cache of one function, with :func:`stamp` in the key of every entry and one index
    file per signature: processes compiling the float64 and the complex128 versions of a kernel
    at the same time (``sko compile``) never write the same index (numba rewrites an index whole,
    so one of two concurrent writers would lose its entry, or name another's code)."""

    #: what the compiled code holds besides the function's source, in its keys and file names
    #: (a subclass's compiler flags); nothing here
    flags: tuple = ()

    def _index_key(self, sig, codegen):
        return (*super()._index_key(sig, codegen), stamp(), *self.flags)

    def _file(self, sig) -> IndexDataCacheFile:
        name = "-".join([self._impl.filename_base, *self.flags, hashlib.sha256(str(sig).encode()).hexdigest()[:12]])
        return IndexDataCacheFile(self._cache_path, name, self._impl.locator.get_source_stamp())

    def _load_overload(self, sig, target_context):
        if not self._enabled:
            return None
        try:
            data = self._file(sig).load(self._index_key(sig, target_context.codegen()))
        except ImportError:  # numba names a module loaded from a path (a notebook's, a script's)
            return None  # '<dynamic>', which a later process cannot import: compile it again
        return None if data is None else self._impl.rebuild(target_context, data)

    def _save_overload(self, sig, data):
        if not self._enabled or not self._impl.check_cachable(data):
            return
        self._impl.locator.ensure_cache_path()
        self._file(sig).save(self._index_key(sig, data.codegen), self._impl.reduce(data))


class CheckedCache(StampedCache):
    """:class:`StampedCache` of a function's bounds-checked twin (compiled from the same source
    with numba's ``boundscheck``): index files and keys of its own, as numba's keys hold no
    compiler flag."""

    flags = ("boundscheck",)


_announced = threading.Event()


def cache_directory(dispatcher) -> str:
    """Where ``dispatcher`` (a kernel with a :class:`StampedCache`) keeps its cached code."""
    cache = getattr(dispatcher, "_cache", None)
    return str(getattr(cache, "cache_path", "memory (not cached)"))


class _Announcer(event.Listener):
    """Prints :func:`announce`'s line at the start of the first compilation of a kernel."""

    def on_start(self, ev):
        if _announced.is_set():
            return
        dispatcher = (ev.data or {}).get("dispatcher")
        if isinstance(getattr(dispatcher, "_cache", None), StampedCache):
            announce(cache_directory(dispatcher))

    def on_end(self, ev):
        pass


def announce(where: str) -> None:
    """The one line, once per process, saying that kernels compile now and where they go."""
    if not _announced.is_set():
        _announced.set()
        print(f"sko: compiling numba kernels on first use; once only, cached in {where} "
              "(`sko compile` does it ahead of time)", file=sys.stderr, flush=True)


event.register("numba:compile", _Announcer())

"""Sweeps of a dynamics request over many states, chunk by chunk, on Dask: :func:`sweep`.

The states are a (chunked) dask array along their first axis; each chunk is one task that
evaluates the request with one batched call of the system's method, so a chunk runs compiled and
in parallel over its states like any batch. The tasks run on Dask's local scheduler or on the
``dask.distributed.Client`` given (a ``LocalCluster``, SSH, Kubernetes, an HPC job queue): Dask
schedules them, reruns those of a worker that dies and shows progress on its dashboard.

A worker never receives a system: it receives the *model*, a factory ``"package.module:function"``
(or a top-level function) that builds it, and builds the system once per process, then fills the
state tables from its own kernel cache. Results come back as one array, or go chunk by chunk to a
Zarr store, so a sweep larger than memory works; a rerun into the same store skips the chunks
already written (a marker is written after each chunk's data), so an interrupted sweep resumes.

Needs the ``scale`` extra (dask, distributed, zarr).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

import numpy as np

from sko.arrays import checked_array
from sko.graphs.errors import DimensionError, SKOError

__all__ = ["REQUESTS", "sweep", "system_of"]

#: what a sweep evaluates: the batched system method and the third input it takes
REQUESTS = {
    "inverse_dynamics": "dv",
    "forward_dynamics": "tau",
    "mass_matrix": None,
    "mass_matrix_inverse": None,
    "inverse_dynamics_derivatives": "dv",
    "forward_dynamics_derivatives": "tau",
    "energy": None,
}


def system_of(model):
    """The system a model gives: ``model`` a factory ``"package.module:function"`` or a callable
    (called with no argument); built once per process and kept."""
    if isinstance(model, str):
        return _built(model)
    if callable(model):
        return _called(model)
    raise SKOError(f"sweep: model must be a factory 'package.module:function' or a callable that builds the system, "
                   f"got {type(model).__name__} (a worker builds its own system from it)")


@lru_cache(maxsize=8)
def _built(spec: str):
    module, _, name = spec.partition(":")
    if not module or not name:
        raise SKOError(f"sweep: model {spec!r} must read 'package.module:function'")
    try:
        factory = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as error:
        raise SKOError(f"sweep: model {spec!r} cannot be imported: {error}") from None
    return _called(factory)


@lru_cache(maxsize=8)
def _called(factory: Callable):
    return factory()


def _evaluate(q, v, x, model, what: str, shape: tuple | None):
    """One chunk: the batched request (``x`` unused for a request without a third input), in
    ``(rows, *shape)`` (as it comes for ``None``)."""
    system = system_of(model)
    method = getattr(system, what)
    if what in ("mass_matrix", "mass_matrix_inverse"):
        out = method(q)
    elif what == "energy":
        out = method(q, v)
    else:
        out = method(q, v, x)
    out = np.stack(out, axis=1) if isinstance(out, tuple) else np.asarray(out)
    return out if shape is None else out.reshape((q.shape[0], *shape))


def sweep(model, what: str, q, v=None, x=None, *, chunk: int = 4096, client=None, store: str | Path | None = None,
          progress: bool = False):
    """``what`` (:data:`REQUESTS`) of the system ``model`` builds at every state ``q[s], v[s], x[s]``.

    Parameters
    ----------
    model : a factory ``"package.module:function"`` or a top-level function building the system
    q, v, x : arrays ``(N, nq)``, ``(N, nv)`` (zero if omitted), numpy or dask; ``x`` is ``dv``
        or ``tau``, as the request reads
    chunk : states per task (numpy inputs; a dask input keeps its chunks)
    client : a ``dask.distributed.Client`` to run on, or None for Dask's default scheduler
    store : a Zarr store (a directory) to write the results to, chunk by chunk; an existing
        store written by an interrupted sweep of the same shape resumes
    progress : show a progress bar (Dask's, on the terminal)

    Returns
    -------
    numpy.ndarray or zarr.Array
        ``(N, *shape)``: one state's result per row (the derivatives' three matrices along axis
        1); the Zarr array when ``store`` is given.
    """
    from sko.optional import require

    da = require("dask.array", "sweeps (sko.systems.sweep)")
    if what not in REQUESTS:
        raise SKOError(f"sweep: what must be one of {', '.join(map(repr, REQUESTS))}, got {what!r}")
    system = system_of(model)
    Q = _states(da, q, "q", system.q_size, "nq", chunk)
    V = _states(da, v, "v", system.dof_size, "nv", Q.chunks[0], rows=Q.shape[0])
    X = _states(da, x, REQUESTS[what] or "x", system.dof_size, "nv", Q.chunks[0], rows=Q.shape[0])
    shape = _evaluate(np.asarray(Q[:1]), np.asarray(V[:1]), np.asarray(X[:1]), model, what, None).shape[1:]
    axes = {"drop_axis": 1} if not shape else {"new_axis": list(range(2, 1 + len(shape)))} if len(shape) > 1 else {}
    out = da.map_blocks(_evaluate, Q, V, X, model=model, what=what, shape=shape, dtype=float,
                        chunks=(Q.chunks[0], *((n,) for n in shape)), **axes)
    if store is None:
        return _compute(out, client, progress)
    return _to_store(out, Path(store), client, progress)


def _states(da, x, name: str, size: int, symbol: str, chunks, rows: int | None = None):
    if x is None:
        if rows is None:
            raise DimensionError(f"sweep: {name} is needed")
        return da.zeros((rows, size), chunks=(chunks, size))
    lazy = hasattr(x, "dask")
    if not lazy:
        x = checked_array(x, 2, f"sweep: {name}").astype(float)
    if x.ndim != 2 or x.shape[1] != size:
        raise DimensionError(f"sweep: {name} has shape {x.shape}, expected (N, {symbol} = {size})")
    if rows is not None and x.shape[0] != rows:
        raise DimensionError(f"sweep: {name} has {x.shape[0]} states but q has {rows}")
    x = x if lazy else da.from_array(x, chunks=(chunks, size))
    return x.rechunk({0: chunks, 1: size})


def _compute(out, client, progress: bool):
    if client is not None:
        future = client.compute(out)
        if progress:
            from distributed import progress as show

            show(future)
        return future.result()
    if progress:
        from dask.diagnostics import ProgressBar

        with ProgressBar():
            return out.compute()
    return out.compute()


def _to_store(out, path: Path, client, progress: bool):
    """Write ``out`` to the Zarr array at ``path`` chunk by chunk, skipping the chunks an earlier
    run finished (their markers in ``path / ".sko-done"``)."""
    import zarr

    if path.exists() and not (path / ".sko-done").is_dir():
        raise SKOError(f"sweep: store {str(path)!r} exists and was not written by a sweep; give a new path")
    chunks = tuple(c[0] for c in out.chunks)
    array = zarr.open_array(str(path), mode="a", shape=out.shape, chunks=chunks, dtype=out.dtype)
    if array.shape != out.shape or array.chunks != chunks:
        raise SKOError(f"sweep: store {str(path)!r} holds an array of shape {array.shape} in chunks {array.chunks}; "
                       f"this sweep writes {out.shape} in chunks {chunks}: give a new path")
    done = path / ".sko-done"
    done.mkdir(exist_ok=True)
    starts = np.concatenate([[0], np.cumsum(out.chunks[0])])
    blocks = [(i, int(starts[i]), int(starts[i + 1])) for i in range(len(out.chunks[0]))
              if not (done / str(i)).exists()]
    import dask

    tasks = [dask.delayed(_write_block)(out.blocks[i], str(path), start, stop, str(done / str(i)))
             for i, start, stop in blocks]
    if tasks:
        _compute(dask.delayed(list)(tasks), client, progress)
    return zarr.open_array(str(path), mode="r")


def _write_block(block, path: str, start: int, stop: int, marker: str) -> int:
    """One chunk into the store, then its marker (a chunk whose marker exists is complete)."""
    import zarr

    zarr.open_array(path, mode="r+")[start:stop] = block
    Path(marker).touch()
    return stop - start

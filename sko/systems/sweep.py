"""Sweeps of a dynamics request over many states, chunk by chunk, on Dask: :func:`sweep`.

The states are a (chunked) dask array along their first axis; each chunk is one task that
evaluates the request with one batched call of the system's method, so a chunk runs compiled and
in parallel over its states like any batch. The tasks run on Dask's local scheduler or on the
``dask.distributed.Client`` given (a ``LocalCluster``, SSH, Kubernetes, an HPC job queue): Dask
schedules them, reruns those of a worker that dies and shows progress on its dashboard.

A worker receives the *model*: a system, pickled small (its compiled tables are left out and
rebuilt on the worker from the worker's kernel cache), or a factory ``"package.module:function"``
(or a top-level function) from which the worker builds the system once per process. Results come back as one array, or go chunk by chunk to a
Zarr group, so a sweep larger than memory works; a rerun into the same store skips the chunks
already written (each chunk marks itself in the group's ``chunks_done`` array after its data),
so an interrupted sweep resumes.

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

__all__ = ["REQUESTS", "SHORT", "sweep", "sample", "system_of"]

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
    """The system a model gives: ``model`` a system (pickled to the workers, small: they rebuild
    its compiled tables), a factory ``"package.module:function"`` or a callable (called with no
    argument; built once per process and kept)."""
    if isinstance(model, str):
        return _built(model)
    if hasattr(model, "random_configuration") and hasattr(model, "forward_dynamics"):
        return model
    if callable(model):
        return _called(model)
    raise SKOError(f"model must be a system, a factory 'package.module:function' or a callable that builds the "
                   f"system, got {type(model).__name__}")


@lru_cache(maxsize=8)
def _built(spec: str):
    module, _, name = spec.partition(":")
    if not module or not name:
        raise SKOError(f"model {spec!r} must read 'package.module:function'")
    try:
        factory = getattr(importlib.import_module(module), name)
    except Exception as error:  # noqa: BLE001 - the user's module: missing, a syntax error, raising at import
        raise SKOError(f"model {spec!r} cannot be imported: {type(error).__name__}: {error}") from None
    return _called(factory)


@lru_cache(maxsize=8)
def _called(factory: Callable):
    try:
        system = factory()
    except SKOError:
        raise
    except Exception as error:  # noqa: BLE001 - the user's factory: named, not a traceback
        raise SKOError(f"model factory {getattr(factory, '__name__', factory)!r} raised "
                       f"{type(error).__name__}: {error}") from None
    if not hasattr(system, "random_configuration"):
        raise SKOError(f"model factory {getattr(factory, '__name__', factory)!r} returned {type(system).__name__}, "
                       "not a system")
    return system


def _evaluate(q, v, x, model, what: str, shape: tuple | None):
    """One chunk: the batched request (``x`` unused for a request without a third input), in
    ``(rows, *shape)`` (as it comes for ``None``)."""
    out = _request(system_of(model), what, q, v, x)
    return out if shape is None else out.reshape((q.shape[0], *shape))


def _request(system, what: str, q, v, x) -> np.ndarray:
    """``what`` of ``system`` at a batch of states, one array (the derivatives' three matrices
    along axis 1)."""
    method = getattr(system, what)
    if what in ("mass_matrix", "mass_matrix_inverse"):
        out = method(q)
    elif what == "energy":
        out = method(q, v)
    else:
        out = method(q, v, x)
    return np.stack(out, axis=1) if isinstance(out, tuple) else np.asarray(out)


def sweep(model, what: str, q, v=None, x=None, *, chunk: int = 4096, client=None, store: str | Path | None = None,
          progress: bool = False):
    """``what`` (:data:`REQUESTS`) of the system ``model`` builds at every state ``q[s], v[s], x[s]``.

    Parameters
    ----------
    model : the system, a factory ``"package.module:function"`` or a top-level function building it
    q, v, x : arrays ``(N, nq)``, ``(N, nv)`` (zero if omitted), numpy or dask; ``x`` is ``dv``
        or ``tau``, as the request reads
    chunk : states per task (numpy inputs; a dask input keeps its chunks)
    client : a ``dask.distributed.Client`` to run on, or None for Dask's default scheduler
    store : a Zarr group (a directory) to write the results to, chunk by chunk, as its array
        named ``what``; a group left by an interrupted sweep of the same shape resumes
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
    Q, q = _states(da, q, "q", system.q_size, "nq", chunk)
    V, v = _states(da, v, "v", system.dof_size, "nv", Q.chunks[0], rows=Q.shape[0])
    X, x = _states(da, x, REQUESTS[what] or "x", system.dof_size, "nv", Q.chunks[0], rows=Q.shape[0])
    first = [y[:1] if y is not None else Y[:1].compute(scheduler="sync") for y, Y in ((q, Q), (v, V), (x, X))]
    shape = _evaluate(*first, model, what, None).shape[1:]
    if store is None and client is not None and all(y is not None for y in (q, v, x)):
        return _scattered(client, (q, v, x), Q.chunks[0], model, what, shape, progress)
    axes = {"drop_axis": 1} if not shape else {"new_axis": list(range(2, 1 + len(shape)))} if len(shape) > 1 else {}
    out = da.map_blocks(_evaluate, Q, V, X, model=model, what=what, shape=shape, dtype=float,
                        chunks=(Q.chunks[0], *((n,) for n in shape)), **axes)
    if store is None:
        return _compute(out, client, progress)
    return _to_store(out, Path(store), what, client, progress)


def _scattered(client, arrays, chunks, model, what: str, shape: tuple, progress: bool) -> np.ndarray:
    """The in-memory sweep of numpy states on a cluster: the chunks scattered to the workers
    first (a graph holding the arrays would be serialised whole by the scheduler), one task each.
    Scattered under keys of their own (not their hash: the same states swept twice in a row
    would meet the first sweep's keys as they are released)."""
    starts = np.concatenate([[0], np.cumsum(chunks)]).astype(int)
    if not isinstance(model, str) and not callable(model):  # a system: on every worker once, its tables built once
        model = client.scatter(model, broadcast=True, hash=False)
    parts = [client.scatter([a[i:j] for i, j in zip(starts[:-1], starts[1:])], direct=True, hash=False) for a in arrays]
    futures = client.map(_evaluate, *parts, model=model, what=what, shape=shape, pure=False)
    if progress:
        from distributed import progress as show

        show(futures)
    return np.concatenate(client.gather(futures)) if futures else np.zeros((0, *shape))


def _states(da, x, name: str, size: int, symbol: str, chunks, rows: int | None = None):
    """``(dask array, the checked numpy array or None for a dask input)``; zeros for ``None``."""
    if x is None:
        if rows is None:
            raise DimensionError(f"sweep: {name} is needed")
        x = np.zeros((rows, size))
    lazy = hasattr(x, "dask")
    if not lazy:
        x = checked_array(x, 2, f"sweep: {name}").astype(float)
    if x.ndim != 2 or x.shape[1] != size:
        raise DimensionError(f"sweep: {name} has shape {x.shape}, expected (N, {symbol} = {size})")
    if rows is not None and x.shape[0] != rows:
        raise DimensionError(f"sweep: {name} has {x.shape[0]} states but q has {rows}")
    X = x if lazy else da.from_array(x, chunks=(chunks, size))
    return X.rechunk({0: chunks, 1: size}), None if lazy else x


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


DONE = "chunks_done"  #: the group's array of finished chunks (one bool per chunk, a Zarr chunk each)


def _group(path: Path, what: str, chunks: int):
    """The Zarr group at ``path`` for a sweep or sample, with its :data:`DONE` array of
    ``chunks`` entries; refuses a path holding anything else."""
    import zarr

    if path.exists():
        try:
            group = zarr.open_group(str(path), mode="a")
            done = group[DONE]
        except Exception:  # noqa: BLE001 - not a group, or a group without our array
            raise SKOError(f"{what}: store {str(path)!r} exists and was not written by sko's {what}; give a new "
                           "path") from None
        if done.shape != (chunks,):
            raise SKOError(f"{what}: store {str(path)!r} holds a run of {done.shape[0]} chunks; this {what} has "
                           f"{chunks}: give a new path")
        return group
    group = zarr.open_group(str(path), mode="a")
    group.require_array(DONE, shape=(chunks,), chunks=(1,), dtype=bool, fill_value=False)
    return group


def _array(group, name: str, shape: tuple, chunk: int, dtype, what: str, path: Path):
    array = group.require_array(name, shape=shape, chunks=(chunk, *shape[1:]), dtype=dtype)
    if array.shape != shape or array.chunks[0] != chunk:
        raise SKOError(f"{what}: store {str(path)!r} holds {name!r} of shape {array.shape} in chunks of "
                       f"{array.chunks[0]}; this {what} writes {shape} in chunks of {chunk}: give a new path")
    return array


def _to_store(out, path: Path, what: str, client, progress: bool):
    """Write ``out`` to the array ``what`` of the Zarr group at ``path`` chunk by chunk (equal
    chunks), skipping the chunks an earlier run finished."""
    import dask

    sizes = out.chunks[0]
    if len(set(sizes[:-1])) > 1 or (len(sizes) > 1 and sizes[-1] > sizes[0]):
        out = out.rechunk({0: sizes[0]})
        sizes = out.chunks[0]
    group = _group(path, "sweep", len(sizes))
    _array(group, what, out.shape, sizes[0], out.dtype, "sweep", path)
    finished = group[DONE][:]
    starts = np.concatenate([[0], np.cumsum(sizes)])
    tasks = [dask.delayed(_write_block)(out.blocks[i], str(path), what, i, int(starts[i]), int(starts[i + 1]))
             for i in range(len(sizes)) if not finished[i]]
    if tasks:
        _compute(dask.delayed(sum)(tasks), client, progress)
    import zarr

    return zarr.open_group(str(path), mode="r")[what]


def _write_block(block, path: str, what: str, i: int, start: int, stop: int) -> int:
    """One chunk into the store, then its entry of :data:`DONE` (a chunk marked there is complete)."""
    import zarr

    group = zarr.open_group(path, mode="r+")
    group[what][start:stop] = block
    group[DONE][i] = True
    return stop - start


# ----------------------------------------------------------------------------- random samples
#: short names of the requests for :func:`sample` and ``sko sample --what``
SHORT = {"fd": "forward_dynamics", "id": "inverse_dynamics", "M": "mass_matrix", "Minv": "mass_matrix_inverse",
         "energy": "energy", "dfd": "forward_dynamics_derivatives", "did": "inverse_dynamics_derivatives"}


def sample(model, states: int, what, store: str | Path, *, chunk: int = 4096, seed: int = 0, client=None,
           progress: bool = False):
    """``states`` random states of the system ``model`` builds and the requests ``what`` (names
    of :data:`REQUESTS` or :data:`SHORT`) at them, into the Zarr group ``store``: arrays ``q``,
    ``v``, ``dv`` and/or ``tau`` (as the requests read them; normal, unit variance) and one per
    request. Each chunk of states is drawn from ``(seed, chunk index)`` on the worker that
    evaluates it, so a rerun into the same store skips the finished chunks and draws the others
    as the first run would have: an interrupted sample resumes. Returns the group."""
    from sko.optional import require

    require("dask", "sampling (sko sample)")
    zarr = require("zarr", "sampling (sko sample)")
    import dask

    names = [SHORT.get(w, w) for w in ([what] if isinstance(what, str) else what)]
    for name in names:
        if name not in REQUESTS:
            raise SKOError(f"sample: {name!r} is not a request: one of {', '.join(SHORT)} or {', '.join(REQUESTS)}")
    if isinstance(states, bool) or not isinstance(states, int) or states < 1:
        raise DimensionError(f"sample: states must be a positive integer, got {states!r}")
    if isinstance(chunk, bool) or not isinstance(chunk, int) or chunk < 1:
        raise DimensionError(f"sample: chunk must be a positive integer, got {chunk!r}")
    path, chunks = Path(store), -(-states // chunk)
    system = system_of(model)
    first = _sampled(system, names, np.random.default_rng([seed, 0]), 1)
    group = _group(path, "sample", chunks)
    for name, value in first.items():
        _array(group, name, (states, *value.shape[1:]), chunk, value.dtype, "sample", path)
    finished = group[DONE][:]
    tasks = [dask.delayed(_sample_chunk)(model, names, seed, i, i * chunk, min(states, (i + 1) * chunk), str(path))
             for i in range(chunks) if not finished[i]]
    if tasks:
        _compute(dask.delayed(sum)(tasks), client, progress)
    return zarr.open_group(str(path), mode="r")


def _sampled(system, names: list, rng, n: int) -> dict:
    """``n`` random states and the requests at them: ``{array name: (n, …)}``."""
    Q = np.array([system.random_configuration(rng) for _ in range(n)])
    out = {"q": Q, "v": rng.normal(size=(n, system.dof_size))}
    for name in names:
        x = REQUESTS[name]
        if x is not None and x not in out:
            out[x] = rng.normal(size=(n, system.dof_size))
    for name in names:
        x = REQUESTS[name]
        out[name] = _request(system, name, Q, out["v"], None if x is None else out[x])
    return out


def _sample_chunk(model, names: list, seed: int, i: int, start: int, stop: int, path: str) -> int:
    """Chunk ``i`` of a sample: its states drawn from ``(seed, i)``, the requests, then its entry
    of :data:`DONE`."""
    import zarr

    data = _sampled(system_of(model), names, np.random.default_rng([seed, i]), stop - start)
    group = zarr.open_group(path, mode="r+")
    for name, value in data.items():
        group[name][start:stop] = value
    group[DONE][i] = True
    return stop - start

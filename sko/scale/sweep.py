"""Sweeps of a dynamics request over many states, chunk by chunk, on Dask: :func:`sweep`.

The states are a (chunked) dask array along their first axis; each chunk is one task that
evaluates the request with one batched call of the system's method, so a chunk runs compiled and
in parallel over its states like any batch. The tasks run on Dask's local scheduler or on the
``dask.distributed.Client`` given (a ``LocalCluster``, SSH, Kubernetes, an HPC job queue): Dask
schedules them, reruns those of a worker that dies and shows progress on its dashboard.

A worker receives the *model*: a system, pickled small (its compiled tables are left out and
rebuilt on the worker from the worker's kernel cache), or a factory ``"package.module:function"``
(or a top-level function) from which the worker builds the system once per process. Results
come back as one array, or go chunk by chunk to a
Zarr group, so a sweep larger than memory works. A store knows what it holds (the model, the
package version, the states, the chunking; :mod:`sko.scale.stores`): a rerun into it skips the
chunks already written (each chunk flags itself after its data), so an interrupted sweep
resumes, and a sweep of another request adds its array; a run asking another question is
refused, naming what differs.

Needs the ``scale`` extra (dask, distributed, zarr).
"""

from __future__ import annotations

import importlib
import numbers
import os
import weakref
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

import numpy as np

from sko.arrays import checked_array, plain_numbers_as_floats
from sko.graphs.errors import DimensionError, SKOError
from sko.systems.catalogue import DECLARATIONS, INPUTS_OF, SHORT_NAMES, added
from sko.scale.identity import model_identity
from sko.scale.stores import (FORMAT, StoreError, finished, open_store, package_version, result_array, write_chunk,
                              writing)

__all__ = ["REQUESTS", "SHORT", "INPUTS", "sweep", "sample", "system_of"]

#: what a sweep evaluates: ``{request: the third input it takes, or None}``, from the catalogue
#: (:data:`~sko.systems.catalogue.INPUTS_OF`)
REQUESTS = INPUTS_OF


def system_of(model):
    """The system a model gives: ``model`` a system (pickled to the workers, small: they rebuild
    its compiled tables), a factory ``"package.module:function"`` or a callable (called with no
    argument; built once per process and kept)."""
    if isinstance(model, str):
        return _built(model)
    if _is_system(model):
        return model
    if callable(model):
        return _called(model)
    raise SKOError(f"model must be a system, a factory 'package.module:function' or a callable that builds the "
                   f"system, got {type(model).__name__}")


def _is_system(model) -> bool:
    """Whether ``model`` is a system itself (not a factory that builds one in each process)."""
    return hasattr(model, "random_configuration") and hasattr(model, "forward_dynamics")


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


def _evaluate(q, v, x, model, what: str, shape: tuple | None, recorded: tuple | None = None):
    """One chunk: the batched request (``x`` unused for a request without a third input), in
    ``(rows, *shape)`` (as it comes for ``None``); with ``recorded`` (a store's ``(surface,
    path, model identity)``, for a model a factory builds), of the model the store records only
    (:func:`_same_model`)."""
    system = system_of(model)
    if recorded is not None:
        _same_model(system, model, *recorded)
    out = _request(system, what, q, v, x)
    return out if shape is None else out.reshape((q.shape[0], *shape))


_IDENTITIES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _identity(system) -> str:
    """:func:`~sko.scale.identity.model_identity` of ``system``, taken once per system, before it
    is used (the caller takes it first): data its functions fill as they run (a cache) would
    otherwise change it with every chunk."""
    try:
        return _IDENTITIES[system]
    except KeyError:
        identity = _IDENTITIES[system] = model_identity(system)
        return identity
    except TypeError:  # a system that cannot be weakly referenced: taken each time
        return model_identity(system)


def _same_model(system, model, surface: str, path: str, recorded: str) -> None:
    """A :class:`~sko.scale.stores.StoreError` unless ``system``, which a task built from
    ``model``, is the model the store at ``path`` records: a factory may build another system in
    another process (unseeded random parameters, other code on a cluster's node), whose results
    would be written as the recorded model's."""
    found = _identity(system)
    if found != recorded:
        raise StoreError(f"{surface}: a task built another model from {model!r} than the store {path!r} records "
                         f"(identity {found[:12]}…, recorded {recorded[:12]}…): a factory must build the same system "
                         "in every process (seeded random parameters, the same code on every worker)")


def _request(system, what: str, q, v, x) -> np.ndarray:
    """``what`` of ``system`` at a batch of states, one array (the derivatives' three matrices
    along axis 1)."""
    out = DECLARATIONS[what].evaluate(system, q, v, x)
    return np.stack(out, axis=1) if isinstance(out, tuple) else np.asarray(out)


def sweep(model, what: str, q, v=None, x=None, *, chunk: int = 4096, client=None, store: str | Path | None = None,
          progress: bool = False, overwrite: bool = False):
    """``what`` (:data:`REQUESTS`, or its short name in :data:`SHORT`) of the system ``model``
    builds at every state ``q[s], v[s], x[s]``.

    Parameters
    ----------
    model : the system, a factory ``"package.module:function"`` or a top-level function building it
    what : one request (a string; :func:`sample` evaluates several)
    q, v, x : arrays ``(N, nq)``, ``(N, nv)`` (zero if omitted), numpy or dask; ``x`` is ``dv``
        or ``tau``, as the request reads
    chunk : states per task, a positive integer (at most ``N`` are taken)
    client : a ``dask.distributed.Client`` to run on, or None for Dask's default scheduler
    store : a Zarr group (a directory) to write the results to, chunk by chunk, as its array
        named ``what`` (:mod:`sko.scale.stores`): a store of the same model, states and
        chunking resumes its unfinished chunks and takes further requests; one holding anything
        else is refused
    progress : show a progress bar (Dask's, on the terminal)
    overwrite : replace what ``store`` holds instead of resuming it

    Returns
    -------
    numpy.ndarray or zarr.Array
        ``(N, *shape)``: one state's result per row (the derivatives' three matrices along axis
        1); the Zarr array when ``store`` is given.

    Raises
    ------
    SKOError, DimensionError, StoreError
        An unknown request or model, states of the wrong shape, a ``chunk`` that is not a
        positive integer, a store holding another run (:class:`~sko.scale.stores.StoreError`).
    """
    from sko.optional import require

    da = require("dask.array", "sweeps (sko.scale.sweep)")
    (what,) = _request_names(what, "sweep", one=True)
    chunk = _count(chunk, "sweep: chunk", 1)
    store = _options("sweep", store, client, overwrite, required=False)
    system = system_of(model)
    identity = None if store is None else _identity(system)  # before the system is used
    Q, q, tq = _states(da, q, "q", system.q_size, "nq", chunk)
    rows, chunks = Q.shape[0], Q.chunks[0]
    V, v, tv = _states(da, v, "v", system.dof_size, "nv", chunks, rows=rows)
    X, x, tx = _states(da, x, REQUESTS[what] or "x", system.dof_size, "nv", chunks, rows=rows)
    if not rows:  # no state: the result's shape from one at the neutral configuration
        if store is not None:
            raise DimensionError("sweep: q holds no state: there is nothing to store")
        zero = np.zeros((1, system.dof_size))
        return np.zeros((0, *_evaluate(system.neutral_configuration()[None], zero, zero, model, what, None).shape[1:]))
    first = [y[:1] if y is not None else Y[:1].compute(scheduler="sync") for y, Y in ((q, Q), (v, V), (x, X))]
    shape = _evaluate(*first, model, what, None).shape[1:]
    if store is None and client is not None and all(y is not None for y in (q, v, x)):
        return _scattered(client, (q, v, x), Q.chunks[0], model, what, shape, progress)
    axes = {"drop_axis": 1} if not shape else {"new_axis": list(range(2, 1 + len(shape)))} if len(shape) > 1 else {}
    out = da.map_blocks(_evaluate, Q, V, X, model=model, what=what, shape=shape, dtype=float,
                        recorded=None if store is None or _is_system(model) else ("sweep", str(store), identity),
                        chunks=(Q.chunks[0], *((n,) for n in shape)), **axes)
    if store is None:
        return _compute(out, client, progress)
    read = {"v": tv} if DECLARATIONS[what].velocities else {}
    if REQUESTS[what] is not None:
        read[REQUESTS[what]] = tx
    read |= _declared(what)
    return _to_store(out, store, identity, what, tq, read, client, progress, overwrite)


def _request_names(what, surface: str, one: bool) -> list[str]:
    """The request names ``what`` gives (names of :data:`REQUESTS` or :data:`SHORT`): one string
    for a sweep, a string or a sequence of them for a sample; else the error naming ``what``."""
    if isinstance(what, str):
        given = [what]
    elif one:
        raise SKOError(f"{surface}: what must be one request name (a string), got {type(what).__name__} {what!r}; "
                       "sample evaluates several requests at once")
    elif isinstance(what, (list, tuple)) and what and all(isinstance(w, str) for w in what):
        given = list(dict.fromkeys(what))
    else:
        raise SKOError(f"{surface}: what must be a request name or a non-empty list of them, got "
                       f"{type(what).__name__} {what!r}")
    names = [SHORT.get(w, w) for w in given]
    for name in names:
        if name not in REQUESTS:
            raise SKOError(f"{surface}: what must be one of {', '.join(map(repr, REQUESTS))} or their short names "
                           f"{', '.join(SHORT)}; {name!r} is not a request")
    return names


def _options(surface: str, store, client, overwrite, required: bool) -> Path | None:
    """The store's path (None for none, where it is optional), the client and ``overwrite``
    checked; else the error naming the argument."""
    if not isinstance(overwrite, (bool, np.bool_)):
        raise SKOError(f"{surface}: overwrite must be True or False, got {overwrite!r}")
    if client is not None and not (hasattr(client, "compute") and hasattr(client, "scatter")):
        raise SKOError(f"{surface}: client must be a dask.distributed.Client (or None for Dask's local scheduler), got "
                       f"{type(client).__name__}")
    if store is None and not required:
        return None
    if not isinstance(store, (str, os.PathLike)) or not str(store):
        raise SKOError(f"{surface}: store must be the path of a Zarr group (a directory), got {store!r}")
    return Path(store)


def _count(x, what: str, minimum: int, error: type[SKOError] = DimensionError) -> int:
    """``x`` as an ``int`` of at least ``minimum`` (numpy integers too), else ``error`` naming ``what``."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (numbers.Integral, np.integer)) or x < minimum:
        kind = "a positive" if minimum == 1 else "a non-negative" if minimum == 0 else f"an at least {minimum}"
        raise error(f"{what} must be {kind} integer, got {x!r}")
    return int(x)


#: the most tasks (chunks) one sweep or sample makes: Dask's scheduler holds every task of a
#: graph, and a store one flag per chunk (a million is a large graph already)
MAX_TASKS = 2**20


def _tasks(count: int, states: int, chunk: int, surface: str) -> None:
    """A :class:`DimensionError` unless ``count`` tasks fit :data:`MAX_TASKS` (more would take
    the scheduler, and a store's flags, longer than the states take)."""
    if count > MAX_TASKS:
        raise DimensionError(f"{surface}: {states} states in chunks of {chunk} are {count} tasks, more than {MAX_TASKS}: "
                             "give a larger chunk, or fewer states")


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
    """``(dask array, the checked numpy array or None for a dask input, its token)``; zeros for
    ``None``; real numbers only (the results are float64). The token (Dask's, of the data for
    numpy, of the graph for dask) is what a store records of the input."""
    from dask.base import tokenize

    if x is None:
        if rows is None:
            raise DimensionError(f"sweep: {name} is needed")
        x = np.zeros((rows, size))
    lazy = hasattr(x, "dask")
    if not lazy:
        x = plain_numbers_as_floats(checked_array(x, 2, f"sweep: {name}"), f"sweep: {name}")
    if np.dtype(x.dtype).kind not in "biuf":  # a store holds float64: a complex part or a symbol would be dropped
        raise DimensionError(f"sweep: {name} must hold real numbers, got {np.dtype(x.dtype)}")
    x = x if lazy else x.astype(float)
    if x.ndim != 2 or x.shape[1] != size:
        raise DimensionError(f"sweep: {name} has shape {x.shape}, expected (N, {symbol} = {size})")
    if rows is not None and x.shape[0] != rows:
        raise DimensionError(f"sweep: {name} has {x.shape[0]} states but q has {rows}")
    if rows is None:  # the states, in chunks of the sweep's chunk: one task each
        _tasks(-(-x.shape[0] // chunks), x.shape[0], chunks, "sweep")
    token = tokenize(x)
    X = x if lazy else da.from_array(x, chunks=(chunks, size))
    return X.rechunk({0: chunks, 1: size}), None if lazy else x, token


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


def _declared(what: str) -> dict:
    """What a store records of the request ``what`` besides its name: for one :func:`declare
    <sko.systems.catalogue.declare>` added, its identity (its declaration and compiled part, a
    user's code: :func:`~sko.scale.identity.model_identity` of them), so that a store never
    takes another request of the same name as it; nothing for the package's own, which its
    version stands for."""
    if not added(what):
        return {}
    from sko.engine.requests import REQUESTS as COMPILED

    return {"request": model_identity((DECLARATIONS[what], COMPILED[what]))}


def _record(identity: str, kind: str, states: int, chunk: int, **choice) -> dict:
    """What a store of ``kind`` records of its run (:mod:`sko.scale.stores`), ``identity`` the model's."""
    return {"format": FORMAT, "kind": kind, "model": identity, "sko": package_version(),
            "states": states, "chunk": chunk, **choice}


def _to_store(out, path: Path, identity: str, what: str, token: str, read: dict, client, progress: bool,
              overwrite: bool):
    """Write ``out`` to the array ``what`` of the store at ``path`` chunk by chunk (equal
    chunks), skipping the chunks an earlier run finished."""
    import dask
    import zarr

    sizes = out.chunks[0]
    if len(set(sizes[:-1])) > 1 or (len(sizes) > 1 and sizes[-1] > sizes[0]):
        out = out.rechunk({0: sizes[0]})
        sizes = out.chunks[0]
    record = _record(identity, "sweep", out.shape[0], sizes[0], q=token)
    with writing(path, "sweep"):
        group = open_store(path, record, overwrite, "sweep")
        result_array(group, what, out.shape, sizes[0], out.dtype, read, path, "sweep")
        done = finished(group, what)
        starts = np.concatenate([[0], np.cumsum(sizes)])
        tasks = [dask.delayed(_write_block)(out.blocks[i], str(path), what, i, int(starts[i]))
                 for i in range(len(sizes)) if not done[i]]
        if tasks:
            _compute(dask.delayed(sum)(tasks), client, progress)
    return zarr.open_group(str(path), mode="r")[what]


def _write_block(block, path: str, what: str, i: int, start: int) -> int:
    """One chunk into the store, then its flag (a chunk flagged is complete)."""
    write_chunk(path, what, i, start, block)
    return len(block)


# ----------------------------------------------------------------------------- random samples
#: short names of the requests for :func:`sample` and ``sko sample --what``, from the catalogue
#: (:data:`~sko.systems.catalogue.SHORT_NAMES`)
SHORT = SHORT_NAMES

#: the inputs a sample draws, each chunk's from its own stream ``(seed, chunk, index here)``:
#: what is drawn does not depend on which requests a run asks for
INPUTS = ("q", "v", "dv", "tau")


def sample(model, states: int, what, store: str | Path, *, chunk: int = 4096, seed: int = 0, client=None,
           progress: bool = False, overwrite: bool = False):
    """``states`` random states of the system ``model`` builds and the requests ``what`` (names
    of :data:`REQUESTS` or :data:`SHORT`, one or a list) at them, into the Zarr group ``store``:
    arrays ``q``, ``v``, ``dv`` and/or ``tau`` (as the requests read them; normal, unit
    variance) and one per request. Chunk ``i``'s inputs are drawn from ``(seed, i)`` (each from
    a stream of its own, :data:`INPUTS`) on the worker that evaluates it, so a rerun into the
    same store draws what the first run drew: it resumes the unfinished chunks and computes
    only the requests it adds; a store of another model, seed, number of states or chunking is
    refused (:mod:`sko.scale.stores`; ``overwrite=True`` replaces it). ``chunk``: states per
    task (at most ``states``); ``seed`` a non-negative integer. Returns the group."""
    from sko.optional import require

    require("dask", "sampling (sko sample)")
    zarr = require("zarr", "sampling (sko sample)")
    import dask

    names = _request_names(what, "sample", one=False)
    states = _count(states, "sample: states", 1)
    chunk = min(_count(chunk, "sample: chunk", 1), states)
    seed = _count(seed, "sample: seed", 0, SKOError)
    path, chunks = _options("sample", store, client, overwrite, required=True), -(-states // chunk)
    _tasks(chunks, states, chunk, "sample")
    system = system_of(model)
    identity = _identity(system)  # before the system is used
    first = _sampled(system, names, seed, 0, 1)
    arrays = [x for x in INPUTS if x in first] + names
    with writing(path, "sample"):
        group = open_store(path, _record(identity, "sample", states, chunk, seed=seed), overwrite, "sample")
        for name in arrays:
            result_array(group, name, (states, *first[name].shape[1:]), chunk, first[name].dtype,
                         _declared(name) if name in names else {}, path, "sample")
        done = {name: finished(group, name) for name in arrays}
        built = None if _is_system(model) else identity  # a factory's system, built in each task's process
        tasks = [dask.delayed(_sample_chunk)(model, pending, seed, i, i * chunk, min(states, (i + 1) * chunk), str(path),
                                             built)
                 for i in range(chunks) if (pending := [n for n in arrays if not done[n][i]])]
        if tasks:
            _compute(dask.delayed(sum)(tasks), client, progress)
    return zarr.open_group(str(path), mode="r")


def _sampled(system, names: list, seed: int, i: int, n: int) -> dict:
    """The ``n`` random states of chunk ``i`` (each input from its own stream) and the requests
    ``names`` at them: ``{array name: (n, …)}``."""
    streams = {x: np.random.default_rng([seed, i, k]) for k, x in enumerate(INPUTS)}
    Q = np.array([system.random_configuration(streams["q"]) for _ in range(n)])
    out = {"q": Q, "v": streams["v"].normal(size=(n, system.dof_size))}
    for x in INPUTS[2:]:
        if any(REQUESTS.get(name) == x for name in names):
            out[x] = streams[x].normal(size=(n, system.dof_size))
    for name in names:
        if name in REQUESTS:
            x = REQUESTS[name]
            out[name] = _request(system, name, Q, out["v"], None if x is None else out[x])
    return out


def _sample_chunk(model, arrays: list, seed: int, i: int, start: int, stop: int, path: str,
                  identity: str | None) -> int:
    """The arrays ``arrays`` of chunk ``i`` of a sample: its inputs drawn from ``(seed, i)``,
    the requests among them computed (for a factory's model, ``identity`` given, by the model of
    that identity only: :func:`_same_model`), each written and then flagged."""
    system = system_of(model)
    if identity is not None:
        _same_model(system, model, "sample", path, identity)
    data = _sampled(system, arrays, seed, i, stop - start)
    for name in arrays:
        write_chunk(path, name, i, start, data[name])
    return stop - start

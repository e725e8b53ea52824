"""Result stores that know what they hold: the Zarr groups of :func:`~sko.scale.sweep.sweep`
and :func:`~sko.scale.sweep.sample`.

A store records, in its attributes (``sko``), what it holds: the kind of run, the model's
identity (:func:`~sko.scale.identity.model_identity`), the package version, the number of
states, the states per chunk and what chose the states (the seed of a sample, the token of a
sweep's ``q``); each result array records the other inputs it read (a sweep's ``v``, ``dv`` or
``tau``) and, for a request a user declared, the request's identity. A later run into the store must ask the same question: it resumes what matches,
computes the arrays it adds and the chunks not finished (each array has its own flags, one per
chunk, in the group :data:`DONE`, set after the chunk's data), and is refused — one
:class:`StoreError` naming the differing field and the way out — when anything recorded
differs. ``overwrite=True`` replaces what a store holds.

While a run writes a store, the lock file beside it (``<store>.lock``) holds the writing
process's id and host: a second writer is refused, and a lock left by a process that died (on
this host) is taken over.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from sko.graphs.errors import SKOError

__all__ = ["StoreError", "DONE", "FORMAT", "package_version", "writing", "open_store", "result_array", "finished",
           "write_chunk"]

FORMAT = 2  #: the layout of a store's record (1: one ``chunks_done`` array shared by every array)
DONE = "chunks_done"  #: the group of per-array chunk flags
_WAY_OUT = "give a new path, or overwrite=True to replace what it holds"


class StoreError(SKOError, ValueError):
    """A result store that holds something else than a run asks for (another model, seed,
    request input, number of states or chunking), that is not a store, that another process
    is writing, or that cannot be written where it is asked for. The message names the store,
    the differing field and the way out."""


def package_version() -> str:
    """The installed version of the package (recorded in a store)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("sko-multibody")
    except PackageNotFoundError:  # a source tree without an install
        return "unknown"


# ----------------------------------------------------------------------------- the writer's lock
def _lock_path(path: Path) -> Path:
    path = path.resolve()
    return path.with_name(path.name + ".lock")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a process of another user
        return True
    return True


@contextmanager
def writing(path: Path, surface: str):
    """Hold the lock of the store at ``path`` while the block runs (module docstring); a store
    another living process writes raises :class:`StoreError` naming that process."""
    lock = _lock_path(path)
    me = {"pid": os.getpid(), "host": socket.gethostname()}
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # no such place, read-only, a file on the way
        raise _unwritable(path, surface, exc) from None
    for _ in range(3):  # a stale lock removed by another process at the same time: try again
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            try:
                owner = json.loads(lock.read_text() or "{}")
            except (OSError, ValueError):
                owner = {}
            pid, host = owner.get("pid"), owner.get("host")
            if isinstance(pid, int) and host == me["host"] and not _alive(pid):
                lock.unlink(missing_ok=True)  # its writer died: the chunks it left unmarked are redone
                continue
            who = f"process {pid} on {host}" if pid else "another process"
            raise StoreError(f"{surface}: store {str(path)!r} is being written by {who} (lock file {str(lock)!r}); "
                             "wait for it to finish, or remove the lock file if that process no longer runs") from None
        except OSError as exc:  # a folder that cannot be written
            raise _unwritable(path, surface, exc) from None
        with os.fdopen(fd, "w") as f:
            json.dump(me, f)
        break
    else:
        raise StoreError(f"{surface}: the lock file {str(lock)!r} of store {str(path)!r} cannot be taken")
    try:
        yield
    finally:
        lock.unlink(missing_ok=True)


def _unwritable(path: Path, surface: str, exc: OSError) -> StoreError:
    """The error of a store the operating system will not let a run write, with its reason and
    the file it concerns."""
    reason = f"{exc.strerror or type(exc).__name__}" + (f" ({exc.filename})" if exc.filename else "")
    return StoreError(f"{surface}: cannot write store {str(path)!r}: {reason}; give a path in a writable folder")


# ----------------------------------------------------------------------------- the record
def _is_group(path: Path) -> bool:
    return (path / "zarr.json").is_file() or (path / ".zgroup").is_file()


def open_store(path: Path, record: dict, overwrite: bool, surface: str):
    """The Zarr group at ``path`` holding the run ``record`` describes (created, or checked
    against the record it holds: :class:`StoreError` naming the first differing field)."""
    import zarr

    if path.exists():
        if not path.is_dir() or (not _is_group(path) and any(path.iterdir())):
            raise StoreError(f"{surface}: {str(path)!r} exists and is not a Zarr group: give a new path")
        if _is_group(path) and overwrite:
            shutil.rmtree(path)
    if not _is_group(path):
        try:
            group = zarr.open_group(str(path), mode="w")
            group.attrs["sko"] = record
        except OSError as exc:
            raise _unwritable(path, surface, exc) from None
        return group
    group = zarr.open_group(str(path), mode="a")
    held = group.attrs.get("sko")
    if not isinstance(held, dict) or held.get("format") != record["format"]:
        raise StoreError(f"{surface}: store {str(path)!r} holds no record of what it holds in this format (written by "
                         f"another program or an earlier version of sko): {_WAY_OUT}")
    for field, value in record.items():
        if held.get(field) != value:
            raise StoreError(f"{surface}: store {str(path)!r} holds a run with {_field(field)} = {held.get(field)!r}; "
                             f"this {surface} has {value!r}: {_WAY_OUT}")
    return group


def _field(name: str) -> str:
    return {"model": "model (the identity of its description)", "sko": "sko version",
            "q": "q (the token of the states)"}.get(name, name)


def result_array(group, name: str, shape: tuple, chunk: int, dtype, inputs: dict, path: Path, surface: str):
    """The array ``name`` of ``group`` and its chunk flags, created or checked: an existing one
    must have ``shape`` in chunks of ``chunk`` rows and have read the same ``inputs`` (a field
    → token mapping), else :class:`StoreError` naming what differs."""
    flags = -(-shape[0] // chunk)
    done = group.require_group(DONE)
    if name in group.array_keys():
        array = group[name]
        if array.shape != shape or array.chunks[0] != chunk or array.dtype != np.dtype(dtype):
            raise StoreError(f"{surface}: store {str(path)!r} holds {name!r} of shape {array.shape} ({array.dtype}, "
                             f"chunks of {array.chunks[0]}); this {surface} writes {shape} ({np.dtype(dtype)}, chunks "
                             f"of {chunk}): {_WAY_OUT}")
        held = array.attrs.get("inputs", {})
        for field in sorted(set(held) | set(inputs)):
            if held.get(field) != inputs.get(field):
                raise StoreError(f"{surface}: store {str(path)!r} holds {name!r} computed from another {field!r} "
                                 f"(token {held.get(field)!r}, this {surface} gives {inputs.get(field)!r}): {_WAY_OUT}")
        if name not in done.array_keys() or done[name].shape != (flags,):
            raise StoreError(f"{surface}: store {str(path)!r} holds {name!r} without its chunk flags: {_WAY_OUT}")
        return array
    array = group.create_array(name, shape=shape, chunks=(chunk, *shape[1:]), dtype=dtype, fill_value=0)
    array.attrs["inputs"] = inputs
    # a new array's chunks are not done, whatever flags an array of its name removed by hand left
    done.create_array(name, shape=(flags,), chunks=(1,), dtype=bool, fill_value=False, overwrite=True)
    return array


def finished(group, name: str) -> np.ndarray:
    """The chunk flags of array ``name``: True where its chunk is complete."""
    return group[DONE][name][:]


def write_chunk(path: str, name: str, i: int, start: int, value) -> None:
    """Rows ``start:start + len(value)`` of array ``name`` (chunk ``i``), then its flag."""
    import zarr

    group = zarr.open_group(path, mode="r+")
    group[name][start:start + len(value)] = value
    group[DONE][name][i] = True

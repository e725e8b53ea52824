"""The command line: ``sko verify``, ``sko info``, ``sko sample`` and ``sko compile`` (also ``python -m sko …``;
API.md).

``verify [--model NAME|--model MODULE:FUNCTION|--urdf FILE|--mjcf FILE|--models DIR|GLOB [--scheduler ADDRESS]]
[--symbolic] [--json|--summary|--failed] [--backend compiled|reference]``
runs the identity checks of :mod:`sko.verify` and prints one row per check (model, name,
equation, residual or "exact", pass/fail) and a summary line; it exits with status 1 when any
check fails, 2 on a usage error or a missing optional dependency (one line on stderr, naming the
extra to install). ``--model package.module:function`` calls a user's factory, which returns a
system (anything with ``random_configuration`` and ``sko_model``, taken at a random state), an
:class:`~sko.SKOModel` or ``(model, a, b)``. ``--summary`` prints only the summary line,
``--failed`` only the failing rows and the summary. ``--json`` prints one JSON list of
``{"model", "name", "equation", "residual", "exact", "passed"}`` objects. ``--backend`` runs the
algorithms compiled or on the generic reference path, whatever the environment variable
``SKO_BACKEND`` says (a value of it that names no backend is an error, status 2, unless
``--backend`` is given). Repeated ``--model`` and ``--check``
options run once each; contradictory ones (``--floating-base`` without ``--urdf``, ``--inertia``
without ``--urdf`` or ``--mjcf``, two output formats) are rejected. Progress goes to stderr.
``--models`` runs the checks on every URDF and MJCF file in a directory or matching a glob, one
task per file, on a Dask cluster with ``--scheduler`` (a file that does not load is one failing
``load`` row). ``--mjcf FILE`` compiles the model with MuJoCo (:func:`sko.io.load_mjcf`);
``--inertia repair`` loads a file whose inertias no physical body has by the nearest physical
ones, printing one ``warning:`` line per repaired link on stderr (``strict``, the default,
rejects such a file naming the link).
``info [--model NAME|--model MODULE:FUNCTION|--urdf FILE|--mjcf FILE]`` describes a model: its digraph, node and hinge dimensions,
serial-chain segments and the sparsity of ``ℳ``.
``sample --model MODULE:FUNCTION --states N --out STORE [--what fd,id,M,...] [--chunk N]
[--seed S] [--scheduler ADDRESS] [--overwrite] [--quiet]`` draws random states of the system a factory builds and
evaluates the requests at them on Dask (:func:`sko.scale.sweep.sample`), chunk by chunk into a
Zarr group; run again on the same store, it resumes where an interrupted run stopped and computes
the requests it adds, and refuses a store of another run (``--overwrite`` replaces it).
``compile [--jobs N] [--quiet]`` compiles every kernel now, for float64 and complex128, into
numba's on-disk cache (:mod:`sko.precompile`), with a progress bar on stderr: later processes
load the kernels instead of compiling them on first use. ``compile --model MODULE:FUNCTION``
compiles only what the factory's system runs (its own body types' state kernels included).
A factory's module is imported from the current folder too, as ``python -m`` and pytest do.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import os
import sys
import time
import unicodedata
import warnings
from collections.abc import Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path

import numpy as np

from sko.graphs.errors import SKOError

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sko", description="SKO models: identity checks and model information.")
    sub = parser.add_subparsers(dest="command", required=True)

    verify = sub.add_parser("verify", help="check every identity of SKO.md on models")
    source = verify.add_mutually_exclusive_group()
    source.add_argument("--model", action="append", metavar="NAME", help="a registered model, or a factory "
                        "package.module:function returning a system, an SKOModel or (model, a, b) (repeatable; default: all)")
    source.add_argument("--urdf", metavar="FILE", help="a rigid system from a URDF file, at a random state")
    source.add_argument("--mjcf", metavar="FILE", help="a rigid system from an MJCF file (compiled by MuJoCo), at a random state")
    source.add_argument("--models", metavar="DIR|GLOB", help="every URDF (.urdf) and MJCF (.xml) file in a directory "
                        "(recursively) or matching a glob, one task each (with --scheduler, on a Dask cluster)")
    verify.add_argument("--scheduler", metavar="ADDRESS", help="with --models: a dask.distributed scheduler to run on")
    verify.add_argument("--floating-base", action="store_true", help="with --urdf: a free-floating base")
    _inertia_option(verify)
    verify.add_argument("--symbolic", action="store_true", help="prove the identities exactly on symbolic models")
    output = verify.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print one JSON list of results")
    output.add_argument("--summary", action="store_true", help="print only the summary line")
    output.add_argument("--failed", action="store_true", help="print only the failing rows and the summary")
    verify.add_argument("--check", action="append", metavar="NAME", help="run only this check (repeatable)")
    verify.add_argument("--list", action="store_true", help="list the checks and models, run nothing")
    verify.add_argument("--backend", choices=("compiled", "reference"), default=None,
                        help="run the algorithms compiled (default for float data) or on the generic reference path")

    info = sub.add_parser("info", help="digraph, dimensions, segments and sparsity of a model")
    isource = info.add_mutually_exclusive_group()
    isource.add_argument("--model", default="jain-tree", metavar="NAME",
                         help="a registered model or a factory package.module:function (default: jain-tree)")
    isource.add_argument("--urdf", metavar="FILE", help="a rigid system from a URDF file")
    isource.add_argument("--mjcf", metavar="FILE", help="a rigid system from an MJCF file (compiled by MuJoCo)")
    info.add_argument("--floating-base", action="store_true", help="with --urdf: a free-floating base")
    _inertia_option(info)

    sample = sub.add_parser("sample", help="random states of a model and requests at them, into a Zarr group (on Dask)")
    sample.add_argument("--model", required=True, metavar="MODULE:FUNCTION",
                        help="a factory package.module:function returning the system (each worker builds its own)")
    sample.add_argument("--states", type=int, required=True, metavar="N", help="how many random states")
    sample.add_argument("--what", default="fd", metavar="LIST",
                        help="comma-separated requests, by name or short name (fd, id, M, Ag, did, ...: sko.systems.catalogue.SHORT_NAMES; a name it lacks is refused with the list) (default: fd)")
    sample.add_argument("--out", required=True, metavar="STORE", help="the Zarr group to write; run again to resume")
    sample.add_argument("--chunk", type=int, default=4096, metavar="N", help="states per task (default: 4096)")
    sample.add_argument("--seed", type=int, default=0, help="the states of chunk i are drawn from (seed, i)")
    sample.add_argument("--scheduler", metavar="ADDRESS",
                        help="a dask.distributed scheduler to run on (default: Dask's local scheduler)")
    sample.add_argument("--overwrite", action="store_true",
                        help="replace what STORE holds (by default a rerun resumes it, and a store of another run is refused)")
    sample.add_argument("--quiet", action="store_true", help="no progress bar")

    compile_ = sub.add_parser("compile", help="compile every kernel now into numba's cache (first use is then fast)")
    compile_.add_argument("--jobs", type=int, default=None, metavar="N",
                          help="worker processes (default: one per scalar type when the machine has two cores)")
    compile_.add_argument("--quiet", action="store_true", help="no progress bar")
    compile_.add_argument("--model", metavar="MODULE:FUNCTION", help="only the kernels of the system a factory "
                          "package.module:function returns: its body types' state kernels and the requests they feed")
    return parser


def _inertia_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--inertia", choices=("strict", "repair"), help="with --urdf or --mjcf: reject unphysical "
                        "link inertias (strict, the default) or replace them by the nearest physical ones (repair)")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "compile":
        return _reported(lambda checked: _compile(checked, parser), args)  # a worker's failure: one error line
    if args.command == "sample":
        return _reported(_sample, args)
    many = getattr(args, "models", None)
    if args.floating_base and not (args.urdf or many):
        parser.error("--floating-base needs --urdf FILE" + (" or --models" if args.command == "verify" else ""))
    if args.inertia is not None and not (args.urdf or args.mjcf or many):
        parser.error("--inertia needs " + ("--urdf FILE, --mjcf FILE or --models" if args.command == "verify"
                                           else "--urdf FILE or --mjcf FILE"))
    if getattr(args, "scheduler", None) and not args.models:
        parser.error("--scheduler needs --models")
    if args.command == "verify" and args.list and (args.json or args.summary or args.failed):
        parser.error("--list prints the checks and models; it takes no output format")
    return _reported(_verify if args.command == "verify" else _info, args)


def _reported(command, args) -> int:
    """``command(args)``, with the project's errors and a missing optional dependency as one
    ``error:`` line and exit status 2."""
    try:
        if getattr(args, "backend", None) is None:  # --backend overrides SKO_BACKEND, which is judged here
            from sko.engine.backend import get_backend

            get_backend()  # SKO_BACKEND naming no backend: one line now, not a failure of every check
        return command(args)
    except SKOError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:  # an optional dependency imported deeper down
        from sko.optional import EXTRAS

        extra = EXTRAS.get((exc.name or "").split(".")[0])
        hint = f': pip install "sko-multibody[{extra}]"' if extra else ""
        print(f"error: {exc.name} is needed for this command{hint}", file=sys.stderr)
        return 2


# --------------------------------------------------------------------------- verify
def _file_case(args):
    """The case of the system in ``--urdf`` or ``--mjcf``; each repaired inertia is one
    ``warning:`` line on stderr."""
    from sko.inertia import InertiaRepairWarning

    from .verify.models import case_from

    option = "--urdf" if args.urdf else "--mjcf"
    try:
        from sko.io import load_mjcf, load_urdf
    except ImportError:
        raise SKOError(f"{option} needs the loaders of sko.io, which are not available in this installation") from None
    inertia = args.inertia or "strict"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", InertiaRepairWarning)
        try:
            if args.urdf:
                system = load_urdf(args.urdf, floating_base=args.floating_base, inertia=inertia)
            else:
                system = load_mjcf(args.mjcf, inertia=inertia)
        except SKOError as exc:  # the loaders' hint, in the command line's words
            raise SKOError(str(exc).replace("load with inertia='repair'", "run with --inertia repair")) from None
    for w in caught:
        if isinstance(w.message, InertiaRepairWarning):
            for repair in w.message.repairs or (str(w.message),):
                print(f"warning: repaired inertia: {repair}", file=sys.stderr)
        else:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    return case_from(system, Path(args.urdf or args.mjcf).name)  # keeps the system: the physics checks run on it


def _unique(values):
    """``values`` without repeats, in order (``None`` stays ``None``)."""
    return None if values is None else list(dict.fromkeys(values))


def _cause(exc: BaseException) -> str:
    """``Type: message`` of an exception, on one line (a syntax error with its file and line)."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@contextmanager
def _current_folder_importable():
    """The current folder first on ``sys.path`` for the duration, as ``python -m`` and pytest
    put it there: a factory's module beside the user imports, though the installed ``sko``
    script's own folder is what Python put first."""
    folder = os.getcwd()
    sys.path.insert(0, folder)
    try:
        yield
    finally:
        if folder in sys.path:  # the first occurrence: the one inserted above (unless the module took it)
            sys.path.remove(folder)


def _factory_result(spec: str):
    """What a user's factory ``package.module:function`` returns, the module imported from the
    current folder too (:func:`_current_folder_importable`). A module that cannot be imported
    (missing, a syntax error, an exception at import), a factory that needs arguments or
    raises, is one :class:`SKOError` naming the factory and the cause, never a traceback."""
    module_name, _, function_name = spec.partition(":")
    with _current_folder_importable():
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise SKOError(f"--model {spec}: cannot import module {module_name!r}: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - the user's module: a syntax error, an exception at import
            raise SKOError(f"--model {spec}: importing module {module_name!r} failed: {_cause(exc)}") from None
        factory = getattr(module, function_name, None)
        if not callable(factory):
            raise SKOError(f"--model {spec}: module {module_name!r} has no function {function_name!r}")
        try:
            inspect.signature(factory).bind()
        except TypeError as exc:
            raise SKOError(f"--model {spec}: factory {function_name!r} cannot be called without arguments ({exc}); "
                           "a factory takes none") from None
        except ValueError:  # no signature to inspect (a builtin): the call below says what is wrong
            pass
        try:
            return factory()
        except Exception as exc:  # noqa: BLE001 - the user's factory
            raise SKOError(f"--model {spec}: factory {function_name!r} raised {_cause(exc)}") from None


def _factory_case(spec: str):
    """The case of a user's factory ``package.module:function`` (see the module docstring). Any
    failure of the user's code — a module that cannot be imported (missing, a syntax error, an
    exception at import), a factory that needs arguments or raises, a result that is not a model —
    is one :class:`SKOError` naming the factory and the cause, never a traceback."""
    from sko.model import SKOModel

    from .verify.models import case_from

    built = _factory_result(spec)
    function_name = spec.partition(":")[2]
    if not isinstance(built, (SKOModel, tuple)):
        if not (hasattr(built, "sko_model") and hasattr(built, "random_configuration")):
            raise SKOError(f"--model {spec} returned {type(built).__name__}: expected a system (with random_configuration "
                           "and sko_model), an SKOModel or (model, a, b)")
    try:
        return case_from(built, spec)  # a system is taken at a random state and kept for the physics checks
    except SKOError as exc:
        if spec in str(exc):
            raise
        raise SKOError(f"--model {spec}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - the user's system at a random state
        raise SKOError(f"--model {spec}: the {type(built).__name__} factory {function_name!r} returned fails at a random "
                       f"state: {_cause(exc)}") from None


def _display_width(text: str) -> int:
    """Columns ``text`` takes in a terminal (combining marks take none, wide characters two)."""
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _columns(rows) -> list[str]:
    """Rows of cells as lines with aligned columns."""
    widths = [max(_display_width(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell + " " * (w - _display_width(cell)) for cell, w in zip(row, widths)).rstrip() for row in rows]


def _progress(symbolic: bool):
    stream = sys.stderr
    tty = stream.isatty()
    if not (tty or symbolic):
        return None
    start = time.perf_counter()

    def report(done: int, total: int, model: str, check: str) -> None:
        line = f"[{done + 1:>4}/{total}] {time.perf_counter() - start:6.1f}s  {model}: {check}"
        if tty:
            stream.write("\r" + line.ljust(78)[:78])
            if done + 1 == total:
                stream.write("\n")
        else:
            stream.write(line + "\n")
        stream.flush()

    return report


def _verify(args) -> int:
    from .verify import REGISTRY, model_names, run, skipped_checks

    if args.list:
        rows = [("check", "equation", "modes")]
        for check in REGISTRY:
            rows.append((check.name, check.equation,
                         "numeric+symbolic" if check.numeric and check.symbolic else ("symbolic" if check.symbolic else "numeric")))
        print("\n".join(_columns(rows)))
        from .verify import get_model

        models = [("model", "kind", "description")]
        for name in model_names():
            spec = get_model(name)
            models.append((name, "symbolic" if spec.symbolic else "numeric", spec.description))
        print()
        print("\n".join(_columns(models)))
        return 0
    if args.symbolic:
        from sko.optional import require

        require("sympy", "--symbolic")
    from sko.engine.backend import use_backend

    if args.models:
        return _report(args, *_many_files(args))
    with use_backend(args.backend) if args.backend else nullcontext():  # a model is built on the backend chosen
        if args.urdf or args.mjcf:
            models = [_file_case(args)]
        else:
            models = [_factory_case(m) if ":" in m else m for m in _unique(args.model)] if args.model else None
    checks = _unique(args.check)
    selected = REGISTRY.select(checks, args.symbolic)
    skipped = skipped_checks(selected)
    for name, missing in skipped.items():
        print(f"skipped {name}: sko.algorithms.{', sko.algorithms.'.join(missing)} not available", file=sys.stderr)
    start = time.perf_counter()
    results = run(models=models, checks=checks, symbolic=args.symbolic, progress=_progress(args.symbolic),
                  backend=args.backend, **_kernels_aside(args, models, selected))
    still = [m.name for m in models or () if not isinstance(m, str) and m.model.dof_size == 0]
    return _report(args, results, time.perf_counter() - start, still)


def _report(args, results, elapsed: float, still: Sequence[str] = ()) -> int:
    """The table (or JSON, or summary) of ``results`` and the exit status; ``still`` names the
    models without degrees of freedom, to which no check applies (said on stderr)."""
    failed = [r for r in results if not r.passed]
    if args.json:
        print(json.dumps([r.to_json() for r in results], indent=1))
    else:
        if not args.summary:
            _table(failed if args.failed else results)
        n_models = len({r.model for r in results})
        n_checks = len({r.name for r in results})
        print(f"{len(results)} results ({n_checks} checks on {n_models} model{'s' if n_models != 1 else ''}): "
              f"{len(results) - len(failed)} passed, {len(failed)} failed in {elapsed:.1f} s")
    for r in failed:
        print(f"FAILED {r.model}: {r.name} ({r.equation}): {r.detail}", file=sys.stderr)
    for name in still:
        print(f"model {name} has no degrees of freedom: no check applies", file=sys.stderr)
    if not results and not still:
        print("error: no check ran", file=sys.stderr)
        return 1
    return 1 if failed else 0


def _model_files(pattern: str) -> list[Path]:
    """The URDF and MJCF files of ``--models``: in a directory (recursively), or matching a glob."""
    import glob

    root = Path(pattern)
    paths = root.rglob("*") if root.is_dir() else (Path(p) for p in glob.glob(pattern, recursive=True))
    return sorted(p for p in paths if p.is_file() and p.suffix.lower() in (".urdf", ".xml"))


def verify_file(path: str, floating_base: bool = False, inertia: str = "strict", checks=None,
                backend: str | None = None) -> tuple[list, bool]:
    """``(results, still)``: the results of ``sko verify`` on one URDF or MJCF file at a random
    state, and whether its model has no degrees of freedom (no check applies to it); a file that
    does not load is one failing ``load`` row naming the cause (a task of ``--models``)."""
    from sko.verify import run
    from sko.verify.models import case_from
    from sko.verify.registry import Result

    from sko.io import load_mjcf, load_urdf

    name = Path(path).name
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a repaired inertia: --inertia repair asked for it
            if path.lower().endswith(".urdf"):
                system = load_urdf(path, floating_base=floating_base, inertia=inertia)
            else:
                system = load_mjcf(path, inertia=inertia)
        case = case_from(system, name)
    except Exception as exc:  # noqa: BLE001 - one file of many: its row says why, the others run
        return [Result(name, "load", "", None, None, False, _cause(exc))], False
    return run(models=[case], checks=checks, backend=backend), case.model.dof_size == 0


def _many_files(args) -> tuple[list, float, list]:
    """``--models``: every file one task, serially or on the ``--scheduler``'s cluster; the
    results, the time taken and the files whose models have no degrees of freedom."""
    import functools

    files = [str(p) for p in _model_files(args.models)]
    if not files:
        raise SKOError(f"--models {args.models}: no URDF (.urdf) or MJCF (.xml) file there")
    task = functools.partial(verify_file, floating_base=args.floating_base, inertia=args.inertia or "strict",
                             checks=_unique(args.check), backend=args.backend)
    start = time.perf_counter()
    if args.scheduler:
        from sko.optional import require

        client = _client(args.scheduler, "sko verify --scheduler")
        try:
            futures = client.map(task, files, pure=False)
            if not args.json:
                require("distributed", "sko verify --scheduler").progress(futures)
            parts = client.gather(futures)
        finally:
            client.close()
    else:
        from tqdm import tqdm

        parts = [task(f) for f in tqdm(files, unit="file", disable=args.json or not sys.stderr.isatty())]
    still = [Path(f).name for f, (_, empty) in zip(files, parts) if empty]
    return [r for results, _ in parts for r in results], time.perf_counter() - start, still


def _kernels_aside(args, models, checks) -> dict:
    """On a first run (nothing cached), a second process compiles while this one runs the checks
    of the SKO models: the bodies' complex state kernels, then the checks of
    :data:`sko.precompile.ASIDE` (constrained dynamics, centroidal terms, regressors) on the
    compiled backend, whose results this process reports in place of running them, last
    (:func:`sko.precompile.start_verify_kernels`). The keywords of :func:`sko.verify.run` that
    wait for it, or none. Built-in models only: a user's factory or file would have to be
    rebuilt there."""
    from sko.engine.backend import get_backend

    try:
        get_backend()  # the process-wide choice (SKO_BACKEND); the second process runs on the compiled one
    except SKOError:
        return {}  # SKO_BACKEND names no backend (--backend overrides it here only): no second process
    if args.symbolic or (args.backend or get_backend()) != "compiled" or not any(c.system for c in checks):
        return {}
    if models is not None and not all(isinstance(m, str) for m in models):
        return {}
    from .precompile import aside_checks, cached, start_verify_kernels
    from .verify import model_names

    if cached(np.complex128):
        return {}
    last = aside_checks(checks)
    aside = start_verify_kernels(model_names(symbolic=False) if models is None else models, last)
    return {"before_physics": aside.complex, "last": last, "before_last": aside.done}


def _table(results) -> None:
    rows = [("model", "check", "equation", "residual", "result")]
    for r in results:
        value = ("exact" if r.exact else "not exact") if r.residual is None and r.exact is not None else (
            "-" if r.residual is None else f"{r.residual:.1e}")
        rows.append((r.model, r.name, r.equation, value, "pass" if r.passed else "FAIL"))
    print("\n".join(_columns(rows)))


# --------------------------------------------------------------------------- sample
def _sample(args) -> int:
    from sko.scale.stores import StoreError
    from sko.scale.sweep import sample

    if args.states < 1 or args.chunk < 1:
        raise SKOError("--states and --chunk must be at least 1")
    client = None if not args.scheduler else _client(args.scheduler, "sko sample --scheduler")
    try:
        with _current_folder_importable():  # the factory's module, as --model of verify and compile finds it
            group = sample(args.model, args.states, [w.strip() for w in args.what.split(",") if w.strip()], args.out,
                           chunk=args.chunk, seed=args.seed, client=client, progress=not args.quiet,
                           overwrite=args.overwrite)
    except StoreError as exc:  # the store's way out, in the command line's words
        raise StoreError(str(exc).replace("overwrite=True", "--overwrite")) from None
    finally:
        if client is not None:
            client.close()
    print(f"{args.out}: {', '.join(sorted(group.array_keys()))} ({args.states} states)")
    return 0


def _client(address: str, option: str):
    """A ``dask.distributed.Client`` of the scheduler at ``address``; one that cannot be reached
    (within Dask's connect timeout, ``distributed.comm.timeouts.connect``) or an address that
    names none is an :class:`SKOError` naming it."""
    from sko.optional import require

    distributed = require("distributed", option)
    try:
        return distributed.Client(address)
    except (OSError, TimeoutError, ValueError, TypeError) as exc:
        raise SKOError(f"{option} {address}: cannot connect to a Dask scheduler there ({_cause(exc)})") from None


# --------------------------------------------------------------------------- compile
def _compile(args, parser) -> int:
    from .precompile import compile_kernels

    if args.jobs is not None and args.jobs < 1:
        parser.error("--jobs must be at least 1")
    if args.model is not None:
        if args.jobs is not None:
            parser.error("--model compiles in this process (the system is built here); it takes no --jobs")
        return _reported(_compile_model, args)
    seconds = compile_kernels(jobs=args.jobs, progress=not args.quiet)
    print(f"kernels compiled or loaded from numba's cache in {seconds:.1f} s", file=sys.stderr)
    return 0


def _compile_model(args) -> int:
    """``sko compile --model MODULE:FUNCTION``: the kernels of the factory's system."""
    from .precompile import compile_system
    from .verify.models import is_system

    if ":" not in args.model:
        raise SKOError(f"--model {args.model}: expected a factory package.module:function")
    system = _factory_result(args.model)
    if not is_system(system):
        raise SKOError(f"--model {args.model} returned {type(system).__name__}: sko compile needs a system "
                       "(such as a MultibodySystem), whose kernels it compiles")
    try:
        seconds = compile_system(system, progress=not args.quiet)
    except SKOError as exc:
        raise SKOError(f"--model {args.model}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - the user's system at a random state
        raise SKOError(f"--model {args.model}: the {type(system).__name__} the factory returned fails at a random "
                       f"state: {_cause(exc)}") from None
    print(f"kernels of {args.model} compiled or loaded from numba's cache in {seconds:.1f} s", file=sys.stderr)
    return 0


# --------------------------------------------------------------------------- info
def _info(args) -> int:
    from sko.engine import algorithms as alg

    from .verify.models import make_case

    if args.urdf or args.mjcf:
        case = _file_case(args)
    else:
        case = _factory_case(args.model) if ":" in args.model else make_case(args.model)
    model = case.model
    tree = model.tree
    bases = len(tree.base_bodies())
    print(f"model {case.name}: {len(tree)} bodies, {bases} base bod{'y' if bases == 1 else 'ies'}, height {tree.height}, "
          f"{model.node_size} node coordinates, {model.dof_size} dofs, dtype {model.dtype}")
    print("\ndigraph (stacking order):")
    rows = [("body", "parent", "children", "depth", "m_k", "n_k", "segment")]
    for k in tree.bodies:
        p = tree.parent(k)
        rows.append((repr(k), "root" if p is None else repr(p), ", ".join(map(repr, tree.children(k))) or "-",
                     str(tree.depth(k)), str(model.node_dim(k)), str(model.dof_dim(k)), str(tree.segment_of(k))))
    for line in _columns(rows):
        print("  " + line)
    branches = tree.branch_tree()
    print("\nserial-chain segments (base → tip) and the tree of branches:")
    for s, seg in enumerate(tree.segments()):
        p = branches.parent(s)
        print(f"  {s}: {' → '.join(map(repr, seg))}   parent segment: {'root' if p is None else p}")
    if model.dtype == object:
        return 0
    mass = alg.mass_matrix(model)
    print("\nsparsity of ℳ by body blocks (# nonzero, . zero; rows/columns in stacking order):")
    bodies = tree.bodies
    for i in bodies:
        cells = ["#" if np.any(mass[model.dof_slice(i), model.dof_slice(j)] != 0) else "." for j in bodies]
        print("  " + " ".join(cells) + f"   {i!r}")
    segments = tree.segments()
    print("\nsparsity of ℳ by segment blocks:")
    for s, si in enumerate(segments):
        rows_ = np.concatenate([np.arange(model.dof_size)[model.dof_slice(k)] for k in si])
        cells = []
        for sj in segments:
            cols = np.concatenate([np.arange(model.dof_size)[model.dof_slice(k)] for k in sj])
            cells.append("#" if np.any(mass[np.ix_(rows_, cols)] != 0) else ".")
        print("  " + " ".join(cells) + f"   segment {s}")
    nnz = int(np.count_nonzero(mass))
    print(f"\nℳ: {mass.shape[0]}×{mass.shape[1]}, {nnz} nonzero entries ({100 * nnz / max(mass.size, 1):.0f} %), "
          f"{mass.size - nnz} zeros from branch-induced sparsity")
    return 0

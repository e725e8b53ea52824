"""``sko compile``: numba's cache of the kernels, filled ahead of time.

The kernels compile on their first use and stay in numba's on-disk cache
(:mod:`sko.engine.cache`). A read-only install, a cluster's image or a CI job fills that cache
once, beforehand: :func:`compile_kernels` runs every kernel of the package once — each request
of systems of every library body type (the constrained dynamics too) for one state and for a batch (derivatives and rollouts
in float64), the recursions of :mod:`sko.algorithms` on an SKO model, the constraint force
algorithm — for float64 and for complex128 (complex-step derivatives), the two scalar types in worker processes of their own
when the machine has two cores (they never write the same cache file). A progress bar counts
the steps. :func:`compile_system` does the same for one system of the user's (``sko compile
--model``): its own body types' state kernels and the requests they feed.

A first ``sko verify`` (nothing cached) compiles on two cores too: :func:`start_verify_kernels`
runs :func:`verify_kernels` in a second process (the complex kernels, then the checks whose
kernels no other check uses) while the first runs the other checks.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from queue import Empty
from typing import NamedTuple

import numpy as np

from sko.graphs.errors import SKOError, UnknownNodeError

__all__ = ["steps", "compile_kernels", "compile_system", "death", "cached", "complex_states", "ASIDE", "aside_checks",
           "verify_kernels", "Aside", "start_verify_kernels"]

_BATCH = 40  #: more states than a batch takes serially: the parallel paths compile too


def _systems() -> dict:
    """One system of each kind: rigid (every joint of the examples, custom ones too), flexible
    with modal nodes, geared rotors, a cluster of coupled bodies."""
    from sko.examples.bodies import flexible_examples
    from sko.examples.embedding import mimic_gripper
    from sko.examples.rigid import example_systems

    return {"humanoid": example_systems()["humanoid"], "branched tree": example_systems()["branched_tree"],
            "flexible geared arm": flexible_examples()["flexible-geared-arm"],
            "flexible spacecraft": flexible_examples()["flexible-spacecraft"], "mimic gripper": mimic_gripper}


def _system_step(make: Callable, dtype, kinematics: bool) -> Callable[[], None]:
    """Every request of the catalogue (:data:`~sko.systems.catalogue.DECLARATIONS`) the system
    compiles in ``dtype``, one state and a batch (with ``kinematics``, the centre of mass of the
    batch too: read off the arenas of the batched fill)."""

    def run():
        from sko.constraints import ConstraintError, FrameConstraint
        from sko.systems.catalogue import DECLARATIONS
        from sko.simulation.rollout import compiled_maps, rollout

        system = make()
        held = [FrameConstraint(system.bodies[-1], directions=(0, 1, 2))]  # the constrained dynamics' kernels
        rng = np.random.default_rng(0)
        Q = np.array([system.random_configuration(rng) for _ in range(_BATCH)]).astype(dtype)
        V, X = (rng.normal(size=(_BATCH, system.nv)).astype(dtype) for _ in range(2))
        requests = [d for d in DECLARATIONS.values() if d.compiled_for(system, dtype)]
        for q, v, x in ((Q[0], V[0], X[0]), (Q, V, X)):
            for declaration in requests:
                declaration.evaluate(system, q, v, x)
            if dtype == np.float64:  # the constrained kernels (float64: the reference drift of some systems is real only)
                # compiled either way; refused where the body cannot move so, or offers no frame
                with suppress(ConstraintError, UnknownNodeError):
                    system.constrained_dynamics(q, v, x, held)
                with suppress(ConstraintError, UnknownNodeError):
                    system.impulse_dynamics(q, v, held)
        if dtype == np.float64:  # the local derivative recursion (DERIVATIVES.md §9), not a declared request
            system.inverse_dynamics_derivatives(Q[0], V[0], X[0])
            system.inverse_dynamics_derivatives(Q, V, X)
        if dtype == np.float64 and compiled_maps(system) is not None:
            rollout(system, Q[:2], V[:2], 1e-3, 1)
        if kinematics:
            system.center_of_mass(Q)

    return run


def _model_step(dtype) -> Callable[[], None]:
    """The recursions of :mod:`sko.algorithms` on a random model with non-square weights."""

    def run():
        from sko.engine import algorithms as alg
        from sko.model import SKOModel
        from sko.verify.models import make_case

        model = make_case("random").model
        model = SKOModel(model.tree, *({k: np.asarray(X, dtype=dtype) for k, X in blocks.items()}
                                       for blocks in (model.phi, model.H, model.M)), validate=False)
        rng = np.random.default_rng(0)
        x = rng.normal(size=model.node_size).astype(dtype)
        t = rng.normal(size=model.dof_size).astype(dtype)
        for apply in (alg.phi_apply, alg.phi_star_apply, alg.phi_tilde_apply, alg.phi_tilde_star_apply, alg.H_apply):
            apply(model, x)
        alg.H_star_apply(model, t)
        alg.inverse_dynamics(model, t, t, x, x)
        alg.newton_euler(model, t, t, x, x)
        alg.composite_inertias(model)
        alg.mass_matrix(model)
        ab = alg.articulated_inertias(model)
        alg.forward_dynamics(model, t, x, x, articulated=ab)
        for apply in (alg.innovations_apply, alg.innovations_star_apply, alg.innovations_inverse_apply,
                      alg.innovations_inverse_star_apply, alg.D_apply, alg.D_inverse_apply):
            apply(model, t, articulated=ab)
        alg.mass_matrix_inverse(model, articulated=ab)
        alg.mass_matrix_logdet(model, articulated=ab)
        alg.operational_space_compliance(model, list(model.bodies[:2]), articulated=ab)

    return run


def _cfa_step() -> None:
    """The constraint force algorithm's kernels (float64)."""
    from sko.engine import algorithms as alg
    from sko.verify.models import make_case

    model = make_case("random").model
    t = np.random.default_rng(0).normal(size=model.dof_size)
    alg.constraint_force_algorithm(model, t)
    alg.serialized_constraint_force_algorithm(model, t)
    alg.constraint_matrix(model)


def steps(dtype) -> list[tuple[str, Callable[[], None]]]:
    """The steps of :func:`compile_kernels` for one scalar type: ``(label, run)``."""
    dtype = np.dtype(dtype)
    out = [(f"{name} ({dtype})", _system_step(make, dtype, name == "humanoid" and dtype.kind == "f"))
           for name, make in _systems().items()]
    out.append((f"sko.algorithms ({dtype})", _model_step(dtype)))
    if dtype.kind == "f":
        out.append(("constraint force algorithm (float64)", _cfa_step))
    return out


def _worker(index: int, dtype, queue) -> None:
    """Run the steps of ``dtype``, putting ``(index, label, None)`` on ``queue`` as each is done,
    ``(index, label, cause)`` for a step that raises, and ``(index, None, None)`` at the end."""
    label = None
    try:
        for label, run in steps(dtype):
            run()
            queue.put((index, label, None))
    except BaseException as error:  # noqa: BLE001 - reported to the parent, which names the step
        queue.put((index, label, f"{type(error).__name__}: {error}"))
        raise
    finally:
        queue.put((index, None, None))


#: how often (seconds) the parent looks whether its workers still live while it waits
POLL = 0.5


def compile_kernels(jobs: int | None = None, progress: bool = True) -> float:
    """Compile (or load) every kernel for float64 and complex128; returns the seconds it took.
    ``jobs``: worker processes (default: one per scalar type when two cores or more).

    Raises
    ------
    SKOError
        A worker that failed (the step and its error) or died (its exit status or signal: a
        worker killed for memory; a script calling this without ``if __name__ == "__main__":``,
        whose spawned workers import it again and die before their first step) — never a wait
        on a dead worker: the parent checks its workers' lives while it waits.
    """
    from tqdm import tqdm

    start = time.perf_counter()
    dtypes = (np.float64, np.complex128)
    if jobs is None:
        jobs = 2 if (os.cpu_count() or 1) >= 2 else 1
    total = sum(len(steps(d)) for d in dtypes)
    with tqdm(total=total, desc="sko compile", unit="step", disable=not progress) as bar:
        if jobs <= 1:
            for dtype in dtypes:
                for label, run in steps(dtype):
                    bar.set_postfix_str(label)
                    run()
                    bar.update()
        else:
            _in_workers(dtypes, bar)
    return time.perf_counter() - start


def _in_workers(dtypes, bar) -> None:
    """The steps of each scalar type in a spawned worker process of its own, watched."""
    context = multiprocessing.get_context("spawn")  # numba's state is not fork-safe
    queue = context.Queue()
    workers = [context.Process(target=_worker, args=(i, d, queue), daemon=True) for i, d in enumerate(dtypes)]
    for w in workers:
        w.start()
    running, started = set(range(len(workers))), set()
    try:
        while running:
            try:
                index, label, cause = queue.get(timeout=POLL)
            except Empty:
                dead = [i for i in running if not workers[i].is_alive()]
                if dead:
                    _drain(queue, running, started, bar)  # what a worker put just before it ended
                    if dead := [i for i in dead if i in running]:
                        raise SKOError(_death(dtypes[dead[0]], workers[dead[0]], dead[0] in started))
                continue
            started.add(index)
            if cause is not None:
                raise SKOError(f"sko compile: the {np.dtype(dtypes[index])} worker failed in step {label!r}: {cause}")
            _received(index, label, running, bar)
        for dtype, w in zip(dtypes, workers):
            w.join()
            if w.exitcode:
                raise SKOError(f"sko compile: the {np.dtype(dtype)} worker process (pid {w.pid}) {death(w)} after "
                               "its last step")
    finally:
        for w in workers:
            if w.is_alive():
                w.terminate()
                w.join(5)


def _received(index: int, label, running: set, bar) -> None:
    if label is None:
        running.discard(index)
    else:
        bar.set_postfix_str(label)
        bar.update()


def _drain(queue, running: set, started: set, bar) -> None:
    """The messages left on ``queue`` (a failure among them raises)."""
    while True:
        try:
            index, label, cause = queue.get(timeout=POLL)
        except Empty:
            return
        started.add(index)
        if cause is not None:
            raise SKOError(f"sko compile: a worker failed in step {label!r}: {cause}")
        _received(index, label, running, bar)


def death(process) -> str:
    """How ``process`` ended, in words: its exit status, or the signal that killed it."""
    code = process.exitcode
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        hint = " (as the system's out-of-memory killer does)" if -code == signal.SIGKILL else ""
        return f"was killed by {name}{hint}"
    return f"exited with status {code}"


def _death(dtype, process, started: bool) -> str:
    """The error of a compiling worker that died without finishing."""
    what = f"sko compile: the {np.dtype(dtype)} worker process (pid {process.pid}) {death(process)}"
    if not started and _unguarded_script():
        return (f"{what} before its first step: the script {_unguarded_script()!r} calls compile_kernels without "
                "`if __name__ == \"__main__\":`, and the worker processes (spawned) import it again; put the call "
                "under that guard")
    return f"{what}; run `sko compile --jobs 1` to compile in this process and see the error"


def _unguarded_script() -> str | None:
    """The main script, when it has no ``if __name__ == "__main__":`` guard (spawned workers
    import it again and die re-running it), else None."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if not path or getattr(getattr(main, "__spec__", None), "name", None):  # python -m: a module, not a script
        return None
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError):
        return None
    return None if "__name__" in text and "__main__" in text else path


# --------------------------------------------------------------------------- for sko verify
def cached(dtype) -> bool:
    """Whether the rigid body's state kernel for ``dtype`` loads from numba's cache (a probe of
    whether the kernels were compiled before)."""
    from sko.engine.state_kernels import _arguments
    from sko.engine.bodies.rigid import RIGID

    dispatcher = RIGID.dispatcher
    cache = getattr(dispatcher, "_cache", None)
    return cache is None or cache.load_overload(_arguments(dtype), dispatcher.targetctx) is not None


def complex_states(names) -> None:
    """The bodies' state kernels at complex states, which ``kernel_consistency`` compares with
    their ``at_state`` and the local derivatives of :mod:`sko.verify.derivatives` call, on the
    compiled systems of the registered models ``names`` (nothing in float64: that is the other
    process's; the checks take their complex steps of whole systems on the reference path)."""
    from sko.verify.models import get_model, is_system

    for name in names:
        system = get_model(name).build()
        layout = getattr(getattr(system, "_engine", None), "layout", None) if is_system(system) else None
        if layout is None:
            continue
        rng = np.random.default_rng(0)
        q = np.asarray(system.random_configuration(rng), dtype=float) + 1e-20j * rng.standard_normal(system.nq)
        layout.fill(q[None], rng.standard_normal((1, system.nv)) + 0j)


#: The modules of :mod:`sko.verify` whose checks the second process of ``sko verify`` runs first
#: (:func:`verify_kernels`), in this order: they alone use the kernels of the centroidal terms,
#: the regressors and the constrained dynamics, so the two processes compile different kernels.
#: The constrained dynamics come last: they share the articulated-body and Riccati kernels with
#: the identity checks the first process runs meanwhile, and find them in the cache by then.
ASIDE = ("sko.verify.centroidal", "sko.verify.identification", "sko.verify.constraints")


def aside_checks(checks) -> list[str]:
    """The names of the checks among ``checks`` (:class:`~sko.verify.registry.Check`) that
    :func:`verify_kernels` runs: those of :data:`ASIDE`, in its order of the modules."""
    aside = [c for c in checks if c.system and c.function.__module__ in ASIDE]
    return [c.name for c in sorted(aside, key=lambda c: ASIDE.index(c.function.__module__))]


def verify_kernels(names, checks, complex_done=None, results=None) -> None:
    """What ``sko verify`` runs in a second process on a first run: :func:`complex_states` (then
    ``complex_done.set()``), then the checks ``checks`` (:func:`aside_checks`) on the models
    ``names``, module by module, on the compiled backend (the only one ``sko verify`` starts
    this process for), compiling their kernels (float64 mostly); their results go to
    the connection ``results`` (one list), which the first process reports in place of running
    these checks itself, last (:func:`sko.verify.run`'s ``last`` and ``before_last``). By the
    time this process reaches them, the first has cached the bodies' float64 state kernels they
    share."""
    from itertools import groupby

    from sko.engine.backend import use_backend
    from sko.verify import REGISTRY, run

    out = []
    with use_backend("compiled"):  # the first process's, whatever SKO_BACKEND says (sko verify --backend)
        complex_states(names)
        if complex_done is not None:
            complex_done.set()
        for _, group in groupby(checks, key=lambda name: REGISTRY.get(name).function.__module__):
            out += run(models=list(names), checks=list(group))  # module by module, every model each
    if results is not None:
        results.send(out)


class Aside(NamedTuple):
    """The waits on the process of :func:`start_verify_kernels`; each raises :class:`SKOError`
    if it failed or died (its exit status or signal)."""

    complex: Callable[[], None]  #: until its complex kernels are compiled
    done: Callable[[], list]  #: until it has ended: the results of its checks


def start_verify_kernels(names, checks=()) -> Aside:
    """:func:`verify_kernels` in a process of its own, now."""
    context = multiprocessing.get_context("spawn")
    complex_done = context.Event()
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=verify_kernels, args=(list(names), list(checks), complex_done, sender),
                              daemon=True)
    process.start()
    sender.close()  # the process holds the sending end: its death ends the results with EOFError

    def failed() -> SKOError:
        return SKOError(f"sko verify: the process compiling the kernels of the checks (the bodies' complex state "
                        f"kernels first; pid {process.pid}) {death(process)}; run `sko compile` first to "
                        "compile them in order")

    def complex_() -> None:
        while not complex_done.wait(POLL):
            if not process.is_alive():
                break
        if not complex_done.is_set():
            process.join()
            raise failed()

    def done() -> list:
        try:
            results = receiver.recv()
        except EOFError:
            results = None
        process.join()
        if process.exitcode or results is None:
            raise failed()
        return results

    return Aside(complex_, done)


# --------------------------------------------------------------------------- a user's system
def compile_system(system, progress: bool = True) -> float:
    """Compile (or load) the kernels ``system`` runs: its bodies' state kernels (a body type's own,
    registered with :func:`sko.engine.state_kernels.state_kernel`, cached beside its source) and the
    requests they feed, one state and a batch, for float64 and complex128, as :func:`steps` does
    for the library's systems (``sko compile --model``). In this process: the system need not be
    rebuilt elsewhere. A system without degrees of freedom runs no kernel of its own: nothing is
    compiled. Returns the seconds it took."""
    from tqdm import tqdm

    start = time.perf_counter()
    if not system.dof_size:
        return time.perf_counter() - start
    dtypes = (np.float64, np.complex128)
    with tqdm(total=len(dtypes), desc="sko compile", unit="step", disable=not progress) as bar:
        for dtype in dtypes:
            bar.set_postfix_str(f"{type(system).__name__} ({np.dtype(dtype)})")
            _system_step(lambda: system, dtype, False)()
            bar.update()
    return time.perf_counter() - start

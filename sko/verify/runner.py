"""Running registered checks on models (numerically or exactly)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from contextlib import nullcontext

from sko.engine.backend import use_backend
from sko.graphs.errors import SKOError
from sko.model import SKOModel

from .models import case_from, is_system, make_case, model_names
from .registry import REGISTRY, Case, Check, Registry, Result

__all__ = ["run", "run_check", "prove", "resolve_cases", "skipped_checks"]

Progress = Callable[[int, int, str, str], None]


def resolve_cases(models: Iterable | None = None, symbolic: bool = False) -> list[Case]:
    """Cases for ``models``: names of registered models, SKOModels, ``(model, a, b)`` tuples,
    systems (taken at a reproducible random state, see :func:`~sko.verify.models.system_model`;
    the physics checks run on these) or Cases. By default every registered model of the mode."""
    if models is None:
        models = model_names(symbolic=symbolic)
    cases = []
    for i, m in enumerate(models):
        if isinstance(m, Case):
            cases.append(m)
        elif isinstance(m, str):
            cases.append(make_case(m))
        elif isinstance(m, (SKOModel, tuple)) or is_system(m):
            cases.append(case_from(m, f"{type(m).__name__}{i}" if is_system(m) else f"model{i}"))
        else:
            raise SKOError(f"cannot verify {type(m).__name__}: give a model name, an SKOModel, (model, a, b) or a system")
    for c in cases:
        if c.symbolic != symbolic:
            kind = "symbolic (sympy) entries" if c.symbolic else "floating-point entries"
            raise SKOError(f"model {c.name!r} has {kind}; run it {'with' if c.symbolic else 'without'} --symbolic"
                           + ("" if c.symbolic else " or convert it with sko.verify.symbolic.rational_model"))
    return cases


def skipped_checks(checks: Iterable[Check]) -> dict[str, tuple[str, ...]]:
    """Checks whose required algorithms are not available: ``{name: missing names}``."""
    return {c.name: c.missing() for c in checks if c.missing()}


def run(models: Iterable | None = None, checks: Iterable[str] | None = None, symbolic: bool = False,
        registry: Registry = REGISTRY, progress: Progress | None = None, backend: str | None = None,
        before_physics: Callable[[], None] | None = None, last: Collection[str] = (),
        before_last: Callable[[], Iterable[Result] | None] | None = None) -> list[Result]:
    """Run the checks (all by default) on the models (all of the mode by default); the results
    come model by model, in the registry's order of the checks.

    ``backend`` (``"compiled"`` or ``"reference"``) runs the algorithms on that path; by default
    the current one (:func:`sko.engine.get_backend`).

    Checks that do not apply in the mode, or whose algorithms are not available, are left out
    (see :func:`skipped_checks`). ``progress(done, total, model, check)`` is called before each.
    The checks that need the system behind a model (the physics checks, which differentiate by
    complex step) run after all the others, and the checks named in ``last`` after those;
    ``before_physics`` is called once before the first check with a system, ``before_last`` once
    before the first of ``last``; what ``before_last`` returns, results of checks of ``last`` run
    elsewhere, are taken in place of running those checks (``sko verify`` waits there for another
    process that compiles meanwhile: the complex kernels, then the checks in ``last``, whose
    results it hands over).
    """
    with use_backend(backend) if backend is not None else nullcontext():  # the models are built on it too
        cases = resolve_cases(models, symbolic)
        selected = [c for c in registry.select(checks, symbolic) if not c.missing()]
        pairs = [(case, check) for case in cases for check in selected if check.applies_to(case)]
        last = set(last)
        order = sorted(range(len(pairs)), key=lambda i: (pairs[i][1].system, pairs[i][1].name in last))  # stable
        total = len(pairs)
        results: list = [None] * len(pairs)
        elsewhere: dict = {}  # the results before_last hands over, by (model, check)
        for done, i in enumerate(order):
            case, check = pairs[i]
            if check.system and before_physics is not None:
                before_physics()
                before_physics = None
            if check.name in last and before_last is not None:
                elsewhere = {(r.model, r.name): r for r in before_last() or ()}
                before_last = None
            if progress is not None:
                progress(done, total, case.name, check.name)
            given = elsewhere.get((case.name, check.name)) if check.name in last else None
            results[i] = given if given is not None else check.run(case)
    return results


def run_check(name: str, model="chain", registry: Registry = REGISTRY) -> Result:
    """Run one check on one model (a name, SKOModel, ``(model, a, b)`` or Case); the mode follows
    the model's entries (sympy → exact)."""
    check = registry.get(name)
    if isinstance(model, Case):
        case = model
    elif isinstance(model, str):
        case = make_case(model)
    else:
        case = case_from(model, "model")
    if check.system and case.system is None:
        raise SKOError(f"check {name!r} needs the system behind the model: give a system or a registered system's name")
    missing = check.missing()
    if missing:
        raise SKOError(f"check {name!r} needs sko.algorithms.{', sko.algorithms.'.join(missing)}, which is not available")
    return check.run(case)


def prove(checks: Iterable[str] | None = None, models: Iterable | None = None, progress: Progress | None = None) -> list[Result]:
    """Run the symbolic checks (all by default) exactly on the symbolic models (by default every
    built-in symbolic model: ``symbolic``, ``symbolic-pendulum``)."""
    return run(models=models, checks=checks, symbolic=True, progress=progress)

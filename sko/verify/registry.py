"""A registry of identity checks: one entry per lemma or equation of SKO.md.

A *check* is a function of a :class:`Case` (an SKO model plus the data an identity needs) that
returns one or more :class:`Comparison` s, each an ``actual`` and an ``expected`` array (typically
the recursion's result and the dense operator expression it implements). The same function
serves both kinds of verification:

* **numeric** — the residual ``max |actual − expected| / (scale · c(κ))``, where ``scale`` is the
  size of the data (by default the largest entry of either side) and ``c(κ)`` the allowance for
  conditioning below, must stay below the check's tolerance;
* **symbolic** — on a model with sympy entries (``dtype=object``) every entry of
  ``actual − expected`` must simplify to the exact zero.

**Conditioning.** A computation that is backward stable but inverts or factors a matrix (``D(k)``,
``ℳ``) has a forward error of order ``κ ε`` relative to its data, ``κ`` the condition number of
what is inverted and ``ε`` the unit roundoff; on a legitimate but ill-conditioned model no
fixed tolerance separates that from a wrong recursion. A comparison of such a result carries
``condition=κ`` (estimated by the check from the dense operators it builds; ``1`` for products,
sums and recursions that invert nothing, and whenever a residual is measured as a backward
error, e.g. ``ℳ x − y`` against ``|ℳ| |x|``). Its residual is divided by
``c(κ) = max(1, κ / ABSORBED_CONDITION)``: a tolerance already covers data of condition up to
``ABSORBED_CONDITION = 1e4`` (the default ``1e-9`` is about ``4.5·10⁶ ε``), and beyond it the
error allowed grows in proportion to ``κ``, to ``tolerance · κ / 10⁴`` (``1e-13 κ ≈ 450 κ ε`` by
default, a generous growth factor on the first-order bound). A comparison with
``κ > MAX_CONDITION = 1e12`` (``κ ε ≈ 2·10⁻⁴``, or ``κ`` not finite) fails outright as too
ill-conditioned to verify: a singular or nearly singular ``ℳ`` or ``D(k)`` is reported, never
passed on a residual that says nothing.

Researchers add their own identities with the :func:`register` decorator (or
:meth:`Registry.add`) and run one check, a selection, or all of them::

    from sko.verify import register, compare, run

    @register("my_identity", "Eq. 99", tolerance=1e-10)
    def my_identity(case):
        "φ̃ x computed two ways."
        ops = case.dense
        x = case.node_vector("x")
        return compare(ops.phi_tilde @ x, ops.phi @ x - x)

    results = run(checks=["my_identity"], models=["chain"])
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from sko.graphs.errors import SKOError
from sko.model import DenseOperators, SKOModel

__all__ = [
    "Case",
    "Check",
    "Comparison",
    "Registry",
    "Result",
    "REGISTRY",
    "compare",
    "condition_allowance",
    "register",
    "exact_zero",
    "numeric_residual",
]

DEFAULT_TOLERANCE = 1e-9
ABSORBED_CONDITION = 1e4  # condition numbers a tolerance covers as it stands
MAX_CONDITION = 1e12  # beyond: too ill-conditioned to verify in double precision


# --------------------------------------------------------------------------- comparisons
@dataclass(frozen=True)
class Comparison:
    """``actual`` must equal ``expected``; ``scale`` (optional) is the size of the data the two
    sides were computed from, for identities whose sides are small differences of large terms
    (e.g. ``τ̄ P H* = 0``); ``condition`` is the condition number of what the computation inverts,
    when its result is sensitive to it (see the module docstring)."""

    actual: Any
    expected: Any
    scale: float | None = None
    label: str = ""
    condition: float = 1.0


def compare(actual, expected, scale: float | None = None, label: str = "", condition: float = 1.0) -> Comparison:
    """A :class:`Comparison` of two arrays (or scalars) of the same shape."""
    return Comparison(actual, expected, scale, label, condition)


def condition_allowance(condition: float) -> float:
    """``c(κ) = max(1, κ / ABSORBED_CONDITION)``, the divisor of a residual for conditioning."""
    return max(1.0, float(condition) / ABSORBED_CONDITION)


def _ill_conditioned(comparisons: Iterable[Comparison]) -> str:
    """The comparisons whose condition number is too large (or not finite) to verify anything."""
    return ", ".join(f"{c.label or 'comparison'} (condition {c.condition:.1e})" for c in comparisons
                     if not float(c.condition) <= MAX_CONDITION)


def _as_array(x) -> np.ndarray:
    return x if isinstance(x, np.ndarray) else np.asarray(x)


def _shape_error(c: Comparison) -> str | None:
    a, e = _as_array(c.actual), _as_array(c.expected)
    if a.shape != e.shape:
        return f"{c.label or 'comparison'}: shape {a.shape} != expected shape {e.shape}"
    return None


def numeric_residual(comparisons: Iterable[Comparison]) -> float:
    """The largest relative residual ``max |actual − expected| / (scale · c(κ))`` over the comparisons
    (``c`` is :func:`condition_allowance`); ``nan`` as soon as either side or a scale is not finite
    (so it can never pass a tolerance)."""
    worst = 0.0
    for c in comparisons:
        a = np.asarray(c.actual, dtype=complex)
        e = np.asarray(c.expected, dtype=complex)
        scale = c.scale if c.scale is not None else max(np.abs(a).max(initial=0.0), np.abs(e).max(initial=0.0))
        if not (np.isfinite(a).all() and np.isfinite(e).all() and np.isfinite(scale)):
            return float("nan")
        with np.errstate(over="ignore"):
            error = float(np.abs(a - e).max(initial=0.0))
        if error == 0.0:
            continue
        worst = max(worst, error / max(float(scale) * condition_allowance(c.condition), np.finfo(float).tiny))
    return worst


def _worst(comparisons: list[Comparison]) -> str:
    """``" in <label>"`` of the comparison with the largest residual, when there are several and it has one."""
    if len(comparisons) < 2:
        return ""
    worst = max(comparisons, key=lambda c: numeric_residual([c]))
    return f" in {worst.label}" if worst.label else ""


def _non_finite(comparisons: Iterable[Comparison]) -> str:
    """Labels of the comparisons with a non-finite entry or scale (empty when all are finite)."""
    bad = []
    for c in comparisons:
        sides = [("actual", c.actual), ("expected", c.expected)] + ([("scale", c.scale)] if c.scale is not None else [])
        for side, x in sides:
            if not np.isfinite(np.asarray(x, dtype=complex)).all():
                bad.append(f"{c.label or 'comparison'} ({side})")
    return ", ".join(bad)


def exact_zero(entry) -> bool:
    """True when the sympy (or numeric) ``entry`` is exactly zero.

    A rational function of its symbols is mapped into the fraction field ``QQ(symbols)``, where
    every intermediate result is kept in lowest terms, so the test is exact and fast even for
    deeply nested quotients; with function values (``sin q``, ``cos q`` of a symbolic rigid
    system) ``sympy.cancel`` treats them as independent variables; anything else falls back to
    ``sympy.simplify``.
    """
    if entry == 0:
        return True
    import sympy

    e = sympy.sympify(entry)
    symbols = sorted(e.free_symbols, key=str)
    if symbols:
        try:
            field = sympy.QQ.frac_field(*symbols)
            return field.from_sympy(e) == field.zero
        except (sympy.polys.polyerrors.CoercionFailed, sympy.polys.polyerrors.GeneratorsError, ValueError):
            if sympy.cancel(e) == 0:  # a rational function of symbols and function values (sin q, cos q)
                return True
    return sympy.simplify(e) == 0


def _symbolic_nonzero(comparisons: Iterable[Comparison]) -> list[str]:
    """Labels and positions of the entries of ``actual − expected`` that are not exactly zero."""
    bad = []
    for c in comparisons:
        d = np.asarray(c.actual, dtype=object) - np.asarray(c.expected, dtype=object)
        for idx, entry in np.ndenumerate(np.atleast_1d(d)):
            if not exact_zero(entry):
                bad.append(f"{c.label or 'comparison'}{list(idx)}")
                break
    return bad


# --------------------------------------------------------------------------- the data of a check
class Case:
    """What a check sees: a model, its ``a`` and ``b`` vectors, and reproducible test vectors.

    Numeric cases draw test vectors from a generator seeded by their label; symbolic cases make
    them vectors of sympy symbols. ``generic`` marks models with random data, on which
    properties that hold for almost all data (e.g. a predicted nonzero block is nonzero) are
    checked too; physical models may have structural zeros of their own. Results of expensive computations can be shared between the
    checks of one case through :meth:`cached`.
    """

    def __init__(self, model: SKOModel, name: str = "model", a=None, b=None, symbolic: bool | None = None, seed: int = 0,
                 generic: bool = False, system=None, q=None, v=None):
        self.model = model
        #: the system (and its state ``q``, ``v``) the model was taken from, if any: physics checks
        #: (:mod:`sko.verify.physics`) need it; identity checks see only the model
        self.system, self.q, self.v = system, q, v
        self.generic = generic
        self.name = name
        self.a = model.node_vector(a, "a")
        self.b = model.node_vector(b, "b")
        self.symbolic = (model.dtype == object) if symbolic is None else symbolic
        self.seed = seed
        self._cache: dict[str, Any] = {}

    @cached_property
    def dense(self) -> DenseOperators:
        """The model's dense operators (for checking)."""
        return self.model.dense()

    def cached(self, key: str, compute: Callable[[], Any]) -> Any:
        """``compute()`` once per case and key."""
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    def node_vector(self, label: str) -> np.ndarray:
        """A test vector of length ``Σ m_k``."""
        return self._vector(label, self.model.node_size)

    def dof_vector(self, label: str) -> np.ndarray:
        """A test vector of length ``Σ n_k``."""
        return self._vector(label, self.model.dof_size)

    def matrix(self, label: str, rows: int, cols: int) -> np.ndarray:
        """A test matrix (numeric: random normal; symbolic: symbols)."""
        if self.symbolic:
            import sympy

            return np.array(sympy.symbols(f"{label}_0:{rows}_0:{cols}"), dtype=object).reshape(rows, cols)
        return self.rng(label).standard_normal((rows, cols))

    def rng(self, label: str) -> np.random.Generator:
        """A generator seeded by the case seed and ``label`` (reproducible across runs)."""
        return np.random.default_rng([self.seed, zlib.crc32(label.encode())])

    def _vector(self, label: str, size: int) -> np.ndarray:
        if self.symbolic:
            import sympy

            return np.array(sympy.symbols(f"{label}_0:{size}"), dtype=object).reshape(size)
        return self.rng(label).standard_normal(size)


# --------------------------------------------------------------------------- checks and results
@dataclass(frozen=True)
class Check:
    """A registered identity.

    Attributes
    ----------
    name : str
        Unique name (``snake_case``).
    equation : str
        Where it comes from in SKO.md (``"Eq. 31, Lemma 7"``).
    function : callable
        ``function(case) -> Comparison | iterable of Comparison``.
    tolerance : float
        Largest relative residual that passes a numeric run.
    symbolic : bool
        Whether the identity can be proved exactly on a symbolic model.
    numeric : bool
        Whether the check runs on floating-point models.
    requires : tuple of str
        Names the check needs in the ``algorithms`` package; a check whose algorithms are not
        available is skipped (and reported as such), not failed.
    description : str
        One line (the function's docstring by default).
    system : bool
        Whether the check needs the system behind the model (``case.system``); it does not
        apply to cases of bare SKO models.
    when : callable or None
        ``when(system) -> bool``: the systems the check applies to (all by default), for a
        check about one kind of system (the analytic derivatives of rigid trees).
    """

    name: str
    equation: str
    function: Callable[[Case], Any] = field(repr=False)
    tolerance: float = DEFAULT_TOLERANCE
    symbolic: bool = True
    numeric: bool = True
    requires: tuple[str, ...] = ()
    description: str = ""
    system: bool = False
    when: Callable[[Any], bool] | None = field(default=None, repr=False)

    def missing(self) -> tuple[str, ...]:
        """The required ``algorithms`` names that are not available."""
        import sko.algorithms as algorithms

        return tuple(r for r in self.requires if not hasattr(algorithms, r))

    def applies(self, symbolic: bool) -> bool:
        return self.symbolic if symbolic else self.numeric

    def applies_to(self, case: Case) -> bool:
        """Whether the check runs on ``case`` (its mode, a system where one is needed, and degrees
        of freedom: the identities are about the operators of moving bodies)."""
        return self.applies(case.symbolic) and case.model.dof_size > 0 and (
            not self.system or case.system is not None) and (
            self.when is None or (case.system is not None and bool(self.when(case.system))))

    def run(self, case: Case) -> "Result":
        """Run on ``case``: numerically, or exactly when the case is symbolic."""
        start = time.perf_counter()
        try:
            out = self.function(case)
            comparisons = [out] if isinstance(out, Comparison) else list(out)
            if not comparisons:
                raise SKOError(f"check {self.name!r} returned no comparison")
            shape_errors = [m for m in map(_shape_error, comparisons) if m]
            if shape_errors:
                return self._result(case, None, False if case.symbolic else None, False, "; ".join(shape_errors), start)
            if case.symbolic:
                bad = _symbolic_nonzero(comparisons)
                detail = "not zero: " + ", ".join(bad) if bad else ""
                return self._result(case, None, not bad, not bad, detail, start)
            residual = numeric_residual(comparisons)
            if not np.isfinite(residual):
                return self._result(case, residual, None, False,
                                    f"non-finite value (NaN or infinity) in {_non_finite(comparisons) or 'the residual'}", start)
            ill = _ill_conditioned(comparisons)
            if ill:
                return self._result(case, None, None, False, f"too ill-conditioned to verify (singular?): {ill}", start)
            passed = bool(residual <= self.tolerance)
            return self._result(case, residual, None, passed, "" if passed else
                                f"residual above tolerance {self.tolerance:.0e}{_worst(comparisons)}", start)
        except Exception as exc:  # a failing check is a result, never a crash of the whole run
            return self._result(case, None, False if case.symbolic else None, False, f"{type(exc).__name__}: {exc}", start)

    def _result(self, case: Case, residual, exact, passed: bool, detail: str, start: float) -> "Result":
        return Result(case.name, self.name, self.equation, residual, exact, passed, detail, time.perf_counter() - start)


@dataclass(frozen=True)
class Result:
    """The outcome of one check on one model (``to_json`` gives the API.md record)."""

    model: str
    name: str
    equation: str
    residual: float | None
    exact: bool | None
    passed: bool
    detail: str = ""
    seconds: float = 0.0

    def to_json(self) -> dict:
        """``{"model", "name", "equation", "residual", "exact", "passed"}`` (API.md)."""
        return {
            "model": self.model,
            "name": self.name,
            "equation": self.equation,
            "residual": None if self.residual is None or not np.isfinite(self.residual) else float(self.residual),
            "exact": self.exact,
            "passed": bool(self.passed),
        }


# --------------------------------------------------------------------------- the registry
class Registry:
    """Checks by name, in registration order."""

    def __init__(self) -> None:
        self._checks: dict[str, Check] = {}

    def add(self, name: str, equation: str, function: Callable[[Case], Any], *, tolerance: float = DEFAULT_TOLERANCE,
            symbolic: bool = True, numeric: bool = True, requires: Iterable[str] = (), description: str | None = None,
            replace: bool = False, system: bool = False, when: Callable[[Any], bool] | None = None) -> Check:
        """Register ``function`` as the check ``name``.

        Raises
        ------
        SKOError
            If ``name`` is taken (unless ``replace``) or the check would run in no mode.
        """
        if not replace and name in self._checks:
            raise SKOError(f"a check named {name!r} is already registered ({self._checks[name].equation})")
        if not (symbolic or numeric):
            raise SKOError(f"check {name!r} must be numeric, symbolic or both")
        doc = (function.__doc__ or "").strip().splitlines()
        check = Check(name, equation, function, float(tolerance), bool(symbolic), bool(numeric), tuple(requires),
                      description if description is not None else (doc[0] if doc else ""), bool(system), when)
        self._checks[name] = check
        return check

    def register(self, name: str, equation: str, **options) -> Callable:
        """Decorator form of :meth:`add`; returns the function unchanged."""

        def decorate(function: Callable[[Case], Any]) -> Callable[[Case], Any]:
            self.add(name, equation, function, **options)
            return function

        return decorate

    def remove(self, name: str) -> None:
        """Unregister ``name``."""
        self.get(name)
        del self._checks[name]

    def get(self, name: str) -> Check:
        try:
            return self._checks[name]
        except KeyError:
            raise SKOError(f"no check named {name!r}; registered: {', '.join(self._checks)}") from None

    def names(self) -> tuple[str, ...]:
        return tuple(self._checks)

    def __iter__(self) -> Iterator[Check]:
        return iter(tuple(self._checks.values()))

    def __len__(self) -> int:
        return len(self._checks)

    def __contains__(self, name: object) -> bool:
        return name in self._checks

    def select(self, names: Iterable[str] | None = None, symbolic: bool = False) -> list[Check]:
        """The named checks (all by default) that apply in the given mode."""
        chosen = list(self) if names is None else [self.get(n) for n in names]
        return [c for c in chosen if c.applies(symbolic)]


REGISTRY = Registry()


def register(name: str, equation: str, **options) -> Callable:
    """Register a check in the global registry (decorator); see :meth:`Registry.add`."""
    return REGISTRY.register(name, equation, **options)

"""A request's declaration, and the system method made from it.

A request (mass matrix, inverse dynamics, …) is declared once by a :class:`Declaration`: its
name (the system method's and the compiled request's in
:data:`~sko.engine.requests.REQUESTS`, which holds the compiled part: terms read, result shape,
workspace, kernel, hinge-force rule), its short name, its inputs, its reference function and its
docstring. :func:`method` makes the system method from it: the common call runs the compiled
request's prepared one-state call inline (:meth:`~sko.engine.dispatch.Engine.one_state_call`, by the lines of
:func:`~sko.engine.dispatch.one_state_lines`: no frame of its own), then goes to the checked and batched
compiled path (:meth:`~sko.engine.dispatch.Engine.run`), and one state the compiled path declines
goes to the reference function. The method has the request's own signature (``help`` shows it)
and calls nothing generic per call: its source is written from the declaration once, as
:mod:`dataclasses` writes ``__init__``.

A request may take :class:`Option` s after its inputs (the regressors' ``friction`` and
``armature``): positional-or-keyword parameters the method checks (each option's ``check``, an
error naming the request and the option) and passes to the declaration's ``extend``, which
turns the compiled part's result (or the reference function's, which answers the same) into
the method's: ``extend(system, result, q, v, x, *options)`` for one state or a batch. The
engine computes the part that does not depend on the options; a result whose shape the
compiled part's does not give (a system its kernel does not take) has its shape from the
declaration's ``shape(system)``, the shape of an empty batch's result.

A :class:`View` declares a system method that presents part of a request's result (the
centroidal momentum matrix is a block of the packed centroidal terms): :func:`view_method`
makes it, a call of the request's method (with its options) and the view's ``present``.
"""

from __future__ import annotations

import linecache
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from sko.engine.dispatch import ONE_STATE_NAMES, one_state_kind, one_state_lines
from sko.graphs.errors import DimensionError, SKOError
from sko.systems.deprecation import renamed_arguments

__all__ = ["Declaration", "Option", "View", "THIRD_INPUTS", "method", "view_method", "real_inputs", "always", "flag",
           "no_forces"]

#: the third inputs a request may read (``nv`` entries): ``dv`` (``θ̈``) or ``tau`` (``T``)
THIRD_INPUTS = ("dv", "tau")


def no_forces(external_forces) -> bool:
    """Whether ``external_forces`` gives none (``None`` or an empty mapping): anything else, a
    mapping or not, takes the checked path, which names what is wrong with it (an array's truth
    value was numpy's ambiguity error)."""
    return external_forces is None or (isinstance(external_forces, Mapping) and not external_forces)


def always(system, dtype) -> bool:
    """A request compiled for every system and scalar type (:attr:`Declaration.compiled_for`)."""
    return True


def flag(value, what: str) -> bool:
    """``value`` as a bool, for an :class:`Option` that is on or off: True, False or numpy's
    bools; anything else (``1``, ``"yes"``, None) is an :class:`~sko.graphs.errors.SKOError`
    naming ``what``."""
    if value is True or value is False:
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    raise SKOError(f"{what} must be True or False, got {value!r} ({type(value).__name__})")


@dataclass(frozen=True, eq=False)
class Option:
    """An option of a request (module docstring): a parameter of the system method after its
    inputs, positional or keyword, with its default."""

    name: str  #: the parameter's name
    default: object  #: its value when omitted (passed unchecked)
    #: ``check(value, what)``: the value to use, or the error naming ``what`` (``"request(name=)"``)
    check: Callable = flag
    annotation: str = "bool"  #: the parameter's annotation in the method's signature

    def __post_init__(self):
        if not self.name.isidentifier() or self.name.startswith("_"):
            raise SKOError(f"option name {self.name!r} must be a public Python identifier (it names a parameter)")


@dataclass(frozen=True, eq=False)
class Declaration:
    """One request of the system API (module docstring). Its compiled part is the entry of the
    same name in :data:`~sko.engine.requests.REQUESTS` (:attr:`request`)."""

    name: str  #: the system method, and the compiled request of the same name
    short: str  #: its short name (``sko sample --what``, :func:`~sko.scale.sweep.sample`)
    doc: str  #: the system method's docstring
    #: ``reference(system, q, v, x, external_forces)``: the request at one state on the reference
    #: path (:mod:`sko.systems.reference`); None when the system method is written by hand
    reference: Callable | None
    velocities: bool = False  #: whether it reads ``v`` (zero when omitted)
    x: str | None = None  #: its third input (:data:`THIRD_INPUTS`, zero when omitted), or None
    external_forces: bool = False  #: whether it takes ``external_forces`` (by body; world wrenches)
    renamed: Mapping = field(default_factory=dict)  #: deprecated keywords ``{old: new}``, each warning
    #: ``compiled_for(system, dtype)``: whether ``sko compile`` runs its compiled request on
    #: ``system`` in ``dtype`` (:mod:`sko.precompile`)
    compiled_for: Callable = always
    #: ``applies(system)``: whether its kernel takes ``system`` at all (a recursion for rigid
    #: trees only); None for every system. Where it does not, every state goes to the reference.
    applies: Callable | None = None
    options: tuple = ()  #: its :class:`Option` s, parameters of the method after its inputs, in order
    #: ``extend(system, result, q, v, x, *options)``: the method's result from the compiled
    #: part's (or the reference function's) at the same inputs, one state or a batch; None: that result itself
    extend: Callable | None = None
    #: ``shape(system)``: one state's result before :attr:`extend` where the compiled part's shape
    #: may not hold (a system its kernel does not take); None: the compiled part's
    shape: Callable | None = None
    #: whether its inputs must be real numbers on every path (:func:`real_inputs`): a result some
    #: path takes by complex step, where a complex state would collide with the step
    real: bool = False

    def __post_init__(self):
        if not self.name.isidentifier() or self.name.startswith("_"):
            raise SKOError(f"request name {self.name!r} must be a public Python identifier (it names the system method)")
        if self.name in ("q", "v", *THIRD_INPUTS):  # a sample's arrays are named by both
            raise SKOError(f"request {self.name!r} has the name of an input (q, v, {', '.join(THIRD_INPUTS)}), which "
                           "sweeps and samples store beside the requests by name")
        if self.x is not None and self.x not in THIRD_INPUTS:
            raise SKOError(f"request {self.name!r}: its third input must be one of {THIRD_INPUTS} or None, got {self.x!r}")
        inputs = {"v"} if self.velocities else set()
        inputs |= {self.x} if self.x else set()
        for old, new in self.renamed.items():
            if new not in inputs or old in inputs | {"q", "external_forces"}:
                raise SKOError(f"request {self.name!r}: the deprecated keyword {old}= must rename one of its inputs "
                               f"{sorted(inputs)}, got {old}= for {new}=")
        object.__setattr__(self, "renamed", MappingProxyType(dict(self.renamed)))
        object.__setattr__(self, "options", tuple(self.options))
        names = [o.name for o in self.options]
        if not all(isinstance(o, Option) for o in self.options) or len(set(names)) != len(names):
            raise SKOError(f"request {self.name!r}: its options must be Options of distinct names, got {self.options!r}")
        taken = sorted(set(names) & ({"q", "external_forces", "self"} | inputs | set(self.renamed)))
        if taken:
            raise SKOError(f"request {self.name!r}: option {taken[0]!r} has the name of an input")
        if self.options and self.extend is None:
            raise SKOError(f"request {self.name!r}: options need an extend(system, result, q, v, x, *options) to act")

    @property
    def request(self):
        """The compiled part: its entry of :data:`~sko.engine.requests.REQUESTS` (terms read,
        result shape, workspace, kernel, hinge-force rule)."""
        from sko.engine.requests import REQUESTS

        return REQUESTS[self.name]

    def arguments(self, q, v, x) -> tuple:
        """The positional arguments of the system method at ``q``, ``v``, ``x`` (those it reads)."""
        return (q, *((v,) if self.velocities else ()), *((x,) if self.x else ()))

    def evaluate(self, system, q, v=None, x=None):
        """The system method at ``q`` and the inputs it reads of ``v``, ``x`` (one state or a batch)."""
        return getattr(system, self.name)(*self.arguments(q, v, x))


def _parameters(options) -> list[str]:
    """The options as parameters of a generated signature."""
    return [f"{o.name}: {o.annotation} = option_defaults[{i}]" for i, o in enumerate(options)]


def _checks(name: str, options) -> list[str]:
    """The lines of a generated method checking its options (:attr:`Option.check`; an option left
    at its default, the common call, costs one identity test)."""
    return [f"    if {o.name} is not option_defaults[{i}]:\n"
            f"        {o.name} = option_checks[{i}]({o.name}, {f'{name}({o.name}=)'!r})" for i, o in enumerate(options)]


def _source(owner: type, name: str, lines: list[str], namespace: dict) -> Callable:
    """The function ``name`` of the source ``lines``, written for the class ``owner``."""
    source = "\n".join(["from __future__ import annotations", *lines]) + "\n"
    filename = f"<request {owner.__qualname__}.{name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # tracebacks show the source
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - source written from a declaration
    function = namespace[name]
    function.__module__, function.__qualname__ = owner.__module__, f"{owner.__qualname__}.{name}"
    return function


_PLAIN = (int, float, np.integer, np.floating)  #: real numbers a complex step can be taken at


def real_inputs(method: str, **inputs) -> None:
    """Raise :class:`~sko.graphs.errors.DimensionError` naming the first of ``inputs`` (arrays,
    lists, ``None``) holding a complex number or anything but a plain real number (sympy
    numbers and expressions too): ``method``'s result is taken by complex step on some path
    (:attr:`Declaration.real`). What does not make an array is left to the method's own checks,
    which name it."""
    for name, x in inputs.items():
        try:
            a = np.asarray(x)
        except (ValueError, TypeError):
            continue
        if a.dtype.kind == "c":
            bad = a.dtype
        elif a.dtype == object:
            bad = next((e for e in a.flat if not isinstance(e, _PLAIN)), None)
        else:
            continue
        if bad is not None:
            raise DimensionError(f"{method}: {name} must be real floating-point numbers, got {bad!r} (it is taken "
                                 "by complex step, where a complex state or a sympy expression cannot enter)")


def method(declaration: Declaration, owner: type) -> Callable:
    """The system method of ``declaration``, for the class ``owner`` (module docstring)."""
    d, name = declaration, declaration.name
    v = "v" if d.velocities else "None"
    x = d.x or "None"
    forces = "external_forces" if d.external_forces else "None"
    parameters = ["self", "q", *(["v=None"] if d.velocities else []), *([f"{d.x}=None"] if d.x else []),
                  *_parameters(d.options), *(["external_forces: Mapping | None = None"] if d.external_forces else []),
                  *(["**renamed"] if d.renamed else [])]
    direct = ", ".join(["q", *([v, x] if d.x else [v] if d.velocities else [])])
    run = ", ".join(["q", *([v, x] if d.x else [v] if d.velocities else []), *([forces] if d.external_forces else [])])
    lines = [f"def {name}({', '.join(parameters)}) -> np.ndarray:"]
    if d.renamed:
        current = list(dict.fromkeys(d.renamed.values()))
        lines += ["    if renamed:",
                  f"        {', '.join(current)}, = renamed_arguments({name!r}, renamed, RENAMED, "
                  f"{', '.join(f'{c}={c}' for c in current)})"]
    lines += _checks(name, d.options)
    guard = "(external_forces is None or no_forces(external_forces)) and " if d.external_forces else ""
    compiled = ""
    if d.applies is not None:
        lines += ["    compiled = applies(self)"]
        guard, compiled = f"compiled and {guard}", ", compiled=compiled"
    if d.shape is not None:
        compiled += ", shape=shape"
    if d.extend is None:
        result = "{}"
    else:
        result = f"extend(self, {{}}, q, {v}, {x}{''.join(f', {o.name}' for o in d.options)})"
    lines += one_state_lines(one_state_kind(d.velocities, d.x), repr(name), "q", "v", d.x or "x", result.format("out"), guard)
    if d.real:  # after the common call, which takes 1-D float64 arrays only
        lines += [f"    real_inputs({name!r}, {', '.join(f'{i}={i}' for i in direct.split(', ') if i != 'None')})"]
    lines += [f"    if (out := self._engine.run({name!r}, self.{name}, {run}{compiled})) is not NotImplemented:",
              f"        return {result.format('out')}",
              f"    return {result.format(f'reference(self, q, {v}, {x}, {forces})')}"]
    namespace = {**ONE_STATE_NAMES, "np": np, "Mapping": Mapping, "renamed_arguments": renamed_arguments, "RENAMED": d.renamed,
                 "real_inputs": real_inputs, "no_forces": no_forces,
                 "reference": d.reference, "applies": d.applies, "extend": d.extend, "shape": d.shape,
                 "option_defaults": [o.default for o in d.options], "option_checks": [o.check for o in d.options]}
    function = _source(owner, name, lines, namespace)
    function.__doc__ = d.doc
    function.declaration = d
    return function


@dataclass(frozen=True, eq=False)
class View:
    """A system method presenting the result of the declared request :attr:`of` (module
    docstring): ``name(q[, v])`` is ``present(system, system.<of>(q[, v]))``, one state or a
    batch (``present`` indexes the trailing axes)."""

    name: str  #: the system method
    of: str  #: the declared request whose result it presents
    present: Callable  #: ``present(system, result)``: the method's result from the request's
    doc: str  #: the system method's docstring
    velocities: bool = False  #: whether it takes ``v`` (zero when omitted); the request must read it

    def __post_init__(self):
        if not self.name.isidentifier() or self.name.startswith("_"):
            raise SKOError(f"view name {self.name!r} must be a public Python identifier (it names the system method)")


def view_method(view: View, owner: type, options: tuple = ()) -> Callable:
    """The system method of ``view``, for the class ``owner`` (:class:`View`); ``options``: those
    of the request it presents (:attr:`Declaration.options`), which it takes and passes on."""
    parameters = ["self", "q", *(["v=None"] if view.velocities else []), *_parameters(options)]
    arguments = ["q", *(["v"] if view.velocities else []), *(f"{o.name}={o.name}" for o in options)]
    lines = [f"def {view.name}({', '.join(parameters)}):", *_checks(view.name, options),  # errors name the view
             f"    return present(self, self.{view.of}({', '.join(arguments)}))"]
    namespace = {"present": view.present, "option_defaults": [o.default for o in options],
                 "option_checks": [o.check for o in options]}
    function = _source(owner, view.name, lines, namespace)
    function.__doc__ = view.doc
    function.view = view
    return function

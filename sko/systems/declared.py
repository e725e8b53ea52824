"""A request's declaration, and the system method made from it.

A request (mass matrix, inverse dynamics, …) is declared once by a :class:`Declaration`: its
name (the system method's and the compiled request's in
:data:`~sko.engine.requests.REQUESTS`, which holds the compiled part: terms read, result shape,
workspace, kernel, hinge-force rule), its short name, its inputs, its reference function and its
docstring. :func:`method` makes the system method from it: the common call goes to the compiled
request's prepared one-state call (:class:`~sko.engine.dispatch.OneState`), then to the checked and batched
compiled path (:meth:`~sko.engine.dispatch.Engine.run`), and one state the compiled path declines
goes to the reference function. The method has the request's own signature (``help`` shows it)
and calls nothing generic per call: its source is written from the declaration once, as
:mod:`dataclasses` writes ``__init__``.

A :class:`View` declares a system method that presents part of a request's result (the
centroidal momentum matrix is a block of the packed centroidal terms): :func:`view_method`
makes it, a call of the request's method and the view's ``present``.
"""

from __future__ import annotations

import linecache
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from sko.graphs.errors import SKOError
from sko.systems.deprecation import renamed_arguments

__all__ = ["Declaration", "View", "THIRD_INPUTS", "method", "view_method", "always"]

#: the third inputs a request may read (``nv`` entries): ``dv`` (``θ̈``) or ``tau`` (``T``)
THIRD_INPUTS = ("dv", "tau")


def always(system, dtype) -> bool:
    """A request compiled for every system and scalar type (:attr:`Declaration.compiled_for`)."""
    return True


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

    def __post_init__(self):
        if not self.name.isidentifier() or self.name.startswith("_"):
            raise SKOError(f"request name {self.name!r} must be a public Python identifier (it names the system method)")
        if self.x is not None and self.x not in THIRD_INPUTS:
            raise SKOError(f"request {self.name!r}: its third input must be one of {THIRD_INPUTS} or None, got {self.x!r}")
        inputs = {"v"} if self.velocities else set()
        inputs |= {self.x} if self.x else set()
        for old, new in self.renamed.items():
            if new not in inputs or old in inputs | {"q", "external_forces"}:
                raise SKOError(f"request {self.name!r}: the deprecated keyword {old}= must rename one of its inputs "
                               f"{sorted(inputs)}, got {old}= for {new}=")
        object.__setattr__(self, "renamed", MappingProxyType(dict(self.renamed)))

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


def method(declaration: Declaration, owner: type) -> Callable:
    """The system method of ``declaration``, for the class ``owner`` (module docstring)."""
    d, name = declaration, declaration.name
    v = "v" if d.velocities else "None"
    x = d.x or "None"
    forces = "external_forces" if d.external_forces else "None"
    parameters = ["self", "q", *(["v=None"] if d.velocities else []), *([f"{d.x}=None"] if d.x else []),
                  *(["external_forces: Mapping | None = None"] if d.external_forces else []),
                  *(["**renamed"] if d.renamed else [])]
    direct = ", ".join(["q", *([v, x] if d.x else [v] if d.velocities else [])])
    run = ", ".join(["q", *([v, x] if d.x else [v] if d.velocities else []), *([forces] if d.external_forces else [])])
    lines = ["from __future__ import annotations",
             f"def {name}({', '.join(parameters)}) -> np.ndarray:"]
    if d.renamed:
        current = list(dict.fromkeys(d.renamed.values()))
        lines += ["    if renamed:",
                  f"        {', '.join(current)}, = renamed_arguments({name!r}, renamed, RENAMED, "
                  f"{', '.join(f'{c}={c}' for c in current)})"]
    guard = "not external_forces and " if d.external_forces else ""
    compiled = ""
    if d.applies is not None:
        lines += ["    compiled = applies(self)"]
        guard, compiled = f"compiled and {guard}", ", compiled=compiled"
    lines += [f"    if {guard}(out := self._engine.one_state[{name!r}]({direct})) is not None:",
              "        return out",
              f"    if (out := self._engine.run({name!r}, self.{name}, {run}{compiled})) is not NotImplemented:",
              "        return out",
              f"    return reference(self, q, {v}, {x}, {forces})"]
    source = "\n".join(lines) + "\n"
    filename = f"<request {owner.__qualname__}.{name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # tracebacks show the source
    namespace = {"np": np, "Mapping": Mapping, "renamed_arguments": renamed_arguments, "RENAMED": d.renamed,
                 "reference": d.reference, "applies": d.applies}
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - source written above from the declaration
    function = namespace[name]
    function.__doc__, function.__module__ = d.doc, owner.__module__
    function.__qualname__ = f"{owner.__qualname__}.{name}"
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


def view_method(view: View, owner: type) -> Callable:
    """The system method of ``view``, for the class ``owner`` (:class:`View`)."""
    of, present = view.of, view.present
    if view.velocities:
        def function(self, q, v=None):
            return present(self, getattr(self, of)(q, v))
    else:
        def function(self, q):
            return present(self, getattr(self, of)(q))
    function.__name__, function.__doc__, function.__module__ = view.name, view.doc, owner.__module__
    function.__qualname__ = f"{owner.__qualname__}.{view.name}"
    function.view = view
    return function

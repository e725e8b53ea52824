"""Compiled node states: the one way a body type, in this package or outside it, gives the
compiled engine its state (BODIES.md, *The contract for a new body type*).

A body type's :meth:`~sko.bodies.contract.BodyType.compiled_state` returns a
:class:`~sko.bodies.contract.CompiledState`: a :class:`StateKernel` and the body's constants
(one float64 vector, packed as the kernel reads them), with the size of the scratch it needs. The
kernel is a numba function with this signature::

    kernel(arena, row, reals, terms, constants) -> bool

It writes, for one state, the same numbers as the body's Python ``at_state`` into the state's
*arena* (a 1-D array of the state's scalar type, float64 or complex128), at the offsets of its
``row`` (int64, columns :data:`Row`), and returns False when the state is outside its domain (a
quaternion of zero norm). :func:`views` gives the kernel its arrays by name:

* inputs: ``constants`` (its packed float64 constants), ``q`` and ``v`` (its coordinates and
  hinge velocities), ``inboard`` (the attachment it hangs from: ``Gamma`` 6 × m_℘, ``gamma``,
  ``rotation``, ``position``, ``velocity``; the inertial frame for a base body, with ``Gamma``
  6 × 0 and ``gamma = −a_g``) and ``scratch``;
* outputs: ``E`` (m × 6, in ``𝒱(k) = E v_o + H* θ̇``), ``H`` (n × m), ``M`` (m × m), ``a``,
  ``b``, ``V`` (m), ``potential`` (one number) and ``records``: one row per attachment it offers
  (``attachment_names`` order, its own frame first), each with the fields of :data:`Record`
  (``γ_o``, world axes ``R``, origin ``p``, ``v_o``) followed by ``Γ_o`` (6 × m, row-major;
  :func:`record` gives a row's fields as arrays).

The engine computes the weight ``φ(℘(k), k) = (E Γ_o)*`` from ``E``; when the parent declared its
own frame's ``Γ = [I₆, 0]`` (``own_frame_identity``), ``E`` is a view of the weight itself and
costs nothing. ``terms`` (:data:`Terms`) says which outputs the request reads: ``STRUCTURE``
(``E``, ``H``, ``M``: the mass matrix and its inverse), ``MOTION`` (also ``a``, ``b``, ``V`` and
the records' ``γ_o``, ``v_o``: the dynamics), ``POSE`` (everything); a kernel may skip the rest,
but nothing it skips may be read by what it computes. A kernel that declares ``rates`` also
takes ``RATES``: a call at the same ``q`` as the arena's last one, other velocities (``θ̇`` or the
inboard ``v_o``) only, which reads ``a``, ``b``, ``V`` and the records' ``γ_o``, ``v_o`` (the
columns of the local derivatives along the velocities, DERIVATIVES.md §9); what depends on ``q``
alone (``E``, ``H``, ``M``, the records' ``Γ_o`` and poses, the potential) holds that last call's
values, which it may leave. A kernel that does not declare it is called with ``MOTION``. A kernel
that declares ``joint`` (how many of the body's leading hinge velocity coordinates are its
joint's, along whose columns of ``q̇`` neither ``M`` nor the records' ``Γ_o`` change) also takes
``JOINT``: a call at the same ``q`` as the arena's last one but for those coordinates (the
columns of the local derivatives along them), which reads what ``MOTION`` does but ``M`` and the
records' ``Γ_o``; these hold that last call's values, which it may leave (a flexible body's mass
matrix and modal frames, which depend on its modes only). The declaration is trusted where the
kernel is not checked (the library's; *Checks* below); a checked kernel is called with
``MOTION`` there. A kernel may also declare its partials along ``θ̇`` and ``v_o`` in closed form
(``velocities``, :class:`StateKernel`), along its joint (``joint_partials``) and along its other
coordinates (``internal_partials``: a flexible body's modes), trusted as ``joint`` is.
``constants`` is True on the first fill of an arena: what no state changes (a rigid body's ``M``,
its record's ``Γ``) may be written then only. A simple kernel ignores both and writes everything.

A kernel declares how many constants it reads (``constants=``: a number, an :func:`offsets
<sko.engine.fields.offsets>` record of named constants, or a function of the packed
constants for a kernel whose sizes are packed with them); a body whose constants do not have that
length is refused when its system is built. A kernel must return a bool on every path: one
returning anything else (``None`` from a forgotten ``return True``, ``1``, ``1.0``), one with
another number of parameters, or one that does not type for complex128 states is refused with a
:class:`KernelError` naming the body and the kernel.

**Checks** (``checks=``, on by default for a body type defined outside this package, off for the
library's own): the first call of a system in a scalar type runs each checked kernel alone at a
few random states in an arena filled with a sentinel, and refuses a kernel that leaves an output
unwritten (the record of its own frame, say), writes outside the entries the layout gives its
body, writes a number that is not finite, an ``M`` that is not symmetric positive definite or an
``H`` without full row rank, or reads past its constants; then, at every state, the engine checks
what is cheap (finite outputs, ``M`` symmetric with a Cholesky factor, no zero row of ``H``) and
reports a failure as :class:`KernelError` naming the body and the field, or the kernel's own
exception and message. The library's kernels are checked by the tests instead and pay nothing.

Registering a kernel (:func:`state_kernel`) compiles it on first use, for float64 and for
complex128 (complex-step derivatives), apart from the engine: the engine's requests call it
through its address (:func:`~sko.engine.jit.call_state`), so a new body type
costs the compilation of its own kernel only. Its code is cached beside its source, keyed by
its own code and the engine's (:class:`~sko.engine.cache.StampedCache`); numba does not notice
edits of other functions the kernel calls in other files.
"""

from __future__ import annotations

import inspect
from collections import namedtuple
from collections.abc import Callable
from enum import EnumMeta, IntEnum

import numpy as np
from numba import from_dtype, njit, prange, types
from numba.core.dispatcher import Dispatcher

from sko.engine.borrow import borrowed, matrix_view, strided_view
from sko.engine.fields import columns, offsets
from sko.engine.indexing import compiler_for
from sko.engine.cache import CheckedCache
from sko.engine.jit import FAST_MATH, call_state, cached, kernel, native_address, register
from sko.bodies.contract import BodyError, CompiledState

__all__ = ["Row", "Record", "Terms", "StateKernel", "KernelError", "state_kernel", "views", "record", "Inboard",
           "Outputs", "fill_states", "fill_batch", "checked_outputs", "finite_entries", "ROOT_SIZE", "DTYPES", "numeric_state",
           "check_compiled_state", "is_checked", "checker_address", "root_record"]

#: the positional arguments of the declared ``velocities``, ``joint_partials`` and ``internal_partials``
#: (:class:`StateKernel`)
_VELOCITIES_ARGUMENTS, _JOINT_PARTIALS_ARGUMENTS, _INTERNAL_PARTIALS_ARGUMENTS = 12, 10, 12

#: The columns of a body's row in the state table (offsets are into the state's arena).
Row = columns(
    "Row",
    "PARENT",  # row of the parent body, −1 for a base body
    "KERNEL",  # address of the body type's state kernel for the arena's scalar type
    "CONSTANTS", "CONSTANTS_SIZE",  # where the body's constants start in reals, and how many
    "Q", "NQ", "V", "NV",  # its q and v (θ̇, n_k entries) in the arena
    "NODE_DIM",  # m_k
    "INBOARD", "INBOARD_DIM",  # the record of the attachment it hangs from, and m of its body (0: the inertial frame)
    "E", "E_ROW", "E_COLUMN",  # where E(0, 0) is, and the steps to the next row and column
    "WEIGHT", "H", "M", "A", "B", "VELOCITY", "POTENTIAL",  # the node's outputs (WEIGHT −1 for a base body)
    "RECORDS", "RECORD_COUNT",  # its attachment records (own frame first)
    "SCRATCH", "SCRATCH_SIZE",  # the shared scratch, and the size this body declared
    "CHECK",  # −1, or (a checked kernel) where the m × m buffer of the per-state check of its outputs is
    "CHECKER",  # (a checked kernel) address of checked_outputs for the arena's scalar type (checker_address)
    "HINGE",  # address of its compiled hinge force for the arena's scalar type (sko.engine.hooks), 0: none
    "JOINT",  # address of the library's joint terms for the arena's scalar type (sko.engine.bodies.rigid.hinge)
)
#: The fields of an attachment record; ``Γ_o`` (6 × m, row-major) follows at ``Record.SIZE``.
Record = offsets("Record", gamma=6, rotation=9, position=3, velocity=6)
#: Which outputs a request reads (module docstring); each of the first three includes the ones
#: before; ``RATES`` (kernels that declare ``rates`` only) reads what ``MOTION`` adds, ``JOINT``
#: (kernels that declare ``joint`` only) what ``MOTION`` reads but ``M`` and the records' ``Γ_o``.
Terms = IntEnum("Terms", [("STRUCTURE", 0), ("MOTION", 1), ("POSE", 2), ("RATES", 3), ("JOINT", 4)])
#: The inertial frame's record has no ``Γ`` (6 × 0).
ROOT_SIZE = int(Record.SIZE)
#: The scalar types a state kernel is compiled for.
DTYPES = (np.dtype(np.float64), np.dtype(np.complex128))

Inboard = namedtuple("Inboard", ["Gamma", "gamma", "rotation", "position", "velocity"])
Outputs = namedtuple("Outputs", ["E", "H", "M", "a", "b", "V", "potential", "records"])


class KernelError(BodyError):
    """A body type's compiled state breaks the contract its ``at_state`` keeps (module docstring):
    it does not compile, returns something other than a bool, reads other constants than its body
    packs, writes a number that is not finite, an ``M`` that is not symmetric positive definite, an
    ``H`` without full row rank, leaves an output unwritten or writes outside its body's entries,
    or raises. The message names the body, the kernel and the field (or the kernel's message)."""


def _arguments(dtype) -> tuple:
    """The numba types of a state kernel's arguments for an arena of ``dtype``."""
    return (types.Array(from_dtype(np.dtype(dtype)), 1, "C"), types.Array(types.int64, 1, "C"),
            types.Array(types.float64, 1, "C"), types.int64, types.boolean)


def _summary(exc: BaseException, lines: int = 4) -> str:
    """The first lines of an exception's message (numba's typing errors run long)."""
    text = [line for line in str(exc).splitlines() if line.strip()]
    return " ".join(text[:lines])[:600]


class StateKernel:
    """A body type's compiled state function, registered once (module docstring).

    Parameters
    ----------
    function : a numba ``njit`` function or a plain Python function
        The kernel; only its Python code is used, compiled here for float64 and complex128.
    own_frame_identity : bool
        True when the record of the body's own frame always has ``Γ = [I₆, 0]`` (rigid bodies,
        rotors, flexible bodies, clusters): a child hanging there gets ``E`` as a view of its
        weight.
    name : str
        For messages (default: the function's name).
    constants : int, offsets record, callable or None
        How many constants the kernel reads: a number, an :func:`~sko.engine.fields.offsets`
        record (its ``SIZE``), or ``constants(c) -> int`` of the packed constants ``c`` (a kernel
        whose sizes are packed in them); None: not declared (a checked kernel's reads past its
        constants are then found at its first call).
    checks : bool or None
        Check the kernel's outputs (module docstring); None (default): for a body type defined
        outside this package.
    calls_hinge : bool
        The kernel calls the joint terms :func:`~sko.engine.bodies.rigid.hinge` at their address
        in its row (``Row.JOINT``, :func:`~sko.engine.bodies.rigid.call_hinge`), which the state
        table then fills.
    rates : bool
        The kernel takes ``terms = Terms.RATES`` (module docstring): it writes ``a``, ``b``, ``V``
        and the records' ``γ_o``, ``v_o`` then, as at ``MOTION``, and may leave the rest (a kernel
        that compares ``terms`` with ``STRUCTURE`` and ``POSE`` only takes it as ``MOTION``). A
        checked kernel's declaration is tried when its state table is made
        (:mod:`sko.engine.kernel_checks`): at ``RATES`` after a call at every output, with other
        velocities, it must write what a call at every output with them writes.
    joint : int, callable or None
        The kernel takes ``terms = Terms.JOINT`` (module docstring) in the columns along the
        body's first ``joint`` hinge velocity coordinates: a number, or ``joint(c) -> int`` of the
        packed constants (as ``constants``); it writes then what it writes at ``MOTION`` and may
        leave ``M`` and the records' ``Γ_o``. None (default): not declared. Checked for every
        kernel that declares it when the system's state layout is built (:meth:`joint_columns`),
        trusted only where the kernel is not checked.
    velocities : callable or None
        The body's partials along its hinge velocities ``θ̇`` and the velocity ``v_o`` of the frame
        it hangs from, in closed form (DERIVATIVES.md §9), which the local derivatives then take
        instead of complex steps of the kernel there:
        ``velocities(arena, row, reals, work, inboard, A, B, G, dA, dB, dG, stride) -> bool``
        writes, at the real state the arena holds (its outputs written, their real parts read),
        into entries that are zero when it is called, the partials of ``a`` and ``b`` along
        ``θ̇_x`` as columns of ``m`` at ``work[dA + x m]``, ``work[dB + x m]``, of the ``γ_o`` of
        each record ``k`` it offers at
        ``work[dG + k · stride + 6 x]``, and with ``inboard`` ``∂ã/∂v_o``, ``∂b/∂v_o`` (``m × 6``,
        row-major) at ``work[A]``, ``work[B]`` and each record's ``∂γ_o/∂v_o`` (``6 × 6``) at
        ``work[G + k · stride]``; it may use its scratch. None (default): not declared. Trusted
        only where the kernel is not checked (a checked kernel's columns are complex steps).
    joint_partials : callable or None
        The body's partials along one of the coordinates it declares ``joint`` for, in closed form,
        called in such a column instead of the kernel, the arena's ``q`` carrying ``i h`` along it:
        ``joint_partials(arena, row, reals, work, dE, dH, dA, dB, dG, stride) -> bool`` writes (into
        zeros) the partials of ``E`` (``m × 6``), ``H`` (``n × m``), ``a``, ``b`` (``m``) at ``work[dE]`` …
        ``work[dB]`` (row-major) and of each record's ``γ_o`` at ``work[dG + k · stride]``
        (``M`` and the records' ``Γ_o`` do not move there); it may use its scratch. None (default):
        not declared; trusted as ``joint``.
    internal_partials : callable or None
        The body's partials along one of its coordinates past the first ``joint`` (its internal
        coordinates, a flexible body's modes; without ``joint``, or for a checked kernel, all its
        coordinates count as past it), in closed form,
        called in each such column but the first (whose complex step of the kernel gives the
        body's real state too) instead of the kernel, the arena's ``q`` carrying ``i h`` along it:
        ``internal_partials(arena, row, reals, work, dE, dH, dM, dA, dB, dGamma, dG, stride) -> bool``
        writes (into zeros) the partials of ``E`` (``m × 6``), ``H`` (``n × m``), ``M`` (``m × m``),
        ``a``, ``b`` (``m``) at ``work[dE]`` … ``work[dB]`` (row-major) and of each record's ``Γ_o``
        (``6 × m``) at ``work[dGamma + k · stride]`` and ``γ_o`` at ``work[dG + k · stride]``; it may
        use its scratch, and may leave imaginary parts in its records (they are made real after
        the body's columns). None (default): not declared; trusted only where the kernel is not
        checked.
    """

    def __init__(self, function: Callable, *, own_frame_identity: bool = False, name: str | None = None,
                 constants=None, checks: bool | None = None, calls_hinge: bool = False, rates: bool = False,
                 joint=None, velocities: Callable | None = None, joint_partials: Callable | None = None,
                 internal_partials: Callable | None = None):
        py_func = function.py_func if isinstance(function, Dispatcher) else function
        if not callable(py_func):
            raise BodyError(f"a state kernel must be a function, got {function!r}")
        self.name = name or getattr(py_func, "__qualname__", repr(py_func))
        if isinstance(constants, EnumMeta):
            constants = int(constants.SIZE)
        if not (constants is None or callable(constants) or isinstance(constants, (int, np.integer)) and constants >= 0):
            raise BodyError(f"state kernel {self.name!r}: constants must be a number, an offsets record or a function "
                            f"of the packed constants, got {constants!r}")
        self.constants = constants
        if not (joint is None or callable(joint) or isinstance(joint, (int, np.integer)) and not isinstance(joint, bool)
                and joint >= 0):
            raise BodyError(f"state kernel {self.name!r}: joint must be a non-negative number or a function of the "
                            f"packed constants, got {joint!r}")
        self.joint = joint
        self.velocities = self._declared_function("velocities", velocities, _VELOCITIES_ARGUMENTS)
        self.joint_partials = self._declared_function("joint_partials", joint_partials, _JOINT_PARTIALS_ARGUMENTS)
        self.internal_partials = self._declared_function("internal_partials", internal_partials,
                                                         _INTERNAL_PARTIALS_ARGUMENTS)
        flags = dict(own_frame_identity=own_frame_identity, checks=checks, calls_hinge=calls_hinge, rates=rates)
        for flag, value in flags.items():
            if not (isinstance(value, (bool, np.bool_)) or value is None and flag == "checks"):
                raise BodyError(f"state kernel {self.name!r}: {flag} must be True or False, got {value!r}")
        self.own_frame_identity = bool(own_frame_identity)
        self.checks = None if checks is None else bool(checks)
        self.calls_hinge = bool(calls_hinge)
        self.rates = bool(rates)
        self.py_func = py_func
        self.dispatcher = njit(fastmath=FAST_MATH, error_model="numpy", no_cpython_wrapper=True,
                               pipeline_class=compiler_for(py_func))(py_func)
        try:
            cached(self.dispatcher)
        except RuntimeError:  # no file to cache beside (code typed at a prompt): compiled per process
            pass
        self._addresses: dict = {}
        self._callable = None
        self._declared: dict = {}

    def constants_size(self, constants: np.ndarray) -> int | None:
        """How many constants the kernel reads given its packed ``constants`` (None: not declared)."""
        if self.constants is None or isinstance(self.constants, (int, np.integer)):
            return self.constants
        try:
            return int(self.constants(constants))
        except Exception as exc:  # a header the packed constants are too short to hold
            raise KernelError(f"state kernel {self.name!r}: its constants declaration fails on {constants.size} "
                              f"packed constants: {type(exc).__name__}: {exc}") from exc

    def joint_columns(self, constants: np.ndarray, nv: int) -> int:
        """How many of a body's ``nv`` leading hinge velocity coordinates the kernel takes
        ``Terms.JOINT`` along, given its packed ``constants`` (0: not declared); a
        :class:`KernelError` when the declaration fails or is not between 0 and ``nv``."""
        if self.joint is None:
            return 0
        try:
            count = self.joint(constants) if callable(self.joint) else self.joint
            valid = isinstance(count, (int, np.integer)) and not isinstance(count, bool) and 0 <= count <= nv
        except Exception as exc:
            raise KernelError(f"state kernel {self.name!r}: its joint declaration fails on {constants.size} packed "
                              f"constants: {type(exc).__name__}: {exc}") from exc
        if not valid:
            raise KernelError(f"state kernel {self.name!r}: its joint declaration gives {count!r}, not a number of "
                              f"coordinates between 0 and the body's {nv}")
        return int(count)

    def address(self, dtype) -> int:
        """The address of the kernel compiled for an arena of ``dtype`` (compiled or loaded from
        the cache on first use); a :class:`KernelError` when it does not compile with the
        signature of a state kernel or returns anything but a bool."""
        dtype = np.dtype(dtype)
        address = self._addresses.get(dtype)
        if address is None:
            arguments = _arguments(dtype)
            try:
                self.dispatcher.compile(arguments)
            except Exception as exc:  # numba's typing errors: a signature mismatch, math.sqrt of a complex
                raise KernelError(f"state kernel {self.name!r} does not compile as kernel(arena, row, reals, terms, "
                                  f"constants) -> bool for {dtype} arenas: {_summary(exc)}") from exc
            returned = types.unliteral(self.dispatcher.overloads[arguments].signature.return_type)
            if returned != types.boolean:
                raise KernelError(f"state kernel {self.name!r} returns {returned} for {dtype} arenas: it must return "
                                  f"a bool on every path (True, or False for a state outside its domain)")
            address = self._addresses[dtype] = native_address(self.dispatcher, arguments)
        return address

    def velocities_address(self) -> int:
        """The address of the declared ``velocities`` partials (:class:`StateKernel`) compiled for
        complex128 arenas (compiled, or loaded from the cache, on first use)."""
        array = types.Array
        return self._declared_address("velocities", (array(types.complex128, 1, "C"), array(types.int64, 1, "C"),
                                                     array(types.float64, 1, "C"), array(types.float64, 1, "C"),
                                                     types.boolean, *(types.int64,) * 7))

    def joint_partials_address(self) -> int:
        """The address of the declared ``joint_partials`` (:class:`StateKernel`) compiled for
        complex128 arenas (compiled, or loaded from the cache, on first use)."""
        array = types.Array
        return self._declared_address("joint_partials", (array(types.complex128, 1, "C"), array(types.int64, 1, "C"),
                                                         array(types.float64, 1, "C"), array(types.float64, 1, "C"),
                                                         *(types.int64,) * 6))

    def internal_partials_address(self) -> int:
        """The address of the declared ``internal_partials`` (:class:`StateKernel`) compiled for
        complex128 arenas (compiled, or loaded from the cache, on first use)."""
        array = types.Array
        return self._declared_address("internal_partials", (array(types.complex128, 1, "C"), array(types.int64, 1, "C"),
                                                            array(types.float64, 1, "C"), array(types.float64, 1, "C"),
                                                            *(types.int64,) * 8))

    def _declared_function(self, name: str, function, arguments: int):
        """A declared function (``velocities``, ``joint_partials``, ``internal_partials``) as a
        Python function of ``arguments`` positional parameters, or None; else the error naming the kernel."""
        function = function.py_func if isinstance(function, Dispatcher) else function
        if function is None:
            return None
        if not callable(function):
            raise BodyError(f"state kernel {self.name!r}: {name} must be a function or None, got {function!r}")
        try:
            parameters = inspect.signature(function).parameters.values()
        except (TypeError, ValueError):
            parameters = None
        if parameters is None or len(parameters) != arguments or any(
                p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in parameters):
            raise BodyError(f"state kernel {self.name!r}: {name} must be a function of {arguments} positional "
                            f"arguments (StateKernel's {name}), got {function!r}")
        return function

    def _declared_address(self, name: str, argtypes: tuple) -> int:
        """The address of the declared function ``name`` (an attribute) compiled for ``argtypes``."""
        dispatcher = self._declared.get(name)
        if dispatcher is None:
            function = getattr(self, name)
            dispatcher = self._declared[name] = njit(fastmath=FAST_MATH, error_model="numpy", no_cpython_wrapper=True,
                                                     pipeline_class=compiler_for(function))(function)
            try:
                cached(dispatcher)
            except RuntimeError:  # no file to cache beside
                pass
        return native_address(dispatcher, argtypes)

    def python_callable(self):
        """The kernel compiled with numba's Python wrapper and bounds-checked, so its exceptions
        reach Python with their messages and an index past an array is an ``IndexError``, not a
        write past it (compiled on first use, cached apart from the kernel: the checks of a
        user's kernel run it first, :mod:`sko.engine.kernel_checks`). It indexes as the kernel
        does (:func:`~sko.engine.indexing.compiler_for`): a negative index of a package kernel is
        an ``IndexError`` too."""
        if self._callable is None:
            self._callable = njit(fastmath=FAST_MATH, error_model="numpy", boundscheck=True,
                                  pipeline_class=compiler_for(self.py_func))(self.py_func)
            try:
                cached(self._callable, CheckedCache)
            except RuntimeError:  # no file to cache beside
                pass
        return self._callable

    def __repr__(self) -> str:
        return f"StateKernel({self.name})"


def state_kernel(function: Callable | None = None, *, own_frame_identity: bool = False, name: str | None = None,
                 constants=None, checks: bool | None = None, rates: bool = False, joint=None,
                 velocities: Callable | None = None, joint_partials: Callable | None = None,
                 internal_partials: Callable | None = None):
    """Register ``function`` as a state kernel (a decorator, with or without options; see
    :class:`StateKernel`):

    >>> @state_kernel(own_frame_identity=True, constants=3)
    ... def my_state(arena, row, reals, terms, constants):
    ...     ...
    ...     return True
    """
    options = dict(own_frame_identity=own_frame_identity, name=name, constants=constants, checks=checks, rates=rates,
                   joint=joint, velocities=velocities, joint_partials=joint_partials,
                   internal_partials=internal_partials)
    if function is None:
        return lambda f: StateKernel(f, **options)
    return StateKernel(function, **options)


def is_checked(body, state: CompiledState | None) -> bool:
    """Whether the compiled state of ``body`` is checked: its kernel's ``checks``, by default
    True for a body type defined outside this package."""
    if state is None:
        return False
    if state.kernel.checks is not None:
        return state.kernel.checks
    return type(body).__module__.split(".")[0] != "sko"


def numeric_state(kernel: StateKernel, constants, scratch: int = 0, **hooks) -> CompiledState | None:
    """The :class:`CompiledState` of a body with these constants (and the compiled ``hooks`` of
    :mod:`sko.engine.hooks`), or None when they are not all numbers (sympy parameters: the
    body's state runs in Python, as symbols need)."""
    constants = np.asarray(constants)
    if constants.dtype == object:
        try:
            constants = constants.astype(float)
        except (TypeError, ValueError):
            return None
    return CompiledState(kernel, constants, scratch, **hooks)


def check_compiled_state(body, state) -> CompiledState | None:
    """A body's :class:`CompiledState` checked: a registered kernel, finite float constants of the
    length the kernel declares, a scratch size; an error naming the body otherwise."""
    if state is None:
        return None
    if not isinstance(state, CompiledState) or not isinstance(state.kernel, StateKernel):
        raise BodyError(f"body {body.name!r} ({type(body).__name__}): compiled_state() must return None or a "
                        f"CompiledState with a StateKernel (sko.engine.state_kernels.state_kernel), got {state!r}")
    constants = np.asarray(state.constants)
    if constants.ndim != 1 or constants.dtype.kind not in "fiub" or not np.isfinite(constants).all():
        raise BodyError(f"body {body.name!r} ({type(body).__name__}): the constants of its compiled state must be "
                        f"a 1-D vector of finite real numbers, got {np.shape(constants)} of {constants.dtype}")
    if not isinstance(state.scratch, (int, np.integer)) or state.scratch < 0:
        raise BodyError(f"body {body.name!r} ({type(body).__name__}): scratch must be a non-negative integer, "
                        f"got {state.scratch!r}")
    try:
        expected = state.kernel.constants_size(constants)
    except KernelError as exc:
        raise KernelError(f"body {body.name!r} ({type(body).__name__}): {exc}") from exc.__cause__
    if expected is not None and expected != constants.size:
        raise KernelError(f"body {body.name!r} ({type(body).__name__}): its compiled state packs {constants.size} "
                          f"constants, but its kernel {state.kernel.name!r} declares that it reads {expected}")
    return state


# ----------------------------------------------------------------------------- views for kernels
@register
def views(arena, row, reals):
    """``(constants, q, v, inboard, outputs, scratch)``: a body's arrays in its arena (module
    docstring), ``inboard`` an :data:`Inboard`, ``outputs`` an :data:`Outputs` of views."""
    m, n, mp, io = row[Row.NODE_DIM], row[Row.NV], row[Row.INBOARD_DIM], row[Row.INBOARD]
    c = reals[row[Row.CONSTANTS]: row[Row.CONSTANTS] + row[Row.CONSTANTS_SIZE]]
    q = arena[row[Row.Q]: row[Row.Q] + row[Row.NQ]]
    v = arena[row[Row.V]: row[Row.V] + n]
    inboard = Inboard(matrix_view(arena, io + Record.SIZE, 6, mp), arena[io + Record.gamma: io + Record.gamma + 6],
                      matrix_view(arena, io + Record.rotation, 3, 3),
                      arena[io + Record.position: io + Record.position + 3],
                      arena[io + Record.velocity: io + Record.velocity + 6])
    out = Outputs(strided_view(arena, row[Row.E], m, 6, row[Row.E_ROW], row[Row.E_COLUMN]),
                  matrix_view(arena, row[Row.H], n, m), matrix_view(arena, row[Row.M], m, m),
                  arena[row[Row.A]: row[Row.A] + m], arena[row[Row.B]: row[Row.B] + m],
                  arena[row[Row.VELOCITY]: row[Row.VELOCITY] + m], arena[row[Row.POTENTIAL]: row[Row.POTENTIAL] + 1],
                  matrix_view(arena, row[Row.RECORDS], row[Row.RECORD_COUNT], Record.SIZE + 6 * m))
    scratch = arena[row[Row.SCRATCH]: row[Row.SCRATCH] + row[Row.SCRATCH_SIZE]]
    return c, q, v, inboard, out, scratch


@register
def record(records, i):
    """Row ``i`` of a body's ``records`` (:func:`views`) as an :data:`Inboard` of views: the
    fields of :data:`Record` and ``Γ`` (6 × m)."""
    r = records[i]
    return Inboard(matrix_view(r, Record.SIZE, 6, (r.shape[0] - Record.SIZE) // 6), r[Record.gamma: Record.gamma + 6],
                   matrix_view(r, Record.rotation, 3, 3), r[Record.position: Record.position + 3],
                   r[Record.velocity: Record.velocity + 6])


# ----------------------------------------------------------------------------- the engine's side
@kernel
def fill_states(rows, reals, arena, terms, constants, first, stop):
    """The states of the bodies of rows ``first … stop − 1`` (parents first) into ``arena``:
    each body's kernel, then its weight ``φ(℘(k), k) = (E Γ_o)*`` (module docstring). With
    ``constants``, also the inertial frame's record (``γ = −a_g``, ``R = I``; gravity is
    ``reals[0:3]``). Returns −1, or the first row whose kernel rejected the state or, for a
    checked kernel (``Row.CHECK``), wrote outputs :func:`checked_outputs` refuses."""
    rows, reals, arena = borrowed(rows), borrowed(reals), borrowed(arena)
    for k in range(first, stop):
        row = rows[k]
        if constants and row[Row.PARENT] < 0:
            root_record(arena, row[Row.INBOARD], reals)
        if not call_state(row[Row.KERNEL], (arena, row, reals, terms, constants)):
            return k
        if row[Row.CHECK] >= 0 and not call_state(row[Row.CHECKER], (arena, row, reals, terms, constants)):
            return k
        mp = row[Row.INBOARD_DIM]
        if row[Row.E] != row[Row.WEIGHT]:
            if mp > 0:
                _weight(arena, row)
        elif constants and mp > 6:  # φ = [E*; 0]: the rows below E* are zero
            m, wo = row[Row.NODE_DIM], row[Row.WEIGHT]
            for i in range(6 * m, mp * m):
                arena[wo + i] = 0
    return -1


@kernel(entry=True, parallel=True)
def fill_batch(rows, reals, A, terms, first, stop, status):
    """:func:`fill_states` (constants too) for each state ``s`` of a batch of fresh arenas ``A``
    (``B × L``, each holding its state's ``q`` and ``v``) into ``status[s]``; in parallel over
    states (numba's threads) for more than a few."""
    rows, reals, A, status = borrowed(rows), borrowed(reals), borrowed(A), borrowed(status)
    if A.shape[0] <= 32:
        for s in range(A.shape[0]):
            status[s] = fill_states(rows, reals, A[s], terms, True, first, stop)
        return
    for s in prange(A.shape[0]):
        status[s] = fill_states(rows, reals, A[s], terms, True, first, stop)


@register
def finite_entries(arena, start, count) -> bool:
    """``arena[start: start + count]`` holds finite numbers only: ``x · 0`` is 0 for a finite
    ``x`` and NaN otherwise, so their sum is 0 exactly then (one sum, no branch per entry)."""
    s = 0.0
    for i in range(start, start + count):
        x = arena[i]
        s += x.real * 0.0 + x.imag * 0.0
    return s == 0.0


@register
def _size(x) -> float:
    """``|Re x| + |Im x|``: a magnitude of a real or complex number without a square root."""
    return abs(x.real) + abs(x.imag)


@kernel
def checked_outputs(arena, row, reals, terms, constants) -> bool:
    """What is cheap to check of a body's outputs at every state (module docstring): every
    output finite, ``M`` symmetric (to 1e-9 of its largest entry, magnitudes as ``|Re| + |Im|``)
    with a Cholesky factor of its real part (in the m × m buffer at ``Row.CHECK``), no zero row of
    ``H``. A state kernel's signature: :func:`fill_states` calls it at its address
    (:func:`checker_address`), so it is compiled only for systems with a checked kernel."""
    m, n = row[Row.NODE_DIM], row[Row.NV]
    eo, er, ec = row[Row.E], row[Row.E_ROW], row[Row.E_COLUMN]
    s = 0.0
    for i in range(m):
        for j in range(6):
            x = arena[eo + i * er + j * ec]
            s += x.real * 0.0 + x.imag * 0.0
    if not (s == 0.0 and finite_entries(arena, row[Row.H], n * m) and finite_entries(arena, row[Row.M], m * m)
            and finite_entries(arena, row[Row.A], m) and finite_entries(arena, row[Row.B], m)
            and finite_entries(arena, row[Row.VELOCITY], m) and finite_entries(arena, row[Row.POTENTIAL], 1)
            and finite_entries(arena, row[Row.RECORDS], row[Row.RECORD_COUNT] * (Record.SIZE + 6 * m))):
        return False
    mo, lo = row[Row.M], row[Row.CHECK]
    scale = 0.0
    for i in range(m * m):
        x = _size(arena[mo + i])
        if x > scale:
            scale = x
    tolerance, symmetric = 1e-9 * scale, True
    for j in range(m):  # M = L Lᵀ (real parts), L row-major in the buffer; M's symmetry on the way
        Lj = arena[lo + j * m: lo + j * m + j]
        s = arena[mo + j * m + j].real
        for k in range(j):
            s -= Lj[k].real * Lj[k].real
        if not s > 0.0:
            return False
        d = np.sqrt(s)
        arena[lo + j * m + j], inverse = d, 1.0 / d
        for i in range(j + 1, m):
            x = arena[mo + i * m + j]
            symmetric &= _size(x - arena[mo + j * m + i]) <= tolerance
            Li, s = arena[lo + i * m: lo + i * m + j], x.real
            for k in range(j):
                s -= Li[k].real * Lj[k].real
            arena[lo + i * m + j] = s * inverse
    if not symmetric:
        return False
    ho = row[Row.H]
    for i in range(n):
        zero = True
        for j in range(m):
            if arena[ho + i * m + j] != 0:
                zero = False
        if zero:
            return False
    return True


def checker_address(dtype) -> int:
    """The address of :func:`checked_outputs` for arenas of ``dtype`` (compiled or loaded from the
    cache on first use), for the column ``Row.CHECKER`` of a checked kernel's row."""
    return native_address(checked_outputs, _arguments(dtype))


@kernel
def _weight(arena, row):
    """``φ(℘(k), k) = (E Γ_o)*`` (m_℘ × m, row-major at ``WEIGHT``) from ``E`` and the inboard
    record's ``Γ_o`` (6 × m_℘)."""
    m, mp, wo = row[Row.NODE_DIM], row[Row.INBOARD_DIM], row[Row.WEIGHT]
    eo, er, ec = row[Row.E], row[Row.E_ROW], row[Row.E_COLUMN]
    go = row[Row.INBOARD] + Record.SIZE
    for j in range(mp):
        for i in range(m):
            s = 0.0
            for l in range(6):
                s += arena[eo + i * er + l * ec] * arena[go + l * mp + j]
            arena[wo + j * m + i] = s


@register
def root_record(arena, o, reals):
    """The inertial frame's record at ``o``: ``γ = −a_g = [0; −g]``, ``R = I``, ``p = 0``, ``v = 0``."""
    for i in range(ROOT_SIZE):
        arena[o + i] = 0
    for i in range(3):
        arena[o + Record.gamma + 3 + i] = -reals[i]
        arena[o + Record.rotation + 4 * i] = 1

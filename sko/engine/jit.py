"""How the package compiles its numba kernels, and calls kernels compiled apart.

:func:`kernel` is numba's ``njit`` with the package's choices: cached on disk by
:class:`sko.engine.cache.StampedCache` (the key covers every kernel source), reassociation and
contraction of floating-point sums allowed (fused multiply-adds; no assumption that numbers are
finite, so NaN and overflow checks keep their meaning), and no Python wrapper for a kernel only
other kernels call. Every kernel is compiled once per signature and *called* by the kernels
that use it, never inlined into them: numba's inlining copies and re-types the callee's code at
every call site, which made one system request take minutes to compile. Only :func:`register`
helpers — a few lines on numbers held in registers (6-vectors as tuples) — are inlined: called,
each would pass its tuples through memory. A larger helper of that kind used at several call
sites is an :func:`inline_kernel`: compiled once per signature like a kernel, and inlined by LLVM
into its callers' machine code (typing it again at each call site cost more than compiling it).
The package's own functions compile with :class:`sko.engine.indexing.Compiler`, which takes their
array indices as written (no fix of negative ones); a user's code keeps numba's.

A request of a system reaches the state kernels of its bodies and a batch driver reaches the
request through :func:`native_address`: the address of a kernel compiled for one signature,
called by :func:`call_state` or :func:`call_request` with numba's own calling convention. The
caller is compiled without knowing the callee, so a new body type compiles its own kernel only,
and a request compiles only the kernels it calls.

The parallel kernels (batches) run on numba's threads. With its OpenMP layer, a thread that
waits spins by default, and on a machine with more runnable processes than cores a spinning
thread holds a core its partner needs: each parallel call then lasts a scheduler time slice
(milliseconds), whatever its work. Unless the user set ``OMP_WAIT_POLICY``, a waiting thread
therefore sleeps (``PASSIVE``: waking it costs microseconds); this holds when no OpenMP runtime
was loaded in the process before the first parallel call.
"""

from __future__ import annotations

import ast
import inspect
import os
import textwrap

from numba import njit, types
from numba.core import cgutils
from numba.core.callconv import excinfo_ptr_t
from numba.core.registry import CPUDispatcher
from numba.extending import intrinsic

from sko.engine.cache import StampedCache
from sko.engine.indexing import compiler_for

__all__ = ["FAST_MATH", "kernel", "register", "specialised", "inline_kernel", "native_address", "call_state", "call_request",
           "native_caller"]

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # module docstring: before numba loads its OpenMP layer

#: LLVM flags of every kernel: reassociated sums and fused multiply–adds, which the compiler
#: needs to vectorize the 6 × 6 products. No assumption of finite numbers.
FAST_MATH = {"reassoc", "contract"}


def cached(dispatcher, cache: type = StampedCache):
    """``dispatcher`` (an ``njit`` function) with its code cached on disk by ``cache``
    (:class:`~sko.engine.cache.StampedCache`, or :class:`~sko.engine.cache.CheckedCache` for a
    bounds-checked twin)."""
    dispatcher._cache = cache(dispatcher.py_func)
    return dispatcher


def _plain(argument):
    """A literal argument type as its plain type: ``Literal[int](0)`` as ``int64``, an ``IntEnum``
    member as its integer."""
    argument = types.unliteral(argument)
    return argument.dtype if isinstance(argument, types.IntEnumMember) else argument


class _Kernel(CPUDispatcher):
    """numba's dispatcher, with one specialization per argument types whatever constants a
    calling kernel passes: numba would otherwise compile the callee again for ``0``, ``False``
    or an ``IntEnum`` member as literal types."""

    def get_call_template(self, args, kws):
        return super().get_call_template(tuple(_plain(a) for a in args), {k: _plain(v) for k, v in kws.items()})


def kernel(function=None, *, entry: bool = False, parallel: bool = False):
    """Compile ``function`` as a kernel (module docstring); ``entry``: called from Python too
    (it keeps numba's Python wrapper)."""

    def decorate(f):
        options = dict(nopython=True, fastmath=FAST_MATH, no_cpython_wrapper=not entry, error_model="numpy")
        if parallel:
            options["parallel"] = True
        return cached(_Kernel(py_func=f, locals={}, targetoptions=options, pipeline_class=compiler_for(f)))

    return decorate if function is None else decorate(function)


def register(function):
    """A helper on numbers held in registers, inlined into each kernel that calls it (module
    docstring)."""
    return njit(inline="always", fastmath=FAST_MATH, error_model="numpy")(function)


def specialised(function, **constants):
    """The :func:`register` helper of ``function``'s own source with the parameters ``constants``
    removed and bound as constants of the compiled code: a step written once for a node of any
    dimensions, specialised to the dimensions of a rigid body (``m=6, h=1, mp=6``), compiles as
    if written for them — loops of constant length, the numbers it reads
    :func:`~sko.engine.rigid_blocks.held` in registers. Typed and inlined at each call site as a
    :func:`register` helper is; the same function, unspecialised, is a :func:`kernel`."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    definition = tree.body[0]
    unknown = set(constants) - {a.arg for a in definition.args.args}
    if unknown:
        raise TypeError(f"{function.__name__}() has no parameters {sorted(unknown)}")
    definition.decorator_list = []
    definition.args.args = [a for a in definition.args.args if a.arg not in constants]
    ast.increment_lineno(tree, function.__code__.co_firstlineno - 1)  # tracebacks point at the source
    namespace = {**function.__globals__, **constants}
    exec(compile(tree, inspect.getsourcefile(function), "exec"), namespace)  # noqa: S102 - the function's own source
    specialised = namespace[function.__name__]
    specialised.__qualname__ = f"{function.__qualname__}[{', '.join(f'{k}={v}' for k, v in constants.items())}]"
    return register(specialised)


def inline_kernel(function):
    """A kernel LLVM inlines into each kernel that calls it (``forceinline``): typed and lowered
    once per signature, where a :func:`register` helper is typed again at every call site; no call
    at run time, its tuples stay in registers."""
    return cached(_Kernel(py_func=function, locals={}, targetoptions=dict(
        nopython=True, fastmath=FAST_MATH, no_cpython_wrapper=True, error_model="numpy", forceinline=True),
        pipeline_class=compiler_for(function)))


def native_address(dispatcher, argtypes: tuple) -> int:
    """The address of ``dispatcher``'s native code for ``argtypes`` (compiled, or loaded from the
    cache, on first use), for :func:`call_state` and :func:`call_request`. The dispatcher keeps
    the code alive, and the addresses it was asked for (``native_addresses``): numba's
    ``compile`` and LLVM's symbol lookup cost a batch call about 0.3 ms even for code it has."""
    key = tuple(argtypes)
    known = dispatcher.__dict__.setdefault("native_addresses", {})
    address = known.get(key)
    if address is None:
        dispatcher.compile(key)
        result = dispatcher.overloads[key]
        address = known[key] = result.library.get_pointer_to_function(result.fndesc.llvm_func_name)
    return address


def native_caller(restype, failed, accepts=None):
    """An intrinsic ``call(address, args)`` calling the kernel at ``address`` with the tuple
    ``args`` (numba's calling convention); ``failed`` when the kernel raised. With ``accepts``
    (a predicate on the tuple of argument types), a call site whose types it refuses does not
    compile: the kernel at ``address`` was compiled for those types only."""

    @intrinsic
    def call(typingctx, address, args):
        if not isinstance(address, types.Integer) or not isinstance(args, types.BaseTuple):
            return None
        if accepts is not None and not accepts(tuple(args.types)):
            return None

        def codegen(context, builder, signature, llargs):
            cc = context.call_conv
            argtypes = signature.args[1].types
            function = builder.inttoptr(llargs[0], cc.get_function_type(restype, argtypes).as_pointer())
            result = cgutils.alloca_once(builder, cc.get_return_type(restype).pointee)
            builder.store(cgutils.get_null_value(result.type.pointee), result)
            excinfo = cgutils.alloca_once(builder, excinfo_ptr_t, name="excinfo")
            values = cgutils.unpack_tuple(builder, llargs[1], len(argtypes))
            code = builder.call(function, [result, excinfo, *cc._get_arg_packer(argtypes).as_arguments(builder, values)])
            status = cc._get_return_status(builder, code, builder.load(excinfo))
            value = context.get_returned_value(builder, restype, builder.load(result))
            return builder.select(status.is_ok, value, context.get_constant(restype, failed))

        return restype(address, args), codegen

    return call


#: ``call_state(address, (arena, row, reals, terms, constants))``: a body type's state kernel
#: (:mod:`sko.engine.state_kernels`), or any kernel returning a boolean with the arguments given (the
#: compiled hooks of :mod:`sko.engine.hooks`); False when the kernel rejects the state or raised.
call_state = native_caller(types.boolean, False)
#: ``call_request(address, (w, x, out))``: a system request (:mod:`sko.engine.requests`); its
#: status, or −5 when the request raised.
call_request = native_caller(types.int64, -5)

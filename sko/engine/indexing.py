"""The package's kernels index arrays as written: without numba's fix of negative indices.

numba reads ``x[i]`` for a signed integer ``i`` as Python does, ``x[i + len(x)]`` when ``i < 0``:
at every access a comparison, a select and the array's length held live. The package's kernels
index only by offsets they packed themselves, never negative, so for them this is work with no
effect; in the generic kernels, which address many buffers by computed offsets, the lengths held
for it outnumber the registers and the compiler spills them to the stack.

:class:`Compiler` is numba's compiler, whose lowering passes switch the fix off while they lower
a function of the package (and the helpers numba inlines into it): its signed indices are
taken as they are (:func:`_fix_integer_index`, in place of numba's). Only the machine code
being lowered is concerned (its LLVM module): a function numba compiles meanwhile for its own
use, and the code of users (their body types, joints and hooks), keep Python's meaning of a
negative index. A bounds-checked compilation still refuses a negative index: numba checks
``0 ≤ i < len(x)`` after the fix. :func:`compiler_for` says which compiler compiles a function.
"""

from __future__ import annotations

import numba.np.arrayobj as arrayobj
from numba.core import compiler, lowering, types
from numba.core.compiler_machinery import register_pass
from numba.core.typed_passes import NativeLowering, NativeParforLowering
from numba.parfors.parfor_lowering import ParforLower

__all__ = ["Compiler", "compiler_for"]

#: the LLVM modules being lowered for the package's functions
_UNWRAPPED: set = set()
#: numba's own fix: loaded again (a reload), the module finds its earlier wrapper in numba's place,
#: which looks this name up among the globals the reload rebinds, so it wraps what that one wrapped
_numba_fix = getattr(arrayobj.fix_integer_index, "numba_fix", arrayobj.fix_integer_index)


def _fix_integer_index(context, builder, index_type, index, size):
    """numba's ``fix_integer_index``, with a signed index of a package function taken as it is
    (module docstring)."""
    if index_type.signed and builder.module in _UNWRAPPED:
        return context.cast(builder, index, index_type, types.intp)
    return _numba_fix(context, builder, index_type, index, size)


_fix_integer_index.numba_fix = _numba_fix
arrayobj.fix_integer_index = _fix_integer_index


class _Unwrapped:
    """A lowering of a function with its module's indices taken as they are (mixed into numba's)."""

    def lower(self):
        _UNWRAPPED.add(self.module)
        try:
            super().lower()
        finally:
            _UNWRAPPED.discard(self.module)


def _lowering_pass(numba_pass: type, numba_lower: type) -> type:
    """numba's lowering pass ``numba_pass``, lowering by ``numba_lower`` with :class:`_Unwrapped`
    (a parallel function's outlined loops are compiled apart, with numba's own indexing)."""
    lower = type(f"Unwrapped{numba_lower.__name__}", (_Unwrapped, numba_lower), {})
    step = type(f"Unwrapped{numba_pass.__name__}", (numba_pass,), {
        "_name": f"sko_{numba_pass._name}", "lowering_class": property(lambda self: lower)})
    return register_pass(mutates_CFG=True, analysis_only=False)(step)


#: numba's lowering passes, and the package's in their place
_OURS = {NativeLowering: _lowering_pass(NativeLowering, lowering.Lower),
         NativeParforLowering: _lowering_pass(NativeParforLowering, ParforLower)}


class Compiler(compiler.Compiler):
    """numba's compiler for the package's functions (module docstring)."""

    def define_pipelines(self):
        pipelines = super().define_pipelines()
        for pipeline in pipelines:
            pipeline.passes = [(_OURS.get(step, step), description) for step, description in pipeline.passes]
            pipeline.finalize()
        return pipelines


def compiler_for(function) -> type:
    """The compiler of ``function``: :class:`Compiler` for a function of the package, numba's
    own for anyone else's (module docstring)."""
    module = getattr(function, "__module__", None) or ""
    return Compiler if module == "sko" or module.startswith("sko.") else compiler.Compiler

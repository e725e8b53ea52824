"""The package's kernels index as written; everyone else's code keeps Python's negative indices
(:mod:`sko.engine.indexing`)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from numba import njit
from numba.core import compiler

from sko.engine.indexing import Compiler, compiler_for


def _tail(x, i):
    """``x[i]`` of a view that starts one entry into its buffer."""
    return x[1:][i]


def _tail_of_default(x, i):
    """:func:`_tail`, through a function compiled by numba's own compiler."""
    return _default_tail(x, i)


_default_tail = njit(_tail)


def test_a_package_function_takes_a_negative_index_as_it_is():
    """Index −1 of ``x[1:]`` is the entry before it, ``x[0]``: no wraparound to its last entry."""
    x = np.array([10.0, 20.0, 30.0])
    assert njit(pipeline_class=Compiler)(_tail)(x, -1) == 10.0
    assert njit(pipeline_class=Compiler)(_tail)(x, 1) == 30.0


def test_numbas_own_compiler_and_a_function_it_compiled_keep_pythons_meaning():
    """Code compiled apart from a package function — numba's default, a callee compiled by
    it — wraps a negative index, also when a package function calls it."""
    x = np.array([10.0, 20.0, 30.0])
    assert njit(_tail)(x, -1) == 30.0
    assert njit(pipeline_class=Compiler)(_tail_of_default)(x, -1) == 30.0


def test_bounds_checks_still_refuse_a_negative_index():
    with pytest.raises(IndexError):
        njit(pipeline_class=Compiler, boundscheck=True)(_tail)(np.zeros(3), -1)


def test_only_the_package_functions_take_the_package_compiler():
    """A function of the package (a kernel of a library body) takes :class:`Compiler`; a user's
    function (here, this test module's), and one with no module, numba's own."""
    from sko.engine.bodies.flexible import FLEXIBLE

    assert compiler_for(FLEXIBLE.py_func) is Compiler
    assert compiler_for(_tail) is compiler.Compiler
    assert compiler_for(lambda x: x) is compiler.Compiler
    assert compiler_for(object()) is compiler.Compiler


_RELOADED = textwrap.dedent("""
    import importlib
    import numpy as np
    from numba import njit
    import sko.engine.indexing as indexing
    importlib.reload(indexing)
    def tail(x, i):
        return x[1:][i]
    x = np.array([10.0, 20.0, 30.0])
    print(njit(pipeline_class=indexing.Compiler)(tail)(x, -1), njit(tail)(x, -1))
""")


def test_a_reloaded_module_wraps_numbas_fix_once():
    """Loaded again (``importlib.reload``, IPython's autoreload), the module wraps numba's own fix,
    not its earlier wrapper, which would call itself without end at every index any code compiles;
    the package's functions still index as written, everyone else's as Python does."""
    done = subprocess.run([sys.executable, "-c", _RELOADED], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["10.0", "30.0"]


def test_a_checked_twin_indexes_as_its_kernel():
    """The bounds-checked twin of a state kernel compiles as the kernel does: the package's
    compiler for a library body's (a negative index is then out of bounds), numba's for a user's."""
    from sko.engine.bodies.flexible import FLEXIBLE
    from sko.engine.state_kernels import StateKernel

    def users(arena, row, reals, terms, constants):
        return True

    assert FLEXIBLE.python_callable()._compiler.pipeline_class is Compiler
    assert StateKernel(users).python_callable()._compiler.pipeline_class is compiler.Compiler

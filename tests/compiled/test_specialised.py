"""A per-body step written once (:func:`sko.engine.jit.specialised`): the rigid 6 × 1 form of a
step is its own source with the dimensions bound as constants, whose reads
:func:`~sko.engine.rigid_blocks.held` keeps in registers (a tuple) where the generic form takes a
view. That both forms compute the recursions is tested against the reference path on rigid and
generic shapes (``test_kernels.py``); here, the mechanism."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from sko.engine import rnea
from sko.engine.jit import specialised
from sko.engine.rigid_blocks import held


def _sum_of_first(x, o, n):
    """Reads ``n`` numbers of ``x`` from ``o`` by :func:`held`, returns them and their sum."""
    y = held(x, o, n)
    s = 0.0
    for i in range(n):
        s += y[i]
    return y, s


def test_held_is_a_tuple_for_constant_sizes_and_a_view_otherwise():
    x = np.arange(10.0)
    fixed = specialised(_sum_of_first, n=3)  # a register helper, compiled when called
    any_size = njit(_sum_of_first)
    y, s = fixed(x, 4)
    assert y == (4.0, 5.0, 6.0) and s == 15.0
    y, s = any_size(x, 4, 3)
    assert isinstance(y, np.ndarray) and y.tolist() == [4.0, 5.0, 6.0] and s == 15.0
    y[0] = -1.0  # a view: what a generic step reads is the buffer itself
    assert x[4] == -1.0


def test_the_specialised_step_is_the_same_source_with_the_dimensions_fixed():
    assert rnea.scatter_6_1.py_func.__code__.co_filename == rnea.scatter_step.__code__.co_filename
    assert rnea.scatter_6_1.py_func.__code__.co_firstlineno == rnea.scatter_step.__code__.co_firstlineno
    assert rnea.scatter_6_1.py_func.__code__.co_varnames[:10] == rnea.scatter_step.__code__.co_varnames[:10]
    assert "m" not in rnea.scatter_6_1.py_func.__code__.co_varnames[:rnea.scatter_6_1.py_func.__code__.co_argcount]
    assert rnea.scatter_6_1.py_func.__qualname__ == "scatter_step[m=6, h=1, mp=6]"
    with pytest.raises(TypeError, match="no parameters"):
        specialised(_sum_of_first, size=3)

"""Compiled (numba) recursions of :mod:`sko.algorithms` on a flat model (see :mod:`sko.algorithms.compiled.flat`)."""

"""Compiled (numba) recursions of :mod:`sko.algorithms` on a flat model (see :mod:`sko.engine.layout`)."""

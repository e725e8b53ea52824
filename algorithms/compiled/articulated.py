"""The Riccati result of the compiled path (SKO.md §8, Eq. 33) with the interface of
:class:`sko.algorithms.riccati.ArticulatedInertias`: per-body blocks are read-only views into
the kernel's buffer (layout of :func:`.kernels.riccati_layout`), made on first access."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from types import MappingProxyType

import numpy as np

from ..riccati import ArticulatedInertias
from . import kernels as K
from .flat import BODY, HDIM, NDIM

__all__ = ["CompiledArticulatedInertias"]


class CompiledArticulatedInertias(ArticulatedInertias):
    """``P, P⁺, D, D^{-1}, G, ψ`` of the compiled Riccati gather; ``logdet = Σ log det D(k)``."""

    def __init__(self, model, compiled, dtype, r: np.ndarray, logdet):
        self.model = model
        self.compiled = compiled
        self.dtype = np.dtype(dtype)
        self.r = r
        self.logdet = logdet
        r.setflags(write=False)

    def _blocks(self, col: int, rows: str, cols: str) -> Mapping:
        layout, roff, bodies = self.compiled.layout, self.compiled.roff, self.model.bodies
        dims = {"m": NDIM, "n": HDIM}
        out = {}
        for j, row in enumerate(layout):
            a, b = row[dims[rows]], row[dims[cols]]
            out[bodies[row[BODY]]] = self.r[roff[j, col]:roff[j, col] + a * b].reshape(a, b)
        return MappingProxyType({k: out[k] for k in bodies})

    @cached_property
    def P(self) -> Mapping:
        return self._blocks(K.R_P, "m", "m")

    @cached_property
    def P_plus(self) -> Mapping:
        return self._blocks(K.R_PPLUS, "m", "m")

    @cached_property
    def D(self) -> Mapping:
        return self._blocks(K.R_D, "n", "n")

    @cached_property
    def D_inverse(self) -> Mapping:
        return self._blocks(K.R_DINV, "n", "n")

    @cached_property
    def G(self) -> Mapping:
        return self._blocks(K.R_G, "m", "n")

"""The views of a request vector (:mod:`sko.engine.requests`): its header :data:`Header`, the
arrays it holds (:func:`request_views`), its workspace's buffers by name (:func:`buffer`) and the
fill of its arena (:func:`fill_arena`), which every request kernel starts with.

A request declares the buffers of its workspace once, by name (a :func:`~sko.engine.fields.columns`
table, ``Request.workspace``), in the order of the sizes ``Request.buffers`` gives; its kernel
takes them by those names, ``buffer(ws, at, Work.RHS)``, never by position."""

from __future__ import annotations

import numpy as np

from sko.engine.borrow import matrix_view
from sko.engine.fields import columns
from sko.engine.layout import Flat, Riccati
from sko.engine.jit import register
from sko.engine.state_kernels import Row, fill_states

__all__ = ["Header", "request_views", "buffer", "fill_arena"]

#: The header of a request vector (int64 words).
Header = columns(
    "Header",
    "KERNEL",  # the request kernel's address for this scalar type
    "FILL",  # 1: the call fills the arena from q and v; 0: the caller filled it
    "X",  # 1: the request reads x (nv entries); 0: it reads none (x has nv entries or none)
    "WRITTEN",  # 1 once a fill has written the arena's constant terms
    "N", "NV", "NQ", "NS", "ARENA",  # bodies, nv, nq, Σ m_k, the arena's length
    "Q", "V",  # where q and v go in the arena
    "ROWS", "LAYOUT", "ROFF",  # where the tables start (words)
    "REALS", "REALS_END",  # where the constants are (float64 entries)
    "WORKSPACE",  # where the workspace starts (entries of the scalar type)
    "BUFFERS",  # where the offsets of the workspace's buffers start (words)
    "HINGES",  # 1: some body has a compiled hinge force (sko.engine.hooks), which the dynamics add
    "PASSES",  # the address of the articulated-body passes for this scalar type (Request.passes), or 0
)


@register
def request_views(w):
    """``(words, rows, layout, roff, reals, arena, workspace, buffer offsets)`` of a request vector."""
    words = w.view(np.int64)
    n = words[Header.N]
    rows = matrix_view(words, words[Header.ROWS], n, Row.WIDTH)
    layout = matrix_view(words, words[Header.LAYOUT], n, Flat.WIDTH)
    roff = matrix_view(words, words[Header.ROFF], n, Riccati.WIDTH)
    reals = w.view(np.float64)[words[Header.REALS]: words[Header.REALS_END]]
    ws = w[words[Header.WORKSPACE]:]
    return words, rows, layout, roff, reals, ws[: words[Header.ARENA]], ws, words[words[Header.BUFFERS]:]


@register
def buffer(ws, at, which):
    """The buffer ``which`` (a name of the request's declared workspace) of the workspace ``ws``;
    ``at``: the offsets of its buffers (:func:`request_views`), each buffer ending where the next
    one starts."""
    return ws[at[which]: at[which + 1]]


@register
def fill_arena(words, rows, reals, arena, terms):
    """The arena's state (if the call fills it): −1, or the row that rejected the state."""
    if words[Header.FILL] == 0:
        return -1
    return fill_states(rows, reals, arena, terms, words[Header.WRITTEN] == 0, 0, rows.shape[0])

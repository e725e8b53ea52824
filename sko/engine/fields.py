"""Declared layouts: the named columns of integer tables and the named fields of packed records.

Every packed buffer of the compiled path is declared once, here or beside the kernels that
read it, with one of two helpers, and read by the numba kernels and the Python views alike
(numba compiles an ``IntEnum`` member in as a constant):

* :func:`columns` names the columns of an integer table, one row per node or body
  (``layout[j, Flat.PARENT]``); ``WIDTH`` is the number of columns;
* :func:`offsets` lays out consecutive fields of fixed sizes (``record[Record.rotation]`` is
  where a record's rotation starts); ``SIZE`` is where the fields end, and a field of variable
  size, if any, follows there.

Examples
--------
>>> Table = columns("Table", "PARENT", "DIM")
>>> int(Table.DIM), int(Table.WIDTH)
(1, 2)
>>> Pose = offsets("Pose", rotation=9, position=3)
>>> int(Pose.position), int(Pose.SIZE)
(9, 12)
"""

from __future__ import annotations

import sys
from enum import IntEnum

__all__ = ["columns", "offsets"]


def columns(name: str, *names: str) -> type[IntEnum]:
    """An ``IntEnum`` numbering the columns ``names`` from 0, and ``WIDTH`` = their count."""
    return IntEnum(name, [(n, i) for i, n in enumerate(names)] + [("WIDTH", len(names))], module=_caller())


def offsets(name: str, **sizes: int) -> type[IntEnum]:
    """An ``IntEnum`` of the offsets of consecutive fields of the given (positive) sizes, and
    ``SIZE`` = where the last one ends."""
    members, start = [], 0
    for field, size in sizes.items():
        if size <= 0:
            raise ValueError(f"field {field!r} of {name} must have a positive size, got {size}")
        members.append((field, start))
        start += size
    return IntEnum(name, members + [("SIZE", start)], module=_caller())


def _caller() -> str:
    """The module defining the table (two frames up), as :func:`collections.namedtuple` names it:
    two modules may each have a ``Node`` table."""
    return sys._getframe(2).f_globals.get("__name__", __name__)

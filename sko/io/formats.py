"""A model file by its extension: :func:`load` (also ``sko.load``).

``.urdf`` is read by :func:`~sko.io.urdf.load_urdf`; ``.xml`` and ``.mjcf`` are compiled by MuJoCo
and read by :func:`~sko.io.mjcf.load_mjcf` (MuJoCo also compiles a URDF given as ``.xml``). The
extension is matched without regard to case. Options go to that loader unchanged.
"""

from __future__ import annotations

import inspect
import os
from pathlib import Path

from sko.errors import ModelFileError
from sko.io.mjcf import load_mjcf
from sko.io.text import is_xml_text
from sko.io.urdf import load_urdf

__all__ = ["FORMATS", "load"]

#: extension → loader
FORMATS = {".urdf": load_urdf, ".xml": load_mjcf, ".mjcf": load_mjcf}


def load(path, **options):
    """The system described by the model file ``path``, read by the loader of its extension
    (:data:`FORMATS`) with ``options`` (e.g. ``floating_base=True`` for a URDF,
    ``inertia="repair"`` for either).

    Raises
    ------
    ModelFileError
        ``path`` is not a path (XML text included), names no file, has an extension of no known
        format, or an option is not one its loader takes (each message names the path).
    URDFError, MJCFError
        The loader's own errors (malformed or unsupported content).

    Examples
    --------
    >>> import sko
    >>> sko.load("robot.step")
    Traceback (most recent call last):
    ...
    sko.errors.ModelFileError: cannot load 'robot.step': unknown extension '.step' (known: .urdf, .xml, .mjcf)
    """
    if not isinstance(path, (str, os.PathLike)):
        raise ModelFileError(f"sko.load takes the path of a model file, got {type(path).__name__}")
    if is_xml_text(path):  # not a path: the loaders themselves take text
        raise ModelFileError(f"sko.load takes the path of a model file, got XML text ({len(path)} characters): give the "
                             "text to sko.io.load_urdf or sko.io.load_mjcf")
    file = Path(path)
    loader = FORMATS.get(file.suffix.lower())
    if loader is None:
        what = f"unknown extension {file.suffix!r}" if file.suffix else "no extension"
        raise ModelFileError(f"cannot load {str(path)!r}: {what} (known: {', '.join(FORMATS)})")
    taken = list(inspect.signature(loader).parameters)[1:]
    unknown = sorted(set(options) - set(taken))
    if unknown:
        raise ModelFileError(f"cannot load {str(path)!r}: {loader.__name__} takes no option {', '.join(unknown)} "
                             f"(it takes {', '.join(taken)})")
    try:
        found = file.is_file()
    except (OSError, ValueError):  # a path the system cannot even look up (too long, a NUL byte)
        found = False
    if not found:
        raise ModelFileError(f"cannot load {str(path)!r}: no such file")
    return loader(file, **options)

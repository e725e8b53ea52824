"""Deprecated spellings of the system API, kept for one release.

``qd=`` / ``qdd=`` keywords became ``v=`` / ``dv=`` (the order ``q, v, tau`` of Pinocchio's
``aba(model, data, q, v, tau)``); ``neutral``, ``bias``, ``random_state`` became
``neutral_configuration``, ``bias_forces``, ``random_configuration``; ``system.body[name]``
became ``system.body(name)``. Each old spelling still works and warns once per call site.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Hashable, Mapping

__all__ = ["renamed_keywords", "renamed_arguments", "BodyLookup", "deprecated"]


def deprecated(old: str, new: str, stacklevel: int = 3) -> None:
    """Warn that ``old`` is deprecated in favour of ``new`` (by default pointing at the code that
    called the function calling this one)."""
    warnings.warn(f"{old} is deprecated and will be removed in the next release; use {new}",
                  DeprecationWarning, stacklevel=stacklevel)


def renamed_keywords(**renames: str) -> Callable:
    """Accept each old keyword ``old=`` as the new one ``renames[old]``, with a DeprecationWarning."""

    def decorate(method):
        @functools.wraps(method)
        def wrapper(*args, **kwargs):
            if not kwargs:  # the common call: no keyword to rename, no empty mapping to unpack
                return method(*args)
            for old, new in renames.items():
                if old in kwargs:
                    _warn_renamed(method.__name__, old, new, new in kwargs, stacklevel=3)
                    kwargs[new] = kwargs.pop(old)
            return method(*args, **kwargs)

        return wrapper

    return decorate


def renamed_arguments(method: str, given: dict, renames: dict, **current):
    """The values of the keywords ``current`` after the old spellings ``given`` (``old=`` for
    ``renames[old]``), each with a DeprecationWarning. For the methods that take ``**given``
    themselves, the calls where :func:`renamed_keywords`' frame would be a tenth of the time;
    any other keyword is Python's TypeError."""
    for old in given:
        if old not in renames:
            raise TypeError(f"{method}() got an unexpected keyword argument {old!r}")
    for old, value in given.items():
        _warn_renamed(method, old, renames[old], current[renames[old]] is not None, stacklevel=4)
        current[renames[old]] = value
    return tuple(current.values())


def _warn_renamed(method: str, old: str, new: str, both: bool, stacklevel: int) -> None:
    if both:
        raise TypeError(f"{method}() got both {old}= (deprecated) and {new}=")
    warnings.warn(f"{method}({old}=...) is deprecated; use {new}=", DeprecationWarning, stacklevel=stacklevel)


class BodyLookup(Mapping):
    """``system.body(name)``: the body type named ``name``. Subscripting and iterating (the
    former dict ``system.body``) still work for one release and warn."""

    def __init__(self, bodies: dict, lookup: Callable[[Hashable], object]):
        self._bodies, self._lookup = bodies, lookup

    def __call__(self, name: Hashable):
        return self._lookup(name)

    def __getitem__(self, name: Hashable):
        deprecated("system.body[name]", "system.body(name)")
        return self._bodies[name]

    def __iter__(self):
        return iter(self._bodies)

    def __len__(self) -> int:
        return len(self._bodies)

    def __repr__(self) -> str:
        return f"<body lookup of {len(self._bodies)} bodies: call body(name)>"

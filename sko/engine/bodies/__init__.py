"""The compiled node states of the library's body types (BODIES.md, *The contract*).

The engine knows the library's body types: :data:`LIBRARY` maps each to the function that packs
it for its state kernel (:mod:`.rigid`, :mod:`.flexible`, :mod:`.cluster`, imported on first
use), so :mod:`sko.bodies` holds the Python body types only. :func:`compiled_state` looks a
body's class up along its method resolution order: a class that defines its own
:meth:`~sko.bodies.contract.BodyType.compiled_state` (a body type written outside the package)
answers itself; a subclass of a library type that does not is packed as that type, unless it
writes its own ``at_state`` (``MJCF``'s armature bodies, a researcher's variant): its state then
exists in Python only.
"""

from __future__ import annotations

import importlib

from sko.bodies.cluster import RigidCluster
from sko.bodies.contract import BodyType, CompiledState
from sko.bodies.flexible import FlexibleBody
from sko.bodies.rigid import RigidBody
from sko.bodies.rotor import GearedRotorLink

__all__ = ["LIBRARY", "compiled_state"]

#: library body type -> (module, function) that packs one of its bodies for its state kernel
LIBRARY: dict[type, tuple[str, str]] = {
    RigidBody: ("sko.engine.bodies.rigid", "pack_rigid"),
    GearedRotorLink: ("sko.engine.bodies.rigid", "pack_rotor"),
    FlexibleBody: ("sko.engine.bodies.flexible", "pack_flexible"),
    RigidCluster: ("sko.engine.bodies.cluster", "pack_cluster"),
}


def compiled_state(body: BodyType) -> CompiledState | None:
    """The body's compiled state kernel and packed constants, or ``None`` (its ``at_state`` then
    runs in Python): its own :meth:`~sko.bodies.contract.BodyType.compiled_state`, or its
    library type's packing (module docstring)."""
    for kind in type(body).__mro__:
        if kind in LIBRARY:
            if type(body).at_state is not kind.at_state:  # a subclass with its own state
                return None
            module, function = LIBRARY[kind]
            return getattr(importlib.import_module(module), function)(body)
        if "compiled_state" in vars(kind):
            return body.compiled_state()
    return None

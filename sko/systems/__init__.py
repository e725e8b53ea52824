"""Systems: trees of body types without state, whose SKO model at a state ``(q, ν)`` feeds the
generic algorithms.

* :mod:`.multibody`: :class:`MultibodySystem`, any mix of body types;
* :mod:`.rigid`: :class:`RigidSystem`, rigid bodies and joints with named frames (RIGID.md);
* :mod:`.frames`: :class:`Frame`, a named frame on a body, and the centre of mass;
* :mod:`.clustered`: :class:`ClusteredRigidSystem`, coupled joints and closed loops as cluster
  nodes (constraint embedding, EMBEDDING.md);
* :mod:`.builder`: :class:`SystemBuilder`, a rigid system body by body (numbers or sympy).

Time integration is :mod:`sko.simulation`, sweeps over many states :mod:`sko.scale`, loaders
:mod:`sko.io`: the layers above.
"""

from sko.systems.builder import DEFAULT_GRAVITY, SystemBuilder
from sko.systems.clustered import ClusteredRigidSystem
from sko.systems.frames import Frame
from sko.systems.multibody import MultibodySystem
from sko.systems.rigid import BodySpec, RigidSystem

__all__ = ["MultibodySystem", "RigidSystem", "ClusteredRigidSystem", "BodySpec", "Frame", "SystemBuilder", "DEFAULT_GRAVITY"]

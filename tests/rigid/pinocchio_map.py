"""Where example-robot-data installed its robots, and the order of Pinocchio's inertial parameters
in ours; the coordinate maps are :mod:`sko.interop`'s."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

import numpy as np

from sko.interop import PinocchioMap


def robots_dir() -> Path | None:
    """The ``robots`` directory of the installed example-robot-data, or None."""
    try:
        import example_robot_data  # noqa: F401  (older releases ship a Python module)

        return Path(example_robot_data.getModelPath("ur_description/urdf/ur5_robot.urdf")) / "robots"
    except (ImportError, AttributeError, Exception):
        pass
    try:
        files = metadata.files("example-robot-data") or []
    except metadata.PackageNotFoundError:
        return None
    for f in files:
        parts = Path(str(f)).parts
        if "robots" in parts and "example-robot-data" in parts:
            path = Path(str(f.locate()))
            while path.name != "robots":
                path = path.parent
            return path
    return None


#: The coordinate maps live in the package now (joints matched by name, free flyer, continuous joints).
CoordinateMap = PinocchioMap


def parameter_columns(system, model) -> np.ndarray:
    """For each of Pinocchio's 10·(njoints − 1) inertial parameters, the index of ours
    (:meth:`~sko.systems.multibody.MultibodySystem.inertial_parameters`), bodies matched by joint name."""
    starts, o = {}, 0
    for k in system.bodies:
        starts[k], o = o, o + len(system.body(k).inertial_parameters())
    by_name = system.joint_names()
    return np.concatenate([starts[by_name[model.names[i]]] + np.arange(10) for i in range(1, model.njoints)])

"""Optional dependencies and the extras that install them.

=================  ======================================  =========================================
extra              installs                                needed for
=================  ======================================  =========================================
``symbolic``       sympy                                   symbolic models and systems,
                                                           ``sko verify --symbolic``
``plot``           matplotlib                              the figures of ``papers/``
``crosscheck``     pinocchio, example-robot-data, mujoco   cross-checks against the peers
``docs``           Sphinx and its extensions               building the documentation
``scale``          dask, distributed, zarr                 sweeps on Dask, results to Zarr
``test``           pytest, hypothesis, all of the above    the test suite
=================  ======================================  =========================================
"""

from __future__ import annotations

import importlib
from types import ModuleType

from sko.errors import MissingDependencyError

__all__ = ["EXTRAS", "require"]

#: module -> the extra of ``sko-multibody`` that installs it
EXTRAS = {"sympy": "symbolic", "matplotlib": "plot", "pinocchio": "crosscheck", "mujoco": "crosscheck",
          "example_robot_data": "crosscheck", "sphinx": "docs", "dask": "scale", "distributed": "scale",
          "zarr": "scale"}


def require(module: str, feature: str) -> ModuleType:
    """Import ``module``, or raise :class:`~sko.errors.MissingDependencyError` naming the
    ``feature`` that needs it and the extra to install.

    >>> require("numpy", "arrays").__name__
    'numpy'
    """
    try:
        return importlib.import_module(module)
    except ImportError:
        top = module.split(".")[0]
        extra = EXTRAS.get(top)
        hint = f'pip install "sko-multibody[{extra}]"' if extra else f"pip install {top}"
        raise MissingDependencyError(f"{top} is needed for {feature}: {hint}") from None

"""Simulation of systems in time: :func:`rollout` steps many trajectories at once (RK4 or
semi-implicit Euler, compiled where the system allows), :func:`simulate` is its one-state case.

* :mod:`.rollout`: :func:`rollout`, :class:`Rollout`;
* :mod:`.simulate`: :func:`simulate`, :class:`Trajectory`.
"""

from sko.simulation.rollout import Rollout, rollout
from sko.simulation.simulate import Trajectory, simulate

__all__ = ["rollout", "Rollout", "simulate", "Trajectory"]

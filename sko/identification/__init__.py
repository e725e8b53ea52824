"""Identification of inertial parameters from measured motion (IDENTIFICATION.md).

* :func:`base_parameters`: the identifiable combinations of a system's parameters (Gautier's QR
  with column pivoting of regressors stacked at random states);
* :func:`identify`: base parameters by (weighted) least squares with standard errors, and a
  physically consistent full estimate through the log-Cholesky parameterisation of every rigid
  body's pseudo-inertia;
* :func:`excitation_trajectory`: periodic Fourier-series joint trajectories within the joint
  limits that keep the base regressor well conditioned.
"""

from sko.identification.base import BaseParameters, base_parameters, stacked_regressor
from sko.identification.consistent import log_cholesky_parameters, pseudo_inertia, rigid_from_log_cholesky
from sko.identification.estimate import Identification, identify
from sko.identification.excitation import ExcitationTrajectory, excitation_trajectory

__all__ = ["BaseParameters", "base_parameters", "stacked_regressor", "Identification", "identify",
           "ExcitationTrajectory", "excitation_trajectory", "pseudo_inertia", "log_cholesky_parameters",
           "rigid_from_log_cholesky"]

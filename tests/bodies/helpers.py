"""Shared helpers for the body-type tests: random states with sizeable deformations."""

from __future__ import annotations

import numpy as np

from sko.bodies import FlexibleBody
from sko.systems import MultibodySystem


def random_state(system: MultibodySystem, rng: np.random.Generator, deformation: float = 0.4):
    """A random ``(q, θ̇)`` whose modal coordinates are ``deformation``-sized, so the
    geometric nonlinearity of the modal nodes (exponential map) is exercised."""
    q, qd = system.random_configuration(rng), rng.uniform(-1.0, 1.0, system.nv)
    for k in system.bodies:
        b = system.body(k)
        if isinstance(b, FlexibleBody) and b.r:
            s = system.q_slices[k]
            q[s.start + b.joint.nq:s.stop] = deformation * rng.standard_normal(b.r)
    return q, qd


def relative_error(actual, expected) -> float:
    actual, expected = np.asarray(actual), np.asarray(expected)
    return float(np.abs(actual - expected).max() / max(np.abs(expected).max(), 1e-300))

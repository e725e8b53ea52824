"""The numerical rank of the stacked regressor (IDENTIFICATION.md, *Base parameters*): rounding in
the recursions must not count as an identifiable combination."""

from __future__ import annotations

import numpy as np
import pytest

from sko.examples.bodies import flexible_geared_arm, random_system
from sko.examples.rigid import humanoid, planar_chain
from sko.graphs.errors import DimensionError
from sko.identification import base_parameters, identify, stacked_regressor

# the shipped flexible geared arm leaves a dependent column ~7e-12 of the largest (its tolerance
# once was ~1e-13); the others have a clean gap
SYSTEMS = {"humanoid": humanoid, "flexible-geared-arm": flexible_geared_arm, "random-3": lambda: random_system(3, 8)}


def _fresh_states(system, n: int, seed: int):
    rng = np.random.default_rng(seed)
    q = np.array([system.random_configuration(rng) for _ in range(n)])
    v, dv = rng.normal(size=(2, n, system.nv))
    return q, v, dv


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_base_rank_is_the_numerical_rank_at_other_states(name):
    system = SYSTEMS[name]()
    base = base_parameters(system, rng=0)
    W = stacked_regressor(system, *_fresh_states(system, 50, 7))
    assert np.linalg.matrix_rank(W) == base.rank
    Wb = base.regressor(W)
    scaled = Wb / np.linalg.norm(Wb, axis=0)
    assert np.linalg.cond(scaled) < 1e11  # no column a rounding-level combination of others


def test_noise_free_torques_identify_the_base_parameters_of_a_flexible_geared_arm():
    system = flexible_geared_arm()
    base = base_parameters(system, rng=0)
    q, v, dv = _fresh_states(system, 40, 0)
    tau = np.array([system.inverse_dynamics(*x) for x in zip(q, v, dv)])
    result = identify(system, q, v, dv, tau, base=base, consistent=False)
    true = base.base(system.inertial_parameters())
    # a rounding-level column counted as a parameter put one estimate 4.5 off (of 0.04–9.4 in size)
    assert np.abs(result.estimate - true).max() < 1e-3


def test_base_parameters_reject_a_bad_tolerance():
    for tolerance in (-1.0, 1.0, np.nan, "1e-6"):
        with pytest.raises(DimensionError, match="tolerance"):
            base_parameters(planar_chain(2), rng=0, tolerance=tolerance)

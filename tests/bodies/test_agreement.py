"""The SKO path of mixed body types against the independent particle Lagrangian (BODIES.md,
*Checking a body type independently*): ℳ, 𝒞 and forward dynamics to ~1e-8 relative."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sko.bodies import GearedRotorLink, FlexibleBody
from sko.examples.bodies import flexible_examples, random_system

from .helpers import random_state, relative_error
from .particle_model import particle_tree

RTOL = 1e-8
CASES = [(seed, shape) for seed, shape in enumerate(["chain", "fan", "random", "chain", "random", "random", "chain", "random", "forest", "forest"])]


def _agree(system, rng):
    particles = particle_tree(system)
    q, qd = random_state(system, rng)
    tau = rng.standard_normal(system.dof_size)
    M = system.mass_matrix(q)
    assert relative_error(M, particles.mass_matrix(q)) < RTOL
    assert relative_error(system.bias_forces(q, qd), particles.bias(q, qd)) < RTOL
    assert relative_error(system.forward_dynamics(q, qd, tau), particles.forward_dynamics(q, qd, tau)) < RTOL
    # energies up to a constant (the particles of a rotor on the ground have constant weight)
    q2, qd2 = random_state(system, rng)
    difference = particles.energy(q, qd) - particles.energy(q2, qd2)
    assert abs(system.energy(q, qd) - system.energy(q2, qd2) - difference) < RTOL * max(1.0, abs(difference))


@pytest.mark.parametrize("seed, shape", CASES)
def test_random_mixed_trees_match_the_particle_lagrangian(seed, shape):
    system = random_system(seed, n_bodies=7, shape=shape)
    _agree(system, np.random.default_rng(100 + seed))


def test_random_trees_mix_all_body_types_and_mode_counts():
    """The cases above really cover what they claim: every body type, several mode counts
    (0 included), children on modal nodes, rotors below rotors, non-square weights."""
    systems = [random_system(seed, n_bodies=7, shape=shape) for seed, shape in CASES]
    bodies = [b for s in systems for b in [s.body(k) for k in s.bodies]]
    assert {type(b).__name__ for b in bodies} == {"RigidBody", "FlexibleBody", "GearedRotorLink"}
    assert {b.r for b in bodies if isinstance(b, FlexibleBody)} == {0, 1, 2, 3}
    assert any(b.attach is not None for b in bodies)
    for parent_type in (GearedRotorLink, FlexibleBody):  # rotors below rotors and on modal nodes
        assert any(isinstance(b, GearedRotorLink) and b.parent is not None and isinstance(s.body(b.parent), parent_type) and
                   (parent_type is GearedRotorLink or b.attach is not None) for s in systems for b in [s.body(k) for k in s.bodies])
    assert any(sum(b.parent is None for b in [s.body(k) for k in s.bodies]) > 1 for s in systems)  # forests
    shapes = {w.shape for s in systems for w in s.sko_model(s.random_configuration(0))[0].phi.values()}
    assert any(m != n for m, n in shapes) and (9, 9) in {(n, m) for m, n in shapes}


@settings(max_examples=15)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 9), shape=st.sampled_from(["chain", "fan", "random", "forest"]))
def test_hypothesis_mixed_trees_match_the_particle_lagrangian(seed, n, shape):
    system = random_system(seed, n_bodies=n, shape=shape)
    _agree(system, np.random.default_rng(seed))


@pytest.mark.parametrize("name", sorted(flexible_examples()))
def test_builtin_examples_match_the_particle_lagrangian(name):
    _agree(flexible_examples()[name](), np.random.default_rng(7))

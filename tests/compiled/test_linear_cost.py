"""The compiled system path does O(N) work for the O(N) requests: the workspace a call carves
(arena and scratch) grows linearly with the number of bodies (an ``nv × nv`` buffer zeroed on
every inverse or forward dynamics call once made both quadratic). Counted entries, not timed
calls."""

import numpy as np
import pytest

from sko.bodies import Revolute
from sko.examples.rigid import rod_inertia
from sko.spatial import pose_transform
from sko.systems import SystemBuilder
from sko.engine import requests as rq
from sko.engine.dispatch import engine


def _chain(n: int):
    b = SystemBuilder()
    for i in range(n):
        b.add_body(f"b{i}", None if i == 0 else f"b{i - 1}", Revolute([0.0, 1.0, 0.0]), pose_transform([0, 0, 0.5]),
                   mass=1.0, com=[0.0, 0.0, 0.25], inertia_com=rod_inertia(1.0, 0.5))
    return b.build()


def _scratch_entries(name: str, n: int) -> int:
    """Entries of the workspace of request ``name`` (its arena and buffers) for a chain of ``n``."""
    layout, request = engine(_chain(n)).layout, rq.REQUESTS[name]
    w = rq.request_vector(request, layout, np.float64)
    total = layout.size + sum(request.buffer_sizes(rq.sizes(layout), rq.takes_rigid(request, layout, np.float64)))
    # the buffers cover the workspace, then x of a one-state call
    assert w.size - w.view(np.int64)[rq.Header.WORKSPACE] == total + layout.dof_size
    return total


@pytest.mark.parametrize("name", ["inverse_dynamics", "forward_dynamics", "mass_matrix", "energy", "centroidal_terms",
                                  "centroidal_momentum_matrix", "centroidal_momentum_matrix_rate"])
def test_scratch_is_linear_in_the_bodies(name):
    small, large = _scratch_entries(name, 20), _scratch_entries(name, 200)
    assert large <= 11 * small, (small, large)


def test_the_inverse_takes_the_identity_columns():
    assert _scratch_entries("mass_matrix_inverse", 200) >= 2 * 200 ** 2  # nv right-hand sides and I

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
from sko.systems import compiled as cc
from sko.systems.engine import engine


def _chain(n: int):
    b = SystemBuilder()
    for i in range(n):
        b.add_body(f"b{i}", None if i == 0 else f"b{i - 1}", Revolute([0.0, 1.0, 0.0]), pose_transform([0, 0, 0.5]),
                   mass=1.0, com=[0.0, 0.0, 0.25], inertia_com=rod_inertia(1.0, 0.5))
    return b.build()


def _scratch_entries(op: int, n: int) -> int:
    e = engine(_chain(n))
    arena, work, scratch = cc._workspace(op, e._tables, np.zeros(cc.workspace_size(op, e._tables)))
    total = arena.size + sum(x.size for x in (*work, *scratch))
    assert total == cc.workspace_size(op, e._tables)  # the views cover the workspace
    return total


@pytest.mark.parametrize("op", [cc.INVERSE_DYNAMICS, cc.FORWARD_DYNAMICS, cc.MASS_MATRIX])
def test_scratch_is_linear_in_the_bodies(op):
    small, large = _scratch_entries(op, 20), _scratch_entries(op, 200)
    assert large <= 11 * small, (small, large)


def test_the_inverse_takes_the_identity_columns():
    assert _scratch_entries(cc.MASS_MATRIX_INVERSE, 200) >= 2 * 200 ** 2  # nv right-hand sides and I

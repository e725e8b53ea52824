"""The compiled system path does O(N) work for the O(N) requests: the scratch a call allocates
grows linearly with the number of bodies (a regression to an ``nv × nv`` buffer on the
inverse or forward dynamics path made both quadratic). Counted entries, not timed calls."""

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
    ints, _, _, layout, roff = e._static
    work, scratch, _ = cc._scratch(op, ints, layout, roff, e.layout.size, np.dtype(np.float64))
    return sum(x.size for x in (*work, *scratch))


@pytest.mark.parametrize("op", [cc.INVERSE_DYNAMICS, cc.FORWARD_DYNAMICS, cc.MASS_MATRIX])
def test_scratch_is_linear_in_the_bodies(op):
    small, large = _scratch_entries(op, 20), _scratch_entries(op, 200)
    assert large <= 11 * small, (small, large)


def test_the_inverse_takes_the_identity_columns():
    assert _scratch_entries(cc.MASS_MATRIX_INVERSE, 200) >= 2 * 200 ** 2  # nv right-hand sides and I

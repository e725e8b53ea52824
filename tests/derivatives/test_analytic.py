"""The O(N·d) recursion of the derivatives of a rigid tree (sko.systems.rigid_derivatives):
equal to the complex step on random forests of every joint, exact on the symbolic pendulum
against sympy's own derivatives, and refused where it does not apply."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sko.bodies import Cylindrical, Free, Helical, Planar, Prismatic, Revolute, Spherical
from sko.examples.bodies import flexible_two_link
from sko.graphs.errors import SKOError
from sko.systems import rigid_derivatives
from tests.derivatives.test_complex_step import three_link_pendulum
from tests.rigid.random_systems import random_rigid_system


@settings(max_examples=40)
@given(st.integers(0, 2**32 - 1))
def test_the_recursion_equals_the_complex_step_on_random_forests(seed):
    system = random_rigid_system(seed)
    assert rigid_derivatives.applies(system)
    rng = np.random.default_rng(seed)
    q = system.random_configuration(rng)
    v, a, tau = rng.normal(size=(3, system.nv))
    for method in (system.inverse_dynamics_derivatives, system.forward_dynamics_derivatives):
        analytic = method(q, v, a if method == system.inverse_dynamics_derivatives else tau, method="analytic")
        reference = method(q, v, a if method == system.inverse_dynamics_derivatives else tau, method="complex_step")
        for x, y in zip(analytic, reference):
            np.testing.assert_allclose(x, y, rtol=1e-11, atol=1e-11 * max(1.0, np.abs(y).max()))


def test_the_worked_example_by_the_recursion():
    system = three_link_pendulum()
    q, v, a = np.array([0.3, -0.6, 0.9]), np.array([0.5, -0.8, 1.2]), np.array([0.3, -0.4, 0.7])
    dq, dv, _ = system.inverse_dynamics_derivatives(q, v, a, method="analytic")
    np.testing.assert_allclose(dq[2], [1.6617427992, 1.70679621729, 1.73902283843], rtol=1e-11)
    np.testing.assert_allclose(dv[0], [-1.78692028995, -1.08507688919, -0.497978136556], rtol=1e-11)
    assert abs(dv[2, 2]) < 1e-15 * np.abs(dv).max()  # ℳ₃₃ is constant: Γ₃₃ₖ = 0


def test_symbolic_derivatives_are_sympys():
    sympy = pytest.importorskip("sympy")
    from sko.examples.symbolic import symbolic_pendulum

    system, symbols = symbolic_pendulum(2)
    q, v = symbols["q"], symbols["v"]
    a = np.array(sympy.symbols("a1:3", real=True), dtype=object)
    dq, dv, M = system.inverse_dynamics_derivatives(q, v, a)  # auto: the recursion, exactly
    tau = system.inverse_dynamics(q, v, a)
    for i in range(2):
        for j in range(2):
            assert sympy.simplify(dq[i, j] - sympy.diff(tau[i], q[j])) == 0
            assert sympy.simplify(dv[i, j] - sympy.diff(tau[i], v[j])) == 0
            assert sympy.simplify(M[i, j] - sympy.diff(tau[i], a[j])) == 0


@pytest.mark.parametrize("joint", [Revolute([0.3, 1.0, -0.2]), Prismatic([1.0, 0.0, 2.0]), Helical([0, 0, 1], 0.1),
                                   Cylindrical([1, 1, 0]), Planar([0, 0, 1]), Spherical(), Free()])
def test_joints_said_constant_have_no_derivatives(joint):
    """The flag that skips a joint's derivatives is true: its complex steps are zero."""
    rng = np.random.default_rng(1)
    q, v = joint.random(rng), rng.normal(size=joint.nv)
    stepped = type(joint).__new__(type(joint))
    stepped.__dict__.update(joint.__dict__)
    stepped.constant_motion = False
    for x in stepped.kinematics_derivatives(q, v):
        assert np.abs(x).max(initial=0.0) < 1e-14


def test_the_recursion_is_refused_where_it_does_not_apply():
    flexible = flexible_two_link()
    q = flexible.random_configuration(0)
    with pytest.raises(SKOError, match="rigid bodies without hinge or external forces"):
        flexible.inverse_dynamics_derivatives(q, method="analytic")
    rigid = three_link_pendulum()
    with pytest.raises(SKOError, match="method must be one of"):
        rigid.inverse_dynamics_derivatives(np.zeros(3), method="finite differences")
    with pytest.raises(SKOError, match="rigid bodies without hinge or external forces"):
        rigid.inverse_dynamics_derivatives(np.zeros(3), external_forces={"l3": np.ones(6)}, method="analytic")

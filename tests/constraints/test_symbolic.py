"""Constrained and impulse dynamics refuse symbolic systems and states by name (CONSTRAINTS.md
§3–§6): their solve of ``Ω λ = r`` decides which rows no joint moves, how well ``Ω`` is
conditioned and when the proximal iterations stop by comparing numbers, which expressions do not
allow. The compliance ``Ω`` itself is a product of the recursions and stays symbolic."""

import numpy as np
import pytest

from sko.constraints import PointContact, constraint_compliance, constrained_dynamics, impulse_dynamics
from sko.constraints.dynamics import constrained_operational_space_inertia
from sko.constraints.values import ConstraintError

sympy = pytest.importorskip("sympy")


@pytest.fixture(scope="module")
def pendulum():
    from sko.examples.symbolic import symbolic_pendulum

    return symbolic_pendulum(2)


def _requests(system, q, v):
    tau = np.zeros(2, dtype=v.dtype)
    C = [PointContact("tip")]
    return {"constrained_dynamics": lambda: constrained_dynamics(system, q, v, tau, C),
            "impulse_dynamics": lambda: impulse_dynamics(system, q, v, C),
            "constrained_operational_space_inertia": lambda: constrained_operational_space_inertia(system, q, C),
            "system.constrained_dynamics": lambda: system.constrained_dynamics(q, v, tau, C),
            "system.impulse_dynamics": lambda: system.impulse_dynamics(q, v, C),
            "constrained_dynamics_derivatives": lambda: system.constrained_dynamics_derivatives(q, v, tau, C)}


@pytest.mark.parametrize("request_name", ["constrained_dynamics", "impulse_dynamics",
                                          "constrained_operational_space_inertia", "system.constrained_dynamics",
                                          "system.impulse_dynamics", "constrained_dynamics_derivatives"])
@pytest.mark.parametrize("state", ["symbolic", "numeric"])
def test_symbolic_constrained_requests_are_refused_by_name(pendulum, request_name, state):
    """They failed inside numpy's norm ("Add which has no callable sqrt method") or eigvalsh
    ("Cannot cast ufunc 'eigvalsh_lo' input from dtype('O')"): symbolic states, and numeric states
    of a system with symbolic masses."""
    system, symbols = pendulum
    q, v = (symbols["q"], symbols["v"]) if state == "symbolic" else (np.array([0.3, -0.2]), np.array([0.1, 0.4]))
    name = request_name.removeprefix("system.")
    if state == "numeric" and name == "constrained_dynamics_derivatives":
        name = "constrained_dynamics"  # the system's symbols are met by the dynamics the derivatives step through
    with pytest.raises(ConstraintError, match=rf"{name} takes numbers: this state or system is symbolic .*decides "
                                              r"numerically"):
        _requests(system, q, v)[request_name]()


def test_the_compliance_stays_symbolic(pendulum):
    system, symbols = pendulum
    Omega = constraint_compliance(system, symbols["q"], [PointContact("tip")])
    assert Omega.dtype == object and Omega.shape == (3, 3)
    assert sympy.simplify(Omega[2, 2]) == 0  # the tip of a planar pendulum does not move along z

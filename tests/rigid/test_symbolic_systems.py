"""Symbolic rigid systems: SystemBuilder and the DH builder take sympy masses, lengths, centres of
mass, inertias and gravity; the n-link pendulum agrees exactly with sympy.physics.mechanics."""

from __future__ import annotations

import numpy as np
import pytest

sympy = pytest.importorskip("sympy")

from papers.symbolic_pendulum import main, mechanics_dynamics, sko_dynamics  # noqa: E402
from sko.bodies import Revolute  # noqa: E402
from sko.errors import RigidSystemError  # noqa: E402
from sko.examples.symbolic import symbolic_pendulum  # noqa: E402
from sko.io.dh import DHLink, dh_system  # noqa: E402
from sko.spatial import pose_transform  # noqa: E402
from sko.systems import SystemBuilder  # noqa: E402
from sko.verify import run  # noqa: E402
from tests.util import assert_close  # noqa: E402


def test_pendulum_mass_matrix_and_bias_equal_sympy_mechanics(capsys):
    out = main(["--links", "2"])
    assert out["M_equal"] is True and out["C_equal"] is True
    M, C = out["M"], out["C"]
    assert M.shape == (2, 2) and C.shape == (2, 1)
    s = sko_dynamics(1)[2]
    assert {"g", "Izz1", "m1", "c1"} <= {str(x) for x in C.free_symbols | M.free_symbols} and "l1" in str(M[0, 1])
    assert "ℳ equal to sympy.physics.mechanics: True; 𝒞 equal: True" in capsys.readouterr().out
    M1, C1, _ = sko_dynamics(1)  # one link: ℳ = Izz + m c², 𝒞 = m g c sin q
    assert sympy.simplify(M1[0, 0] - (s["Izz"][0] + s["m"][0] * s["c"][0] ** 2)) == 0
    assert sympy.simplify(C1[0] - s["m"][0] * s["g"] * s["c"][0] * sympy.sin(s["q"][0])) == 0
    M_ref, C_ref = mechanics_dynamics(1, s)
    assert sympy.simplify(M_ref[0, 0] - M1[0, 0]) == 0 and sympy.simplify(C_ref[0] - C1[0]) == 0


def test_symbolic_pendulum_evaluates_to_the_numeric_one():
    system, s = symbolic_pendulum(2)
    values = {**dict(zip(s["m"], (1.5, 0.7))), **dict(zip(s["l"], (1.1, 0.9))), **dict(zip(s["c"], (0.5, 0.4))),
              **{x: 0.02 for key in ("Ixx", "Iyy", "Izz") for x in s[key]}, s["g"]: 9.81}
    numeric = SystemBuilder(gravity=[0, -9.81, 0])
    numeric.add_body("link1", None, Revolute([0, 0, 1]), mass=1.5, com=[0, -0.5, 0], inertia_com=0.02 * np.eye(3))
    numeric.add_body("link2", "link1", Revolute([0, 0, 1]), pose_transform([0, -1.1, 0]), mass=0.7, com=[0, -0.4, 0],
                     inertia_com=0.02 * np.eye(3))
    numeric = numeric.build()
    q, v, tau = np.array([0.3, -0.8]), np.array([0.5, 1.2]), np.array([0.1, -0.2])
    state = {**values, **dict(zip(s["q"], q)), **dict(zip(s["v"], v))}
    evaluate = lambda A: np.array(sympy.Matrix(A).subs(state).evalf(), dtype=float).reshape(np.shape(A))  # noqa: E731
    assert_close(evaluate(system.mass_matrix(s["q"])), numeric.mass_matrix(q), 1e-12)
    assert_close(evaluate(system.bias_forces(s["q"], s["v"])), numeric.bias_forces(q, v), 1e-12)
    assert_close(evaluate(system.forward_dynamics(s["q"], s["v"], tau)), numeric.forward_dynamics(q, v, tau), 1e-12)
    assert float(sympy.sympify(system.potential_energy(s["q"])).subs(state)) == pytest.approx(numeric.potential_energy(q))


def test_builder_keeps_symbols_exact_and_checks_what_it_can():
    m, l = sympy.symbols("m l", positive=True)
    b = SystemBuilder(gravity=[0, 0, -sympy.Symbol("g")])
    b.add_body("a", None, Revolute([0, 1, 0]), mass=m, com=[0, 0, -l / 2], inertia_com=sympy.Rational(1, 12) * m * l**2 * np.eye(3))
    b.add_body("b", "a", Revolute([0, 1, 0]), pose_transform([0, 0, -l]), mass=m, com=[0, 0, -0.5 * l],
               inertia_com=np.diag([1, 1, 1]) * m * l**2 / 12)
    system = b.build()
    X = system.body("b").placement
    assert X.dtype == object and all(not e.atoms(sympy.Float) for e in X.flat if isinstance(e, sympy.Basic))
    assert system.body("b").inertia[5, 5] == m and system.total_mass == 2 * m
    with pytest.raises(RigidSystemError, match="not symmetric"):
        b.add_body("c", "b", Revolute([0, 1, 0]), mass=m, inertia_com=np.array([[m, l, 0], [0, m, 0], [0, 0, m]]))
    with pytest.raises(RigidSystemError, match="non-negative"):
        b.add_body("d", "b", Revolute([0, 1, 0]), mass=-1.0)


def test_dh_builder_takes_symbols():
    a1, a2, m = sympy.symbols("a1 a2 m", positive=True)
    links = [DHLink(a=a, alpha=0.0, d=0.0, theta=0.0, mass=m, com=[0, 0, 0], inertia_com=m * np.eye(3) / 10) for a in (a1, a2)]
    arm = dh_system(links, gravity=[0, -9.81, 0])
    q = np.array(sympy.symbols("q1 q2", real=True), dtype=object)
    tip = sympy.Matrix(arm.frame_pose(q, "link2_dh")[:3, 3]).applyfunc(lambda e: sympy.trigsimp(sympy.nsimplify(e)))
    assert sympy.simplify(tip[0] - (a1 * sympy.cos(q[0]) + a2 * sympy.cos(q[0] + q[1]))) == 0
    assert sympy.simplify(tip[1] - (a1 * sympy.sin(q[0]) + a2 * sympy.sin(q[0] + q[1]))) == 0
    with pytest.raises(RigidSystemError, match="non-finite"):
        dh_system([DHLink(a=np.inf, alpha=0.0, d=0.0, theta=0.0, mass=1.0)])


def test_verify_proves_identities_on_the_symbolic_pendulum():
    results = run(models=["symbolic-pendulum"], checks=["crba", "psi_inverse"], symbolic=True)
    assert results and all(r.passed and r.exact for r in results)


def test_a_symbolic_state_is_normalised_moved_and_differenced_exactly():
    """The system's configuration maps at a symbolic state cast it to float ("Cannot convert
    expression to float"); a pendulum's revolute joints have q̇ = ν, so each is exact."""
    system, symbols = symbolic_pendulum(2)
    q, v = symbols["q"], symbols["v"]
    assert list(system.normalize(q)) == list(q)
    assert all(sympy.simplify(a - (b + 0.1 * c)) == 0 for a, b, c in zip(system.integrate(q, v, 0.1), q, v))
    assert all(sympy.simplify(d - (b - a)) == 0 for d, a, b in zip(system.difference(q, v), q, v))

"""The symbolic mass matrix and bias forces of an n-link pendulum, derived by the SKO
recursions and checked exactly against ``sympy.physics.mechanics`` (Lagrange's method).

Run ``python -m papers.symbolic_pendulum [--links N]`` (default 2; needs the ``symbolic`` extra:
``pip install "sko-multibody[symbolic]"``). It

1. builds the planar pendulum of :func:`sko.examples.symbolic.symbolic_pendulum` with
   :class:`~sko.systems.builder.SystemBuilder`: sympy masses ``m_i``, lengths ``l_i``, centres
   of mass ``c_i``, inertias ``Izz_i`` and gravity ``g``;
2. computes ``ℳ(q)`` by the composite body recursion and ``𝒞(q, v)`` by Newton–Euler on the
   symbolic SKO model (the same code that runs on floats);
3. derives the same pendulum with ``sympy.physics.mechanics.LagrangesMethod`` (relative angles
   ``q_i``, ``q̇_i = v_i``): its ``mass_matrix`` is ``ℳ`` and ``−forcing`` is ``𝒞``;
4. proves every entry of the differences simplifies to ``0`` and prints ``ℳ`` and ``𝒞``.

The joint models hold the exact floats ``0.0`` and ``1.0``, so the recursions' expressions carry
float coefficients such as ``1.0*m1``; :func:`exact` turns them back into integers. No figure.
:func:`main` returns what it prints, so a test can assert it.
"""

from __future__ import annotations

import argparse
import sys

from papers.common import run_main
from sko.examples.symbolic import symbolic_pendulum
from sko.optional import require

__all__ = ["exact", "sko_dynamics", "mechanics_dynamics", "main"]


def _sympy():
    return require("sympy", "papers.symbolic_pendulum")


def exact(M):
    """A sympy Matrix with float coefficients made rational and trigonometric terms simplified."""
    sympy = _sympy()
    return sympy.Matrix(M).applyfunc(lambda e: sympy.trigsimp(sympy.nsimplify(sympy.expand(e), rational=True)))


def sko_dynamics(n: int):
    """``(ℳ, 𝒞, symbols)`` of the ``n``-link pendulum by the SKO recursions."""
    system, s = symbolic_pendulum(n)
    return exact(system.mass_matrix(s["q"])), exact(system.bias_forces(s["q"], s["v"])), s


def mechanics_dynamics(n: int, s: dict):
    """``(ℳ, 𝒞)`` of the same pendulum by ``sympy.physics.mechanics`` (Lagrange's method), in
    the symbols ``s`` of :func:`sko_dynamics`."""
    sympy = _sympy()
    from sympy.physics import mechanics as me

    q, u = me.dynamicsymbols(f"q1:{n + 1}"), me.dynamicsymbols(f"q1:{n + 1}", 1)
    N = me.ReferenceFrame("N")
    joint = me.Point("O")
    joint.set_vel(N, 0)
    frame, bodies, loads = N, [], []
    for i in range(n):
        frame = frame.orientnew(f"A{i + 1}", "Axis", [q[i], frame.z])
        com = joint.locatenew(f"C{i + 1}", -s["c"][i] * frame.y)
        com.v2pt_theory(joint, N, frame)
        inertia = me.inertia(frame, s["Ixx"][i], s["Iyy"][i], s["Izz"][i])
        bodies.append(me.RigidBody(f"B{i + 1}", com, frame, s["m"][i], (inertia, com)))
        loads.append((com, -s["m"][i] * s["g"] * N.y))
        nxt = joint.locatenew(f"P{i + 1}", -s["l"][i] * frame.y)
        nxt.v2pt_theory(joint, N, frame)
        joint = nxt
    method = me.LagrangesMethod(me.Lagrangian(N, *bodies), q, forcelist=loads, frame=N)
    method.form_lagranges_equations()
    to_state = {**{ui: vi for ui, vi in zip(u, s["v"])}, **{qi: si for qi, si in zip(q, s["q"])}}
    M = method.mass_matrix.subs(to_state)
    C = -method.forcing.subs(to_state)
    return exact(M), exact(C)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m papers.symbolic_pendulum", description=__doc__.splitlines()[0])
    parser.add_argument("--links", type=int, default=2, help="number of links (default 2)")
    args = parser.parse_args(argv)
    sympy = _sympy()
    print(f"symbolic {args.links}-link pendulum: SKO recursions vs sympy.physics.mechanics", file=sys.stderr)
    M, C, s = sko_dynamics(args.links)
    M_ref, C_ref = mechanics_dynamics(args.links, s)
    M_diff = (M - M_ref).applyfunc(sympy.simplify)
    C_diff = (C - C_ref).applyfunc(sympy.simplify)
    out = {"M": M, "C": C, "M_equal": M_diff.is_zero_matrix, "C_equal": C_diff.is_zero_matrix}
    print("mass matrix ℳ(q):")
    sympy.pprint(M, wrap_line=False)
    print("bias forces 𝒞(q, v):")
    sympy.pprint(C, wrap_line=False)
    print(f"ℳ equal to sympy.physics.mechanics: {out['M_equal']}; 𝒞 equal: {out['C_equal']}")
    return out


if __name__ == "__main__":
    run_main(lambda: sys.exit(0 if (r := main())["M_equal"] and r["C_equal"] else 1))

"""A symbolic rigid system: the planar n-link pendulum with sympy masses, lengths, centres of
mass, inertias and gravity, built by :class:`~sko.systems.builder.SystemBuilder`.

Link ``i`` hangs from a revolute joint about ``z`` (angle ``q_i`` relative to link ``i − 1``),
has length ``l_i``, mass ``m_i``, its centre of mass ``c_i`` below the joint (along ``−y`` of its
frame) and rotational inertia ``diag(Ixx_i, Iyy_i, Izz_i)`` about it; gravity is ``−g`` along the
world ``y``. The system's mass matrix and bias forces at a symbolic state are then expressions
(``papers/symbolic_pendulum.py`` checks them exactly against ``sympy.physics.mechanics``).

Examples
--------
>>> import sympy
>>> system, symbols = symbolic_pendulum(2)
>>> M = system.mass_matrix(symbols["q"])
>>> sympy.nsimplify(sympy.trigsimp(M[1, 1]))
Izz2 + c2**2*m2
"""

from __future__ import annotations

import numpy as np

from sko.bodies.joints import Revolute
from sko.errors import RigidSystemError
from sko.model import SKOModel
from sko.optional import require
from sko.spatial import pose_transform
from sko.systems.builder import SystemBuilder
from sko.systems.rigid import RigidSystem

__all__ = ["symbolic_pendulum", "symbolic_pendulum_model"]


def _sympy():
    return require("sympy", "symbolic systems")


def symbolic_pendulum(n: int = 2) -> tuple[RigidSystem, dict]:
    """The symbolic ``n``-link pendulum and its symbols: ``{"m", "l", "c", "Ixx", "Iyy", "Izz"}``
    (tuples of positive symbols, one per link), ``"g"`` and the state ``"q"``, ``"v"`` (object
    arrays of real symbols)."""
    sympy = _sympy()
    if n < 1:
        raise RigidSystemError(f"a pendulum needs at least one link, got n = {n}")
    names = {key: sympy.symbols(f"{key}1:{n + 1}", positive=True) for key in ("m", "l", "c", "Ixx", "Iyy", "Izz")}
    g = sympy.Symbol("g", positive=True)
    builder = SystemBuilder(gravity=[0, -g, 0])
    parent = None
    for i in range(n):
        placement = None if parent is None else pose_transform([0, -names["l"][i - 1], 0])
        parent = builder.add_body(f"link{i + 1}", parent, Revolute([0, 0, 1], name=f"joint{i + 1}"), placement,
                                  mass=names["m"][i], com=[0, -names["c"][i], 0],
                                  inertia_com=np.diag([names["Ixx"][i], names["Iyy"][i], names["Izz"][i]]))
    builder.add_frame("tip", parent, pose_transform([0, -names["l"][n - 1], 0]))
    state = {"q": np.array(sympy.symbols(f"q1:{n + 1}", real=True), dtype=object),
             "v": np.array(sympy.symbols(f"v1:{n + 1}", real=True), dtype=object)}
    return builder.build(), {**names, "g": g, **state}


def symbolic_pendulum_model(n: int = 2) -> tuple:
    """``(model, a, b)`` of the symbolic pendulum at the symbolic state ``(q, v)``, with exact
    entries (the joint models' floats ``0.0``, ``1.0`` made integers), so that the identities of
    :mod:`sko.verify` are proved as identities of rational functions of the entries."""
    sympy = _sympy()
    system, symbols = symbolic_pendulum(n)
    model, a, b = system.sko_model(symbols["q"], symbols["v"])
    exact = np.vectorize(lambda e: sympy.nsimplify(sympy.expand(e), rational=True), otypes=[object])
    return (SKOModel(model.tree, {k: exact(W) for k, W in model.phi.items()}, {k: exact(H) for k, H in model.H.items()},
                     {k: exact(M) for k, M in model.M.items()}), exact(a), exact(b))

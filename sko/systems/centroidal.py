"""Centroidal dynamics of any system: the momentum about the centre of mass (CENTROIDAL.md).

:func:`reference_centroidal` is the reference function of the compiled requests ``centroidal_terms``
and ``centroidal_momentum_matrix`` (its first ``nv`` columns; :mod:`sko.engine.centroidal`): from the bodies' node states, the rigid-motion maps ``Ψ(k)``
(CENTROIDAL.md, Eq. 1), the gather ``Y(k) = Ψ*(k) ℛ(k)`` giving ``A_0`` and the locked inertia
``I_0`` (Eq. 2, Eq. 3) about a base body's origin (:func:`point`, §3), then the shift to
the centre of mass (Eq. 4). It reads only the
contract's ``E``, ``Γ_o``, ``H`` and ``M``, so it holds for every body type (a flexible body's
node momentum carries its modes, a cluster's its members).

One state's result is packed as a ``6 × (nv + 8)`` array, columns :data:`Packed`: ``A_G``, the
centroidal composite inertia ``I_G``, the momentum ``h_G = A_G θ̇``, and ``(c, m, 0, 0)``.
Momenta are ``[k_G; l_G]`` (angular first, RIGID.md), in world axes at the centre of mass;
Pinocchio's ``ccrba`` is ``[l_G; k_G]``. :func:`unpacked` gives the :class:`Centroidal` tuple;
:func:`unpacked_of`, :func:`momentum_of` and :func:`inertia_of`
present a system's packed results (the views of :data:`sko.systems.catalogue.VIEWS`).

:func:`momentum_matrix_rate_by_complex_step` is the rate's reference for any body type:
``Ȧ_G = Im A_G(q + i ε q̇) / ε`` (CENTROIDAL.md §4), exact to rounding.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from sko.arrays import result_dtype
from sko.errors import RigidSystemError
from sko.graphs.errors import NonFiniteError
from sko.spatial import skew
from sko.systems.complex_carry import check_complex_carried

__all__ = ["Centroidal", "Packed", "packed_width", "point", "reference_centroidal", "unpacked", "unpacked_of",
           "momentum_of", "inertia_of",
           "momentum_matrix_rate_by_complex_step", "STEP"]

#: the complex step of :func:`momentum_matrix_rate_by_complex_step`
STEP = 1e-30


class Packed(NamedTuple):
    """The first column of each part of one state's packed result, for ``nv`` velocities."""

    A: int  #: ``A_G``, ``nv`` columns
    inertia: int  #: ``I_G``, 6 columns
    momentum: int  #: ``h_G``, 1 column
    center: int  #: ``(c_x, c_y, c_z, m, 0, 0)``, 1 column

    @classmethod
    def of(cls, nv: int) -> "Packed":
        return cls(0, nv, nv + 6, nv + 7)


def packed_width(nv: int) -> int:
    """Columns of one state's packed result."""
    return nv + 8


class Centroidal(NamedTuple):
    """The centroidal quantities at one state, or at a batch (a leading axis on each)."""

    momentum_matrix: np.ndarray  #: ``A_G`` (6 × nv), ``h_G = A_G θ̇``
    momentum: np.ndarray  #: ``h_G = [k_G; l_G]`` (6)
    inertia: np.ndarray  #: ``I_G`` (6 × 6), the centroidal composite inertia
    center_of_mass: np.ndarray  #: ``c`` (3, world coordinates)
    mass: np.ndarray  #: the total mass ``m``


def unpacked(packed: np.ndarray, nv: int) -> Centroidal:
    """The :class:`Centroidal` tuple of packed results ``(..., 6, nv + 8)``."""
    p = Packed.of(nv)
    return Centroidal(packed[..., :, p.A: p.A + nv], packed[..., :, p.momentum], packed[..., :, p.inertia: p.inertia + 6],
                      packed[..., :3, p.center], packed[..., 3, p.center])


def unpacked_of(system, packed: np.ndarray) -> Centroidal:
    """:func:`unpacked` for ``system``'s velocities."""
    return unpacked(packed, system.nv)


def momentum_of(system, packed: np.ndarray) -> np.ndarray:
    """``h_G`` of ``system``'s packed results."""
    return packed[..., :, Packed.of(system.nv).momentum]


def inertia_of(system, packed: np.ndarray) -> np.ndarray:
    """``I_G`` of ``system``'s packed results."""
    inertia = Packed.of(system.nv).inertia
    return packed[..., :, inertia: inertia + 6]


def point(E) -> np.ndarray:
    """``o``: the world position of the frame of a base body's ``E = ᵏX_0``, whose first six rows
    are ``[[R, 0], [−R o×, R]]`` (``o× = −Rᵀ B``), real parts; zero for entries that are not
    numbers (sympy: exact, any point serves) or a node of fewer than six rows."""
    E = np.asarray(E)
    if E.dtype == object or E.shape[0] < 6:
        return np.zeros(3)
    cross = -(E[:3, :3].T @ E[3:6, :3]).real
    return np.array([cross[2, 1], cross[0, 2], cross[1, 0]])


def _origin_body(system, states: dict, bodies: tuple):
    """The base body whose frame's origin is the point ``o`` (CENTROIDAL.md §3), as the kernels
    take it (:func:`sko.engine.centroidal.origin_row`): the first base body of six rows or more
    with a positive mass ``M₅₅``, else the first of six rows or more, else the first."""
    bases = [k for k in bodies if system.body(k).parent is None and np.shape(states[k].M)[0] >= 6]
    for k in bases:
        mass = np.asarray(states[k].M)[5, 5]
        if np.asarray(mass).dtype != object and np.real(mass) > 0:
            return k
    return bases[0] if bases else bodies[0]


def _base_map(E, o: np.ndarray) -> np.ndarray:
    """``Ψ = E ⁰X_o`` of a base body (CENTROIDAL.md §3), ``⁰X_o = [[1, 0], [o×, 1]]`` moving a
    motion given at ``o`` to the world origin. For ``E``'s first six rows ``[[R, 0], [−R p×, R]]``
    (``p`` the body frame's origin) the product is written by blocks,
    ``[[R, 0], [−R (p − o)×, R]]``, with ``p − o`` a difference of positions: formed as
    ``−R p× + R o×``, it cancels digits in proportion to ``|o|`` (a system far from the world
    origin). Rows past the sixth (a node of more) are multiplied out."""
    E = np.asarray(E)
    if not o.any():
        return E
    shift = np.eye(6)
    shift[3:, :3] = skew(o)
    Psi = E @ shift
    if E.shape[0] >= 6:
        R = E[:3, :3]
        cross = -(R.T @ E[3:6, :3])  # p× (complex for a complex state: Rᵀ R = I continues analytically)
        d = np.array([cross[2, 1], cross[0, 2], cross[1, 0]]) - o
        Psi[:3, :3], Psi[:3, 3:], Psi[3:6, 3:] = R, 0, R
        Psi[3:6, :3] = -R @ skew(d)
    return Psi


def _world_terms(system, states: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(A_0, I_0, o)``: ``A_0`` and ``I_0`` in world coordinates about the point ``o`` of
    :func:`point` of the base body of :func:`_origin_body` (CENTROIDAL.md, Eq. 1–3 and §3: a base
    body's ``Ψ = E ⁰X_o``, :func:`_base_map`)."""
    bodies = tuple(system.tree.scatter_order())  # every parent before its children
    o = point(states[_origin_body(system, states, bodies)].E)
    phi_star, Psi = {}, {}
    for k in bodies:  # Eq. 1, base to tips
        body, s = system.body(k), states[k]
        if body.parent is None:
            Psi[k] = _base_map(s.E, o)
        else:
            phi_star[k] = s.E @ states[body.parent].attachments[body.attach].Gamma  # φ*(℘(k), k)
            Psi[k] = phi_star[k] @ Psi[body.parent]
    dtype = result_dtype(*(Psi[k] for k in bodies), *(states[k].M for k in bodies), *(states[k].H for k in bodies))
    Y = {k: Psi[k].T @ states[k].M for k in bodies}
    A0, I0 = np.zeros((6, system.nv), dtype=dtype), np.zeros((6, 6), dtype=dtype)
    for k in reversed(bodies):  # Eq. 3, tips to base
        A0[:, system.dof_slices[k]] = Y[k] @ states[k].H.T
        parent = system.body(k).parent
        if parent is None:
            I0 = I0 + Y[k] @ Psi[k]
        else:
            Y[parent] = Y[parent] + Y[k] @ phi_star[k]
    return A0, I0, o


def reference_centroidal(system, q, v=None, external_forces=None) -> np.ndarray:
    """One state's packed result (module docstring) from the bodies' Python states, in their
    scalar type (complex for the complex step). ``external_forces`` does not enter the momentum
    and must be empty."""
    if external_forces:
        raise TypeError("the centroidal momentum takes no external forces")
    q, v = system.checked_vectors(q, v)
    if not system.bodies:
        raise RigidSystemError(f"{type(system).__name__}: the centre of mass and the centroidal momentum are undefined: "
                               "the system has no moving body")
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is named below
        out = _packed(system, q, v)
    if out.dtype.kind in "fc" and not np.isfinite(out).all():
        sizes = ", ".join(f"max |{k}| = {np.abs(np.asarray(x)).max(initial=0.0):.3g}" for k, x in (("q", q), ("v", v))
                          if x is not None)
        raise NonFiniteError(f"the centroidal terms overflow (NaN or infinity) at this state: the coordinates q or "
                             f"the velocities v are too large for floating point ({sizes})")
    return out


def _packed(system, q, v) -> np.ndarray:
    """:func:`reference_centroidal` of checked ``q``, ``v``, as computed (not judged finite)."""
    A0, I0, o = _world_terms(system, system.node_states(q))
    mass = I0[5, 5]
    try:
        massless = not (np.real(mass) > 0)
    except TypeError:  # a sympy expression whose sign sympy does not decide: not judged
        massless = False
    if massless:
        raise RigidSystemError(f"{type(system).__name__}: the total mass is {np.real(mass):g}, so there is no centre "
                               "of mass and no frame G at it, about which the centroidal terms are taken (CENTROIDAL.md "
                               "§2, §3)")  # its real part: not a complex step's 0j
    h = np.array([I0[2, 4], I0[0, 5], I0[1, 3]])  # I_0's upper right block is m c× = h×, c from o
    unit = 1.0
    if I0.dtype.kind in "fc":  # both scaled by a power of 2: numpy's complex division overflows for a subnormal m
        unit = 2.0 ** min(1000, -int(np.frexp(abs(np.real(mass)))[1]))
    c = (h * unit) / (mass * unit)
    X = np.eye(6, dtype=I0.dtype)
    X[:3, 3:] = -skew(c)  # X_G^*, Eq. 4
    A = X @ A0
    out = np.zeros((6, packed_width(system.nv)), dtype=result_dtype(A, v))
    p = Packed.of(system.nv)
    out[:, p.A: p.A + system.nv] = A
    out[:, p.inertia: p.inertia + 6] = X @ I0 @ X.T
    out[:, p.momentum] = A @ v
    out[:3, p.center], out[3, p.center] = (c + o if o.any() else c), mass
    return out


def momentum_matrix_rate_by_complex_step(system, q, v) -> np.ndarray:
    """``Ȧ_G`` (6 × nv, or ``(B, 6, nv)``) of any system: the derivative of
    ``system.centroidal_momentum_matrix`` along ``q̇ = system.qdot(q, v)`` by the complex step
    (CENTROIDAL.md §4), through whichever path answers that call; a body type that drops the
    imaginary part of a complex state is named first (:func:`~sko.systems.complex_carry.check_complex_carried`)."""
    q, v = np.asarray(q), np.asarray(v)
    if q.ndim == 1 or len(q):
        check_complex_carried(system, q if q.ndim == 1 else q[0])
    if q.ndim == 2:
        qd = np.stack([system.qdot(qs, vs) for qs, vs in zip(q, v)]) if len(q) else np.zeros(q.shape)
    else:
        qd = system.qdot(q, v)
    return system.centroidal_momentum_matrix(q + 1j * STEP * qd).imag / STEP

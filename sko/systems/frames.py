"""Named frames fixed on the bodies of a rigid system, and the system's centre of mass.

A :class:`Frame` is a name, the body it is fixed on (``None``: the world) and its placement
``ᶠX_body`` (Plücker transform from the body frame to the frame). Bound to its system, it
answers ``pose(q)`` (4 × 4 world pose), ``velocity(q, v)`` (spatial velocity ``[ω; v]`` in frame
coordinates) and ``jacobian(q)`` (``J = ℬ* φ* H*`` of SKO.md §12, with ``velocity = J v``).

The centre of mass ``c = Σ m_k c_k / m`` and its Jacobian ``J_c`` (``ċ = J_c v``, world
coordinates) come from one gather over the tree (O(N) plus the ``3 × nv`` output): a joint ``j``
with world motion subspace column ``[ω; v_o]`` (``v_o`` the velocity of the point at the world
origin) moves the centre of mass of its subtree, mass ``m_j^+`` at ``c_j^+``, by
``v_o + ω × c_j^+``, so its column of ``J_c`` is ``(m_j^+ / m)(v_o + ω × c_j^+)``.

Both are undefined when the system has no moving body or its bodies are all massless (``m = 0``):
then both backends raise :class:`~sko.errors.RigidSystemError` saying so, before any state is
evaluated (never a NaN, an overflow message or a ``ZeroDivisionError``).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field

import numpy as np

from sko.arrays import result_dtype
from sko.errors import RigidSystemError
from sko.graphs.errors import preview
from sko.engine.dispatch import engine

__all__ = ["Frame", "center_of_mass", "center_of_mass_jacobian", "reference_center_of_mass",
           "reference_center_of_mass_jacobian"]


@dataclass(frozen=True, eq=False)
class Frame:
    """A named frame fixed on a body (``body=None``: on the world) at ``placement = ᶠX_body``.

    Unpacks as the pair ``(body, placement)``, as the entries of ``RigidSystem.frames`` did.

    Examples
    --------
    >>> from sko.examples.rigid import planar_chain
    >>> chain = planar_chain(2)
    >>> tip = chain.frame("tip")
    >>> tip.body, tip.pose([0.0, 0.0])[:3, 3].round(12).tolist()
    ('link2', [0.0, 0.0, -2.0])
    >>> bool(np.allclose(tip.velocity([0.1, 0.2], [1.0, 0.5]), tip.jacobian([0.1, 0.2]) @ [1.0, 0.5]))
    True
    """

    name: Hashable
    body: Hashable | None
    placement: np.ndarray
    system: object = field(default=None, repr=False)

    def __iter__(self):
        return iter((self.body, self.placement))

    def pose(self, q) -> np.ndarray:
        """The 4 × 4 world pose ``[[R, p], [0, 1]]`` at ``q``."""
        return self.system.frame_pose(q, self.name)

    def jacobian(self, q) -> np.ndarray:
        """6 × nv ``J`` with ``[ω; v] = J v`` in frame coordinates (SKO.md §12)."""
        return self.system.jacobian(q, self.name)

    def velocity(self, q, v) -> np.ndarray:
        """The frame's spatial velocity ``[ω; v]`` in its own coordinates, ``ᶠX_k v_k``."""
        if self.body is None:
            q, v = self.system.checked_vectors(q, v)
            return np.zeros(6, dtype=result_dtype(q, v))
        return self.placement @ self.system.body_velocities(q, v)[self.body]


def _first_moment(I6) -> np.ndarray:
    """``m c`` of a spatial inertia about the body origin (body coordinates): ``I6[:3, 3:] = m c×``."""
    h = I6[:3, 3:]
    return np.array([h[2, 1], h[0, 2], h[1, 0]])


def _mass_gather(system, states) -> tuple[dict, dict]:
    """Subtree masses ``m_j^+`` and first moments ``m_j^+ c_j^+`` (world), children first (O(N))."""
    mass, moment = {}, {}
    for k in reversed(system.tree.scatter_order()):
        frame, I6 = states[k].attachments[None], system.body(k).inertia
        m = I6[5, 5]
        mass[k] = m + sum(mass[c] for c in system.tree.children(k))
        moment[k] = (m * frame.position + frame.rotation @ _first_moment(I6)
                     + sum(moment[c] for c in system.tree.children(k)))
    return mass, moment


def checked_total_mass(system):
    """The system's total mass ``m``, or :class:`~sko.errors.RigidSystemError` when the centre of
    mass is undefined: no moving body, or every body massless (``m = 0``)."""
    bodies = tuple(system.bodies)
    if not bodies:
        raise RigidSystemError("the centre of mass is undefined: the system has no moving body")
    total = sum(system.body(k).inertia[5, 5] for k in bodies)
    try:
        massless = bool(total == 0)
    except TypeError:  # a symbolic mass: not known to vanish
        massless = False
    if massless:
        raise RigidSystemError(f"the centre of mass is undefined: the system is massless (total mass 0: every body, "
                               f"{preview(bodies)}, has mass 0)")
    return total


def center_of_mass(system, q) -> np.ndarray:
    """The world centre of mass ``c = Σ m_k c_k / m`` at ``q`` (or a batch of states ``(B, nq)``)."""
    checked_total_mass(system)
    out = engine(system).kinematics(system.center_of_mass, q, (3,), lambda A: _arena_center(system, A, False)[0])
    return reference_center_of_mass(system, q) if out is NotImplemented else out


def center_of_mass_jacobian(system, q) -> np.ndarray:
    """3 × nv ``J_c`` with ``ċ = J_c v`` (world coordinates; module docstring), or ``(B, 3, nv)``
    for a batch of states."""
    checked_total_mass(system)
    out = engine(system).kinematics(system.center_of_mass_jacobian, q, (3, system.nv),
                                    lambda A: _arena_center(system, A, True)[1])
    return reference_center_of_mass_jacobian(system, q) if out is NotImplemented else out


def reference_center_of_mass(system, q) -> np.ndarray:
    """:func:`center_of_mass` of one state from the bodies' Python states (any scalar type)."""
    checked_total_mass(system)
    mass, moment = _mass_gather(system, system.node_states(q))
    bases = system.tree.base_bodies()
    return sum(moment[k] for k in bases) / sum(mass[k] for k in bases)


def reference_center_of_mass_jacobian(system, q) -> np.ndarray:
    """:func:`center_of_mass_jacobian` of one state from the bodies' Python states (any scalar type)."""
    checked_total_mass(system)
    states = system.node_states(q)
    mass, moment = _mass_gather(system, states)
    total = sum(mass[k] for k in system.tree.base_bodies())
    J = np.zeros((3, system.nv), dtype=result_dtype(total, *(np.asarray(s.attachments[None].rotation) for s in states.values()),
                                                    *(s.H for s in states.values())))
    for k in system.bodies:
        frame, S = states[k].attachments[None], states[k].H[:, :6].T  # S in body coordinates (armature: first 6)
        w, v = frame.rotation @ S[:3], frame.rotation @ S[3:]  # world axes, at the body origin
        c = moment[k] / mass[k] if mass[k] != 0 else frame.position
        J[:, system.dof_slices[k]] = mass[k] / total * (v + np.cross(w.T, c - frame.position).T)
    return J


def _arena_center(system, A: np.ndarray, jacobian: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """``(c, J_c)`` for every state of the filled arenas ``A`` (``J_c`` None unless
    ``jacobian``): the gather of :func:`_mass_gather` and the columns of
    :func:`reference_center_of_mass_jacobian`, each step on all states at once."""
    L = engine(system).layout
    N, B = len(L.bodies), A.shape[0]
    R = np.empty((B, N, 3, 3), dtype=A.dtype)
    p = np.empty((B, N, 3), dtype=A.dtype)
    mass = np.empty(N)
    moment = np.empty((B, N, 3), dtype=A.dtype)
    for i, k in enumerate(L.bodies):
        R[:, i], p[:, i] = L.frame_poses(A, i)
        I6 = system.body(k).inertia
        mass[i] = I6[5, 5]
        moment[:, i] = mass[i] * p[:, i] + R[:, i] @ _first_moment(I6)
    for i in L.order[::-1]:  # children before parents
        if L.parent[i] >= 0:
            mass[L.parent[i]] += mass[i]
            moment[:, L.parent[i]] += moment[:, i]
    bases = L.parent < 0
    total = mass[bases].sum()
    c = moment[:, bases].sum(axis=1) / total
    if not jacobian:
        return c, None
    J = np.zeros((B, 3, system.nv), dtype=A.dtype)
    for i in range(N):
        m, n, h, vo = int(L.node_dims[i]), int(L.dof_dims[i]), L.H_offsets[i], int(L.dof_offsets[i])
        S = A[:, h: h + n * m].reshape(B, n, m)[:, :, :6]  # rows of S* in body coordinates (armature: first 6)
        w = R[:, i] @ S[:, :, :3].transpose(0, 2, 1)  # world axes, at the body origin: B × 3 × n
        v = R[:, i] @ S[:, :, 3:].transpose(0, 2, 1)
        ci = moment[:, i] / mass[i] if mass[i] != 0 else p[:, i]
        J[:, :, vo: vo + n] = mass[i] / total * (v + np.cross(w, (ci - p[:, i])[:, :, None], axis=1))
    return c, J

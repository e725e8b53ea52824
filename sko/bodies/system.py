"""A multibody system of any mix of body types, and its SKO model at a state (SKO.md §14).

:class:`MultibodySystem` holds body types (no state). At a state ``(q, θ̇)`` it walks the tree
once from the base to the tips, asks every body for its :class:`~sko.bodies.contract.NodeState`
hanging from its parent's attachment, and assembles the SKO model

    φ(℘(k), k) = (E_k Γ_o)*,   H(k),   M(k),   and the stacked a, b,

with weights of whatever shape the body types give. Mass matrix, inverse and forward dynamics
then come from the generic recursions of :mod:`algorithms` (Algorithms 3.1, 4.2, 6.1), which
never know which body types they run on.

Coordinates: ``q`` stacks every body's position coordinates and ``θ̇`` (``qd``) its hinge
velocities, both in the tree's stacking order (the order the bodies were given);
``q̇ = system.qdot(q, qd)`` maps one to the other body by body.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

import algorithms as alg
from graphs import TreeDigraph
from graphs.errors import DimensionError, UnknownNodeError
from sko.model import SKOModel

from .contract import BodyError, BodyType, NodeState, root_attachment

__all__ = ["MultibodySystem"]


class MultibodySystem:
    """A tree of body types under gravity.

    Parameters
    ----------
    bodies : sequence of BodyType
        In stacking order; every parent must be one of them (or ``None``).
    gravity : 3- or 6-vector
        ``g`` in world coordinates, or the spatial ``a_g = [0; g]`` of RIGID.md.

    Raises
    ------
    BodyError
        Duplicate names, or a body hanging from an attachment its parent does not offer.
    NotATreeError, UnknownNodeError
        From the digraph layer (cycles, unknown parents).
    """

    def __init__(self, bodies: Sequence[BodyType], gravity=(0.0, 0.0, -9.81)):
        bodies = tuple(bodies)
        for b in bodies:
            if not isinstance(b, BodyType):
                raise BodyError(f"{b!r} is not a BodyType")
        names = [b.name for b in bodies]
        if len(set(names)) != len(names):
            raise BodyError(f"duplicate body names in {names!r}")
        unknown = [b.name for b in bodies if b.parent is not None and b.parent not in names]
        if unknown:
            raise UnknownNodeError(f"bodies {unknown!r} name parents that are not bodies of the system")
        self.tree = TreeDigraph.from_parents({b.name: b.parent for b in bodies})
        self.body = {b.name: b for b in bodies}
        for b in bodies:
            offered = (None,) if b.parent is None else self.body[b.parent].attachment_names
            if b.attach not in offered:
                raise BodyError(f"body {b.name!r} hangs from attachment {b.attach!r} of {b.parent!r}, "
                                f"which offers only {offered!r}")
        g = np.array(gravity, dtype=float)
        if g.shape == (6,) and not g[:3].any():
            g = g[3:]
        if g.shape != (3,) or not np.isfinite(g).all():
            raise DimensionError(f"gravity must be a finite 3-vector g or 6-vector [0; g], got {gravity!r}")
        self.gravity = g
        self.q_slices, self.dof_slices = {}, {}
        qo = vo = 0
        for k in self.tree.bodies:
            b = self.body[k]
            self.q_slices[k], self.dof_slices[k] = slice(qo, qo + b.q_size), slice(vo, vo + b.dof_size)
            qo, vo = qo + b.q_size, vo + b.dof_size
        self.q_size, self.dof_size = qo, vo

    @property
    def bodies(self) -> tuple:
        return self.tree.bodies

    def __repr__(self) -> str:
        kinds = sorted({type(b).__name__ for b in self.body.values()})
        return f"MultibodySystem({len(self.bodies)} bodies of types {kinds}, q: {self.q_size}, dofs: {self.dof_size})"

    # ------------------------------------------------------------------ the state
    def _vectors(self, q, qd):
        q = np.asarray(q)
        qd = np.zeros(self.dof_size, dtype=q.dtype) if qd is None else np.asarray(qd)
        if q.shape != (self.q_size,):
            raise DimensionError(f"q has shape {q.shape}, expected ({self.q_size},)")
        if qd.shape != (self.dof_size,):
            raise DimensionError(f"qd has shape {qd.shape}, expected ({self.dof_size},)")
        return q, qd

    def node_states(self, q, qd=None) -> dict:
        """``{k: NodeState}`` at ``(q, θ̇)``, computed base to tips (O(N))."""
        q, qd = self._vectors(q, qd)
        root = root_attachment(self.gravity)
        states: dict[Hashable, NodeState] = {}
        for k in self.tree.scatter_order():
            b = self.body[k]
            inboard = root if b.parent is None else states[b.parent].attachments[b.attach]
            s = b.at_state(q[self.q_slices[k]], qd[self.dof_slices[k]], inboard, self.gravity)
            _check_state(b, s, inboard)
            states[k] = s
        return states

    def sko_model(self, q, qd=None) -> tuple[SKOModel, np.ndarray, np.ndarray]:
        """The SKO model at ``(q, θ̇)`` and the stacked ``a``, ``b`` (SKO.md §3, §14)."""
        states = self.node_states(q, qd)
        return self._assemble(states)

    def _assemble(self, states: dict):
        phi = {}
        for k in self.bodies:
            b = self.body[k]
            if b.parent is not None:
                phi[k] = (states[k].E @ states[b.parent].attachments[b.attach].Gamma).T
        model = SKOModel(self.tree, phi=phi, H={k: s.H for k, s in states.items()},
                         M={k: s.M for k, s in states.items()})
        a = np.concatenate([states[k].a for k in self.bodies])
        b = np.concatenate([states[k].b for k in self.bodies])
        return model, a, b

    # ------------------------------------------------------------------ dynamics
    def mass_matrix(self, q) -> np.ndarray:
        """``ℳ(q) = H φ M φ* H*`` by Algorithm 4.2."""
        model, _, _ = self.sko_model(q)
        return alg.mass_matrix(model)

    def bias(self, q, qd) -> np.ndarray:
        """``𝒞(q, θ̇) = H φ (M φ* a + b)``: inverse dynamics at ``θ̈ = 0`` (Eq. 3)."""
        return self.inverse_dynamics(q, qd, None)

    def inverse_dynamics(self, q, qd, qdd) -> np.ndarray:
        """``T = ℳ θ̈ + 𝒞`` by Algorithm 3.1 (plus the bodies' hinge forces)."""
        model, a, b = self.sko_model(q, qd)
        return alg.inverse_dynamics(model, qdd, qd, a, b) + self.hinge_forces(q, qd)

    def forward_dynamics(self, q, qd, tau=None) -> np.ndarray:
        """``θ̈ = ℳ^{-1} (T − 𝒞)`` by the articulated-body recursions (Algorithm 6.1)."""
        model, a, b = self.sko_model(q, qd)
        return alg.forward_dynamics(model, model.dof_vector(tau, "tau") - self.hinge_forces(q, qd), a, b)

    def hinge_forces(self, q, qd) -> np.ndarray:
        """Stacked internal hinge forces of the bodies (joint springs, dampers; zero if none)."""
        q, qd = self._vectors(q, qd)
        out = np.zeros(self.dof_size, dtype=np.result_type(q, qd, float))
        for k in self.bodies:
            f = self.body[k].hinge_force(q[self.q_slices[k]], qd[self.dof_slices[k]])
            if f is not None:
                out[self.dof_slices[k]] += f
        return out

    def energy(self, q, qd) -> float:
        """``½ Σ_k 𝒱*(k) M(k) 𝒱(k) + Σ_k potential(k)`` (= ``½ θ̇* ℳ θ̇ + potential``); a float
        for numeric states, an expression for symbolic ones."""
        states = self.node_states(q, qd)
        total = sum(0.5 * s.V @ s.M @ s.V + s.potential for s in states.values())
        try:
            return float(np.real(total))
        except TypeError:
            return total

    # ------------------------------------------------------------------ coordinates
    def qdot(self, q, qd) -> np.ndarray:
        """``q̇`` from ``(q, θ̇)``, body by body."""
        q, qd = self._vectors(q, qd)
        return np.concatenate([np.asarray(self.body[k].qdot(q[self.q_slices[k]], qd[self.dof_slices[k]]))
                               for k in self.bodies]) if self.bodies else np.zeros(0)

    def normalize(self, q) -> np.ndarray:
        """``q`` projected back onto the configuration manifold, body by body."""
        q, _ = self._vectors(q, None)
        return np.concatenate([self.body[k].normalize(q[self.q_slices[k]]) for k in self.bodies])

    def neutral(self) -> np.ndarray:
        return np.concatenate([self.body[k].neutral() for k in self.bodies])

    def random_state(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """A random configuration and hinge velocity (for tests and examples)."""
        q = np.concatenate([self.body[k].random_configuration(rng) for k in self.bodies])
        return q, rng.uniform(-1.0, 1.0, self.dof_size)


def _check_state(body: BodyType, s: NodeState, inboard) -> None:
    """The shapes a body type returned, named in the error (a researcher's new type may err)."""
    m, n = body.node_dim, body.dof_size
    expected = {"E": (m, 6), "H": (n, m), "M": (m, m), "a": (m,), "b": (m,), "V": (m,)}
    for field_, shape in expected.items():
        got = np.shape(getattr(s, field_))
        if got != shape:
            raise DimensionError(f"body {body.name!r} ({type(body).__name__}) returned {field_} of shape {got}, expected {shape}")
    missing = [name for name in body.attachment_names if name not in s.attachments]
    if missing:
        raise BodyError(f"body {body.name!r} ({type(body).__name__}) offers attachments {missing!r} but returned none for them")
    for name, att in s.attachments.items():
        for field_, shape in (("Gamma", (6, m)), ("gamma", (6,)), ("rotation", (3, 3)), ("position", (3,)), ("velocity", (6,))):
            if np.shape(getattr(att, field_)) != shape:
                raise DimensionError(f"body {body.name!r} offers attachment {name!r} with {field_} of shape "
                                     f"{np.shape(getattr(att, field_))}, expected {shape}")

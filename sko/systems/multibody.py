"""A multibody system of any mix of body types, and its SKO model at a state (SKO.md §14).

:class:`MultibodySystem` holds body types (no state). At a state ``(q, θ̇)`` it walks the tree
once from the base to the tips, asks every body for its :class:`~sko.bodies.contract.NodeState`
hanging from its parent's attachment, and assembles the SKO model

    φ(℘(k), k) = (E_k Γ_o)*,   H(k),   M(k),   and the stacked a, b,

with weights of whatever shape the body types give. Mass matrix, inverse and forward dynamics
then come from the generic recursions of :mod:`algorithms` (Algorithms 3.1, 4.2, 6.1), which
never know which body types they run on.

External forces ``f^x_k = [n; f]`` (world coordinates, about the world origin) act on a body's
own frame ``F_k`` (its attachment ``None``, pose ``(R, p)``): in ``F_k`` coordinates they are
``ᵏX_0^* f^x_k = [Rᵀ (n − p × f); Rᵀ f]``, and since ``v_k = Γ_k 𝒱(k)`` their power is that of
``Γ_kᵀ ᵏX_0^* f^x_k`` against ``𝒱(k)``, so ``b(k) −= Γ_kᵀ ᵏX_0^* f^x_k`` (RIGID.md's
``b(k)`` for a rigid body, where ``Γ_k = I``).

Checks: ``q`` and ``θ̇`` are checked once per call for shape and finiteness. The SKO model is
built with ``SKOModel(validate=False)`` (shapes only) when every body is
:attr:`~sko.bodies.contract.BodyType.valid_by_construction`; otherwise every state is fully
checked, and the shapes a body type returns are checked for the bodies that do not vouch for them.

Coordinates: ``q`` stacks every body's position coordinates and ``θ̇`` (``qd``) its hinge
velocities, both in the tree's stacking order (the order the bodies were given);
``q̇ = system.qdot(q, qd)`` maps one to the other body by body.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

import sko.algorithms as alg
from sko.graphs import TreeDigraph
from sko.graphs.errors import DimensionError, UnknownNodeError, preview
from sko.arrays import checked_array
from sko.model import SKOModel
from sko.spatial import cross

from sko.bodies.contract import BodyError, BodyType, NodeState, root_attachment
from sko.systems.engine import engine

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
        self._root = root_attachment(g)
        self._order = tuple((k, self.body[k], self.q_slices[k], self.dof_slices[k]) for k in self.tree.scatter_order())
        self._unchecked = frozenset(k for k, b in self.body.items() if not b.valid_by_construction)

    @property
    def bodies(self) -> tuple:
        return self.tree.bodies

    def __repr__(self) -> str:
        kinds = sorted({type(b).__name__ for b in self.body.values()})
        return f"MultibodySystem({len(self.bodies)} bodies of types {kinds}, q: {self.q_size}, dofs: {self.dof_size})"

    # ------------------------------------------------------------------ the state
    def checked_vectors(self, q, qd=None) -> tuple[np.ndarray, np.ndarray]:
        """Checked read-only ``(q, θ̇)``: 1-D, finite, of lengths ``nq = q_size`` and
        ``nv = dof_size`` (``None`` for ``θ̇`` gives zeros)."""
        q = self._stacked(q, "q", self.q_size, "nq")
        if qd is None:
            return q, np.zeros(self.dof_size, dtype=q.dtype)
        return q, self._stacked(qd, "qd", self.dof_size, "nv")

    @staticmethod
    def _stacked(x, name: str, size: int, symbol: str) -> np.ndarray:
        x = checked_array(x, 1, name)
        if x.shape != (size,):
            raise DimensionError(f"{name} has length {x.shape[0]}, expected {symbol} = {size}")
        return x

    def external_forces(self, forces: Mapping | None) -> dict:
        """Checked external forces ``{body: f^x_k}`` (6-vectors ``[n; f]``, world coordinates
        about the world origin); ``None`` for none.

        Raises
        ------
        DimensionError
            Not a mapping, or a force that is not a 6-vector.
        UnknownNodeError
            A key that is not a body.
        BodyError
            A body that offers no frame of its own (attachment ``None``) for the force to act on.
        NonFiniteError
            A force with NaN or infinite entries.
        """
        if forces is None:
            return {}
        if not isinstance(forces, Mapping):
            raise DimensionError(f"external_forces must be a mapping body -> 6-vector, got {type(forces).__name__}")
        out = {}
        for k, f in forces.items():
            if k not in self.body:
                raise UnknownNodeError(f"external force on {k!r}, which is not a body (bodies: {preview(self.bodies)})")
            if None not in self.body[k].attachment_names:
                raise BodyError(f"body {k!r} ({type(self.body[k]).__name__}) offers no frame of its own for an external force")
            f = checked_array(f, 1, "external force", k)
            if f.shape != (6,):
                raise DimensionError(f"external force of body {k!r} must have shape (6,), got {f.shape}")
            out[k] = f
        return out

    def node_states(self, q, qd=None) -> dict:
        """``{k: NodeState}`` at ``(q, θ̇)``, computed base to tips (O(N))."""
        return self._node_states(*self.checked_vectors(q, qd))

    def _node_states(self, q: np.ndarray, qd: np.ndarray) -> dict:
        root, states = self._root, {}
        for k, b, qs, vs in self._order:
            inboard = root if b.parent is None else states[b.parent].attachments[b.attach]
            s = b.at_state(q[qs], qd[vs], inboard, self.gravity)
            if k in self._unchecked:
                _check_state(b, s)
            states[k] = s
        return states

    def sko_model(self, q, qd=None, external_forces: Mapping | None = None) -> tuple[SKOModel, np.ndarray, np.ndarray]:
        """The SKO model at ``(q, θ̇)`` and the stacked ``a``, ``b`` (SKO.md §3, §14), with
        ``b(k) −= Γ_kᵀ ᵏX_0^* f^x_k`` for the ``external_forces`` (module docstring)."""
        forces = self.external_forces(external_forces)
        return self._assemble(self.node_states(q, qd), forces)

    def _assemble(self, states: dict, forces: dict):
        phi, b = {}, []
        for k in self.bodies:
            body, s = self.body[k], states[k]
            if body.parent is not None:
                phi[k] = (s.E @ states[body.parent].attachments[body.attach].Gamma).T
            b.append(s.b if k not in forces else s.b - _frame_force(s.attachments[None], forces[k]))
        model = SKOModel(self.tree, phi=phi, H={k: s.H for k, s in states.items()},
                         M={k: s.M for k, s in states.items()}, validate=bool(self._unchecked))
        a = np.concatenate([states[k].a for k in self.bodies])
        return model, a, np.concatenate(b)

    # ------------------------------------------------------------------ dynamics
    def mass_matrix(self, q) -> np.ndarray:
        """``ℳ(q) = H φ M φ* H*`` by Algorithm 4.2."""
        if (fast := engine(self).mass_matrix(q)) is not NotImplemented:
            return fast
        model, _, _ = self.sko_model(q)
        return alg.mass_matrix(model)

    def bias(self, q, qd, external_forces: Mapping | None = None) -> np.ndarray:
        """``𝒞(q, θ̇) = H φ (M φ* a + b)``: inverse dynamics at ``θ̈ = 0`` (Eq. 3)."""
        return self.inverse_dynamics(q, qd, None, external_forces)

    def inverse_dynamics(self, q, qd, qdd, external_forces: Mapping | None = None) -> np.ndarray:
        """``T = ℳ θ̈ + 𝒞`` by Algorithm 3.1 (plus the bodies' hinge forces)."""
        if (fast := engine(self).inverse_dynamics(q, qd, qdd, external_forces)) is not NotImplemented:
            return fast
        q, qd = self.checked_vectors(q, qd)
        model, a, b = self._assemble(self._node_states(q, qd), self.external_forces(external_forces))
        return alg.inverse_dynamics(model, qdd, None, a, b) + self._hinge_forces(q, qd)

    def forward_dynamics(self, q, qd, tau=None, external_forces: Mapping | None = None) -> np.ndarray:
        """``θ̈ = ℳ^{-1} (T − 𝒞)`` by the articulated-body recursions (Algorithm 6.1)."""
        if (fast := engine(self).forward_dynamics(q, qd, tau, external_forces)) is not NotImplemented:
            return fast
        q, qd = self.checked_vectors(q, qd)
        model, a, b = self._assemble(self._node_states(q, qd), self.external_forces(external_forces))
        return alg.forward_dynamics(model, model.dof_vector(tau, "tau") - self._hinge_forces(q, qd), a, b)

    def mass_matrix_inverse(self, q) -> np.ndarray:
        """``ℳ^{-1}(q)`` by the innovations factorization (SKO.md §10, Algorithm 5.2)."""
        if (fast := engine(self).mass_matrix_inverse(q)) is not NotImplemented:
            return fast
        model, _, _ = self.sko_model(q)
        return alg.mass_matrix_inverse(model)

    def hinge_forces(self, q, qd) -> np.ndarray:
        """Stacked internal hinge forces of the bodies (joint springs, dampers; zero if none)."""
        return self._hinge_forces(*self.checked_vectors(q, qd))

    def _hinge_forces(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        out = np.zeros(self.dof_size, dtype=np.result_type(q, qd, float))
        for k in self.bodies:
            f = self.body[k].hinge_force(q[self.q_slices[k]], qd[self.dof_slices[k]])
            if f is not None:
                out[self.dof_slices[k]] += f
        return out

    # ------------------------------------------------------------------ energy
    def kinetic_energy(self, q, qd):
        """``½ Σ_k 𝒱*(k) M(k) 𝒱(k)`` (= ``½ θ̇* ℳ θ̇``), in the states' scalar type (float,
        complex for complex-step, an expression for symbolic states)."""
        if (fast := engine(self).energies(self.kinetic_energy, q, qd, potential=False)) is not NotImplemented:
            return fast
        return sum(0.5 * s.V @ s.M @ s.V for s in self.node_states(q, qd).values())

    def potential_energy(self, q):
        """``Σ_k potential(k)`` (gravity and the bodies' own potentials), in the states' scalar type."""
        if (fast := engine(self).energies(self.potential_energy, q, kinetic=False)) is not NotImplemented:
            return fast
        return sum(s.potential for s in self.node_states(q).values())

    def energy(self, q, qd):
        """Kinetic plus potential energy, in the states' scalar type: a float for real states, the
        complex number itself for complex-step states, an expression for symbolic ones."""
        if (fast := engine(self).energies(self.energy, q, qd)) is not NotImplemented:
            return fast
        return sum(0.5 * s.V @ s.M @ s.V + s.potential for s in self.node_states(q, qd).values())

    # ------------------------------------------------------------------ coordinates
    def qdot(self, q, qd) -> np.ndarray:
        """``q̇`` from ``(q, θ̇)``, body by body."""
        q, qd = self.checked_vectors(q, qd)
        return np.concatenate([np.asarray(self.body[k].qdot(q[self.q_slices[k]], qd[self.dof_slices[k]]))
                               for k in self.bodies]) if self.bodies else np.zeros(0)

    def normalize(self, q) -> np.ndarray:
        """``q`` projected back onto the configuration manifold, body by body."""
        q, _ = self.checked_vectors(q, None)
        return np.concatenate([self.body[k].normalize(q[self.q_slices[k]]) for k in self.bodies])

    def neutral(self) -> np.ndarray:
        return np.concatenate([self.body[k].neutral() for k in self.bodies])

    def random_state(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """A random configuration and hinge velocity (for tests and examples)."""
        q = np.concatenate([self.body[k].random_configuration(rng) for k in self.bodies])
        return q, rng.uniform(-1.0, 1.0, self.dof_size)


def _frame_force(frame, f) -> np.ndarray:
    """``Γᵀ ᵏX_0^* f^x``: a world force ``[n; f]`` about the world origin, acting on the frame
    ``(R, p)`` of attachment ``frame``, as a generalised force on the node (module docstring)."""
    R, p = frame.rotation, frame.position
    local = np.concatenate([(f[:3] - cross(p, f[3:])) @ R, f[3:] @ R])
    return local @ frame.Gamma


def _check_state(body: BodyType, s: NodeState) -> None:
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

"""A link driven through a gear by a motor rotor mounted on its parent (BODIES.md, end).

The rotor spins about a unit axis ``u`` fixed in the parent's attachment frame ``F_o`` (through
its centre ``c``) at ``ratio`` times the (single) joint rate. It is axisymmetric about ``u``:
rotational inertia ``I_r = J_t I + (J_a − J_t) u uᵀ`` about its centre, constant in ``F_o``
whatever its spin angle. Its mass moves with ``F_o`` and so belongs to the parent body (see
:meth:`GearedRotorLink.parent_point_mass`); this node carries the link and the rotor's rotation.

* Node velocity ``𝒱(k) = [v_k; w_k]`` (``m_k = 9``), ``w_k = ω_o + ratio · u θ̇`` the rotor's
  angular velocity in ``F_o`` coordinates.
* ``E_k = [[ᵏX_o], [I₃, 0]]`` (9 × 6), so ``φ*(℘(k), k) = E_k Γ_o`` is 9 × 6 below a rigid
  parent and 9 × 9 below another rotor link (whose ``Γ = [I₆, 0]``).
* ``H(k) = [S*, ratio · uᵀ]`` (1 × 9), ``M(k) = diag(I_k, I_r)``.
* ``a(k) = [ᵏX_o γ_o + c_J + v_k × S θ̇; γ_o(ω)]``, ``b(k) = [v_k ×* I_k v_k; ω_o × I_r w_k]``.
"""

from __future__ import annotations

import copy
from collections.abc import Hashable

import numpy as np

from sko.bodies.joints import Joint
from sko.arrays import checked_array, checked_scalar, unit_vector
from sko.spatial import check_inertia_size, inertia_parameters

from sko.bodies.contract import Attachment, BodyError, BodyType, NodeState
from sko.bodies.hinge import JointCoordinates, checked_placement, checked_spatial_inertia, hinge_state
from sko.bodies.rigid_parameters import RIGID_PARAMETER_NAMES, rigid_inertia, rigid_parameters

__all__ = ["GearedRotorLink"]


class GearedRotorLink(JointCoordinates, BodyType):
    """A rigid link with a one-dof joint, driven by a geared rotor on its parent.

    Parameters
    ----------
    name, parent, attach : see :class:`~sko.bodies.contract.BodyType`
    joint : sko.bodies.joints.Joint with ``nv = nq = 1``
    inertia : (6, 6) array
        The link's spatial inertia about its frame.
    rotor_axis : 3-vector
        Spin axis ``u`` in the attachment frame ``F_o`` (normalised).
    gear_ratio : float
        Rotor rate over joint rate (nonzero).
    axial_inertia, transverse_inertia : float
        ``J_a`` and ``J_t`` (positive) of the rotor about its centre.
    rotor_mass : float, optional
        The rotor's mass (only for :meth:`parent_point_mass`).
    rotor_centre : 3-vector, optional
        The rotor's centre in ``F_o``.
    placement : (6, 6) array, optional
        ``X_T`` from ``F_o`` to the joint's predecessor frame.
    """

    node_dim = 9

    def __init__(self, name: Hashable, parent: Hashable | None, joint: Joint, inertia, rotor_axis,
                 gear_ratio: float, axial_inertia: float, transverse_inertia: float, rotor_mass: float = 0.0,
                 rotor_centre=(0.0, 0.0, 0.0), placement=None, attach: Hashable | None = None):
        super().__init__(name, parent, attach)
        if not isinstance(joint, Joint) or joint.nq != 1 or joint.nv != 1:
            raise BodyError(f"geared rotor link {name!r} needs a one-dof sko.bodies.joints.Joint, got {joint!r}")
        self.joint = joint
        self.inertia = checked_spatial_inertia(inertia, name)
        self.rotor_axis = unit_vector(rotor_axis, f"rotor axis of body {name!r}", error=BodyError)
        self.gear_ratio = checked_scalar(gear_ratio, f"gear ratio of body {name!r}", nonzero=True, error=BodyError)
        J_a = checked_scalar(axial_inertia, f"rotor inertias of body {name!r}: axial_inertia (J_a)", positive=True, error=BodyError)
        J_t = checked_scalar(transverse_inertia, f"rotor inertias of body {name!r}: transverse_inertia (J_t)", positive=True,
                             error=BodyError)
        self.rotor_mass = checked_scalar(rotor_mass, f"rotor mass of body {name!r}", nonnegative=True, error=BodyError)
        self.rotor_inertia = J_t * np.eye(3) + (J_a - J_t) * np.outer(self.rotor_axis, self.rotor_axis)
        with np.errstate(over="ignore"):  # the rule of the spatial inertia, also for the inertia the joint sees
            reflected = np.array([self.gear_ratio * self.gear_ratio * J_a])
        check_inertia_size(self.rotor_inertia, f"rotor inertia of body {name!r}", BodyError)
        check_inertia_size(reflected, f"rotor inertia of body {name!r} through its gear (N² J_a)", BodyError)
        centre = checked_array(rotor_centre, 1, "rotor centre", name)
        if centre.shape != (3,) or centre.dtype.kind != "f":
            raise BodyError(f"rotor centre of body {name!r} must be a real 3-vector, got {rotor_centre!r}")
        self.rotor_centre = np.array(centre)
        self.placement = checked_placement(placement, name)
        self.q_size = self.dof_size = 1
        self.valid_by_construction = not joint.user_defined  # M constant SPD, H ∋ N u ≠ 0
        self._mass, self._com = self.inertia[5, 5], np.zeros(3)
        if self._mass != 0:
            _, self._com, _ = inertia_parameters(self.inertia)

    def parent_point_mass(self) -> tuple[float, np.ndarray]:
        """``(rotor mass, rotor centre in F_o)``: the point mass the parent body must include."""
        return self.rotor_mass, self.rotor_centre

    def at_state(self, q, qd, inboard: Attachment, gravity) -> NodeState:
        h = hinge_state(self.joint, self.placement, q, qd, inboard)
        dtype = h.v.dtype
        omega_o = inboard.velocity[:3]
        w = omega_o + self.gear_ratio * self.rotor_axis * qd[0]
        E = np.zeros((9, 6), dtype=h.X.dtype)
        E[:6], E[6:, :3] = h.X, np.eye(3)
        H = np.concatenate([h.S[:, 0], self.gear_ratio * self.rotor_axis])[None, :]
        M = np.zeros((9, 9), dtype=np.result_type(self.inertia, self.rotor_inertia))
        M[:6, :6], M[6:, 6:] = self.inertia, self.rotor_inertia
        a = np.concatenate([h.a, inboard.gamma[:3]])
        b = np.concatenate([-((self.inertia @ h.v) @ h.v_cross), np.cross(omega_o, self.rotor_inertia @ w)])
        Gamma = np.zeros((6, 9), dtype=dtype)
        Gamma[:, :6] = np.eye(6)
        frame = Attachment(Gamma, np.zeros(6, dtype=dtype), h.rotation, h.position, h.v)
        com = h.position + h.rotation @ self._com
        return NodeState(E=E, H=H, M=M, a=a, b=b, V=np.concatenate([h.v, w]), attachments={None: frame},
                         potential=-self._mass * (gravity @ com))

    # ------------------------------------------------------------------ inertial parameters
    def inertial_parameters(self) -> np.ndarray:
        """The link's ten rigid parameters, then the rotor's ``J_a`` and ``J_t`` (``M(k)`` and
        ``b(k)`` are linear in them; the node regressor by complex step)."""
        u = self.rotor_axis
        J_a = u @ self.rotor_inertia @ u
        return np.concatenate([rigid_parameters(self.inertia), [J_a, (np.trace(self.rotor_inertia) - J_a) / 2]])

    def inertial_parameter_names(self) -> tuple:
        return (*RIGID_PARAMETER_NAMES, "J_axial", "J_transverse")

    def with_inertial_parameters(self, parameters, check: bool = True) -> "GearedRotorLink":
        from sko.bodies.rigid import checked_parameters

        p = checked_parameters(self, parameters, 12, check)
        inertia = rigid_inertia(p[:10])
        if check:
            inertia = checked_spatial_inertia(inertia, self.name)
            if not (p[10] > 0 and p[11] > 0):
                raise BodyError(f"rotor inertias of body {self.name!r} must be positive, got {p[10:].tolist()}")
        new = copy.copy(self)
        u = self.rotor_axis
        new.inertia = inertia
        new.rotor_inertia = p[11] * np.eye(3) + (p[10] - p[11]) * np.outer(u, u)
        new._mass, new._com = p[0], (p[1:4] / p[0] if p[0] != 0 else np.zeros(3))
        return new

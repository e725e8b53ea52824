"""Newton–Euler inverse dynamics on any SKO model (SKO.md §5, Algorithm 3.1).

Scatter (base → tips), then gather (tips → base)::

    𝒱(k) = φ*(℘(k), k) 𝒱(℘(k)) + H*(k) θ̇(k)
    α(k) = φ*(℘(k), k) α(℘(k)) + H*(k) θ̈(k) + a(k)
    f(k) = Σ_{j ∈ C(k)} φ(k, j) f(j) + M(k) α(k) + b(k)
    T(k) = H(k) f(k)

that is, Eq. 1: ``𝒱 = φ* H* θ̇``, ``α = φ* (H* θ̈ + a)``, ``f = φ (M α + b)``, ``T = H f``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from sko.model import SKOModel

from . import dispatch
from .blocks import H_apply, H_star_apply, block_diagonal_apply
from .spo import phi_apply, phi_star_apply

__all__ = ["NewtonEuler", "newton_euler", "inverse_dynamics"]


class NewtonEuler(NamedTuple):
    """Stacked results of Algorithm 3.1."""

    V: np.ndarray  #: node velocities 𝒱
    alpha: np.ndarray  #: node accelerations α
    f: np.ndarray  #: inter-node forces f
    T: np.ndarray  #: hinge forces T


def newton_euler(model: SKOModel, qdd, qd=None, a=None, b=None) -> NewtonEuler:
    """Algorithm 3.1: ``𝒱``, ``α``, ``f`` and ``T`` from ``θ̈`` (and ``θ̇``, ``a``, ``b``).

    ``qd``, ``a`` and ``b`` default to zero. ``a`` and ``b`` are stacked node vectors
    (Coriolis accelerations and gyroscopic forces, supplied by the body types): every velocity
    term of ``α``, ``f`` and ``T`` enters through them. ``qd`` only determines the returned
    ``𝒱 = φ* H* θ̇``; it does not change ``α``, ``f`` or ``T``.
    """
    qd = model.dof_vector(qd, "qd")
    qdd, a, b = _checked(model, qdd, a, b)
    return NewtonEuler(*dispatch.run("newton_euler", _dtypes(model, qd, qdd, a, b), _newton_euler, model, qdd, qd, a, b))


def _newton_euler(model: SKOModel, qdd: np.ndarray, qd: np.ndarray, a, b) -> NewtonEuler:
    V = phi_star_apply(model, H_star_apply(model, qd))
    alpha, f, T = _accelerations_and_forces(model, qdd, a, b)
    return NewtonEuler(V=V, alpha=alpha, f=f, T=T)


def inverse_dynamics(model: SKOModel, qdd, qd=None, a=None, b=None) -> np.ndarray:
    """``T = ℳ θ̈ + 𝒞`` by Algorithm 3.1 (Eq. 2, 3); see :func:`newton_euler`.

    The velocity terms of ``𝒞`` enter through ``a`` and ``b`` (supplied by the body types);
    ``qd`` only determines ``𝒱``, which is not needed for ``T``, so that pass is skipped here
    (``qd`` is still checked, for a uniform signature with :func:`newton_euler`).
    """
    if qd is not None:
        model.dof_vector(qd, "qd")
    qdd, a, b = _checked(model, qdd, a, b)
    return dispatch.run("inverse_dynamics", _dtypes(model, qdd, a, b), _inverse_dynamics, model, qdd, a, b)


def _inverse_dynamics(model: SKOModel, qdd: np.ndarray, a, b) -> np.ndarray:
    return _accelerations_and_forces(model, qdd, a, b)[2]


def _dtypes(model: SKOModel, *arrays) -> tuple:
    """The scalar types of the model and of the arrays given."""
    return (model.dtype, *(x.dtype for x in arrays if x is not None))


def _checked(model: SKOModel, qdd, a, b) -> tuple:
    """``θ̈``, ``a`` and ``b`` checked; ``a``, ``b`` stay ``None`` when not given."""
    qdd = model.dof_vector(qdd, "qdd")
    a = None if a is None else model.node_vector(a, "a")
    b = None if b is None else model.node_vector(b, "b")
    return qdd, a, b


def _accelerations_and_forces(model: SKOModel, qdd: np.ndarray, a, b) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``α = φ* (H* θ̈ + a)``, ``f = φ (M α + b)`` and ``T = H f`` (Eq. 1) on checked input."""
    a = model.node_vector(a, "a")
    b = model.node_vector(b, "b")
    alpha = phi_star_apply(model, H_star_apply(model, qdd) + a)
    f = phi_apply(model, block_diagonal_apply(model.M_by_index, model.node_slices, alpha, model.dtype) + b)
    return alpha, f, H_apply(model, f)

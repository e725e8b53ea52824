"""Comparison helpers whose tolerances scale with the data, and the random states and requests the
compiled-against-reference tests share."""

from __future__ import annotations

import numpy as np

EPS = np.finfo(float).eps


def joint_axis(rng) -> np.ndarray:
    """A joint axis from three normal draws, as a random direction takes them (so a seed draws the
    same system otherwise): where the first is below 0.5 in size (38 % of draws), the coordinate
    axis of the largest, with its sign (the rigid kinematics' plane rotation,
    :func:`~sko.engine.bodies.rigid.coordinate_axis_transform`); else the draws (Rodrigues' form)."""
    a = rng.normal(size=3)
    if abs(a[0]) < 0.5:
        k = int(np.argmax(np.abs(a)))
        return np.sign(a[k]) * np.eye(3)[k]
    return a


def assert_close(actual, expected, rtol: float = 1e-9, scale: float | None = None) -> None:
    """``max |actual − expected| <= rtol · scale``, ``scale`` defaulting to the largest entry of
    either side (at least 1e-300), so the test is relative to the size of the data."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, f"shape {actual.shape} != {expected.shape}"
    if scale is None:
        scale = max(np.abs(actual).max(initial=0.0), np.abs(expected).max(initial=0.0), 1e-300)
    error = np.abs(actual - expected).max(initial=0.0)
    assert error <= rtol * scale, f"max error {error:.3e} > {rtol:.1e} x scale {scale:.3e}"


#: The requests a compiled system is compared on, each as ``call(system, q, v, x)``.
SYSTEM_CALLS = {
    "inverse_dynamics": lambda s, q, v, x: s.inverse_dynamics(q, v, x),
    "forward_dynamics": lambda s, q, v, x: s.forward_dynamics(q, v, x),
    "mass_matrix": lambda s, q, v, x: s.mass_matrix(q),
    "mass_matrix_inverse": lambda s, q, v, x: s.mass_matrix_inverse(q),
    "energy": lambda s, q, v, x: s.energy(q, v),
}


def random_states(system, count: int, complex_step: bool = False, seed: int = 0):
    """``(Q, V, X)``: ``count`` random configurations, velocities and third inputs of ``system``;
    with ``complex_step``, ``Q`` and ``V`` carry small imaginary parts (complex-step states)."""
    rng = np.random.default_rng(seed)
    Q = np.array([system.random_configuration(rng) for _ in range(count)])
    V, X = rng.normal(size=(2, count, system.nv))
    if complex_step:
        Q = Q + 1e-7j * rng.normal(size=Q.shape)
        V = V + 1e-7j * rng.normal(size=V.shape)
    return Q, V, X

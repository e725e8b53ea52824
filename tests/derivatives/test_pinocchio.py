"""The derivatives of every example-robot-data robot against Pinocchio's
``computeRNEADerivatives`` and ``computeABADerivatives``, fixed and floating base: tangent
columns compare one to one through the velocity permutation of :class:`sko.interop.PinocchioMap`
(a free flyer's ``[ω; v]`` against ``[v; ω]``)."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from sko.interop import PinocchioMap
from tests.rigid.test_pinocchio import ROBOTS_DIR, STUB, _cases, _load, pin

RTOL = 1e-9  #: relative, or the condition number of ℳ times 1e-15 where it is larger


def _relative_error(ours, theirs, floor: float) -> float:
    """Relative to the larger of ``theirs`` and ``floor`` (a blade's ∂τ/∂v is rounding: 1e-20)."""
    return np.abs(ours - theirs).max(initial=0.0) / max(np.abs(theirs).max(initial=0.0), floor)


@pytest.mark.parametrize("rel, floating", [c for c in _cases() if c.values[0] != STUB])
def test_derivatives_agree_with_pinocchio(rel, floating):
    system, model = _load(ROBOTS_DIR / rel, floating)
    if system.nv == 0:
        return
    cmap, data = PinocchioMap(system, model), model.createData()
    rng = np.random.default_rng(zlib.crc32(rel.encode()))
    q = system.random_configuration(rng)
    v, a, tau = rng.normal(size=(3, system.nv))
    qp, vp = cmap.q(q), cmap.v(v)
    dq, dv, M = system.inverse_dynamics_derivatives(q, v, a)
    for ours, stepped in zip((dq, dv), system.inverse_dynamics_derivatives(q, v, a, method="complex_step")):
        scale = max(np.abs(stepped).max(initial=0.0), np.abs(M).max() * max(1.0, np.abs(v).max()))  # ℳ's units
        assert np.abs(ours - stepped).max(initial=0.0) <= 1e-12 * scale
    theirs = pin.computeRNEADerivatives(model, data, qp, vp, cmap.v(a))
    M_pin = np.triu(theirs[2]) + np.triu(theirs[2], 1).T
    floor = 1e-6 * np.abs(M_pin).max()
    worst = {"dtau/dq": _relative_error(cmap.matrix(dq), theirs[0], floor),
             "dtau/dv": _relative_error(cmap.matrix(dv), theirs[1], floor),
             "M": _relative_error(cmap.matrix(M), M_pin, floor)}
    if np.linalg.eigvalsh(M_pin).min() > 1e-13 * np.abs(M_pin).max():  # not a massless tip link
        ddq, ddv, Minv = system.forward_dynamics_derivatives(q, v, tau)
        theirs = pin.computeABADerivatives(model, data, qp, vp, cmap.v(tau))
        Minv_pin = np.triu(theirs[2]) + np.triu(theirs[2], 1).T
        floor = 1e-6 * np.abs(Minv_pin).max()
        worst.update({"ddv/dq": _relative_error(cmap.matrix(ddq), theirs[0], floor),
                      "ddv/dv": _relative_error(cmap.matrix(ddv), theirs[1], floor),
                      "M^-1": _relative_error(cmap.matrix(Minv), Minv_pin, floor)})
    # ℳ⁻¹ loses the digits of ℳ's condition number (tiny links of icub and romeo: 10⁸ and more)
    tolerance = max(RTOL, 1e-15 * np.linalg.cond(M_pin))
    assert max(worst.values()) < tolerance, f"{rel}: worst relative errors {worst} (tolerance {tolerance:.1e})"

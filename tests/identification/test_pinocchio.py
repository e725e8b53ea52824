"""The regressors of every example-robot-data robot against Pinocchio's
``computeJointTorqueRegressor``, ``computeKineticEnergyRegressor`` and
``computePotentialEnergyRegressor`` (IDENTIFICATION.md, *Parameters of a body*): the same
parameters in the same order per body, rows mapped through :class:`sko.interop.PinocchioMap`."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from sko.interop import PinocchioMap
from tests.rigid.pinocchio_map import parameter_columns
from tests.rigid.test_pinocchio import ROBOTS_DIR, STUB, _cases, _load, pin

RTOL = 1e-12


def _relative(ours, theirs) -> float:
    return np.abs(ours - theirs).max(initial=0.0) / max(np.abs(theirs).max(initial=0.0), 1e-300)


@pytest.mark.parametrize("rel, floating", [c for c in _cases() if c.values[0] != STUB])
def test_regressors_agree_with_pinocchio(rel, floating):
    system, model = _load(ROBOTS_DIR / rel, floating)
    if system.nv == 0:
        return
    cmap, data = PinocchioMap(system, model), model.createData()
    columns = parameter_columns(system, model)
    pi = system.inertial_parameters()
    assert np.abs(pi[columns] - np.concatenate([model.inertias[i].toDynamicParameters()
                                                for i in range(1, model.njoints)])).max() <= 1e-12 * np.abs(pi).max()
    others = np.setdiff1d(np.arange(len(pi)), columns)  # bodies Pinocchio has no joint for carry no torque
    rng = np.random.default_rng(zlib.crc32(rel.encode()))
    q = system.random_configuration(rng)
    v, dv = rng.normal(size=(2, system.nv))
    qp, vp = cmap.q(q), cmap.v(v)
    Y = system.joint_torque_regressor(q, v, dv)
    Y_pin = pin.computeJointTorqueRegressor(model, data, qp, vp, cmap.v(dv))
    theirs = np.column_stack([cmap.v_back(c) for c in Y_pin.T])
    yT = system.kinetic_energy_regressor(q, v)
    yV = system.potential_energy_regressor(q)
    worst = {"Y": _relative(Y[:, columns], theirs),
             "y_T": _relative(yT[columns], pin.computeKineticEnergyRegressor(model, data, qp, vp)),
             "y_V": _relative(yV[columns], pin.computePotentialEnergyRegressor(model, data, qp))}
    assert max(worst.values()) < RTOL, f"{rel}: worst relative errors {worst}"
    assert np.abs(Y[:, others]).max(initial=0.0) == 0.0

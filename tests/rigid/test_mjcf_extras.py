"""MJCF beyond the mechanism's inertias: inertia repair, joint limits, joint equality couplings
(RIGID.md, *Interoperability*; EMBEDDING.md for the couplings)."""

import warnings

import numpy as np
import pytest

from sko.errors import MJCFError
from sko.inertia import InertiaRepairWarning, nearest_physical_inertia
from sko.systems import RigidSystem

mujoco = pytest.importorskip("mujoco")

TWO_LINKS = """<mujoco><worldbody>
 <body name="a"><joint name="j1" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
  <body name="b" pos="0.3 0 0"><joint name="j2" axis="0 1 0"/><geom type="box" size="0.1 0.05 0.02"/></body>
 </body></worldbody></mujoco>"""


def test_an_unphysical_compiled_inertia_is_rejected_or_repaired_with_a_warning():
    model = mujoco.MjModel.from_xml_string(TWO_LINKS)
    model.body_inertia[2] = [1e-3, 1e-3, 3e-3]  # breaks J_3 ≤ J_1 + J_2 (MuJoCo's compiler would reject it)
    with pytest.raises(Exception, match="'b'.*triangle inequality"):
        RigidSystem.from_mjcf(model)
    with pytest.warns(InertiaRepairWarning, match="replaced 1 body inertia .*body 'b' changed by") as caught:
        system = RigidSystem.from_mjcf(model, inertia="repair")
    assert len(caught[0].message.repairs) == 1
    fixed = nearest_physical_inertia(np.diag([1e-3, 1e-3, 3e-3]))
    assert np.allclose(system.body("b").inertia[:3, :3], fixed, atol=1e-15)  # centred box in its principal axes
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        RigidSystem.from_mjcf(TWO_LINKS, inertia="repair")  # nothing to repair: silent
    with pytest.raises(MJCFError, match="inertia must be 'strict' or 'repair'"):
        RigidSystem.from_mjcf(TWO_LINKS, inertia="fix")

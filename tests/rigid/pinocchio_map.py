"""Explicit coordinate maps between a RigidSystem and a Pinocchio model of the same URDF.

Joints are matched by name. Pinocchio orders a free flyer's coordinates as
``q = (p, x, y, z, w)`` and ``ν = [v; ω]``, ours as ``q = (w, x, y, z, p)`` and ``ν = [ω; v]``;
a continuous joint is ``(cos θ, sin θ)`` in Pinocchio and ``θ`` here.
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

import numpy as np


def robots_dir() -> Path | None:
    """The ``robots`` directory of the installed example-robot-data, or None."""
    try:
        import example_robot_data  # noqa: F401  (older releases ship a Python module)

        return Path(example_robot_data.getModelPath("ur_description/urdf/ur5_robot.urdf")) / "robots"
    except (ImportError, AttributeError, Exception):
        pass
    try:
        files = metadata.files("example-robot-data") or []
    except metadata.PackageNotFoundError:
        return None
    for f in files:
        parts = Path(str(f)).parts
        if "robots" in parts and "example-robot-data" in parts:
            path = Path(str(f.locate()))
            while path.name != "robots":
                path = path.parent
            return path
    return None


class CoordinateMap:
    """Index maps ours → Pinocchio built from joint names."""

    def __init__(self, system, pin_model):
        self.system, self.pin_model = system, pin_model
        by_name = system.joint_names()
        self.joints = []
        v_perm = np.zeros(system.nv, dtype=int)  # pin v index -> our v index
        for i in range(1, pin_model.njoints):
            name = pin_model.names[i]
            jm = pin_model.joints[i]
            body = by_name[name]
            kind = jm.shortname()
            qs, vs = system.q_slice(body), system.v_slice(body)
            self.joints.append((kind, qs, vs, jm.idx_q, jm.idx_v, jm.nq, jm.nv))
            ours = np.arange(vs.start, vs.stop)
            if kind == "JointModelFreeFlyer":
                ours = np.concatenate([ours[3:], ours[:3]])
            v_perm[jm.idx_v:jm.idx_v + jm.nv] = ours
        assert sorted(v_perm) == list(range(system.nv)), "every velocity coordinate mapped once"
        self.v_perm = v_perm

    def q(self, q):
        out = np.zeros(self.pin_model.nq)
        for kind, qs, vs, iq, iv, nq, nv in self.joints:
            mine = q[qs]
            if kind == "JointModelFreeFlyer":
                quat = mine[:4] / np.linalg.norm(mine[:4])
                out[iq:iq + 7] = np.concatenate([mine[4:], quat[1:], quat[:1]])
            elif nq == 2 and nv == 1:  # continuous joint: (cos, sin)
                out[iq:iq + 2] = [np.cos(mine[0]), np.sin(mine[0])]
            else:
                assert nq == len(mine), kind
                out[iq:iq + nq] = mine
        return out

    def v(self, v):
        """Our velocity-like vector (ν, ν̇, τ) in Pinocchio's order."""
        return np.asarray(v)[self.v_perm]

    def v_back(self, v_pin):
        out = np.zeros(self.system.nv)
        out[self.v_perm] = v_pin
        return out

    def matrix(self, M):
        return np.asarray(M)[np.ix_(self.v_perm, self.v_perm)]

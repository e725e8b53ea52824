"""Systems from descriptions: URDF files, MJCF through MuJoCo (:mod:`sko.io.mjcf`, imported on
use: it needs ``mujoco``) and Denavit–Hartenberg tables."""

from sko.io.dh import DHLink, dh_system
from sko.io.urdf import load_urdf, parse_urdf

__all__ = ["load_urdf", "parse_urdf", "DHLink", "dh_system"]

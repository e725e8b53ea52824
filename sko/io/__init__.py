"""Systems from descriptions: :func:`load_urdf` (URDF files or text), :func:`load_mjcf` (MJCF
through MuJoCo, needed when called), Denavit–Hartenberg tables (:func:`dh_system`), and
:func:`load`, any of the files by its extension (also ``sko.load``)."""

from sko.io.dh import DHLink, dh_system
from sko.io.formats import load
from sko.io.mjcf import load_mjcf
from sko.io.urdf import load_urdf, parse_urdf

__all__ = ["load", "load_urdf", "load_mjcf", "parse_urdf", "DHLink", "dh_system"]

"""Loaders as functions of ``sko.io`` and ``sko.load`` choosing one by the file's extension: the
same system as the loader called directly, options passed on, every bad path a ModelFileError
naming it, and ``import sko`` still light."""

import importlib.util
import subprocess
import sys

import numpy as np
import pytest

import sko
from sko.errors import ModelFileError, URDFError
from sko.graphs.errors import SKOError
from sko.io import load, load_urdf, parse_urdf
from sko.systems import RigidSystem
from tests.rigid.test_urdf import ARM
from tests.util import assert_close

MUJOCO = importlib.util.find_spec("mujoco") is not None

PENDULUM = """<mujoco><worldbody><body name="arm"><joint name="hinge" axis="0 1 0"/>
  <geom type="capsule" fromto="0 0 0 0.3 0 -1" size="0.05"/>
  <body name="fore" pos="0.3 0 -1"><joint name="elbow" axis="1 0 0"/>
  <geom type="capsule" fromto="0 0 0 0 0.2 -0.5" size="0.04"/></body></body></worldbody></mujoco>"""


def _same(a, b, seed: int = 0) -> None:
    """Two systems with the same coordinates and the same dynamics at a random state."""
    assert a.bodies == b.bodies and (a.nq, a.nv) == (b.nq, b.nv)
    rng = np.random.default_rng(seed)
    q, v, tau = a.random_configuration(rng), rng.normal(size=a.nv), rng.normal(size=a.nv)
    assert_close(a.mass_matrix(q), b.mass_matrix(q), rtol=1e-15)
    assert_close(a.forward_dynamics(q, v, tau), b.forward_dynamics(q, v, tau), rtol=1e-13)


@pytest.fixture
def arm_file(tmp_path):
    path = tmp_path / "arm.urdf"
    path.write_text(ARM)
    return path


def test_load_urdf_takes_a_path_or_the_text(arm_file):
    from_file = load_urdf(arm_file)
    _same(from_file, parse_urdf(ARM))
    _same(from_file, load_urdf(ARM))
    _same(from_file, load_urdf("\n  " + ARM))
    _same(from_file, load_urdf(ARM.encode()))
    _same(from_file, load_urdf(str(arm_file)))
    with pytest.raises(URDFError, match="must be a path or the XML text"):
        load_urdf(3.5)
    with pytest.raises(URDFError, match="cannot read URDF file"):
        load_urdf(arm_file.with_name("missing.urdf"))


def test_sko_load_is_the_loader_of_the_extension(arm_file, tmp_path):
    assert sko.load is load
    _same(sko.load(arm_file), load_urdf(arm_file))
    _same(sko.load(str(arm_file)), load_urdf(arm_file))
    floating = sko.load(arm_file, floating_base=True, gravity=[0.0, 0.0, -1.62])
    assert floating.nv == load_urdf(arm_file).nv + 6
    _same(floating, load_urdf(arm_file, floating_base=True, gravity=[0.0, 0.0, -1.62]))
    upper = tmp_path / "ARM.URDF"
    upper.write_text(ARM)
    _same(sko.load(upper), load_urdf(arm_file))


@pytest.mark.skipif(not MUJOCO, reason="needs mujoco")
@pytest.mark.parametrize("name", ["pendulum.xml", "pendulum.mjcf", "pendulum.XML"])
def test_sko_load_reads_mjcf_through_mujoco(tmp_path, name):
    from sko.io import load_mjcf

    path = tmp_path / name
    path.write_text(PENDULUM)
    system = sko.load(path, inertia="repair")
    _same(system, load_mjcf(PENDULUM))
    assert system.joint_names() == {"hinge": "arm", "elbow": "fore"}


def test_every_bad_path_is_a_model_file_error_naming_it(arm_file, tmp_path):
    assert issubclass(ModelFileError, SKOError)
    cases = {
        tmp_path / "robot.step": "unknown extension '.step'",
        tmp_path / "robot": "no extension",
        tmp_path / "missing.urdf": "no such file",
        tmp_path / "missing.xml": "no such file",
        tmp_path: "no extension",
    }
    folder = tmp_path / "folder.urdf"
    folder.mkdir()
    cases[folder] = "no such file"
    for path, why in cases.items():
        with pytest.raises(ModelFileError, match=why) as caught:
            sko.load(path)
        assert repr(str(path)) in str(caught.value)
    with pytest.raises(ModelFileError, match="load_urdf takes no option mimc") as caught:
        sko.load(arm_file, mimc="independent")
    assert repr(str(arm_file)) in str(caught.value) and "mimic" in str(caught.value)
    with pytest.raises(ModelFileError, match="takes the path of a model file, got bytes"):
        sko.load(ARM.encode())


def test_xml_text_given_to_sko_load_is_named_as_text():
    """The text was taken for a path: the error quoted the whole model as a file name without an
    extension."""
    with pytest.raises(ModelFileError, match=r"sko.load takes the path of a model file, got XML text \(\d+ characters"
                                             r"\): give the text to sko.io.load_urdf or sko.io.load_mjcf") as caught:
        sko.load(ARM)
    assert len(str(caught.value)) < 200


def test_the_systems_do_not_load_files():
    """Loading is the io layer's: the system classes have no loader methods."""
    assert not hasattr(RigidSystem, "from_urdf") and not hasattr(RigidSystem, "from_mjcf")


def test_import_sko_stays_light_and_the_facade_resolves():
    code = """
import sys
import sko
heavy = [m for m in ("sko.io", "sko.systems", "sko.simulation", "sko.scale", "numba") if m in sys.modules]
assert not heavy, heavy
from importlib import import_module
for names, module in (("load",), "sko.io.formats"), (("rollout", "Rollout"), "sko.simulation.rollout"), \
        (("simulate", "Trajectory"), "sko.simulation.simulate"), (("sweep", "sample"), "sko.scale.sweep"):
    for name in names:
        assert getattr(sko, name) is getattr(import_module(module), name), name
try:
    sko.missing_name
except AttributeError as exc:
    assert "missing_name" in str(exc)
else:
    raise AssertionError("no AttributeError")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr

"""Errors of the rigid-body layer (all subclasses of :class:`sko.graphs.errors.SKOError`)."""

from sko.graphs.errors import SKOError

__all__ = ["JointError", "MJCFError", "RigidSystemError", "URDFError", "ModelFileError", "MissingDependencyError"]


class JointError(SKOError, ValueError):
    """A bad joint parameter or configuration (zero axis, wrong ``q`` size, zero quaternion,
    a user-defined joint returning arrays of the wrong shape). The message names the joint."""


class RigidSystemError(SKOError, ValueError):
    """A rigid system that cannot be built: unknown or duplicate body names, a body attached to
    an unknown parent, a non-positive mass or an inertia that is not positive definite."""


class URDFError(SKOError, ValueError):
    """A URDF file the loader cannot turn into a rigid system without changing its meaning
    (mimic joints, closed loops, several roots, unknown joint types, missing attributes, bad
    inertial data). The message names the offending link or joint."""


class MJCFError(SKOError, ValueError):
    """An MJCF model MuJoCo rejects (its message included), or a construct of a compiled model
    that a rigid system cannot represent (equality constraints, tendons), named."""


class ModelFileError(SKOError, ValueError):
    """A model file :func:`sko.load` cannot load: no such file, an extension naming no format it
    reads, or an option its format's loader does not take. The message names the path."""


class MissingDependencyError(SKOError, ImportError):
    """An optional dependency is not installed; the message names the feature that needs it and
    the extra to install, e.g. ``pip install "sko-multibody[symbolic]"``."""

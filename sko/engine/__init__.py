"""The compiled engine: everything that runs in numba, in one package (README, *The compiled engine*).

The reference path (:mod:`sko.algorithms`, the body types of :mod:`sko.bodies`) reads like the
paper and never imports this package; the engine implements what it declares, for float64 and
complex128 (complex-step) numbers. Lowest first:

* :mod:`.backend`: the switch between the compiled and the reference path (a context value:
  :func:`use_backend`, :func:`set_backend`, ``SKO_BACKEND``);
* :mod:`.cache`: the on-disk cache of compiled code, stamped by the sources of
  :data:`~sko.engine.cache.KERNEL_MODULES`; :mod:`.jit`: the kernel decorator, native addresses
  and the calls through them; :mod:`.fields`: named offsets of flat records; :mod:`.borrow`:
  views into flat buffers;
* :mod:`.layout`: the flat model (the tree as a parent array, per-node offsets into one data
  buffer, the Riccati buffer); :mod:`.model`: a model's compiled tables, per dtype, held by the
  model (no module keeps a table of models, systems or layouts);
* :mod:`.blocks`, :mod:`.rigid_blocks`: the per-node block products (generic, and 6-vector
  registers for rigid nodes);
* the recursions of SKO.md on the flat model, one module per algorithm: :mod:`.spo` (the SPO
  products ``φ x``, ``φ* x``, ``φ̃`` and the joint map), :mod:`.rnea` (Newton–Euler),
  :mod:`.crba` (composite inertias and ℳ), :mod:`.aba` (the Riccati gather, the innovations
  ``ψ``, ``K``, ``D`` and articulated-body forward dynamics); :mod:`.operational_space`: ``Ω`` blocks;
  :mod:`.cfa`: the constraint force algorithm's per-node splits and cyclic reduction;
  :mod:`.algorithms`: the model-level functions of :mod:`sko.algorithms` (same names and
  signatures) running these kernels;
* :mod:`.state_kernels`: compiled node states (:func:`state_kernel`, :func:`views`,
  :class:`KernelError`); :mod:`.hooks`: compiled hinge forces and coordinate maps;
  :mod:`.joint_registry`: compiled joint types and the calls through their addresses;
  :mod:`.joints`: the joint library's kinematics and :func:`joint_type`; :mod:`.toolkit`: the
  spatial algebra a user's kernel calls; :mod:`.bodies`: the library body types' state kernels
  (:mod:`.bodies.rigid`, :mod:`.bodies.flexible`, :mod:`.bodies.cluster`) and
  :func:`compiled_state`, which finds a body's;
* :mod:`.state_layout`: a system packed (rows, arenas, the Python ``at_state`` fallback);
  :mod:`.kernel_checks`: the checks of a user's kernel; :mod:`.request_views`: the request
  vector's header and views, its workspace's buffers by the names a request declares, and the
  arena's fill; :mod:`.requests`: the request catalogue and
  the dynamics' kernels; one module per further request family — :mod:`.mass_matrix` (ℳ of
  rigid trees on ten inertial parameters), :mod:`.rigid_rnea` (their inverse dynamics in body
  coordinates, and the velocity terms of their forward dynamics), :mod:`.centroidal` (CENTROIDAL.md) and
  :mod:`.rigid_centroidal` (its rigid trees on ten inertial parameters),
  :mod:`.regressors` (IDENTIFICATION.md), :mod:`.constrained` (CONSTRAINTS.md);
  :mod:`.derivatives`: the compiled derivative recursions;
  :mod:`.rollout`: compiled rollouts; :mod:`.lanes`: forward and inverse dynamics and ℳ of a
  batch of rigid trees with the states innermost (a block of states per vector register);
  :mod:`.lane_derivatives`: the derivatives of inverse and forward dynamics of such batches; :mod:`.lane_rollout`:
  the rollouts of such trees, each stage over a block of states;
  :mod:`.dispatch`: a system's :class:`~.dispatch.Engine`
  (``Engine.run``; ``Engine.one_state``, its prepared one-state calls).

*The recursions.* Every kernel of :mod:`.spo`, :mod:`.rnea`, :mod:`.crba` and :mod:`.aba` takes
the ``layout`` table and a ``data`` buffer (float64 or complex128; the stacked vectors have the
same scalar type) and runs the passes of SKO.md as written there, on blocks of any shape stored
row-major at the layout's offsets (:mod:`.blocks`); a rigid body on a 1-dof hinge takes the
register forms of :mod:`.rigid_blocks` (``rigid_step``), or the step written once for any node
specialised to its dimensions (:func:`~sko.engine.jit.specialised`, Newton–Euler's). Each body
is visited once per pass: O(N). Every kernel works on :func:`~sko.engine.borrow.borrowed` views
of its array arguments, so the per-body steps count no references.

Public names are imported from here (:data:`__all__`), each on first use so that importing
one module of the engine compiles nothing else.
"""

from __future__ import annotations

import importlib

#: public name -> the module of the engine that defines it
_PUBLIC = {
    "get_backend": "backend", "set_backend": "backend", "use_backend": "backend",
    "kernel": "jit", "offsets": "fields",
    "StateKernel": "state_kernels", "state_kernel": "state_kernels", "views": "state_kernels",
    "record": "state_kernels", "Row": "state_kernels", "Terms": "state_kernels", "Record": "state_kernels",
    "KernelError": "state_kernels",
    "hinge_force_kernel": "hooks", "qdot_kernel": "hooks", "normalize_kernel": "hooks",
    "hinge_force_at": "hooks", "qdot_at": "hooks", "normalize_at": "hooks",
    "JointKernel": "joint_registry", "joint_type": "joints", "joint_kernel": "joints",
    "compiled_state": "bodies",
    "engine": "dispatch", "Engine": "dispatch",
}

__all__ = [*_PUBLIC, "algorithms", "toolkit"]


def __getattr__(name: str):
    if name in ("algorithms", "toolkit"):
        return importlib.import_module(f"sko.engine.{name}")
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'sko.engine' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"sko.engine.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

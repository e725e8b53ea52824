"""``kernel_consistency``: each body's compiled state says what its ``at_state`` says (BODIES.md,
*The contract for a new body type*; :mod:`sko.engine.state_kernels`).

A body type may give its node state twice: in Python (``at_state``, the reference) and as a
compiled kernel (``compiled_state``), which the engine then uses. The identity and physics checks
see only the one the engine runs; a kernel that differs from its ``at_state`` by one constant
(a spring three times stiffer in its potential) passes them all. This check fills the state of
the system by the compiled kernels and compares, body by body, every output with the body's
``at_state`` under the same inboard attachment: ``E``, ``H``, ``M``, ``a``, ``b``, ``V``, the
potential and each attachment record (``Γ``, ``γ``, rotation, position, velocity), at the case's
state and another random one, in float64 and at complex states (the complex-step derivatives
run the complex128 kernels). A body's comparisons are relative to the largest of its outputs.
A body's compiled hooks (:mod:`sko.engine.hooks`: hinge force, ``q̇`` map, normalisation) are
compared the same way with its Python ``hinge_force``, ``qdot`` and ``normalize``, each relative
to its own size: the dynamics add the compiled hinge force, so a spring three times stiffer there
would pass the identities too. It applies on the compiled path only (``--backend reference``
compiles nothing).
"""

from __future__ import annotations

import numpy as np

from sko.engine.backend import get_backend
from sko.engine.hooks import hinge_force_at, normalize_at, qdot_at
from sko.engine.kernel_checks import node_outputs

from .registry import Case, compare, register

__all__ = ["kernel_consistency"]

_FIELDS = ("E", "H", "M", "a", "b", "V", "potential")
_RECORD = ("Gamma", "gamma", "rotation", "position", "velocity")


def _layout(system):
    """The system's compiled state layout, or None (no engine, or the reference path only)."""
    if not hasattr(system, "_engine"):
        return None
    return system._engine.layout


def _has_kernels(system) -> bool:
    """A system with compiled states, on the compiled path (the reference backend compiles nothing)."""
    if get_backend() != "compiled":
        return False
    layout = _layout(system)
    return layout is not None and (any(c is not None for c in layout.compiled) or any(h is not None for h in layout.hooks))


def _pairs(layout, a: np.ndarray, i: int, reference) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """``(field, compiled, at_state)`` of every output of body ``i``."""
    got = node_outputs(layout, a, i)
    pairs = [(f, np.asarray(got[f]), np.asarray(getattr(reference, f))) for f in _FIELDS]
    for name, att in got["attachments"].items():
        want = reference.attachments[name]
        label = "own frame" if name is None else f"attachment {name!r}"
        pairs += [(f"{f} of {label}", np.asarray(getattr(att, f)), np.asarray(getattr(want, f))) for f in _RECORD]
    return pairs


def _hook_pairs(system, k, hooks, q: np.ndarray, v: np.ndarray) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """``(hook, compiled, Python)`` of each compiled hook of body ``k`` at the system's ``q``, ``v``."""
    body = system.body(k)
    qs, vs = q[system.q_slices[k]], v[system.dof_slices[k]]
    pairs = []
    if hooks.hinge_force is not None:
        want = body.hinge_force(qs.copy(), vs.copy())
        pairs.append(("hinge_force", hinge_force_at(body, hooks, qs, vs),
                      np.broadcast_to(0.0 if want is None else np.asarray(want), (body.dof_size,))))
    if hooks.qdot is not None:
        pairs.append(("qdot", qdot_at(body, hooks, qs, vs), np.asarray(body.qdot(qs.copy(), vs.copy()))))
    if hooks.normalize is not None:
        pairs.append(("normalize", normalize_at(body, hooks, qs), np.asarray(body.normalize(qs.copy()))))
    return pairs


@register("kernel_consistency", "BODIES.md contract: compiled state = at_state", symbolic=False, system=True,
          when=_has_kernels)
def kernel_consistency(case: Case):
    """Every body's compiled state equals its at_state (every output and record), and its compiled
    hooks its Python methods, float and complex."""
    system = case.system
    layout = _layout(system)
    rng = case.rng("kernel_consistency")
    q0, v0 = np.asarray(case.q, dtype=float), np.asarray(case.v, dtype=float)
    states = [(q0, v0), (np.asarray(system.random_configuration(rng), dtype=float), rng.uniform(-1.0, 1.0, system.nv))]
    comparisons = []
    for q, v in states:
        for step in (0.0, 1e-6):
            if step:  # a complex state, as a complex step makes
                q, v = q + step * 1j * rng.standard_normal(q.size), v + step * 1j * rng.standard_normal(v.size)
            kind = "complex128" if step else "float64"
            a = layout.fill(q[None], v[None])[0]
            reference = system.node_states(q, v)
            for i, k in enumerate(layout.bodies):
                if layout.hooks[i] is not None:
                    comparisons += [compare(x, y, scale=max(float(np.abs(x).max(initial=0.0)),
                                                            float(np.abs(y).max(initial=0.0))) or 1.0,
                                            label=f"body {k!r} compiled {hook} ({kind})")
                                    for hook, x, y in _hook_pairs(system, k, layout.hooks[i], q, v)]
                if layout.compiled[i] is None:
                    continue
                pairs = _pairs(layout, a, i, reference[k])
                scale = max(float(np.abs(x).max(initial=0.0)) for _, *sides in pairs for x in sides)
                comparisons += [compare(x, y, scale=scale, label=f"body {k!r} {field} ({kind})")
                                for field, x, y in pairs]
    return comparisons

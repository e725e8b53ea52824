"""Models the identity checks run on: built-in SKO models and a hook for example systems.

Built-in models (all with non-square weights of varying size, some singular, and random
``a``, ``b``):

* ``random``     — a random tree of 14 bodies with two base bodies, arbitrary stacking order;
* ``chain``      — a serial chain of 8 bodies (Lemma 6: every pair related);
* ``forest``     — three independent trees hanging off the root;
* ``jain-tree``  — the five-branch tree of Jain's Figure 3 (SKO.md §13), canonically numbered;
* ``symbolic``   — a small model with sympy entries (see :mod:`sko.verify.symbolic`);
* ``symbolic-pendulum`` — a rigid 2-link pendulum built by ``SystemBuilder`` from sympy masses,
  lengths, inertias and gravity, at a symbolic state (:mod:`sko.examples.symbolic`).

Packages with example systems (rigid bodies, flexible bodies) add theirs without this module
knowing them: by calling :func:`register_model` when imported, by defining a function
``verify_models()`` that returns ``{name: factory}`` (a factory takes no argument and returns an
:class:`~sko.SKOModel` or a tuple ``(model, a, b)``), or by defining ``example_systems()`` that
returns ``{name: system factory}`` for systems with ``random_configuration(rng)``, ``nv`` and
``sko_model(q, qd) -> (model, a, b)`` (taken at a reproducible random state). The modules listed
in :data:`PLUGINS` are imported, if present, the first time the models are listed.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Hashable
from dataclasses import dataclass

import numpy as np

from sko.graphs import TreeDigraph
from sko.graphs.errors import SKOError
from sko.model import SKOModel

from .registry import Case
from .symbolic import symbolic_model

__all__ = [
    "ModelSpec",
    "PLUGINS",
    "register_model",
    "model_names",
    "get_model",
    "make_case",
    "random_sko_model",
    "jain_tree",
    "random_vector",
    "system_model",
    "system_case",
    "is_system",
]

#: Modules that may contribute example systems (imported lazily, skipped when absent).
PLUGINS = ("sko.examples.rigid", "sko.examples.bodies")


@dataclass(frozen=True)
class ModelSpec:
    """A named model factory; ``symbolic`` models have sympy entries."""

    name: str
    build: Callable[[], object]
    description: str = ""
    symbolic: bool = False
    builtin: bool = False
    generic: bool = False


_MODELS: dict[str, ModelSpec] = {}
_plugins_loaded = False


def register_model(name: str, build: Callable[[], object], description: str = "", *, symbolic: bool = False,
                   replace: bool = False, builtin: bool = False, generic: bool = False) -> ModelSpec:
    """Register a model factory under ``name`` (returns an SKOModel or ``(model, a, b)``);
    ``generic`` marks random data (see :class:`~sko.verify.registry.Case`)."""
    if not replace and name in _MODELS:
        raise SKOError(f"a model named {name!r} is already registered")
    spec = ModelSpec(name, build, description, symbolic, builtin, generic)
    _MODELS[name] = spec
    return spec


def _load_plugins() -> None:
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    for module_name in PLUGINS:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        provider = getattr(module, "verify_models", None)
        systems = getattr(module, "example_systems", None)
        if callable(provider):
            builds = dict(provider())
        elif callable(systems):
            builds = {name: _at_random_state(factory) for name, factory in systems().items()}
        else:
            continue
        for name, build in builds.items():
            if name not in _MODELS:
                register_model(name, build, f"example from {module_name}")


def system_model(system, seed: int = 0) -> tuple:
    """``(model, a, b)`` of a system (e.g. :class:`sko.systems.RigidSystem`) at a reproducible random
    state: ``q = system.random_configuration(rng)``, ``ν`` standard normal."""
    rng = np.random.default_rng(seed)
    q = system.random_configuration(rng)
    qd = rng.standard_normal(system.nv)
    return system.sko_model(q, qd)


def _at_random_state(factory: Callable[[], object], seed: int = 0) -> Callable[[], object]:
    """The factory itself: :func:`case_from` takes its system at a random state and keeps it."""
    return factory


def is_system(x) -> bool:
    """Whether ``x`` looks like a system (``sko_model``, ``random_configuration``, ``nv``)."""
    return not isinstance(x, (SKOModel, tuple)) and all(hasattr(x, a) for a in ("sko_model", "random_configuration", "nv"))


def system_case(system, name: str, seed: int = 0) -> Case:
    """A :class:`Case` of ``system`` at the random state of :func:`system_model`, keeping the
    system and state for the physics checks."""
    rng = np.random.default_rng(seed)
    q = system.random_configuration(rng)
    qd = rng.standard_normal(system.nv)
    model, a, b = system.sko_model(q, qd)
    return Case(model, name, a, b, seed=seed, system=system, q=q, v=qd)


def model_names(symbolic: bool | None = None, builtin: bool | None = None) -> tuple[str, ...]:
    """Registered model names, optionally only the (non-)symbolic or (non-)built-in ones."""
    _load_plugins()
    return tuple(n for n, s in _MODELS.items()
                 if (symbolic is None or s.symbolic == symbolic) and (builtin is None or s.builtin == builtin))


def get_model(name: str) -> ModelSpec:
    _load_plugins()
    try:
        return _MODELS[name]
    except KeyError:
        raise SKOError(f"no model named {name!r}; available: {', '.join(_MODELS)}") from None


def make_case(name: str, seed: int = 0) -> Case:
    """Build the named model and wrap it (with its ``a``, ``b``) as a :class:`Case`."""
    spec = get_model(name)
    return case_from(spec.build(), name, seed=seed, generic=spec.generic)


def case_from(built, name: str, seed: int = 0, generic: bool = False) -> Case:
    """A :class:`Case` from an SKOModel or a tuple ``(model, a, b)``."""
    if isinstance(built, SKOModel):
        return Case(built, name, seed=seed, generic=generic)
    if is_system(built):
        return system_case(built, name, seed)
    if isinstance(built, tuple) and len(built) == 3 and isinstance(built[0], SKOModel):
        model, a, b = built
        return Case(model, name, a, b, seed=seed, generic=generic)
    raise SKOError(f"model factory {name!r} returned {type(built).__name__}; expected an SKOModel, (model, a, b) or a system")


# --------------------------------------------------------------------------- random data
def random_sko_model(tree: TreeDigraph, seed: int, max_node_dim: int = 6, singular: bool = True) -> SKOModel:
    """Random ``φ, H, M`` on ``tree``: node dimensions ``1..max_node_dim`` varying per node (so
    weights are non-square and of varying size), hinge dimensions ``1..m_k``, SPD inertias, and
    about a third of the weights rank deficient when ``singular``."""
    rng = np.random.default_rng(seed)
    m = {k: int(rng.integers(1, max_node_dim + 1)) for k in tree.bodies}
    phi, H, M = {}, {}, {}
    for k in tree.bodies:
        mk = m[k]
        H[k] = rng.standard_normal((int(rng.integers(1, mk + 1)), mk))
        A = rng.standard_normal((mk, mk))
        M[k] = A @ A.T + mk * np.eye(mk)
        p = tree.parent(k)
        if p is not None:
            if singular and rng.random() < 0.35 and min(m[p], mk) > 1:
                r = int(rng.integers(1, min(m[p], mk)))
                phi[k] = rng.standard_normal((m[p], r)) @ rng.standard_normal((r, mk)) / np.sqrt(mk)
            else:
                phi[k] = rng.standard_normal((m[p], mk)) / np.sqrt(mk)
    return SKOModel(tree, phi, H, M)


def random_vector(model: SKOModel, seed: int, kind: str = "node") -> np.ndarray:
    """A random stacked node (``"node"``) or hinge (``"dof"``) vector."""
    return np.random.default_rng(seed).standard_normal(model.node_size if kind == "node" else model.dof_size)


def _with_ab(model: SKOModel, seed: int) -> tuple:
    return model, random_vector(model, seed + 1), random_vector(model, seed + 2)


def _shuffled(parents: dict[Hashable, Hashable | None], seed: int) -> TreeDigraph:
    """The tree of ``parents`` stacked in a random order (neither canonical nor regular)."""
    order = np.random.default_rng(seed).permutation(len(parents))
    items = list(parents.items())
    return TreeDigraph.from_parents(dict(items[i] for i in order))


def jain_tree() -> TreeDigraph:
    """The five-branch tree of Jain's Figure 3, canonically numbered (children before parents).

    Branch 1 (bodies 12–14, base) has child branches 2 (bodies 7–9) and 3 (bodies 10–11);
    branch 2 has child branches 4 (bodies 1–3) and 5 (bodies 4–6). Each branch is a serial-chain
    segment; its tip body (lowest number) is the parent of its child branches' base bodies.
    """
    segments = {1: (14, 13, 12), 2: (9, 8, 7), 3: (11, 10), 4: (3, 2, 1), 5: (6, 5, 4)}
    parent_segment = {1: None, 2: 1, 3: 1, 4: 2, 5: 2}
    parents: dict[int, int | None] = {}
    for s, bodies in segments.items():
        ps = parent_segment[s]
        for i, k in enumerate(bodies):
            parents[k] = bodies[i - 1] if i else (None if ps is None else segments[ps][-1])
    return TreeDigraph.from_parents(dict(sorted(parents.items())))


def _random_tree() -> TreeDigraph:
    rng = np.random.default_rng(7)
    parents: dict[str, str | None] = {"b0": None, "b1": None}
    for g in range(2, 14):
        parents[f"b{g}"] = f"b{int(rng.integers(0, g))}"
    return _shuffled(parents, 3)


def _forest() -> TreeDigraph:
    parents = {"a0": None, "a1": "a0", "a2": "a0", "a3": "a2", "b0": None, "b1": "b0", "b2": "b1",
               "c0": None, "c1": "c0", "c2": "c0", "c3": "c0"}
    return _shuffled(parents, 5)


register_model("random", lambda: _with_ab(random_sko_model(_random_tree(), 11), 11),
               "random tree, 14 bodies, 2 base bodies, shuffled numbering", builtin=True, generic=True)
register_model("chain", lambda: _with_ab(random_sko_model(TreeDigraph.from_parents({k: (k - 1 if k else None) for k in range(8)}), 12), 12),
               "serial chain of 8 bodies", builtin=True, generic=True)
register_model("forest", lambda: _with_ab(random_sko_model(_forest(), 13), 13),
               "three trees off the root, 11 bodies, shuffled numbering", builtin=True, generic=True)
register_model("jain-tree", lambda: _with_ab(random_sko_model(jain_tree(), 14), 14),
               "five-branch tree of Jain's Figure 3, canonical numbering", builtin=True, generic=True)


register_model("symbolic", symbolic_model, "4 nodes, 2 base bodies, sympy weights, H and M", symbolic=True, builtin=True)


def _embedded(name: str) -> Callable[[], object]:
    def build():
        from sko.examples.embedding import verify_systems  # the examples layer sits below

        return verify_systems()[name]()
    return build


def _symbolic_coupling():
    from sko.examples.embedding import symbolic_gripper

    return symbolic_gripper()


register_model("mimic-gripper", _embedded("mimic-gripper"),
               "cluster node of a mimic coupling: 12 × 6 weight, 1 independent coordinate (EMBEDDING.md §5 (a))", builtin=True)
register_model("four-bar", _embedded("four-bar"),
               "closed four-bar as one 18 × 6 cluster node, loop closed by Newton from lattice anchors (EMBEDDING.md §5 (b))", builtin=True)
register_model("mimic-symbolic", _symbolic_coupling, "hand with two coupled fingers, sympy state (EMBEDDING.md §5 (a))",
               symbolic=True, builtin=True)


def _symbolic_pendulum():
    from sko.examples.symbolic import symbolic_pendulum_model

    return symbolic_pendulum_model(2)


register_model("symbolic-pendulum", _symbolic_pendulum,
               "rigid 2-link pendulum, sympy masses, lengths, inertias, gravity and state", symbolic=True, builtin=True)

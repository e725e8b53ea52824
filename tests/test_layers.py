"""The layers of the installed ``sko`` package: every module parsed with ``ast``, its imports of
``sko`` collected (at module level and inside functions), and the graph checked.

* no cycle between modules, nor between packages (``sko.X``);
* imports only go downward in the layer order of :data:`LAYERS`, or stay within a layer;
* an import inside a function may go upward only if it is one of the documented
  :data:`EXCEPTIONS` (a classmethod such as ``RigidSystem.from_urdf`` loading a file through
  ``sko.io``); those edges are left out of the cycle checks.

Run ``python -m pytest tests/test_layers.py -q`` to see any violation, named by file and line.
"""

from __future__ import annotations

import ast
import importlib.util
import pkgutil
from pathlib import Path
from typing import NamedTuple

import networkx as nx
import pytest

import sko

#: Lowest first; a module belongs to the longest prefix that names it.
LAYERS = (
    ("sko.graphs",),
    ("sko", "sko.model", "sko.arrays", "sko.spatial", "sko.inertia", "sko.errors", "sko.optional", "sko.independent",
     "sko.kernel_cache"),
    ("sko.algorithms",),
    ("sko.bodies",),
    ("sko.systems", "sko.engine"),
    ("sko.constraints",),
    ("sko.io", "sko.interop"),
    ("sko.identification",),
    ("sko.examples",),
    ("sko.verify",),
    ("sko.cli", "sko.__main__", "sko.precompile"),
)

#: Upward imports allowed inside a function body: (importing module, imported module, why).
EXCEPTIONS = {
    ("sko.systems.rigid", "sko.io.urdf"): "RigidSystem.from_urdf loads a file with the io layer",
    ("sko.systems.rigid", "sko.io.mjcf"): "RigidSystem.from_mjcf compiles a model with the io layer",
    ("sko", "sko.systems"): "sko.rollout re-exports the rollouts on first use; import sko stays light",
    ("sko.systems.multibody", "sko.constraints"): "the systems' constrained dynamics methods call sko.constraints",
    ("sko.systems.rollout", "sko.constraints.rollout"): "sko.rollout(..., constraints=...) runs the constrained rollout",
}


class Import(NamedTuple):
    source: str
    target: str
    in_function: bool
    where: str


def _walk(package: str, modules: dict[str, Path]) -> None:
    """``package`` and its submodules, recursively, into ``modules``."""
    spec = importlib.util.find_spec(package)
    modules[package] = Path(spec.origin)
    for info in pkgutil.iter_modules(spec.submodule_search_locations or [], package + "."):
        if info.name not in modules:
            _walk(info.name, modules) if info.ispkg else modules.setdefault(info.name, Path(importlib.util.find_spec(info.name).origin))


def _modules_and_imports() -> tuple[dict[str, Path], list]:
    """Every module of the installed package and their imports. Subpackages mapped from other
    folders (``sko.graphs``, ``sko.algorithms`` in an editable install) are found through the
    imports that name them, until nothing new turns up."""
    modules: dict[str, Path] = {}
    _walk("sko", modules)
    while True:
        imports = _imports(modules)
        new = {i.target for i in imports if i.target not in modules and importlib.util.find_spec(i.target) is not None}
        if not new:
            return dict(sorted(modules.items())), imports
        for name in new:
            _walk(name, modules)


def _imports(modules: dict[str, Path]) -> list[Import]:
    found = []
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))

        def visit(node, in_function: bool) -> None:
            for child in ast.iter_child_nodes(node):
                inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                where = f"{path}:{getattr(child, 'lineno', '?')}"
                if isinstance(child, ast.Import):
                    found.extend(Import(name, a.name, inside, where) for a in child.names if a.name.split(".")[0] == "sko")
                elif isinstance(child, ast.ImportFrom):
                    if child.level:
                        parts = package.split(".")
                        base = ".".join(parts[:len(parts) - child.level + 1] + ([child.module] if child.module else []))
                    else:
                        base = child.module or ""
                    if base.split(".")[0] == "sko":
                        for alias in child.names:  # `from pkg import submodule` imports the submodule
                            sub = f"{base}.{alias.name}"
                            found.append(Import(name, sub if sub in modules or _is_module(sub) else base, inside, where))
                visit(child, inside)

        visit(tree, False)
    return found


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _layer(module: str) -> int:
    best = None
    for i, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if module == prefix or (prefix != "sko" and module.startswith(prefix + ".")):
                if best is None or len(prefix) > best[1]:
                    best = (i, len(prefix))
    if best is None:
        raise AssertionError(f"module {module} is in no layer: add it to LAYERS")
    return best[0]


def _package(module: str) -> str:
    return ".".join(module.split(".")[:2])


MODULES, IMPORTS = _modules_and_imports()


def test_the_parse_sees_the_package():
    assert {"sko.graphs.tree", "sko.algorithms.newton_euler", "sko.systems.rigid", "sko.verify.runner", "sko.cli"} <= set(MODULES)
    assert any(i.source == "sko.systems.rigid" and i.target == "sko.io.urdf" and i.in_function for i in IMPORTS)
    assert any(i.source == "sko.verify.runner" and i.target == "sko.verify.models" for i in IMPORTS)


def test_every_module_is_in_a_layer():
    for module in MODULES:
        _layer(module)


def test_imports_only_go_downward():
    upward = [f"{i.where}: {i.source} (layer {_layer(i.source)}) imports {i.target} (layer {_layer(i.target)})"
              for i in IMPORTS if _layer(i.target) > _layer(i.source)
              and not (i.in_function and (i.source, i.target) in EXCEPTIONS)]
    assert not upward, "upward imports:\n" + "\n".join(upward)


def test_exceptions_are_still_needed():
    """A documented exception that no longer occurs is removed from the list."""
    for source, target in EXCEPTIONS:
        assert any(i.source == source and i.target == target and i.in_function for i in IMPORTS), (source, target)


def _graph(key) -> nx.DiGraph:
    graph = nx.DiGraph()
    for i in IMPORTS:
        a, b = key(i.source), key(i.target)
        if a != b and (i.source, i.target) not in EXCEPTIONS:
            graph.add_edge(a, b, where=i.where)
    return graph


@pytest.mark.parametrize("level", ["module", "package"])
def test_no_import_cycles(level):
    graph = _graph((lambda m: m) if level == "module" else _package)
    cycles = list(nx.simple_cycles(graph))
    described = [" → ".join(c + [c[0]]) + "  (" + ", ".join(graph.edges[a, b]["where"] for a, b in zip(c, c[1:] + c[:1])) + ")"
                 for c in cycles]
    assert not cycles, f"{level} import cycles:\n" + "\n".join(described)


def test_the_checker_finds_a_cycle_and_an_upward_import():
    """The checks can fail: a planted cycle and upward import are reported."""
    planted = IMPORTS + [Import("sko.model", "sko.cli", False, "planted"), Import("sko.cli", "sko.model", False, "planted")]
    graph = nx.DiGraph([(i.source, i.target) for i in planted if i.source != i.target and (i.source, i.target) not in EXCEPTIONS])
    assert any({"sko.model", "sko.cli"} <= set(c) for c in nx.simple_cycles(graph))
    assert _layer("sko.cli") > _layer("sko.model")

"""State owned explicitly: what the engine derives from a model lives on that model (its compiled
tables, per scalar type) or on what the model shares with its ``with_blocks`` models (the flat
structure, the constraint force algorithm's tables and last split), and what the constraints'
compiled path packs for a system on its engine (``Engine.constraint_plans``), never in a
module's table.
So two models never see each other's entries, and everything goes with the model."""

from __future__ import annotations

import ast
import gc
import weakref
from pathlib import Path

import numpy as np

import sko.constraints
import sko.engine
from sko.engine.layout import Flat, Structure, structure
from sko.engine.model import compiled_model
from sko.graphs import TreeDigraph
from sko.model import SKOModel

ENGINE = Path(sko.engine.__file__).parent
#: the packages checked, each with the prefix of its file names below (the engine's are bare)
PACKAGES = ((ENGINE, ""), (Path(sko.constraints.__file__).parent, "constraints/"))
#: module-level tables of the engine that are not caches of anything a model or system describes,
#: with the reason
REGISTRIES = {
    ("joint_registry.py", "REGISTRY"): "the joint types a user registers, by name (a registry, not a cache)",
    ("algorithms.py", "_FUNCTIONS"): "the module's own lazily made attributes (functions of nothing but their name)",
    ("requests.py", "_DRIVERS"): "the one-state drivers compiled per scalar type and result rank (code, not data of a model)",
    ("indexing.py", "_UNWRAPPED"): "the LLVM modules numba is lowering for the package's functions (empty between compilations)",
}
#: module-level memo decorators allowed, with the reason
MEMOS = {("cache.py", "stamp"): "the hash of the kernel sources, one per process"}


def _mutable(value) -> bool:
    """An empty container, or a call making one (``dict()``, ``weakref.WeakKeyDictionary()``…)."""
    if isinstance(value, (ast.Dict, ast.List, ast.Set)):
        return not (value.keys if isinstance(value, ast.Dict) else value.elts)
    if isinstance(value, ast.Call):
        name = getattr(value.func, "attr", getattr(value.func, "id", ""))
        return name in ("dict", "list", "set", "WeakKeyDictionary", "WeakValueDictionary", "OrderedDict", "defaultdict")
    return False


def _module_tables():
    for root, prefix in PACKAGES:
        yield from _tables(root, prefix)


def _tables(root: Path, prefix: str):
    for path in sorted(root.rglob("*.py")):
        tree, name = ast.parse(path.read_text()), prefix + path.relative_to(root).as_posix()
        for node in tree.body:
            value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
            targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
            if value is not None and _mutable(value):
                for target in targets:
                    if isinstance(target, ast.Name) and target.id != "__all__":
                        yield name, target.id
            if isinstance(node, ast.FunctionDef):
                for decorator in node.decorator_list:
                    called = decorator.func if isinstance(decorator, ast.Call) else decorator
                    if getattr(called, "attr", getattr(called, "id", "")) in ("lru_cache", "cache"):
                        yield name, "@" + node.name


def test_no_module_level_caches_in_the_engine():
    found = [(m, n) for m, n in _module_tables()
             if (m, n) not in REGISTRIES and not (n.startswith("@") and (m, n[1:]) in MEMOS)]
    assert not found, (f"module-level mutable tables in sko.engine or sko.constraints (put them on the object they "
                       f"describe): {found}")
    assert all(REGISTRIES.values()) and all(MEMOS.values())


def _chain(M2=None) -> SKOModel:
    tree = TreeDigraph.from_parents({"a": None, "b": "a"})
    return SKOModel(tree, phi={"b": np.eye(3)}, H={"a": [[1.0, 0.0, 0.0]], "b": [[0.0, 1.0, 0.0]]},
                    M={"a": np.eye(3), "b": np.diag([1.0, 2.0, 3.0]) if M2 is None else M2})


def test_two_models_of_one_tree_share_nothing():
    first, second = _chain(), _chain(np.diag([4.0, 5.0, 6.0]))
    a, b = compiled_model(first), compiled_model(second)
    assert a is not b and compiled_model(first) is a
    assert structure(first) is not structure(second)
    for cm, model in ((a, first), (b, second)):  # each its own numbers
        j = int(np.flatnonzero(cm.layout[:, Flat.BODY] == 1)[0])
        M = cm.data(np.dtype(np.float64))[cm.layout[j, Flat.M]:][:9].reshape(3, 3)
        np.testing.assert_array_equal(M, model.M["b"])


def test_with_blocks_models_share_the_structure_and_hold_their_numbers():
    first = _chain()
    blocks = [[None if X is None else X.copy() for X in xs]
              for xs in (first.weights_by_index, first.H_by_index, first.M_by_index)]
    blocks[2][1] = np.diag([7.0, 8.0, 9.0])
    for X in (X for xs in blocks for X in xs if X is not None):
        X.setflags(write=False)
    other = first.with_blocks(*blocks)
    assert structure(other) is structure(first) and first._derived[Structure] is structure(first)
    assert compiled_model(other) is not compiled_model(first)
    alone = SKOModel(first.tree, phi=dict(other.phi), H=dict(other.H), M=dict(other.M))  # its own structure
    np.testing.assert_array_equal(compiled_model(other).data(np.dtype(np.float64)),
                                  compiled_model(alone).data(np.dtype(np.float64)))


def test_each_scalar_type_has_its_own_buffer():
    cm = compiled_model(_chain())
    real, complex_ = cm.data(np.dtype(np.float64)), cm.data(np.dtype(np.complex128))
    assert real.dtype == np.float64 and complex_.dtype == np.complex128 and not np.shares_memory(real, complex_)
    np.testing.assert_array_equal(real, complex_.real)


def test_what_the_engine_derives_goes_with_the_model():
    model = _chain()
    cm = compiled_model(model)
    cm.data(np.dtype(np.float64))
    refs = weakref.ref(model), weakref.ref(cm), weakref.ref(structure(model))
    del model, cm
    gc.collect()
    assert all(ref() is None for ref in refs)


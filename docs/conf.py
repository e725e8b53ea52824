"""Sphinx configuration: the theory guide (MyST Markdown) and the API reference (autodoc)."""

import importlib.util
import sys
import types
from importlib import metadata

from sphinx.ext import autosummary

project = "sko"
author = "the sko developers"
try:
    release = metadata.version("sko-multibody")
except metadata.PackageNotFoundError:  # building from a source tree that is not installed
    release = "unknown"

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build"]
templates_path = ["_templates"]

# The theory guide: $…$ and $$…$$ math, tables, anchors for the headings it links to.
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3

# The API reference: one page per module, found recursively so new modules appear by themselves.
autosummary_generate = True
autosummary_imported_members = False
# Each object is documented once, in the module that defines it (not where a package re-exports it).
autodoc_default_options = {"members": True, "ignore-module-all": True, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "none"  # numpydoc renders the documented types; signatures stay readable
# Optional dependencies that are not installed are mocked, so the reference builds without them
# (installed ones are imported for real: a mock would hide what they decorate or define).
OPTIONAL = ("sympy", "matplotlib", "pinocchio", "mujoco", "example_robot_data", "numba")
autodoc_mock_imports = [name for name in OPTIONAL if importlib.util.find_spec(name) is None]



def _modules_first(name, *args, **kwargs):
    """Resolve ``name`` to a module when one of that name is loaded.

    A package that re-exports a function named like its submodule
    (``sko.algorithms.forward_dynamics``) shadows the submodule as an attribute; autosummary
    would then document the function in place of the module and its other members.
    """
    obj, parent, modname = _import_by_name(name, *args, **kwargs)
    module = sys.modules.get(name)
    if isinstance(module, types.ModuleType) and obj is not module:
        return module, None, name
    return obj, parent, modname


_import_by_name = autosummary._import_by_name
autosummary._import_by_name = _modules_first

numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks: set[str] = set()

html_theme = "alabaster"
html_title = "sko"

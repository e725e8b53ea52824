"""Sphinx configuration: the theory guide (MyST Markdown) and the API reference (autodoc)."""

import importlib.util
import re
import sys
import types
from importlib import metadata
from pathlib import Path

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


# Citations of the theory guide in docstrings link to its pages: ``SKO.md §11`` to the section
# (through the labels autosectionlabel gives every "## §N …" heading), ``RIGID.md`` to the page.
extensions.append("sphinx.ext.autosectionlabel")
autosectionlabel_prefix_document = True
autosectionlabel_maxdepth = 2
THEORY = Path(__file__).parent / "theory"
SECTIONS = {
    (path.stem, match.group(2)): match.group(1)
    for path in THEORY.glob("*.md")
    for match in re.finditer(r"^## (§(\d+)\b.*?)\s*$", path.read_text(encoding="utf-8"), re.MULTILINE)
}
GUIDE = re.compile(r"(?<![\w/`<])(SKO|RIGID|BODIES|SPARSE|CFA|EMBEDDING|DERIVATIVES|API)\.md(?:\s*§\s*(\d+)(?![\d.]))?(?![\w`])")


def _link_citations(app, what, name, obj, options, lines):
    literal_block = False
    for i, line in enumerate(lines):
        stripped = line.strip()
        if literal_block and stripped and not line.startswith((" ", "\t")):
            literal_block = False
        if not literal_block and not stripped.startswith(">>>"):
            lines[i] = GUIDE.sub(lambda m: _link(m, line), line)
        literal_block = literal_block or stripped.endswith("::")


def _link(match, line):
    if line[: match.start()].count("``") % 2:  # inside an inline literal
        return match.group(0)
    file, section = match.group(1), match.group(2)
    title = SECTIONS.get((file, section))
    if title is None:
        return f":doc:`{file}.md </theory/{file}>`" + (match.group(0)[len(file) + 3:] if section else "")
    return f":ref:`{file}.md §{section} <theory/{file}:{title}>`"


def setup(app):
    app.connect("autodoc-process-docstring", _link_citations, priority=400)

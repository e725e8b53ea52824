"""The documentation (theory guide and API reference) builds with warnings as errors.

This is how CI builds the docs: ``.ci/run`` installs ``.[test]``, which includes the docs
toolchain, and runs the test suite. The sources are copied so the build leaves the repository
untouched (autosummary writes the generated API pages next to the sources).
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_the_docs_build_without_warnings(tmp_path):
    for module in ("sphinx", "numpydoc", "myst_parser"):
        pytest.importorskip(module, reason=f"{module} is not installed: pip install -e '.[docs]'")
    source = tmp_path / "docs"
    shutil.copytree(DOCS, source, ignore=shutil.ignore_patterns("_build", "generated"))
    build = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         "-d", str(tmp_path / "doctrees"), str(source), str(tmp_path / "html")],
        capture_output=True, text=True, timeout=600,
    )
    assert build.returncode == 0, build.stderr[-6000:]
    html = tmp_path / "html"
    for page in ("index.html", "theory/SKO.html", "api/generated/sko.algorithms.forward_dynamics.html"):
        assert (html / page).is_file(), page
    page = (html / "api/generated/sko.algorithms.forward_dynamics.html").read_text(encoding="utf-8")
    assert "sko.algorithms.forward_dynamics.forward_dynamics" in page  # the module, not the re-export
    assert 'href="../../theory/SKO.html#ab-forward-dynamics' in page  # "SKO.md §11" links to §11

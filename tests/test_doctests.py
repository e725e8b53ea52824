"""The docstring examples of every module of the installed ``sko`` package, run under the import
names users see (``sko.graphs.tree``, not a top-level ``graphs.tree``)."""

import doctest
import importlib
import pkgutil

import pytest

import sko

MODULES = sorted(m.name for m in pkgutil.walk_packages(sko.__path__, "sko.") if not m.name.endswith("__main__"))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    for test in finder.find(module, name):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"

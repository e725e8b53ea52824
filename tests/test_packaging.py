"""The installed layout: one import package ``sko`` whose subpackages map onto the repository's
top-level folders; no top-level ``graphs`` or ``algorithms`` is installed."""

import pathlib
import pytest

tomllib = pytest.importorskip("tomllib")

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _setuptools() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_every_package_folder_is_installed_under_sko() -> None:
    config = _setuptools()
    mapping = config["package-dir"]
    found = set()
    for package, folder in mapping.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((package, *relative)))
    # a subpackage found under one mapping but owned by another mapping belongs to that one
    assert found == set(config["packages"])
    assert all(p == "sko" or p.startswith("sko.") for p in config["packages"])


def test_subpackages_import_under_sko() -> None:
    import sko.algorithms
    import sko.graphs

    assert pathlib.Path(sko.graphs.__file__).parent == ROOT / "graphs"
    assert pathlib.Path(sko.algorithms.__file__).parent == ROOT / "algorithms"

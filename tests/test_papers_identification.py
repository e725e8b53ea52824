"""The identification example on a short run: base parameters within three standard errors, a
consistent estimate, the unseen period predicted to the noise level, a labelled figure."""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")

from papers import identification_arm  # noqa: E402
from tests.test_papers_output import _check_figure, saved_figures  # noqa: E402, F401  (the fixture)


def test_identification_example(tmp_path, saved_figures):  # noqa: F811
    numbers = identification_arm.run(samples=30, harmonics=3, iterations=10, plot=True, output=tmp_path)
    assert numbers["within_three_standard_errors"] == numbers["rank"]
    assert numbers["smallest_pseudo_inertia_eigenvalue"] > 0
    assert numbers["prediction_rms_over_noise"] < 1.5
    assert numbers["figure"] == tmp_path / "identification_arm.png" and numbers["figure"].is_file()
    assert len(saved_figures) == 1
    _check_figure(saved_figures[0])

"""The paper scripts say where their figures go, label the axes of every plot, keep legends off
the curves, print progress on long runs (quietly under tests) and stop with one line when
matplotlib is missing."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from matplotlib.figure import Figure  # noqa: E402

from papers import featherstone_ch6, flexible_arm, jain_part2, space_robot_cfa  # noqa: E402
from papers.common import OUTPUT, Progress, pyplot  # noqa: E402
from sko.errors import MissingDependencyError  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def saved_figures(monkeypatch):
    """Every figure a script saves, inspected before it is closed."""
    figures = []
    original = Figure.savefig

    def capture(self, *args, **kwargs):
        figures.append(self)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", capture)
    return figures


def _check_figure(fig) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        assert ax.get_ylabel(), f"an axis without a y label in {fig.get_suptitle() or ax.get_title()!r}"
        if ax.get_subplotspec() is None or ax.get_subplotspec().is_last_row():
            assert ax.get_xlabel(), f"an axis without an x label in {fig.get_suptitle() or ax.get_title()!r}"
        legend = ax.get_legend()
        if legend is not None:
            assert not legend.get_window_extent(renderer).overlaps(ax.get_window_extent(renderer)), \
                f"the legend of {ax.get_ylabel()!r} lies on the plot and may hide a curve"


def test_spy_plots_have_axis_labels(tmp_path, saved_figures, capsys):
    jain_part2.main(tmp_path)
    featherstone_ch6.main(tmp_path)
    assert len(saved_figures) == 4
    for fig in saved_figures:
        _check_figure(fig)
    out = capsys.readouterr().out
    assert f"in {tmp_path}" in out and f"figure: {tmp_path / 'featherstone_fig6_2.png'}" in out


def test_simulation_figures_label_axes_and_keep_legends_off_the_curves(tmp_path, saved_figures):
    numbers = space_robot_cfa.run(horizon=0.01, plot=True, output=tmp_path)
    assert numbers["figure"] == tmp_path / "space_robot_cfa.png"
    numbers = flexible_arm.run(horizon=0.01, dt=2e-3, plot=True, output=tmp_path)
    assert numbers["figure"] == tmp_path / "flexible_arm.png"
    assert len(saved_figures) == 2
    for fig in saved_figures:
        _check_figure(fig)


def test_progress_prints_each_tenth_only_when_enabled():
    stream = io.StringIO()
    report = Progress("run", 40, stream=stream)
    for i in range(1, 41):
        report.step(i)
    lines = stream.getvalue().splitlines()
    assert [line.split()[1] for line in lines] == [f"{p}%" for p in range(10, 101, 10)]
    quiet = io.StringIO()
    silent = Progress("run", 40, enabled=False, stream=quiet)
    for i in range(1, 41):
        silent.step(i)
    assert quiet.getvalue() == ""


def test_scripts_print_progress_and_the_figure_path(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "papers.space_robot_cfa", "--horizon", "0.02", "--output", str(tmp_path)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "CFA-driven simulation, every method timed: 100% (10/10)" in proc.stderr
    assert f"figure: {tmp_path / 'space_robot_cfa.png'}" in proc.stdout
    assert (tmp_path / "space_robot_cfa.png").stat().st_size > 10_000
    assert OUTPUT == ROOT / "papers" / "output"


def test_missing_matplotlib_is_one_line_naming_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(MissingDependencyError, match=r'matplotlib is needed for x: pip install "sko-multibody\[plot\]"'):
        pyplot("x")
    code = "import sys, runpy\nsys.modules['matplotlib'] = None\nsys.argv[1:] = [sys.argv[1]]\n" \
           "runpy.run_module('papers.jain_part2', run_name='__main__')\n"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == \
        'error: matplotlib is needed for the spy plots of papers.jain_part2: pip install "sko-multibody[plot]"'

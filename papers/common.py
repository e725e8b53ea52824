"""What the paper reproductions share: where figures go, matplotlib on demand, progress lines.

* Figures go to :data:`OUTPUT` (``papers/output/`` of the repository) unless a script is given
  another folder; every script prints the paths it wrote.
* :func:`pyplot` imports matplotlib (non-interactive backend) or stops with one line naming the
  ``[plot]`` extra.
* :class:`Progress` prints a line to stderr at every tenth of a long loop, with the elapsed time;
  it is silent unless enabled (the scripts enable it, their functions called from tests do not).
* :func:`run_main` runs a script's ``main`` and turns the project's errors into one line on
  stderr and exit status 2.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

from sko.graphs.errors import SKOError
from sko.optional import require

__all__ = ["OUTPUT", "pyplot", "Progress", "run_main"]

#: The default folder of the figures.
OUTPUT = Path(__file__).resolve().parent / "output"


def pyplot(feature: str):
    """``matplotlib.pyplot`` with the Agg backend; ``feature`` names what needs it in the error."""
    matplotlib = require("matplotlib", feature)
    matplotlib.use("Agg")
    return require("matplotlib.pyplot", feature)


class Progress:
    """``label: 30% (120/400) 12.3 s`` on stderr at every tenth of ``total`` steps, when enabled."""

    def __init__(self, label: str, total: int, enabled: bool = True, stream=None):
        self.label, self.total, self.enabled = label, max(int(total), 1), enabled
        self.stream = sys.stderr if stream is None else stream
        self._start, self._next = time.perf_counter(), 1

    def step(self, done: int) -> None:
        """Report that ``done`` of ``total`` steps are finished (prints at each tenth)."""
        if not self.enabled or 10 * done < self._next * self.total:
            return
        while 10 * done >= self._next * self.total:
            self._next += 1
        elapsed = time.perf_counter() - self._start
        self.stream.write(f"{self.label}: {100 * done // self.total:3d}% ({done}/{self.total}) {elapsed:.1f} s\n")
        self.stream.flush()


def run_main(main: Callable[[], object]) -> None:
    """Run ``main()``; a project error (a missing optional dependency, bad input) becomes one line
    on stderr and exit status 2."""
    try:
        main()
    except SKOError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)

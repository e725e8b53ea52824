"""Model factories for the sweep tests that worker processes import by name."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path


def arm_whose_worker_dies_once():
    """``arm7``, except that the first worker process to build it (the marker file named by
    ``SKO_TEST_DEATH_MARKER`` is absent) dies at once, as a worker lost mid-sweep."""
    from sko.examples.rigid import arm7

    marker = Path(os.environ["SKO_TEST_DEATH_MARKER"])
    if multiprocessing.parent_process() is not None and not marker.exists():
        marker.touch()
        os._exit(1)
    return arm7()


def arm7_on_the_moon():
    """``arm7`` under the Moon's gravity: the same dimensions, another model."""
    from sko.examples.rigid import arm7

    return arm7(gravity=[0.0, 0.0, -1.62])

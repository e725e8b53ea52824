import os

from hypothesis import HealthCheck, settings

settings.register_profile("default", max_examples=60, deadline=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=1000, deadline=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def pytest_xdist_auto_num_workers(config) -> int:
    """``-n auto`` (the suite's default): one worker per core, at most four. Each worker holds its
    own compiled kernels (about half a gigabyte) and, on an empty cache, compiles those its first
    files need; past four workers that duplicated work outweighs what the extra cores run."""
    return max(1, min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))

"""Comparison helpers whose tolerances scale with the data."""

from __future__ import annotations

import numpy as np

EPS = np.finfo(float).eps


def assert_close(actual, expected, rtol: float = 1e-9, scale: float | None = None) -> None:
    """``max |actual − expected| <= rtol · scale``, ``scale`` defaulting to the largest entry of
    either side (at least 1e-300), so the test is relative to the size of the data."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, f"shape {actual.shape} != {expected.shape}"
    if scale is None:
        scale = max(np.abs(actual).max(initial=0.0), np.abs(expected).max(initial=0.0), 1e-300)
    error = np.abs(actual - expected).max(initial=0.0)
    assert error <= rtol * scale, f"max error {error:.3e} > {rtol:.1e} x scale {scale:.3e}"

"""The shared input checks of :mod:`sko.graphs.arrays` (re-exported by :mod:`sko.arrays`)."""

import numpy as np
import pytest

from sko.graphs.arrays import check_psd, check_spd, checked_array, numeric_array, raise_not_pd
from sko.graphs.errors import DimensionError, NonFiniteError, NotPositiveDefiniteError, SKOError


def test_checked_array_accepts_several_dimensions_and_names_the_body():
    assert checked_array([[1, 2]], (1, 2), "x").shape == (1, 2)
    with pytest.raises(DimensionError, match=r"weight of body 'b' must be 1 or 2-D, got shape \(1, 1, 1\)"):
        checked_array(np.ones((1, 1, 1)), (1, 2), "weight", "b")
    with pytest.raises(NonFiniteError, match="x"):
        checked_array([np.inf], 1, "x")


def test_numeric_array_copies_only_when_asked():
    A = np.eye(2)
    assert numeric_array(A, "A", copy=False) is A
    assert numeric_array(A, "A") is not A
    assert numeric_array([True], "b").dtype == float
    with pytest.raises(DimensionError, match="dtype"):
        numeric_array(["x"], "s")


def test_psd_check_names_the_matrix_and_raises_the_callers_error():
    class CallerError(SKOError):
        pass

    check_psd(np.diag([1.0, 0.0]), "K")  # semidefinite is enough
    check_psd(np.zeros((0, 0)), "K")
    with pytest.raises(NotPositiveDefiniteError, match="K is not positive semidefinite: smallest eigenvalue -1"):
        check_psd(np.diag([1.0, -1.0]), "K")
    with pytest.raises(CallerError, match="K is not symmetric"):
        check_psd(np.array([[1.0, 1.0], [0.0, 1.0]]), "K", error=CallerError)
    check_psd(np.array([[1.0, 1e-10], [0.0, 1.0]]), "K", 1e-12, symmetry_rtol=1e-9)
    with pytest.raises(NotPositiveDefiniteError):
        check_psd(np.diag([1.0, -1e-11]), "K", 1e-12, symmetry_rtol=1e-9)


def test_not_pd_report_survives_non_finite_matrices():
    with pytest.raises(NotPositiveDefiniteError, match=r"D of body 'k' \(shape \(2, 2\)\) .* smallest eigenvalue nan"):
        raise_not_pd(np.full((2, 2), np.inf), "D", "k")
    with pytest.raises(NotPositiveDefiniteError, match="smallest eigenvalue -2"):
        check_spd(np.diag([1.0, -2.0]), "M", "k")


def test_symbolic_entries_are_checked_without_numeric_evaluation():
    import sympy

    from sko.graphs.arrays import checked_array, is_numeric
    from sko.graphs.errors import NonFiniteError

    x = sympy.Symbol("x")
    A = np.array([[x, sympy.Rational(1, 3)], [sympy.sqrt(2), 1]], dtype=object)
    assert not is_numeric(A) and is_numeric(np.array([[sympy.sqrt(2)]], dtype=object))
    checked_array(A, 2, "A")
    for bad in (sympy.oo * x, x + sympy.zoo, sympy.nan):
        with pytest.raises(NonFiniteError):
            checked_array(np.array([[x, bad]], dtype=object), 2, "A")

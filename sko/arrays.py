"""Input checks shared by every public entry point (defined in :mod:`sko.graphs.arrays`, which the
digraph layer uses too; re-exported here for the SKO layer)."""

from sko.graphs.arrays import (check_full_row_rank, check_psd, check_spd, checked_array, checked_count,
                               checked_horizon, checked_scalar,
                               is_numeric, numeric_array, plain_numbers_as_floats, result_dtype, scaled_norm,
                               unit_vector)

__all__ = ["checked_array", "numeric_array", "checked_scalar", "checked_count", "checked_horizon", "scaled_norm", "unit_vector", "is_numeric",
           "check_spd", "check_psd", "check_full_row_rank", "result_dtype",
           "plain_numbers_as_floats"]

"""A toy request kernel shared by the tests that add a request to the catalogue."""

from __future__ import annotations

from sko.engine.jit import kernel
from sko.engine.request_views import fill_arena, request_views
from sko.engine.state_kernels import Row, Terms


@kernel
def kinetic_energy_kernel(w, x, out):
    """``[½ Σ 𝒱*(k) M(k) 𝒱(k)]`` from the arena of the request vector ``w``."""
    words, rows, layout, roff, reals, arena, ws, at = request_views(w)
    status = fill_arena(words, rows, reals, arena, Terms.MOTION)
    if status >= 0:
        return status
    for k in range(rows.shape[0]):
        m, vo, mo = rows[k, Row.NODE_DIM], rows[k, Row.VELOCITY], rows[k, Row.M]
        for i in range(m):
            for j in range(m):
                out[0] += 0.5 * arena[vo + i] * arena[mo + i * m + j] * arena[vo + j]
    return -1

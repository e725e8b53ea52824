"""The compiled engine: numba kernels of the systems' requests."""

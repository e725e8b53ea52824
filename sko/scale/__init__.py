"""Computation at scale: requests over many states on Dask, into result stores that know what they
hold.

* :mod:`sko.scale.sweep`: :func:`~sko.scale.sweep.sweep` (given states) and
  :func:`~sko.scale.sweep.sample` (random states, ``sko sample``);
* :mod:`sko.scale.stores`: the Zarr stores they write, resumable and checked;
* :mod:`sko.scale.identity`: :func:`~sko.scale.identity.model_identity`, the hash a store records.

Needs the ``scale`` extra (dask, distributed, zarr) to run a sweep; importing does not.
"""

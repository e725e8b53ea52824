"""A sweep of forward dynamics over many states: a Dask ``LocalCluster`` of worker processes
against the in-process batch on the same cores (``sko.scale.sweep``).

The model is ``sko.examples.rigid:arm7`` (seven revolute joints); states are normal random
numbers. The in-process batch is one call of ``forward_dynamics`` on all states with numba's
threads on every core; the sweep runs chunks of ``--chunk`` states as tasks on a local cluster of
one worker process per core, each with one thread and one numba thread (started, and the kernels
loaded, before timing).
Each figure is the median of ``--rounds`` runs; the ratio is the sweep's throughput over the
batch's (target ≥ 0.8).

Run from the repository root::

    python benchmarks/bench_sweep.py [--states N] [--chunk N] [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

MODEL = "sko.examples.rigid:arm7"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--states", type=int, default=1_000_000)
    parser.add_argument("--chunk", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    from distributed import Client, LocalCluster

    from sko.scale.sweep import sweep, system_of

    system = system_of(MODEL)
    rng = np.random.default_rng(0)
    Q, V, T = rng.normal(size=(3, args.states, system.nv))
    cores = os.cpu_count() or 1
    with LocalCluster(n_workers=cores, threads_per_worker=1, processes=True, dashboard_address=None,
                      env={"NUMBA_NUM_THREADS": "1"}) as cluster, \
            Client(cluster) as client:
        sweep(MODEL, "forward_dynamics", Q[:100], V[:100], T[:100], chunk=50, client=client)  # workers warm
        system.forward_dynamics(Q[:100], V[:100], T[:100])
        batch, dask_ = [], []
        for _ in range(args.rounds):
            start = time.perf_counter()
            ours = system.forward_dynamics(Q, V, T)
            batch.append(time.perf_counter() - start)
            start = time.perf_counter()
            swept = sweep(MODEL, "forward_dynamics", Q, V, T, chunk=args.chunk, client=client)
            dask_.append(time.perf_counter() - start)
        assert np.array_equal(ours, swept)
    b, d = float(np.median(batch)), float(np.median(dask_))
    print(f"{args.states} forward dynamics of arm7 on {cores} cores: in-process batch {b:.2f} s "
          f"({args.states / b / 1e6:.2f} M states/s), Dask LocalCluster {d:.2f} s ({args.states / d / 1e6:.2f} M states/s); "
          f"throughput ratio {b / d:.2f} (target ≥ 0.8)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

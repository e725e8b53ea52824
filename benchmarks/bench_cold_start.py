"""First use: the wall time and peak memory of a fresh process with nothing cached, then warm.

Every step runs in a new Python process with its own ``NUMBA_CACHE_DIR``: cold (an empty
directory) and warm (the same command again on the directory the cold run filled). Wall time is
the whole process, interpreter start-up and imports included; CPU time (user and system) and
peak RSS are the process's with the processes it waited for (``wait4``: ``sko verify`` and ``sko
compile`` compile in a second process too). CPU time is what a loaded machine inflates least. The steps (talos_reduced from example-robot-data, floating base):

(a) ``import sko``;
(b) the first inverse dynamics, forward dynamics and mass matrix, float64 then complex128 (each
    call's own seconds are printed too);
(c) the first batched forward dynamics (1024 states);
(d) ``sko verify`` (every check on every built-in model);
(e) the first batched forward dynamics after ``sko verify`` (on the cache it left);
(f) ``sko compile`` (the whole cache ahead of time, two worker processes on two cores);
(g) the first derivatives: inverse then forward dynamics, compiled analytic then complex step.

Run from the repository root::

    python benchmarks/bench_cold_start.py [--skip STEP …]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_TALOS = """
import time, json
import numpy as np
from sko.io import load_urdf
from tests.rigid.pinocchio_map import robots_dir
system = load_urdf(str(robots_dir() / "talos_data/robots/talos_reduced.urdf"), floating_base=True)
rng = np.random.default_rng(0)
out = {}
def timed(name, call):
    start = time.perf_counter()
    call()
    out[name] = time.perf_counter() - start
"""

SCRIPTS = {
    "a": ("import sko", "import sko\n"),
    "b": ("first ID, FD, ℳ, float64 then complex128", _TALOS + """
q = system.random_configuration(rng)
v, a = rng.normal(size=(2, system.nv))
for dtype in (np.float64, np.complex128):
    Q, V, A = (x.astype(dtype) for x in (q, v, a))
    timed(f"ID {np.dtype(dtype)}", lambda: system.inverse_dynamics(Q, V, A))
    timed(f"FD {np.dtype(dtype)}", lambda: system.forward_dynamics(Q, V, A))
    timed(f"M {np.dtype(dtype)}", lambda: system.mass_matrix(Q))
print(json.dumps(out))
"""),
    "c": ("first batched FD (1024 states)", _TALOS + """
Q = np.array([system.random_configuration(rng) for _ in range(1024)])
V, T = rng.normal(size=(2, 1024, system.nv))
timed("batch FD", lambda: system.forward_dynamics(Q, V, T))
print(json.dumps(out))
"""),
    "d": ("sko verify", None),
    "g": ("first derivatives: analytic, complex step", _TALOS + """
q = system.random_configuration(rng)
v, a = rng.normal(size=(2, system.nv))
for method in ("analytic", "complex_step"):
    timed(f"∂ID {method}", lambda: system.inverse_dynamics_derivatives(q, v, a, method=method))
    timed(f"∂FD {method}", lambda: system.forward_dynamics_derivatives(q, v, a, method=method))
print(json.dumps(out))
"""),
    "f": ("sko compile", None),
}


def run(step: str, cache: Path) -> dict:
    """Run a step in a fresh process on ``cache``: ``{"wall", "rss", "calls"}``."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    if step in ("d", "f"):
        command = [sys.executable, "-c", "import sys; from sko.cli import main; sys.exit(main(sys.argv[1:]))",
                   "verify" if step == "d" else "compile"] + (["--summary"] if step == "d" else ["--quiet"])
    else:
        command = [sys.executable, "-c", SCRIPTS[step][1]]
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out = process.stdout.read()
    err = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise RuntimeError(f"step {step} failed ({process.returncode}):\n{out[-2000:]}\n{err[-2000:]}")
    calls = {}
    if step in ("b", "c", "g"):
        calls = json.loads(out.strip().splitlines()[-1])
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss": usage.ru_maxrss / 1e6, "calls": calls}


def _cells(result: dict) -> str:
    return f"{result['wall']:7.1f} s {result['cpu']:7.1f} s {result['rss']:5.2f} GB"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip", action="append", default=[], choices=sorted(set("abcdefg")), help="leave a step out")
    args = parser.parse_args(argv)
    print(f"{'step':44} {'cold (empty cache): wall, CPU, RSS':>30} {'warm':>30}")
    root = Path(tempfile.mkdtemp(prefix="sko-cold-start-"))
    try:
        for step in "abcdefg":
            if step in args.skip:
                continue
            if step == "e":  # batched FD on the cache sko verify left
                if "d" in args.skip:
                    continue
                after = run("c", root / "d")
                print(f"{'(e) first batched FD after sko verify':44} {_cells(after):>30}")
                continue
            cache = root / step
            cache.mkdir()
            cold, warm = run(step, cache), run(step, cache)
            label = f"({step}) {SCRIPTS[step][0]}"
            print(f"{label:44} {_cells(cold):>30} {_cells(warm):>30}", flush=True)
            for name, seconds in cold["calls"].items():
                print(f"{'':6}{name:38} {seconds:7.1f} s {'':18} {warm['calls'][name]:7.3f} s")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

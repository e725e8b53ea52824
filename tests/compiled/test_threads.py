"""How the batches use numba's threads: OpenMP's waiting threads sleep unless the user chose
otherwise (:mod:`sko.engine.jit`), and a batch gives the same numbers on the calling thread
(at most :data:`~sko.engine.requests.SERIAL` states) as in parallel chunks."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from sko.engine.requests import CHUNK, SERIAL
from sko.examples.rigid import arm7

POLICY = "import os, sko.engine.jit; print(os.environ['OMP_WAIT_POLICY'])"


@pytest.mark.parametrize("given, expected", [(None, "PASSIVE"), ("ACTIVE", "ACTIVE")])
def test_waiting_threads_sleep_unless_the_user_chose(given, expected):
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if given is not None:
        env["OMP_WAIT_POLICY"] = given
    done = subprocess.run([sys.executable, "-c", POLICY], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == expected


@pytest.mark.parametrize("size", [1, SERIAL, SERIAL + 1, 3 * CHUNK + 5])
def test_serial_and_parallel_batches_equal_their_states_bit_for_bit(size):
    system = arm7()
    rng = np.random.default_rng(size)
    Q = np.array([system.random_configuration(rng) for _ in range(size)])
    V, A = rng.normal(size=(2, size, system.nv))
    for call in (system.inverse_dynamics, system.joint_torque_regressor):
        batch = call(Q, V, A)
        for s in range(size):
            np.testing.assert_array_equal(batch[s], call(Q[s], V[s], A[s]))

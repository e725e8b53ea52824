"""How the batches use numba's threads: OpenMP's waiting threads sleep unless the user chose
otherwise (:mod:`sko.engine.jit`); a batch in parallel chunks gives each state's numbers bit for
bit, and a state whose result overflows is found in any chunk."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from sko.engine.requests import CHUNK
from sko.examples.rigid import arm7
from sko.graphs.errors import NonFiniteError

POLICY = "import os, sko.engine.jit; print(os.environ['OMP_WAIT_POLICY'])"


@pytest.mark.parametrize("given, expected", [(None, "PASSIVE"), ("ACTIVE", "ACTIVE")])
def test_waiting_threads_sleep_unless_the_user_chose(given, expected):
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if given is not None:
        env["OMP_WAIT_POLICY"] = given
    done = subprocess.run([sys.executable, "-c", POLICY], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == expected


@pytest.mark.parametrize("size", [1, CHUNK, 3 * CHUNK + 5])
def test_batches_equal_their_states(size):
    """A batch on the threads equals its states: the regressor bit for bit, inverse dynamics (in
    the lanes) to rounding."""
    system = arm7()
    rng = np.random.default_rng(size)
    Q = np.array([system.random_configuration(rng) for _ in range(size)])
    V, A = rng.normal(size=(2, size, system.nv))
    assert system._engine._lanes()  # its inverse dynamics four states at once: equal to rounding
    for call in (system.inverse_dynamics, system.joint_torque_regressor):
        batch = call(Q, V, A)
        for s in range(size):
            single = call(Q[s], V[s], A[s])
            if call == system.inverse_dynamics:
                np.testing.assert_allclose(batch[s], single, rtol=0, atol=1e-13 * np.abs(single).max())
            else:
                np.testing.assert_array_equal(batch[s], single)


@pytest.mark.parametrize("size", [2, 3 * CHUNK + 5])
def test_an_overflow_in_a_batch_is_an_error_naming_its_state(size):
    system = arm7()
    Q = np.array([system.random_configuration(s) for s in range(size)])
    V = np.zeros((size, system.nv))
    V[size - 2] = 1e200  # finite input, overflowing result: found by the batch kernel, named by the reference path
    for call in (lambda: system.inverse_dynamics(Q, V, V), lambda: system.joint_torque_regressor(Q, V, V)):
        with pytest.raises(NonFiniteError, match=f"state {size - 2}"):
            call()

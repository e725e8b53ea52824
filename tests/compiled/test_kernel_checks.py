"""A researcher's state kernel is checked as its at_state is (sko.engine.state_kernels, *Checks*;
sko.engine.kernel_checks): each mistake of tests/compiled/malformed_kernels.py is an error of the
project's own type naming the body that made it (the second of two beads of one type), its
kernel and the field, never a crash, a silent fallback or a wrong answer; the library's bodies
are not checked per state."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sko.bodies import BodyError
from sko.engine.state_kernels import KernelError, Row, StateKernel
from sko.examples import example_systems, verify_models
from sko.simulation.rollout import rollout
from tests.compiled import malformed_kernels as mk

ROOT = Path(__file__).resolve().parents[2]


def _state(system, s: float = 0.3):
    q = np.array([0.4, 0.2, s])
    return q, np.array([0.5, -0.3, 0.8]), np.array([0.1, 0.2, -0.3])


def _first_call(system):
    q, v, tau = _state(system)
    return system.forward_dynamics(q, v, tau)


def _names_bead2(exc: pytest.ExceptionInfo, *words: str) -> None:
    message = str(exc.value)
    assert "'bead2'" in message and "'bead'" not in message.replace("'bead2'", ""), message
    for word in words:
        assert word in message, message


@pytest.mark.parametrize("variant, returned", [("returns_none", "none"), ("returns_one", "int64"),
                                               ("returns_float", "float64")])
def test_a_kernel_returning_anything_but_a_bool_is_refused_not_a_crash(variant, returned):
    code = (f"from tests.compiled import malformed_kernels as mk\n"
            f"from tests.compiled.test_kernel_checks import _first_call\n"
            f"from sko.engine.state_kernels import KernelError\n"
            f"try:\n    _first_call(mk.system_with(mk.{variant}))\n"
            f"except KernelError as exc:\n    print('refused:', exc)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "refused: body 'bead2'" in done.stdout and f"returns {returned}" in done.stdout, done.stdout


@pytest.mark.parametrize("flag", ["own_frame_identity", "checks", "calls_hinge", "rates"])
def test_a_kernel_flag_that_is_not_a_bool_is_refused_naming_the_kernel(flag):
    """``rates="no"`` would have been true: the kernel called with ``RATES`` where it writes its
    outputs only at ``MOTION``."""
    def bead(arena, row, reals, terms, constants):
        return True

    with pytest.raises(BodyError, match=f"state kernel 'bead': {flag} must be True or False, got 'no'"):
        StateKernel(bead, name="bead", **{flag: "no"})


def test_constants_shorter_than_the_kernel_declares_are_refused_at_build():
    system = mk.system_with(mk.DECLARED, packed=np.array([0.3, 4.0, 0.0, 0.1, -0.8, 0.0, 0.0]))
    with pytest.raises(KernelError) as exc:
        _first_call(system)
    _names_bead2(exc, "7 constants", "reads 8")


def test_a_kernel_reading_past_undeclared_constants_is_refused():
    with pytest.raises(KernelError) as exc:
        _first_call(mk.system_with(mk.reads_past))
    _names_bead2(exc, "reads past the 8 constants")


@pytest.mark.parametrize("variant, words", [
    ("asymmetric_mass", ("inertia M", "not symmetric")),
    ("indefinite_mass", ("inertia M", "not positive definite")),
    ("zero_joint_map", ("joint map H", "rank")),
    ("not_finite", ("b with a number that is not finite",)),
    ("writes_past", ("writes outside its body's entries", "of body 'pendulum'")),
])
def test_a_kernel_writing_a_bad_state_is_refused_naming_the_field(variant, words):
    system = mk.system_with(getattr(mk, variant))
    with pytest.raises(KernelError) as exc:
        _first_call(system)
    _names_bead2(exc, getattr(mk, variant).name, *words)
    with pytest.raises(KernelError):  # and at every later call, never a fallback
        system.mass_matrix(_state(system)[0])


def test_a_kernel_skipping_an_output_its_requests_read_at_a_lower_level_is_refused():
    """The mass matrix asks for Terms.STRUCTURE: a kernel leaving E unwritten there is refused at
    validation, though it writes everything when asked for every output."""
    with pytest.raises(KernelError) as exc:
        _first_call(mk.system_with(mk.skips_E_at_structure))
    _names_bead2(exc, "does not write", "Terms.STRUCTURE")


def test_a_kernel_declaring_rates_that_leaves_a_velocity_term_is_refused():
    """``rates=True`` promises that at Terms.RATES (the last call's q, other velocities) only what
    depends on q alone may be left: a kernel leaving b there would give wrong derivatives."""
    with pytest.raises(KernelError) as exc:
        _first_call(mk.system_with(mk.keeps_b_at_rates))
    _names_bead2(exc, "rates=True", "writes b at Terms.RATES")


def test_a_kernel_reading_its_scratch_before_writing_it_is_refused():
    """Its answers would depend on what the last call left in the scratch."""
    with pytest.raises(KernelError) as exc:
        _first_call(mk.system_with(mk.accumulates_in_scratch, second=mk.ScratchBead))
    _names_bead2(exc, "reads its scratch before writing it", "M")


def test_a_kernel_indexing_past_the_arena_is_refused_not_a_crash():
    """It runs bounds-checked first: the wild write is an IndexError named, not a write past the
    arena's memory."""
    with pytest.raises(KernelError) as exc:
        _first_call(mk.system_with(mk.writes_far_past, second=mk.ScratchBead))
    _names_bead2(exc, "IndexError")


def test_a_missing_own_frame_record_is_refused():
    system = mk.system_with(mk.unframed_state, second=mk.FramedBead, first=mk.FramedBead)
    with pytest.raises(KernelError) as exc:
        _first_call(system)
    _names_bead2(exc, "does not write the record of its own frame")


def test_the_good_framed_bead_is_accepted_and_equals_its_at_state():
    from sko.engine import use_backend

    system = mk.system_with(mk.framed_state, second=mk.FramedBead, first=mk.FramedBead)
    q, v, tau = _state(system)
    fast = system.forward_dynamics(q, v, tau)
    with use_backend("reference"):
        slow = system.forward_dynamics(q, v, tau)
    np.testing.assert_allclose(fast, slow, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("call", ["one", "batch", "direct_mass"])
def test_a_nan_at_a_later_state_names_the_body_and_field_not_a_fallback(call):
    system = mk.system_with(mk.not_finite_far)
    _first_call(system)  # validated at random states, where it is finite
    q, v, tau = _state(system, s=6.0)
    with pytest.raises(KernelError) as exc:
        if call == "one":
            system.forward_dynamics(q, v, tau)
        elif call == "batch":
            system.forward_dynamics(np.array([_state(system)[0], q]), np.array([v, v]), np.array([tau, tau]))
        else:
            system.mass_matrix(q)
    _names_bead2(exc, "b with a number that is not finite")
    if call == "batch":
        assert "state 1 of the batch" in str(exc.value)


@pytest.mark.parametrize("bead", [mk.KernelBead, mk.SpringlessBead])
def test_a_nan_in_a_rollout_is_the_kernel_fault_not_a_divergence(bead):
    system = mk.system_with(mk.not_finite_far, second=bead, first=bead)
    q, v, _ = _state(system, s=6.0)
    done = rollout(system, q, v, dt=1e-3, steps=3)
    assert list(done.failed) == [0]
    error = done.errors[0]
    assert isinstance(error, KernelError) and "diverges" not in str(error)
    assert "body 'bead2'" in str(error) and "b with a number that is not finite" in str(error)


def test_an_exception_in_a_kernel_keeps_its_message():
    system = mk.system_with(mk.raises_far)
    q, v, tau = _state(system, s=6.0)
    with pytest.raises(KernelError) as exc:
        system.forward_dynamics(q, v, tau)
    _names_bead2(exc, "raised ValueError: the bead left its wire")
    assert isinstance(exc.value.__cause__, ValueError)


def test_a_kernel_rejecting_what_its_at_state_accepts_names_the_body():
    system = mk.system_with(mk.rejects_far)
    q, v, tau = _state(system, s=6.0)
    with pytest.raises(KernelError) as exc:
        system.inverse_dynamics(q, v, tau)
    _names_bead2(exc, "rejected a state its at_state accepts")
    with pytest.raises(KernelError) as exc:
        system.mass_matrix(np.array([_state(system)[0], q]))
    _names_bead2(exc, "state 1 of the batch: the compiled state of body 'bead2'")


def test_a_kernel_of_the_wrong_signature_is_refused():
    with pytest.raises(KernelError) as exc:
        _first_call(mk.system_with(mk.three_parameters))
    _names_bead2(exc, "three_parameters", "does not compile")


def test_a_kernel_that_does_not_type_for_complex_states_is_refused_on_complex_states():
    system = mk.system_with(mk.real_square_root)
    q, v, tau = _state(system)
    system.forward_dynamics(q, v, tau)  # float64: fine
    with pytest.raises(KernelError) as exc:
        system.mass_matrix(q + 1e-20j)
    _names_bead2(exc, "real_square_root", "complex128")


def test_compiled_state_raising_is_an_error_not_a_silent_python_fallback():
    system = mk.system_with(mk.bead_state, second=mk.RaisingBead)
    with pytest.raises(BodyError) as exc:
        _first_call(system)
    _names_bead2(exc, "compiled_state() raised ValueError: no kernel for this wire")


def test_user_bodies_are_checked_and_library_bodies_are_not():
    system = mk.system_with(mk.bead_state)
    layout = system._engine.layout
    checked = {k: bool(c) for k, c in zip(layout.bodies, layout.checked)}
    assert checked == {"pendulum": False, "bead": True, "bead2": True}
    for name, make in (example_systems() | verify_models()).items():
        layout = make()._engine.layout
        if layout is None:
            continue
        assert not layout.checked.any(), name
        assert (layout.rows[:, Row.CHECK] == -1).all(), name  # fill_states skips every per-state check
        assert layout.check_offset == layout.size, name  # and the arena has no check buffer
        # the library's kernels declare the constants they read (checked against each body's at build)
        assert all(c is None or c.kernel.constants is not None for c in layout.compiled), name


def test_the_state_table_gives_the_joint_terms_and_the_output_check_by_address():
    """The library's state kernels call the joint terms at the row's ``Row.JOINT`` (not compiled
    into each of them), and only a checked kernel's row names the per-state check of its outputs
    (``Row.CHECKER``: compiled for a system with a checked kernel only)."""
    from sko.engine.bodies.rigid import RIGID, hinge_address
    from sko.engine.state_kernels import checker_address

    system = mk.system_with(mk.bead_state)
    layout = system._engine.layout
    assert any(c is not None and c.kernel is RIGID for c in layout.compiled)
    for dtype in (np.float64, np.complex128):
        table = layout.table(dtype)
        assert (table[:, Row.JOINT] == hinge_address(dtype)).all()
        checked = layout.rows[:, Row.CHECK] >= 0
        assert checked.sum() == 2 and (table[checked, Row.CHECKER] == checker_address(dtype)).all()
        assert (table[~checked, Row.CHECKER] == 0).all()
    assert hinge_address(np.float64) != hinge_address(np.complex128)


def test_checks_can_be_switched_off_for_a_trusted_kernel():
    trusted = mk.state_kernel(mk.bead_state.py_func, checks=False, name="trusted bead")
    layout = mk.system_with(trusted)._engine.layout
    assert list(layout.checked) == [False, True, False]


# ----------------------------------------------------------------------------- sko verify: kernel_consistency
def test_kernel_consistency_fails_a_kernel_whose_spring_differs_from_its_at_state():
    from sko.verify import run

    (bad,) = run(models=[mk.system_with(mk.stiffer_spring)], checks=["kernel_consistency"])
    assert not bad.passed and bad.residual > 1e-3
    assert "body 'bead2' potential" in bad.detail
    (good,) = run(models=[mk.system_with(mk.bead_state)], checks=["kernel_consistency"])
    assert good.passed, good.detail


def test_kernel_consistency_fails_a_compiled_hinge_force_that_differs_from_hinge_force():
    from sko.verify import run

    (bad,) = run(models=[mk.system_with(mk.bead_state, second=mk.TripleSpringBead)], checks=["kernel_consistency"])
    assert not bad.passed and bad.residual > 0.5
    assert "body 'bead2' compiled hinge_force" in bad.detail


def test_kernel_consistency_passes_the_library_models_and_the_tutorial():
    from papers.tutorial_body_type import build
    from sko.verify import model_names, run

    results = run(models=[*model_names(symbolic=False), build()], checks=["kernel_consistency"])
    assert len(results) >= 6  # every system with compiled bodies
    assert all(r.passed for r in results), [(r.model, r.detail) for r in results if not r.passed]

"""Identity checks judged against the floating-point error bound of what they invert.

A check whose result depends on ``D(k)^{-1}`` or ``ℳ^{-1}`` passes a correct recursion on a
legitimate ill-conditioned model, still catches a wrong one on a well-conditioned model, and
reports a singular or nearly singular model rather than passing it.
"""

from __future__ import annotations

import numpy as np
import pytest

from sko import SKOModel, algorithms
from sko.engine import algorithms as engine_algorithms  # what sko verify runs
from sko.verify import Case, Registry, compare, make_case, run, run_check
from sko.verify.registry import ABSORBED_CONDITION, MAX_CONDITION
from tests.strategies import random_model, random_tree

CONDITIONED = ("riccati_equation", "forward_dynamics", "operational_space_compliance")


def _ill_conditioned_model() -> SKOModel:
    """A random model (8 bodies, 28 dofs) with cond ℳ ≈ 4e9 and max cond D(k) ≈ 3e8, on which a fixed
    relative tolerance failed the Riccati, forward dynamics and compliance checks of a correct recursion."""
    return random_model(random_tree(8, 192, "random", "int"), 479001601, max_node_dim=5, hinge="full")


def test_an_ill_conditioned_model_passes_every_check():
    model = _ill_conditioned_model()
    assert np.linalg.cond(Case(model).dense.mass_matrix) > 1e9
    results = run(models=[model])
    failed = [(r.name, r.residual, r.detail) for r in results if not r.passed]
    assert not failed


def test_a_well_conditioned_model_is_judged_by_the_plain_tolerance():
    case = make_case("forest")
    assert np.linalg.cond(case.dense.mass_matrix) < ABSORBED_CONDITION
    assert all(r.passed and r.residual < 1e-12 for r in run(models=["forest"], checks=CONDITIONED))


def _perturbed(monkeypatch, name: str, relative: float = 1e-6):
    true = getattr(algorithms, name)

    def wrong(*args, **kwargs):
        out = np.asarray(true(*args, **kwargs))
        return out + relative * np.abs(out).max()

    monkeypatch.setattr(engine_algorithms, name, wrong)


def test_a_wrong_articulated_inertia_is_caught(monkeypatch):
    true = algorithms.articulated_inertias

    def shifted(model):
        ab = true(model)
        P = dict(ab.P)
        k = model.bodies[-1]
        P[k] = P[k] * (1 + 1e-6)
        ab.P = P
        return ab

    monkeypatch.setattr(engine_algorithms, "articulated_inertias", shifted)
    result = run_check("riccati_equation", "forest")
    assert not result.passed and result.residual > 1e-8


@pytest.mark.parametrize("model", ["forest", "ill"])
def test_a_wrong_forward_dynamics_result_is_caught(monkeypatch, model):
    _perturbed(monkeypatch, "forward_dynamics")
    [result] = run(models=[_ill_conditioned_model() if model == "ill" else model], checks=["forward_dynamics"])
    assert not result.passed and result.residual > 1e-8


def test_a_wrong_operational_space_compliance_is_caught(monkeypatch):
    _perturbed(monkeypatch, "operational_space_compliance")
    result = run_check("operational_space_compliance", "forest")
    assert not result.passed and result.residual > 1e-8


def _nearly_singular(model: SKOModel, gap: float) -> SKOModel:
    """``model`` with the hinge map of one body given two rows ``gap`` apart (cond ℳ ≳ 1 / gap)."""
    k = next(k for k in model.bodies if model.dof_dim(k) >= 2)
    H = dict(model.H)
    Hk = H[k].copy()
    Hk[1] = Hk[0] + gap * Hk[1]
    H[k] = Hk
    return SKOModel(model.tree, dict(model.phi), H, dict(model.M))


def test_a_nearly_singular_mass_matrix_is_reported_not_passed():
    model = _nearly_singular(make_case("forest").model, 1e-6)
    assert np.linalg.cond(Case(model).dense.mass_matrix) > MAX_CONDITION
    algorithms.articulated_inertias(model)  # the factorization itself goes through
    for r in run(models=[model], checks=CONDITIONED):
        assert not r.passed and "ill-conditioned" in r.detail


def test_a_numerically_singular_mass_matrix_is_reported():
    model = _nearly_singular(make_case("forest").model, 1e-9)
    results = run(models=[model], checks=CONDITIONED)
    assert results and all(not r.passed and "not positive definite" in r.detail for r in results)


def test_the_conditioning_rule():
    case = make_case("chain")
    reg = Registry()
    error = 1e-7  # relative
    reg.add("plain", "none", lambda c: compare(np.array([1 + error]), np.array([1.0])))
    reg.add("conditioned", "none", lambda c: compare(np.array([1 + error]), np.array([1.0]), condition=1e8))
    reg.add("singular", "none", lambda c: compare(np.array([1.0]), np.array([1.0]), condition=np.inf, label="D"))
    reg.add("absorbed", "none", lambda c: compare(np.array([1 + error]), np.array([1.0]), condition=ABSORBED_CONDITION))
    assert not reg.get("plain").run(case).passed
    conditioned = reg.get("conditioned").run(case)
    assert conditioned.passed and conditioned.residual == pytest.approx(error * ABSORBED_CONDITION / 1e8)
    singular = reg.get("singular").run(case)
    assert not singular.passed and "ill-conditioned" in singular.detail and "D" in singular.detail
    assert not reg.get("absorbed").run(case).passed  # conditioning up to 1e4 earns no allowance

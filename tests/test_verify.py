"""The identity-check registry: every check passes on correct models and catches wrong ones."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

from sko import algorithms
from sko.engine import algorithms as engine_algorithms  # what sko verify runs
from sko.graphs.errors import SKOError
from sko.verify import (REGISTRY, Case, Registry, compare, exact_zero, make_case, model_names, register, run,
                        run_check, skipped_checks)
from sko.verify.registry import MAX_CONDITION
from tests.strategies import sko_models

BUILTIN = ("random", "chain", "forest", "jain-tree")


def test_registry_has_at_least_twenty_distinct_checks_with_equations():
    names = REGISTRY.names()
    assert len(names) == len(set(names)) >= 20
    assert all(c.equation and c.description for c in REGISTRY)
    assert not skipped_checks(REGISTRY)


@pytest.mark.parametrize("model", BUILTIN)
def test_every_check_passes_on_builtin_models(model):
    results = run(models=[model])
    assert len(results) >= 20
    failed = [(r.name, r.residual, r.detail) for r in results if not r.passed]
    assert not failed
    assert all(r.residual is not None and r.residual < 1e-10 and r.exact is None for r in results)


def test_builtin_models_are_registered():
    assert set(BUILTIN) <= set(model_names(symbolic=False))
    assert "symbolic" in model_names(symbolic=True)
    assert len(make_case("forest").model.tree.base_bodies()) == 3
    assert len(make_case("jain-tree").model.tree.segments()) == 5


@settings(max_examples=15)
@given(sko_models(max_node_dim=5))
def test_every_check_passes_on_random_models(model):
    """Every check passes; the only failures allowed are the checks that refuse, as too
    ill-conditioned to verify, a model whose ℳ truly is (every D(k) is a Schur complement of ℳ,
    so cond D(k) ≤ cond ℳ; the checks estimate κ, hence the margin)."""
    results = run(models=[model])
    failed = [(r.name, r.residual, r.detail) for r in results if not r.passed]
    if failed and all("too ill-conditioned to verify" in detail for _, _, detail in failed):
        assert np.linalg.cond(model.dense().mass_matrix) > MAX_CONDITION / 100, failed
    else:
        assert not failed


def _wrong_phi_apply(model, x, weights=None):
    y = algorithms.spo.phi_apply(model, x, weights)
    return y + 1e-6 * np.abs(y).max()


def test_checks_catch_a_wrong_recursion(monkeypatch):
    monkeypatch.setattr(engine_algorithms, "phi_apply", _wrong_phi_apply)
    result = run_check("spo_products", "chain")
    assert not result.passed and result.residual > 1e-8


def test_checks_catch_a_wrong_riccati_result(monkeypatch):
    true = algorithms.articulated_inertias

    def shifted(model):
        ab = true(model)
        k = model.bodies[0]
        P = dict(ab.P)
        P[k] = P[k] * (1 + 1e-6)
        ab.P = P
        return ab

    monkeypatch.setattr(engine_algorithms, "articulated_inertias", shifted)
    assert not run_check("riccati_equation", "random").passed


def test_a_structural_zero_must_be_exact():
    case = make_case("chain")
    reg = Registry()
    reg.add("tiny", "none", lambda c: compare(np.array([1e-300]), np.array([0.0])))
    assert not reg.get("tiny").run(case).passed
    reg.add("scaled", "none", lambda c: compare(np.array([1e-300]), np.array([0.0]), scale=1.0))
    assert reg.get("scaled").run(case).passed


def test_register_run_and_remove_a_user_identity():
    @register("user_phi_tilde_twice", "user Eq. 1", tolerance=1e-12)
    def user_identity(case):
        """φ̃ x = φ x − x."""
        ops, x = case.dense, case.node_vector("x")
        return compare(ops.phi_tilde @ x, ops.phi @ x - x)

    try:
        check = REGISTRY.get("user_phi_tilde_twice")
        assert check.description == "φ̃ x = φ x − x." and check.tolerance == 1e-12
        [result] = run(models=["forest"], checks=["user_phi_tilde_twice"])
        assert result.passed and result.equation == "user Eq. 1"
        with pytest.raises(SKOError, match="already registered"):
            register("user_phi_tilde_twice", "again")(user_identity)
    finally:
        REGISTRY.remove("user_phi_tilde_twice")
    assert "user_phi_tilde_twice" not in REGISTRY


def test_errors_and_shape_mismatches_are_failed_results():
    reg = Registry()
    reg.add("raises", "none", lambda c: 1 / 0)
    reg.add("shapes", "none", lambda c: compare(np.zeros(2), np.zeros(3)))
    case = make_case("chain")
    r1, r2 = reg.get("raises").run(case), reg.get("shapes").run(case)
    assert not r1.passed and "ZeroDivisionError" in r1.detail
    assert not r2.passed and "shape" in r2.detail


def test_result_json_has_exactly_the_api_keys():
    [r] = run(models=["chain"], checks=["crba"])
    assert list(r.to_json()) == ["model", "name", "equation", "residual", "exact", "passed"]


def test_unknown_names_raise():
    with pytest.raises(SKOError, match="no check named"):
        run(checks=["no_such_check"])
    with pytest.raises(SKOError, match="no model named"):
        run(models=["no_such_model"])
    with pytest.raises(SKOError, match="symbolic"):
        run(models=["symbolic"])


def test_case_vectors_are_reproducible():
    a, b = make_case("random"), make_case("random")
    assert np.array_equal(a.node_vector("x"), b.node_vector("x"))
    assert not np.array_equal(a.node_vector("x"), a.node_vector("y"))


def test_exact_zero():
    import sympy

    x, y = sympy.symbols("x y")
    assert exact_zero(x / (x + 1) + 1 / (x + 1) - 1)
    assert exact_zero(((x + y) ** 2 - x**2 - 2 * x * y) / y - y)
    assert not exact_zero(x / (x + 1) - 1)
    assert exact_zero(sympy.sqrt(2) ** 2 - 2) and not exact_zero(sympy.Rational(1, 3))


def test_case_wraps_a_model_with_a_and_b():
    case = make_case("chain")
    assert case.a.shape == case.b.shape == (case.model.node_size,)
    assert isinstance(Case(case.model), Case) and not Case(case.model).symbolic


def test_example_packages_contribute_models(monkeypatch):
    import sys
    import types

    from sko.verify import models
    from sko.verify.models import random_sko_model
    from tests.strategies import random_tree

    tree = random_tree(5, seed=1, shape="binary")

    class System:  # the contract of example_systems(): random_configuration, nv, sko_model
        nv = 0

        def random_configuration(self, rng):
            return np.zeros(0)

        def sko_model(self, q, qd):
            model = random_sko_model(tree, 3)
            return model, np.ones(model.node_size), np.zeros(model.node_size)

    provider = types.ModuleType("provider_models")
    provider.verify_models = lambda: {"provided-model": lambda: random_sko_model(tree, 2)}
    systems = types.ModuleType("system_examples")
    systems.example_systems = lambda: {"example-system": System}
    monkeypatch.setitem(sys.modules, "provider_models", provider)
    monkeypatch.setitem(sys.modules, "system_examples", systems)
    monkeypatch.setattr(models, "PLUGINS", ("provider_models", "system_examples", "no_such_module_here"))
    monkeypatch.setattr(models, "_plugins_loaded", False)
    monkeypatch.setattr(models, "_MODELS", dict(models._MODELS))
    assert {"provided-model", "example-system"} <= set(model_names(symbolic=False, builtin=False))
    case = make_case("example-system")
    assert np.array_equal(case.a, np.ones(case.model.node_size))
    results = run(models=["provided-model", "example-system"], checks=["forward_dynamics", "crba"])
    assert len(results) == 4 and all(r.passed for r in results)

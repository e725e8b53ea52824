"""Exact proofs on sympy data: the recursions equal the dense operator expressions identically."""

from __future__ import annotations

import pytest
import sympy

from sko.verify import REGISTRY, Case, Registry, compare, make_case, run
from sko.verify.symbolic import rational_model, symbolic_model

# Fast enough for the test suite (the whole symbolic set runs in `python -m sko verify --symbolic`).
PROVED = ("nilpotency", "spo_blocks", "phi_tilde", "spo_products", "spo_tilde_products", "newton_euler",
          "equations_of_motion", "forward_lyapunov", "backward_lyapunov_blocks", "crba", "riccati_operators",
          "riccati_psi", "psi_inverse", "psi_phi_difference", "innovations_inverse_product", "innovations_H_phi",
          "psi_mass_matrix_diagonal", "innovations_factorization", "determinant")


def test_symbolic_model_shape():
    model, a, b = symbolic_model()
    assert model.dtype == object and len(model.tree.base_bodies()) == 2
    assert model.phi["b"].shape == (2, 3) and model.phi["c"].shape == (3, 2)
    assert any(isinstance(e, sympy.Symbol) for H in model.H.values() for e in H.flat)
    assert any(isinstance(e, sympy.Symbol) for e in a) and any(isinstance(e, sympy.Symbol) for e in b)


def test_at_least_ten_identities_proved_exactly():
    results = run(models=["symbolic"], checks=PROVED, symbolic=True)
    assert [r.name for r in results] == list(PROVED)
    assert all(r.exact is True and r.passed and r.residual is None for r in results), [
        (r.name, r.detail) for r in results if not r.passed]
    assert len(results) >= 10


def test_every_check_but_the_pattern_ones_is_symbolic():
    symbolic = [c.name for c in REGISTRY if c.symbolic]
    assert len(symbolic) >= 30


def test_a_false_identity_is_not_proved():
    reg = Registry()
    # φ̃ = ℰ_φ holds only for depth-one trees; the symbolic model has depth 2
    reg.add("false", "none", lambda c: compare(c.dense.phi_tilde, c.dense.E))
    result = reg.get("false").run(make_case("symbolic"))
    assert result.exact is False and not result.passed and "not zero" in result.detail


def test_riccati_result_is_exact_rational_functions():
    case = make_case("symbolic")
    [r] = run(models=[case], checks=["tau_bar_annihilates"], symbolic=True)
    assert r.exact


def test_rational_model_proves_on_a_converted_float_model():
    float_case = make_case("forest")
    exact = rational_model(float_case.model)
    assert exact.dtype == object
    assert all(isinstance(e, sympy.Rational) for M in exact.M.values() for e in M.flat)
    results = run(models=[Case(exact, "forest-exact")], checks=["spo_products", "crba", "innovations_factorization"],
                  symbolic=True)
    assert all(r.exact for r in results)


def test_numeric_models_are_refused_in_symbolic_mode():
    from sko.graphs.errors import SKOError

    with pytest.raises(SKOError, match="floating-point"):
        run(models=["chain"], symbolic=True)

"""Every operator identity of SKO.md §9–§10 (Lemmas 9–11, Corollary 6.1), checked against the
dense operator expressions built from the Riccati results, and the O(N) operators of
:mod:`sko.algorithms.innovations` against the same dense matrices."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
from hypothesis import given
from hypothesis import strategies as st

import sko.algorithms as alg
from sko.graphs import bwa_matrix, one_resolvent
from sko import SKOModel

from .strategies import sko_models, vectors
from .util import assert_close


@dataclass(frozen=True)
class DenseRiccati:
    """Dense ``E, φ, H, M`` of a model with ``P, D, G, K, τ̄`` and ``E_ψ, ψ`` of its Riccati result."""

    E: np.ndarray
    phi: np.ndarray
    H: np.ndarray
    M: np.ndarray
    P: np.ndarray
    D: np.ndarray
    G: np.ndarray
    K: np.ndarray
    tau_bar: np.ndarray
    E_psi: np.ndarray
    psi: np.ndarray

    @property
    def mass_matrix(self) -> np.ndarray:
        return self.H @ self.phi @ self.M @ self.phi.T @ self.H.T

    @property
    def rtol(self) -> float:
        """Relative tolerance for identities through ``D^{-1}``: scaled by the conditioning."""
        return 1e-13 * max(np.linalg.cond(self.D), np.linalg.cond(self.mass_matrix), 100.0)

    def eye(self, n: int) -> np.ndarray:
        return np.eye(n, dtype=self.M.dtype)


def dense_riccati(model: SKOModel, ab: alg.ArticulatedInertias) -> DenseRiccati:
    """The dense operators of SKO.md §8 from the per-node results (for checking only)."""
    ops = model.dense()
    bodies = model.bodies
    P = scipy.linalg.block_diag(*[ab.P[k] for k in bodies])
    D = scipy.linalg.block_diag(*[ab.D[k] for k in bodies])
    G = scipy.linalg.block_diag(*[ab.G[k] for k in bodies])
    tau = scipy.linalg.block_diag(*[ab.tau_bar[k] for k in bodies])
    E_psi = bwa_matrix(model.tree, model.node_dims(), dict(ab.psi))
    return DenseRiccati(E=ops.E, phi=ops.phi, H=ops.H, M=ops.M, P=P, D=D, G=G, K=ops.E @ G, tau_bar=tau,
                        E_psi=E_psi, psi=one_resolvent(E_psi))


def _setup(model: SKOModel):
    ab = alg.articulated_inertias(model)
    return ab, dense_riccati(model, ab)


def _scale(*arrays) -> float:
    return max(np.abs(a).max(initial=0.0) for a in arrays)


@given(sko_models())
def test_psi_operators(model):
    """``ℰ_ψ = ℰ_φ τ̄ = ℰ_φ − K H`` (Eq. 34) and the inverse identity ``ψ^{-1} − φ^{-1} = K H`` (Eq. 38)."""
    _, d = _setup(model)
    scale = _scale(d.E) * (1 + _scale(d.G) * _scale(d.H)) * d.E.shape[0]
    assert_close(d.E_psi, d.E @ d.tau_bar, d.rtol, scale)
    assert_close(d.E_psi, d.E - d.K @ d.H, d.rtol, scale)
    lhs = np.linalg.inv(d.psi) - np.linalg.inv(d.phi)
    assert_close(lhs, d.K @ d.H, d.rtol, _scale(d.K @ d.H) + _scale(d.E) + 1)


@given(sko_models())
def test_lemma_9_products(model):
    """``ψ K H φ = φ − ψ = φ K H ψ`` (Eq. 39)."""
    _, d = _setup(model)
    diff = d.phi - d.psi
    scale = _scale(d.psi) * _scale(d.K @ d.H) * _scale(d.phi) * d.phi.shape[0] + 1
    assert_close(d.psi @ d.K @ d.H @ d.phi, diff, d.rtol, scale)
    assert_close(d.phi @ d.K @ d.H @ d.psi, diff, d.rtol, scale)


@given(sko_models())
def test_eq_40_45_and_inverse_of_innovations_operator(model):
    """``[I − H ψ K][I + H φ K] = I`` (Eq. 40, 50) and ``[I − H ψ K] H φ = H ψ`` (Eq. 45)."""
    _, d = _setup(model)
    n = model.dof_size
    left = d.eye(n) - d.H @ d.psi @ d.K
    right = d.eye(n) + d.H @ d.phi @ d.K
    scale = _scale(left) * _scale(right) * n
    assert_close(left @ right, d.eye(n), d.rtol, scale)
    assert_close(right @ left, d.eye(n), d.rtol, scale)
    assert_close(left @ d.H @ d.phi, d.H @ d.psi, d.rtol, scale * _scale(d.H @ d.phi))


@given(sko_models())
def test_lyapunov_forms_of_P(model):
    """``φ M ψ* = P + φ̃ P + P ψ̃*`` (Eq. 41, disjoint), ``ψ M ψ* = P + ψ̃ P + P ψ̃*``, and
    ``φ M φ* = P + φ̃ P + P φ̃* + φ K D K* φ*``."""
    _, d = _setup(model)
    phi_t = d.phi - d.eye(d.phi.shape[0])
    psi_t = d.psi - d.eye(d.psi.shape[0])
    scale = _scale(d.phi) * _scale(d.psi) * _scale(d.M) * d.phi.shape[0] + _scale(d.P)
    assert_close(d.phi @ d.M @ d.psi.T, d.P + phi_t @ d.P + d.P @ psi_t.T, d.rtol, scale)
    assert_close(d.psi @ d.M @ d.psi.T, d.P + psi_t @ d.P + d.P @ psi_t.T, d.rtol, scale)
    expected = d.P + phi_t @ d.P + d.P @ phi_t.T + d.phi @ d.K @ d.D @ d.K.T @ d.phi.T
    assert_close(d.phi @ d.M @ d.phi.T, expected, d.rtol, scale * _scale(d.phi))
    # Disjointness in Eq. 41: P is block diagonal, φ̃ P strictly "ancestor", P ψ̃* strictly "descendant".
    assert not np.any((phi_t @ d.P != 0) & (d.P @ psi_t.T != 0))


@given(sko_models())
def test_tau_bar_annihilates_P_H_star(model):
    """``τ̄ P H* = 0``, hence ``ψ̃ P H* = 0`` and ``H P ψ̃* = 0``."""
    _, d = _setup(model)
    psi_t = d.psi - d.eye(d.psi.shape[0])
    scale = _scale(d.P) * _scale(d.H) * (1 + _scale(d.tau_bar)) * (1 + _scale(psi_t)) * d.P.shape[0]
    assert_close(d.tau_bar @ d.P @ d.H.T, np.zeros_like(d.H.T), d.rtol, scale)
    assert_close(psi_t @ d.P @ d.H.T, np.zeros_like(d.H.T), d.rtol, scale)
    assert_close(d.H @ d.P @ psi_t.T, np.zeros_like(d.H), d.rtol, scale)


@given(sko_models())
def test_eq_46_H_psi_M_psi_H_is_D(model):
    """``H ψ M ψ* H* = D``, block diagonal (Eq. 46)."""
    _, d = _setup(model)
    lhs = d.H @ d.psi @ d.M @ d.psi.T @ d.H.T
    assert_close(lhs, d.D, d.rtol, _scale(d.H) ** 2 * _scale(d.psi) ** 2 * _scale(d.M) * d.M.shape[0] ** 2)


@given(sko_models())
def test_innovations_factorization_and_inverse(model):
    """``ℳ = [I + HφK] D [I + HφK]*`` (Eq. 49) and ``ℳ^{-1} = [I − HψK]* D^{-1} [I − HψK]`` (Eq. 51)."""
    _, d = _setup(model)
    n = model.dof_size
    F = d.eye(n) + d.H @ d.phi @ d.K
    Mm = d.mass_matrix
    assert_close(F @ d.D @ F.T, Mm, d.rtol, _scale(F) ** 2 * _scale(d.D) * n)
    L = d.eye(n) - d.H @ d.psi @ d.K
    Minv = L.T @ np.linalg.inv(d.D) @ L
    assert_close(Minv @ Mm, d.eye(n), 1e-8, np.linalg.cond(Mm))


@given(sko_models(max_node_dim=5, tree_strategy=None))
def test_determinants(model):
    """``det [I + H φ K] = 1`` (Eq. 52) and ``det ℳ = Π det D(k)`` (Eq. 53)."""
    ab, d = _setup(model)
    n = model.dof_size
    F = d.eye(n) + d.H @ d.phi @ d.K
    sign, logdet_F = np.linalg.slogdet(F)
    assert sign == 1 and abs(logdet_F) < 1e-9 * n * (1 + np.log1p(_scale(F)))
    sign, logdet = np.linalg.slogdet(d.mass_matrix)
    assert sign == 1
    # Both sides lose about n·cond(ℳ) ulps (the relative errors of the eigenvalues add up).
    rtol = 1e-14 * n * max(np.linalg.cond(d.mass_matrix), 100.0)
    assert abs(alg.mass_matrix_logdet(model, ab) - logdet) <= rtol + 1e-12 * abs(logdet)
    det = alg.mass_matrix_det(model, ab)
    assert abs(det - np.exp(logdet)) <= (rtol + 1e-12 * abs(logdet)) * np.exp(logdet)


@given(sko_models(), st.integers(0, 2**32 - 1))
def test_recursive_operators_match_dense(model, seed):
    """The O(N) applications of ``[I + HφK]``, its adjoint, ``[I − HψK]``, its adjoint, ``D`` and
    ``D^{-1}`` equal the dense operators."""
    ab, d = _setup(model)
    x = vectors(model, seed, "dof")
    n = model.dof_size
    F = d.eye(n) + d.H @ d.phi @ d.K
    L = d.eye(n) - d.H @ d.psi @ d.K
    cases = [
        (alg.innovations_apply, F),
        (alg.innovations_star_apply, F.T),
        (alg.innovations_inverse_apply, L),
        (alg.innovations_inverse_star_apply, L.T),
        (alg.D_apply, d.D),
        (alg.D_inverse_apply, np.linalg.inv(d.D)),
    ]
    cond = max(np.linalg.cond(d.D), np.linalg.cond(d.mass_matrix))
    for function, dense in cases:
        expected = dense @ x
        assert_close(function(model, x, articulated=ab), expected, 1e-13 * cond, _scale(dense) * _scale(x) * n)
    # Round trips through the O(N) operators alone.
    y = alg.innovations_inverse_apply(model, alg.innovations_apply(model, x, ab), ab)
    assert_close(y, x, d.rtol, _scale(F) * _scale(L) * _scale(x) * n)


@given(sko_models(), st.integers(0, 2**32 - 1))
def test_psi_weights_drive_the_spo_recursions(model, seed):
    """``result.psi`` works as ``weights=`` for all four SPO recursions (ψ x, ψ* x, ψ̃ x, ψ̃* x)."""
    ab, d = _setup(model)
    x = vectors(model, seed, "node")
    I = d.eye(d.psi.shape[0])
    scale = _scale(d.psi) * _scale(x) * d.psi.shape[0]
    assert_close(alg.phi_apply(model, x, weights=ab.psi), d.psi @ x, d.rtol, scale)
    assert_close(alg.phi_star_apply(model, x, weights=ab.psi), d.psi.T @ x, d.rtol, scale)
    assert_close(alg.phi_tilde_apply(model, x, weights=ab.psi), (d.psi - I) @ x, d.rtol, scale)
    assert_close(alg.phi_tilde_star_apply(model, x, weights=ab.psi), (d.psi - I).T @ x, d.rtol, scale)

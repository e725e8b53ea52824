"""The identities and algorithms of SKO.md §2–§13 as registered checks.

Each check pits a recursion of :mod:`algorithms` (or an operator identity) against the dense
operator expression it implements, on whatever model the :class:`~sko.verify.registry.Case`
holds. The same function runs numerically (float data, relative residual) and exactly (sympy
data, the difference must simplify to zero). Inverses are avoided on the dense side: an identity
``A = B^{-1}`` is checked as ``A B = I``, so symbolic proofs stay polynomial where they can.
A numeric comparison whose result depends on ``D(k)^{-1}`` or ``ℳ^{-1}`` carries the condition
number of what is inverted (``max_k cond D(k)`` or ``cond ℳ``), by the rule of
:mod:`sko.verify.registry`.
"""

from __future__ import annotations

import itertools

import numpy as np

from sko.engine import algorithms as alg
from sko.graphs import bwa_matrix, nilpotency_index, one_resolvent

from .operators import block_matrix, identity, riccati_operators, spo_path_product
from .registry import Case, compare, register

__all__: list[str] = []  # importing the module registers the checks


# --------------------------------------------------------------------------- helpers
def _scale(case: Case, *arrays) -> float | None:
    """The size of the data (largest entry of the arrays) for numeric cases; ``None`` when symbolic."""
    if case.symbolic:
        return None
    return max(float(np.abs(np.asarray(A, dtype=complex)).max(initial=0.0)) for A in arrays)


def _condition(A: np.ndarray) -> float:
    """The 2-norm condition number of ``A`` (``inf`` when singular); 1 for an empty matrix."""
    if A.size == 0:
        return 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = float(np.linalg.cond(A))
    return kappa if np.isfinite(kappa) else float("inf")


def _condition_D(case: Case) -> float:
    """``max_k cond D(k)``: the conditioning of what the Riccati gather inverts (1 when symbolic)."""
    if case.symbolic:
        return 1.0
    return case.cached("condition_D", lambda: max((_condition(Dk) for Dk in _riccati(case).D.values()), default=1.0))


def _condition_M(case: Case) -> float:
    """``cond ℳ``: the conditioning of a solve with or inverse of ℳ (1 when symbolic); for SPD ℳ it
    bounds every ``cond D(k)``, a Schur complement of a principal block of ℳ (eigenvalues interlace)."""
    if case.symbolic:
        return 1.0
    return case.cached("condition_M", lambda: _condition(_mass(case)))


def _I(n: int, case: Case) -> np.ndarray:
    return identity(n, case.model.dtype)


def _riccati(case: Case):
    return case.cached("riccati", lambda: alg.articulated_inertias(case.model))


def _ops(case: Case):
    return case.cached("riccati_operators", lambda: riccati_operators(case.model, _riccati(case)))


def _with_riccati(case: Case, function, *args):
    """``function(model, *args, articulated=...)`` reusing the case's Riccati result."""
    return function(case.model, *args, articulated=_riccati(case))


def _canonical(case: Case, x: np.ndarray) -> np.ndarray:
    """Symbolic entries as reduced quotients of polynomials (values unchanged), so results can be
    fed back into a recursion without carrying a nested expression along; floats pass through."""
    if not case.symbolic:
        return x
    import sympy

    symbols = sorted(set().union(*(sympy.sympify(e).free_symbols for e in x.flat)), key=str)
    if not symbols:
        return x
    field = sympy.QQ.frac_field(*symbols)
    out = np.empty(x.shape, dtype=object)
    for idx, e in np.ndenumerate(x):
        try:
            out[idx] = field.from_sympy(sympy.sympify(e)).as_expr()
        except ValueError:  # function values such as sin(q): a quotient in them
            out[idx] = sympy.cancel(e)
    return out


def _mass(case: Case) -> np.ndarray:
    return case.cached("mass_matrix", lambda: case.dense.mass_matrix)



def _other_weights(case: Case, label: str) -> dict:
    """A second weight set on the model's digraph (same shapes as φ)."""
    model = case.model
    return {k: case.matrix(f"{label}{model.tree.index(k)}", *W.shape) for k, W in model.phi.items()}


def _block_diagonal(case: Case, label: str) -> dict:
    model = case.model
    return {k: case.matrix(f"{label}{model.tree.index(k)}", model.node_dim(k), model.node_dim(k)) for k in model.bodies}


def _blocks(model, A: np.ndarray, i, j) -> np.ndarray:
    return A[model.node_slice(i), model.node_slice(j)]


def _det(A: np.ndarray, symbolic: bool):
    if symbolic:
        import sympy

        return sympy.Matrix(A).det(method="berkowitz")
    return np.linalg.det(A)


def _innovations(case: Case):
    """``[I + H φ K]`` and ``[I − H ψ K]`` (Eq. 49, 50)."""
    ops, d, R = case.dense, case.model.dof_size, _ops(case)
    return _I(d, case) + ops.H @ ops.phi @ R.K, _I(d, case) - ops.H @ R.psi @ R.K


# --------------------------------------------------------------------------- §2 BWA and SPO operators
@register("nilpotency", "SKO.md §2")
def nilpotency(case: Case):
    """ℰ_φ^d = 0 for d = tree height + 1 (nilpotent), and (I − ℰ_φ) φ = φ (I − ℰ_φ) = I."""
    model, ops = case.model, case.dense
    d = model.tree.height + 1
    n = model.node_size
    out = [compare(np.linalg.matrix_power(ops.E, d), np.zeros((n, n), dtype=model.dtype), label="E^d")]
    if not case.symbolic:  # the nilpotency index never exceeds height + 1
        out.append(compare(float(nilpotency_index(ops.E) <= d), 1.0, label="index"))
    out += [compare((_I(n, case) - ops.E) @ ops.phi, _I(n, case), label="(I-E)phi"),
            compare(ops.phi @ (_I(n, case) - ops.E), _I(n, case), label="phi(I-E)")]
    return out


@register("spo_blocks", "SKO.md §2")
def spo_blocks(case: Case):
    """φ(i, j) is the product of the weights along the path for ancestors i of j, and 0 otherwise."""
    model, phi = case.model, case.dense.phi
    out = []
    for i, j in itertools.product(model.bodies, repeat=2):
        if i == j or model.tree.is_ancestor(i, j):
            expected = spo_path_product(model, model.phi, i, j)
        else:
            expected = np.zeros((model.node_dim(i), model.node_dim(j)), dtype=model.dtype)
        out.append(compare(_blocks(model, phi, i, j), expected, label=f"phi({i!r},{j!r})"))
    return out


@register("phi_tilde", "SKO.md §2")
def phi_tilde(case: Case):
    """φ̃ = φ − I = ℰ_φ φ = φ ℰ_φ."""
    ops = case.dense
    return [compare(ops.E @ ops.phi, ops.phi_tilde, label="E phi"), compare(ops.phi @ ops.E, ops.phi_tilde, label="phi E")]


@register("spo_products", "Lemmas 1, 2 (Eq. 5, 8)")
def spo_products(case: Case):
    """φ x by gather and φ* x by scatter equal the dense products."""
    ops, x = case.dense, case.node_vector("x")
    return [compare(alg.phi_apply(case.model, x), ops.phi @ x, label="phi x"),
            compare(alg.phi_star_apply(case.model, x), ops.phi.T @ x, label="phi* x")]


@register("spo_tilde_products", "Corollary 3.1")
def spo_tilde_products(case: Case):
    """φ̃ x by gather and φ̃* x by scatter equal the dense products."""
    ops, x = case.dense, case.node_vector("x")
    return [compare(alg.phi_tilde_apply(case.model, x), ops.phi_tilde @ x, label="phi~ x"),
            compare(alg.phi_tilde_star_apply(case.model, x), ops.phi_tilde.T @ x, label="phi~* x")]


@register("spo_other_weights", "Lemmas 1, 2 (any SPO)")
def spo_other_weights(case: Case):
    """The SPO recursions with another weight set equal the dense products of that SPO."""
    model = case.model
    W = _other_weights(case, "w")
    spo = one_resolvent(bwa_matrix(model.tree, model.node_dims(), W))
    x = case.node_vector("x")
    return [compare(alg.phi_apply(model, x, weights=W), spo @ x, label="psi x"),
            compare(alg.phi_star_apply(model, x, weights=W), spo.T @ x, label="psi* x")]


# --------------------------------------------------------------------------- §3, §5 Newton–Euler
@register("newton_euler", "Algorithm 3.1, Eq. 1")
def newton_euler(case: Case):
    """𝒱 = φ* H* θ̇, α = φ* (H* θ̈ + a), f = φ (M α + b), T = H f."""
    ops = case.dense
    qd, qdd = case.dof_vector("qd"), case.dof_vector("qdd")
    ne = alg.newton_euler(case.model, qdd, qd, case.a, case.b)
    alpha = ops.phi.T @ (ops.H.T @ qdd + case.a)
    f = ops.phi @ (ops.M @ alpha + case.b)
    return [compare(ne.V, ops.phi.T @ ops.H.T @ qd, label="V"), compare(ne.alpha, alpha, label="alpha"),
            compare(ne.f, f, label="f"), compare(ne.T, ops.H @ f, label="T")]


@register("equations_of_motion", "Eq. 2, 3")
def equations_of_motion(case: Case):
    """Newton–Euler gives T = ℳ θ̈ + 𝒞 with ℳ = H φ M φ* H* and 𝒞 = H φ (M φ* a + b)."""
    qdd = case.dof_vector("qdd")
    T = alg.inverse_dynamics(case.model, qdd, a=case.a, b=case.b)
    return compare(T, _mass(case) @ qdd + case.dense.bias(case.a, case.b))


@register("mass_matrix_columns", "Eq. 2 (unit accelerations)", symbolic=False)
def mass_matrix_columns(case: Case):
    """Newton–Euler with a = b = 0 and θ̈ = e_j gives column j of ℳ; ℳ is symmetric positive definite."""
    model = case.model
    columns = np.column_stack([alg.inverse_dynamics(model, e) for e in identity(model.dof_size, float)])
    Mm = _mass(case)
    return [compare(columns, Mm, label="columns"), compare(Mm, Mm.T, label="symmetry"),
            compare(float(np.linalg.eigvalsh(Mm).min() > 0), 1.0, label="positive definite")]


# --------------------------------------------------------------------------- §6 forward Lyapunov, CRBA
@register("forward_lyapunov", "Lemma 3, Eq. 11, 12, 14", requires=("forward_lyapunov",))
def forward_lyapunov(case: Case):
    """Y of the gather solves Y = ℰ_φ1 Y ℰ_φ2* + X, and φ1 X φ2* = Y + φ̃1 Y + Y φ̃2*."""
    model = case.model
    W2 = _other_weights(case, "w")
    X = _block_diagonal(case, "X")
    res = alg.forward_lyapunov(model, X, None, W2)
    E1, phi1 = case.dense.E, case.dense.phi
    E2 = bwa_matrix(model.tree, model.node_dims(), W2)
    phi2 = one_resolvent(E2)
    Y, Xd = block_matrix(model, res.Y), block_matrix(model, X)
    n = model.node_size
    Z = phi1 @ Xd @ phi2.T
    return [compare(Y, E1 @ Y @ E2.T + Xd, label="Eq. 12"),
            compare(Y + (phi1 - _I(n, case)) @ Y + Y @ (phi2 - _I(n, case)).T, Z, label="Eq. 11")]


@register("forward_lyapunov_blocks", "Lemma 3, Eq. 15", requires=("forward_lyapunov",))
def forward_lyapunov_blocks(case: Case):
    """Every block of φ1 X φ2* from the path recursions; unrelated pairs exactly zero."""
    model = case.model
    W2 = _other_weights(case, "w")
    X = _block_diagonal(case, "X")
    res = alg.forward_lyapunov(model, X, None, W2)
    phi2 = one_resolvent(bwa_matrix(model.tree, model.node_dims(), W2))
    Z = case.dense.phi @ block_matrix(model, X) @ phi2.T
    out = [compare(res.matrix(), Z, label="matrix")]
    for i, j in itertools.product(model.bodies, repeat=2):
        expected = _blocks(model, Z, i, j)
        if not model.tree.related(i, j):
            expected = np.zeros_like(expected)  # structurally zero: must come out exactly 0
        out.append(compare(res.block(i, j), expected, label=f"Z({i!r},{j!r})"))
    return out


@register("composite_inertias", "Lemma 4, Eq. 17, 18; Algorithm 4.1", requires=("composite_inertias",))
def composite_inertias(case: Case):
    """ℛ = ℰ_φ ℛ ℰ_φ* + M and ℳ = H ℛ H* + H φ̃ ℛ H* + H ℛ φ̃* H*."""
    model, ops = case.model, case.dense
    R = block_matrix(model, alg.composite_inertias(model))
    pt = ops.phi_tilde
    return [compare(R, ops.E @ R @ ops.E.T + ops.M, label="Eq. 18"),
            compare(ops.H @ R @ ops.H.T + ops.H @ pt @ R @ ops.H.T + ops.H @ R @ pt.T @ ops.H.T, _mass(case), label="Eq. 17")]


@register("crba", "Algorithm 4.2, Eq. 2", requires=("mass_matrix",))
def crba(case: Case):
    """The composite rigid body algorithm equals H φ M φ* H*."""
    return compare(alg.mass_matrix(case.model), _mass(case))


@register("crba_branch_sparsity", "SKO.md §6 (branch-induced sparsity)", requires=("mass_matrix",))
def crba_branch_sparsity(case: Case):
    """ℳ(i, j) of the CRBA is exactly zero for every unrelated pair (and so is the dense product)."""
    model = case.model
    Mm = alg.mass_matrix(model)
    out = []
    for i, j in itertools.combinations(model.bodies, 2):
        if not model.tree.related(i, j):
            block = Mm[model.dof_slice(i), model.dof_slice(j)]
            out.append(compare(block, np.zeros_like(block), label=f"M({i!r},{j!r})"))
            dense = _mass(case)[model.dof_slice(i), model.dof_slice(j)]
            out.append(compare(dense, np.zeros_like(dense), scale=_scale(case, _mass(case)), label=f"dense M({i!r},{j!r})"))
    return out or [compare(0.0, 0.0, label="no unrelated pairs")]


# --------------------------------------------------------------------------- §7 backward Lyapunov
@register("backward_lyapunov", "Lemma 5, Eq. 21, 22, 24; Lemma 6", requires=("backward_lyapunov",))
def backward_lyapunov(case: Case):
    """Y of the scatter solves Y = X + diagOf(ℰ_φ1* Y ℰ_φ2); φ1* X φ2 = Y + φ̃1* Y + Y φ̃2 + R with R
    exactly the unrelated pairs (R = 0 on a serial chain)."""
    model = case.model
    W2 = _other_weights(case, "w")
    X = _block_diagonal(case, "X")
    res = alg.backward_lyapunov(model, X, None, W2)
    E1, phi1 = case.dense.E, case.dense.phi
    E2 = bwa_matrix(model.tree, model.node_dims(), W2)
    phi2 = one_resolvent(E2)
    Y = block_matrix(model, res.Y)
    n = model.node_size
    full = E1.T @ Y @ E2
    diag_of = block_matrix(model, {k: _blocks(model, full, k, k) for k in model.bodies})
    Z = phi1.T @ block_matrix(model, X) @ phi2
    R = Z - (Y + (phi1 - _I(n, case)).T @ Y + Y @ (phi2 - _I(n, case)))
    expected_R = np.zeros_like(R)
    for i, j in itertools.product(model.bodies, repeat=2):
        l = model.tree.nearest_common_ancestor(i, j)
        if l is not None and not model.tree.related(i, j):
            expected_R[model.node_slice(i), model.node_slice(j)] = (
                spo_path_product(model, model.phi, l, i).T @ res.Y[l] @ spo_path_product(model, W2, l, j))
    return [compare(Y, block_matrix(model, X) + diag_of, label="Eq. 22"),
            compare(R, expected_R, scale=_scale(case, Z), label="Eq. 21 remainder")]


@register("backward_lyapunov_blocks", "Lemma 5, Eq. 25 (incl. unrelated pairs, forests)", requires=("backward_lyapunov",))
def backward_lyapunov_blocks(case: Case):
    """Every block of φ1* X φ2 through the nearest common ancestor; across trees exactly zero."""
    model = case.model
    W2 = _other_weights(case, "w")
    X = _block_diagonal(case, "X")
    res = alg.backward_lyapunov(model, X, None, W2)
    phi2 = one_resolvent(bwa_matrix(model.tree, model.node_dims(), W2))
    Z = case.dense.phi.T @ block_matrix(model, X) @ phi2
    out = [compare(res.matrix(), Z, label="matrix")]
    for i, j in itertools.product(model.bodies, repeat=2):
        expected = _blocks(model, Z, i, j)
        if model.tree.nearest_common_ancestor(i, j) is None:
            expected = np.zeros_like(expected)
        out.append(compare(res.block(i, j), expected, label=f"Z({i!r},{j!r})"))
    return out


# --------------------------------------------------------------------------- §8 Riccati
@register("riccati_equation", "Lemma 7, Eq. 31, 33", requires=("articulated_inertias",))
def riccati_equation(case: Case):
    """P of the gather solves P = ℰ_φ [P − P H* D^{-1} H P] ℰ_φ* + M, and P⁺ = P − P H* D^{-1} H P."""
    ops, R = case.dense, _ops(case)
    P, H = R.P, ops.H
    P_plus = P - P @ H.T @ R.D_inverse @ H @ P
    kappa = _condition_D(case)  # P⁺ subtracts P H* D^{-1} H P: sensitive to cond D(k)
    return [compare(P, ops.E @ P_plus @ ops.E.T + ops.M, label="Eq. 31", condition=kappa),
            compare(R.P_plus, P_plus, scale=_scale(case, P), label="P+", condition=kappa),
            compare(R.D @ R.D_inverse, _I(case.model.dof_size, case), label="D D^-1", condition=kappa)]


@register("riccati_operators", "Eq. 32, 34", requires=("articulated_inertias",))
def riccati_operators_check(case: Case):
    """D = H P H*, G D = P H*, K = ℰ_φ G, τ̄ = I − G H, P⁺ = τ̄ P, ℰ_ψ = ℰ_φ τ̄ = ℰ_φ − K H."""
    ops, R, n = case.dense, _ops(case), case.model.node_size
    s = _scale(case, R.P, ops.E @ R.P)
    e = _scale(case, ops.E, R.K @ ops.H)  # ℰ_ψ = ℰ_φ − K H may cancel to ~0 (square H)
    return [compare(R.D, ops.H @ R.P @ ops.H.T, label="D"),
            compare(R.G @ R.D, R.P @ ops.H.T, label="G"),
            compare(R.K, ops.E @ R.G, label="K"),
            compare(R.tau_bar, _I(n, case) - R.G @ ops.H, scale=_scale(case, _I(n, case), R.G @ ops.H), label="tau_bar"),
            compare(R.P_plus, R.tau_bar @ R.P, scale=s, label="P+"),
            compare(R.E_psi, ops.E @ R.tau_bar, scale=e, label="E_psi = E tau_bar"),
            compare(R.E_psi, ops.E - R.K @ ops.H, scale=e, label="E_psi = E - K H")]


@register("riccati_psi", "Eq. 36", requires=("articulated_inertias",))
def riccati_psi(case: Case):
    """P − ℰ_ψ P ℰ_ψ* = M and P − ℰ_ψ P ℰ_φ* = M."""
    ops, R = case.dense, _ops(case)
    s, kappa = _scale(case, R.P), _condition_D(case)
    return [compare(R.P - R.E_psi @ R.P @ R.E_psi.T, ops.M, scale=s, label="psi psi", condition=kappa),
            compare(R.P - R.E_psi @ R.P @ ops.E.T, ops.M, scale=s, label="psi phi", condition=kappa)]


# --------------------------------------------------------------------------- §9 operator identities
@register("psi_inverse", "Lemma 9, Eq. 38", requires=("articulated_inertias",))
def psi_inverse(case: Case):
    """ψ^{-1} − φ^{-1} = K H, i.e. ψ (φ^{-1} + K H) = (φ^{-1} + K H) ψ = I."""
    ops, R, n = case.dense, _ops(case), case.model.node_size
    A = _I(n, case) - ops.E + R.K @ ops.H
    return [compare(R.psi @ A, _I(n, case), label="psi A"), compare(A @ R.psi, _I(n, case), label="A psi")]


@register("psi_phi_difference", "Lemma 9, Eq. 39", requires=("articulated_inertias",))
def psi_phi_difference(case: Case):
    """ψ K H φ = φ − ψ = φ K H ψ."""
    ops, R = case.dense, _ops(case)
    KH = R.K @ ops.H
    s = _scale(case, ops.phi, R.psi @ KH @ ops.phi)
    return [compare(R.psi @ KH @ ops.phi, ops.phi - R.psi, scale=s, label="psi K H phi"),
            compare(ops.phi @ KH @ R.psi, ops.phi - R.psi, scale=s, label="phi K H psi")]


@register("innovations_inverse_product", "Lemma 9, Eq. 40, 50", requires=("articulated_inertias",))
def innovations_inverse_product(case: Case):
    """[I − H ψ K][I + H φ K] = I and [I + H φ K][I − H ψ K] = I."""
    A, B = _innovations(case)
    n = case.model.dof_size
    return [compare(B @ A, _I(n, case), label="Eq. 40"), compare(A @ B, _I(n, case), label="Eq. 50")]


@register("phi_M_psi", "Lemma 10, Eq. 41", requires=("articulated_inertias",))
def phi_M_psi(case: Case):
    """φ M ψ* = P + φ̃ P + P ψ̃* and ψ M ψ* = P + ψ̃ P + P ψ̃* (disjoint sums)."""
    ops, R, kappa = case.dense, _ops(case), _condition_D(case)
    return [compare(ops.phi @ ops.M @ R.psi.T, R.P + ops.phi_tilde @ R.P + R.P @ R.psi_tilde.T, label="phi M psi*",
                    condition=kappa),
            compare(R.psi @ ops.M @ R.psi.T, R.P + R.psi_tilde @ R.P + R.P @ R.psi_tilde.T, label="psi M psi*",
                    condition=kappa)]


@register("tau_bar_annihilates", "SKO.md §9 (τ̄ P H* = 0)", requires=("articulated_inertias",))
def tau_bar_annihilates(case: Case):
    """τ̄ P H* = 0, hence ψ̃ P H* = 0 and H P ψ̃* = 0."""
    ops, R = case.dense, _ops(case)
    PH = R.P @ ops.H.T
    s = _scale(case, PH, R.psi @ PH)
    zero_node_dof = np.zeros(PH.shape, dtype=PH.dtype)
    return [compare(R.tau_bar @ PH, zero_node_dof, scale=s, label="tau_bar P H*"),
            compare(R.psi_tilde @ PH, zero_node_dof, scale=s, label="psi~ P H*"),
            compare(ops.H @ R.P @ R.psi_tilde.T, zero_node_dof.T, scale=s, label="H P psi~*")]


@register("innovations_H_phi", "Lemma 10, Eq. 45", requires=("articulated_inertias",))
def innovations_H_phi(case: Case):
    """[I − H ψ K] H φ = H ψ."""
    _, B = _innovations(case)
    ops, R = case.dense, _ops(case)
    return compare(B @ ops.H @ ops.phi, ops.H @ R.psi, scale=_scale(case, ops.H @ ops.phi, ops.H @ R.psi))


@register("psi_mass_matrix_diagonal", "Lemma 10, Eq. 46", requires=("articulated_inertias",))
def psi_mass_matrix_diagonal(case: Case):
    """H ψ M ψ* H* = D, block diagonal (unlike ℳ = H φ M φ* H*)."""
    ops, R = case.dense, _ops(case)
    return compare(ops.H @ R.psi @ ops.M @ R.psi.T @ ops.H.T, R.D, scale=_scale(case, _mass(case)),
                   condition=_condition_D(case))


@register("phi_M_phi_decomposition", "SKO.md §9", requires=("articulated_inertias",))
def phi_M_phi_decomposition(case: Case):
    """φ M φ* = P + φ̃ P + P φ̃* + φ K D K* φ*."""
    ops, R = case.dense, _ops(case)
    lhs = ops.phi @ ops.M @ ops.phi.T
    return compare(lhs, R.P + ops.phi_tilde @ R.P + R.P @ ops.phi_tilde.T + ops.phi @ R.K @ R.D @ R.K.T @ ops.phi.T,
                   condition=_condition_D(case))


# --------------------------------------------------------------------------- §10 factorization
@register("innovations_factorization", "Lemma 11, Eq. 49", requires=("articulated_inertias",))
def innovations_factorization(case: Case):
    """ℳ = [I + H φ K] D [I + H φ K]*."""
    A, _ = _innovations(case)
    return compare(A @ _ops(case).D @ A.T, _mass(case), condition=_condition_D(case))


@register("innovations_operators", "Lemma 11, Eq. 49–51 (O(N) products)", requires=("innovations_apply",))
def innovations_operators(case: Case):
    """[I + H φ K] x, its adjoint, inverse and inverse adjoint, and D x by recursion equal the dense products."""
    A, B = _innovations(case)
    R = _ops(case)
    x = case.dof_vector("x")
    return [compare(_with_riccati(case, alg.innovations_apply, x), A @ x, label="[I+HphiK] x"),
            compare(_with_riccati(case, alg.innovations_star_apply, x), A.T @ x, label="[I+HphiK]* x"),
            compare(_with_riccati(case, alg.innovations_inverse_apply, x), B @ x, label="[I-HpsiK] x"),
            compare(_with_riccati(case, alg.innovations_inverse_star_apply, x), B.T @ x, label="[I-HpsiK]* x"),
            compare(_with_riccati(case, alg.D_apply, x), R.D @ x, label="D x"),
            compare(_with_riccati(case, alg.D_inverse_apply, x), R.D_inverse @ x, label="D^-1 x")]


@register("mass_matrix_inverse", "Lemma 11, Eq. 51", requires=("articulated_inertias",))
def mass_matrix_inverse(case: Case):
    """ℳ^{-1} = [I − H ψ K]* D^{-1} [I − H ψ K]; the O(N) solve and inverse agree with it.

    Checked as ``ℳ X = I`` (backward error, relative to ``|ℳ| |X|``), so the residual does not grow
    with the condition number of ℳ."""
    _, B = _innovations(case)
    n = case.model.dof_size
    Mm = _mass(case)
    inverse = B.T @ _ops(case).D_inverse @ B
    out = [compare(Mm @ inverse, _I(n, case), scale=_scale(case, Mm) * _scale(case, inverse) if not case.symbolic else None,
                   label="Eq. 51")]
    if hasattr(alg, "mass_matrix_inverse"):
        X = _with_riccati(case, alg.mass_matrix_inverse)
        out.append(compare(Mm @ X, _I(n, case), scale=None if case.symbolic else _scale(case, Mm) * _scale(case, X),
                           label="mass_matrix_inverse"))
    if hasattr(alg, "mass_matrix_solve"):
        y = case.dof_vector("y")
        x = _with_riccati(case, alg.mass_matrix_solve, y)
        out.append(compare(Mm @ x, y, scale=None if case.symbolic else _scale(case, Mm) * _scale(case, x),
                           label="mass_matrix_solve"))
    return out


@register("determinant", "Corollary 6.1, Eq. 52, 53", requires=("articulated_inertias",))
def determinant(case: Case):
    """det [I + H φ K] = 1 and det ℳ = det D = Π_k det D(k) (log det for floats)."""
    A, _ = _innovations(case)
    ab = _riccati(case)
    if case.symbolic:
        prod = 1
        for Dk in ab.D.values():
            prod = prod * _det(Dk, True)
        out = [compare(_det(A, True), 1, label="Eq. 52"), compare(_det(_mass(case), True), prod, label="Eq. 53")]
        if hasattr(alg, "mass_matrix_det"):
            out.append(compare(_with_riccati(case, alg.mass_matrix_det), prod, label="mass_matrix_det"))
        return out
    sign, logdet = np.linalg.slogdet(_mass(case))
    logdet_D = sum(np.linalg.slogdet(Dk)[1] for Dk in ab.D.values())
    s = max(1.0, abs(logdet))  # absolute error of a log is the relative error of the determinant
    kappa = _condition_M(case)  # δ log det ℳ = tr(ℳ^{-1} δℳ)
    out = [compare(np.linalg.det(A), 1.0, scale=1.0, label="Eq. 52"), compare(sign, 1.0, label="sign"),
           compare(logdet_D, logdet, scale=s, label="Eq. 53", condition=kappa)]
    if hasattr(alg, "mass_matrix_logdet"):
        out.append(compare(_with_riccati(case, alg.mass_matrix_logdet), logdet, scale=s, label="mass_matrix_logdet",
                           condition=kappa))
    return out


# --------------------------------------------------------------------------- §11 forward dynamics
@register("forward_dynamics", "Lemma 12, Eq. 54; Algorithm 6.1", requires=("forward_dynamics", "articulated_inertias"))
def forward_dynamics(case: Case):
    """Algorithm 6.1 equals [I − H ψ K]* D^{-1} [T − H ψ (K T + P a + b)] − K* ψ* a and solves ℳ θ̈ + 𝒞 = T."""
    ops, R = case.dense, _ops(case)
    _, B = _innovations(case)
    T, a, b = case.dof_vector("T"), case.a, case.b
    qdd = _with_riccati(case, alg.forward_dynamics, T, a, b)
    expected = B.T @ R.D_inverse @ (T - ops.H @ R.psi @ (R.K @ T + R.P @ a + b)) - R.K.T @ R.psi.T @ a
    # a solve with ℳ through D(k)^{-1} formed explicitly: forward error and residual both grow as cond ℳ · ε
    kappa = _condition_M(case)
    return [compare(qdd, expected, label="Eq. 54", condition=kappa),
            compare(_mass(case) @ qdd + ops.bias(a, b), T, scale=_scale(case, T, ops.bias(a, b)), label="M qdd + C = T",
                    condition=kappa)]



def _round_trip_vector(case: Case, label: str) -> np.ndarray:
    """A test hinge vector; for symbolic models small integers, so the proof is over the model's
    symbols without a second layer of symbolic vector entries."""
    if not case.symbolic:
        return case.dof_vector(label)
    import sympy

    return np.array([sympy.Integer(int(v)) for v in case.rng(label).integers(-3, 4, case.model.dof_size)], dtype=object)


@register("forward_inverse_round_trip", "Algorithms 3.1, 6.1", requires=("forward_dynamics",))
def forward_inverse_round_trip(case: Case):
    """Newton–Euler undoes forward dynamics and vice versa (with a, b)."""
    model, a, b = case.model, case.a, case.b
    T, qdd = _round_trip_vector(case, "T"), _round_trip_vector(case, "qdd")
    T_back = alg.inverse_dynamics(model, _canonical(case, _with_riccati(case, alg.forward_dynamics, T, a, b)), a=a, b=b)
    qdd_back = _with_riccati(case, alg.forward_dynamics, _canonical(case, alg.inverse_dynamics(model, qdd, a=a, b=b)), a, b)
    Mm, kappa = _mass(case), _condition_M(case)  # forward dynamics is a solve with ℳ
    return [compare(T_back, T, scale=_scale(case, T, case.dense.bias(a, b)), label="ID(FD(T))", condition=kappa),
            compare(Mm @ qdd_back, Mm @ qdd, scale=None if case.symbolic else _scale(case, Mm) * _scale(case, qdd),
                    label="FD(ID(qdd))", condition=kappa)]


# --------------------------------------------------------------------------- §12 operational space
def _task_nodes(model, with_dofs: bool = False) -> tuple:
    """Tips of the tree (at most three) plus one interior body, as task nodes (only bodies with
    hinge dofs when ``with_dofs``)."""
    bodies = [k for k in model.bodies if model.dof_dim(k) > 0 or not with_dofs]
    tips = [k for k in bodies if not model.tree.children(k)]
    inner = [k for k in bodies if model.tree.children(k)]
    return tuple(tips[:3] + inner[:1])


@register("operational_space_compliance", "SKO.md §12, Eq. 59, 60", requires=("articulated_inertias",))
def operational_space_compliance(case: Case):
    """Ω = φ* H* ℳ^{-1} H φ = ψ* H* D^{-1} H ψ; its Υ blocks by scatter; task-node blocks agree."""
    model, ops, R = case.model, case.dense, _ops(case)
    _, B = _innovations(case)
    inverse = B.T @ R.D_inverse @ B  # ℳ^{-1} (Eq. 51, checked on its own)
    Omega = ops.phi.T @ ops.H.T @ inverse @ ops.H @ ops.phi
    Omega_psi = R.psi.T @ ops.H.T @ R.D_inverse @ ops.H @ R.psi
    kappa = _condition_M(case)  # Ω contains ℳ^{-1}
    out = [compare(Omega_psi, Omega, label="Eq. 60", condition=kappa)]
    if hasattr(alg, "backward_lyapunov"):
        X = {k: model.H[k].T @ _riccati(case).D_inverse[k] @ model.H[k] for k in model.bodies}
        ups = alg.backward_lyapunov(model, X, _riccati(case).psi, _riccati(case).psi)
        out.append(compare(ups.matrix(), Omega, label="Upsilon blocks", condition=kappa))
    if hasattr(alg, "operational_space_compliance"):
        nodes = _task_nodes(model)
        idx = np.concatenate([np.arange(model.node_size)[model.node_slice(k)] for k in nodes])
        out.append(compare(np.asarray(alg.operational_space_compliance(model, nodes, articulated=_riccati(case))),
                           Omega[np.ix_(idx, idx)], label="operational_space_compliance", condition=kappa))
    return out


@register("operational_space_inertia", "SKO.md §12 (Λ = (ℬ* Ω ℬ)^{-1})", symbolic=False,
          requires=("operational_space_inertia",))
def operational_space_inertia(case: Case):
    """Λ (ℬ* Ω ℬ) = I for one task coordinate per task node.

    The task direction of node k is its first hinge direction H*(k) e_1, so the task Jacobian has
    full row rank on any model (each task row reaches its own hinge column)."""
    model, ops = case.model, case.dense
    nodes = _task_nodes(model, with_dofs=True)
    B = {k: model.H[k][:1].T for k in nodes}
    Lam = alg.operational_space_inertia(model, nodes, B, articulated=_riccati(case))
    _, Bi = _innovations(case)
    inverse = Bi.T @ _ops(case).D_inverse @ Bi
    J = np.vstack([((ops.H @ ops.phi)[:, model.node_slice(k)] @ B[k]).T for k in nodes])  # ℬ* φ* H*
    compliance = J @ inverse @ J.T
    return compare(Lam @ compliance, _I(len(nodes), case),
                   scale=None if case.symbolic else _scale(case, Lam) * _scale(case, compliance),
                   condition=_condition_M(case))  # both compliances contain ℳ^{-1}


# --------------------------------------------------------------------------- §13 sparsity by segments
def _segment_pattern(model, A: np.ndarray, rows: str, segments) -> np.ndarray:
    """Which segment blocks of ``A`` are nonzero (node or dof partition)."""
    sl = model.node_slice if rows == "node" else model.dof_slice
    size = model.node_size if rows == "node" else model.dof_size
    index = [np.concatenate([np.arange(size)[sl(k)] for k in seg]) for seg in segments]
    return np.array([[bool(np.any(A[np.ix_(r, c)] != 0)) for c in index] for r in index])


@register("segment_sparsity", "SKO.md §13 (Eq. 61–63)", symbolic=False)
def segment_sparsity(case: Case):
    """The predicted segment patterns of ℰ_φ (diagonal + connectors), φ and ℳ (related segment
    pairs) equal the computed ones; ℰ_φ has one nonzero connector block per child segment."""
    model, ops = case.model, case.dense
    tree = model.tree
    segments = tree.segments()
    branches = tree.branch_tree()
    S = len(segments)
    related = np.array([[branches.related(s, t) for t in range(S)] for s in range(S)])
    above = np.array([[s == t or branches.is_ancestor(s, t) for t in range(S)] for s in range(S)])
    child = np.array([[branches.parent(t) == s for t in range(S)] for s in range(S)])
    chain = np.array([[s == t and len(segments[s]) > 1 for t in range(S)] for s in range(S)])
    computed = {"E": (_segment_pattern(model, ops.E, "node", segments), chain | child),
                "phi": (_segment_pattern(model, ops.phi, "node", segments), above),
                "M": (_segment_pattern(model, _mass(case), "dof", segments), related)}
    # Predicted zeros are zeros for any data; predicted nonzeros are nonzero for generic data
    # (a zero weight, weights whose product vanishes, or physical structure can add zeros).
    generic = case.generic and all(np.any(W != 0) for W in model.phi.values())
    out = [compare(c & ~p, np.zeros_like(p), label=f"{name} zeros") for name, (c, p) in computed.items()]
    if generic:
        out += [compare(c, p, label=f"{name} pattern") for name, (c, p) in computed.items()]
    for t in range(S):  # the connector block φ(1_j, n_k): tip of the parent segment → base of the child
        base = segments[t][0]
        p = tree.parent(base)
        if p is not None:
            out.append(compare(float(p == segments[branches.parent(t)][-1]), 1.0, label=f"connector {t}"))
    return out


@register("sparsity_prediction", "SKO.md §13 (algorithms.sparsity)", symbolic=False, requires=("node_pattern",))
def sparsity_prediction(case: Case):
    """The node-level patterns predicted by ``sko.algorithms.node_pattern`` hold for ℰ_φ, φ and ℳ:
    predicted zeros are exact zeros, and for generic weights every predicted block is nonzero."""
    model, ops = case.model, case.dense
    predicted = alg.node_pattern(model.tree)
    ns = model.node_slices
    node = lambda A: np.array([[bool(np.any(A[a, b] != 0)) for b in ns] for a in ns])  # noqa: E731
    computed = {"E": (node(ops.E), predicted.E), "phi": (node(ops.phi), predicted.phi),
                "M": (alg.mass_matrix_pattern(model), predicted.mass_matrix)}
    generic = case.generic and all(np.any(W != 0) for W in model.phi.values())
    out = [compare(c & ~p, np.zeros_like(p), label=f"{name} zeros") for name, (c, p) in computed.items()]
    if generic:
        out += [compare(c, p, label=f"{name} pattern") for name, (c, p) in computed.items()]
    return out

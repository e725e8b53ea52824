"""Newton–Euler inverse dynamics of a tree of rigid bodies on ten inertial parameters, and the
velocity terms of its forward dynamics, in each body's own frame (SKO.md §5, Algorithm 3.1;
RIGID.md, *The SKO model in body coordinates*, the recursion on the blocks).

Where every body is a library rigid body (:func:`sko.engine.mass_matrix.applies`) on a joint of
constant ``S`` with ``c_J = 0`` (:func:`applies`), the state kernels need only write ``E`` and
``H`` (``Terms.STRUCTURE``): the recursion forms the rest itself, every transform from the
blocks of ``ᵏX_℘ = [[E, 0], [B, E]]`` and every inertia from its ten numbers:

* a scatter (parents first): ``𝒱 = ᵏX_℘ 𝒱(℘) + S θ̇``, ``α = ᵏX_℘ α(℘) + S θ̈ + 𝒱 × S θ̇``
  (a base body hangs from the world's record: its velocity and ``γ = −a_g``, which carries
  gravity), then ``f = M α + 𝒱 ×* M 𝒱`` with ``M x = [Ī ω + h × u; m u − h × ω]``;
* a gather (children first): ``T = H f``, ``f(℘) += ᵏX_℘^* f``.

These are the generic recursion's terms (the state kernel's ``a = ᵏX_℘ γ_o + 𝒱 × S θ̇``,
``b = 𝒱 ×* M 𝒱``; :mod:`sko.engine.rnea`), formed where they are used: a transform of a motion
or a force costs 27 products where a 6 × 6 block costs 36, and ``M x`` costs 24 where the
block costs 36. Buffers: :data:`NODE` entries per body (:data:`Node`).

Forward dynamics takes the same scatter without ``θ̈`` (:func:`rigid_bias`): it writes ``𝒱``,
``a`` and ``b`` into the arena as the state kernels would at ``Terms.MOTION``, and the
articulated-body passes (:mod:`sko.engine.aba`) read them there.
"""

from __future__ import annotations

from sko.engine.borrow import borrowed
from sko.engine.bodies.rigid import force_cross, motion_cross
from sko.engine.fields import offsets
from sko.engine.jit import inline_kernel, kernel, register
from sko.engine.layout import Flat
from sko.engine.mass_matrix import base_rows, composite_force, ten_parameters, weight_rows
from sko.engine.rigid_blocks import held, put
from sko.engine.state_kernels import Record, Row

__all__ = ["Node", "NODE", "applies", "forms_bias", "rigid_newton_euler", "rigid_bias"]

#: Per body: its velocity ``𝒱``, its acceleration ``α`` and its force ``f`` (own frame).
Node = offsets("Node", velocity=6, acceleration=6, force=6)
NODE = Node.SIZE


def applies(layout) -> bool:
    """Whether :func:`rigid_newton_euler` takes the system of ``layout`` (with
    :func:`sko.engine.mass_matrix.applies`): every joint of constant ``S`` and ``c_J = 0``
    (:attr:`~sko.bodies.joints.Joint.constant_motion`), or a library joint without coordinates
    (a fixed joint kept as a body of its own)."""
    joints = (layout.system.body(k).joint for k in layout.bodies)
    return all(j.constant_motion or (j.nv == 0 and not j.user_defined) for j in joints)


def forms_bias(layout) -> bool:
    """Whether :func:`rigid_bias` takes the system of ``layout`` (with :func:`applies`): no body's
    outputs are checked at every state (:func:`~sko.engine.state_kernels.checked_outputs`, which
    reads ``a``, ``b`` and ``𝒱``: a state whose terms were not finite would leave them so for the
    next state's fill at ``Terms.STRUCTURE``, which does not write them)."""
    return applies(layout) and not layout.checked.any()


@inline_kernel
def motion_transform(e, b, x):
    """``ᵏX_℘ x = [E ω; B ω + E u]`` for ``x = [ω; u]``, ``e`` and ``b`` the rows of ``Eᵀ`` and
    ``Bᵀ`` (:func:`~sko.engine.mass_matrix.weight_rows`)."""
    e00, e01, e02, e10, e11, e12, e20, e21, e22 = e
    b00, b01, b02, b10, b11, b12, b20, b21, b22 = b
    w0, w1, w2, u0, u1, u2 = x
    return (e00 * w0 + e10 * w1 + e20 * w2, e01 * w0 + e11 * w1 + e21 * w2, e02 * w0 + e12 * w1 + e22 * w2,
            b00 * w0 + b10 * w1 + b20 * w2 + e00 * u0 + e10 * u1 + e20 * u2,
            b01 * w0 + b11 * w1 + b21 * w2 + e01 * u0 + e11 * u1 + e21 * u2,
            b02 * w0 + b12 * w1 + b22 * w2 + e02 * u0 + e12 * u1 + e22 * u2)


@inline_kernel
def force_transform(e, b, f):
    """``ᵏX_℘^* f = [Eᵀ n + Bᵀ g; Eᵀ g]`` for ``f = [n; g]`` (``e``, ``b`` as in :func:`motion_transform`)."""
    e00, e01, e02, e10, e11, e12, e20, e21, e22 = e
    b00, b01, b02, b10, b11, b12, b20, b21, b22 = b
    n0, n1, n2, g0, g1, g2 = f
    return (e00 * n0 + e01 * n1 + e02 * n2 + b00 * g0 + b01 * g1 + b02 * g2,
            e10 * n0 + e11 * n1 + e12 * n2 + b10 * g0 + b11 * g1 + b12 * g2,
            e20 * n0 + e21 * n1 + e22 * n2 + b20 * g0 + b21 * g1 + b22 * g2,
            e00 * g0 + e01 * g1 + e02 * g2, e10 * g0 + e11 * g1 + e12 * g2, e20 * g0 + e21 * g1 + e22 * g2)


@register
def _blocks(rows, layout, data, j, p):
    """The rows of ``Eᵀ`` and ``Bᵀ`` of body ``j``'s ``ᵏX_℘``: its weight's, or a base body's ``E``."""
    return weight_rows(data, layout[j, Flat.W]) if p >= 0 else base_rows(rows, data, j)


@register
def _sum(x, y):
    """``x + y`` for six numbers each."""
    return x[0] + y[0], x[1] + y[1], x[2] + y[2], x[3] + y[3], x[4] + y[4], x[5] + y[5]


@register
def _hinge_motion(data, ho, h, x, xo):
    """``S x = H* x[xo: xo + h]``, six numbers, for the ``h`` rows of ``H`` at ``data[ho]``."""
    zero = 0.0 * data[ho]
    out = (zero, zero, zero, zero, zero, zero)
    for c in range(h):
        s, t = held(data, ho + 6 * c, 6), x[xo + c]
        out = (out[0] + s[0] * t, out[1] + s[1] * t, out[2] + s[2] * t, out[3] + s[3] * t, out[4] + s[4] * t,
               out[5] + s[5] * t)
    return out


@register
def _velocity(layout, data, j, e, b, v, qd):
    """Body ``j``'s ``(𝒱, v_J)``: ``𝒱 = ᵏX_℘ v + v_J`` from its parent's velocity ``v``
    (``e``, ``b``: :func:`_blocks`), ``v_J = S θ̇``."""
    vJ = _hinge_motion(data, layout[j, Flat.H], layout[j, Flat.HINGE_DIM], qd, layout[j, Flat.DOF])
    return _sum(motion_transform(e, b, v), vJ), vJ


@register
def _bias_force(data, mo, v):
    """``𝒱 ×* M 𝒱`` for the inertia ``M`` at ``data[mo]`` read as its ten numbers."""
    return force_cross(v, composite_force(_ten(data, mo), v))


@register
def _ten(data, mo):
    """The ten numbers of the inertia at ``data[mo]`` in :func:`composite_force`'s order."""
    mass, g, inertia = ten_parameters(data, mo)
    return mass, g[0], g[1], g[2], inertia[0], inertia[1], inertia[2], inertia[3], inertia[4], inertia[5]


@kernel(entry=True)
def rigid_newton_euler(rows, layout, data, qdd, qd, nodes, T):
    """``T = H f`` (``T`` zero on entry) of a tree of rigid bodies (module docstring) from the
    state table ``rows``, the flat ``layout`` and the arena ``data`` filled at
    ``Terms.STRUCTURE``; ``nodes`` holds :data:`NODE` entries per body."""
    rows, layout, data, qdd, qd, nodes, T = (borrowed(rows), borrowed(layout), borrowed(data), borrowed(qdd),
                                             borrowed(qd), borrowed(nodes), borrowed(T))
    n = layout.shape[0]
    for j in range(n):  # scatter: 𝒱, α, then f = M α + 𝒱 ×* M 𝒱
        p, no = layout[j, Flat.PARENT], NODE * j
        if p >= 0:
            v, a = held(nodes, NODE * p + Node.velocity, 6), held(nodes, NODE * p + Node.acceleration, 6)
        else:  # the world's record: its velocity, and γ = −a_g
            io = rows[j, Row.INBOARD]
            v, a = held(data, io + Record.velocity, 6), held(data, io + Record.gamma, 6)
        e, b = _blocks(rows, layout, data, j, p)
        v, vJ = _velocity(layout, data, j, e, b, v, qd)
        ho, h, do = layout[j, Flat.H], layout[j, Flat.HINGE_DIM], layout[j, Flat.DOF]
        a = _sum(_sum(motion_transform(e, b, a), _hinge_motion(data, ho, h, qdd, do)), motion_cross(v, vJ))
        mo = layout[j, Flat.M]
        Ma, bias = composite_force(_ten(data, mo), a), _bias_force(data, mo, v)
        for i in range(6):
            nodes[no + Node.velocity + i] = v[i]
            nodes[no + Node.acceleration + i] = a[i]
            nodes[no + Node.force + i] = Ma[i] + bias[i]
    for k in range(n - 1, -1, -1):  # gather: T = H f, f(℘) += ᵏX_℘^* f
        p, do, ho = layout[k, Flat.PARENT], layout[k, Flat.DOF], layout[k, Flat.H]
        f = held(nodes, NODE * k + Node.force, 6)
        for c in range(layout[k, Flat.HINGE_DIM]):
            s = held(data, ho + 6 * c, 6)
            T[do + c] += s[0] * f[0] + s[1] * f[1] + s[2] * f[2] + s[3] * f[3] + s[4] * f[4] + s[5] * f[5]
        if p >= 0:
            e, b = weight_rows(data, layout[k, Flat.W])
            x = force_transform(e, b, f)
            po = NODE * p + Node.force
            for i in range(6):
                nodes[po + i] += x[i]


@kernel
def rigid_bias(rows, layout, data, qd):
    """What the state kernels add at ``Terms.MOTION`` to an arena filled at ``Terms.STRUCTURE``,
    for a tree of rigid bodies (module docstring), formed by a scatter on the blocks:
    ``𝒱 = ᵏX_℘ 𝒱(℘) + S θ̇``, ``a = 𝒱 × S θ̇`` (a base body's ``+ ᵏX_℘ γ``, ``γ = −a_g`` the
    world's) and ``b = 𝒱 ×* M 𝒱``, into the arena's ``𝒱``, ``a`` and ``b`` of each body
    (Algorithm 6.1 reads ``a`` and ``b``)."""
    rows, layout, data, qd = borrowed(rows), borrowed(layout), borrowed(data), borrowed(qd)
    for j in range(layout.shape[0]):
        p = layout[j, Flat.PARENT]
        e, b = _blocks(rows, layout, data, j, p)
        io = rows[j, Row.INBOARD]  # a base body's: the world's record
        inboard = rows[p, Row.VELOCITY] if p >= 0 else io + Record.velocity
        v, vJ = _velocity(layout, data, j, e, b, held(data, inboard, 6), qd)
        a = motion_cross(v, vJ)
        if p < 0:
            a = _sum(motion_transform(e, b, held(data, io + Record.gamma, 6)), a)
        f = _bias_force(data, layout[j, Flat.M], v)
        put(data, rows[j, Row.VELOCITY], v)
        put(data, layout[j, Flat.A], a)
        put(data, layout[j, Flat.B], f)

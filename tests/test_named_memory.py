"""Named memory: the compiled engine addresses its flat buffers through declared offsets
(:mod:`sko.engine.fields`: ``offsets``, ``columns``), not by literal offset arithmetic.

Read from the sources (``ast``) of every module of :mod:`sko.engine` but the one module of
6-vector register helpers (``rigid_blocks.py``, whose literals are the components of its
registers):

1. no index ``base ± k`` or ``[k]`` with an integer literal ``|k| ≥ 6``: a literal that jumps past
   a 6-vector lands in another field, which has a name. Two things are not offsets and pass: the
   ends of a range within one field (``x[o: o + 9]``, ``x[o + 3: o + 6]``), and the literals of
   :data:`ALLOWED`, each the mathematics of one function (entries of a row-major 3 × 3 or 6 × 6
   block, the coordinates of a node after its rigid six), with the reason;
2. no buffer of a request's workspace read by position: the offsets ``request_views`` returns
   last are read by the names the request declares (``at[Work.RHS]``, ``buffer(ws, at, Work.RHS)``);
3. no size recovered from a buffer's length (``np.sqrt(x.shape[0] // 8)``): sizes are passed.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import sko.engine

ENGINE = Path(sko.engine.__file__).parent
#: the one module of 6-vector register helpers
REGISTERS = "rigid_blocks.py"

_ROTATION = "entries (2, 0…2) of a row-major 3 × 3 rotation"
_TRIANGLE = ("entries of the 21 numbers of a symmetric 6 × 6's upper triangle held in registers "
             "(the register forms of rigid_blocks.py, on lane numbers)")
#: (module, function) -> (the literals allowed there, why they are the mathematics and not offsets)
ALLOWED: dict[tuple[str, str], tuple[frozenset, str]] = {
    ("bodies/rigid.py", "hinge"): (frozenset({6, 7, 8}), _ROTATION + " (E_T)"),
    ("bodies/rigid.py", "placed_transform"): (frozenset({6, 7, 8}), _ROTATION + " (E_T)"),
    ("bodies/rigid.py", "_rotor_velocities"): (frozenset({6, 7, 8}), "the rotor's three node coordinates follow the rigid "
                                                                  "body's six (rows of ∂ã/∂v_o, ∂b/∂v_o, entries of 𝒱); "
                                                                  + _ROTATION + " (I_r)"),
    ("bodies/rigid.py", "_rotor"): (frozenset({6}), "the rotor's three node coordinates follow the rigid body's six "
                                                    "(rows and columns 6…8 of E, H, M, a, 𝒱)"),
    ("bodies/flexible.py", "_flexible"): (frozenset({6, 7, 8}), "the r modal coordinates follow the rigid six "
                                                                "(columns of B_i, entries of b and 𝒱); " + _ROTATION),
    ("bodies/flexible.py", "_flexible_velocities"): (frozenset({6}), "the r modal rows of ∂b/∂v_o follow the rigid six"),
    ("bodies/flexible.py", "_flexible_joint"): (frozenset({6}), "the r modal rows of ∂b follow the rigid six"),
    ("bodies/flexible.py", "_modal_node"): (frozenset({6, 7, 8}), _ROTATION + " (R_o); Π_o's columns follow "
                                                                  "ᵒX_k's six in Γ_o"),
    ("bodies/flexible.py", "_flexible_modes"): (frozenset({6}), "the r modal rows of ∂b and columns of ∂M follow "
                                                                "the rigid six"),
    ("bodies/flexible.py", "_modal_node_partials"): (frozenset({6}), "row 2 of a row-major 3 × 3 (R_o); Π_o's columns "
                                                                     "follow ᵒX_k's six in Γ_o"),
    ("bodies/flexible.py", "_sum"): (frozenset({6, 7, 8}), _ROTATION),
    ("bodies/flexible.py", "_exp_map_matrix"): (frozenset({6, 7, 8}), _ROTATION),
    ("bodies/flexible.py", "_times"): (frozenset({6, 7, 8}), _ROTATION),
    ("bodies/flexible.py", "_times_transpose"): (frozenset({6, 7, 8}), _ROTATION),
    ("constrained.py", "_times"): (frozenset({6, 7, 8}), _ROTATION),
    ("constrained.py", "_transpose_times"): (frozenset({6, 7, 8}), _ROTATION),
    ("constrained.py", "_side"): (frozenset({6}), _ROTATION),
    ("constrained.py", "_maps"): (frozenset({6, 12, 18, 24, 30}), "rows of a row-major block of six columns"),
    ("derivatives.py", "_world_inertia"): (frozenset({6, 7, 8, 9, 10, 11, 15, 16, 17, 35}),
                                           "entries of a row-major 6 × 6 spatial inertia (h×, its mass); "
                                           + _ROTATION + " (R)"),
    ("lane_derivatives.py", "_world_inertia"): (frozenset({6, 7, 8}), _ROTATION + " (R)"),
    ("lane_derivatives.py", "_scatter"): (frozenset({6, 7, 8}), _ROTATION + " (R)"),
    ("derivatives.py", "scatter"): (frozenset({6, 8, 12, 13}), "entries of the 3 × 3 skew blocks of crfb(ℐ v) in "
                                                               "a row-major 6 × 6"),
    ("joints.py", "_planar"): (frozenset({6}), "row 2 of the row-major 3 × 3 basis U"),
    ("joints.py", "_free_rate"): (frozenset({6}), "ṗ's last entry after the quaternion's rate (q = [quaternion; p])"),
    ("mass_matrix.py", "ten_parameters"): (frozenset({7, 8, 9, 14, 16, 35}),
                                              "entries of the row-major 6 × 6 M (Ī's upper triangle, h, m)"),
    ("lanes.py", "_riccati_6_1"): (frozenset(range(6, 21)), _TRIANGLE),
    ("regressors.py", "_world_column"): (frozenset({6, 7, 8}), _ROTATION),
    ("regressors.py", "_pose"): (frozenset({6, 7, 8}), _ROTATION),
    ("regressors.py", "torque_regressor"): (frozenset({10, 20, 30, 40, 50}), "rows of the 6 × 10 body block F"),
    ("regressors.py", "energy_rows"): (frozenset({6, 7, 8, 9}), "the ten inertial parameters' columns; " + _ROTATION),
}


def _modules() -> list[Path]:
    return sorted(p for p in ENGINE.rglob("*.py") if p.name != REGISTERS)


def _name(path: Path) -> str:
    return path.relative_to(ENGINE).as_posix()


def _literal(node) -> int | None:
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


def _offsets_in(index) -> list[int]:
    """The integer literals ``|k| ≥ 6`` added to or subtracted from something in ``index``, or
    standing alone as it."""
    if _literal(index) is not None:
        return [index.value] if abs(index.value) >= 6 else []
    out = []
    for node in ast.walk(index):
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            out += [k for side in (node.left, node.right) if (k := _literal(side)) is not None and abs(k) >= 6]
    return out


def _base(node):
    """``(x, k)`` for ``x + k`` with an integer literal ``k``, else ``(node, 0)``."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and _literal(node.right) is not None:
        return node.left, node.right.value
    return node, 0


def _within_a_field(piece: ast.Slice) -> bool:
    """``x[o: o + k]`` or ``x[o + j: o + k]``: entries of one field that starts at ``o``; or
    ``x[:k]``, the first ``k`` entries."""
    if piece.lower is None:
        return _literal(piece.upper) is not None
    (low, _), (up, k) = _base(piece.lower), _base(piece.upper)
    return k != 0 and ast.dump(low) == ast.dump(up)


def _indices(sub: ast.Subscript) -> list:
    """The parts of a subscript that are offsets (the end of a range within a field is not)."""
    parts = sub.slice.elts if isinstance(sub.slice, ast.Tuple) else [sub.slice]
    out = []
    for part in parts:
        if isinstance(part, ast.Slice):
            if part.upper is not None and _within_a_field(part):
                out += [x for x in (_base(part.lower)[0] if part.lower is not None else None, part.step)
                        if x is not None]
            else:
                out += [x for x in (part.lower, part.upper, part.step) if x is not None]
        else:
            out.append(part)
    return out


def _functions(tree: ast.Module):
    """``(function name, node)`` of every function (methods and nested ones under their own name)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node.name, node


def literal_offsets(path: Path) -> list[str]:
    """Rule 1's findings in one module, as ``module:line function: code``."""
    tree, found = ast.parse(path.read_text()), []
    owner = {}
    for name, fn in _functions(tree):
        for node in ast.walk(fn):
            owner[id(node)] = name  # the innermost function wins: walked after the one around it
    for node in ast.walk(tree):
        if not isinstance(node, ast.Subscript):
            continue
        function = owner.get(id(node), "<module>")
        allowed = ALLOWED.get((_name(path), function), (frozenset(), ""))[0]
        bad = [k for part in _indices(node) for k in _offsets_in(part) if abs(k) not in allowed]
        if bad:
            found.append(f"{_name(path)}:{node.lineno} {function}: {ast.unparse(node)}")
    return found


def _buffer_offsets(fn) -> set[str]:
    """The names bound to the last of ``request_views``' views (the workspace buffers' offsets)."""
    out = set()
    for node in ast.walk(fn):
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                and getattr(node.value.func, "id", None) == "request_views"
                and isinstance(node.targets[0], ast.Tuple) and isinstance(node.targets[0].elts[-1], ast.Name)):
            out.add(node.targets[0].elts[-1].id)
    return out


def buffers_by_position(path: Path) -> list[str]:
    """Rule 2's findings: a workspace buffer's offset read by a literal position."""
    found = []
    for name, fn in _functions(ast.parse(path.read_text())):
        names = _buffer_offsets(fn)
        for node in ast.walk(fn):
            if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in names
                    and any(_literal(part) is not None for part in _indices(node))):
                found.append(f"{_name(path)}:{node.lineno} {name}: {ast.unparse(node)}")
    return found


def sizes_from_lengths(path: Path) -> list[str]:
    """Rule 3's findings: a square root of something's ``shape``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) in ("sqrt", "isqrt")
                and any(isinstance(x, ast.Attribute) and x.attr == "shape" for a in node.args for x in ast.walk(a))):
            found.append(f"{_name(path)}:{node.lineno}: {ast.unparse(node)}")
    return found


@pytest.mark.parametrize("rule", [literal_offsets, buffers_by_position, sizes_from_lengths], ids=lambda r: r.__name__)
def test_engine_memory_is_named(rule):
    found = [line for path in _modules() for line in rule(path)]
    assert not found, "literal offsets into flat buffers (name them with sko.engine.fields):\n" + "\n".join(found)


def test_each_allowance_is_used_and_explained():
    """An allowance no literal needs any more goes (the list stays small and true)."""
    used = set()
    for path in _modules():
        tree = ast.parse(path.read_text())
        for function, fn in _functions(tree):
            key = (_name(path), function)
            if key in ALLOWED:
                literals = {abs(k) for node in ast.walk(fn) if isinstance(node, ast.Subscript)
                            for part in _indices(node) for k in _offsets_in(part)}
                if literals & ALLOWED[key][0]:
                    used.add(key)
    assert set(ALLOWED) == used, f"allowances without a literal to allow: {sorted(set(ALLOWED) - used)}"
    assert all(reason for _, reason in ALLOWED.values())


@pytest.mark.parametrize("code, rule", [
    ("def f(t):\n    return t[27 + 1]\n", literal_offsets),
    ("def f(a, o):\n    return a[o + 12]\n", literal_offsets),
    ("def f(w):\n    words, rows, layout, roff, reals, arena, ws, at = request_views(w)\n    return ws[at[3]]\n",
     buffers_by_position),
    ("import numpy as np\ndef f(x):\n    return int(np.sqrt(x.shape[0] // 8))\n", sizes_from_lengths),
])
def test_the_rules_find_what_they_forbid(tmp_path, code, rule):
    probe = tmp_path / "probe.py"
    probe.write_text(code)
    assert _findings(rule, probe), f"{rule.__name__} missed {code!r}"


def _findings(rule, probe: Path) -> list[str]:
    """``rule`` on a module outside the package (named relative to its own folder)."""
    global ENGINE
    saved, ENGINE = ENGINE, probe.parent
    try:
        return rule(probe)
    finally:
        ENGINE = saved


def test_a_field_and_its_length_pass(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def f(a, o, F):\n    return a[o + F.rotation: o + F.rotation + 9], a[o + 3]\n")
    assert _findings(literal_offsets, probe) == []


def test_every_request_names_the_buffers_of_its_workspace():
    """A request with a workspace declares its buffers' names, one per size it gives."""
    from sko.engine.requests import REQUESTS, Sizes

    sizes = Sizes(n=3, nq=7, nv=6, ns=18, mm=6, nn=1, riccati=120, arena=400)
    for request in REQUESTS.values():
        given = tuple(request.buffers(sizes))
        assert (request.workspace is None) == (not given), request.name
        assert request.buffer_sizes(sizes) == given
        if request.rigid is not None:  # its rigid kernel's workspace, or the request's own
            own = request.rigid.buffers is None
            assert own == (request.rigid.workspace is None), request.name
            assert request.buffer_sizes(sizes, True) == (given if own else tuple(request.rigid.buffers(sizes)))


def test_a_workspace_of_other_length_than_its_names_is_refused():
    from sko.engine.fields import columns
    from sko.engine.requests import REQUESTS, Request, RigidKernel, Sizes

    kernel = REQUESTS["energy"].kernel
    request = Request("two_buffers", kernel, 0, None, False, lambda s: (1,), lambda s: (1, 2),
                      workspace=columns("Work", "ONLY"))
    with pytest.raises(ValueError, match="2 buffer sizes for the 1 buffers of Work"):
        request.buffer_sizes(Sizes(1, 1, 1, 6, 6, 1, 1, 1))
    rigid = Request("rigid_two_buffers", kernel, 0, None, False, lambda s: (1,), lambda s: (), workspace=None,
                    rigid=RigidKernel(kernel, lambda s: (1, 2), columns("RigidWork", "ONLY")))
    assert rigid.buffer_sizes(Sizes(1, 1, 1, 6, 6, 1, 1, 1)) == ()
    with pytest.raises(ValueError, match="2 buffer sizes for the 1 buffers of RigidWork"):
        rigid.buffer_sizes(Sizes(1, 1, 1, 6, 6, 1, 1, 1), True)

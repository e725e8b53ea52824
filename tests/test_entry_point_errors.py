"""Bad input at public entry points raises the project's own errors (subclasses of ``SKOError``)
with a message naming what is wrong, never a numpy, networkx or Python error from deep inside."""

import numpy as np
import pytest

import sko.algorithms as alg
from sko.graphs import (
    ConnectivityGraph,
    DimensionError,
    NonFiniteError,
    NotATreeError,
    SKOError,
    TreeDigraph,
    UnknownNodeError,
    check_parent_array,
    nilpotency_index,
    one_resolvent,
)
from sko import SKOModel
from sko.bodies import RigidBody
from sko.systems import MultibodySystem
from sko.bodies import Revolute
from sko.systems import SystemBuilder
from sko.errors import JointError, RigidSystemError
from sko.examples.rigid import planar_chain


def _model():
    tree = TreeDigraph.from_parents({"a": None, "b": "a", "c": "a"})
    return SKOModel(tree, phi={"b": np.ones((2, 3)), "c": np.ones((2, 1))},
                    H={"a": [[1.0, 0.0]], "b": [[1.0, 0.0, 0.0]], "c": [[1.0]]},
                    M={"a": np.eye(2), "b": np.eye(3), "c": np.eye(1)})


def _chain_system(n: int = 12):
    return MultibodySystem([RigidBody(f"b{i}", None if i == 0 else f"b{i - 1}", Revolute(), np.eye(6)) for i in range(n)])


CASES = [
    (lambda: TreeDigraph.from_parents({"a": None, "b": ["a"]}), NotATreeError, ["'b'", "['a']", "hashable"]),
    (lambda: ConnectivityGraph({"J": (0, ["a"])}), NotATreeError, ["'J'", "['a']", "hashable"]),
    (lambda: ConnectivityGraph.from_arrays([-1], [1]), NotATreeError, ["p(1) = -1", "non-negative integer"]),
    (lambda: ConnectivityGraph.from_arrays([0, 1], [1, 2.5]), NotATreeError, ["s(2) = 2.5"]),
    (lambda: check_parent_array(None), NotATreeError, ["sequence", "NoneType"]),
    (lambda: one_resolvent(np.ones((2, 3))), DimensionError, ["square", "(2, 3)"]),
    (lambda: nilpotency_index(np.ones((2, 3))), DimensionError, ["square", "(2, 3)"]),
    (lambda: one_resolvent([[0.0, 1.0], [0.0]]), DimensionError, ["not an array"]),
    (lambda: nilpotency_index([[0.0, np.nan], [0.0, 0.0]]), NonFiniteError, ["NaN"]),
    (lambda: alg.mass_matrix_solve(_model(), [[1.0, 2.0], [1.0], [2.0]]), DimensionError, ["y", "not an array"]),
    (lambda: alg.mass_matrix_solve(_model(), np.ones((3, 2, 1))), DimensionError, ["y", "1 or 2-D", "(3, 2, 1)"]),
    (lambda: alg.mass_matrix_pattern(_model(), np.eye(2)), DimensionError, ["(2, 2)", "(3, 3)"]),
    (lambda: alg.operational_space_inertia(_model(), {"b", "c"}), SKOError, ["ordered sequence"]),
    (lambda: Revolute("z"), JointError, ["axis", "'z'"]),
    (lambda: planar_chain(2).integrate([0.0, 0.0], [1.0, 1.0], "x"), DimensionError, ["dt", "'x'"]),
    (lambda: planar_chain(2).integrate([0.0, 0.0], [1.0, 1.0], np.nan), NonFiniteError, ["dt", "nan"]),
    (lambda: planar_chain(2).operational_space_inertia([0.0, 0.0], {"link1", "link2"}), SKOError, ["ordered sequence"]),
    (lambda: SystemBuilder().add_body("x", None, Revolute(), mass=1.0, com=[0.0, np.nan, 0.0], inertia_com=np.eye(3)),
     RigidSystemError, ["centre of mass of body 'x' must be finite"]),
]


@pytest.mark.parametrize("call, error, words", CASES)
def test_bad_input_raises_the_projects_errors(call, error, words):
    with pytest.raises(error) as info:
        call()
    assert isinstance(info.value, SKOError)
    for w in words:
        assert w in str(info.value)


def test_nested_lists_are_matrices():
    """The resolvent and nilpotency index accept any array-like, like every other entry point."""
    assert np.array_equal(one_resolvent([[0, 1], [0, 0]]), [[1.0, 1.0], [0.0, 1.0]])
    assert nilpotency_index([[0, 1], [0, 0]]) == 2


def test_singular_task_from_a_generator_lists_its_nodes():
    model = _model()  # task node "b" has 3 coordinates but only 2 hinge coordinates move it
    with pytest.raises(SKOError, match=r"task nodes \('b',\)"):
        alg.operational_space_inertia(model, (k for k in ["b"]))


def test_unknown_body_messages_elide_only_long_lists():
    short, long = _chain_system(3), _chain_system(12)
    with pytest.raises(UnknownNodeError) as info:
        short.external_forces({"zz": np.zeros(6)})
    assert str(info.value).endswith("(bodies: 'b0', 'b1', 'b2')")
    with pytest.raises(UnknownNodeError) as info:
        long.external_forces({"zz": np.zeros(6)})
    assert str(info.value).endswith("'b7', ...)")


@pytest.mark.parametrize("request_name", ["inverse_dynamics", "forward_dynamics", "bias_forces",
                                          "inverse_dynamics_derivatives", "forward_dynamics_derivatives"])
@pytest.mark.parametrize("forces", [np.zeros(3), np.zeros((2, 6))])
def test_external_forces_given_as_an_array_are_named(request_name, forces):
    """An array passed as external_forces (the mapping body → force expected) was judged by its
    truth value: numpy's "truth value of an array ... is ambiguous". Now the checked path names
    it, as sko_model does; None and an empty mapping still take the common call."""
    system = planar_chain(2)
    q, z = np.array([0.2, 0.3]), np.zeros(2)
    call = getattr(system, request_name)
    args = (q, z) if request_name == "bias_forces" else (q, z, z)
    with pytest.raises(DimensionError, match="external_forces must be a mapping body -> 6-vector, got ndarray"):
        call(*args, external_forces=forces)
    for none in (None, {}):
        np.testing.assert_array_equal(np.asarray(call(*args, external_forces=none)[0]), np.asarray(call(*args)[0]))

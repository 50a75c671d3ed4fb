"""The seed's examples, exactly, through a real server."""
import numpy as np

import kiln
import kiln.tensor as kt


def test_graph_structure_before_anything_is_sent():
    x = kt.dmatrix("x")
    y = x * 2.0
    assert str(y.owner.op) == "Elemwise{mul,no_inplace}"
    assert len(y.owner.inputs) == 2
    assert str(y.owner.inputs[0]) == "x"
    assert str(y.owner.inputs[1]) == "InplaceDimShuffle{x,x}.0"
    assert str(y.owner.inputs[1].owner.inputs[0]) == "TensorConstant{2.0}"
    assert str(y.type) == "TensorType(float64, (?, ?))"
    assert str(kt.irow().type) == "TensorType(int32, (1, ?))"
    assert kiln.dprint(y, file="str") == (
        "Elemwise{mul,no_inplace} [id A]\n"
        " |x [id B]\n"
        " |InplaceDimShuffle{x,x} [id C]\n"
        "   |TensorConstant{2.0} [id D]\n")


def test_a_plus_a_to_the_tenth(server):
    a = kt.vector("a")
    f = kiln.function([a], a + a ** 10)
    out = f([0, 1, 2])
    np.testing.assert_array_equal(out, [0.0, 2.0, 1026.0])
    assert str(out) == "[   0.    2. 1026.]"
    assert len(f.function_id) == 64
    # The optimized graph is one fused loop, printed by the server.
    assert kiln.dprint(f, file="str").startswith("Elemwise{Composite{")


def test_two_clients_share_the_cache(server):
    a = kt.vector("a")
    first = kiln.function([a], a + a ** 10)
    b = kt.vector("b")  # another name, the same graph
    second = kiln.function([b], b + b ** 10)
    assert first.function_id == second.function_id
    assert second.source == "memory"


def test_matrix_times_two(server):
    x = kt.dmatrix("x")
    f = kiln.function([x], x * 2.0)
    np.testing.assert_array_equal(f(np.arange(4.0).reshape(2, 2)), [[0, 2], [4, 6]])

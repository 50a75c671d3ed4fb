"""kiln.onnx.load against a real kiln-server: models built with python3-onnx's helpers and cases
of ONNX's own test data (Debian's libonnx-testdata) imported, run and checked against NumPy or
the case's expected outputs; trainable weights as shared variables that grad and updates train;
one compile for the same model sent twice; the errors a model that Kiln cannot take gets."""
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import kiln
import kiln.tensor as kt

DATA = os.environ.get("KILN_ONNX_TESTDATA", "/usr/share/libonnx-testdata/data")


def linear_model(w, b):
    """y = MatMul(x, W) + b, x of shape (None, 3)."""
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["xw"], name="mm"),
         helper.make_node("Add", ["xw", "b"], ["y"], name="bias")],
        "linear",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 2])],
        initializer=[numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "b")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


W = np.arange(6, dtype=np.float32).reshape(3, 2) / 10
B = np.array([0.5, -0.5], dtype=np.float32)


def test_a_model_keeps_its_names_and_computes(server):
    m = kiln.onnx.load(linear_model(W, B))
    assert m.input_names == ["x"] and m.output_names == ["y"] and m.opset == 13
    assert m.weights == [] and m.inputs[0].name == "x" and m.outputs[0].name == "y"
    f = kiln.function(m.inputs, m.outputs[0])
    x = np.random.default_rng(0).normal(size=(4, 3)).astype(np.float32)
    y = f(x)
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, x @ W + B, rtol=1e-6)
    # It composes with the rest of the API.
    g = kiln.function(m.inputs, kt.sum(kt.tanh(m.outputs[0])))
    np.testing.assert_allclose(g(x), np.tanh(x @ W + B).sum(), rtol=1e-5)


def test_a_path_and_bytes_load_the_same(server, tmp_path):
    path = tmp_path / "linear.onnx"
    onnx.save(linear_model(W, B), str(path))
    x = np.ones((2, 3), dtype=np.float32)
    for model in (str(path), path.read_bytes()):
        m = kiln.onnx.load(model)
        np.testing.assert_allclose(kiln.function(m.inputs, m.outputs[0])(x), x @ W + B, rtol=1e-6)
    with pytest.raises(TypeError):
        kiln.onnx.load(42)


def test_the_same_model_twice_compiles_once(server):
    m1, m2 = (kiln.onnx.load(linear_model(W, B)) for _ in range(2))
    f1 = kiln.function(m1.inputs, m1.outputs[0])
    f2 = kiln.function(m2.inputs, m2.outputs[0])
    assert f1.function_id and f1.function_id == f2.function_id


def test_trainable_weights_are_shared_variables_that_sgd_trains(server):
    m = kiln.onnx.load(linear_model(W, B), trainable=True)
    assert [w.name for w in m.weights] == ["W", "b"]
    np.testing.assert_array_equal(m.weights[0].get_value(), W)
    target = kt.fmatrix("t")
    loss = kt.mean((m.outputs[0] - target) ** 2)
    grads = kiln.grad(loss, m.weights)
    step = kiln.function(m.inputs + [target], loss,
                         updates=[(w, w - np.float32(0.1) * g) for w, g in zip(m.weights, grads)])
    rng = np.random.default_rng(1)
    x = rng.normal(size=(16, 3)).astype(np.float32)
    t = (x @ np.ones((3, 2), np.float32)).astype(np.float32)
    losses = [float(step(x, t)) for _ in range(20)]
    assert losses[-1] < 0.5 * losses[0]
    # The same step in NumPy, from the same start.
    w, b = W.copy(), B.copy()
    for _ in range(20):
        r = x @ w + b - t
        gw, gb = 2 * x.T @ r / r.size, 2 * r.sum(0) / r.size
        w, b = w - 0.1 * gw, b - 0.1 * gb
    np.testing.assert_allclose(m.weights[0].get_value(), w, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(m.weights[1].get_value(), b, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("case", ["pytorch-converted/test_Conv2d_groups",
                                  "pytorch-converted/test_MaxPool2d",
                                  "node/test_sce_mean_weight_ii_3d",
                                  "node/test_layer_normalization_4d_axis1",
                                  "pytorch-operator/test_operator_index"])
def test_cases_of_onnx_test_data_give_their_outputs(server, case):
    folder = os.path.join(DATA, case)
    m = kiln.onnx.load(os.path.join(folder, "model.onnx"))
    data = os.path.join(folder, "test_data_set_0")

    def read(name):
        t = TensorProto()
        with open(os.path.join(data, name), "rb") as f:
            t.ParseFromString(f.read())
        return numpy_helper.to_array(t)

    args = [read("input_%d.pb" % i) for i in range(len(m.inputs))]
    got = kiln.function(m.inputs, m.outputs)(*args)
    for i, value in enumerate(got):
        want = read("output_%d.pb" % i)
        assert value.dtype == want.dtype and value.shape == want.shape
        np.testing.assert_allclose(value, want, rtol=1e-3, atol=1e-7)


def test_a_model_kiln_cannot_take_names_what(server):
    graph = helper.make_graph(
        [helper.make_node("RandomUniformLike", ["x"], ["y"], name="noise")],
        "noise",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 2, 2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(kiln.KilnError) as e:
        kiln.onnx.load(model)
    assert e.value.code == "UNIMPLEMENTED"
    assert "RandomUniformLike (opset 13)" in e.value.message
    with pytest.raises(kiln.KilnError) as e:
        kiln.onnx.load(b"not an onnx model")
    assert e.value.code == "INVALID_ARGUMENT"


GOLDEN = os.path.join(os.path.dirname(__file__), "..", "golden", "onnx_models")


@pytest.mark.parametrize("name", ["mlp", "lenet", "encoder", "lstm_lm"])
def test_pytorch_models_compute_differentiate_and_train_as_pytorch(server, name):
    """Models PyTorch 1.13 exported (tests/golden/gen_onnx_models.py): Kiln's output, its
    cross-entropy's gradient wrt every weight and the weights after one SGD step equal
    PyTorch's."""
    m = kiln.onnx.load(os.path.join(GOLDEN, name + ".onnx"), trainable=True)
    ref = np.load(os.path.join(GOLDEN, name + ".npz"))
    logits = m.outputs[0]
    np.testing.assert_allclose(kiln.function(m.inputs, logits)(ref["x"]), ref["logits"],
                               rtol=1e-4, atol=1e-5)
    labels = kt.lvector("labels")
    loss = kt.mean(kt.nnet.categorical_crossentropy(kt.nnet.softmax(logits), labels))
    grads = kiln.grad(loss, m.weights)
    names = [w.name for w in m.weights]
    assert sorted(names) == sorted(k[len("grad:"):] for k in ref.files if k.startswith("grad:"))
    got = kiln.function(m.inputs + [labels], [loss] + grads)(ref["x"], ref["labels"])
    np.testing.assert_allclose(got[0], ref["loss"], rtol=1e-5)
    for w, g in zip(names, got[1:]):
        np.testing.assert_allclose(g, ref["grad:" + w], rtol=1e-3, atol=1e-6, err_msg=w)
    step = kiln.function(m.inputs + [labels], loss,
                         updates=[(w, w - np.float32(0.1) * g) for w, g in zip(m.weights, grads)])
    step(ref["x"], ref["labels"])
    for w in m.weights:
        np.testing.assert_allclose(w.get_value(), ref["sgd:" + w.name], rtol=1e-4, atol=1e-6,
                                   err_msg=w.name)


@pytest.mark.parametrize("name", ["mlp", "lenet", "encoder", "lstm_lm"])
def test_pytorch_models_export_back_to_onnx(server, name):
    """Each imported model's optimized function written as ONNX (pools, gathers, the LSTM's Scan
    as a Loop), checked by python3-onnx's checker and read back: PyTorch's logits again."""
    m = kiln.onnx.load(os.path.join(GOLDEN, name + ".onnx"))
    ref = np.load(os.path.join(GOLDEN, name + ".npz"))
    f = kiln.function(m.inputs, m.outputs[0])
    model = kiln.onnx.export(f)
    onnx.checker.check_model(onnx.load_from_string(model))
    back = kiln.onnx.load(model)
    np.testing.assert_allclose(kiln.function(back.inputs, back.outputs[0])(ref["x"]),
                               ref["logits"], rtol=1e-4, atol=1e-5)


def _model(nodes, inputs, outputs, inits=(), opset=13):
    graph = helper.make_graph(nodes, "hostile", inputs, outputs, initializer=list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _float(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def _code(model):
    with pytest.raises(kiln.KilnError) as e:
        kiln.onnx.load(model)
    return e.value.code


def test_hostile_models_get_clean_codes_and_the_server_lives(server):
    # An initializer that declares 10^12 elements and holds 4 bytes.
    huge = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[10 ** 6, 10 ** 6],
                       raw_data=b"\0\0\0\0")
    assert _code(_model([helper.make_node("Add", ["x", "w"], ["y"])], [_float("x", [1])],
                        [_float("y", [1])], [huge])) == "INVALID_ARGUMENT"
    # A cycle: a's input is b's output and b's is a's.
    assert _code(_model([helper.make_node("Relu", ["b"], ["a"]), helper.make_node("Relu", ["a"], ["b"])],
                        [_float("x", [1])], [_float("a", [1])])) == "INVALID_ARGUMENT"
    # A domain of its own.
    assert _code(_model([helper.make_node("Relu", ["x"], ["y"], domain="com.example")],
                        [_float("x", [1])], [_float("y", [1])])) == "UNIMPLEMENTED"
    # A node with 10^6 inputs.
    assert _code(_model([helper.make_node("Sum", ["x"] * 10 ** 6, ["y"])], [_float("x", [1])],
                        [_float("y", [1])])) == "RESOURCE_EXHAUSTED"
    # Ifs nested 200 deep.
    leaf = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "leaf", [],
                             [_float("y", [1])])
    body = leaf
    for depth in range(200):
        node = helper.make_node("If", ["c"], ["y"], then_branch=body, else_branch=leaf)
        body = helper.make_graph([node], "b%d" % depth, [], [_float("y", [1])])
    nested = _model(body.node, [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                                _float("x", [1])], [_float("y", [1])])
    assert _code(nested) == "INVALID_ARGUMENT"  # past protobuf's nesting limit
    # Types that ONNX's Add does not allow together.
    mixed = _model([helper.make_node("Add", ["x", "n"], ["y"])],
                   [_float("x", [2]), helper.make_tensor_value_info("n", TensorProto.INT64, [2])],
                   [_float("y", [2])])
    assert _code(mixed) == "INVALID_ARGUMENT"
    # The server still serves.
    m = kiln.onnx.load(linear_model(W, B))
    np.testing.assert_allclose(kiln.function(m.inputs, m.outputs[0])(np.ones((1, 3), np.float32)),
                               np.ones((1, 3), np.float32) @ W + B, rtol=1e-6)


def test_export_round_trips_and_onnx_checks_the_model(server, tmp_path):
    """The tutorial's logistic regression, written as ONNX (checked by python3-onnx's checker),
    read back by Kiln: the same values; a Function exports its graph as built."""
    x, y = kt.dmatrix("x"), kt.dvector("y")
    w, b = kt.dvector("w"), kt.dscalar("b")
    p = 1 / (1 + kt.exp(-kt.dot(x, w) - b))
    xent = -y * kt.log(p) - (1 - y) * kt.log(1 - p)
    cost = xent.mean() + 0.01 * (w ** 2).sum()
    gw, gb = kiln.grad(cost, [w, b])
    path = tmp_path / "logreg.onnx"
    model = kiln.onnx.export([p > 0.5, cost, gw, gb], str(path), inputs=[x, y, w, b],
                             output_names=["prediction", "cost", "gw", "gb"])
    assert path.read_bytes() == model
    onnx.checker.check_model(onnx.load(str(path)))
    back = kiln.onnx.load(model)
    assert back.input_names == ["x", "y", "w", "b"]
    assert back.output_names == ["prediction", "cost", "gw", "gb"]
    rng = np.random.default_rng(3)
    args = [rng.normal(size=(6, 4)), rng.integers(0, 2, 6).astype(np.float64), rng.normal(size=4),
            np.array(0.1)]
    want = kiln.function([x, y, w, b], [p > 0.5, cost, gw, gb])(*args)
    got = kiln.function(back.inputs, back.outputs)(*args)
    for g, e in zip(got, want):
        assert g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=1e-12)
    f = kiln.function([x, w, b], p)
    again = kiln.onnx.load(kiln.onnx.export(f))
    np.testing.assert_allclose(kiln.function(again.inputs, again.outputs[0])(*args[:1], *args[2:]),
                               f(*args[:1], *args[2:]), rtol=1e-12)


def test_export_names_what_onnx_cannot_hold(server):
    x = kt.dvector("x")
    with pytest.raises(kiln.KilnError) as e:
        kiln.onnx.export(kt.cumsum(x), inputs=[x])
    assert e.value.code == "UNIMPLEMENTED" and "CumOp" in e.value.message
    with pytest.raises(TypeError):
        kiln.onnx.export(x * 2)

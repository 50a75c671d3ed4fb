"""The rest of kiln.tensor.nnet against Aesara 2.9.4: batch normalization, the activations and
losses, the classifier ops, neighbours (images2neibs, neibs2images), h_softmax and
confusion_matrix. Values and gradients come from tests/golden/aesara_nnet_more.json and
aesara_neighbours.txt (written by tests/golden/gen_aesara_nnet.py); gradients are also checked by
finite differences (verify_grad), and printed names against Aesara's."""
import json
import os

import numpy as np
import pytest

import kiln
import kiln.tensor as kt
from kiln.tensor import nnet
from kiln.tensor.nnet import batchnorm, neighbours, sigm

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "golden")
with open(os.path.join(GOLDEN, "aesara_nnet_more.json")) as _f:
    CASES = json.load(_f)["cases"]
ENV = {"nnet": nnet, "bn": batchnorm, "sigm": sigm, "neighbours": neighbours, "at": kt, "np": np}

# The cases where Kiln applies the op Aesara applies: their outputs print Aesara's names.
SAME_OPS = ("SoftmaxWithBias", "CrossentropySoftmaxArgmax1HotWithBias",
            "CrossentropySoftmax1HotWithBiasDx", "CrossentropyCategorical1Hot",
            "CrossentropyCategorical1HotGrad",
            "MaxAndArgmax{axis=(1,)}", "Reshape{4}", "Join", "dot", "Elemwise{switch,no_inplace}",
            "Unique{return_index=False, return_inverse=False, return_counts=False, axis=None}",
            "Elemwise{clip,no_inplace}", "Elemwise{neg,no_inplace}")


def weights(n):
    return ((np.arange(n) * 7) % 11 - 5) / 4.0


def _build(case):
    inputs, values = [], []
    for name, dtype, shape, flat in case["inputs"]:
        inputs.append(kt.tensor(dtype, shape=(None,) * len(shape), name=name))
        values.append(np.asarray(flat, dtype=dtype).reshape(shape))
    env = dict(ENV, **{v.name: v for v in inputs})
    outs = eval(case["expr"], env)  # the expression Aesara evaluated
    outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
    return inputs, values, outs


def _tolerance(dtype):
    return dict(rtol=2e-6, atol=1e-6) if dtype == "float32" else dict(rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_values_and_gradients_match_aesara(server, case):
    inputs, values, outs = _build(case)
    results = kiln.function(inputs, outs)(*values)
    if not isinstance(results, list):
        results = [results]
    assert len(results) == len(case["outputs"])
    for got, (dtype, shape, flat) in zip(results, case["outputs"]):
        assert str(got.dtype) == dtype and list(got.shape) == shape
        np.testing.assert_allclose(got.ravel(), np.asarray(flat, dtype=dtype),
                                   **_tolerance(dtype))
    if not case["grads"]:
        return
    # (Kiln differentiates every output of batch_normalization_train; Aesara drops the
    # gradients of mean, invstd and the running averages: the golden cost is the output's.)
    n_cost = 1 if case["name"].startswith("bn_train") else len(outs)
    cost = 0
    for o, r in list(zip(outs, results))[:n_cost]:
        if r.dtype.kind == "f":
            cost = cost + (o * weights(r.size).reshape(r.shape)).sum()
    by_name = {v.name: v for v in inputs}
    wrt = list(case["grads"])
    grads = kiln.function(inputs, kiln.grad(cost, [by_name[w] for w in wrt]),
                          on_unused_input="ignore")(*values)
    for w, got in zip(wrt, grads):
        np.testing.assert_allclose(got.ravel(), case["grads"][w], rtol=1e-9, atol=1e-10,
                                   err_msg=w)


@pytest.mark.parametrize("case", [c for c in CASES if any(o in SAME_OPS for o in c["ops"] if o)],
                         ids=lambda c: c["name"])
def test_printed_names_match_aesara(case):
    _, _, outs = _build(case)
    for out, name in zip(outs, case["ops"]):
        if name in SAME_OPS:
            assert str(out.owner.op) == name


def _neighbour_cases():
    cases = []
    with open(os.path.join(GOLDEN, "aesara_neighbours.txt")) as f:
        for line in f:
            if line.startswith("#"):
                continue
            cases.append(line.rstrip("\n").split("|"))
    return cases


def _pair(text):
    return None if text == "-" else tuple(int(v) for v in text.split(","))


def _shape(text):
    return tuple(int(d) for d in text.split("x"))


@pytest.mark.parametrize("c", [c for c in _neighbour_cases() if c[4] != "ERROR"],
                         ids=lambda c: "%s-%s-%s" % (c[0], c[2], c[4]))
def test_images2neibs_matches_aesara(server, c):
    mode, dtype, shape = c[0], c[1], _shape(c[2])
    x = kt.tensor(dtype, shape=(None,) * 4, name="x")
    xv = np.array(c[3].split(","), dtype="float64").astype(dtype).reshape(shape)
    out = neighbours.images2neibs(x, _pair(c[4]), _pair(c[5]), mode=mode)
    assert str(out.owner.op) == "Images2Neibs{%s}" % mode and out.dtype == dtype
    outputs = [out]
    if c[9] != "-":
        n = int(np.prod(_shape(c[7])))
        outputs.append(kiln.grad((out * weights(n).reshape(_shape(c[7]))).sum(), x))
    results = kiln.function([x], outputs)(xv)
    results = results if isinstance(results, list) else [results]
    want = np.array([v for v in c[8].split(",") if v], dtype="float64")
    assert results[0].shape == _shape(c[7]) and str(results[0].dtype) == c[6]
    np.testing.assert_array_equal(results[0].ravel(), want.astype(dtype))
    if c[9] != "-":
        np.testing.assert_allclose(results[1].ravel(), np.array(c[9].split(","), dtype=float),
                                   rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("c", [c for c in _neighbour_cases() if c[4] == "ERROR"],
                         ids=lambda c: "%s-%s" % (c[0], c[1]))
def test_images2neibs_errors_are_aesaras(server, c):
    x = kt.dtensor4("x")
    f = kiln.function([x], neighbours.images2neibs(x, _pair(c[2]), _pair(c[3]), mode=c[0]))
    message = c[5][len("Images2Neibs: "):] if c[5].startswith("Images2Neibs: ") else c[5]
    with pytest.raises(Exception, match=r"Images2Neibs\{%s\}: %s" % (c[0], _re(message))):
        f(np.zeros(_shape(c[1])))


def _re(text):
    import re
    return re.escape(text)


def test_neighbours_names_and_errors():
    x = kt.dtensor4("x")
    out = neighbours.images2neibs(x, (2, 2))
    assert out.owner.inputs[1] is out.owner.inputs[2]  # neib_step omitted: neib_shape itself
    assert out.type.shape == (None, None)
    assert neighbours.Images2Neibs("half") == kiln.ops.Images2Neibs(mode="half")
    assert nnet.neighbours.images2neibs is neighbours.images2neibs
    with pytest.raises(Exception, match="Only modes valid, half, full, wrap_centered"):
        neighbours.images2neibs(x, (2, 2), mode="same")
    with pytest.raises(NotImplementedError, match="neibs2images do not support mode=half"):
        neighbours.neibs2images(kt.dmatrix(), (2, 2), (1, 1, 4, 4), mode="half")
    with pytest.raises(Exception, match="a 4-d tensor is needed"):
        neighbours.images2neibs(kt.dmatrix(), (2, 2))


def test_neighbours_gradients(server):
    rng = np.random.default_rng(3)
    image = rng.standard_normal((2, 2, 4, 6))
    kiln.gradient.verify_grad(lambda t: neighbours.images2neibs(t, (2, 3)), [image], rng=rng)
    kiln.gradient.verify_grad(lambda t: neighbours.images2neibs(t, (2, 2), (1, 2)), [image],
                              rng=rng)
    kiln.gradient.verify_grad(
        lambda t: neighbours.images2neibs(t, (3, 4), mode="ignore_borders"), [image], rng=rng)
    # Aesara differentiates 'valid' and disjoint 'ignore_borders' only.
    x = kt.dtensor4("x")
    with pytest.raises(Exception, match="Images2Neibs{half} op is not implemented"):
        kiln.grad(neighbours.images2neibs(x, (3, 3), (1, 1), mode="half").sum(), x)


def test_neibs2images_inverts_images2neibs(server):
    x = kt.dtensor4("x")
    image = np.arange(2 * 3 * 4 * 6, dtype="float64").reshape((2, 3, 4, 6))
    back = neighbours.neibs2images(neighbours.images2neibs(x, (2, 3)), (2, 3), x.shape)
    np.testing.assert_array_equal(kiln.function([x], back)(image), image)


def test_batchnorm_gradients_by_finite_differences(server):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 3, 2, 2))
    g, b = rng.standard_normal(3), rng.standard_normal(3)
    rm, rv = rng.standard_normal(3), rng.random(3) + 0.5
    # Every output, the statistics and the new running averages included.
    kiln.gradient.verify_grad(
        lambda x_, g_, b_: batchnorm.batch_normalization_train(x_, g_, b_, "spatial")[0],
        [x, g, b], rng=rng)
    for k in (1, 2):
        kiln.gradient.verify_grad(
            lambda x_: batchnorm.batch_normalization_train(x_, g, b, "spatial")[k], [x],
            rng=rng)
    kiln.gradient.verify_grad(
        lambda x_, m_: batchnorm.batch_normalization_train(x_, g, b, "spatial", 1e-3, 0.3, m_,
                                                           rv)[3], [x, rm], rng=rng)
    kiln.gradient.verify_grad(
        lambda x_, v_: batchnorm.batch_normalization_train(x_, g, b, "spatial", 1e-3, 0.3, rm,
                                                           v_)[4], [x, rv], rng=rng)
    kiln.gradient.verify_grad(
        lambda x_, g_, b_, m_, v_: batchnorm.batch_normalization_test(x_, g_, b_, m_, v_,
                                                                      (0, 2)),
        [x, g.reshape(1, 3, 1, 1) * np.ones((1, 3, 1, 2)), np.ones((1, 3, 1, 2)),
         np.zeros((1, 3, 1, 2)), np.ones((1, 3, 1, 2))], rng=rng)


def test_batchnorm_errors_are_aesaras():
    x, v = kt.dmatrix("x"), kt.dvector("v")
    with pytest.raises(ValueError, match="invalid axes: spatialish"):
        batchnorm.batch_normalization_train(x, v, v, axes="spatialish")
    with pytest.raises(ValueError, match=r"axes should be less than ndim \(<2\), but \(0, 2\)"):
        batchnorm.batch_normalization_train(x, v, v, axes=(0, 2))
    with pytest.raises(ValueError, match="there should be at least one normalization axis"):
        batchnorm.batch_normalization_train(x, v, v, axes=())
    with pytest.raises(ValueError, match="gamma and beta dimensionality must match"):
        batchnorm.batch_normalization_train(x, v, kt.dscalar(), axes="per-activation")
    with pytest.raises(ValueError, match="running_mean and running_var must either both"):
        batchnorm.batch_normalization_train(x, v, v, running_mean=v)
    with pytest.raises(ValueError, match="running_var must be of the same dimensionality"):
        batchnorm.batch_normalization_train(x, v, v, running_mean=v, running_var=x)
    with pytest.raises(ValueError, match="epsilon must be at least 1e-5"):
        batchnorm.batch_normalization_test(x, v, v, v, v, epsilon=1e-6)
    with pytest.raises(ValueError, match='mode must be either "low_mem", "high_mem"'):
        batchnorm.batch_normalization(x, v, v, v, v, mode="fast")


def test_classifier_gradients_by_finite_differences(server):
    rng = np.random.default_rng(7)
    x, b = rng.standard_normal((4, 3)), rng.standard_normal(3)
    y = np.array([2, 0, 1, 2])
    kiln.gradient.verify_grad(nnet.softmax_with_bias, [x, b], rng=rng)
    kiln.gradient.verify_grad(
        lambda x_, b_: nnet.crossentropy_softmax_argmax_1hot_with_bias(x_, b_, y)[0], [x, b],
        rng=rng)
    kiln.gradient.verify_grad(lambda x_: nnet.crossentropy_softmax_1hot(x_, y)[1], [x], rng=rng)
    p = rng.random((4, 3)) + 0.1
    kiln.gradient.verify_grad(lambda p_: nnet.categorical_crossentropy(p_, y), [p], rng=rng)
    kiln.gradient.verify_grad(lambda o, t: nnet.sigmoid_binary_crossentropy(o, t),
                              [x, rng.random((4, 3))], rng=rng)
    for f in (nnet.elu, nnet.selu, nnet.softsign, lambda t: nnet.relu(t, 0.2)):
        kiln.gradient.verify_grad(f, [x], rng=rng)
    kiln.gradient.verify_grad(
        lambda x_, w1, b1, w2, b2: nnet.h_softmax(x_, 4, 5, 2, 3, w1, b1, w2, b2, y),
        [x, rng.standard_normal((3, 2)), rng.standard_normal(2), rng.standard_normal((2, 3, 3)),
         rng.standard_normal((2, 3))], rng=rng)


def test_module_names_are_aesaras():
    for name in ("batch_normalization", "binary_crossentropy", "categorical_crossentropy",
                 "confusion_matrix", "crossentropy_categorical_1hot",
                 "crossentropy_categorical_1hot_grad", "crossentropy_softmax_1hot",
                 "crossentropy_softmax_1hot_with_bias", "crossentropy_softmax_1hot_with_bias_dx",
                 "crossentropy_softmax_argmax_1hot_with_bias",
                 "crossentropy_softmax_max_and_argmax_1hot",
                 "crossentropy_softmax_max_and_argmax_1hot_with_bias", "elu", "h_softmax",
                 "hard_sigmoid", "logsoftmax", "prepend_0_to_each_row", "prepend_1_to_each_row",
                 "prepend_scalar_to_each_row", "relu", "selu", "sigmoid_binary_crossentropy",
                 "softmax", "softmax_grad_legacy", "softmax_legacy", "softmax_with_bias",
                 "softsign", "ultra_fast_sigmoid", "batchnorm", "neighbours", "sigm", "basic"):
        assert hasattr(nnet, name), name
    for name in ("batch_normalization_train", "batch_normalization_test"):
        assert hasattr(batchnorm, name)
    assert nnet.softmax_with_bias == kiln.ops.SoftmaxWithBias()
    assert str(nnet.crossentropy_categorical_1hot) == "CrossentropyCategorical1Hot"
    assert sigm.ultra_fast_sigmoid is nnet.ultra_fast_sigmoid
    with pytest.raises(ValueError, match="actual must be 1-d tensor variable"):
        nnet.confusion_matrix(kt.lmatrix(), kt.lvector())
    with pytest.raises(TypeError, match="rank mismatch between coding and true distributions"):
        nnet.categorical_crossentropy(kt.dmatrix(), kt.dtensor3())


def test_sigmoid_binary_crossentropy_has_aesaras_gradient_everywhere(server):
    # Aesara overrides the gradient: sigmoid(o) - t and -o, at o = 0 too (zero logits are
    # common: zero-initialized layers); the value is its stable formula's, infinite logits too.
    o, t = kt.dvector("o"), kt.dvector("t")
    out = nnet.sigmoid_binary_crossentropy(o, t)
    f = kiln.function([o, t], [out, kiln.grad(out.sum(), o), kiln.grad(out.sum(), t)])
    ov = np.array([0.0, 0.0, -0.0, 40.0, -40.0, 3.0, np.inf, -np.inf])
    tv = np.array([0.0, 1.0, 0.25, 1.0, 0.0, 0.5, 0.5, 0.5])
    value, g_o, g_t = f(ov, tv)
    with np.errstate(over="ignore", invalid="ignore"):
        want = np.logaddexp(0, -np.abs(ov)) + ov * ((ov > 0) - tv)
    np.testing.assert_allclose(value, want, rtol=1e-15)
    np.testing.assert_allclose(g_o, 1 / (1 + np.exp(-ov)) - tv, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(g_t, -ov)


SBC_DPRINT = """\
sigmoid_binary_crossentropy{inline=True} [id A]
 |p [id B]
 |t [id C]

Inner graphs:

sigmoid_binary_crossentropy{inline=True} [id A]
 >Elemwise{add,no_inplace} [id D]
 > |Elemwise{softplus,no_inplace} [id E]
 > | |Elemwise{neg,no_inplace} [id F]
 > |   |Elemwise{abs,no_inplace} [id G]
 > |     |*0-<TensorType(float64, (?,))> [id H]
 > |Elemwise{mul,no_inplace} [id I]
 >   |*0-<TensorType(float64, (?,))> [id H]
 >   |Elemwise{sub,no_inplace} [id J]
 >     |Elemwise{gt,no_inplace} [id K]
 >     | |*0-<TensorType(float64, (?,))> [id H]
 >     | |InplaceDimShuffle{x} [id L]
 >     |   |TensorConstant{0} [id M]
 >     |*1-<TensorType(float64, (?,))> [id N]
"""

SBC_GRAD_DPRINT_HEAD = """\
sigmoid_binary_crossentropy_grad{inline=True}.0 [id A]
 |p [id B]
 |t [id C]
 |sigmoid_binary_crossentropy{inline=True} [id D]
 | |p [id B]
 | |t [id C]
 |Elemwise{second} [id E]
   |sigmoid_binary_crossentropy{inline=True} [id D]
   |InplaceDimShuffle{x} [id F]
     |Elemwise{second,no_inplace} [id G]
       |Sum{acc_dtype=float64} [id H]
       | |sigmoid_binary_crossentropy{inline=True} [id D]
       |TensorConstant{1.0} [id I]

Inner graphs:

sigmoid_binary_crossentropy_grad{inline=True}.0 [id A]
 >Elemwise{mul,no_inplace} [id J]
 > |*3-<TensorType(float64, (?,))> [id K]
 > |Elemwise{sub,no_inplace} [id L]
 >   |Elemwise{sigmoid,no_inplace} [id M]
 >   | |*0-<TensorType(float64, (?,))> [id N]
 >   |*1-<TensorType(float64, (?,))> [id O]
 >Elemwise{mul,no_inplace} [id P]
 > |*3-<TensorType(float64, (?,))> [id K]
 > |Elemwise{neg,no_inplace} [id Q]
 >   |*0-<TensorType(float64, (?,))> [id N]
"""


def test_sigmoid_binary_crossentropy_is_aesaras_op_from_graph(server):
    """Aesara 2.9.4 builds an inline OpFromGraph with a gradient override (an OpFromGraph named
    sigmoid_binary_crossentropy_grad): the dprints below are Aesara's, before optimization."""
    p, t = kt.dvector("p"), kt.dvector("t")
    out = nnet.sigmoid_binary_crossentropy(p, t)
    assert kiln.printing.debugprint(out, file="str") == SBC_DPRINT
    g = kiln.grad(out.sum(), p)
    # (Aesara prints sum's gradient, the line [id E], as Elemwise{second}: not this op's.)
    text = kiln.printing.debugprint(g, file="str").replace(
        " |Elemwise{second,no_inplace} [id E]", " |Elemwise{second} [id E]")
    assert text.startswith(SBC_GRAD_DPRINT_HEAD), text
    f = kiln.function([p, t], [out, g])
    assert "sigmoid_binary_crossentropy" not in kiln.printing.debugprint(f, file="str")  # inlined
    value, grad = f([0.5, -2, 3], [1, 0, 0.3])
    np.testing.assert_allclose(value, [0.47407698, 0.12692801, 2.14858735], rtol=1e-7)
    np.testing.assert_allclose(grad, 1 / (1 + np.exp(-np.array([0.5, -2, 3]))) - [1, 0, 0.3])
    with pytest.raises(TypeError, match="non-Constant/shared Variable"):
        nnet.sigmoid_binary_crossentropy(p, kt.constant(np.zeros(3)))

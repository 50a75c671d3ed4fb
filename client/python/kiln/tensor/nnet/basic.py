"""Products and nnet: Dot (dot, outer), Softmax and LogSoftmax."""
import numpy as np

from kiln.ops import (CrossentropyCategorical1Hot, CrossentropyCategorical1HotGrad,
                      CrossentropySoftmax1HotWithBiasDx, CrossentropySoftmaxArgmax1HotWithBias,
                      Dot, LogSoftmax, MatMul, Softmax, SoftmaxWithBias)
from kiln.tensor.basic import as_tensor_variable, dimshuffle
from kiln.tensor.elemwise import X


def dot(x, y):
    """Aesara's dot: numpy.dot for scalars, vectors and matrices; for more dims, tensordot over the last
    axis of x and the second-to-last of y."""
    x, y = as_tensor_variable(x), as_tensor_variable(y)
    if x.ndim == 0 or y.ndim == 0:  # a scalar scales, as in numpy.dot
        return x * y
    if x.ndim > 2 or y.ndim > 2:
        return tensordot(x, y, [[x.ndim - 1], [max(0, y.ndim - 2)]])
    return Dot()(x, y)


def matmul(x, y):
    """numpy.matmul: batch dims broadcast; a vector gains and loses a dim as in NumPy."""
    return MatMul()(x, y)


def tensordot(a, b, axes=2):
    """numpy.tensordot: the last `axes` axes of a against the first of b, or the axes lists
    (a_axes, b_axes); built as transpose, reshape to matrices, dot and reshape."""
    from kiln.tensor.basic import reshape
    from kiln.tensor.reduce import prod
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    if isinstance(axes, int):
        a_axes, b_axes = list(range(a.ndim - axes, a.ndim)), list(range(axes))
    else:
        a_axes, b_axes = [[ax] if isinstance(ax, int) else list(ax) for ax in axes]
    if len(a_axes) != len(b_axes):
        raise ValueError("tensordot: the axes lists %s and %s differ in length" % (a_axes, b_axes))
    a_axes = [ax % a.ndim for ax in a_axes]
    b_axes = [ax % b.ndim for ax in b_axes]
    a_free = [d for d in range(a.ndim) if d not in a_axes]
    b_free = [d for d in range(b.ndim) if d not in b_axes]
    at_ = dimshuffle(a, a_free + a_axes)
    bt = dimshuffle(b, b_axes + b_free)
    na, ns = len(a_free), len(a_axes)

    def size(t, lo, hi):
        return prod(t.shape[lo:hi]) if hi > lo else 1
    am = reshape(at_, [size(at_, 0, na), size(at_, na, a.ndim)], ndim=2)
    bm = reshape(bt, [size(bt, 0, ns), size(bt, ns, b.ndim)], ndim=2)
    out_shape = [at_.shape[d] for d in range(na)] + [bt.shape[d] for d in range(ns, b.ndim)]
    return reshape(Dot()(am, bm), out_shape, ndim=len(out_shape))


def outer(x, y):
    """The outer product of two vectors."""
    x, y = as_tensor_variable(x), as_tensor_variable(y)
    return dot(dimshuffle(x, [0, X]), dimshuffle(y, [X, 0]))


# --- nnet --------------------------------------------------------------------------------------

def log_softmax(x, axis=-1):
    x = as_tensor_variable(x)
    return LogSoftmax(axis % x.ndim)(x)


def softmax(x, axis=-1):
    x = as_tensor_variable(x)
    return Softmax(axis % x.ndim)(x)


def relu(x, alpha=0):
    """Aesara's relu: max(x, 0), or x where positive and alpha * x elsewhere; built as Aesara
    does, 0.5 * (x + abs(x)) for alpha 0."""
    from kiln.tensor.basic import ELEMWISE
    x = as_tensor_variable(x)
    if alpha == 0:
        return 0.5 * (x + ELEMWISE["abs"](x))
    f1, f2 = 0.5 * (1 + alpha), 0.5 * (1 - alpha)
    return f1 * x + f2 * ELEMWISE["abs"](x)


# --- Aesara's nnet functions, built from Kiln's ops as Aesara builds them ----------------------

def _el(name):
    from kiln.tensor.basic import ELEMWISE
    return ELEMWISE[name]


def sigmoid(x):
    """Elemwise{sigmoid}."""
    return _el("sigmoid")(x)


def softplus(x):
    """Elemwise{softplus}: log(1 + exp(x))."""
    return _el("softplus")(x)


def softsign(x):
    """x / (1 + |x|) (Aesara's ScalarSoftsign, whose gradient is 1 / (1 + |x|)^2)."""
    x = as_tensor_variable(x)
    return x / (1 + _el("abs")(x))


def elu(x, alpha=1):
    """x where positive, alpha (exp(x) - 1) elsewhere."""
    from kiln.tensor.basic import switch
    x = as_tensor_variable(x)
    return switch(x > 0, x, alpha * _el("expm1")(x))


def selu(x):
    """The scaled exponential linear unit (Klambauer et al.)."""
    alpha = 1.6732632423543772848170429916717
    scale = 1.0507009873554804934193349852946
    return scale * elu(x, alpha)


def binary_crossentropy(output, target):
    """-(target log(output) + (1 - target) log(1 - output)), elementwise."""
    output, target = as_tensor_variable(output), as_tensor_variable(target)
    log = _el("log")
    return -(target * log(output) + (1.0 - target) * log(1.0 - output))


def sigmoid_binary_crossentropy(output, target):
    """binary_crossentropy(sigmoid(output), target), computed stably from the logits as Aesara
    does: an inline OpFromGraph named sigmoid_binary_crossentropy of softplus(-|output|) +
    output * ((output > 0) - target), whose gradient overrides the formula's with
    (sigmoid(output) - target, -output) times the output gradient (an OpFromGraph named
    sigmoid_binary_crossentropy_grad). Both must be non-constant variables, as in Aesara."""
    from kiln.compile.builders import OpFromGraph

    def grad(inputs, out_grads):
        (output, target), (out_grad,) = inputs, out_grads
        return [out_grad * (sigmoid(output) - target), out_grad * (-output)]

    inp = [output, target]
    outp = softplus(-_el("abs")(output)) + output * ((output > 0) - target)
    return OpFromGraph(inp, [outp], grad_overrides=grad, inline=True,
                       name="sigmoid_binary_crossentropy")(*inp)


def categorical_crossentropy(coding_dist, true_dist):
    """The cross-entropy of each row of coding_dist against true_dist: a distribution per row
    (-sum(true_dist log(coding_dist), axis=-1)) or a vector of class indices
    (crossentropy_categorical_1hot)."""
    from kiln.tensor.reduce import sum as ksum
    coding_dist, true_dist = as_tensor_variable(coding_dist), as_tensor_variable(true_dist)
    if true_dist.ndim == coding_dist.ndim:
        return -ksum(true_dist * _el("log")(coding_dist), axis=coding_dist.ndim - 1)
    if true_dist.ndim == coding_dist.ndim - 1:
        return crossentropy_categorical_1hot(coding_dist, true_dist)
    raise TypeError("rank mismatch between coding and true distributions")


# --- Aesara's dedicated classifier ops (core/ops/nnet_xent.h) ------------------------------------

softmax_with_bias = SoftmaxWithBias()
crossentropy_softmax_argmax_1hot_with_bias = CrossentropySoftmaxArgmax1HotWithBias()
crossentropy_softmax_1hot_with_bias_dx = CrossentropySoftmax1HotWithBiasDx()
crossentropy_categorical_1hot = CrossentropyCategorical1Hot()
crossentropy_categorical_1hot_grad = CrossentropyCategorical1HotGrad()


def crossentropy_softmax_1hot_with_bias(x, b, y_idx, **kwargs):
    """(nll, softmax(x + b)): the first two outputs of CrossentropySoftmaxArgmax1HotWithBias."""
    return crossentropy_softmax_argmax_1hot_with_bias(x, b, y_idx, **kwargs)[0:2]


def crossentropy_softmax_1hot(x, y_idx, **kwargs):
    """(nll, softmax(x)) with a zero bias like x's first row."""
    from kiln.tensor.basic import zeros_like
    x = as_tensor_variable(x)
    return crossentropy_softmax_1hot_with_bias(x, zeros_like(x[0, :]), y_idx, **kwargs)


def crossentropy_softmax_max_and_argmax_1hot_with_bias(x, b, y_idx, **kwargs):
    """(nll, softmax, max probability, argmax) of each row of x + b."""
    from kiln.ops import MaxAndArgmax
    xent, sm = crossentropy_softmax_1hot_with_bias(x, b, y_idx, **kwargs)
    max_pr, argmax = MaxAndArgmax((sm.ndim - 1,))(sm)  # Aesara's max_and_argmax(sm, axis=-1)
    return (xent, sm, max_pr, argmax)


def crossentropy_softmax_max_and_argmax_1hot(x, y_idx, **kwargs):
    """The same with a zero bias like x's first row."""
    from kiln.tensor.basic import zeros_like
    x = as_tensor_variable(x)
    return crossentropy_softmax_max_and_argmax_1hot_with_bias(x, zeros_like(x[0, :]), y_idx,
                                                              **kwargs)


def softmax_grad_legacy(dy, sm):
    """Aesara's SoftmaxGrad{axis=-1}(dy, sm): dy * sm - sum(dy * sm, -1) * sm."""
    from kiln.tensor.reduce import sum as ksum
    dy, sm = as_tensor_variable(dy), as_tensor_variable(sm)
    dx = dy * sm
    return dx - sm * ksum(dx, axis=-1, keepdims=True)


def _prepend(val, mat):
    from kiln.tensor.basic import alloc, cast
    from kiln.tensor.build import concatenate
    mat = as_tensor_variable(mat)
    if mat.type.broadcastable != (False, False):
        raise TypeError("Expected a matrix as input")
    val = as_tensor_variable(val)
    if val.ndim != 0:
        raise TypeError("the value to prepend must be a scalar")
    column = alloc(cast(val, mat.dtype), mat.shape[0], 1)
    return concatenate([column, mat], axis=1)


def prepend_scalar_to_each_row(val, mat):
    """The matrix with a first column of val (Aesara's Prepend_scalar_to_each_row)."""
    return _prepend(val, mat)


def prepend_0_to_each_row(mat):
    """The matrix with a first column of zeros."""
    return _prepend(0.0, mat)


def prepend_1_to_each_row(mat):
    """The matrix with a first column of ones."""
    return _prepend(1.0, mat)


def _unique(v):
    """numpy.unique of a vector (sorted distinct values): Aesara's Unique op, or where core has
    none, sort and nonzero."""
    from kiln import ops
    from kiln.tensor.build import concatenate
    if hasattr(ops, "Unique"):
        return ops.Unique(False, False, False)(v)
    from kiln.tensor.indexing import nonzero
    from kiln.tensor.sort import sort
    s = sort(v)
    first = as_tensor_variable(np.array([True]))
    keep = concatenate([first, _el("neq")(s[1:], s[:-1])])
    return s[nonzero(keep)[0]]


def confusion_matrix(actual, pred):
    """[conf_mat, order]: conf_mat[i, j] counts the entries with actual == order[i] and pred ==
    order[j], order the sorted distinct values of both vectors (int64 counts)."""
    from kiln.tensor.basic import cast
    from kiln.tensor.build import concatenate
    actual, pred = as_tensor_variable(actual), as_tensor_variable(pred)
    if actual.ndim != 1:
        raise ValueError("actual must be 1-d tensor variable")
    if pred.ndim != 1:
        raise ValueError("pred must be 1-d tensor variable")
    order = _unique(concatenate([actual, pred]))
    one_hot_a = cast(_el("eq")(actual.dimshuffle(0, "x"), order), "int64")
    one_hot_p = cast(_el("eq")(pred.dimshuffle(0, "x"), order), "int64")
    return [dot(one_hot_a.T, one_hot_p), order]


def h_softmax(x, batch_size, n_outputs, n_classes, n_outputs_per_class, W1, b1, W2, b2,
              target=None):
    """Aesara's two-layer hierarchical softmax: the class probabilities softmax(x W1 + b1)
    times the probabilities inside each class, softmax(x W2[c] + b2[c]); all n_outputs
    probabilities (batch_size, n_outputs), or with `target` those of the targets."""
    from kiln.tensor.build import arange
    x = as_tensor_variable(x)
    W2, b2 = as_tensor_variable(W2), as_tensor_variable(b2)
    class_probs = softmax(dot(x, W1) + b1)
    if target is None:
        activations = tensordot(x, W2, (1, 1)) + b2
        output_probs = softmax(activations.reshape((-1, n_outputs_per_class)))
        output_probs = output_probs.reshape((batch_size, n_classes, -1))
        output_probs = class_probs.dimshuffle(0, 1, "x") * output_probs
        output_probs = output_probs.reshape((batch_size, -1))
        return output_probs[:, :n_outputs]
    target = as_tensor_variable(target).flatten()
    target_classes = target // n_outputs_per_class
    target_outputs_in_class = target % n_outputs_per_class
    # Aesara's sparse_block_dot of each row with the block of its class: x[i] W2[c_i] + b2[c_i].
    activations = matmul(x.dimshuffle(0, "x", 1), W2[target_classes])[:, 0, :] + \
        b2[target_classes]
    output_probs = softmax(activations)
    rows = arange(batch_size)
    return class_probs[rows, target_classes] * output_probs[rows, target_outputs_in_class]


logsoftmax = log_softmax
softmax_legacy = softmax



# The names aesara.tensor.nnet.basic imports from the rest of Aesara, at the same path here;
# resolved when first asked for (kiln.tensor.math and the graph modules load after this one).
_ELSEWHERE = {
    "grad_not_implemented": "kiln.gradient",
    "graph_rewriter": "kiln.graph", "node_rewriter": "kiln.graph", "Op": "kiln.graph",
    "TensorType": "kiln.graph", "Apply": "kiln.graph.basic",
    "copy_stack_trace": "kiln.graph.rewriting.basic", "MaxAndArgmax": "kiln.ops",
    "UnaryScalarOp": "kiln.scalar", "ARange": "kiln.tensor.basic",
    "NotScalarConstantError": "kiln.tensor.basic", "Shape": "kiln.tensor.basic",
    "DimShuffle": "kiln.tensor.elemwise", "Elemwise": "kiln.tensor.elemwise",
    "shape_padleft": "kiln.tensor.shape", "at_sum": "kiln.tensor.reduce:sum",
    **{name: "kiln.tensor.math" for name in ("add", "eq", "exp", "expm1", "log",
                                              "max_and_argmax", "mul", "neg", "or_", "tanh",
                                              "true_divide")},
}


def __getattr__(name):
    if name not in _ELSEWHERE:
        raise AttributeError("module %r has no attribute %r" % (__name__, name))
    import importlib
    module, _, attr = _ELSEWHERE[name].partition(":")
    return getattr(importlib.import_module(module), attr or name)

"""Products and nnet: Dot (dot, outer), Softmax and LogSoftmax."""
from kiln.ops import Dot, LogSoftmax, MatMul, Softmax
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
    """x / (1 + |x|)."""
    x = as_tensor_variable(x)
    return x / (1 + _el("abs")(x))


def hard_sigmoid(x):
    """A piecewise-linear sigmoid: clip(0.2 x + 0.5, 0, 1)."""
    from kiln.tensor.basic import clip
    x = as_tensor_variable(x)
    return clip(x * 0.2 + 0.5, 0, 1)


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
    """binary_crossentropy(sigmoid(output), target), computed stably from the logits."""
    output, target = as_tensor_variable(output), as_tensor_variable(target)
    return target * softplus(-output) + (1.0 - target) * softplus(output)


def crossentropy_categorical_1hot(coding_dist, true_one_of_n):
    """-log(coding_dist[i, true_one_of_n[i]]) for each row i."""
    from kiln.tensor.build import arange
    coding_dist = as_tensor_variable(coding_dist)
    return -_el("log")(coding_dist[arange(coding_dist.shape[0]), true_one_of_n])


def categorical_crossentropy(coding_dist, true_dist):
    """The cross-entropy of each row of coding_dist against true_dist: a distribution per row
    (-sum(true_dist log(coding_dist), axis=-1)) or a vector of class indices."""
    from kiln.tensor.reduce import sum as ksum
    coding_dist, true_dist = as_tensor_variable(coding_dist), as_tensor_variable(true_dist)
    if true_dist.ndim == coding_dist.ndim:
        return -ksum(true_dist * _el("log")(coding_dist), axis=coding_dist.ndim - 1)
    if true_dist.ndim == coding_dist.ndim - 1:
        return crossentropy_categorical_1hot(coding_dist, true_dist)
    raise TypeError("rank mismatch between coding and true distributions")


logsoftmax = log_softmax
softmax_legacy = softmax

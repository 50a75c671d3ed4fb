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

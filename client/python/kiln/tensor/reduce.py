"""Reductions: Sum, Prod, Max, Min, All, Any (CAReduce), mean and Argmax, with Aesara's
accumulator dtypes (an attribute of the op; output types are core's)."""
import numpy as np

from kiln.ops import Argmax, CAReduce
from kiln.tensor.basic import ELEMWISE, as_tensor_variable, cast, dimshuffle, shape_i
from kiln.tensor.elemwise import X, upcast



def _sum_output_dtype(d):
    k = np.dtype(d).kind
    if k == "b" or (k == "i" and d != "int64"):
        return "int64"
    if k == "u" and d != "uint64":
        return "uint64"
    return d


def _sum_acc_dtype(d):
    k = np.dtype(d).kind
    if k in "bi":
        return "int64"
    if k == "u":
        return "uint64"
    return {"float16": "float32", "float32": "float64", "complex64": "complex128"}.get(d, d)


def _normalize_axes(name, axis, ndim):
    if axis is None:
        return None
    axes = [axis] if isinstance(axis, (int, np.integer)) else list(axis)
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < ndim:
            raise ValueError("%s: axis %d is out of range for %d dims" % (name, a, ndim))
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError("%s: repeated axis" % name)
    return tuple(sorted(out))


def _keepdims(x, r, axes):
    order, nxt = [], 0
    for d in range(x.ndim):
        if d in axes:
            order.append(X)
        else:
            order.append(nxt)
            nxt += 1
    return dimshuffle(r, order)


def _reduce(kind, x, axis, keepdims):
    x = as_tensor_variable(x)
    axes = _normalize_axes(kind, axis, x.ndim)
    acc = None
    if kind in ("sum", "prod"):
        acc = _sum_acc_dtype(upcast(x.dtype, _sum_output_dtype(x.dtype)))
    r = CAReduce(kind, axes, acc_dtype=acc)(x)
    return _keepdims(x, r, axes if axes is not None else range(x.ndim)) if keepdims else r


def _reducer(kind, doc):
    def reduce(x, axis=None, keepdims=False, **kwargs):
        return _reduce(kind, x, axis, keepdims)
    reduce.__name__, reduce.__doc__ = kind, doc
    return reduce


sum = _reducer("sum", "Sum{axis, acc_dtype}: int64 for integers, float64 accumulation for "
                      "float32.")
prod = _reducer("prod", "Prod{axis, acc_dtype}, with Sum's dtypes.")
max = _reducer("max", "Max{maximum}{axis}.")
min = _reducer("min", "Min{minimum}{axis}.")
all = _reducer("all", "All{axis}: bool.")
any = _reducer("any", "Any{axis}: bool.")


def mean(x, axis=None, keepdims=False):
    """sum / count, in float64 for integers (float32 for float16/float32 inputs)."""
    x = as_tensor_variable(x)
    s = sum(x, axis, keepdims)
    count = "float32" if s.dtype in ("float16", "float32", "complex64") else "float64"
    axes = _normalize_axes("mean", axis, x.ndim)
    for a in (axes if axes is not None else range(x.ndim)):
        s = s / cast(shape_i(x, a), count)
    if np.dtype(s.dtype).kind not in "fc":
        s = cast(s, count)
    s.name = "mean"
    return s


def argmax(x, axis=None, keepdims=False):
    x = as_tensor_variable(x)
    axes = _normalize_axes("argmax", axis, x.ndim)
    axes = axes if axes is not None else tuple(range(x.ndim))
    r = Argmax(axes)(x)
    return _keepdims(x, r, axes) if keepdims else r


def argmin(x, axis=None, keepdims=False):
    x = as_tensor_variable(x)
    return argmax(ELEMWISE["invert"](x) if np.dtype(x.dtype).kind != "f" else -x, axis, keepdims)


def var(input, axis=None, ddof=0, keepdims=False, corrected=False):
    """The variance along the axes: the sum of the squared deviations from the mean divided by
    count - ddof, count being the number of elements reduced (NumPy's rule; over several axes
    with ddof, Aesara 2.9.4 divides by the product of each axis's length - ddof instead).
    corrected: Aesara's corrected two-pass algorithm, which subtracts the rounding error
    (sum of the deviations)^2 / (count (count - ddof))."""
    x = as_tensor_variable(input)
    centered = x - mean(x, axis, keepdims=True)
    v = mean(centered ** 2, axis, keepdims)
    if corrected:
        v = v - mean(centered, axis, keepdims) ** 2
    if ddof:
        axes = _normalize_axes("var", axis, x.ndim)
        count = 1.0
        for a in (axes if axes is not None else range(x.ndim)):
            count = count * cast(shape_i(x, a), v.dtype)
        v = v * count / (count - ddof)
    v.name = "var"
    return v


def std(input, axis=None, ddof=0, keepdims=False, corrected=False):
    """The standard deviation: sqrt(var)."""
    s = ELEMWISE["sqrt"](var(input, axis, ddof, keepdims, corrected))
    s.name = "std"
    return s

"""Products and nnet: Dot (dot, outer), Softmax and LogSoftmax."""
import numpy as np

from kiln.graph import Apply, Op, TensorType
from kiln.tensor.basic import as_tensor_variable, dimshuffle
from kiln.tensor.elemwise import X, shape_text, upcast



class Dot(Op):
    """numpy.dot of vectors and matrices."""

    __props__ = ("inplace",)
    kind = "Dot"

    def __init__(self):
        self.inplace = False

    def __str__(self):
        return "dot"

    def make_node(self, x, y):
        x, y = as_tensor_variable(x), as_tensor_variable(y)
        if not (1 <= x.ndim <= 2 and 1 <= y.ndim <= 2):
            raise TypeError("dot: input 0 has type %s and input 1 has type %s: dot takes "
                            "vectors and matrices" % (x.type, y.type))
        ks = (x.type.shape[-1], y.type.shape[0])
        if None not in ks and ks[0] != ks[1]:
            raise ValueError("dot: input 0 has type %s but input 1 has type %s: shapes %s and %s "
                             "not aligned" % (x.type, y.type, shape_text(x.type.shape),
                                              shape_text(y.type.shape)))
        shape = list(x.type.shape[:-1]) + list(y.type.shape[1:])
        return Apply(self, [x, y], [TensorType(upcast(x.dtype, y.dtype), shape)])

    def wire_attrs(self):
        return [("inplace", 0)]


def dot(x, y):
    """numpy.dot for vectors and matrices."""
    return Dot()(x, y)


def outer(x, y):
    """The outer product of two vectors."""
    x, y = as_tensor_variable(x), as_tensor_variable(y)
    return dot(dimshuffle(x, [0, X]), dimshuffle(y, [X, 0]))


# --- nnet --------------------------------------------------------------------------------------

class LogSoftmax(Op):
    """LogSoftmax{axis}: log(softmax(x)) computed stably."""

    __props__ = ("axis",)
    kind = "LogSoftmax"

    def __init__(self, axis):
        self.axis = axis

    def __str__(self):
        return "LogSoftmax{axis=%d}" % self.axis

    def make_node(self, x):
        x = as_tensor_variable(x)
        return Apply(self, [x], [TensorType(x.dtype, x.type.shape)])

    def wire_attrs(self):
        return [("axis", self.axis)]


def log_softmax(x, axis=-1):
    x = as_tensor_variable(x)
    return LogSoftmax(axis % x.ndim)(x)


class Softmax(Op):
    """Softmax{axis}: exp(x) / sum(exp(x)) along an axis, stably."""

    __props__ = ("axis",)
    kind = "Softmax"

    def __init__(self, axis):
        self.axis = axis

    def __str__(self):
        return "Softmax{axis=%d}" % self.axis

    def make_node(self, x):
        x = as_tensor_variable(x)
        return Apply(self, [x], [TensorType(upcast(x.dtype, "float32") if np.dtype(x.dtype).kind
                                           != "f" else x.dtype, x.type.shape)])

    def wire_attrs(self):
        return [("axis", self.axis)]


def softmax(x, axis=-1):
    x = as_tensor_variable(x)
    return Softmax(axis % x.ndim)(x)

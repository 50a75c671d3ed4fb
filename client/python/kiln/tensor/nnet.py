"""Products and nnet: Dot (dot, outer), Softmax and LogSoftmax."""
from kiln.graph import Op, apply_typed_by_core
from kiln.tensor.basic import as_tensor_variable, dimshuffle
from kiln.tensor.elemwise import X


class Dot(Op):
    """numpy.dot of vectors and matrices."""

    __props__ = ()
    kind = "Dot"

    def make_node(self, x, y):
        return apply_typed_by_core(self, [as_tensor_variable(x), as_tensor_variable(y)])

    def wire_attrs(self):
        return []


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

    def make_node(self, x):
        return apply_typed_by_core(self, [as_tensor_variable(x)])

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

    def make_node(self, x):
        return apply_typed_by_core(self, [as_tensor_variable(x)])

    def wire_attrs(self):
        return [("axis", self.axis)]


def softmax(x, axis=-1):
    x = as_tensor_variable(x)
    return Softmax(axis % x.ndim)(x)

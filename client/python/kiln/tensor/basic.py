"""The tensor functions of kiln.tensor: constants, constructors, elementwise math, shapes,
reductions, products, indexing, joining and nnet, each building Aesara's graph."""
import builtins

import numpy as np

from kiln.config import config
from kiln import ops
from kiln.graph import TensorType, check_dtype
from kiln.ops import MakeVector, Reshape, Shape, Shape_i
from kiln.tensor.elemwise import SCALAR_OPS, DimShuffle, Elemwise
from kiln.tensor.variable import TensorConstant, TensorVariable


def floatx():
    """config.floatX now: the dtype of the untyped constructors and of Python float constants."""
    return check_dtype(config.floatX)


# --- constants ---------------------------------------------------------------------------------

def autocast_dtype(value):
    """Aesara's dtype of a Python scalar (its "custom" cast policy): the smallest int8..int64
    that holds an int; for a float, floatX when that is float32 or float16, else float32 if it
    represents the value exactly (inf included) and float64 otherwise; bool for a bool. A NumPy
    scalar or array keeps its dtype (np.float64 is a Python float, and still float64)."""
    if isinstance(value, (np.generic, np.ndarray)):
        return value.dtype.name
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        for d in ("int8", "int16", "int32", "int64"):
            info = np.iinfo(d)
            if info.min <= value <= info.max:
                return d
        raise ValueError("the integer %d does not fit int64" % value)
    if isinstance(value, float):
        if floatx() != "float64":
            return floatx()
        if np.isinf(value):
            return "float32"
        if np.isnan(value) or abs(value) > np.finfo(np.float32).max:
            return "float64"
        return "float32" if float(np.float32(value)) == value else "float64"
    return np.asarray(value).dtype.name


def constant(value, name=None, dtype=None):
    """A TensorConstant of the value: a Python scalar autocast (autocast_dtype), a NumPy scalar
    or array of its own dtype, anything else as np.array reads it."""
    if dtype is None and isinstance(value, (bool, int, float)) and not isinstance(value,
                                                                                np.generic):
        dtype = autocast_dtype(value)
    data = np.array(value, dtype=dtype, order="C")  # a copy: later changes to value don't leak
    check_dtype(data.dtype.name)
    data.setflags(write=False)
    return TensorConstant(TensorType(data.dtype.name, data.shape), data, name=name)


def as_tensor_variable(x, name=None, ndim=None):
    """x as a tensor variable: variables as they are, anything else as a constant."""
    if isinstance(x, TensorVariable) or isinstance(x, TensorConstant):
        out = x
    elif isinstance(x, (list, tuple)) and builtins.any(
            isinstance(e, (TensorVariable, TensorConstant)) for e in x):
        from kiln.tensor.build import stack  # a list of variables: their stack
        out = stack(list(x))
    else:
        out = constant(x, name=name)
    if ndim is not None and out.ndim != ndim:
        raise ValueError("as_tensor_variable: %s has %d dims, not %d" % (out, out.ndim, ndim))
    return out


ops.as_input = as_tensor_variable  # what kiln.ops's classes make of their inputs


# --- constructors ------------------------------------------------------------------------------

def tensor(dtype=None, shape=None, name=None, broadcastable=None):
    """A variable of TensorType(dtype, shape): kt.tensor('float32', (None, 3), name='x')."""
    if isinstance(dtype, (tuple, list)) and shape is None:
        dtype, shape = None, dtype
    if shape is None and broadcastable is not None:
        shape = tuple(1 if b else None for b in broadcastable)
    return TensorType(dtype or floatx(), shape or ())(name)


_KINDS = {"scalar": (), "vector": (None,), "row": (1, None), "col": (None, 1),
          "matrix": (None, None), "tensor3": (None,) * 3, "tensor4": (None,) * 4,
          "tensor5": (None,) * 5, "tensor6": (None,) * 6, "tensor7": (None,) * 7}
_PREFIXES = {"b": "int8", "w": "int16", "i": "int32", "l": "int64", "f": "float32",
             "d": "float64", "c": "complex64", "z": "complex128"}


def _constructor(shape, fn_name):
    """Aesara's unprefixed constructor: kt.matrix(name=None, dtype=None), floatX by default."""
    def make(name=None, dtype=None):
        return TensorType(dtype or floatx(), shape)(name)
    make.__name__ = fn_name
    make.__doc__ = "A variable of TensorType(dtype or floatX, %s)." % (shape,)
    return make


# As Aesara: kt.dmatrix is the TensorType itself (x.type is kt.dmatrix), kt.matrix a function.
CONSTRUCTORS = {k: _constructor(s, k) for k, s in _KINDS.items()}
CONSTRUCTORS.update({p + k: TensorType(d, s) for p, d in _PREFIXES.items()
                     for k, s in _KINDS.items()})


# --- elementwise -------------------------------------------------------------------------------

def _elemwise(scalar_op, *inputs, cast_to=None):
    return Elemwise(scalar_op, cast_to)(*[as_tensor_variable(i) for i in inputs])


def _unary(name):
    def fn(x):
        return _elemwise(name, x)
    fn.__name__ = name
    fn.__doc__ = "Elemwise{%s}: %s of each element." % (name, name)
    return fn


def _binary(name):
    def fn(x, y):
        return _elemwise(name, x, y)
    fn.__name__ = name
    fn.__doc__ = "Elemwise{%s} with broadcasting." % name
    return fn


# A function per scalar op of core's table (cast, add, mul, switch and clip are written below).
UNARY = [name for name, arity in SCALAR_OPS.items() if arity == 1 and name != "cast"]
BINARY = [name for name, arity in SCALAR_OPS.items() if arity == 2]
ELEMWISE = {name: _unary(name) for name in UNARY}
ELEMWISE.update({name: _binary(name) for name in BINARY})


def add(*xs):
    """Elemwise{add}: the sum of two or more tensors."""
    return _elemwise("add", *xs)


def mul(*xs):
    """Elemwise{mul}: the product of two or more tensors."""
    return _elemwise("mul", *xs)


def switch(cond, ift, iff):
    """Elemwise{switch}: ift where cond, else iff."""
    return _elemwise("switch", cond, ift, iff)


def clip(x, lo, hi):
    """Elemwise{clip}: x limited to [lo, hi]."""
    return _elemwise("clip", x, lo, hi)


def cast(x, dtype):
    """Elemwise{Cast{dtype}}; x itself when it already has that dtype."""
    x = as_tensor_variable(x)
    dtype = check_dtype(floatx() if dtype == "floatX" else dtype)
    return x if x.dtype == dtype else _elemwise("cast", x, cast_to=dtype)


def zeros_like(x, dtype=None):
    """Zeros of x's shape, as Aesara's fill(x, 0)."""
    x = as_tensor_variable(x)
    return _elemwise("second", x, constant(0, dtype=dtype or x.dtype))


def ones_like(x, dtype=None):
    """Ones of x's shape."""
    x = as_tensor_variable(x)
    return _elemwise("second", x, constant(1, dtype=dtype or x.dtype))


def fill(model, value):
    """value broadcast to model's shape (Elemwise{second})."""
    return _elemwise("second", model, value)


# --- shapes ------------------------------------------------------------------------------------

def dimshuffle(x, pattern):
    """DimShuffle{pattern}: 'x' adds a broadcastable dim."""
    x = as_tensor_variable(x)
    return DimShuffle(x.type.broadcastable, pattern)(x)


def transpose(x, axes=None):
    """The dims reversed, or permuted by axes."""
    x = as_tensor_variable(x)
    return dimshuffle(x, list(axes) if axes is not None else list(range(x.ndim))[::-1])


def shape(x):
    return Shape()(x)


def shape_i(x, i):
    return Shape_i(i)(x)


def reshape(x, newshape, ndim=None):
    """x reshaped; newshape is a tuple of ints (one may be -1) or an int64 vector."""
    if isinstance(newshape, (list, tuple)) and not builtins.any(
            isinstance(s, TensorVariable) for s in newshape):
        newshape = constant(np.asarray(newshape, dtype="int64"))
    newshape = as_tensor_variable(newshape)
    if ndim is None:
        ndim = newshape.type.shape[0] if newshape.ndim == 1 else None
    if ndim is None:
        raise ValueError("reshape: the new shape's length must be known (pass ndim)")
    return Reshape(ndim)(x, cast(newshape, "int64"))


def flatten(x, ndim=1):
    """x with its last dims merged, keeping ndim dims."""
    x = as_tensor_variable(x)
    parts = [shape_i(x, d) for d in range(ndim - 1)] + [constant(-1)]
    return Reshape(ndim)(x, MakeVector("int64")(*parts))



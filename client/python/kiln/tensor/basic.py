"""The tensor functions of kiln.tensor: constants, constructors, elementwise math, shapes,
reductions, products, indexing, joining and nnet, each building Aesara's graph."""
import builtins

import numpy as np

from kiln.config import config
from kiln import ops
from kiln.graph import DTYPES, TensorType, check_dtype
from kiln.ops import MakeVector, Reshape, Shape, Shape_i
from kiln.tensor.elemwise import SCALAR_OPS, DimShuffle, Elemwise
from kiln.tensor.variable import SparseOperand, TensorConstant, TensorVariable


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
    elif isinstance(x, SparseOperand):
        raise TypeError("%s is sparse, not a tensor: use kiln.sparse's functions on it, or its "
                        "dense matrix x.toarray()" % (x,))
    else:
        out = constant(x, name=name)
    if ndim is not None and out.ndim != ndim:
        raise ValueError("as_tensor_variable: %s has %d dims, not %d" % (out, out.ndim, ndim))
    return out


ops.as_input = as_tensor_variable  # what kiln.ops's classes make of their inputs


# --- constructors ------------------------------------------------------------------------------

def tensor(*args, dtype=None, shape=None, name=None, broadcastable=None):
    """A variable of TensorType(dtype, shape): Aesara's kt.tensor('float32', (None, 3), 'x'), or
    PyTensor's kt.tensor('x', dtype='float32', shape=(None, 3)) (a first argument that is no
    dtype is the name)."""
    if args and isinstance(args[0], str) and args[0] not in DTYPES + ("floatX",):
        if len(args) > 1:
            raise TypeError("tensor(name, *, dtype=None, shape=None) takes 1 positional "
                            "argument but %d were given" % len(args))
        name, args = args[0], ()
    if len(args) > 4:
        raise TypeError("tensor(dtype=None, shape=None, name=None, broadcastable=None) takes at "
                        "most 4 positional arguments but %d were given" % len(args))
    given = {"dtype": dtype, "shape": shape, "name": name, "broadcastable": broadcastable}
    for key, value in zip(("dtype", "shape", "name", "broadcastable"), args):
        if given[key] is not None:
            raise TypeError("tensor() got multiple values for argument '%s'" % key)
        given[key] = value
    dtype, shape, name, broadcastable = given.values()
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


def _constructor(kind, fn_name):
    """Aesara's unprefixed constructor kt.matrix(name=None, dtype=None), floatX by default, with
    PyTensor's static shape (kt.matrix('x', shape=(3, None))) as its keyword."""
    def make(name=None, dtype=None, *, shape=None):
        if shape is None:
            shape = kind
        elif len(shape) != len(kind) or builtins.any(
                k == 1 and s not in (None, 1) for k, s in zip(kind, shape)):
            raise ValueError("%s: shape %s does not fit a %s, of static shape %s"
                             % (fn_name, tuple(shape), fn_name, kind))
        else:
            shape = tuple(k if s is None else s for k, s in zip(kind, shape))
        return TensorType(dtype or floatx(), shape)(name)
    make.__name__ = fn_name
    make.__doc__ = "A variable of TensorType(dtype or floatX, %s)." % (kind,)
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
# The ones aesara.tensor.math (so aesara.tensor) exports: all but those of their own modules.
MATH_ELEMWISE = {name: fn for name, fn in ELEMWISE.items() if name not in ("xlogx", "xlogy0")}


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




# --- what is known before running: Aesara's get_scalar_constant_value, get_vector_length -----

from kiln.graph import Constant  # noqa: E402
from kiln.tensor.exceptions import NotScalarConstantError  # noqa: E402

# Elemwise scalar ops get_scalar_constant_value folds, as NumPy computes them.
_FOLD = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "true_divide": np.true_divide,
         "floor_divide": np.floor_divide, "neg": np.negative, "maximum": np.maximum,
         "minimum": np.minimum, "pow": np.power, "mod": np.mod, "identity": lambda a: a,
         "abs": np.abs, "sqr": np.square, "sqrt": np.sqrt, "exp": np.exp, "log": np.log,
         "eq": np.equal, "neq": np.not_equal, "lt": np.less, "gt": np.greater,
         "le": np.less_equal, "ge": np.greater_equal, "second": lambda a, b: b}


def _unique(data):
    """The value all of data's entries share, or NotScalarConstantError."""
    data = np.asarray(data)
    if data.size == 0:
        raise NotScalarConstantError()
    flat = data.reshape(-1)
    if data.size > 1 and not (flat == flat[0]).all():
        raise NotScalarConstantError()
    return np.asarray(flat[0])


def get_scalar_constant_value(orig_v, elemwise=True, only_process_constants=False,
                              max_recur=10):
    """The scalar value of orig_v as a 0-d NumPy array when it is known before running: a
    number, an array or a constant whose entries are all equal; with only_process_constants
    False, also through DimShuffle, SpecifyShape, casts and the Elemwise arithmetic of such
    values (elemwise), and a static dim of a shape (x.shape[0], Shape_i). Else
    NotScalarConstantError."""
    v = orig_v
    while True:
        if v is None:
            raise NotScalarConstantError()
        if isinstance(v, (np.integer, int, float, np.floating, np.bool_, bool)):
            return np.asarray(v)
        if isinstance(v, np.ndarray):
            return _unique(v)
        if isinstance(v, Constant):
            return _unique(v.data)
        if only_process_constants or getattr(v, "owner", None) is None or max_recur <= 0:
            raise NotScalarConstantError()
        max_recur -= 1
        node = v.owner
        kind = node.op.kind
        if kind in ("DimShuffle", "SpecifyShape"):
            v = node.inputs[0]
            continue
        if kind == "Shape_i":
            dim = node.inputs[0].type.shape[node.op.i]
            if dim is None:
                raise NotScalarConstantError()
            return np.asarray(dim, dtype="int64")
        if kind == "Subtensor" and tuple(node.op.idx_list) == (0,) \
                and node.inputs[0].owner is not None \
                and node.inputs[0].owner.op.kind == "Shape":
            shape = node.inputs[0].owner.inputs[0].type.shape
            k = int(get_scalar_constant_value(node.inputs[1], elemwise, False, max_recur))
            if -len(shape) <= k < len(shape) and shape[k] is not None:
                return np.asarray(shape[k], dtype="int64")
            raise NotScalarConstantError()
        if kind == "Elemwise" and elemwise:
            op = node.op
            if op.scalar_op == "cast":
                value = get_scalar_constant_value(node.inputs[0], elemwise, False, max_recur)
                return np.asarray(value, dtype=op.cast_to)
            fn = _FOLD.get(op.scalar_op)
            if fn is not None:
                args = [get_scalar_constant_value(i, elemwise, False, max_recur)
                        for i in node.inputs]
                with np.errstate(all="ignore"):
                    return np.asarray(fn(*args), dtype=v.dtype)
        raise NotScalarConstantError()


def extract_constant(x, elemwise=True, only_process_constants=False):
    """x's constant scalar value as a constant (get_scalar_constant_value), or x itself."""
    try:
        value = get_scalar_constant_value(x, elemwise, only_process_constants)
    except NotScalarConstantError:
        return x
    return constant(value) if isinstance(x, (TensorVariable, TensorConstant)) else value


def get_vector_length(v):
    """The length of the vector v when it is known before running (its static shape, a
    MakeVector's inputs, a Shape's rank, a constant's size); ValueError otherwise."""
    v = as_tensor_variable(v)
    if v.ndim != 1:
        raise TypeError("argument must be symbolic vector, got '%s'" % (v,))
    if v.type.shape[0] is not None:
        return v.type.shape[0]
    if v.owner is not None and v.owner.op.kind == "MakeVector":
        return len(v.owner.inputs)
    if v.owner is not None and v.owner.op.kind == "Shape":
        return v.owner.inputs[0].ndim
    if v.owner is not None and v.owner.op.kind in ("DimShuffle", "SpecifyShape", "Elemwise") \
            and len(v.owner.inputs) >= 1 and v.owner.inputs[0].ndim == 1 \
            and v.owner.op.kind != "Elemwise":
        return get_vector_length(v.owner.inputs[0])
    raise ValueError("Length of %s cannot be determined" % (v,))


def make_vector(*values, dtype=None):
    """MakeVector: a vector of the scalars (of their upcast dtype, or dtype)."""
    from kiln.tensor.elemwise import upcast
    values = [as_tensor_variable(x) for x in values]
    dtype = dtype or (upcast(*[x.dtype for x in values]) if values else "int64")
    return MakeVector(dtype)(*[cast(x, dtype) for x in values])


second = ELEMWISE["second"]
tensor_copy = ELEMWISE["identity"]
where = switch
as_tensor = as_tensor_variable


def full_like(a, fill_value, dtype=None):
    """fill_value broadcast to a's shape, of dtype (a's by default)."""
    a = as_tensor_variable(a)
    return fill(a, cast(as_tensor_variable(fill_value), dtype or a.dtype))


def swapaxes(y, axis1, axis2):
    """y with two axes exchanged."""
    y = as_tensor_variable(y)
    order = list(range(y.ndim))
    order[axis1], order[axis2] = order[axis2], order[axis1]
    return dimshuffle(y, order)


def moveaxis(a, source, destination):
    """numpy.moveaxis: the axes of source moved to destination, the others in order."""
    a = as_tensor_variable(a)
    src = [s % a.ndim for s in ([source] if isinstance(source, int) else source)]
    dst = [d % a.ndim for d in ([destination] if isinstance(destination, int)
                                else destination)]
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number of "
                         "elements")
    order = [n for n in range(a.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return dimshuffle(a, order)


# Aesara's aesara.tensor.basic also holds the building functions and the op classes; they
# are written in kiln.tensor.build, .indexing and .shape, and kiln.ops (imported last: those
# modules import this one).
from kiln.ops import (ARange, Alloc, Eye, Join, Nonzero, Split)  # noqa: E402,F401
from kiln.tensor.build import (alloc, arange, concatenate, eye, full, join,  # noqa: E402,F401
                               mgrid, ogrid, ones, stack, stacklists, zeros)
from kiln.tensor.indexing import nonzero  # noqa: E402,F401
from kiln.tensor.arrays import (diag, flatnonzero, horizontal_stack,  # noqa: E402,F401
                                    identity_like, nonzero_values, roll, tri, tril, triu,
                                    vertical_stack)
from kiln.tensor.shape import (expand_dims, shape_padaxis, shape_padleft,  # noqa: E402,F401
                               shape_padright)
from kiln.tensor.extra_ops import split  # noqa: E402,F401
from kiln.tensor.array_funcs import (atleast_1d, atleast_2d, atleast_3d,  # noqa: E402,F401
                                     atleast_Nd, choose, diagonal, extract_diag,
                                     take_along_axis, tile, tril_indices, tril_indices_from,
                                     triu_indices, triu_indices_from)
from kiln.ops import AllocDiag, Choose, ExtractDiag, Tri  # noqa: E402,F401

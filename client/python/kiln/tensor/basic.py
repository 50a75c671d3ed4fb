"""The tensor functions of kiln.tensor: constants, constructors, elementwise math, shapes,
reductions, products, indexing, joining and nnet, each building Aesara's graph."""
import builtins

import numpy as np

from kiln.graph import Apply, Op, TensorType, check_dtype
from kiln.tensor.elemwise import X, DimShuffle, Elemwise, shape_text, upcast
from kiln.tensor.variable import TensorConstant, TensorVariable

FLOATX = "float64"


# --- constants ---------------------------------------------------------------------------------

def autocast_dtype(value):
    """Aesara's dtype of a Python scalar: the smallest int8..int64 that holds an int; float32
    for a float it represents exactly (inf included), float64 otherwise; bool for a bool."""
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, (int, np.integer)) and not isinstance(value, np.generic):
        for d in ("int8", "int16", "int32", "int64"):
            info = np.iinfo(d)
            if info.min <= value <= info.max:
                return d
        raise ValueError("the integer %d does not fit int64" % value)
    if isinstance(value, float):
        if np.isinf(value):
            return "float32"
        if np.isnan(value) or abs(value) > np.finfo(np.float32).max:
            return "float64"
        return "float32" if float(np.float32(value)) == value else "float64"
    return np.asarray(value).dtype.name


def constant(value, name=None, dtype=None):
    """A TensorConstant of the value (autocast for Python scalars)."""
    if dtype is None:
        dtype = autocast_dtype(value) if isinstance(value, (bool, int, float)) else None
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
        out = stack(list(x))
    else:
        out = constant(x, name=name)
    if ndim is not None and out.ndim != ndim:
        raise ValueError("as_tensor_variable: %s has %d dims, not %d" % (out, out.ndim, ndim))
    return out


# --- constructors ------------------------------------------------------------------------------

def tensor(dtype=None, shape=None, name=None, broadcastable=None):
    """A variable of TensorType(dtype, shape): kt.tensor('float32', (None, 3), name='x')."""
    if isinstance(dtype, (tuple, list)) and shape is None:
        dtype, shape = None, dtype
    if shape is None and broadcastable is not None:
        shape = tuple(1 if b else None for b in broadcastable)
    return TensorType(dtype or FLOATX, shape or ())(name)


_KINDS = {"scalar": (), "vector": (None,), "row": (1, None), "col": (None, 1),
          "matrix": (None, None), "tensor3": (None,) * 3, "tensor4": (None,) * 4,
          "tensor5": (None,) * 5, "tensor6": (None,) * 6, "tensor7": (None,) * 7}
_PREFIXES = {"": FLOATX, "b": "int8", "w": "int16", "i": "int32", "l": "int64", "f": "float32",
             "d": "float64", "c": "complex64", "z": "complex128"}


def _constructor(dtype, shape, fn_name):
    def make(name=None, dtype=dtype):
        return TensorType(dtype, shape)(name)
    make.__name__ = fn_name
    make.__doc__ = "A variable of TensorType(%s, %s)." % (dtype, shape_text(shape))
    return make


CONSTRUCTORS = {p + k: _constructor(d, s, p + k) for p, d in _PREFIXES.items()
                for k, s in _KINDS.items()}


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


UNARY = ["neg", "abs", "sgn", "ceil", "floor", "trunc", "round_half_to_even",
         "round_half_away_from_zero", "reciprocal", "log", "log2", "log10", "log1p", "exp",
         "exp2", "expm1", "sqr", "sqrt", "deg2rad", "rad2deg", "cos", "arccos", "sin", "arcsin",
         "tan", "arctan", "cosh", "arccosh", "sinh", "arcsinh", "tanh", "arctanh", "erf", "erfc",
         "erfcx", "erfinv", "erfcinv", "gamma", "gammaln", "psi", "sigmoid", "softplus",
         "log1mexp", "invert", "isnan", "isinf", "real", "imag", "conj", "angle"]
BINARY = ["lt", "gt", "le", "ge", "eq", "neq", "and_", "or_", "xor", "maximum", "minimum",
          "sub", "true_div", "int_div", "mod", "pow", "arctan2", "second"]
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
    dtype = check_dtype("float64" if dtype == "floatX" else dtype)
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


class Shape(Op):
    """The shape of a tensor as an int64 vector."""

    kind = "Shape"

    def __str__(self):
        return "Shape"

    def make_node(self, x):
        x = as_tensor_variable(x)
        return Apply(self, [x], [TensorType("int64", (x.ndim,))])


class ShapeI(Op):
    """Shape_i{i}: one dim of the shape, an int64 scalar."""

    __props__ = ("i",)
    kind = "Shape_i"

    def __init__(self, i):
        self.i = i

    def __str__(self):
        return "Shape_i{%d}" % self.i

    def make_node(self, x):
        x = as_tensor_variable(x)
        return Apply(self, [x], [TensorType("int64", ())])

    def wire_attrs(self):
        return [("i", self.i)]


def shape(x):
    return Shape()(x)


def shape_i(x, i):
    return ShapeI(i)(x)


class Reshape(Op):
    """Reshape{ndim}: x with the shape of an int64 vector (-1 once for the rest)."""

    __props__ = ("ndim",)
    kind = "Reshape"

    def __init__(self, ndim):
        self.ndim = ndim

    def __str__(self):
        return "Reshape{%d}" % self.ndim

    def make_node(self, x, shp):
        x, shp = as_tensor_variable(x), as_tensor_variable(shp)
        static = [None] * self.ndim
        if isinstance(shp, TensorConstant):
            static = [int(s) if s >= 0 else None for s in shp.data]
        return Apply(self, [x, shp], [TensorType(x.dtype, static)])

    def wire_attrs(self):
        return [("ndim", self.ndim)]


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


# --- reductions --------------------------------------------------------------------------------

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


class CAReduce(Op):
    """Sum, Prod, Max, Min, All, Any over some axes (all when axis is None)."""

    __props__ = ("reduce", "axis", "acc_dtype")
    kind = "CAReduce"

    def __init__(self, reduce, axis=None, acc_dtype=None):
        self.reduce, self.axis, self.acc_dtype = reduce, axis, acc_dtype

    def __str__(self):
        axes = ", ".join(map(str, self.axis)) if self.axis is not None else ""
        if self.reduce in ("sum", "prod"):
            props = "axis=[%s], " % axes if self.axis is not None else ""
            props += "acc_dtype=%s" % (self.acc_dtype or "?")
            return ("Sum{%s}" if self.reduce == "sum" else "Prod{mul}{%s}") % props
        name = {"max": "Max{maximum}", "min": "Min{minimum}", "all": "All", "any": "Any"}
        return name[self.reduce] + ("{%s}" % axes if self.axis is not None else "")

    def make_node(self, x):
        x = as_tensor_variable(x)
        axes = self.axis if self.axis is not None else tuple(range(x.ndim))
        out = x.dtype
        if self.reduce in ("sum", "prod"):
            out = _sum_output_dtype(x.dtype)
        elif self.reduce in ("all", "any"):
            out = "bool"
        elif np.dtype(x.dtype).kind == "c":
            raise TypeError("%s: input 0 has type %s, which has no order" % (self, x.type))
        shape = [s for d, s in enumerate(x.type.shape) if d not in axes]
        return Apply(self, [x], [TensorType(out, shape)])

    def wire_attrs(self):
        attrs = [("reduce", self.reduce)]
        if self.axis is not None:
            attrs.append(("axis", list(self.axis)))
        if self.acc_dtype is not None:
            attrs.append(("acc_dtype", self.acc_dtype))
        return attrs


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
    r = CAReduce(kind, axes, acc)(x)
    return _keepdims(x, r, axes if axes is not None else range(x.ndim)) if keepdims else r


def sum(x, axis=None, keepdims=False, **kwargs):
    """Sum{axis, acc_dtype}: int64 for integers, float64 accumulation for float32."""
    return _reduce("sum", x, axis, keepdims)


def prod(x, axis=None, keepdims=False):
    return _reduce("prod", x, axis, keepdims)


def max(x, axis=None, keepdims=False):
    return _reduce("max", x, axis, keepdims)


def min(x, axis=None, keepdims=False):
    return _reduce("min", x, axis, keepdims)


def all(x, axis=None, keepdims=False):
    return _reduce("all", x, axis, keepdims)


def any(x, axis=None, keepdims=False):
    return _reduce("any", x, axis, keepdims)


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


class Argmax(Op):
    """The index of the maximum along axes, int64."""

    __props__ = ("axis",)
    kind = "Argmax"

    def __init__(self, axis):
        self.axis = tuple(axis)

    def __str__(self):
        return "Argmax{axis=%s}" % (self.axis,)

    def make_node(self, x):
        x = as_tensor_variable(x)
        shape = [s for d, s in enumerate(x.type.shape) if d not in self.axis]
        return Apply(self, [x], [TensorType("int64", shape)])

    def wire_attrs(self):
        return [("axis", list(self.axis))]


def argmax(x, axis=None, keepdims=False):
    x = as_tensor_variable(x)
    axes = _normalize_axes("argmax", axis, x.ndim)
    axes = axes if axes is not None else tuple(range(x.ndim))
    r = Argmax(axes)(x)
    return _keepdims(x, r, axes) if keepdims else r


def argmin(x, axis=None, keepdims=False):
    x = as_tensor_variable(x)
    return argmax(ELEMWISE["invert"](x) if np.dtype(x.dtype).kind != "f" else -x, axis, keepdims)


# --- products ----------------------------------------------------------------------------------

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


# --- indexing ----------------------------------------------------------------------------------

def _index_entries(index):
    """(idx_list codes, index input variables) of a Python index."""
    if not isinstance(index, tuple):
        index = (index,)
    codes, inputs = [], []
    for e in index:
        if isinstance(e, slice):
            code = 1
            for bit, part in ((2, e.start), (4, e.stop), (8, e.step)):
                if part is not None:
                    code += bit
                    inputs.append(_index_scalar(part))
            codes.append(code)
        elif e is None or e is Ellipsis:
            raise TypeError("kiln: None and ... in an index are not supported; use dimshuffle")
        else:
            codes.append(0)
            inputs.append(_index_scalar(e))
    return codes, inputs


def _index_scalar(v):
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return constant(int(v), dtype="int64")
    v = as_tensor_variable(v)
    if v.ndim != 0 or np.dtype(v.dtype).kind not in "iu":
        raise TypeError("kiln: index %s has type %s; indices are integer scalars or slices "
                        "(advanced indexing is not supported)" % (v, v.type))
    return v


def _idx_text(codes, inputs):
    """The index as Aesara prints it: "int64", "int64:int64:", "::int64, int64"."""
    parts, k = [], 0
    for code in codes:
        if code == 0:
            parts.append(inputs[k].dtype)
            k += 1
            continue
        pieces = []
        for bit in (2, 4, 8):
            pieces.append(inputs[k].dtype if code & bit else "")
            k += bool(code & bit)
        parts.append(":".join(pieces))
    return ", ".join(parts)


class Subtensor(Op):
    """Basic indexing: integers and slices."""

    __props__ = ("idx_list",)
    kind = "Subtensor"

    def __init__(self, idx_list):
        self.idx_list = tuple(idx_list)
        self._text = None

    def __str__(self):
        return "Subtensor{%s}" % (self._text or "")

    def make_node(self, x, *inputs):
        x = as_tensor_variable(x)
        if len(self.idx_list) > x.ndim:
            raise ValueError("Subtensor: %d indices for %s" % (len(self.idx_list), x.type))
        self._text = _idx_text(self.idx_list, inputs)
        shape = []
        for d, s in enumerate(x.type.shape):
            code = self.idx_list[d] if d < len(self.idx_list) else 1
            if code == 0:
                continue
            shape.append(s if code == 1 else None)
        return Apply(self, [x] + list(inputs), [TensorType(x.dtype, shape)])

    def wire_attrs(self):
        return [("idx_list", list(self.idx_list)), ("set", 0), ("inplace", 0)]


def subtensor(x, index):
    """x[index] for integers and slices."""
    x = as_tensor_variable(x)
    codes, inputs = _index_entries(index)
    return Subtensor(codes)(x, *inputs)


class IncSubtensor(Op):
    """x with x[index] set to (or incremented by) y."""

    __props__ = ("idx_list", "set")
    kind = "IncSubtensor"

    def __init__(self, idx_list, set):
        self.idx_list, self.set = tuple(idx_list), bool(set)
        self._text = ""

    def __str__(self):
        return "IncSubtensor{%s;%s}" % ("Set" if self.set else "Inc", self._text)

    def make_node(self, x, y, *inputs):
        x, y = as_tensor_variable(x), as_tensor_variable(y)
        self._text = _idx_text(self.idx_list, inputs)
        return Apply(self, [x, y] + list(inputs), [x.type])

    def wire_attrs(self):
        return [("idx_list", list(self.idx_list)), ("set", int(self.set)), ("inplace", 0)]


def _inc(view, y, set):
    node = getattr(view, "owner", None)
    if node is None or not isinstance(node.op, Subtensor):
        raise TypeError("%s_subtensor: the first argument must be an indexed tensor x[...]"
                        % ("set" if set else "inc"))
    return IncSubtensor(node.op.idx_list, set)(node.inputs[0], y, *node.inputs[1:])


def set_subtensor(x_view, y):
    """x with x[index] = y, where x_view is x[index]."""
    return _inc(x_view, y, True)


def inc_subtensor(x_view, y):
    """x with x[index] += y, where x_view is x[index]."""
    return _inc(x_view, y, False)


# --- joining -----------------------------------------------------------------------------------

class Join(Op):
    """Tensors of one rank joined along an axis (its first input)."""

    __props__ = ("dtype",)
    kind = "Join"

    def __init__(self, dtype):
        self.dtype = dtype

    def __str__(self):
        return "Join"

    def make_node(self, axis, *tensors):
        axis = as_tensor_variable(axis)
        tensors = [as_tensor_variable(t) for t in tensors]
        ndim = tensors[0].ndim
        for i, t in enumerate(tensors):
            if t.ndim != ndim:
                raise TypeError("Join: input %d has type %s but input 1 has type %s"
                                % (i + 1, t.type, tensors[0].type))
        a = int(axis.data) % ndim if isinstance(axis, TensorConstant) else None
        shape = []
        for d in range(ndim):
            dims = [t.type.shape[d] for t in tensors]
            if d == a:
                shape.append(None if None in dims else int(np.sum(dims)))
            elif builtins.all(s == 1 for s in dims):
                shape.append(1)
            else:  # a known size other than 1 if any input has one
                shape.append(next((s for s in dims if s not in (None, 1)), None))
        return Apply(self, [axis] + tensors, [TensorType(self.dtype, shape)])

    def wire_attrs(self):
        return [("dtype", self.dtype), ("n_splits", 0)]


def concatenate(tensors, axis=0):
    """The tensors joined along an existing axis."""
    tensors = [as_tensor_variable(t) for t in tensors]
    return Join(upcast(*[t.dtype for t in tensors]))(constant(axis), *tensors)


def stack(tensors, axis=0):
    """The tensors joined along a new axis."""
    tensors = [as_tensor_variable(t) for t in tensors]
    nd = tensors[0].ndim
    axis = axis % (nd + 1)
    expanded = [dimshuffle(t, list(range(axis)) + [X] + list(range(axis, nd))) for t in tensors]
    return concatenate(expanded, axis)


# --- building ----------------------------------------------------------------------------------

def _static_int(v):
    """The value of an integer constant, else None."""
    return int(v.data) if isinstance(v, TensorConstant) and v.ndim == 0 else None


class _Build(Op):
    """Alloc, ARange and Eye: tensors made from scalars (core's BuildOp, dtype + n_splits)."""

    __props__ = ("dtype",)

    def __init__(self, dtype):
        self.dtype = dtype

    def wire_attrs(self):
        return [("dtype", self.dtype), ("n_splits", 0)]


class Alloc(_Build):
    """value broadcast to the shape given by the scalar dims."""

    kind = "Alloc"

    def __str__(self):
        return "Alloc"

    def make_node(self, value, *dims):
        value = as_tensor_variable(value)
        dims = [as_tensor_variable(d) for d in dims]
        shape = [_static_int(d) for d in dims]
        return Apply(self, [value] + dims, [TensorType(self.dtype, shape)])


class ARange(_Build):
    """start, start + step, ... up to stop (excluded)."""

    kind = "ARange"

    def __str__(self):
        return "ARange{dtype='%s'}" % self.dtype

    def make_node(self, start, stop, step):
        args = [as_tensor_variable(a) for a in (start, stop, step)]
        values = [a.data.item() if isinstance(a, TensorConstant) else None for a in args]
        n = None
        if None not in values and values[2] != 0:
            n = builtins.max(0, int(np.ceil((values[1] - values[0]) / values[2])))
        return Apply(self, args, [TensorType(self.dtype, (n,))])


class Eye(_Build):
    """An n x m matrix with ones on diagonal k."""

    kind = "Eye"

    def __str__(self):
        return "Eye{dtype='%s'}" % self.dtype

    def make_node(self, n, m, k):
        args = [as_tensor_variable(a) for a in (n, m, k)]
        return Apply(self, args, [TensorType(self.dtype, (_static_int(args[0]),
                                                          _static_int(args[1])))])


def alloc(value, *shape):
    """value (a scalar or a tensor) broadcast to shape."""
    value = as_tensor_variable(value)
    return Alloc(value.dtype)(value, *shape)


def _filled(value, shape, dtype):
    if isinstance(shape, (int, np.integer)) or isinstance(shape, TensorVariable):
        shape = [shape]
    return alloc(constant(value, dtype=dtype or FLOATX), *list(shape))


def zeros(shape, dtype=None):
    """A tensor of zeros of the given shape (ints or scalar variables)."""
    return _filled(0, shape, dtype)


def ones(shape, dtype=None):
    """A tensor of ones of the given shape."""
    return _filled(1, shape, dtype)


def full(shape, fill_value, dtype=None):
    """fill_value broadcast to shape."""
    value = as_tensor_variable(fill_value)
    return alloc(value if dtype is None else cast(value, dtype), *list(shape))


def arange(start, stop=None, step=1, dtype=None):
    """numpy.arange: int64 for integer bounds, float64 otherwise."""
    if stop is None:
        start, stop = 0, start
    args = [as_tensor_variable(a) for a in (start, stop, step)]
    if dtype is None:
        dtype = "int64" if builtins.all(np.dtype(a.dtype).kind in "biu" for a in args) \
            else "float64"
    return ARange(dtype)(*args)


def eye(n, m=None, k=0, dtype=None):
    """An n x m matrix with ones on the k-th diagonal."""
    return Eye(dtype or FLOATX)(n, n if m is None else m, k)


class MakeVector(Op):
    """A vector of scalars, cast to dtype."""

    __props__ = ("dtype",)
    kind = "MakeVector"

    def __init__(self, dtype):
        self.dtype = dtype

    def __str__(self):
        return "MakeVector{dtype='%s'}" % self.dtype

    def make_node(self, *scalars):
        scalars = [as_tensor_variable(s) for s in scalars]
        return Apply(self, scalars, [TensorType(self.dtype, (len(scalars),))])

    def wire_attrs(self):
        return [("dtype", self.dtype)]


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

"""kiln.sparse's arithmetic (Aesara's, of aesara.sparse.basic): sums and products of a sparse
matrix with a sparse or dense one, a vector or a scalar, comparisons, sums over axes, row and
column scaling, and the functions applied to the stored entries only (structured)."""
from kiln import ops
from kiln.sparse.basic import CSM, SparseFromDense, SparseOp, check, dense_from_sparse
from kiln.sparse.basic import cast as sparse_cast
from kiln.sparse.structure import coordinates, intersection, scatter, take, union
from kiln.sparse.variable import (SparseVariable, as_sparse_or_tensor_variable,
                                  as_sparse_variable, sparse_variable)
from kiln.sparse.type import is_scipy_sparse
from kiln.tensor import basic as kt_basic
from kiln.tensor.basic import ELEMWISE, as_tensor_variable, cast
from kiln.tensor.elemwise import upcast
from kiln.tensor.reduce import sum as tensor_sum
from kiln.tensor.shape import specify_shape
from kiln.tensor.variable import TensorConstant, TensorVariable


def _operand(x):
    """x as Aesara's add and comparisons read an operand: a SciPy matrix as a sparse constant,
    a variable as it is, anything else as a tensor constant."""
    if is_scipy_sparse(x):
        return as_sparse_variable(x)
    if isinstance(x, (SparseVariable, TensorVariable, TensorConstant)):
        return x
    return as_tensor_variable(x)


def _sparse_first(name, x, y):
    """(sparse operand, other operand, swapped) of a function that needs a sparse one."""
    if isinstance(x, SparseVariable):
        return x, y, False
    check(isinstance(y, SparseVariable), "%s: one of the operands must be sparse" % name)
    return y, x, True


def _shaped_as(y, x):
    """The dense matrix y, checked when run to have the sparse x's shape."""
    return specify_shape(y, (x.parts.shape[0], x.parts.shape[1]))


def _along(v, x, axis):
    """The dense vector v, checked when run to be as long as the sparse x along axis."""
    return specify_shape(v, (x.parts.shape[axis],))


def _matrix(y, op):
    """y, which must be a dense matrix (Aesara's assertion)."""
    check(y.ndim == 2, "%s: the dense operand must be a matrix, got %s" % (op, y.type))
    return y


# --- sums --------------------------------------------------------------------------------------

class AddSS(SparseOp):
    """The sum of two sparse matrices: sparse, in the first one's format."""

    def make(self, x, y):
        x, y = as_sparse_variable(x), as_sparse_variable(y)
        dtype = upcast(x.dtype, y.dtype)
        return sparse_variable(x.format, dtype, union(x, y, dtype))


class AddSSData(SparseOp):
    """The sum of two sparse matrices of the same structure: their data added."""

    def make(self, x, y):
        x, y = as_sparse_variable(x), as_sparse_variable(y)
        if x.dtype != y.dtype or x.format != y.format:
            raise NotImplementedError()
        return x.with_data(x.parts.data + y.parts.data)


class AddSD(SparseOp):
    """The sum of a sparse and a dense matrix: dense."""

    def make(self, x, y):
        x, y = as_sparse_variable(x), _matrix(as_tensor_variable(y), "AddSD")
        return cast(dense_from_sparse(x) + _shaped_as(y, x), upcast(x.dtype, y.dtype))


class StructuredAddSV(SparseOp):
    """A dense vector added to the stored entries of each row: sparse, x's structure."""

    def make(self, x, y):
        x, y = as_sparse_variable(x), as_tensor_variable(y)
        check(y.ndim == 1, "StructuredAddSV: y must be a vector, got %s" % y.type)
        if x.dtype != y.dtype:
            raise NotImplementedError()
        return x.with_data(x.parts.data + take(_along(y, x, 1), coordinates(x)[1]))


add_s_s, add_s_s_data, add_s_d = AddSS(), AddSSData(), AddSD()
structured_add_s_v = StructuredAddSV()


def add(x, y):
    """x + y, at least one sparse: sparse + sparse is sparse, sparse + dense is dense."""
    x, y = _operand(x), _operand(y)
    s, other, _ = _sparse_first("add", x, y)
    if isinstance(other, SparseVariable):
        return add_s_s(x, y)
    return add_s_d(s, other)


def sub(x, y):
    """x - y, at least one sparse (x + (-y))."""
    return add(x, -_operand(y))


# --- products ----------------------------------------------------------------------------------

class MulSS(SparseOp):
    """The elementwise product of two sparse matrices: sparse, the entries both store."""

    def make(self, x, y):
        x, y = as_sparse_variable(x), as_sparse_variable(y)
        dtype = upcast(x.dtype, y.dtype)
        return sparse_variable(x.format, dtype, intersection(x, y, dtype))


class MulSD(SparseOp):
    """The elementwise product of a sparse matrix and a dense matrix or scalar: sparse, x's
    structure."""

    def make(self, x, y):
        x, y = as_sparse_variable(x), as_tensor_variable(y)
        check(y.ndim in (0, 2), "MulSD: y must be a scalar or a matrix, got %s" % y.type)
        dtype = upcast(x.dtype, y.dtype)
        factor = y if y.ndim == 0 else ops.SparseGather()(_shaped_as(y, x), *coordinates(x))
        return x.with_data(cast(cast(x.parts.data, dtype) * factor, dtype))


class MulSV(SparseOp):
    """A sparse matrix times a dense vector broadcast along its rows: sparse, x's structure."""

    def make(self, x, y):
        x, y = as_sparse_variable(x), as_tensor_variable(y)
        check(y.ndim == 1, "MulSV: y must be a vector, got %s" % y.type)
        if x.dtype != y.dtype:
            raise NotImplementedError("MulSV not implemented for differing dtypes.Got %s and %s."
                                      % (x.dtype, y.dtype))
        return x.with_data(x.parts.data * take(_along(y, x, 1), coordinates(x)[1]))


mul_s_s, mul_s_d, mul_s_v = MulSS(), MulSD(), MulSV()


def mul(x, y):
    """x * y elementwise, at least one sparse: sparse, the structure of the sparse operand (of
    both when both are)."""
    x, y = as_sparse_or_tensor_variable(x), as_sparse_or_tensor_variable(y)
    s, other, swapped = _sparse_first("mul", x, y)
    if not swapped and y.dtype == "float64" and x.dtype == "float32":
        s = sparse_cast(s, "float64")  # (as Aesara: x's format kept, float64)
    if isinstance(other, SparseVariable):
        return mul_s_s(s, other)
    return mul_s_d(s, other)


# --- comparisons -------------------------------------------------------------------------------

def _comparison_classes(stem, tensor_op):
    """Aesara's classes comparing (tensor_op) sparse with sparse, a sparse uint8 result, and
    sparse with dense, a dense uint8 one; computed on the dense matrices."""
    compare = ELEMWISE[tensor_op]

    def make_ss(self, x, y):
        x, y = as_sparse_variable(x), as_sparse_variable(y)
        if x.format != y.format:
            raise NotImplementedError()
        return SparseFromDense(x.format)(
            cast(compare(dense_from_sparse(x), dense_from_sparse(y)), "uint8"))

    def make_sd(self, x, y):
        x, y = as_sparse_variable(x), _matrix(as_tensor_variable(y), stem + "SD")
        return cast(compare(dense_from_sparse(x), y), "uint8")

    doc = "x %s y elementwise as uint8, " % tensor_op
    return (type(stem + "SS", (SparseOp,), {"make": make_ss, "__module__": __name__,
                                             "__doc__": doc + "both sparse: sparse."}),
            type(stem + "SD", (SparseOp,), {"make": make_sd, "__module__": __name__,
                                             "__doc__": doc + "x sparse, y dense: dense."}))


# (class stem, function stem, tensor op, the tensor op with the operands swapped)
_COMPARISONS = [("Equal", "equal", "eq", "eq"), ("NotEqual", "not_equal", "neq", "neq"),
                ("LessThan", "less_than", "lt", "gt"), ("GreaterThan", "greater_than", "gt", "lt"),
                ("LessEqual", "less_equal", "le", "ge"),
                ("GreaterEqual", "greater_equal", "ge", "le")]
_SS, _SD = {}, {}  # tensor op -> the op comparing so
for _stem, _fn_stem, _op, _ in _COMPARISONS:
    _ss_class, _sd_class = _comparison_classes(_stem, _op)
    _SS[_op], _SD[_op] = _ss_class(), _sd_class()
    globals().update({_stem + "SS": _ss_class, _stem + "SD": _sd_class,
                      _fn_stem + "_s_s": _SS[_op], _fn_stem + "_s_d": _SD[_op]})


def _comparison(op, swapped_op):
    def compare(x, y):
        x, y = _operand(x), _operand(y)
        s, other, swapped = _sparse_first(op, x, y)
        if isinstance(other, SparseVariable):
            return _SS[op](x, y)
        return _SD[swapped_op if swapped else op](s, other)
    compare.__name__ = op
    compare.__doc__ = ("x %s y elementwise, at least one sparse: sparse uint8 for two sparse "
                       "operands, else dense uint8." % op)
    return compare


eq, neq, lt, gt, le, ge = (_comparison(op, swapped) for _, _, op, swapped in _COMPARISONS)


# --- reductions and scaling --------------------------------------------------------------------

class SpSum(SparseOp):
    """The sum of a sparse matrix's entries: all of them (axis None, a scalar), or along axis 0
    or 1 (a dense vector), of its dtype."""

    __props__ = ("axis",)

    def __init__(self, axis=None, sparse_grad=True):
        if axis not in (None, 0, 1):
            raise ValueError("Illegal value for self.axis.")
        self.axis = axis
        self.structured = sparse_grad

    def make(self, x):
        x = as_sparse_variable(x)
        data = x.parts.data
        if self.axis is None:
            return cast(tensor_sum(data), x.dtype)
        kept = 1 - self.axis  # the axis of the result: columns for axis 0
        return scatter(x.parts.shape[kept], x.dtype, [(data, coordinates(x)[kept])])


def sp_sum(x, axis=None, sparse_grad=False):
    """The sum of a sparse matrix's entries along axis (None: all), dense."""
    return SpSum(axis, sparse_grad)(x)


def _scale(x, s, axis):
    """x with each entry multiplied by s at its row (axis 0) or column (axis 1), of x's dtype."""
    x, s = as_sparse_variable(x), as_tensor_variable(s)
    return x.with_data(cast(x.parts.data * take(_along(s, x, axis), coordinates(x)[axis]),
                            x.dtype))


def col_scale(x, s):
    """x with each column multiplied by the matching entry of the dense vector s."""
    return _scale(x, s, 1)


def row_scale(x, s):
    """x with each row multiplied by the matching entry of the dense vector s."""
    return _scale(x, s, 0)


class ColScaleCSC(SparseOp):
    """col_scale of a CSC matrix."""

    def make(self, x, s):
        if as_sparse_variable(x).format != "csc":
            raise ValueError("x was not a csc matrix")
        return col_scale(x, s)


class RowScaleCSC(SparseOp):
    """row_scale of a CSC matrix."""

    def make(self, x, s):
        return row_scale(x, s)


# --- functions of the stored entries -----------------------------------------------------------

def structured_monoid(tensor_op):
    """Aesara's decorator: the function f(x, *scalars) that applies tensor_op to x's stored
    entries (its data) only, keeping x's structure; the decorated function gives the docstring."""
    def decorator(f):
        def wrapper(x, *args):
            x = as_sparse_variable(x)
            scalars = [as_tensor_variable(a) for a in args]
            return CSM(x.format)(tensor_op(x.parts.data, *scalars), *x.parts[1:])
        wrapper.__name__ = f.__name__
        wrapper.__doc__ = f.__doc__
        return wrapper
    return decorator


def _structured(name, tensor_op, doc):
    def f():
        pass
    f.__name__, f.__doc__ = name, doc
    return structured_monoid(tensor_op)(f)


# name: (the tensor function of each stored entry, docstring)
STRUCTURED = {
    "structured_sigmoid": ("sigmoid", "Structured elementwise sigmoid."),
    "structured_exp": ("exp", "Structured elementwise exponential."),
    "structured_log": ("log", "Structured elementwise logarithm."),
    "structured_pow": ("pow", "Structured elementwise power of sparse matrix x by scalar y."),
    "structured_minimum": ("minimum", "Structured elementwise minimum of x and scalar y."),
    "structured_maximum": ("maximum", "Structured elementwise maximum of x and scalar y."),
    "structured_add": ("add", "Structured addition of sparse matrix x and scalar y."),
    "sin": ("sin", "Elementwise sine of the stored entries."),
    "tan": ("tan", "Elementwise tangent of the stored entries."),
    "arcsin": ("arcsin", "Elementwise arcsine of the stored entries."),
    "arctan": ("arctan", "Elementwise arctangent of the stored entries."),
    "sinh": ("sinh", "Elementwise hyperbolic sine of the stored entries."),
    "arcsinh": ("arcsinh", "Elementwise hyperbolic arcsine of the stored entries."),
    "tanh": ("tanh", "Elementwise hyperbolic tangent of the stored entries."),
    "arctanh": ("arctanh", "Elementwise hyperbolic arctangent of the stored entries."),
    "rint": ("round_half_to_even", "Elementwise round half to even of the stored entries."),
    "sgn": ("sgn", "Elementwise sign of the stored entries."),
    "ceil": ("ceil", "Elementwise ceiling of the stored entries."),
    "floor": ("floor", "Elementwise floor of the stored entries."),
    "trunc": ("trunc", "Elementwise truncation of the stored entries."),
    "log1p": ("log1p", "Elementwise log(1 + x) of the stored entries."),
    "expm1": ("expm1", "Elementwise exp(x) - 1 of the stored entries."),
    "deg2rad": ("deg2rad", "Elementwise degrees to radians of the stored entries."),
    "rad2deg": ("rad2deg", "Elementwise radians to degrees of the stored entries."),
    "square": ("sqr", "Elementwise x * x of the stored entries."),
    "sqrt": ("sqrt", "Elementwise square root of the stored entries."),
}
_TENSOR_FUNCTIONS = dict(ELEMWISE, add=kt_basic.add)
globals().update({name: _structured(name, _TENSOR_FUNCTIONS[op], doc)
                  for name, (op, doc) in STRUCTURED.items()})


_conj = _structured("_conj", ELEMWISE["conj"], "Elementwise complex conjugate.")


def conjugate(x):
    """The complex conjugate of a sparse matrix (x itself unless complex)."""
    x = as_sparse_variable(x)
    return _conj(x) if x.dtype.startswith("complex") else x


conj = conjugate

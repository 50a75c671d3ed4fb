"""SparseVariable and SparseConstant (Aesara's, of aesara.sparse.basic): a sparse matrix in a
graph. Kiln has no sparse node: a SparseVariable is a Python object holding its type and the
four tensors of SciPy's layout (`parts`: data, indices, indptr, shape), which kiln.sparse's
functions compute with core's ops, and which function(), grad and dprint see."""
import collections
import warnings

from kiln import graph
from kiln.graph import TensorType, Variable
from kiln.sparse.type import SparseTensorType, canonical, is_scipy_sparse, value_parts
from kiln.tensor.basic import as_tensor_variable
from kiln.tensor.basic import constant as tensor_constant
from kiln.tensor.variable import SparseOperand, TensorVariable

# A sparse matrix's tensors: data (its dtype), indices and indptr (int64 vectors), shape (an
# int64 vector of 2). For CSR, indptr runs over the rows and indices are column numbers; for
# CSC the other way round.
Parts = collections.namedtuple("Parts", "data indices indptr shape")

# Aesara's methods of a sparse variable that compute on its dense matrix (with a warning).
_DENSE_METHODS = (
    "__abs__", "__ceil__", "__floor__", "__trunc__", "transpose", "any", "all", "flatten",
    "ravel", "arccos", "arcsin", "arctan", "arccosh", "arcsinh", "arctanh", "ceil", "cos",
    "cosh", "deg2rad", "exp", "exp2", "expm1", "floor", "log", "log10", "log1p", "log2",
    "rad2deg", "sin", "sinh", "sqrt", "tan", "tanh", "copy", "prod", "mean", "var", "std",
    "min", "max", "argmin", "argmax", "round", "trace", "cumsum", "cumprod", "ptp", "squeeze",
    "diagonal", "__and__", "__or__", "__xor__", "__pow__", "__mod__", "__divmod__",
    "__truediv__", "__floordiv__", "reshape", "dimshuffle")


def _sparse():
    """kiln.sparse, whose functions the operators call (it imports this module)."""
    import kiln.sparse
    return kiln.sparse


class SparseVariable(SparseOperand):
    """A sparse matrix in a graph: its SparseTensorType and its four tensors (`parts`). Aesara's
    operators: + - * (sparse or dense operands), unary -, comparisons, x.T, x.dot(y) (structured
    dot), x @ y (dot), x.toarray(), x.sum(axis), x.astype(dtype), x.zeros_like(), x[i, j]; the
    dense methods Aesara lists (x.exp()...) compute on x.toarray() with its warning. Its str is
    Aesara's, "SparseVariable{csr,float64}", whatever its name."""

    def __init__(self, type, parts, name=None):
        self.type = type
        self.parts = Parts(*parts)
        self.name = name

    @classmethod
    def input(cls, type, name=None):
        """A new input of `type`: four new tensor inputs, named after it ("x.data"...)."""
        def part(kind, dtype, shape):
            return TensorType(dtype, shape)(None if name is None else "%s.%s" % (name, kind))
        return cls(type, [part("data", type.dtype, (None,)), part("indices", "int64", (None,)),
                          part("indptr", "int64", (None,)), part("shape", "int64", (2,))],
                   name=name)

    format = property(lambda self: self.type.format)
    dtype = property(lambda self: self.type.dtype)
    ndim = 2
    shape = property(lambda self: self.parts.shape, doc="The shape: an int64 vector of 2.")
    size = property(lambda self: self.parts.data.shape[0],
                    doc="The number of stored entries (explicit zeros included).")
    T = property(lambda self: _sparse().transpose(self), doc="The transpose (CSR <-> CSC).")

    def __str__(self):
        return "%s{%s,%s}" % (type(self).__name__, self.format, self.dtype)

    __repr__ = __str__

    def __neg__(self): return _sparse().neg(self)
    def __add__(self, other): return _sparse().add(self, other)
    def __radd__(self, other): return _sparse().add(other, self)
    def __sub__(self, other): return _sparse().sub(self, other)
    def __rsub__(self, other): return _sparse().sub(other, self)
    def __mul__(self, other): return _sparse().mul(self, other)
    def __rmul__(self, other): return _sparse().mul(other, self)
    def __lt__(self, other): return _sparse().lt(self, other)
    def __le__(self, other): return _sparse().le(self, other)
    def __gt__(self, other): return _sparse().gt(self, other)
    def __ge__(self, other): return _sparse().ge(self, other)
    def __matmul__(self, other): return _sparse().dot(self, other)
    def __rmatmul__(self, other): return _sparse().dot(other, self)
    # As in Aesara, == and != compare variables, not values: use kiln.sparse.eq and neq.
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    def with_data(self, data):
        """The matrix of this structure (and format) with `data` (a vector) as its entries."""
        return SparseVariable(SparseTensorType(self.format, data.dtype), [data, *self.parts[1:]])

    def dot(self, other):
        """The structured dot product with other (Aesara's x.dot)."""
        return _sparse().structured_dot(self, other)

    def toarray(self):
        """The dense matrix (dense_from_sparse)."""
        return _sparse().dense_from_sparse(self)

    def astype(self, dtype):
        """The matrix cast to dtype (kiln.sparse.cast)."""
        return _sparse().cast(self, dtype)

    def sum(self, axis=None, sparse_grad=False):
        """The sum of the entries along axis (sp_sum): dense."""
        return _sparse().sp_sum(self, axis=axis, sparse_grad=sparse_grad)

    def zeros_like(self):
        """A matrix of this shape without entries (sp_zeros_like)."""
        return _sparse().sp_zeros_like(self)

    def conj(self):
        """The complex conjugate (conjugate)."""
        return _sparse().conjugate(self)

    def __getitem__(self, index):
        return _sparse().basic.getitem(self, index)

    def __iter__(self):
        raise TypeError("SparseTensorType does not support iteration; index it instead")

    def eval(self, inputs_to_values=None):
        """The value (a SciPy matrix) given values of the inputs it depends on."""
        inputs_to_values = inputs_to_values or {}
        inputs = sorted(inputs_to_values, key=id)
        fn = graph.compile_function_or_raise()(inputs, self)
        return fn(*[inputs_to_values[i] for i in inputs])


def _dense_method(name):
    """Aesara's sparse method `name` that computes on the dense matrix, warning so."""
    def method(self, *args, **kwargs):
        warnings.warn("Method %s is not implemented for sparse variables. The variable will be "
                      "converted to dense." % name)
        args = [a.toarray() if isinstance(a, SparseVariable) else a for a in args]
        return getattr(self.toarray(), name)(*args, **kwargs)
    method.__name__ = name
    method.__doc__ = "%s of the dense matrix (with Aesara's warning)." % name
    return method


for _name in _DENSE_METHODS:
    if hasattr(TensorVariable, _name):  # (the methods Kiln's tensors have)
        setattr(SparseVariable, _name, _dense_method(_name))

SparseTensorType.variable_type = SparseVariable


class SparseConstant(SparseVariable):
    """A sparse matrix of known value: `data` is the (canonical) SciPy matrix, its parts are
    constants; str is Aesara's "SparseConstant{csr,float64,shape=(3, 3),nnz=3}"."""

    def __init__(self, type, data, name=None):
        self.data = data
        super().__init__(type, [tensor_constant(a) for a in value_parts(data)], name=name)

    def __str__(self):
        return "SparseConstant{%s,%s,shape=%s,nnz=%d}" % (self.format, self.dtype,
                                                          self.data.shape, self.data.nnz)

    __repr__ = __str__

    def eval(self, inputs_to_values=None):
        return self.data.copy()


def constant(x, name=None):
    """A SciPy sparse matrix (CSR or CSC) as a SparseConstant of its format and dtype."""
    if not is_scipy_sparse(x):
        raise TypeError("sparse.constant must be called on a scipy.sparse.spmatrix")
    matrix = canonical(x, x.format) if x.format in ("csr", "csc") else x
    type = SparseTensorType(x.format, x.dtype, shape=x.shape)  # (other formats: its error)
    return SparseConstant(type, matrix.copy() if matrix is x else matrix, name=name)


def as_sparse_variable(x, name=None, ndim=None, **kwargs):
    """x as a sparse variable: a SparseVariable as it is, a SciPy matrix as a constant;
    TypeError for a tensor or anything else."""
    if isinstance(x, SparseVariable):
        return x
    if isinstance(x, Variable):
        raise TypeError("Variable type field must be a SparseTensorType.", x, x.type)
    try:
        return constant(x, name=name)
    except TypeError:
        raise TypeError("Cannot convert %s to SparseTensorType" % (x,), type(x)) from None


as_sparse = as_sparse_variable


def as_sparse_or_tensor_variable(x, name=None):
    """x as a sparse variable when it is sparse (a SparseVariable or a SciPy matrix), else as a
    tensor variable."""
    if isinstance(x, SparseVariable) or is_scipy_sparse(x):
        return as_sparse_variable(x, name=name)
    return as_tensor_variable(x, name=name)


def is_sparse_variable(x):
    """Whether x is a sparse variable."""
    return isinstance(x, SparseVariable)


def sparse_variable(format, dtype, parts, name=None):
    """The SparseVariable of these four tensors (no check: kiln.sparse's functions build them)."""
    return SparseVariable(SparseTensorType(format, dtype), parts, name=name)

"""TensorVariable and TensorConstant: Aesara's operators, properties and methods on variables."""
import numpy as np

from kiln import graph
from kiln.graph import Constant, TensorType, Variable


class SparseOperand:
    """What kiln.sparse's variables derive from (declared here, below them): a tensor's operators
    return NotImplemented for one, so that Python calls the sparse operand's reflected operator
    (d * s is s.__rmul__(d), as in Aesara); as_tensor_variable refuses one; kiln.grad and
    kiln.dprint reach its components through `parts` (data, indices, indptr, shape), and grad
    returns `with_data(g)`: the matrix of its structure whose entries are g."""

    parts = ()


class _TensorMethods:
    """What Aesara's _tensor_py_operators gives a tensor variable."""

    # As Aesara's: NumPy's operators defer to ours, so np.float64(2) * x and np.ones(3) + x
    # are x.__rmul__(np.float64(2)) and x.__radd__(array), their dtypes kept (not the elements
    # of an object array, one Python float or int at a time).
    __array_priority__ = 1000

    ndim = property(lambda self: self.type.ndim)
    dtype = property(lambda self: self.type.dtype)
    broadcastable = property(lambda self: self.type.broadcastable)
    # The number of elements, as Aesara's: shape[0] for a vector, the product of the shape else.
    size = property(lambda self: self.shape[0] if self.ndim == 1 else self._k().prod(self.shape))

    def _k(self):
        import kiln.tensor as kt
        return kt

    # (The operators a sparse operand implements reflected defer to it.)
    def __add__(self, o):
        return NotImplemented if isinstance(o, SparseOperand) else self._k().add(self, o)
    def __radd__(self, o): return self._k().add(o, self)
    def __sub__(self, o):
        return NotImplemented if isinstance(o, SparseOperand) else self._k().sub(self, o)
    def __rsub__(self, o): return self._k().sub(o, self)
    def __mul__(self, o):
        return NotImplemented if isinstance(o, SparseOperand) else self._k().mul(self, o)
    def __rmul__(self, o): return self._k().mul(o, self)
    def __truediv__(self, o): return self._k().true_divide(self, o)
    def __rtruediv__(self, o): return self._k().true_divide(o, self)
    def __floordiv__(self, o): return self._k().floor_divide(self, o)
    def __rfloordiv__(self, o): return self._k().floor_divide(o, self)
    def __mod__(self, o): return self._k().mod(self, o)
    def __rmod__(self, o): return self._k().mod(o, self)
    def __pow__(self, o): return self._k().pow(self, o)
    def __rpow__(self, o): return self._k().pow(o, self)
    def __neg__(self): return self._k().neg(self)
    def __abs__(self): return self._k().abs(self)
    def __invert__(self): return self._k().invert(self)
    def __and__(self, o): return self._k().and_(self, o)
    def __or__(self, o): return self._k().or_(self, o)
    def __xor__(self, o): return self._k().xor(self, o)
    # As Aesara's: every variable is true (`if not W:` works) but a comparison's result, which
    # raises, so that `a < b < c` (`(a < b) and (b < c)`) fails instead of being wrong.
    _is_nonzero = True

    def _compare(self, name, o):
        """The comparison `name` of self and o, a result that refuses truthiness (NotImplemented
        for a sparse o, whose reflected comparison runs instead)."""
        if isinstance(o, SparseOperand):
            return NotImplemented
        rval = getattr(self._k(), name)(self, o)
        rval._is_nonzero = False
        return rval

    def __lt__(self, o): return self._compare("lt", o)
    def __le__(self, o): return self._compare("le", o)
    def __gt__(self, o): return self._compare("gt", o)
    def __ge__(self, o): return self._compare("ge", o)

    # As in Aesara, == and != compare variables, not values: use kt.eq and kt.neq.
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    def __bool__(self):
        if self._is_nonzero:
            return True
        raise TypeError("Variables do not support boolean operations.")

    def __getitem__(self, index): return self._k().indexing.subtensor(self, index)
    def __iter__(self):
        raise TypeError("TensorType does not support iteration; index it instead")

    @property
    def T(self): return self._k().transpose(self)
    @property
    def shape(self): return self._k().shape(self)
    def dimshuffle(self, *pattern):
        if len(pattern) == 1 and isinstance(pattern[0], (list, tuple)):
            pattern = pattern[0]
        return self._k().dimshuffle(self, pattern)
    def transpose(self, *axes): return self._k().transpose(self, axes or None)
    def reshape(self, shape, ndim=None): return self._k().reshape(self, shape, ndim)
    def flatten(self, ndim=1): return self._k().flatten(self, ndim)
    def astype(self, dtype): return self._k().cast(self, dtype)
    def sum(self, axis=None, keepdims=False, **kw): return self._k().sum(self, axis, keepdims=keepdims)
    def prod(self, axis=None, keepdims=False): return self._k().prod(self, axis, keepdims=keepdims)
    def mean(self, axis=None, keepdims=False): return self._k().mean(self, axis, keepdims=keepdims)
    def max(self, axis=None, keepdims=False): return self._k().max(self, axis, keepdims=keepdims)
    def min(self, axis=None, keepdims=False): return self._k().min(self, axis, keepdims=keepdims)
    def argmax(self, axis=None, keepdims=False): return self._k().argmax(self, axis, keepdims)
    def dot(self, other): return self._k().dot(self, other)
    def __matmul__(self, other):
        if isinstance(other, SparseOperand):
            return NotImplemented
        return self._k().dot(self, other)
    def __rmatmul__(self, other): return self._k().dot(other, self)
    def exp(self): return self._k().exp(self)
    def log(self): return self._k().log(self)

    # Aesara's array-function methods (aesara.tensor.var._tensor_py_operators).
    def any(self, axis=None, keepdims=False): return self._k().any(self, axis, keepdims=keepdims)
    def all(self, axis=None, keepdims=False): return self._k().all(self, axis, keepdims=keepdims)
    def argmin(self, axis=None, keepdims=False): return self._k().argmin(self, axis, keepdims)
    def ravel(self): return self._k().flatten(self)
    def diagonal(self, offset=0, axis1=0, axis2=1):
        return self._k().diagonal(self, offset, axis1, axis2)
    def take(self, indices, axis=None, mode="raise"):
        return self._k().subtensor.take(self, indices, axis)
    def nonzero(self, return_matrix=False):
        return self._k().indexing.nonzero(self, return_matrix=return_matrix)
    def nonzero_values(self): return self._k().nonzero_values(self)
    def sort(self, axis=-1, kind="quicksort", order=None):
        return self._k().sort(self, axis, kind, order)
    def argsort(self, axis=-1, kind="quicksort", order=None):
        return self._k().argsort(self, axis, kind, order)
    def clip(self, a_min, a_max): return self._k().clip(self, a_min, a_max)
    def repeat(self, repeats, axis=None): return self._k().repeat(self, repeats, axis)
    def round(self, mode=None): return self._k().round(self, mode)
    def trace(self): return self._k().nlinalg.trace(self)
    def cumsum(self, axis=None): return self._k().cumsum(self, axis)
    def cumprod(self, axis=None): return self._k().cumprod(self, axis)
    def searchsorted(self, v, side="left", sorter=None):
        return self._k().searchsorted(self, v, side, sorter)
    def ptp(self, axis=None): return self._k().ptp(self, axis)
    def swapaxes(self, axis1, axis2): return self._k().swapaxes(self, axis1, axis2)
    def choose(self, choices, mode="raise"): return self._k().choose(self, choices, mode)
    def squeeze(self): return self._k().squeeze(self)
    def compress(self, a, axis=None): return self._k().compress(self, a, axis=axis)

    def copy(self, name=None):
        """Aesara's copy: a symbolic copy (Elemwise{identity}) named `name`; the tag is not
        copied."""
        copied = self._k().identity(self)
        copied.name = name
        return copied

    @classmethod
    def filter_into(cls, type, other, allow_convert=True):
        """other as a variable of `type` (TensorType.filter_variable): a value as a constant,
        a variable of the type or a subtype as it is, of a supertype as its SpecifyShape to the
        type's shape (checked at run time); else TypeError."""
        from kiln.tensor.basic import as_tensor_variable
        from kiln.tensor.shape import specify_shape
        other = as_tensor_variable(other)
        if type.is_super(other.type):
            return other
        if allow_convert and other.type.is_super(type):
            return specify_shape(other, type.shape)
        raise type.cannot_convert(other)

class TensorVariable(_TensorMethods, Variable):
    """A tensor-typed variable."""


class TensorConstant(_TensorMethods, Constant):
    """A tensor constant."""

    def __str__(self):
        """Aesara's: "TensorConstant{2.0}", or with a name "two{2.0}"."""
        if self.name is None:
            return str(graph.core_variable(self))
        data = np.asarray(self.data)
        flat = data.ravel()
        if data.ndim > 0 and flat.shape[0] and (flat == flat[0]).all():
            val = "%s of %s" % (data.shape, flat[0])
        else:
            val = "%s" % (data,)
        if len(val) > 20:
            val = val[:10] + ".." + val[-10:]
        return "%s{%s}" % (self.name, val)

    __repr__ = __str__


# As Aesara's aesara.tensor.var: a TensorType's variables are TensorVariables.
TensorType.variable_type = TensorVariable

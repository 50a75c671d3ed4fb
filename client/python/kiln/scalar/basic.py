"""kiln.scalar.basic (Aesara's aesara.scalar.basic): the scalar ops of core's table, by
Aesara's names (add, mul, exp...) and classes (Add, Mul, Exp...), and the scalar types.

Kiln has no separate scalar graph: a scalar is a 0-d tensor, so kiln.scalar.float64 is the
type of 0-d float64 tensors, and applying a scalar op (kiln.scalar.add(x, y)) builds the
Elemwise of it. A scalar op is its name (a str), so Elemwise(kiln.scalar.add) is
Elemwise{add}, as in Aesara."""
from kiln import _core, ops
from kiln.graph import TensorType, core_variable
from kiln.tensor.basic import as_tensor_variable, cast, constant  # noqa: F401
from kiln.tensor.elemwise import SCALAR_OPS, Elemwise, upcast  # noqa: F401


class ScalarType(TensorType):
    """Aesara's ScalarType(dtype): in Kiln, the type of 0-d tensors of dtype. It prints as
    Aesara's (str "float64", repr "ScalarType(float64)"); what ops compute from its variables
    are 0-d tensors, and print as TensorType(float64, ())."""

    def __init__(self, dtype):
        super().__init__(dtype, ())

    def __str__(self):
        return self.dtype

    def __repr__(self):
        return "ScalarType(%s)" % self.dtype


def get_scalar_type(dtype):
    """ScalarType(dtype)."""
    return ScalarType(dtype)


def as_scalar(x, name=None):
    """x as a 0-d tensor variable (a Python number becomes a constant)."""
    v = as_tensor_variable(x, name=name)
    if v.ndim != 0:
        raise TypeError("Cannot convert %s to a scalar: it has %d dims" % (v, v.ndim))
    return v


_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "float32", "float64", "complex64", "complex128"]
globals().update({d: ScalarType(d) for d in _DTYPES})


class ScalarOp(str):
    """A scalar op of core's table: its name, a str, with Aesara's class. Calling it applies it
    elementwise (Elemwise) to tensors; `nin` is its arity (-1: two or more)."""

    nin = 1
    nout = 1

    def __new__(cls, name):
        op = super().__new__(cls, name)
        op.name = name
        op.nin = SCALAR_OPS[name]
        return op

    def __call__(self, *inputs):
        return Elemwise(self)(*inputs)

    def __repr__(self):
        return "%s(%s)" % (type(self).__name__, str.__str__(self))


class UnaryScalarOp(ScalarOp):
    """A scalar op of one input."""


class BinaryScalarOp(ScalarOp):
    """A scalar op of two inputs."""


class LogicalComparison(BinaryScalarOp):
    """A comparison, bool-valued."""


# Aesara's class names for core's scalar ops whose name is not the op's name capitalized.
_CLASS_NAMES = {"eq": "EQ", "neq": "NEQ", "lt": "LT", "gt": "GT", "le": "LE", "ge": "GE",
                "and_": "AND", "or_": "OR", "xor": "XOR", "maximum": "ScalarMaximum",
                "minimum": "ScalarMinimum", "arctan2": "ArcTan2", "arccos": "ArcCos",
                "arccosh": "ArcCosh", "arcsin": "ArcSin", "arcsinh": "ArcSinh",
                "arctan": "ArcTan", "arctanh": "ArcTanh", "deg2rad": "Deg2Rad",
                "rad2deg": "Rad2Deg", "expm1": "Expm1", "log1p": "Log1p", "exp2": "Exp2",
                "log2": "Log2", "log10": "Log10", "gammaln": "GammaLn", "isnan": "IsNan",
                "isinf": "IsInf", "erfcinv": "Erfcinv", "erfcx": "Erfcx", "log1mexp": "Log1mexp",
                "true_divide": "TrueDivide", "floor_divide": "FloorDivide",
                "round_half_to_even": "RoundHalfToEven",
                "round_half_away_from_zero": "RoundHalfAwayFromZero",
                # special functions (Aesara's aesara.scalar.math, PyTensor's for the others)
                "owens_t": "Owens_t", "gammainc": "GammaInc", "gammaincc": "GammaIncC",
                "gammainc_der": "GammaIncDer", "gammaincc_der": "GammaIncCDer",
                "gammau": "GammaU", "gammal": "GammaL", "gammaincinv": "GammaIncInv",
                "gammainccinv": "GammaIncCInv", "betainc": "BetaInc", "betainc_der": "BetaIncDer",
                "betaincinv": "BetaIncInv", "hyp2f1": "Hyp2F1", "hyp2f1_der": "Hyp2F1Der"}
# Aesara's instance names where they differ from core's op names.
_INSTANCE_NAMES = {"maximum": "scalar_maximum", "minimum": "scalar_minimum", "sqr": "sqr"}


def _class_name(op):
    return _CLASS_NAMES.get(op) or "".join(p.capitalize() for p in op.split("_"))


def _base(op):
    if op in ("eq", "neq", "lt", "gt", "le", "ge"):
        return LogicalComparison
    arity = SCALAR_OPS[op]
    return UnaryScalarOp if arity == 1 else BinaryScalarOp if arity == 2 else ScalarOp


# A class per op (Add, Exp...) and its instance (add, exp...); cast is Cast, applied by cast().
CLASSES = {op: type(_class_name(op), (_base(op),), {
    "__module__": __name__, "__doc__": "Aesara's %s: core's scalar op %s." % (_class_name(op), op)})
    for op in SCALAR_OPS}
globals().update({cls.__name__: cls for cls in CLASSES.values()})
OPS = {_INSTANCE_NAMES.get(op, op): CLASSES[op](op) for op in SCALAR_OPS if op != "cast"}
globals().update(OPS)
square = OPS["sqr"]
abs_ = OPS["abs"]
divide = true_div = OPS["true_divide"]
int_div = floor_div = OPS["floor_divide"]



class Composite(ScalarOp):
    """Aesara's Composite(inputs, outputs): an elementwise graph of `inputs` as one scalar op,
    printed Composite{((i0 * i1) + exp(i0))}. Applying it builds one Elemwise{Composite{...}}
    node (what fusion makes), one output per output of the graph."""

    def __new__(cls, inputs, outputs):
        program, text = _core.scalar_program([core_variable(i) for i in inputs],
                                             [core_variable(o) for o in outputs])
        op = str.__new__(cls, "Composite{%s}" % text)
        op.name = str(op)
        op.inputs, op.outputs = list(inputs), list(outputs)
        op.nin, op.nout = len(op.inputs), len(op.outputs)
        op.program = program
        return op

    def __call__(self, *inputs):
        out = ops.Elemwise(scalar_op="composite", program=self.program)(*inputs)
        return out[0] if isinstance(out, list) and self.nout == 1 else out

    def __reduce__(self):
        return (Composite, (self.inputs, self.outputs))


__all__ = (["ScalarType", "ScalarOp", "Composite", "UnaryScalarOp", "BinaryScalarOp", "LogicalComparison",
            "get_scalar_type", "as_scalar", "constant", "cast", "upcast", "square"]
           + _DTYPES + sorted(cls.__name__ for cls in CLASSES.values()) + sorted(OPS))

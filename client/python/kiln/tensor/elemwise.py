"""Elemwise over Aesara's scalar ops, and DimShuffle: NumPy broadcasting with Aesara's static
rule (only dims of static size 1 broadcast) and its dtype rules."""
import numpy as np

from kiln.graph import Apply, Op, TensorType

X = "x"  # a new broadcastable dim in a DimShuffle pattern

FLOATX = "float64"

# name -> (arity (-1: two or more), dtype rule). The rules are core/ops/scalar_op.h's.
SCALAR_OPS = {
    "lt": (2, "bool"), "gt": (2, "bool"), "le": (2, "bool"), "ge": (2, "bool"),
    "eq": (2, "bool"), "neq": (2, "bool"), "and_": (2, "bitwise"), "or_": (2, "bitwise"),
    "xor": (2, "bitwise"), "invert": (1, "bitwise"), "isnan": (1, "bool"), "isinf": (1, "bool"),
    "switch": (3, "branches"), "maximum": (2, "upcast"), "minimum": (2, "upcast"),
    "add": (-1, "upcast"), "sub": (2, "upcast_no_bool"), "mul": (-1, "upcast"),
    "true_div": (2, "true_div"), "int_div": (2, "upcast"), "mod": (2, "upcast"),
    "pow": (2, "upcast_min8"), "clip": (3, "upcast"), "abs": (1, "real_part"),
    "sgn": (1, "same_no_bool"), "ceil": (1, "float"), "floor": (1, "float"),
    "trunc": (1, "float"), "round_half_to_even": (1, "same_float_only"),
    "round_half_away_from_zero": (1, "same_float_only"), "neg": (1, "same_no_bool"),
    "reciprocal": (1, "float"), "log": (1, "float"), "log2": (1, "float"),
    "log10": (1, "float"), "log1p": (1, "float"), "exp": (1, "float"), "exp2": (1, "float"),
    "expm1": (1, "float"), "sqr": (1, "upcast"), "sqrt": (1, "float"), "deg2rad": (1, "float"),
    "rad2deg": (1, "float"), "cos": (1, "float"), "arccos": (1, "float"), "sin": (1, "float"),
    "arcsin": (1, "float"), "tan": (1, "float"), "arctan": (1, "float"),
    "arctan2": (2, "float"), "cosh": (1, "float"), "arccosh": (1, "float"),
    "sinh": (1, "float"), "arcsinh": (1, "float"), "tanh": (1, "float"),
    "arctanh": (1, "float"), "erf": (1, "float"), "erfc": (1, "float"), "erfcx": (1, "float"),
    "erfinv": (1, "float"), "erfcinv": (1, "float"), "gamma": (1, "float"),
    "gammaln": (1, "float"), "psi": (1, "float"), "j0": (1, "float"), "j1": (1, "float"), "sigmoid": (1, "float"),
    "softplus": (1, "float"), "log1mexp": (1, "float"), "identity": (1, "upcast"),
    "second": (2, "second"), "cast": (1, "cast"), "real": (1, "real_part"),
    "imag": (1, "real_part"), "conj": (1, "upcast_min8"), "angle": (1, "float64"),
}
# Scalar ops that accept complex inputs (the others reject them).
COMPLEX_OK = {"eq", "neq", "isnan", "isinf", "switch", "add", "sub", "mul", "true_div", "pow",
              "abs", "neg", "reciprocal", "log", "exp", "sqr", "sqrt", "identity", "second",
              "cast", "real", "imag", "conj", "angle"}


def upcast(*dtypes):
    """NumPy's promote_types over all the dtypes."""
    out = dtypes[0]
    for d in dtypes[1:]:
        out = np.promote_types(out, d).name
    return out


def upgrade_to_float(dtype):
    if dtype in ("bool", "int8", "int16", "uint8", "uint16"):
        return "float32"
    if dtype in ("int32", "int64", "uint32", "uint64"):
        return "float64"
    return dtype


def _kind(d):
    return np.dtype(d).kind  # b, i, u, f, c


def scalar_output_dtype(name, dtypes, cast_to=None):
    """The output dtype of scalar op `name` on inputs of `dtypes`; TypeError when undefined."""
    op_name = "Cast{%s}" % cast_to if name == "cast" else name
    if name not in COMPLEX_OK:
        for d in dtypes:
            if _kind(d) == "c":
                raise TypeError("%s is not defined for %s" % (op_name, d))
    rule = SCALAR_OPS[name][1]
    up = upcast(*dtypes)
    if rule == "upcast":
        return up
    if rule in ("upcast_no_bool", "same_no_bool"):
        if up == "bool":
            raise TypeError("%s is not defined for bool; cast to an integer first" % op_name)
        return up
    if rule == "upcast_min8":
        return "int8" if up == "bool" else up
    if rule == "true_div":
        return FLOATX if all(_kind(d) in "biu" for d in dtypes) else up
    if rule == "float":
        return upcast(*[upgrade_to_float(d) for d in dtypes])
    if rule == "same_float_only":
        if _kind(up) != "f":
            raise TypeError("%s is not defined for %s; only floats" % (op_name, up))
        return up
    if rule == "bool":
        return "bool"
    if rule == "bitwise":
        for d in dtypes:
            if _kind(d) not in "biu":
                raise TypeError("%s is not defined for %s" % (op_name, d))
        bools = sum(d == "bool" for d in dtypes)
        if 0 < bools < len(dtypes):
            raise TypeError("%s is not defined for bool mixed with integers; cast first"
                            % op_name)
        return up
    if rule == "branches":
        return upcast(dtypes[1], dtypes[2])
    if rule == "second":
        return dtypes[1]
    if rule == "real_part":
        return {"complex64": "float32", "complex128": "float64"}.get(up, up)
    if rule == "float64":
        return "float64"
    if rule == "cast":
        if _kind(dtypes[0]) == "c" and _kind(cast_to) != "c":
            raise TypeError("Casting from complex to real is ambiguous: consider real(), imag(), "
                            "angle() or abs()")
        return cast_to
    raise AssertionError(rule)


def shape_text(shape):
    dims = ", ".join("?" if s is None else str(s) for s in shape)
    return "(%s%s)" % (dims, "," if len(shape) == 1 else "")


class DimShuffle(Op):
    """Reorders dims, adds broadcastable ones ('x') and drops broadcastable ones."""

    __props__ = ("input_broadcastable", "new_order", "inplace")
    kind = "DimShuffle"

    def __init__(self, input_broadcastable, new_order, inplace=True):
        self.input_broadcastable = tuple(bool(b) for b in input_broadcastable)
        self.new_order = tuple(X if d == X else int(d) for d in new_order)
        self.inplace = inplace
        ndim, used = len(self.input_broadcastable), set()
        for i, d in enumerate(self.new_order):
            if d == X:
                continue
            if not 0 <= d < ndim:
                raise ValueError("%s: new_order[%d] = %d is not a dim of an input with %d dims"
                                 % (self, i, d, ndim))
            if d in used:
                raise ValueError("%s: dim %d appears twice" % (self, d))
            used.add(d)
        for d in range(ndim):
            if d not in used and not self.input_broadcastable[d]:
                raise ValueError("%s: cannot drop dim %d, which is not broadcastable" % (self, d))

    def __str__(self):
        return "%s{%s}" % ("InplaceDimShuffle" if self.inplace else "DimShuffle",
                           ",".join(str(d) for d in self.new_order))

    def make_node(self, x):
        from kiln.tensor.basic import as_tensor_variable
        x = as_tensor_variable(x)
        b = x.type.broadcastable
        if len(b) != len(self.input_broadcastable) or any(
                want and not got for want, got in zip(self.input_broadcastable, b)):
            raise TypeError("%s: input 0 has type %s but the op expects another broadcastable "
                            "pattern" % (self, x.type))
        shape = tuple(1 if d == X else x.type.shape[d] for d in self.new_order)
        return Apply(self, [x], [TensorType(x.type.dtype, shape)])

    def wire_attrs(self):
        return [("input_broadcastable", [int(b) for b in self.input_broadcastable]),
                ("new_order", [-1 if d == X else d for d in self.new_order]),
                ("inplace", int(self.inplace))]


class Elemwise(Op):
    """A scalar op applied elementwise with broadcasting: Elemwise{add,no_inplace}."""

    __props__ = ("scalar_op", "cast_to")
    kind = "Elemwise"

    def __init__(self, scalar_op, cast_to=None):
        if scalar_op not in SCALAR_OPS:
            raise ValueError("unknown scalar op '%s'" % scalar_op)
        self.scalar_op = scalar_op
        self.cast_to = cast_to

    def scalar_name(self):
        return "Cast{%s}" % self.cast_to if self.scalar_op == "cast" else self.scalar_op

    def __str__(self):
        if self.scalar_op in ("cast", "identity"):
            return "Elemwise{%s}" % self.scalar_name()
        if self.scalar_op in ("maximum", "minimum"):
            return "Elemwise{scalar_%s,no_inplace}" % self.scalar_op
        return "Elemwise{%s,no_inplace}" % self.scalar_op

    def make_node(self, *inputs):
        from kiln.tensor.basic import as_tensor_variable
        arity = SCALAR_OPS[self.scalar_op][0]
        n = len(inputs)
        if (arity >= 0 and n != arity) or (arity < 0 and n < 2):
            raise TypeError("%s: expects %s inputs, got %d"
                            % (self, arity if arity >= 0 else "at least 2", n))
        inputs = [as_tensor_variable(i) for i in inputs]
        types = [i.type for i in inputs]
        ndim = max(t.ndim for t in types)
        shape, fixed_by = [1] * ndim, [None] * ndim
        for i, t in enumerate(types):
            pad = ndim - t.ndim
            for d, dim in enumerate(t.shape):
                if dim == 1:
                    continue
                if dim is None:
                    if shape[pad + d] == 1:
                        shape[pad + d] = None
                    continue
                if fixed_by[pad + d] is not None and shape[pad + d] != dim:
                    first = types[fixed_by[pad + d]]
                    raise ValueError(
                        "%s: input %d has type %s but input %d has %s: shapes %s and %s do not "
                        "broadcast" % (self, i, t, fixed_by[pad + d], first,
                                       shape_text(first.shape), shape_text(t.shape)))
                shape[pad + d] = dim
                fixed_by[pad + d] = i
        try:
            dtype = scalar_output_dtype(self.scalar_op, [t.dtype for t in types], self.cast_to)
        except TypeError as e:
            described = ""
            for i, t in enumerate(types):
                described += ("" if i == 0 else " and " if i + 1 == n else ", ")
                described += "input %d has type %s" % (i, t)
            raise TypeError("%s: %s: %s" % (self, described, e)) from None
        # Lower-rank inputs are broadcast on the left by an InplaceDimShuffle{x,...,0,...}.
        for i, t in enumerate(types):
            pad = ndim - t.ndim
            if pad:
                inputs[i] = DimShuffle(t.broadcastable, [X] * pad + list(range(t.ndim)))(inputs[i])
        return Apply(self, inputs, [TensorType(dtype, shape)])

    def wire_attrs(self):
        attrs = [("scalar_op", self.scalar_op)]
        if self.scalar_op == "cast":
            attrs.append(("cast_to", self.cast_to))
        return attrs

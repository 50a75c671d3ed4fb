"""Elemwise over Aesara's scalar ops, and DimShuffle. Output types (NumPy broadcasting with
Aesara's static rule, the dtype rules) are core's: apply_typed_by_core."""
import numpy as np

from kiln import _core
from kiln import ops
from kiln.graph import apply_typed_by_core, core_variable

X = "x"  # a new broadcastable dim in a DimShuffle pattern

# Elemwise's scalar ops, name -> arity (-1: two or more): core's table.
SCALAR_OPS = _core.scalar_ops()


def upcast(*dtypes):
    """NumPy's promote_types over all the dtypes."""
    out = dtypes[0]
    for d in dtypes[1:]:
        out = np.promote_types(out, d).name
    return out


@ops.view
class DimShuffle(ops.DimShuffle):
    """Reorders dims, adds broadcastable ones ('x') and drops broadcastable ones."""

    def __init__(self, input_broadcastable, new_order, inplace=True):
        self.input_broadcastable = tuple(bool(b) for b in input_broadcastable)
        self.new_order = tuple(X if d == X else int(d) for d in new_order)
        self.inplace = bool(inplace)
        self.core_op()  # core checks the order against the input's pattern

    @classmethod
    def from_attrs(cls, attrs):
        return cls(attrs["input_broadcastable"],
                   [X if d == -1 else d for d in attrs["new_order"]],
                   bool(attrs.get("inplace", 1)))

    def wire_attrs(self):
        return [("input_broadcastable", [int(b) for b in self.input_broadcastable]),
                ("new_order", [-1 if d == X else d for d in self.new_order]),
                ("inplace", int(self.inplace))]


@ops.view
class Elemwise(ops.Elemwise):
    """A scalar op applied elementwise with broadcasting: Elemwise{add,no_inplace}. (A fused
    Composite, or an op the in-place pass rewrote, comes back from core as the generated
    kiln.ops.Elemwise.)"""

    def __init__(self, scalar_op, cast_to=None):
        if isinstance(scalar_op, str):  # kiln.scalar's ops are their names (str subclasses)
            scalar_op = str(scalar_op)
        if scalar_op not in SCALAR_OPS:
            raise ValueError("unknown scalar op '%s'" % scalar_op)
        super().__init__(scalar_op, cast_to if scalar_op == "cast" else None)

    @classmethod
    def from_attrs(cls, attrs):
        if attrs.get("scalar_op") not in SCALAR_OPS or "program" in attrs \
                or "inplace_pattern" in attrs:
            return ops.Elemwise(**attrs)
        return cls(attrs["scalar_op"], attrs.get("cast_to"))

    @property
    def name(self):
        """Aesara's Elemwise.name: "Elemwise{mul,no_inplace}"."""
        return str(self)

    def make_node(self, *inputs):
        from kiln.tensor.basic import as_tensor_variable
        inputs = [as_tensor_variable(i) for i in inputs]
        ndim = max((i.ndim for i in inputs), default=0)
        if all(i.ndim == ndim for i in inputs):
            return apply_typed_by_core(self, inputs)
        # Core checks the inputs as given first, so that an error names the caller's types; then
        # lower-rank inputs are broadcast on the left by an InplaceDimShuffle{x,...,0,...}, the
        # node core's own builder makes.
        _core.make_node(self.kind, dict(self.wire_attrs()), [core_variable(i) for i in inputs])
        padded = [i if i.ndim == ndim else
                  DimShuffle(i.broadcastable, [X] * (ndim - i.ndim) + list(range(i.ndim)))(i)
                  for i in inputs]
        return apply_typed_by_core(self, padded)


# Aesara's other names at this path (kiln.tensor.basic imports this module, so only what sits
# below it comes here).
from kiln.graph import Apply, TensorType  # noqa: E402,F401
from kiln.ops import CAReduce  # noqa: E402,F401

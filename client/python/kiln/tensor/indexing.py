"""Basic indexing: Subtensor (integers and slices) and IncSubtensor (set_subtensor,
inc_subtensor)."""
import numpy as np

from kiln.graph import Op, apply_typed_by_core
from kiln.tensor.basic import as_tensor_variable, constant



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


class Subtensor(Op):
    """Basic indexing: integers and slices."""

    __props__ = ("idx_list",)
    kind = "Subtensor"

    def __init__(self, idx_list):
        self.idx_list = tuple(idx_list)

    def make_node(self, x, *inputs):
        return apply_typed_by_core(self, [as_tensor_variable(x)] + list(inputs))

    def wire_attrs(self):
        return [("idx_list", list(self.idx_list))]


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

    def make_node(self, x, y, *inputs):
        x, y = as_tensor_variable(x), as_tensor_variable(y)
        return apply_typed_by_core(self, [x, y] + list(inputs))

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

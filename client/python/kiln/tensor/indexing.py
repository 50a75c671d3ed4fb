"""Indexing as NumPy does it, built as Aesara 2.9.4 builds it: integers and slices are a
Subtensor (IncSubtensor for writes), None adds a broadcastable dim (DimShuffle), and an index
with an array in it, an integer array or a boolean mask (constant or symbolic), is an
AdvancedSubtensor over all its entries (AdvancedIncSubtensor for set_subtensor and
inc_subtensor): core follows NumPy's rules (arrays broadcast together, their dims first when
they are not adjacent, repeated indices accumulating in inc_subtensor).
"""
import numpy as np

from kiln.ops import (AdvancedIncSubtensor, AdvancedIncSubtensor1, AdvancedSubtensor,
                      AdvancedSubtensor1, IncSubtensor, Nonzero, Subtensor)
from kiln.tensor.basic import as_tensor_variable, cast, constant, dimshuffle, fill
from kiln.tensor.elemwise import X

# The codes of AdvancedSubtensor's idx_list (core/ops/advanced_indexing.h): an index tensor,
# a slice (| 2, 4, 8 for a start, stop, step), a new axis.
_TENSOR, _SLICE, _NEWAXIS = 0, 1, 16


def _index_entries(index):
    """(idx_list codes, index input variables) of a basic index: integers and slices."""
    codes, inputs = [], []
    for e in index:
        if isinstance(e, slice):
            code = 1
            for bit, part in ((2, e.start), (4, e.stop), (8, e.step)):
                if part is not None:
                    code += bit
                    inputs.append(_index_scalar(part))
            codes.append(code)
        else:
            codes.append(0)
            inputs.append(_index_scalar(e))
    return codes, inputs


def _index_scalar(v):
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return constant(int(v), dtype="int64")
    v = as_tensor_variable(v)
    if v.ndim != 0 or np.dtype(v.dtype).kind not in "iu":
        raise TypeError("kiln: index %s has type %s; an index is an integer, a slice, an "
                        "integer array or a boolean mask" % (v, v.type))
    return v if v.dtype == "int64" else cast(v, "int64")


def _is_advanced(e):
    """Whether an index entry is an array of integers or booleans (not an int or a slice)."""
    if isinstance(e, (list, tuple, np.ndarray)):
        return True
    if isinstance(e, (bool, np.bool_)):
        return True
    return hasattr(e, "type") and (e.ndim > 0 or e.dtype == "bool")


def _is_mask(e):
    """Whether an index entry is a boolean array (constant or symbolic)."""
    if isinstance(e, (list, tuple, np.ndarray)):
        return np.asarray(e).dtype == bool
    return hasattr(e, "type") and e.dtype == "bool"


def _includes_python_bool(e):
    """Whether a list index holds Python bools (Aesara refuses them: NumPy's rules for them
    changed between versions)."""
    if isinstance(e, (bool, np.bool_)):
        return True
    if isinstance(e, (list, tuple)):
        return any(_includes_python_bool(v) for v in e)
    return False


def nonzero(a, return_matrix=False):
    """Aesara's nonzero: the coordinates of a's nonzero elements, one int64 vector per dim
    (or, with return_matrix, the (a.ndim, n) matrix of them)."""
    a = as_tensor_variable(a)
    rows = Nonzero()(a)
    return rows if return_matrix else tuple(rows[d] for d in range(a.ndim))


def _mask_ndim(e):
    return e.ndim if hasattr(e, "type") else np.ndim(e)


def _expand(x, index):
    """The entries of a NumPy index with ... replaced by full slices, after NumPy's checks."""
    entries = list(index) if isinstance(index, tuple) else [index]
    if sum(e is Ellipsis for e in entries) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    for e in entries:
        if isinstance(e, (bool, np.bool_)) or (isinstance(e, list) and _includes_python_bool(e)):
            raise TypeError("TensorType does not support Python bools for indexing, such as "
                            "tensor[[True, False]]. To use a boolean mask, convert the mask to "
                            "a NumPy array first, e.g., tensor[numpy.array([True, False])].")
    consumed = sum(_mask_ndim(e) if _is_mask(e) else 1
                   for e in entries if e is not None and e is not Ellipsis)
    if consumed > x.ndim:
        raise IndexError("too many indices for %s: %d given" % (x.type, consumed))
    for k, e in enumerate(entries):
        if e is Ellipsis:  # (compared by identity: `in` would compare arrays elementwise)
            entries[k:k + 1] = [slice(None)] * (x.ndim - consumed)
            break
    return entries


def _is_zero_d_bool(e):
    """Whether an index entry is a 0-d boolean array (constant or symbolic)."""
    if isinstance(e, np.ndarray):
        return e.dtype == bool and e.ndim == 0
    return hasattr(e, "type") and e.dtype == "bool" and e.ndim == 0


def _zero_d_bools(x, entries):
    """NumPy's reading of 0-d boolean indices: each adds an axis where it stands, of length 1
    for True and 0 for False, that broadcasts with the other array indices. Built as x with a
    new axis there (DimShuffle) indexed by the integer array arange(b) on it: (that x, the
    entries with each 0-d boolean replaced, the new axes' positions), or None when there is
    none."""
    if not any(_is_zero_d_bool(e) for e in entries):
        return None
    from kiln.tensor.build import arange
    order, new_axes, out, dim = [], [], [], 0
    for e in entries:
        if _is_zero_d_bool(e):
            new_axes.append(len(order))
            order.append(X)
            if isinstance(e, np.ndarray):
                out.append(constant(np.arange(int(e), dtype="int64")))
            else:
                out.append(arange(cast(e, "int64")))
            continue
        out.append(e)
        if e is None:
            continue
        for _ in range(_mask_ndim(e) if _is_mask(e) else 1):
            order.append(dim)
            dim += 1
    order += list(range(dim, x.ndim))
    return dimshuffle(x, order), out, new_axes


def _index_tensor(e, x, axis):
    """An array, integer or mask entry as the index tensor AdvancedSubtensor takes."""
    if hasattr(e, "type"):
        if np.dtype(e.dtype).kind not in "iub":
            raise TypeError("index must be integers or a boolean mask, got %s of type %s"
                            % (e, e.type))
        if e.dtype == "bool" and e.ndim == 0:
            raise NotImplementedError("kiln: a 0-d boolean index is not supported")
        return e
    if isinstance(e, (int, np.integer)) and not isinstance(e, (bool, np.bool_)):
        return constant(int(e), dtype="int64")
    a = np.asarray(e)
    if a.dtype == bool:
        if a.ndim == 0:
            raise NotImplementedError("kiln: a 0-d boolean index is not supported")
        for j, n in enumerate(a.shape):
            size = x.type.shape[axis + j] if axis + j < x.ndim else None
            if size is not None and size != n:
                raise IndexError("boolean index did not match indexed array along dimension %d; "
                                 "dimension is %d but corresponding boolean dimension is %d"
                                 % (axis + j, size, n))
        return constant(a)
    if a.size == 0:
        return constant(a.astype("int64"))
    if a.dtype.kind not in "iu":
        raise TypeError("index must be integers or a boolean mask, got an array of %s"
                        % a.dtype)
    return constant(a if a.dtype.kind == "i" else a.astype("int64"))


def _advanced(x, entries):
    """(idx_list, index inputs) of AdvancedSubtensor for expanded entries."""
    codes, inputs, axis = [], [], 0
    for e in entries:
        if e is None:
            codes.append(_NEWAXIS)
        elif isinstance(e, slice):
            c, parts = _index_entries([e])
            codes += c
            inputs += parts
            axis += 1
        else:
            inputs.append(_index_tensor(e, x, axis))
            codes.append(_TENSOR)
            axis += _mask_ndim(e) if _is_mask(e) else 1
    return codes, inputs


class _Plan:
    """A basic NumPy index (integers, slices, None) split into what Kiln builds: the Subtensor
    entries and the positions where None adds an axis."""

    def __init__(self, x, entries):
        self.basic, self.new_axes = [], []
        out_dim = 0
        for e in entries:
            if e is None:
                self.new_axes.append(out_dim)
                out_dim += 1
            else:
                self.basic.append(e)
                out_dim += isinstance(e, slice)
        self.x = x
        self.base = self._basic_view(x)

    def _basic_view(self, x):
        if all(isinstance(e, slice) and e == slice(None) for e in self.basic):
            return x
        codes, inputs = _index_entries(self.basic)
        return Subtensor(codes)(x, *inputs)


def subtensor(x, index):
    """x[index] as NumPy reads it: integers, slices, None, ... and advanced indices."""
    x = as_tensor_variable(x)
    entries = _expand(x, index)
    widened = _zero_d_bools(x, entries)
    if widened is not None:
        wide, wide_entries, new_axes = widened
        codes, inputs = _advanced(wide, wide_entries)
        out = AdvancedSubtensor(codes)(wide, *inputs)
        out._kiln_zero_d_bools = (x, new_axes)  # how set_subtensor and inc_subtensor write
        return out
    if any(_is_advanced(e) for e in entries):
        codes, inputs = _advanced(x, entries)
        return AdvancedSubtensor(codes)(x, *inputs)
    plan = _Plan(x, entries)
    out = plan.base
    if plan.new_axes:
        order = list(range(out.ndim))
        for pos in plan.new_axes:
            order.insert(pos, X)
        out = dimshuffle(out, order)
        out._kiln_index = plan  # how set_subtensor and inc_subtensor write through it
    return out


def _inc(view, y, set, ignore_duplicates=False):
    kind = "set" if set else "inc"
    y = as_tensor_variable(y)
    if hasattr(view, "type") and y.ndim > view.ndim:
        raise TypeError("Trying to increment a %d-dimensional subtensor with a %d-dimensional "
                        "value." % (view.ndim, y.ndim))
    node = getattr(view, "owner", None)
    widened = getattr(view, "_kiln_zero_d_bools", None)
    if widened is not None:  # written into x with the added axes, which are then dropped
        x, new_axes = widened
        op = AdvancedIncSubtensor(idx_list=node.op.idx_list, set_instead_of_inc=int(set),
                                  ignore_duplicates=int(ignore_duplicates))
        wide = op(node.inputs[0], y, *node.inputs[1:])
        return dimshuffle(wide, [d for d in range(wide.ndim) if d not in new_axes])
    if node is not None and isinstance(node.op, AdvancedSubtensor):
        op = AdvancedIncSubtensor(idx_list=node.op.idx_list, set_instead_of_inc=int(set),
                                  ignore_duplicates=int(ignore_duplicates))
        return op(node.inputs[0], y, *node.inputs[1:])
    if node is not None and isinstance(node.op, AdvancedSubtensor1):
        if ignore_duplicates:
            op = AdvancedIncSubtensor(idx_list=[_TENSOR], set_instead_of_inc=int(set),
                                      ignore_duplicates=1)
            return op(node.inputs[0], y, node.inputs[1])
        return AdvancedIncSubtensor1(set=int(set))(node.inputs[0], y, node.inputs[1])
    plan = getattr(view, "_kiln_index", None)
    if plan is not None:
        x, base = plan.x, plan.base
        y = fill(view, y)  # y broadcast to the view, then the added axes dropped
        y = dimshuffle(y, [d for d in range(y.ndim) if d not in plan.new_axes])
        return IncSubtensor((), set)(x, y) if base is x else _inc(base, y, set)
    if node is None or not isinstance(node.op, Subtensor):
        raise TypeError("%s_subtensor: the first argument must be an indexed tensor x[...]"
                        % kind)
    return IncSubtensor(node.op.idx_list, set)(node.inputs[0], y, *node.inputs[1:])


def set_subtensor(x, y, inplace=False, tolerate_inplace_aliasing=False):
    """x with x[index] = y, where x is the indexed view x[index] (Aesara's signature; Kiln
    makes writes in place by itself)."""
    return _inc(x, y, True)


def inc_subtensor(x, y, inplace=False, set_instead_of_inc=False,
                  tolerate_inplace_aliasing=False, ignore_duplicates=False):
    """x with x[index] += y, where x is the indexed view x[index]: numpy.add.at (repeated
    indices accumulate), or x[index] += y with ignore_duplicates (a repeated index adds once)."""
    return _inc(x, y, set_instead_of_inc, ignore_duplicates)

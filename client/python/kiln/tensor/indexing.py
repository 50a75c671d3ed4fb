"""Indexing as NumPy does it: integers and slices (Subtensor, IncSubtensor), None and ...,
and advanced indices: integer arrays, broadcast together, and boolean masks, constant or
symbolic, which stand for the coordinates Nonzero finds. One array indexes its axis with
AdvancedSubtensor1 (AdvancedIncSubtensor1 for writes); several index the merge of their axes
with one flat index. In reads and in set_subtensor and inc_subtensor.
"""
import numpy as np

from kiln.ops import (AdvancedIncSubtensor1, AdvancedSubtensor1, IncSubtensor, Nonzero,
                      Subtensor)
from kiln.tensor.basic import (as_tensor_variable, cast, constant, dimshuffle, fill,
                               reshape, shape_i, switch)
from kiln.tensor.elemwise import X


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
    if isinstance(e, (list, np.ndarray)):
        return True
    return hasattr(e, "type") and e.ndim > 0


def _is_mask(e):
    """Whether an index entry is a boolean array (constant or symbolic)."""
    if isinstance(e, (list, np.ndarray)):
        return np.asarray(e).dtype == bool
    return hasattr(e, "type") and e.dtype == "bool"


def nonzero(a, return_matrix=False):
    """Aesara's nonzero: the coordinates of a's nonzero elements, one int64 vector per dim
    (or, with return_matrix, the (a.ndim, n) matrix of them)."""
    a = as_tensor_variable(a)
    rows = Nonzero()(a)
    return rows if return_matrix else tuple(rows[d] for d in range(a.ndim))


def _mask_indices(mask, x, axis):
    """A boolean mask over x's dims from `axis` as integer indices, one vector per dim it
    covers (numpy.nonzero); its shape must be those dims'."""
    if not hasattr(mask, "type"):
        m = np.asarray(mask)
        for j, n in enumerate(m.shape):
            size = x.type.shape[axis + j] if axis + j < x.ndim else None
            if size is not None and size != n:
                raise IndexError("boolean index did not match indexed array along dimension %d; "
                                 "dimension is %d but corresponding boolean dimension is %d"
                                 % (axis + j, size, n))
        return [constant(r.astype("int64")) for r in np.nonzero(m)]
    from kiln.tensor.shape import specify_shape
    checked = specify_shape(mask, [shape_i(x, axis + j) for j in range(mask.ndim)])
    return list(nonzero(checked))


def _advanced_indices(e):
    """An integer array entry as an integer tensor."""
    if isinstance(e, (list, np.ndarray)):
        a = np.asarray(e)
        if a.size and a.dtype.kind not in "iu":
            raise IndexError("arrays used as indices must be of integer (or boolean) type")
        return constant(a.astype("int64"))
    if np.dtype(e.dtype).kind not in "iu":
        raise IndexError("arrays used as indices must be of integer (or boolean) type, got %s"
                         % e.type)
    return e


def _mask_ndim(e):
    return e.ndim if hasattr(e, "type") else np.ndim(e)


def _adv_ndim(e):
    """The number of dims an integer array entry contributes."""
    return np.ndim(e) if isinstance(e, (list, np.ndarray)) else e.ndim


class _Plan:
    """A NumPy index split into what Kiln builds: the basic entries (each advanced one replaced
    by a full slice), the advanced indices with the axes of the basic result they select along,
    and where None adds an axis."""

    def __init__(self, x, index):
        entries = list(index) if isinstance(index, tuple) else [index]
        if sum(e is Ellipsis for e in entries) > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        consumed = sum(_mask_ndim(e) if _is_mask(e) else 1
                       for e in entries if e is not None and e is not Ellipsis)
        if consumed > x.ndim:
            raise IndexError("too many indices for %s: %d given" % (x.type, consumed))
        for k, e in enumerate(entries):
            if e is Ellipsis:  # (compared by identity: `in` would compare arrays elementwise)
                entries[k:k + 1] = [slice(None)] * (x.ndim - consumed)
                break
        # A boolean mask over k dims is k integer arrays, its True elements' coordinates.
        expanded, axis = [], 0
        for e in entries:
            if _is_mask(e):
                if _mask_ndim(e) == 0:
                    raise NotImplementedError("kiln: a 0-d boolean index is not supported")
                expanded += _mask_indices(e, x, axis)
                axis += _mask_ndim(e)
            else:
                expanded.append(e)
                axis += e is not None
        entries = expanded
        # The advanced entries' dims (broadcast together) appear once in the result.
        self.adv_ndim = max([_adv_ndim(e) for e in entries if _is_advanced(e)], default=0)
        self.basic, self.new_axes = [], []
        self.advs = []  # (place among the basic entries, axis of the basic view, indices)
        self.adv_first = False  # NumPy: advanced entries apart -> the arrays' dims first
        out_dim = 0
        for e in entries:
            if e is None:
                self.new_axes.append(out_dim)
                out_dim += 1
            elif _is_advanced(e):
                place = len(self.basic)
                self.advs.append((place, sum(isinstance(b, slice) for b in self.basic),
                                  _advanced_indices(e)))
                self.basic.append(slice(None))
                out_dim += self.adv_ndim if len(self.advs) == 1 else 0
            else:
                self.basic.append(e)
                out_dim += isinstance(e, slice)
        if self.advs:
            self.adv_axis = self.advs[0][1]
            # Integers count as advanced indices beside an array (NumPy): when a slice
            # separates them, the arrays' dims go first.
            places = sorted([k for k, e in enumerate(self.basic) if not isinstance(e, slice)]
                            + [p for p, _, _ in self.advs])
            self.adv_first = places != list(range(places[0], places[-1] + 1))
            if self.adv_first and self.new_axes:
                raise NotImplementedError("kiln: None beside an array index and integers apart "
                                          "from it is not supported")
        # The graph pieces reads and writes share: x[basic entries] (x itself when they select
        # everything), and for advanced entries the merged view, its flat index and the split.
        self.x = x
        self.base = self._basic_view(x)
        if self.advs:
            self.merged, self.flat, self.split = self._merge(self.base)

    def _basic_view(self, x):
        if all(isinstance(e, slice) and e == slice(None) for e in self.basic):
            return x
        codes, inputs = _index_entries(self.basic)
        return Subtensor(codes)(x, *inputs)

    def _merge(self, base):
        """(base with the advanced axes moved together and merged into one at adv_axis, the
        flat index into that axis, the function that splits a tensor of the merged layout
        back into base's). An index outside its axis makes the flat index point past the end,
        so that the read or write fails as NumPy's IndexError does."""
        if len(self.advs) == 1:
            return base, self.advs[0][2], lambda t: t
        axes = [a for _, a, _ in self.advs]
        first = axes[0]
        perm = list(range(first)) + axes + [d for d in range(first, base.ndim) if d not in axes]
        moved = dimshuffle(base, perm)
        dims = [shape_i(moved, d) for d in range(moved.ndim)]
        flat = valid = size = None
        for (_, _, idx), d in zip(self.advs, dims[first:first + len(axes)]):
            i = switch(idx < 0, idx + d, idx)
            flat = i if flat is None else flat * d + i
            valid = (i >= 0) & (i < d) if valid is None else valid & (i >= 0) & (i < d)
            size = d if size is None else size * d
        flat = switch(valid, flat, size)
        merged_dims = dims[:first] + [size] + dims[first + len(axes):]
        merged = reshape(moved, merged_dims, ndim=len(merged_dims))

        def split(t):
            return dimshuffle(reshape(t, dims, ndim=len(dims)), np.argsort(perm).tolist())
        return merged, flat, split


def _moved_first(ndim, axis):
    """The dimshuffle order that brings `axis` first, and the one that puts it back."""
    order = [axis] + [d for d in range(ndim) if d != axis]
    return order, sorted(range(ndim), key=order.__getitem__)


def _adv_dims_first(ndim, plan):
    """The dimshuffle order that moves the advanced indices' dims to the front."""
    adv = list(range(plan.adv_axis, plan.adv_axis + plan.adv_ndim))
    return adv + [d for d in range(ndim) if d not in adv]


def _take(x, indices, axis):
    """x's entries at the integer indices (any rank) along axis: x.shape[:axis] +
    indices.shape + x.shape[axis + 1:]."""
    flat = indices if indices.ndim == 1 else reshape(indices, [-1], ndim=1)
    order, back = _moved_first(x.ndim, axis)
    taken = AdvancedSubtensor1()(dimshuffle(x, order), flat)
    out = dimshuffle(taken, back)
    if indices.ndim != 1:
        dims = ([shape_i(out, d) for d in range(axis)]
                + [shape_i(indices, d) for d in range(indices.ndim)]
                + [shape_i(out, d) for d in range(axis + 1, out.ndim)])
        out = reshape(out, dims, ndim=len(dims))
    return out


def subtensor(x, index):
    """x[index] as NumPy reads it: integers, slices, None, ... and advanced indices."""
    x = as_tensor_variable(x)
    plan = _Plan(x, index)
    out = plan.base
    if plan.advs:
        out = _take(plan.merged, plan.flat, plan.adv_axis)
        if plan.adv_first:
            out = dimshuffle(out, _adv_dims_first(out.ndim, plan))
    if plan.new_axes:
        order = list(range(out.ndim))
        for pos in plan.new_axes:
            order.insert(pos, X)
        out = dimshuffle(out, order)
    if plan.advs or plan.new_axes:
        out._kiln_index = plan  # how set_subtensor and inc_subtensor write through it
    return out


def _advanced_inc(x, indices, y, axis, set):
    """x with y written to (or added at) the entries _take(x, indices, axis) reads; repeated
    indices accumulate when adding."""
    view = _take(x, indices, axis)
    y = fill(view, as_tensor_variable(y))  # y broadcast to the view's shape
    order, back = _moved_first(x.ndim, axis)
    y_first = dimshuffle(y, list(range(axis, axis + indices.ndim))
                         + [d for d in range(y.ndim) if not axis <= d < axis + indices.ndim])
    flat = indices
    if indices.ndim != 1:
        flat = reshape(indices, [-1], ndim=1)
        rest = [shape_i(y_first, d) for d in range(indices.ndim, y_first.ndim)]
        y_first = reshape(y_first, [shape_i(flat, 0)] + rest, ndim=1 + len(rest))
    written = AdvancedIncSubtensor1(set=int(set))(
        dimshuffle(x, order), y_first, flat)
    return dimshuffle(written, back)


def _inc(view, y, set):
    plan = getattr(view, "_kiln_index", None)
    if plan is not None:
        x, base = plan.x, plan.base
        if plan.new_axes:  # y broadcast to the view, then the added axes dropped
            y = fill(view, as_tensor_variable(y))
            y = dimshuffle(y, [d for d in range(y.ndim) if d not in plan.new_axes])
        if not plan.advs:
            return IncSubtensor((), set)(x, y) if base is x else _inc(base, y, set)
        if plan.adv_first:  # y in the view's layout, back to the take's
            y = fill(view, as_tensor_variable(y))
            y = dimshuffle(y, np.argsort(_adv_dims_first(y.ndim, plan)).tolist())
        written = plan.split(_advanced_inc(plan.merged, plan.flat, y, plan.adv_axis, set))
        return written if base is x else _inc(base, written, True)
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

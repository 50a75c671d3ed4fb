"""The index arithmetic of kiln.sparse, on core's sparse ops (core/ops/sparse.h): a matrix's
entries in coordinate form, a matrix assembled from coordinates in either format, and the
structures of the sum, the elementwise product and the matrix product of two matrices. Each
returns Parts: the data computed from the operands' data by gathers and scatters, so gradients
reach them."""
from kiln import ops
from kiln.sparse.variable import Parts
from kiln.tensor.basic import cast
from kiln.tensor.build import stack, zeros
from kiln.tensor.sort import argsort


def other_format(format):
    """CSR for CSC and CSC for CSR: the format of the transpose's arrays."""
    return "csc" if format == "csr" else "csr"


def take(values, positions):
    """values[positions] for an integer vector of positions (AdvancedSubtensor1)."""
    return ops.AdvancedSubtensor1()(values, positions)


def scatter(n, dtype, contributions):
    """The vector of n zeros of dtype with each (values, positions) pair added at its
    positions; repeated positions accumulate (AdvancedIncSubtensor1)."""
    out = zeros((n,), dtype)
    for values, positions in contributions:
        out = ops.AdvancedIncSubtensor1(set=0)(out, cast(values, dtype), positions)
    return out


def coordinates(x):
    """(rows, cols) of x's entries: int64 vectors as long as its data."""
    expanded = ops.ExpandIndptr()(x.parts.indptr)
    return (expanded, x.parts.indices) if x.format == "csr" else (x.parts.indices, expanded)


def dims(format, shape):
    """(major, minor) lengths of a matrix of this format and shape (an int64 vector)."""
    return (shape[0], shape[1]) if format == "csr" else (shape[1], shape[0])


def assemble(format, data, rows, cols, shape):
    """The parts of the `format` matrix of `shape` with data[k] at (rows[k], cols[k]): the
    coordinates unique and in any order (sorted here)."""
    major, minor = (rows, cols) if format == "csr" else (cols, rows)
    n_major, n_minor = dims(format, shape)
    order = argsort(major * n_minor + minor)
    return Parts(take(data, order), take(minor, order),
                 ops.CompressIndptr()(take(major, order), n_major), shape)


def parts_in(x, format):
    """x's parts in `format`: the same matrix (its entries sorted again when the format
    changes)."""
    if x.format == format:
        return x.parts
    return assemble(format, x.parts.data, *coordinates(x), x.parts.shape)


def union(a, b, dtype):
    """The parts of a + b in a's format, of dtype: the union of their structures, each entry
    the sum of the operands' entries there."""
    pa, pb = a.parts, parts_in(b, a.format)
    indices, indptr, pos_a, pos_b = ops.SparseUnion()(pa.indices, pa.indptr, pb.indices,
                                                      pb.indptr)
    data = scatter(indices.shape[0], dtype, [(pa.data, pos_a), (pb.data, pos_b)])
    return Parts(data, indices, indptr, pa.shape)


def intersection(a, b, dtype):
    """The parts of a * b (elementwise) in a's format, of dtype: the entries both have."""
    pa, pb = a.parts, parts_in(b, a.format)
    indices, indptr, take_a, take_b = ops.SparseIntersection()(pa.indices, pa.indptr,
                                                               pb.indices, pb.indptr)
    data = cast(take(pa.data, take_a), dtype) * cast(take(pb.data, take_b), dtype)
    return Parts(data, indices, indptr, pa.shape)


def product(a, b, dtype):
    """The parts of the matrix product a b in a's format, of dtype. CSR: a's indices number b's
    rows. CSC: (a b)^T = b^T a^T, whose CSR arrays are a b's CSC ones, and a CSC matrix's
    arrays are its transpose's CSR ones."""
    if a.format == "csr":
        first, second, n_cols = a.parts, parts_in(b, "csr"), b.parts.shape[1]
    else:
        first, second, n_cols = parts_in(b, "csc"), a.parts, a.parts.shape[0]
    indices, indptr, pair_first, pair_second, pair_out = ops.SparseProductPairs()(
        first.indices, first.indptr, second.indices, second.indptr, n_cols)
    products = (cast(take(first.data, pair_first), dtype)
                * cast(take(second.data, pair_second), dtype))
    data = scatter(indices.shape[0], dtype, [(products, pair_out)])
    return Parts(data, indices, indptr, stack([a.parts.shape[0], b.parts.shape[1]]))

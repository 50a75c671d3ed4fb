"""kiln.tensor.einsum (PyTensor's pytensor.tensor.einsum; Aesara never had it): numpy.einsum on
graphs, lowered to Kiln's products and reductions, so its gradient is that of the lowered graph.

Semantics as numpy's and PyTensor's: explicit ('ij,jk->ik') and implicit ('ij,jk') outputs,
ellipses that broadcast ('...ij,...jk->...ik'), repeated indices in one operand (their diagonal:
'ii->i', 'ii' the trace). The operands are contracted two at a time: in the order
numpy.einsum_path(optimize='optimal') chooses when every static shape is known, else right to
left, as PyTensor. Each pair becomes one matmul (its shared kept indices as batch dims, its
contracted indices as the inner dim), after transposes and reshapes; indices no later step needs
are summed as soon as they are alone. PyTensor wraps the result in an OpFromGraph named Einsum;
Kiln returns the lowered graph itself (what PyTensor's inlining gives)."""
import numpy as np

__all__ = ["einsum"]

_ELLIPSIS_LABELS = [chr(0x2460 + k) for k in range(64)]  # labels of ellipsis dims


def _parse(subscripts, ndims):
    """(per operand its list of labels, the output labels), ellipses expanded; numpy's errors."""
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        lhs, out = subscripts.split("->", 1)
        if "->" in out or "-" in out.replace("->", ""):
            raise ValueError("einstein sum subscripts string contains a '-' that is not part of "
                             "'->'")
        explicit = True
    else:
        lhs, out, explicit = subscripts, "", False
    terms = lhs.split(",")
    if len(terms) != len(ndims):
        raise ValueError("more operands provided to einstein sum function than specified in the "
                         "subscripts string" if len(ndims) > len(terms) else
                         "fewer operands provided to einstein sum function than specified in the "
                         "subscripts string")
    for term in terms + [out]:
        rest = term.replace("...", "")
        for c in rest:
            if not c.isalpha():
                raise ValueError("invalid subscript '%s' in einstein sum subscripts string, "
                                 "subscripts must be letters" % c)
    ell_rank = 0
    labels = []
    for term, ndim in zip(terms, ndims):
        if term.count("...") > 1:
            raise ValueError("einstein sum subscripts string contains more than one ellipsis")
        explicit_count = len(term.replace("...", ""))
        if "..." in term:
            n = ndim - explicit_count
            if n < 0:
                raise ValueError("operand has more subscripts than dimensions")
            ell_rank = max(ell_rank, n)
            head, tail = term.split("...")
            labels.append(list(head) + ["..."] * n + list(tail))
        else:
            if explicit_count != ndim:
                raise ValueError("operand has more dimensions than subscripts given in einstein "
                                 "sum, but no '...' ellipsis provided to broadcast the extra "
                                 "dimensions." if ndim > explicit_count else
                                 "einstein sum subscripts string contains too many subscripts "
                                 "for operand")
            labels.append(list(term))
    ell = _ELLIPSIS_LABELS[:ell_rank]
    for k, (term_labels, ndim) in enumerate(zip(labels, ndims)):
        n = term_labels.count("...")
        if n:
            first = term_labels.index("...")
            labels[k] = term_labels[:first] + ell[ell_rank - n:] + term_labels[first + n:]
    if explicit:
        if out.count("...") > 1:
            raise ValueError("einstein sum subscripts string contains more than one ellipsis")
        if "..." in out:
            head, tail = out.split("...")
            out_labels = list(head) + ell + list(tail)
        else:
            if ell_rank:
                raise ValueError("output has more dimensions than subscripts given in einstein "
                                 "sum, but no '...' ellipsis provided to broadcast the extra "
                                 "dimensions.")
            out_labels = list(out)
        for c in out_labels:
            if out_labels.count(c) > 1:
                raise ValueError("einstein sum subscripts string includes output subscript '%s' "
                                 "multiple times" % c)
            if not any(c in t for t in labels):
                raise ValueError("einstein sum subscripts string included output subscript '%s' "
                                 "which never appeared in an input" % c)
    else:
        counts = {}
        for t in labels:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        out_labels = ell + sorted(c for c, n in counts.items() if n == 1 and c not in ell)
    return labels, out_labels


def _take_diagonals(x, labels):
    """x with each label repeated in it reduced to its diagonal (numpy.diagonal moves it last)."""
    from kiln.tensor.array_funcs import diagonal
    labels = list(labels)
    while True:
        repeated = next((c for c in labels if labels.count(c) > 1), None)
        if repeated is None:
            return x, labels
        i = labels.index(repeated)
        j = labels.index(repeated, i + 1)
        x = diagonal(x, 0, i, j)
        labels = [c for k, c in enumerate(labels) if k not in (i, j)] + [repeated]


def _sum_out(x, labels, keep):
    """x summed over its labels not in `keep`."""
    axes = [k for k, c in enumerate(labels) if c not in keep]
    if not axes:
        return x, labels
    return x.sum(axis=axes), [c for c in labels if c in keep]


def _squeeze_broadcast(x, labels, other, other_labels):
    """x without the static-1 dims whose label the other operand has with another length (they
    broadcast: the label is then the other's alone)."""
    drop = [k for k, c in enumerate(labels)
            if x.type.shape[k] == 1 and c in other_labels
            and other.type.shape[other_labels.index(c)] != 1]
    if not drop:
        return x, labels
    keep = [k for k in range(len(labels)) if k not in drop]
    return x.dimshuffle(keep), [labels[k] for k in keep]


def _group(x, labels, order, groups):
    """x transposed to `order` (its labels), then each trailing group of labels (lists) made one
    dim by a reshape (an empty group a dim of length 1). The leading labels not in a group stay."""
    from kiln.tensor.basic import as_tensor_variable, reshape
    from kiln.tensor.reduce import prod
    x = x.dimshuffle([labels.index(c) for c in order])
    lead = len(order) - sum(len(g) for g in groups)
    if all(len(g) == 1 for g in groups):
        return x
    shape = [x.shape[k] for k in range(lead)]
    pos = lead
    static = [x.type.shape[k] for k in range(lead)]
    for g in groups:
        dims = [x.shape[pos + k] for k in range(len(g))]
        known = [x.type.shape[pos + k] for k in range(len(g))]
        if all(d is not None for d in known):
            n = int(np.prod(known, dtype=np.int64))
            shape.append(n)
            static.append(n)
        else:
            shape.append(prod(as_tensor_variable(dims)) if len(dims) > 1 else
                          dims[0] if dims else 1)
            static.append(None)
        pos += len(g)
    if all(s is not None for s in static):
        return reshape(x, tuple(static))
    return reshape(x, shape, ndim=len(shape))


def _contract(a, a_labels, b, b_labels, keep):
    """The product of a and b over their shared labels not in `keep` (summed), their shared
    labels in `keep` as batch dims: one matmul. Returns (result, its labels)."""
    from kiln.tensor.basic import reshape
    from kiln.tensor.nnet.basic import matmul
    a, a_labels = _squeeze_broadcast(a, a_labels, b, b_labels)
    b, b_labels = _squeeze_broadcast(b, b_labels, a, a_labels)
    # A label the other operand lacks and nothing later needs: summed now.
    a, a_labels = _sum_out(a, a_labels, set(keep) | set(b_labels))
    b, b_labels = _sum_out(b, b_labels, set(keep) | set(a_labels))
    batch = [c for c in a_labels if c in b_labels and c in keep]
    inner = [c for c in a_labels if c in b_labels and c not in keep]
    a_free = [c for c in a_labels if c not in b_labels]
    b_free = [c for c in b_labels if c not in a_labels]
    if not inner:
        # No sum: a broadcast product.
        out_labels = batch + a_free + b_free
        ax = a.dimshuffle([a_labels.index(c) if c in a_labels else "x" for c in out_labels])
        bx = b.dimshuffle([b_labels.index(c) if c in b_labels else "x" for c in out_labels])
        return ax * bx, out_labels
    am = _group(a, a_labels, batch + a_free + inner, [a_free, inner])
    bm = _group(b, b_labels, batch + inner + b_free, [inner, b_free])
    if not a_free and am.ndim == len(batch) + 1:  # (batch..., K) -> (batch..., 1, K)
        am = am.dimshuffle(list(range(len(batch))) + ["x", len(batch)])
    if not b_free and bm.ndim == len(batch) + 1:  # (batch..., K) -> (batch..., K, 1)
        bm = bm.dimshuffle(list(range(len(batch) + 1)) + ["x"])
    out = matmul(am, bm)  # (batch..., M, N)
    out_labels = batch + a_free + b_free
    if len(a_free) == 1 and len(b_free) == 1:
        return out, out_labels
    dims = [out.shape[k] for k in range(len(batch))]
    static = [out.type.shape[k] for k in range(len(batch))]
    for x, labels, free in ((a, a_labels, a_free), (b, b_labels, b_free)):
        for c in free:
            dims.append(x.shape[labels.index(c)])
            static.append(x.type.shape[labels.index(c)])
    if all(s is not None for s in static):
        return reshape(out, tuple(static)), out_labels
    return reshape(out, dims, ndim=len(dims)), out_labels


def _path(subscripts, operands):
    """The pairwise contraction order: numpy's optimal path when every static shape is known,
    else right to left (PyTensor's), as a list of index pairs into the list of operands left."""
    n = len(operands)
    right_to_left = [(k, k - 1) for k in range(n - 1, 0, -1)]
    shapes = [x.type.shape for x in operands]
    if n < 2 or any(d is None for s in shapes for d in s):
        return right_to_left
    fakes = [np.lib.stride_tricks.as_strided(np.zeros(1), shape=s, strides=(0,) * len(s))
             for s in shapes]
    path = np.einsum_path(subscripts, *fakes, optimize="optimal")[0][1:]
    if any(len(step) != 2 for step in path):
        return right_to_left
    return [tuple(step) for step in path]


def einsum(subscripts, *operands, optimize=None):
    """numpy.einsum(subscripts, *operands) as a graph (PyTensor's einsum): see the module's
    docstring. `optimize` is refused as PyTensor refuses it: the order is chosen by itself."""
    from kiln.tensor.basic import as_tensor_variable
    if optimize is not None:
        raise NotImplementedError(
            "Optimize kwarg is not implemented in PyTensor. By default, PyTensor will always "
            "optimize the graph if the inputs have static shapes.")
    xs = [as_tensor_variable(x) for x in operands]
    if not xs:
        raise ValueError("No input operands")
    labels, out_labels = _parse(subscripts, [x.ndim for x in xs])
    # Each operand alone: diagonals of repeated labels, and labels no one else needs summed.
    items = []
    for k, (x, lab) in enumerate(zip(xs, labels)):
        x, lab = _take_diagonals(x, lab)
        others = set(out_labels).union(*[set(labels[j]) for j in range(len(xs)) if j != k])
        x, lab = _sum_out(x, lab, others)
        items.append((x, lab))
    for step in _path(subscripts, xs):
        picked = [items[i] for i in step]
        for i in sorted(step, reverse=True):
            items.pop(i)
        keep = set(out_labels).union(*[set(lab) for _, lab in items])
        (a, al), (b, bl) = picked
        items.append(_contract(a, al, b, bl, keep))
    (x, lab), = items
    x, lab = _sum_out(x, lab, set(out_labels))
    if lab != out_labels:
        x = x.dimshuffle([lab.index(c) for c in out_labels])
    return x


# PyTensor's helpers of pytensor.tensor.einsum, which its docstrings show.

def _iota(shape, axis):
    """An int64 tensor of `shape` (a length-known vector) counting 0, 1, ... along `axis`:
    arange generalized to many dims, as PyTensor's."""
    from kiln.tensor.array_funcs import broadcast_to
    from kiln.tensor.basic import as_tensor_variable, get_vector_length
    from kiln.tensor.build import arange
    from kiln.tensor.shape import shape_padright
    shape = as_tensor_variable(shape)
    n = get_vector_length(shape)
    if not -n <= axis < n:
        raise np.AxisError(axis, n)
    axis %= n
    return broadcast_to(shape_padright(arange(shape[axis]), n - axis - 1), shape)


def _delta(shape, axes):
    """A bool tensor of `shape`, True where the indices of all the `axes` are equal (the
    Kronecker delta over those axes, broadcast along the others), as PyTensor's."""
    from functools import reduce
    from kiln.tensor.array_funcs import broadcast_to
    from kiln.tensor.basic import ELEMWISE, as_tensor_variable, get_vector_length
    from kiln.tensor.build import stack
    from kiln.tensor.shape import expand_dims
    if len(axes) < 2:
        raise ValueError("Need at least two axes to create a delta tensor")
    shape = as_tensor_variable(shape)
    iotas = [_iota(stack([shape[a] for a in axes]), i) for i in range(len(axes))]
    delta = reduce(ELEMWISE["and_"], [ELEMWISE["eq"](p, q) for p, q in zip(iotas, iotas[1:])])
    others = [i for i in range(get_vector_length(shape)) if i not in axes]
    return broadcast_to(expand_dims(delta, others) if others else delta, shape)


def _general_dot(vars, axes, batch_axes):
    """tensordot of the pair vars over axes = (a_axes, b_axes), the batch_axes pairs kept as
    leading batch dims: batch dims, then a's other dims, then b's (PyTensor's)."""
    from kiln.tensor.basic import as_tensor_variable
    a, b = (as_tensor_variable(v) for v in vars)
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    la, lb = [None] * a.ndim, [None] * b.ndim
    batch = []
    for pairs, kept in ((batch_axes, True), (axes, False)):
        if len(pairs[0]) != len(pairs[1]):
            raise ValueError("_general_dot: %s %s and %s differ in length"
                             % ("batch axes" if kept else "axes", pairs[0], pairs[1]))
        for i, j in zip(*pairs):
            la[i] = lb[j] = next(letters)
            if kept:
                batch.append(la[i])
    la = [c or next(letters) for c in la]
    lb = [c or next(letters) for c in lb]
    out = batch + [c for c in la if c not in lb] + [c for c in lb if c not in la]
    return einsum("%s,%s->%s" % ("".join(la), "".join(lb), "".join(out)), a, b)

"""kiln.graph.replace (PyTensor's pytensor.graph.replace): clone_replace and vectorize_graph."""
from kiln.graph import clone_replace, io_toposort  # noqa: F401

__all__ = ["clone_replace", "vectorize_graph", "vectorize_node", "register_vectorizer"]


# How each op class batches its nodes (PyTensor's _vectorize_node dispatch): a function
# (op, node, *batched_inputs) -> the new Apply node, by op class; the default (None key) is for
# every other op. kiln.tensor registers them (Elemwise, DimShuffle, Blockwise, and any op as a
# Blockwise of itself), as the graph layer knows no tensor ops.
_VECTORIZERS = {}


def register_vectorizer(op_class, fn):
    """Makes fn(op, node, *batched_inputs) batch the nodes of op_class (None: any op)."""
    _VECTORIZERS[op_class] = fn


def vectorize_node(node, *batched_inputs):
    """node's computation on inputs with extra leading (batch) dims: the new Apply node."""
    for cls in type(node.op).__mro__:
        fn = _VECTORIZERS.get(cls)
        if fn is not None:
            return fn(node.op, node, *batched_inputs)
    fn = _VECTORIZERS.get(None)
    if fn is None:
        raise NotImplementedError("vectorize_graph: no rule batches %s" % node.op)
    return fn(node.op, node, *batched_inputs)


def vectorize_graph(outputs, replace):
    """PyTensor's vectorize_graph: `outputs` recomputed with each key of `replace` (a dict from a
    core variable to a batched one with extra leading dims) replaced, every node on the way
    batched (vectorize_node). Returns a variable for a variable, a list for a list."""
    seq = isinstance(outputs, (list, tuple))
    outs = list(outputs) if seq else [outputs]
    pairs = list(replace.items()) if isinstance(replace, dict) else list(replace)
    memo = {}
    for old, new in pairs:
        if new.type.ndim < old.type.ndim:
            raise ValueError("vectorize_graph: %s (%s) cannot replace %s (%s): a batched variable "
                             "has the core variable's dims last" % (new, new.type, old, old.type))
        memo[id(old)] = new
    for node in io_toposort(outs, [k for k, _ in pairs]):
        new_inputs = [memo.get(id(i), i) for i in node.inputs]
        if all(a is b for a, b in zip(new_inputs, node.inputs)):
            continue
        batched = vectorize_node(node, *new_inputs)
        for old, new in zip(node.outputs, batched.outputs):
            if id(old) not in memo:
                memo[id(old)] = new
    result = [memo.get(id(o), o) for o in outs]
    return result if seq else result[0]


def vectorize(*args, **kwargs):
    """The old name of vectorize_graph (PyTensor warns; so does Kiln)."""
    import warnings
    warnings.warn("vectorize was renamed to vectorize_graph", UserWarning)
    return vectorize_graph(*args, **kwargs)

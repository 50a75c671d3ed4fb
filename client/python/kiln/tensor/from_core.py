"""Python variables for graphs core built in this process (grad's results, scan's loop) or sent
as kiln.v1 graphs: each node gets its op's class (kiln.ops), and a node core made keeps core's
own node as its twin, so nothing is made twice."""
from kiln import ops
from kiln.graph import Apply, TensorType, Variable, _core, core_variable
from kiln.tensor import elemwise  # noqa: F401  (registers the Elemwise and DimShuffle views)
from kiln.tensor.variable import TensorConstant, TensorVariable

# Python ops of core's ops seen, by core's op (equal props, equal ops): ops are values, so
# graphs share them. Emptied past _OPS_KEPT, so that it holds no more than a few ops' memory.
_ops = {}
_OPS_KEPT = 4096


def _op_of_core(core_op):
    op = _ops.get(core_op)
    if op is None:
        if len(_ops) >= _OPS_KEPT:
            _ops.clear()
        op = _ops[core_op] = ops.from_attrs(core_op.type_name, core_op.attrs, core_op)
    return op


def _leaf(twin):
    """The Python variable of a leaf core made (a constant, or an input of a type)."""
    if twin.is_constant:
        data = twin.data
        data.setflags(write=False)
        v = TensorConstant(TensorType(data.dtype.name, data.shape), data, name=twin.name or None)
    elif hasattr(twin.type, "dtype"):
        v = TensorVariable(TensorType(twin.type.dtype, twin.type.shape), name=twin.name or None)
    else:  # grad's placeholders: DisconnectedType, NullType
        v = Variable(twin.type, name=twin.name or None)
    v._core = twin
    return v


def variables_of(twins, known):
    """Python variables for core's variables `twins` (None stays None): the graph above them
    reuses the Python variables of `known`, and everything the graphs of `known` hold, wherever
    core's variables are theirs; core's other nodes and leaves get new Python ones, each
    holding core's own as its twin."""
    # Python's variable of each core variable it has, by the identity of core's Python object
    # (kiln._core gives one object per core variable while that object lives, and v._core keeps
    # it alive).
    by_twin, known_twins = {}, []
    stack, seen = list(known), set()
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        twin = v.__dict__.get("_core") or core_variable(v)
        by_twin[id(twin)] = v
        known_twins.append(twin)
        if v.owner is not None:
            stack.extend(v.owner.inputs)
    types = {}
    for core_op, inputs, outputs, out_types in _core.new_nodes(
            [t for t in twins if t is not None], known_twins):
        node = Apply.__new__(Apply)
        node.op = _op_of_core(core_op)
        ins = []
        for twin in inputs:
            v = by_twin.get(id(twin))
            if v is None:
                v = by_twin[id(twin)] = _leaf(twin)
            ins.append(v)
        node.inputs = ins
        node.outputs = []
        for i, (twin, t) in enumerate(zip(outputs, out_types)):
            if t is None:
                out = Variable(twin.type, owner=node, index=i)
            else:
                ttype = types.get(t)
                if ttype is None:
                    ttype = types[t] = TensorType(*t)
                out = TensorVariable(ttype, owner=node, index=i)
            out._core = twin
            by_twin[id(twin)] = out
            node.outputs.append(out)
    result = []
    for twin in twins:
        v = None if twin is None else by_twin.get(id(twin))
        if v is None and twin is not None:
            v = by_twin[id(twin)] = _leaf(twin)
        result.append(v)
    return result

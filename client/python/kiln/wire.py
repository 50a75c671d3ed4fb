"""Graphs and tensors to kiln.v1 messages and back (no transport: kiln.client sends them)."""
import numpy as np

from kiln import _pb, ops
from kiln.graph import TensorType, _core, core_variable
from kiln.tensor.basic import constant
from kiln.tensor import from_core  # noqa: F401  (registers kiln.tensor's op views)

_DTYPE_ENUM = {name: _pb.types_pb2.DType.Value("DTYPE_" + name.upper())
               for name in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                            "uint32", "uint64", "float16", "float32", "float64", "complex64",
                            "complex128")}
_DTYPE_NAME = {v: k for k, v in _DTYPE_ENUM.items()}
# The enum of a NumPy dtype of either byte order, and the dtypes of an enum: looked up per call.
_ENUM_OF = {np.dtype(name).newbyteorder(order): value
            for name, value in _DTYPE_ENUM.items() for order in "<>"}
_LITTLE = {value: np.dtype(name).newbyteorder("<") for name, value in _DTYPE_ENUM.items()}
_NATIVE = {value: np.dtype(name) for name, value in _DTYPE_ENUM.items()}


def unused_to_proto(value, field):
    """raise (also None), warn or ignore as a kiln.v1.UnusedInput; `field` names the argument."""
    if value is None:
        return _pb.options_pb2.UNUSED_INPUT_RAISE
    if value not in ("raise", "warn", "ignore"):
        raise ValueError("%s %r: expected raise, warn or ignore" % (field, value))
    return _pb.options_pb2.UnusedInput.Value("UNUSED_INPUT_" + value.upper())


def dtype_to_proto(dtype):
    """The kiln.v1.DType of a NumPy dtype."""
    return _ENUM_OF[np.dtype(dtype).newbyteorder("<")]


def dtype_from_proto(value):
    """The NumPy dtype (native byte order) of a kiln.v1.DType."""
    return _NATIVE[value]


def type_from_proto(msg):
    return TensorType(_DTYPE_NAME[msg.dtype], [d.size if d.known else None for d in msg.shape])


def tensor_to_proto(array, msg=None):
    """dtype, shape and raw little-endian bytes in C order."""
    a = np.asarray(array)
    msg = msg if msg is not None else _pb.types_pb2.Tensor()
    msg.dtype = _ENUM_OF[a.dtype]
    msg.shape.extend(a.shape)
    msg.data = a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes(order="C")
    return msg


def tensor_from_proto(msg):
    return np.frombuffer(msg.data, dtype=_LITTLE[msg.dtype]).reshape(tuple(msg.shape)).astype(
        _NATIVE[msg.dtype])


def graph_to_proto(inputs, outputs, shared_names=None, into=None):
    """The kiln.v1.Graph computing outputs from inputs, as core writes it (one wire encoding for
    every client); shared_names maps an input to its session variable. Every leaf must be an
    input or a constant (MissingInputError). `into`, an empty Graph message (a request's field),
    is filled in place: a graph's large constants are then parsed once and never copied."""
    g = _pb.graph_pb2.Graph() if into is None else into
    g.MergeFromString(_core.graph_to_proto(
        [core_variable(v) for v in inputs], [core_variable(o) for o in outputs]))
    for msg, v in zip(g.inputs, inputs):
        if shared_names and id(v) in shared_names:
            msg.shared = shared_names[id(v)]
    return g


def _attr_value(a):
    kind = a.value.WhichOneof("value")
    if kind == "ints":
        return list(a.value.ints.values)
    return getattr(a.value, kind)


def graph_from_proto(g, inputs):
    """The outputs of a kiln.v1.Graph as client variables over `inputs` (one per graph input),
    each node made again by its op's class (kiln.ops.from_attrs)."""
    if len(inputs) != len(g.inputs):
        raise ValueError("the graph has %d inputs, %d given" % (len(g.inputs), len(inputs)))
    constants = []
    for c in g.constants:
        data = tensor_from_proto(c.value)
        constants.append(constant(data, dtype=data.dtype))
    node_outputs = []

    def value(ref):
        which = ref.WhichOneof("ref")
        if which == "input":
            return inputs[ref.input]
        if which == "constant":
            return constants[ref.constant]
        return node_outputs[ref.node_output.node][ref.node_output.output]

    # The compact form (the server's replies): ops and types in tables, nodes refer by index.
    op_table = [(o.kind, [(a.name, _attr_value(a)) for a in o.attrs]) for o in g.ops]
    for n in g.nodes:
        if n.HasField("op") or not op_table:
            kind, attrs = n.op.kind, [(a.name, _attr_value(a)) for a in n.op.attrs]
        else:
            kind, attrs = op_table[n.op_index]
        op = ops.from_attrs(kind, attrs)
        node_outputs.append(op.make_node(*[value(r) for r in n.inputs]).outputs)
    return [value(r) for r in g.outputs]

"""ONNX models in and out. kiln.onnx.load(model) asks the server to import a model (a path, its
bytes, or an onnx.ModelProto) and returns Kiln variables that compose with the rest of the API:
function, grad, the printers. kiln.onnx.export(f_or_outputs, path) writes a Kiln graph as an
ONNX model. Both run on the server (proto/onnx: its README lists the operators taken); what
Kiln cannot take or write raises KilnError naming the operator."""
import collections
import os

from kiln import _pb, wire
from kiln.client import get_client
from kiln.compile import Function, shared

OnnxModel = collections.namedtuple(
    "OnnxModel", ["inputs", "outputs", "weights", "input_names", "output_names", "opset"])
OnnxModel.__doc__ = """An imported model: its input variables (named as the model's inputs), its
output variables, and with trainable=True its floating-point initializers as shared variables
(named as the initializers, holding their values); the default domain's opset it was written
for."""


def _model_bytes(model):
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model)
    if isinstance(model, (str, os.PathLike)):
        with open(model, "rb") as f:
            return f.read()
    if hasattr(model, "SerializeToString"):  # an onnx.ModelProto
        return model.SerializeToString()
    raise TypeError("kiln.onnx.load takes a path, bytes or an onnx.ModelProto, not %s"
                    % type(model).__name__)


def load(model, trainable=False, client=None):
    """The ONNX `model` (a path, bytes or an onnx.ModelProto) as Kiln variables (OnnxModel).
    Initializers are constants; with trainable=True the floating-point ones are shared variables
    instead (OnnxModel.weights), so that grad reaches them and updates can train them."""
    request = _pb.service_pb2.ImportOnnxRequest(model=_model_bytes(model), trainable=trainable)
    resp = (client or get_client()).call("ImportOnnx", request)
    graph = resp.graph
    n_inputs = len(graph.inputs) - len(resp.weights)
    inputs = [wire.type_from_proto(msg.type)(msg.name) for msg in graph.inputs[:n_inputs]]
    weights = []
    for msg, value in zip(graph.inputs[n_inputs:], resp.weights):
        data = wire.tensor_from_proto(value)
        weights.append(shared(data, name=msg.name, shape=data.shape))
    outputs = wire.graph_from_proto(graph, inputs + weights)
    for v, name in zip(outputs, resp.output_names):
        v.name = name
    return OnnxModel(inputs, outputs, weights, [msg.name for msg in graph.inputs[:n_inputs]],
                     list(resp.output_names), resp.opset)


def export(f_or_outputs, path=None, inputs=None, opset=17, output_names=None, client=None):
    """A Kiln graph as an ONNX model (opset 13 to 17): a Function's graph as built (its inputs,
    its outputs), or `outputs` (a variable or a list) over `inputs`. Writes it to `path` when
    given; returns its bytes. An op without an ONNX equivalent raises KilnError naming it; a
    graph that reads shared variables is refused (ONNX has no place for their values)."""
    if isinstance(f_or_outputs, Function):
        if inputs is not None:
            raise TypeError("kiln.onnx.export: a Function brings its own inputs")
        inputs = [i.variable for i in f_or_outputs.inputs]
        outputs = list(f_or_outputs.outputs)
    else:
        if inputs is None:
            raise TypeError("kiln.onnx.export: give the inputs of the outputs (inputs=[...])")
        outputs = list(f_or_outputs) if isinstance(f_or_outputs, (list, tuple)) else [f_or_outputs]
    names = output_names or [o.name or "" for o in outputs]
    request = _pb.service_pb2.ExportOnnxRequest(graph=wire.graph_to_proto(inputs, outputs),
                                                opset=opset, output_names=names)
    model = (client or get_client()).call("ExportOnnx", request).model
    if path is not None:
        with open(path, "wb") as f:
            f.write(model)
    return model

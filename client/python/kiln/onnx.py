"""ONNX models as Kiln graphs: kiln.onnx.load(model) asks the server to import a model (a path,
its bytes, or an onnx.ModelProto) and returns Kiln variables that compose with the rest of the
API: function, grad, the printers. The server's importer is proto/onnx (its README lists the
operators taken); a model it cannot take raises KilnError naming the operator and opset."""
import collections
import os

from kiln import _pb, wire
from kiln.client import get_client
from kiln.compile import shared

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

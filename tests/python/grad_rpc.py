"""The server's Grad RPC called as kiln.gradient called it before grad ran in this process
(the graph sent, the gradients' graph rebuilt as Python variables over the caller's leaves):
the reference of the in-process grad's parity test and of tests/bench/grad_in_process.py."""
import warnings

from kiln import _pb, wire
from kiln.client import get_client
from kiln.graph import graph_inputs
from kiln.tensor.variable import TensorConstant


def grad_on_server(cost, wrt, consider_constant=(), known_grads=(), disconnected_inputs="raise",
                   jacobian=False):
    """The gradients of cost with respect to the list wrt (with jacobian, the Jacobians of the
    vector cost), differentiated by the server (kiln.config.server)."""
    wrt_list = list(wrt)
    known = list(known_grads)
    extra = wrt_list + list(consider_constant) + [v for pair in known for v in pair]
    outs = ([cost] if cost is not None else []) + extra
    leaves = [v for v in graph_inputs(outs) if not isinstance(v, TensorConstant)]
    g = wire.graph_to_proto(leaves, outs)
    req = _pb.service_pb2.GradRequest(
        disconnected_inputs=wire.unused_to_proto(disconnected_inputs, "disconnected_inputs"),
        no_cost=cost is None, jacobian=jacobian)
    refs = list(g.outputs)
    k = 1 if cost is not None else 0
    for r in refs[k:k + len(wrt_list)]:
        req.wrt.add().CopyFrom(r)
    k += len(wrt_list)
    for r in refs[k:k + len(consider_constant)]:
        req.consider_constant.add().CopyFrom(r)
    k += len(consider_constant)
    for i in range(len(known)):
        kg = req.known_grads.add()
        kg.variable.CopyFrom(refs[k + 2 * i])
        kg.grad.CopyFrom(refs[k + 2 * i + 1])
    del g.outputs[1 if cost is not None else 0:]
    req.graph.CopyFrom(g)
    resp = get_client().call("Grad", req)
    for message in resp.warnings:
        warnings.warn(message)
    return wire.graph_from_proto(resp.graph, leaves)


def logistic_regression(kt, kiln, rng):
    """The Aesara tutorial's logistic regression: (x, y, w, b, cost), w and b shared."""
    x = kt.dmatrix("x")
    y = kt.dvector("y")
    w = kiln.shared(rng.normal(size=784), name="w")
    b = kiln.shared(0.0, name="b")
    p_1 = 1 / (1 + kt.exp(-kt.dot(x, w) - b))
    xent = -y * kt.log(p_1) - (1 - y) * kt.log(1 - p_1)
    cost = xent.mean() + 0.01 * (w ** 2).sum()
    return x, y, w, b, cost

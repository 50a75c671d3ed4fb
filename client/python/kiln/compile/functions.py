"""kiln.function: Aesara's compiled functions, compiled and run by the server."""
from kiln import _pb, wire
from kiln.client import KilnError, get_client, route_of
from kiln.compile.io import In, Out
from kiln.compile.sharedvalue import SharedVariable
from kiln.graph import Variable, clone_replace, graph_inputs
from kiln.tensor.basic import as_tensor_variable
from kiln.tensor.variable import TensorConstant


class Function:
    """A function compiled on the server. Call it with one value per input (positionally or
    by name); it returns a list of arrays, or one array when built with a single output."""

    def __init__(self, inputs, outputs, single, request, shared_vars, client, allow_downcast):
        self.inputs = inputs
        self.outputs = outputs
        self._single = single
        self._request = request
        self._shared = shared_vars
        self._client = client
        self._allow_downcast = allow_downcast
        # Every call of this function goes to one replica behind a front (its session's, or
        # its graph's), which compiled it: it runs even while the replicas share no cache.
        self._route = client.session() if shared_vars else route_of("Compile", request)
        self._compile()

    def _compile(self):
        for s in self._shared:
            if s._uploaded is not self._client:
                s._upload(self._client)
        resp = self._client.call("Compile", self._request, route=self._route)
        self.function_id = resp.function_id
        self.source = resp.source
        self.signature = resp.signature

    def __call__(self, *args, **kwargs):
        values = list(args)
        if len(values) > len(self.inputs):
            raise TypeError("Function takes %d inputs, got %d" % (len(self.inputs), len(values)))
        for inp in self.inputs[len(values):]:
            if inp.name in kwargs:
                values.append(kwargs.pop(inp.name))
            elif inp.value is not None:
                values.append(inp.value)
            else:
                raise TypeError("Missing required input: %s" % (inp.name or inp.variable))
        if kwargs:
            raise TypeError("Unknown input names: %s" % ", ".join(sorted(kwargs)))
        req = _pb.service_pb2.ExecuteRequest()
        for inp, value in zip(self.inputs, values):
            data = inp.variable.type.filter(value, self._allow_downcast,
                                            name=str(inp.name or inp.variable))
            wire.tensor_to_proto(data, req.args.add())
        if self._shared:
            req.session = self._client.session()
        for attempt in range(2):
            req.function_id = self.function_id
            try:
                resp = self._client.call("Execute", req, route=self._route)
                break
            except KilnError as e:
                # Evicted or restarted: send the graph again, once.
                if attempt or e.code != "NOT_FOUND" or "compile it again" not in e.message:
                    raise
                self._compile()
        out = [wire.tensor_from_proto(t) for t in resp.outputs]
        return out[0] if self._single else out


def _as_in(x):
    return x if isinstance(x, In) else In(x)


def function(inputs, outputs=None, mode=None, updates=None, givens=None,
             no_default_updates=False, accept_inplace=False, name=None, rebuild_strict=True,
             allow_input_downcast=None, profile=None, on_unused_input=None):
    """Aesara's function: compiles outputs as a function of inputs on the server."""
    ins = [_as_in(i) for i in inputs]
    single = outputs is not None and not isinstance(outputs, (list, tuple))
    outs = [] if outputs is None else [outputs] if single else list(outputs)
    outs = [o.variable if isinstance(o, Out) else as_tensor_variable(o) for o in outs]
    if isinstance(updates, dict):
        updates = list(updates.items())
    updates = [(s, as_tensor_variable(v)) for s, v in (updates or [])]
    for i in ins:
        if i.update is not None:
            updates.append((i.variable, as_tensor_variable(i.update)))
    for s, v in updates:
        if not isinstance(s, SharedVariable):
            raise TypeError("updates: %s is not a shared variable" % s)
        if v.dtype != s.dtype or v.ndim != s.ndim:
            raise TypeError("An update must have the same type as the original shared variable "
                            "(shared_var=%s, shared_var.type=%s, update_val=%s, "
                            "update_val.type=%s)." % (s, s.type, v, v.type))
    if givens:
        replaced = clone_replace(outs + [v for _, v in updates], givens)
        outs, new_values = replaced[:len(outs)], replaced[len(outs):]
        updates = [(s, v) for (s, _), v in zip(updates, new_values)]
    graph_ins = [i.variable for i in ins]
    for v in graph_ins:
        if not isinstance(v, Variable) or isinstance(v, TensorConstant):
            raise TypeError("function: inputs must be variables, got %r" % (v,))
    seen = {id(v) for v in graph_ins}
    shared_vars = []
    leaves = graph_inputs(outs + [u for _, u in updates], graph_ins)
    for k, v in enumerate(leaves + [s for s, _ in updates]):
        if isinstance(v, SharedVariable) and id(v) not in seen:
            seen.add(id(v))
            shared_vars.append(v)
        elif v.owner is None and not isinstance(v, TensorConstant) and id(v) not in seen:
            raise ValueError("MissingInputError: Input %d (%s) of the graph (indices start from "
                             "0), used to compute %s, was not provided and not given a value. "
                             "Use the Aesara flag exception_verbosity='high', for more "
                             "information on this error." % (k, v, outs[0] if outs else v))
    all_ins = graph_ins + shared_vars
    req = _pb.service_pb2.CompileRequest(
        mode=wire.mode_to_proto(mode),
        on_unused_input=wire.unused_to_proto(on_unused_input, "on_unused_input"))
    names = {id(s): s.session_name() for s in shared_vars}
    req.graph.CopyFrom(wire.graph_to_proto(all_ins, outs + [u for _, u in updates], names))
    for k, (s, _) in enumerate(updates):
        up = req.updates.add()
        up.input = all_ins.index(s)
        up.value.CopyFrom(req.graph.outputs[len(outs) + k])
    del req.graph.outputs[len(outs):]
    return Function(ins, outs, single, req, shared_vars, get_client(),
                    allow_input_downcast)

"""Aesara's OpFromGraph (aesara.compile.builders): a graph used as one op. Core carries the graph
as the op's `inner` attribute, runs it as one node, or, with inline=True, expands it when
compiling; its gradient is the inner graph's, or grad_overrides(inputs, output_grads) (carried as
the `grad` attribute: an OpFromGraph named "<name>_grad" computes it)."""
from kiln import _core
from kiln.compile.sharedvalue import SharedVariable
from kiln import ops
from kiln.graph import Variable, core_variable, graph_inputs
from kiln.graph.utils import MissingInputError
from kiln.tensor.basic import as_tensor_variable
from kiln.tensor.variable import TensorConstant


class OpFromGraph(ops.OpFromGraph):
    """OpFromGraph(inputs, outputs, inline=False, name=None): op(*inputs) computes outputs.
    Shared variables the outputs read become extra inputs the op appends itself."""

    def __init__(self, inputs, outputs, inline=False, lop_overrides="default",
                 grad_overrides="default", rop_overrides="default", connection_pattern=None,
                 name=None, **kwargs):
        if not isinstance(inputs, list) or not isinstance(outputs, list):
            raise TypeError("Inputs and outputs must be lists")
        for v in inputs:
            if isinstance(v, (TensorConstant, SharedVariable)) or not isinstance(v, Variable):
                raise TypeError("Inputs and outputs must be non-Constant/shared Variable "
                                "instances; got %s" % (v,))
        for what, value in [("lop_overrides", lop_overrides), ("rop_overrides", rop_overrides)]:
            if not (isinstance(value, str) and value == "default"):
                raise NotImplementedError("OpFromGraph: %s is not supported by Kiln; the "
                                          "gradient is the inner graph's" % what)
        overridden = not (isinstance(grad_overrides, str) and grad_overrides == "default")
        if overridden and not callable(grad_overrides):
            raise NotImplementedError("OpFromGraph: Kiln takes grad_overrides as a function of "
                                      "(inputs, output_grads); got %r" % (grad_overrides,))
        if "updates" in kwargs or "givens" in kwargs:
            raise NotImplementedError("Updates and givens are not supported")
        outputs = [as_tensor_variable(o) for o in outputs]
        listed = {id(v) for v in inputs}
        self.shared_inputs = []
        for v in graph_inputs(outputs):
            if id(v) in listed or isinstance(v, TensorConstant):
                continue
            if not isinstance(v, SharedVariable):
                raise MissingInputError("OpFromGraph is missing an input: %s" % v, variable=v)
            listed.add(id(v))
            self.shared_inputs.append(v)
        self.is_inline, self.name = bool(inline), name
        self.n_explicit = len(inputs)
        inner = _core.encode_inner_graph([core_variable(v) for v in inputs + self.shared_inputs],
                                         [core_variable(o) for o in outputs])
        grad = _grad_graph(inputs + self.shared_inputs, outputs, grad_overrides) \
            if overridden else ""
        super().__init__(inner, self.is_inline, name or "", grad)
        self.name = name  # Aesara's: None when not given

    def __reduce__(self):
        """Pickled as its wire attributes (the inner graph) with the shared variables it appends
        and its count of explicit inputs, so it comes back callable as it was."""
        return (_unpickled, (dict(self.wire_attrs()), self.shared_inputs, self.n_explicit,
                             self.name))

    def __call__(self, *inputs, return_list=False):
        inputs = list(inputs)
        if len(inputs) == self.n_explicit:
            inputs += self.shared_inputs
        elif len(inputs) != self.n_explicit + len(self.shared_inputs):
            raise ValueError("Expected at least %d input(s)" % self.n_explicit)
        outs = self.make_node(*[as_tensor_variable(v) for v in inputs]).outputs
        return outs if return_list or len(outs) > 1 else outs[0]


def _grad_graph(inputs, outputs, override):
    """The text of Aesara's gradient override graph: from (inputs, slots for the outputs, the
    output gradients) to override(inputs, output_grads), one gradient per input."""
    output_grads = [o.type() for o in outputs]
    grads = override(list(inputs), output_grads)
    if not isinstance(grads, list):
        raise TypeError('Gradient/L_op overriding function should return a list, got "%s"'
                        % type(grads))
    if len(grads) != len(inputs):
        raise ValueError("Gradient/L_op overriding function should return list of %d outputs, "
                         "got %d" % (len(inputs), len(grads)))
    grads = [as_tensor_variable(g) for g in grads]
    slots = [o.type() for o in outputs]
    return _core.encode_inner_graph(
        [core_variable(v) for v in list(inputs) + slots + output_grads],
        [core_variable(g) for g in grads])


def _unpickled(attrs, shared_inputs, n_explicit, name):
    """An OpFromGraph from its pickle: its inner graph checked by core again."""
    op = OpFromGraph.__new__(OpFromGraph)
    ops.OpFromGraph.__init__(op, **attrs)
    op.shared_inputs, op.n_explicit = list(shared_inputs), n_explicit
    op.is_inline, op.name = bool(op.inline), name
    return op

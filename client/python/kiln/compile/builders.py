"""Aesara's OpFromGraph (aesara.compile.builders): a graph used as one op. Core carries the graph
as the op's `inner` attribute, runs it as one node, or, with inline=True, expands it when
compiling (core/builders/op_from_graph.h).

Its gradient is the inner graph's, or Aesara's overrides, which this module turns into graphs
the op carries as attributes:

- grad_overrides (a function of (inputs, output_grads)) or lop_overrides (of (inputs, outputs,
  output_grads)), an OpFromGraph taking those, a NullType or DisconnectedType variable for every
  input, or a list with one entry per input: 'default' (the inner graph's own gradient), such a
  function returning that input's gradient, or such a variable. The gradient is then one
  OpFromGraph named "<name>_grad" ("<name>_lop" for lop_overrides) of (inputs, outputs,
  output gradients), its NullType entries undefined (grad raises NullTypeGradError through
  them) and its DisconnectedType entries disconnected (the op's connection pattern says so).
- rop_overrides: a function of (inputs, eval_points), an OpFromGraph taking those, a NullType or
  DisconnectedType variable, or a list with one entry per output. Kiln's Rop differentiates a
  gradient, so the override travels with the op's gradient (core makes it the gradient of the
  gradient with respect to the output gradients), and Rop gives the override's values.
- connection_pattern: a list (one per input) of lists (one per output) of bools.

Aesara calls the override functions at the first grad or Rop; Kiln calls them when the op is
made (they should be pure functions, as Aesara's documentation asks)."""
from kiln import _core
from kiln.compile.sharedvalue import SharedVariable
from kiln import ops
from kiln.graph import Variable, core_variable, graph_inputs
from kiln.graph.null_type import is_disconnected_type, is_null_type, why_null
from kiln.graph.utils import MissingInputError
from kiln.tensor.basic import as_tensor_variable, zeros_like
from kiln.tensor.variable import TensorConstant

# Core's kinds of an overridden gradient or R_op (OverrideKind in op_from_graph.h).
_FROM_GRAPH, _DISCONNECTED, _NULL = 0, 1, 2

TYPE_ERR_MSG = ("L_op/gradient override should be (single or list of)'default' | OpFromGraph | "
                "callable | Variable with NullType or DisconnectedType, got %s")
STYPE_ERR_MSG = ("Overriding Variable instance can only have type of DisconnectedType or "
                 "NullType, got %s")
ROP_TYPE_ERR_MSG = ("R_op overrides should be (single or list of)OpFromGraph | 'default' | None | "
                    "0 | callable, got %s")
OV_INP_LEN_ERR_MSG = "expect overrider with %d inputs, got %d"


def _is_default(value):
    return isinstance(value, str) and value == "default"


def _is_special(value):
    """A NullType or DisconnectedType variable (an override meaning undefined / disconnected)."""
    return is_null_type(value) or is_disconnected_type(value)


def _kind(value):
    if is_null_type(value):
        return _NULL
    return _DISCONNECTED if is_disconnected_type(value) else _FROM_GRAPH


class OpFromGraph(ops.OpFromGraph):
    """OpFromGraph(inputs, outputs, inline=False, lop_overrides='default',
    grad_overrides='default', rop_overrides='default', connection_pattern=None, name=None):
    op(*inputs) computes outputs. Shared variables the outputs read become extra inputs the op
    appends itself."""

    def __init__(self, inputs, outputs, inline=False, lop_overrides="default",
                 grad_overrides="default", rop_overrides="default", connection_pattern=None,
                 name=None, **kwargs):
        if not isinstance(inputs, list) or not isinstance(outputs, list):
            raise TypeError("Inputs and outputs must be lists")
        for v in inputs:
            if isinstance(v, (TensorConstant, SharedVariable)) or not isinstance(v, Variable):
                raise TypeError("Inputs and outputs must be non-Constant/shared Variable "
                                "instances; got %s" % (v,))
        if "updates" in kwargs or "givens" in kwargs:
            raise NotImplementedError("Updates and givens are not supported")
        if not _is_default(lop_overrides) and not _is_default(grad_overrides):
            raise ValueError("lop_overrides and grad_overrides are mutually exclusive")
        if name is not None:
            assert isinstance(name, str), "name must be None or string object"
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
        self.lop_overrides, self.grad_overrides = lop_overrides, grad_overrides
        self.rop_overrides = rop_overrides
        all_inputs = inputs + self.shared_inputs
        inner = _core.encode_inner_graph([core_variable(v) for v in all_inputs],
                                         [core_variable(o) for o in outputs])
        attrs = {"inner": inner, "inline": self.is_inline, "name": name or ""}
        nulls = []
        if not _is_default(lop_overrides) or not _is_default(grad_overrides):
            lop = not _is_default(lop_overrides)
            override = lop_overrides if lop else grad_overrides
            grad, kinds, grad_nulls = _gradient_graph(all_inputs, outputs, override, lop)
            attrs.update(grad=grad, lop=lop)
            if any(kinds):
                attrs["grad_kinds"] = kinds
            nulls += grad_nulls
        if not _is_default(rop_overrides):
            rop, kinds, rop_nulls = _rop_graph(all_inputs, outputs, rop_overrides)
            attrs["rop"] = rop
            if any(kinds):
                attrs["rop_kinds"] = kinds
            nulls += rop_nulls
        if nulls:
            attrs["null_reasons"] = "\n".join(r.replace("\n", " ") for r in nulls)
        if connection_pattern is not None:
            attrs["connections"] = _pattern(connection_pattern, len(all_inputs),
                                                   len(outputs))
        super().__init__(**attrs)
        self.name = name  # Aesara's: None when not given

    def connection_pattern(self, node):
        """Aesara's Op.connection_pattern(node): per input, per output, whether the output
        depends on the input (core's answer: the given pattern, or the inner graph's and the
        gradient override's)."""
        return [list(row) for row in core_variable(node.outputs[0]).owner.connection_pattern]

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


def _pattern(pattern, n_in, n_out):
    """connection_pattern (a list of n_in lists of n_out bools) flattened input-major."""
    rows = [list(r) for r in pattern]
    if len(rows) != n_in or any(len(r) != n_out for r in rows):
        raise ValueError("connection_pattern must be a list of %d lists (one per input) of %d "
                         "bools (one per output)" % (n_in, n_out))
    return [1 if c else 0 for r in rows for c in r]


def _slots(inputs, outputs):
    """What the gradient graph reads the op's outputs from: each output itself (the graph is cut
    there, as Aesara's L_op graph reads them), or a fresh variable of its type where an output
    is an input, a constant, or comes again."""
    seen = {id(v) for v in inputs}
    slots = []
    for o in outputs:
        if id(o) in seen or isinstance(o, TensorConstant):
            slots.append(o.type())
        else:
            seen.add(id(o))
            slots.append(o)
    return slots


def _own_grads(inputs, outputs, output_grads, wrt):
    """The inner graph's own gradients with respect to wrt (undefined ones and disconnected
    ones returned as such, as Aesara's L_op asks grad for them)."""
    from kiln.gradient import grad
    if not wrt:
        return []
    return grad(None, list(wrt), known_grads=list(zip(outputs, output_grads)),
                disconnected_inputs="ignore", return_disconnected="Disconnected",
                null_gradients="return")


def _filtered(g, inp, kinds, nulls, grads):
    """Appends an override's result for input inp: zeros in the graph and the kind for a
    NullType or DisconnectedType variable, else the gradient itself."""
    if _is_special(g):
        kinds.append(_kind(g))
        if is_null_type(g):
            nulls.append(why_null(g))
        grads.append(zeros_like(inp))
    else:
        kinds.append(_FROM_GRAPH)
        grads.append(as_tensor_variable(g))


def _gradient_graph(inputs, outputs, override, lop):
    """The text of Aesara's L_op override graph, from (inputs, outputs, output gradients) to one
    gradient per input, with each input's kind and the NullType reasons."""
    n_in, n_out = len(inputs), len(outputs)
    output_grads = [o.type() for o in outputs]
    slots = _slots(inputs, outputs)
    args = (list(inputs), list(slots), output_grads) if lop else (list(inputs), output_grads)
    if isinstance(override, OpFromGraph):
        wanted = n_in + (2 if lop else 1) * n_out
        if override.n_explicit != wanted:
            raise ValueError(OV_INP_LEN_ERR_MSG % (wanted, override.n_explicit))
        ofg = override
        override = lambda *a: ofg(*[v for part in a for v in part], return_list=True)  # noqa
    kinds, nulls, grads = [], [], []
    if isinstance(override, Variable):
        if not _is_special(override):
            raise ValueError(STYPE_ERR_MSG % (override.type,))
        for inp in inputs:
            _filtered(override, inp, kinds, nulls, grads)
    elif isinstance(override, list):
        if len(override) != n_in:
            raise ValueError("Need to override %d gradients, got %d" % (n_in, len(override)),
                             override)
        wrt = [inp for inp, entry in zip(inputs, override) if _is_default(entry)]
        defaults = iter(_own_grads(inputs, outputs, output_grads, wrt))
        for inp, entry in zip(inputs, override):
            if _is_default(entry):
                _filtered(next(defaults), inp, kinds, nulls, grads)
            elif isinstance(entry, Variable):
                if not _is_special(entry):
                    raise ValueError(STYPE_ERR_MSG % (entry.type,))
                _filtered(entry, inp, kinds, nulls, grads)
            else:
                if not callable(entry):
                    raise TypeError(TYPE_ERR_MSG % (entry,))
                _filtered(entry(*args), inp, kinds, nulls, grads)
    else:
        if not callable(override):
            raise TypeError(TYPE_ERR_MSG % (override,))
        results = override(*args)
        if not isinstance(results, list):
            raise TypeError('Gradient/L_op overriding function should return a list, got "%s"'
                            % type(results))
        if len(results) != n_in:
            raise ValueError("Gradient/L_op overriding function should return list of %d "
                             "outputs, got %d" % (n_in, len(results)))
        for g, inp in zip(results, inputs):
            _filtered(g, inp, kinds, nulls, grads)
    text = _core.encode_inner_graph(
        [core_variable(v) for v in list(inputs) + slots + output_grads],
        [core_variable(g) for g in grads])
    return text, kinds, nulls


def _rop_filtered(r, out, kinds, nulls, rops):
    """Appends an R_op override's result for output out: NullType stays undefined (zeros in the
    graph), DisconnectedType is zeros (Aesara's R_op has no disconnected results)."""
    if r is None or is_disconnected_type(r):
        kinds.append(_FROM_GRAPH)
        rops.append(zeros_like(out))
    elif is_null_type(r):
        kinds.append(_NULL)
        nulls.append(why_null(r))
        rops.append(zeros_like(out))
    else:
        kinds.append(_FROM_GRAPH)
        rops.append(as_tensor_variable(r))


def _rop_graph(inputs, outputs, override):
    """The text of Aesara's R_op override graph, from (inputs, eval points) to one R_op per
    output, with each output's kind and the NullType reasons."""
    from kiln.gradient import Rop
    n_out = len(outputs)
    eval_points = [i.type() for i in inputs]
    if isinstance(override, OpFromGraph):
        if override.n_explicit != 2 * len(inputs):
            raise ValueError(OV_INP_LEN_ERR_MSG % (2 * len(inputs), override.n_explicit))
        ofg = override
        override = lambda i, e: ofg(*(list(i) + list(e)), return_list=True)  # noqa: E731
    kinds, nulls, rops = [], [], []
    if isinstance(override, Variable):
        if not _is_special(override):
            raise ValueError(STYPE_ERR_MSG % (override.type,))
        for out in outputs:
            _rop_filtered(override, out, kinds, nulls, rops)
    elif isinstance(override, list):
        if len(override) != n_out:
            raise ValueError("Need to override %d Rop, got %d" % (n_out, len(override)),
                             override)
        defaults = [o for o, entry in zip(outputs, override) if _is_default(entry)]
        defaults = iter(Rop(defaults, list(inputs), eval_points) if defaults else [])
        for out, entry in zip(outputs, override):
            if _is_default(entry):
                _rop_filtered(next(defaults), out, kinds, nulls, rops)
            elif isinstance(entry, Variable):
                if not _is_special(entry):
                    raise ValueError(STYPE_ERR_MSG % (entry.type,))
                _rop_filtered(entry, out, kinds, nulls, rops)
            else:
                if not callable(entry):
                    raise TypeError(ROP_TYPE_ERR_MSG % (entry,))
                _rop_filtered(entry(list(inputs), eval_points), out, kinds, nulls, rops)
    else:
        if not callable(override):
            raise TypeError(ROP_TYPE_ERR_MSG % (override,))
        results = override(list(inputs), eval_points)
        if not isinstance(results, list):
            raise TypeError('Rop overriding function should return a list, got "%s"'
                            % type(results))
        if len(results) != n_out:
            raise ValueError("Rop overriding function should return list of %d outputs, got %d"
                             % (n_out, len(results)), override)
        for r, out in zip(results, outputs):
            _rop_filtered(r, out, kinds, nulls, rops)
    text = _core.encode_inner_graph([core_variable(v) for v in list(inputs) + eval_points],
                                    [core_variable(r) for r in rops])
    return text, kinds, nulls


def _unpickled(attrs, shared_inputs, n_explicit, name):
    """An OpFromGraph from its pickle: its inner graph checked by core again."""
    op = OpFromGraph.__new__(OpFromGraph)
    ops.OpFromGraph.__init__(op, **attrs)
    op.shared_inputs, op.n_explicit = list(shared_inputs), n_explicit
    op.is_inline, op.name = bool(op.inline), name
    op.lop_overrides = op.grad_overrides = op.rop_overrides = "default"
    return op

"""kiln.tensor.blockwise (PyTensor's pytensor.tensor.blockwise; Aesara never had it): Blockwise
applies a core op with a gufunc signature over the broadcast leading (batch) dims of its inputs,
as numpy.vectorize with a signature. Core computes it (core/ops/blockwise.h): its types, shapes,
kernel (the core op's kernel on views of each batch item) and gradient (the core op's gradient,
batched, summed over the dims an input broadcast along).

    >>> from kiln.tensor.blockwise import Blockwise
    >>> from kiln.tensor.nlinalg import MatrixInverse
    >>> Blockwise(MatrixInverse())
    Blockwise{MatrixInverse, (m,m)->(m,m)}

Kiln's Op.core_op() is the op as core makes it, so the wrapped op is `Blockwise.inner_op` here
(PyTensor's `Blockwise.core_op`); the props are core's wire form: `core` (the class name),
`core_attrs` (its attributes as text) and `signature`."""
import re
import struct

from kiln import ops

__all__ = ["Blockwise", "batched_view", "gufunc_signature", "attr_text", "parse_attr_text"]

_DIM = r"\w+"
_ARG = r"\((?:{0}(?:,{0})*)?\)".format(_DIM)
_ARGS = "{0}(?:,{0})*".format(_ARG)
_SIGNATURE = "^{0}->{0}$".format(_ARGS)


def _parse_gufunc_signature(signature):
    """numpy's parser: ([input core dims], [output core dims]) as lists of tuples of names."""
    signature = re.sub(r"\s+", "", signature)
    if not re.match(_SIGNATURE, signature):
        raise ValueError("not a valid gufunc signature: {}".format(signature))
    return tuple([tuple(re.findall(_DIM, arg)) for arg in re.findall(_ARG, arg_list)]
                 for arg_list in signature.split("->"))


def attr_text(pairs):
    """Wire attributes ((name, value) pairs) as core's OpAttrs::Text(): "ndim=i2;x=f<hex>;"."""
    out = []
    for name, value in pairs:
        if isinstance(value, bool):
            value = int(value)
        if isinstance(value, int):
            out.append("%s=i%d;" % (name, value))
        elif isinstance(value, float):
            out.append("%s=f%s;" % (name, struct.pack("<d", value).hex()))
        elif isinstance(value, str):
            out.append("%s=s%d:%s;" % (name, len(value.encode()), value))
        else:
            out.append("%s=l[%s];" % (name, ",".join(str(int(v)) for v in value)))
    return "".join(out)


def parse_attr_text(text):
    """attr_text read back, as a dict of wire attributes."""
    attrs, pos = {}, 0
    raw = text.encode()
    while pos < len(raw):
        eq = raw.index(b"=", pos)
        name, tag = raw[pos:eq].decode(), raw[eq + 1:eq + 2]
        pos = eq + 2
        if tag == b"s":
            colon = raw.index(b":", pos)
            n = int(raw[pos:colon])
            attrs[name] = raw[colon + 1:colon + 1 + n].decode()
            pos = colon + 2 + n
            continue
        semi = raw.index(b";", pos)
        value = raw[pos:semi].decode()
        pos = semi + 1
        if tag == b"i":
            attrs[name] = int(value)
        elif tag == b"f":
            attrs[name] = struct.unpack("<d", bytes.fromhex(value))[0]
        else:
            attrs[name] = [int(v) for v in value[1:-1].split(",") if v]
    return attrs


# The gufunc signatures of the ops PyTensor batches (its ops' gufunc_signature), by class name; a
# function of the op for those whose signature depends on their props.
_SIGNATURES = {
    "MatrixInverse": "(m,m)->(m,m)",
    "Det": "(m,m)->()",
    "SLogDet": "(m,m)->(),()",
    "Eig": "(m,m)->(m),(m,m)",
    "Eigh": "(m,m)->(m),(m,m)",
    "MatrixPinv": "(m,n)->(n,m)",
    "Dot": "(m,n),(n,k)->(m,k)",
    "Cholesky": "(m,m)->(m,m)",
    "Expm": "(m,m)->(m,m)",
    "SolveContinuousLyapunov": "(m,m),(m,m)->(m,m)",
    "BilinearSolveDiscreteLyapunov": "(m,m),(m,m)->(m,m)",
    "LUFactor": "(m,m)->(m,m),(m)",
    # Solves: b is a stack of vectors when it has fewer dims than a, else of matrices.
    "Solve": lambda op, inputs: _solve_signature(inputs),
    "SolveTriangular": lambda op, inputs: _solve_signature(inputs),
    "CholeskySolve": lambda op, inputs: _solve_signature(inputs),
    "SVD": lambda op, inputs: ("(m,n)->(m,m),(k),(n,n)" if op.full_matrices else
                       "(m,n)->(m,k),(k),(k,n)") if op.compute_uv else "(m,n)->(k)",
    "QRFull": lambda op, inputs: {"reduced": "(m,n)->(m,k),(k,n)", "complete": "(m,n)->(m,m),(m,n)",
                          "r": "(m,n)->(k,n)", "raw": "(m,n)->(n,m),(k)"}.get(op.mode),
}


def _solve_signature(inputs):
    """(a, b) -> x: b a stack of vectors when it has fewer dims than a (or is a vector)."""
    if inputs is None or len(inputs) != 2:
        return None
    a, b = inputs
    return "(m,m),(m)->(m)" if b.ndim == 1 or b.ndim < a.ndim else "(m,m),(m,n)->(m,n)"


def gufunc_signature(op, inputs=None):
    """The op's gufunc signature: its own `gufunc_signature`, else PyTensor's for its class
    (for a solve, from the ranks of `inputs`), else None."""
    own = getattr(op, "gufunc_signature", None)
    if own is not None:
        return own
    sig = _SIGNATURES.get(getattr(op, "kind", None))
    return sig(op, inputs) if callable(sig) else sig


@ops.view
class Blockwise(ops.Blockwise):
    """Blockwise(core_op, signature=None): core_op over the batch dims of its inputs; the
    signature defaults to the op's (gufunc_signature). Printed as PyTensor:
    Blockwise{Det, (m,m)->()}."""

    def __init__(self, core_op=None, signature=None, name=None, core=None, core_attrs=None):
        if core_op is not None:
            if isinstance(core_op, Blockwise):
                raise TypeError("Blockwise: the core op %s is a Blockwise; give its own core op"
                                % core_op)
            signature = signature or gufunc_signature(core_op)
            if signature is None:
                raise ValueError("Blockwise: %s has no gufunc signature; give one" % core_op)
            core, core_attrs = core_op.kind, attr_text(core_op.wire_attrs())
            self._inner = core_op
        super().__init__(core=core, core_attrs=core_attrs or "", signature=signature)
        self.name = name

    @property
    def inner_op(self):
        """The op applied to each batch item (PyTensor's Blockwise.core_op)."""
        inner = self.__dict__.get("_inner")
        if inner is None:
            inner = self._inner = ops.from_attrs(self.core, parse_attr_text(self.core_attrs))
        return inner

    @property
    def inputs_sig(self):
        return _parse_gufunc_signature(self.signature)[0]

    @property
    def outputs_sig(self):
        return _parse_gufunc_signature(self.signature)[1]


def batched_view(generated, module):
    """Registers a view of core's op class `generated` whose nodes on inputs with batch dims
    (more dims than its gufunc signature names) are Blockwise nodes of it, as PyTensor's
    Blockwise-wrapped linalg ops; on core-rank inputs it stays itself (Aesara's op and name).
    Equal to the generated class's ops of the same props. `module` is where the view lives (its
    pickles name it there). Returns the view class."""

    def make_node(self, *inputs):
        from kiln.tensor.basic import as_tensor_variable
        inputs = [as_tensor_variable(i) for i in inputs]
        sig = gufunc_signature(self, inputs)
        if sig is not None:
            core = _parse_gufunc_signature(sig)[0]
            if len(core) == len(inputs) and any(i.ndim > len(c) for i, c in zip(inputs, core)):
                return Blockwise(self, sig).make_node(*inputs)
        return generated.make_node(self, *inputs)

    def __eq__(self, other):
        return isinstance(other, generated) and self._props() == other._props()

    def __hash__(self):
        return hash((generated.kind, self._props()))

    cls = type(generated.kind, (generated,), {
        "__module__": module, "__qualname__": generated.kind,
        "__doc__": generated.__doc__ + " Batched (Blockwise) over leading dims.",
        "make_node": make_node, "__eq__": __eq__, "__hash__": __hash__})
    return ops.view(cls)


def _pad(x, lead, extra):
    """x with `extra` broadcastable dims inserted after its first `lead` dims."""
    if extra == 0:
        return x
    return x.dimshuffle(list(range(lead)) + ["x"] * extra + list(range(lead, x.ndim)))


def _default_signature(node):
    """A signature of distinct dim names for the ranks of node's inputs and outputs."""
    count = [0]

    def arg(v):
        names = ["d%d" % (count[0] + k) for k in range(v.type.ndim)]
        count[0] += v.type.ndim
        return "(%s)" % ",".join(names)

    return "%s->%s" % (",".join(arg(i) for i in node.inputs),
                       ",".join(arg(o) for o in node.outputs))


def _leads(node, batched_inputs):
    from kiln.graph import TensorType
    for i, v in enumerate(node.inputs):
        if not isinstance(v.type, TensorType):
            raise TypeError("vectorize_graph: %s has input %d of type %s, which cannot be batched"
                            % (node.op, i, v.type))
    return [b.type.ndim - v.type.ndim for b, v in zip(batched_inputs, node.inputs)]


def _vectorize_dimshuffle(op, node, x):
    """A DimShuffle keeps the new batch dims first."""
    n = _leads(node, [x])[0]
    return x.dimshuffle(list(range(n)) + ["x" if d == "x" else d + n for d in op.new_order]).owner


def _vectorize_elemwise(op, node, *batched):
    """An Elemwise broadcasts the batch dims (each input's old dims padded to the node's rank)."""
    lead = _leads(node, batched)
    frame = max(v.type.ndim for v in node.inputs)
    return op.make_node(*[_pad(b, n, frame - v.type.ndim)
                          for b, n, v in zip(batched, lead, node.inputs)])


def _vectorize_blockwise(op, node, *batched):
    """A Blockwise gains the batch dims; any other op becomes a Blockwise of itself."""
    lead = _leads(node, batched)
    bw = op if isinstance(op, Blockwise) else Blockwise(op, signature=_default_signature(node))
    core = [len(sig) for sig in bw.inputs_sig]
    old_batch = max((v.type.ndim - c for v, c in zip(node.inputs, core)), default=0)
    return bw.make_node(*[_pad(b, n, old_batch - (v.type.ndim - c))
                          for b, n, v, c in zip(batched, lead, node.inputs, core)])


def _register_vectorizers():
    from kiln.graph.replace import register_vectorizer
    from kiln.tensor.elemwise import DimShuffle, Elemwise
    register_vectorizer(DimShuffle, _vectorize_dimshuffle)
    register_vectorizer(Elemwise, _vectorize_elemwise)
    register_vectorizer(None, _vectorize_blockwise)


_register_vectorizers()

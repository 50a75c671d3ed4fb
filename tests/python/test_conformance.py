"""The conformance vectors shared with the C++ side (tests/golden/conformance.txt): each
expression built with kiln.tensor must give the op kind, attributes, printed name and output
types the C++ graph model gives, and the same wire graph (so the same function id)."""
import os

import pytest

import kiln.tensor as kt
from kiln import wire
from kiln.graph import graph_inputs
from kiln.tensor.variable import TensorConstant

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def _cases():
    with open(os.path.join(ROOT, "tests", "golden", "conformance.txt")) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            yield [part.strip() for part in line.rstrip("\n").split(" | ")]


def _attr_text(v):
    if isinstance(v, str):
        return "'%s'" % v
    if isinstance(v, (list, tuple)):
        return "[%s]" % ",".join(str(int(e)) for e in v)
    return str(v)


def _ref_text(r):
    which = r.WhichOneof("ref")
    if which == "node_output":
        return "n%d.%d" % (r.node_output.node, r.node_output.output)
    return ("c%d" if which == "constant" else "i%d") % getattr(r, which)


def _wire_text(g):
    from kiln import _pb
    parts = []
    for c, const in enumerate(g.constants):
        t = const.value
        parts.append("c%d=%s[%s]:%s" % (c, _pb.types_pb2.DType.Name(t.dtype),
                                        ",".join(map(str, t.shape)), t.data.hex()))
    for n, node in enumerate(g.nodes):
        attrs = ";".join("%s=%s" % (a.name, _attr_text(wire._attr_value(a)))
                         for a in node.op.attrs)
        parts.append("n%d=%s{%s}(%s)" % (n, node.op.kind, attrs,
                                         ",".join(_ref_text(r) for r in node.inputs)))
    parts.append("out=" + ",".join(_ref_text(r) for r in g.outputs))
    return " ".join(parts)


def build_case(case):
    """The inputs (x, y, z of the listed constructors) and the output of a vector's expression."""
    python, types = case[0], case[1]
    names = ["x", "y", "z"]
    ins = [getattr(kt, t)(names[i]) for i, t in enumerate(types.split(","))]
    return ins, eval(python, {"kt": kt}, dict(zip(names, ins)))


@pytest.mark.parametrize("case", list(_cases()), ids=lambda c: "%s[%s]" % (c[0], c[1]))
def test_conformance(case):
    _, _, kind, attrs, outputs, name, wire_graph = case
    ins, y = build_case(case)
    node = y.owner
    assert node.op.kind == kind
    assert ";".join("%s=%s" % (k, _attr_text(v)) for k, v in node.op.wire_attrs()) == attrs
    assert ";".join(str(o.type) for o in node.outputs) == outputs
    assert str(node.op) == name
    leaves = [v for v in graph_inputs([y]) if not isinstance(v, TensorConstant)]
    assert leaves == ins[:len(leaves)]
    assert _wire_text(wire.graph_to_proto(ins, [y])) == wire_graph

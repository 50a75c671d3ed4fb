"""The Python client against core's own graph model (kiln._core, the pybind11 module). Python
makes every node through core (apply_typed_by_core), so its types and errors are core's; these
tests hold the rest to core: every conformance vector read back by core gives the same types,
printed names and wire bytes, and every elementwise scalar op x dtype x broadcast built with
kiln.tensor gives the graph core's own builder gives (the same padding DimShuffles, the same op
names), or core's error. Generated from core's scalar op table, so a new scalar op or dtype is
covered the day it exists."""
import itertools

import pytest

import kiln.tensor as kt
from kiln import _pb, wire
from kiln.tensor.elemwise import SCALAR_OPS, Elemwise
from test_conformance import _cases, build_case

import kiln._core as core  # built beside the stubs (CMake target kiln_core_python)

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]


def _core_graph(inputs, outputs):
    """Python's wire graph read by core: every node made and type-checked by core, each output
    type Python wrote compared with the one core infers (a difference is a ValueError)."""
    g = wire.graph_to_proto(inputs, outputs)
    return core.graph_from_proto(g.SerializeToString())


@pytest.mark.parametrize("case", list(_cases()), ids=lambda c: "%s[%s]" % (c[0], c[1]))
def test_conformance_vectors_read_by_core(case):
    ins, y = build_case(case)
    core_ins, core_outs = _core_graph(ins, [y])
    out = core_outs[0]
    assert str(out.type) == str(y.type)
    assert str(out.owner.op) == str(y.owner.op)
    # The same graph written back by core is the same wire graph, so the same function id.
    assert core.graph_to_proto(core_ins, core_outs) == \
        wire.graph_to_proto(ins, [y]).SerializeToString()


def _python_node(name, dtypes, shapes):
    ins = [kt.tensor(d, s, name="i%d" % k) for k, (d, s) in enumerate(zip(dtypes, shapes))]
    try:
        return ins, Elemwise(name, "float32" if name == "cast" else None).make_node(*ins)
    except (TypeError, ValueError) as e:
        return ins, e


def _core_node(name, dtypes, shapes):
    attrs = {"scalar_op": name}
    if name == "cast":
        attrs["cast_to"] = "float32"
    ins = [core.tensor(d, list(s), "i%d" % k) for k, (d, s) in enumerate(zip(dtypes, shapes))]
    try:
        return ins, core.make_node("Elemwise", attrs, ins)
    except ValueError as e:
        return ins, e


def _arity(name):
    return 2 if SCALAR_OPS[name] < 0 else SCALAR_OPS[name]


@pytest.mark.parametrize("name", sorted(SCALAR_OPS))
def test_every_scalar_op_and_dtype_agrees_with_core(name):
    """Each dtype alone and each pair of dtypes (first and second input; others float64), on
    vectors, a matrix with rows and a matrix with vectors (padded by a DimShuffle): the same
    output type, printed name and wire graph, or the same error, on both sides."""
    n = _arity(name)
    combos = [[d] * n for d in DTYPES]
    if n >= 2:
        combos += [[a, b] + ["float64"] * (n - 2) for a, b in itertools.product(DTYPES, DTYPES)
                   if a != b]
    disagreements = []
    for dtypes in combos:
        for shapes in ([(None,)] * n, [(None, None)] + [(1, None)] * (n - 1),
                       [(None, None)] + [(None,)] * (n - 1)):
            py_ins, py = _python_node(name, dtypes, shapes)
            c_ins, c = _core_node(name, dtypes, shapes)
            py_ok, c_ok = not isinstance(py, Exception), not isinstance(c, Exception)
            if py_ok != c_ok or (not py_ok and str(py) != str(c)):
                disagreements.append("%s%s: python %s, core %s" % (name, dtypes, py, c))
            elif py_ok and (str(py.outputs[0].type) != str(c.outputs[0].type) or
                            str(py.op) != str(c.op) or
                            wire.graph_to_proto(py_ins, py.outputs).SerializeToString() !=
                            core.graph_to_proto(c_ins, c.outputs)):
                disagreements.append("%s%s: python %s %s, core %s %s" % (
                    name, dtypes, py.op, py.outputs[0].type, c.op, c.outputs[0].type))
    assert not disagreements, "\n".join(disagreements[:20])


def test_core_module_exposes_the_graph_model():
    x = core.tensor("float64", [None, None], "x")
    v = core.tensor("float32", [None], "v")
    node = core.make_node("Elemwise", {"scalar_op": "mul"}, [x, v])
    out = node.outputs[0]
    assert str(out.type) == "TensorType(float64, (?, ?))"
    assert out.owner.op.type_name == "Elemwise" and out.owner.op.attrs == {"scalar_op": "mul"}
    assert str(out.owner.op) == "Elemwise{mul,no_inplace}"
    assert out.index == 0 and out.name == ""
    out.name = "y"
    assert core.dprint([out]).splitlines()[0] == "Elemwise{mul,no_inplace} [id A] 'y'"
    assert "Repeat" in core.registered_ops()
    with pytest.raises(core.GraphError, match="expects at least 2 inputs, got 1"):
        core.make_node("Elemwise", {"scalar_op": "mul"}, [x])
    with pytest.raises(ValueError, match="unknown dtype 'float128'"):
        core.tensor("float128", [None])
    with pytest.raises(core.GraphError, match="has more than 70368744177664 elements"):
        core.tensor("float64", [2 ** 62, 4])  # held to a tensor's bounds, as types from the wire
    with pytest.raises(core.GraphError, match="negative dimension"):
        core.tensor("float64", [-1])
    with pytest.raises(ValueError, match="not a kiln.v1.Graph"):
        core.graph_from_proto(b"\xff\xff")
    g = _pb.graph_pb2.Graph.FromString(core.graph_to_proto([x, v], [out]))
    assert [n.op.kind for n in g.nodes] == ["DimShuffle", "Elemwise"]


def test_an_op_without_a_hand_written_class_is_usable_through_core(server):
    """Repeat's class is generated from core's field list: its op is made, typed, named and
    printed by core, and compiles and runs on the server."""
    import kiln
    from kiln.ops import Repeat
    x, r = kt.dvector("x"), kt.lvector("r")
    y = Repeat(axis=0)(x, r)
    assert str(y.owner.op) == "Repeat{axis=0}" and str(y.type) == "TensorType(float64, (?,))"
    assert kiln.dprint(y, file="str").splitlines()[0] == "Repeat{axis=0} [id A]"
    assert kiln.function([x, r], y)([1.0, 2.0], [2, 1]).tolist() == [1.0, 1.0, 2.0]
    with pytest.raises(TypeError, match="Repeat has no prop 'axes'"):
        Repeat(axes=0)
    with pytest.raises(core.GraphError, match="Repeat: attribute 'axis'"):
        Repeat(axis="0")

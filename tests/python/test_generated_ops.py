"""Every op core registers, built from Python through the class kiln.ops generates from core's
field list, then round-tripped through pickling and the wire. A sample per op is required: an op
added to core without one fails test_every_registered_op_has_a_sample."""
import pickle

import numpy as np
import pytest

import kiln
import kiln.tensor as kt
from kiln import _core, ops, wire
from kiln.compile.builders import OpFromGraph


def _scan_node():
    k = kt.iscalar("k")
    a = kt.dvector("a")
    out, _ = kiln.scan(lambda prior, a: prior * a, outputs_info=kt.ones_like(a),
                       non_sequences=a, n_steps=k)
    return next(n for n in kiln.graph.io_toposort([out]) if n.op.kind == "Scan")


def _from_graph_node():
    x, y = kt.dscalars("x", "y")
    return OpFromGraph([x, y], [x + y * 2])(kt.dscalar("a"), kt.dscalar("b")).owner


def _random_node():
    return kt.random.normal(0.0, 1.0, size=(3,)).owner


def _indexing_node(build):
    return build(kt.dmatrix("x")).owner


# Each op's attributes (wire values) and inputs; a callable gives a node built by kiln.tensor
# whose op's attributes and inputs are used (ops whose attributes encode a graph or an index).
SAMPLES = {
    "ARange": ({"dtype": "int64"}, lambda: [kt.lscalar(), kt.lscalar(), kt.lscalar()]),
    "AdvancedIncSubtensor": ({"idx_list": [0, 1, 16], "set_instead_of_inc": 1},
                             lambda: [kt.dmatrix(), kt.dmatrix(), kt.lvector()]),
    "AdvancedIncSubtensor1": ({"set": 1}, lambda: [kt.dmatrix(), kt.dmatrix(), kt.lvector()]),
    "AdvancedSubtensor": ({"idx_list": [1, 16, 0]}, lambda: [kt.dmatrix(), kt.lvector()]),
    "AdvancedSubtensor1": ({}, lambda: [kt.dmatrix(), kt.lvector()]),
    "Alloc": ({}, lambda: [kt.dscalar(), kt.lscalar(), kt.lscalar()]),
    "AbstractConv2d": ({"border_mode": [1, 2, 0, 0], "subsample": [2, 1]},
                       lambda: [kt.dtensor4(), kt.dtensor4()]),
    "AbstractConv2d_gradInputs": ({"border_mode": "half", "num_groups": 2},
                                  lambda: [kt.dtensor4(), kt.dtensor4(), kt.lvector()]),
    "AbstractConv2d_gradWeights": ({"filter_flip": 0, "imshp": [2, -1, -1, -1]},
                                   lambda: [kt.ftensor4(), kt.ftensor4(), kt.ivector()]),
    "AbstractConv3d": ({"border_mode": "full", "filter_dilation": [1, 2, 1]},
                       lambda: [kt.dtensor5(), kt.dtensor5()]),
    "AbstractConv3d_gradInputs": ({"subsample": [1, 1, 2]},
                                  lambda: [kt.dtensor5(), kt.dtensor5(), kt.lvector()]),
    "AbstractConv3d_gradWeights": ({"border_mode": [1, 1, 0, 0, 2, 2]},
                                   lambda: [kt.dtensor5(), kt.dtensor5(), kt.lvector()]),
    "ArgSortOp": ({"axis": 0}, lambda: [kt.dvector()]),
    "Argmax": ({"axis": [1]}, lambda: [kt.dmatrix()]),
    "CAReduce": ({"reduce": "sum", "axis": [1]}, lambda: [kt.dmatrix()]),
    "CumOp": ({"mode": "mul", "axis": 0}, lambda: [kt.dvector()]),
    "DimShuffle": ({"input_broadcastable": [0, 0], "new_order": [1, -1, 0]},
                   lambda: [kt.dmatrix()]),
    "Dot": ({}, lambda: [kt.dmatrix(), kt.dmatrix()]),
    "Dot22": ({}, lambda: [kt.dmatrix(), kt.dmatrix()]),
    "Elemwise": ({"scalar_op": "add"}, lambda: [kt.dmatrix(), kt.dmatrix()]),
    "Eye": ({"dtype": "float32"}, lambda: [kt.lscalar(), kt.lscalar(), kt.lscalar()]),
    "FillDiagonal": ({}, lambda: [kt.dmatrix(), kt.dscalar()]),
    "BNComposite": ({"dtype": "float64"}, lambda: [kt.dmatrix() for _ in range(5)]),
    "DiagonalSubtensor": ({}, lambda: [kt.dmatrix(), kt.lscalar(), kt.lscalar()]),
    "IncDiagonalSubtensor": ({}, lambda: [kt.dmatrix(), kt.lscalar(), kt.lscalar(), kt.dmatrix()]),
    "Gemm": ({}, lambda: [kt.dmatrix(), kt.dscalar(), kt.dmatrix(), kt.dmatrix(), kt.dscalar()]),
    "Gemv": ({}, lambda: [kt.dvector(), kt.dscalar(), kt.dmatrix(), kt.dvector(), kt.dscalar()]),
    "GradientOp": ({"mode": 5, "a": 2.0}, lambda: [kt.dvector()]),
    "IfElse": ({"n_outs": 1}, lambda: [kt.bscalar(), kt.dvector(), kt.dvector()]),
    "IRFFTOp": ({}, lambda: [kt.dtensor3(), kt.lvector()]),
    "IncSubtensor": lambda: _indexing_node(lambda x: kt.set_subtensor(x[1:], 0.0)),
    "Join": ({}, lambda: [kt.lscalar(), kt.dvector(), kt.dvector()]),
    "LogSoftmax": ({"axis": 1}, lambda: [kt.dmatrix()]),
    "MakeVector": ({"dtype": "int32"}, lambda: [kt.iscalar(), kt.iscalar()]),
    "MatMul": ({}, lambda: [kt.dtensor3(), kt.dmatrix()]),
    "MaxAndArgmax": ({"axis": [0]}, lambda: [kt.dmatrix()]),
    "Nonzero": ({}, lambda: [kt.dvector()]),
    "NonMaxSuppression": ({"center_point_box": 1},
                          lambda: [kt.ftensor3(), kt.ftensor3(), kt.lscalar(), kt.fscalar(),
                                   kt.fscalar()]),
    "AllocDiag": ({"offset": 1, "axis1": 1, "axis2": 0}, lambda: [kt.dvector()]),
    "BroadcastTo": ({}, lambda: [kt.dvector(), kt.lscalar(), kt.lscalar()]),
    "Choose": ({"mode": "wrap"}, lambda: [kt.lvector(), kt.dmatrix()]),
    "ExtractDiag": ({"offset": -1, "view": 1}, lambda: [kt.dtensor3()]),
    "FillDiagonalOffset": ({}, lambda: [kt.dmatrix(), kt.dscalar(), kt.lscalar()]),
    "RavelMultiIndex": ({"mode": "clip", "order": "F"},
                        lambda: [kt.lvector(), kt.lvector(), kt.as_tensor(np.array([2, 3]))]),
    "SearchsortedOp": ({"side": "right"}, lambda: [kt.dvector(), kt.dmatrix(), kt.lvector()]),
    "TopKOp": ({"axis": 0, "idx_dtype": "int32", "return_values": 0},
               lambda: [kt.dmatrix(), kt.lscalar()]),
    "Tri": ({"dtype": "int8"}, lambda: [kt.lscalar(), kt.lscalar(), kt.lscalar()]),
    "Unique": ({"return_counts": 1, "axis": -1}, lambda: [kt.dmatrix()]),
    "UnravelIndex": ({"order": "F"}, lambda: [kt.lvector(), kt.as_tensor(np.array([2, 3]))]),
    "OpFromGraph": _from_graph_node,
    "Print": ({"message": "here"}, lambda: [kt.dvector()]),
    "RFFTOp": ({}, lambda: [kt.dmatrix(), kt.lvector()]),
    "RandomVariable": _random_node,
    "Repeat": ({"axis": 0}, lambda: [kt.dvector(), kt.lvector()]),
    "MatrixInverse": ({}, lambda: [kt.dmatrix()]),
    "MatrixPinv": ({"hermitian": 1}, lambda: [kt.fmatrix()]),
    "Det": ({}, lambda: [kt.dmatrix()]),
    "SLogDet": ({}, lambda: [kt.dmatrix()]),
    "Eig": ({}, lambda: [kt.dmatrix()]),
    "Eigh": ({"UPLO": "U"}, lambda: [kt.dmatrix()]),
    "EighGrad": ({"UPLO": "L"}, lambda: [kt.dmatrix(), kt.dvector(), kt.dmatrix(), kt.dvector(),
                                         kt.dmatrix()]),
    "QRFull": ({"mode": "complete"}, lambda: [kt.dmatrix()]),
    "SVD": ({"full_matrices": 0, "compute_uv": 1}, lambda: [kt.dmatrix()]),
    "Lstsq": ({}, lambda: [kt.dmatrix(), kt.dvector(), kt.dscalar()]),
    "TensorInv": ({"ind": 1}, lambda: [kt.dtensor3()]),
    "TensorSolve": ({"axes": [0]}, lambda: [kt.dtensor3(), kt.dvector()]),
    "Cholesky": ({"lower": 0, "on_error": "nan"}, lambda: [kt.dmatrix()]),
    "CholeskySolve": ({"lower": 0}, lambda: [kt.dmatrix(), kt.dvector()]),
    "Solve": ({"assume_a": "pos", "lower": 1}, lambda: [kt.dmatrix(), kt.dmatrix()]),
    "SolveTriangular": ({"trans": 2, "unit_diagonal": 1}, lambda: [kt.fmatrix(), kt.fvector()]),
    "Eigvalsh": ({"lower": 0}, lambda: [kt.dmatrix(), kt.dmatrix()]),
    "EigvalshGrad": ({}, lambda: [kt.dmatrix(), kt.dmatrix(), kt.dvector()]),
    "Expm": ({}, lambda: [kt.dmatrix()]),
    "ExpmGrad": ({}, lambda: [kt.dmatrix(), kt.dmatrix()]),
    "SolveContinuousLyapunov": ({}, lambda: [kt.dmatrix(), kt.dmatrix()]),
    "BilinearSolveDiscreteLyapunov": ({}, lambda: [kt.zmatrix(), kt.zmatrix()]),
    "LU": ({"permute_l": 1}, lambda: [kt.dmatrix()]),
    "LUFactor": ({"check_finite": 0}, lambda: [kt.fmatrix()]),
    "PivotToPermutations": ({"inverse": 0}, lambda: [kt.ivector()]),
    "BlockDiagonal": ({"n_inputs": 2}, lambda: [kt.dmatrix(), kt.fmatrix()]),
    "Assert": ({"msg": "no"}, lambda: [kt.dvector(), kt.bscalar()]),
    "Bartlett": ({}, lambda: [kt.lscalar()]),
    "Blockwise": ({"core": "Det", "core_attrs": "", "signature": "(m,m)->()"},
                  lambda: [kt.dtensor3()]),
    "MaxPoolRop": ({"ignore_border": 1, "mode": "max", "ndim": 2},
                   lambda: [kt.dmatrix(), kt.dmatrix(), kt.as_tensor(np.array([2, 2]))]),
    "CpuContiguous": ({}, lambda: [kt.dmatrix()]),
    "Reshape": ({"ndim": 2}, lambda: [kt.dvector(), kt.lvector()]),
    "Scan": _scan_node,
    "Shape": ({}, lambda: [kt.dmatrix()]),
    "Shape_i": ({"i": 1}, lambda: [kt.dmatrix()]),
    "Softmax": ({"axis": 0}, lambda: [kt.dmatrix()]),
    "SoftmaxWithBias": ({}, lambda: [kt.dmatrix(), kt.dvector()]),
    "CrossentropySoftmaxArgmax1HotWithBias": ({}, lambda: [kt.dmatrix(), kt.dvector(),
                                                            kt.lvector()]),
    "CrossentropySoftmax1HotWithBiasDx": ({}, lambda: [kt.dvector(), kt.dmatrix(),
                                                        kt.lvector()]),
    "CrossentropyCategorical1Hot": ({}, lambda: [kt.dmatrix(), kt.lvector()]),
    "CrossentropyCategorical1HotGrad": ({}, lambda: [kt.dvector(), kt.dmatrix(),
                                                      kt.lvector()]),
    "Images2Neibs": ({"mode": "half"}, lambda: [kt.dtensor4(), kt.lvector(), kt.lvector()]),
    "AbstractBatchNormTrain": ({"axes": [0]}, lambda: [kt.dmatrix(), kt.drow(), kt.drow(),
                                                       kt.dscalar(), kt.dscalar()]),
    "AbstractBatchNormInference": ({"axes": [0]}, lambda: [kt.dmatrix()] + [kt.drow()] * 4
                                   + [kt.dscalar()]),
    "AbstractBatchNormTrainGrad": ({"axes": [0]}, lambda: [kt.dmatrix(), kt.dmatrix()]
                                   + [kt.drow()] * 3 + [kt.dscalar()]),
    "Pool": ({"ignore_border": 1, "mode": "sum", "ndim": 2},
             lambda: [kt.dtensor4(), kt.lvector(), kt.lvector(), kt.lvector()]),
    "MaxPoolGrad": ({"ignore_border": 1, "mode": "max", "ndim": 2},
                    lambda: [kt.dtensor4(), kt.dtensor4(), kt.dtensor4(), kt.lvector(),
                             kt.lvector(), kt.lvector()]),
    "AveragePoolGrad": ({"ignore_border": 0, "mode": "average_exc_pad", "ndim": 3},
                        lambda: [kt.dtensor4(), kt.dtensor4(), kt.lvector(), kt.lvector(),
                                 kt.lvector()]),
    "DownsampleFactorMaxGradGrad": ({"ignore_border": 1, "mode": "max", "ndim": 2},
                                    lambda: [kt.dtensor4(), kt.dtensor4(), kt.dtensor4(),
                                             kt.lvector(), kt.lvector(), kt.lvector()]),
    "SortOp": ({"axis": 0}, lambda: [kt.dvector()]),
    "SpecifyShape": ({}, lambda: [kt.dvector(), kt.lscalar()]),
    "Split": ({"n_splits": 2}, lambda: [kt.dvector(), kt.constant(0, dtype="int64"),
                                        kt.lvector()]),
    "Subtensor": lambda: _indexing_node(lambda x: x[1:, 0]),
    "SparseDot": ({}, lambda: [kt.dvector(), kt.lvector(), kt.lvector(), kt.lscalar(), kt.dmatrix()]),
    "SampledDot": ({}, lambda: [kt.lvector(), kt.lvector(), kt.dmatrix(), kt.dmatrix()]),
    "SparseToDense": ({}, lambda: [kt.dvector(), kt.lvector(), kt.lvector(), kt.lvector()]),
    "SparseGather": ({}, lambda: [kt.dmatrix(), kt.lvector(), kt.lvector()]),
    "ExpandIndptr": ({}, lambda: [kt.lvector()]),
    "CompressIndptr": ({}, lambda: [kt.lvector(), kt.lscalar()]),
    "SparseUnion": ({}, lambda: [kt.lvector(), kt.lvector(), kt.lvector(), kt.lvector()]),
    "SparseIntersection": ({}, lambda: [kt.lvector(), kt.lvector(), kt.lvector(), kt.lvector()]),
    "SparseProductPairs": ({}, lambda: [kt.lvector(), kt.lvector(), kt.lvector(), kt.lvector(),
                                       kt.lscalar()]),
}


def _attrs_and_inputs(kind):
    sample = SAMPLES[kind]
    if callable(sample):
        node = sample()
        assert node.op.kind == kind
        return dict(node.op.wire_attrs()), list(node.inputs)
    attrs, inputs = sample
    return attrs, inputs()


def test_every_registered_op_has_a_sample():
    assert sorted(SAMPLES) == _core.registered_ops()


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_each_op_is_built_through_its_generated_class(kind):
    attrs, inputs = _attrs_and_inputs(kind)
    cls = ops.GENERATED[kind]
    assert cls.__name__ == kind and cls.__module__ == "kiln.ops"
    assert cls.__props__ == tuple(name for name, _ in _core.op_fields()[kind])
    op = cls(**attrs)
    assert op == cls(**attrs) and hash(op) == hash(cls(**attrs))
    written = op.core_op().attrs  # core writes what Python sends (and the defaults it left)
    assert {k: written[k] for k in dict(op.wire_attrs())} == dict(op.wire_attrs())
    outs = op.make_node(*inputs).outputs
    twin = _core.make_node(kind, attrs, [kiln.graph.core_variable(i) for i in inputs])
    assert [str(o.type) for o in outs] == [str(t.type) for t in twin.outputs]
    assert str(op) == str(_core.make_op(kind, attrs))

    copy = pickle.loads(pickle.dumps(op))
    assert type(copy) is cls and copy == op and str(copy) == str(op)

    g = wire.graph_to_proto(inputs, outs)
    again = wire.graph_from_proto(g, inputs)
    node = again[0].owner
    back = dict(node.op.wire_attrs())
    assert node.op.kind == kind and {k: back[k] for k in dict(op.wire_attrs())} == \
        dict(op.wire_attrs())
    assert [str(o.type) for o in again] == [str(o.type) for o in outs]


def test_props_are_checked_by_name_and_by_core():
    assert ops.Repeat(0) == ops.Repeat(axis=0) != ops.Repeat()
    assert ops.Repeat().axis is None and ops.Shape_i().i == 0  # core's defaults
    with pytest.raises(TypeError, match="Repeat has no prop 'axes'"):
        ops.Repeat(axes=0)
    with pytest.raises(TypeError, match="Shape_i takes at most 1 props"):
        ops.Shape_i(0, 1)
    with pytest.raises(TypeError, match="prop 'i' given twice"):
        ops.Shape_i(0, i=1)
    with pytest.raises(_core.GraphError, match="Shape_i: attribute 'i'"):
        ops.Shape_i(i="first")
    with pytest.raises(KeyError, match="no op is registered as 'Conv2d'"):
        ops.op_class("Conv2d")


def test_views_come_back_from_core_as_their_hand_written_class():
    x = kt.dmatrix("x")
    y = kt.exp(x).T
    g = kiln.grad(y.sum(), x)
    kinds = {type(n.op) for n in kiln.graph.io_toposort([g])}
    assert kt.elemwise.DimShuffle in kinds and kt.elemwise.Elemwise in kinds
    dimshuffle = pickle.loads(pickle.dumps(y.owner.op))
    assert type(dimshuffle) is kt.elemwise.DimShuffle and dimshuffle == y.owner.op
    assert str(dimshuffle) == "InplaceDimShuffle{1,0}"


def test_a_pickled_random_op_still_draws(server):
    rv = pickle.loads(pickle.dumps(kt.random.normal))
    assert rv == kt.random.normal and rv.is_random_variable
    draw = rv(0.0, 1.0, size=(4,))
    assert kiln.function([], draw)().shape == (4,)
    assert np.isfinite(kiln.function([], draw)()).all()

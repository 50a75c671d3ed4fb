"""kiln.tensor.signal.pool against Aesara 2.9.4: every case of tests/golden/aesara_pool.txt
(written by tests/golden/gen_pool_cases.py under Aesara) compiled and run on the test server,
Aesara's signatures, warnings, errors, printed graphs and out_shape, and gradients (to the
second order) by finite differences."""
import os
import pickle
import warnings

import numpy as np
import pytest

import kiln
import kiln.tensor as at
from kiln.tensor.signal import pool
from kiln.tensor.signal.pool import (AveragePoolGrad, DownsampleFactorMaxGradGrad, MaxPoolGrad,
                                     Pool, PoolGrad, max_pool_2d_same_size, pool_2d, pool_3d)

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "golden", "aesara_pool.txt")


def _array(dtype, shape, values):
    shape = () if shape == "-" else tuple(int(d) for d in shape.split("x"))
    data = [float(v) for v in values.split(",")] if values else []
    return np.array(data, dtype="float64").astype(dtype).reshape(shape)


def _cases():
    with open(GOLDEN) as f:
        return [line.rstrip("\n").split("|") for line in f if not line.startswith("#")]


def _ints(text):
    return tuple(int(v) for v in text.split(","))


def test_every_golden_case_matches_aesara(server):
    cases = _cases()
    assert len(cases) > 200
    for c in cases:
        name, nd, ib, mode = c[0], int(c[1]), c[2] == "1", c[3]
        ws, st, pad = _ints(c[4]), _ints(c[5]), _ints(c[6])
        x = _array(c[7], c[8], c[9])
        want = _array(c[7], c[12], c[13])
        xs = at.tensor(c[7], shape=(None,) * x.ndim, name="x")
        y = Pool(ib, mode, nd)(xs, ws, st, pad)
        inputs, args = [xs], [x]
        if name == "Pool":
            out = y
        elif name == "GradOfGrad":
            g = kiln.grad((y ** 2).sum(), xs)
            out = kiln.grad((g ** 2).sum(), xs)
        else:
            a = _array(c[7], c[10], c[11])
            a_s = at.tensor(c[7], shape=(None,) * a.ndim, name="a")
            inputs.append(a_s)
            args.append(a)
            if name == "MaxPoolGrad":
                out = MaxPoolGrad(ib, ndim=nd)(xs, y, a_s, ws, st, pad)
            elif name == "AveragePoolGrad":
                out = AveragePoolGrad(ib, mode=mode, ndim=nd)(xs, a_s, ws, st, pad)
            else:
                out = DownsampleFactorMaxGradGrad(ib, ndim=nd)(xs, y, a_s, ws, st, pad)
        got = kiln.function(inputs, out)(*args)
        assert got.dtype == want.dtype and got.shape == want.shape, c[:9]
        rtol = 2e-6 if c[7] == "float32" else 1e-12
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, err_msg="|".join(c[:9]))


def test_printed_graph_is_aesaras():
    x = at.tensor4("x")
    y = pool_2d(x, (2, 2), ignore_border=True)
    assert kiln.printing.debugprint(y, file="str") == (
        "Pool{ignore_border=True, mode='max', ndim=2} [id A]\n"
        " |x [id B]\n"
        " |TensorConstant{(2,) of 2} [id C]\n"
        " |TensorConstant{(2,) of 2} [id D]\n"
        " |TensorConstant{(2,) of 0} [id E]\n")
    assert str(y.type) == "TensorType(float64, (?, ?, ?, ?))"
    assert str(pool_2d(at.tensor("int32", shape=(1, None, 3, 4)), (2, 2), True).type) == \
        "TensorType(int32, (1, ?, ?, ?))"
    g = kiln.grad((y ** 2).sum(), x)
    assert isinstance(g.owner.op, MaxPoolGrad) and isinstance(g.owner.op, PoolGrad)
    assert str(g.owner.op) == "MaxPoolGrad{ignore_border=True, mode='max', ndim=2}"
    gg = kiln.grad((g ** 2).sum(), x)
    kinds = {str(n.op) for n in kiln.graph.io_toposort([gg])}
    assert "DownsampleFactorMaxGradGrad{ignore_border=True, mode='max', ndim=2}" in kinds
    a = pool_3d(at.tensor4("t"), (2, 2, 1), ignore_border=True, mode="average_inc_pad",
                pad=(1, 1, 0))
    ga = kiln.grad((a ** 2).sum(), a.owner.inputs[0])
    assert str(ga.owner.op) == "AveragePoolGrad{ignore_border=True, mode='average_inc_pad', ndim=3}"
    same = max_pool_2d_same_size(x, (2, 2))
    assert str(same.owner.op) == "MaxPoolGrad{ignore_border=True, mode='max', ndim=2}"
    assert same.owner.inputs[1] is same.owner.inputs[2]


def test_ops_have_aesaras_constructors_props_and_pickle():
    assert Pool() == Pool(False, "max", 2) and Pool().ignore_border is False
    assert str(Pool(True, "sum", 3)) == "Pool{ignore_border=True, mode='sum', ndim=3}"
    assert Pool(mode="max_deterministic").mode == "max"
    assert Pool.__props__ == ("ignore_border", "mode", "ndim")
    assert MaxPoolGrad(True).mode == "max" and MaxPoolGrad(True, 3).ndim == 3
    assert AveragePoolGrad(False).mode == "average_inc_pad"
    assert str(DownsampleFactorMaxGradGrad(True)) == \
        "DownsampleFactorMaxGradGrad{ignore_border=True, mode='max', ndim=2}"
    for op in (Pool(True, "average_exc_pad", 3), MaxPoolGrad(True), AveragePoolGrad(True, "sum"),
               DownsampleFactorMaxGradGrad(False)):
        copy = pickle.loads(pickle.dumps(op))
        assert type(copy) is type(op) and copy == op
    with pytest.raises(ValueError, match="Pool mode parameter only support 'max', 'sum', "
                       "'average_inc_pad' and 'average_exc_pad'. Got median"):
        Pool(mode="median")
    assert str(pool.MaxPoolRop(True)) == "MaxPoolRop{ignore_border=True, mode='max', ndim=2}"
    assert pool.MaxPoolRop.__props__ == ("ignore_border", "mode", "ndim")


def test_signatures_warnings_and_errors_are_aesaras():
    x = at.tensor4("x")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        y = pool_2d(x, ds=(2, 2), st=(1, 1), padding=(0, 0))
        pool_3d(x, (2, 2, 2))
    messages = [str(i.message) for i in w if i.category is DeprecationWarning]
    assert messages == [
        "The 'ds' parameter is not going to exist anymore as it is going to be replaced by the "
        "parameter 'ws'.",
        "The 'st' parameter is not going to exist anymore as it is going to be replaced by the "
        "parameter 'stride'.",
        "The 'padding' parameter is not going to exist anymore as it is going to be replaced by "
        "the parameter 'pad'.",
        "pool_2d() will have the parameter ignore_border default value changed to True "
        "(currently False). To have consistent behavior with all Aesara version, explicitly add "
        "the parameter ignore_border=True.",
        "pool_3d() will have the parameter ignore_border default value changed to True "
        "(currently False). To have consistent behavior with all Aesara version, explicitly add "
        "the parameter ignore_border=True."]
    assert y.owner.op == Pool(False, "max", 2)
    with pytest.raises(ValueError, match="You can't provide a tuple value to both 'ws' and 'ds'"):
        pool_2d(x, (2, 2), ds=(2, 2))
    with pytest.raises(ValueError, match="You must provide a tuple value for the window size."):
        pool_2d(x)
    with pytest.raises(ValueError, match="both 'st and 'stride'"):
        pool_2d(x, (2, 2), stride=(1, 1), st=(1, 1))
    with pytest.raises(ValueError, match="both 'padding' and pad"):
        pool_2d(x, (2, 2), pad=(1, 1), padding=(1, 1))
    with pytest.raises(NotImplementedError, match="pool_2d requires a dimension >= 2"):
        pool_2d(at.vector(), (2, 2), ignore_border=True)
    with pytest.raises(NotImplementedError, match="pool_3d requires a dimension >= 3"):
        pool_3d(at.matrix(), (2, 2, 2), ignore_border=True)
    with pytest.raises(NotImplementedError, match="padding works only with ignore_border=True"):
        pool_2d(x, (2, 2), ignore_border=False, pad=(1, 1))
    with pytest.raises(NotImplementedError, match="padding must be smaller than strides"):
        pool_2d(x, (2, 2), ignore_border=True, pad=(2, 1))
    with pytest.raises(TypeError, match="Pool downsample parameters must be ints."):
        pool_2d(x, (2.0, 2), ignore_border=True)
    with pytest.raises(TypeError):
        Pool(ndim=3)(at.matrix(), (2, 2, 3))
    with pytest.raises(TypeError, match="ndim=2 needs 2 entries"):  # Aesara fails at run time
        pool_2d(x, (2, 2, 3), ignore_border=True)


def test_run_time_errors_name_the_op(server):
    x = at.tensor4("x")
    ws, st = at.lvector("ws"), at.lvector("st")
    f = kiln.function([x, ws, st], Pool(True)(x, ws, st))
    img = np.arange(16.0).reshape(1, 1, 4, 4)
    np.testing.assert_array_equal(f(img, [2, 2], [2, 2]), [[[[5.0, 7.0], [13.0, 15.0]]]])
    with pytest.raises(Exception, match=r"Pool\{ignore_border=True, mode='max', ndim=2\}: "
                       r"stride\[1\] is 0: strides must be >= 1"):
        f(img, [2, 2], [2, 0])
    with pytest.raises(Exception, match="ws must be a vector of size 2; got shape \\(3,\\)"):
        f(img, [2, 2, 2], [2, 2])
    # A window of 2^31: no whole window (ignore_border), so an empty result.
    assert f(img, [2 ** 31, 2], [1, 1]).shape == (1, 1, 0, 3)


def test_out_shape_is_aesaras():
    assert Pool.out_shape((5, 7), (2, 2), False) == [3, 4]
    assert Pool.out_shape((5, 7), (2, 2), True, (1, 3)) == [4, 2]
    assert Pool.out_shape((2, 5, 7), (3, 3), True, (2, 2), (1, 1)) == [2, 3, 4]
    assert Pool.out_shape((5, 7, 9), (2, 2, 4), False, (3, 1, 2), None, 3) == [2, 6, 4]
    assert PoolGrad.out_shape((5, 7), (3, 2), False, (1, 1)) == [3, 6]
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert PoolGrad.out_shape((5, 7), ds=(2, 2)) == [3, 4]
    assert "'ds' parameter in PoolGrad" in str(w[0].message)
    with pytest.raises(TypeError, match="imgshape must have at least 2 dimensions"):
        Pool.out_shape((5,), (2, 2))


def test_symbolic_out_shape_matches_the_values(server):
    x = at.tensor4("x")
    shape = Pool.out_shape([x.shape[i] for i in range(4)], (3, 2), False, (1, 2))
    f = kiln.function([x], at.stack(shape))
    value = kiln.function([x], pool_2d(x, (3, 2), False, (1, 2)))(np.zeros((2, 3, 6, 7)))
    np.testing.assert_array_equal(f(np.zeros((2, 3, 6, 7))), value.shape)


def test_rop_is_the_value_at_each_windows_maximum(server):
    x, v = at.tensor4("x"), at.tensor4("v")
    y = pool_2d(x, (2, 2), ignore_border=True)
    f = kiln.function([x, v], kiln.gradient.Rop(y, x, v))
    rng = np.random.default_rng(3)
    xv = rng.permutation(32).reshape(1, 2, 4, 4).astype("float64")
    vv = rng.standard_normal((1, 2, 4, 4))
    blocks = xv.reshape(1, 2, 2, 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(1, 2, 2, 2, 4)
    picked = np.take_along_axis(
        vv.reshape(1, 2, 2, 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(1, 2, 2, 2, 4),
        blocks.argmax(axis=-1)[..., None], axis=-1)[..., 0]
    np.testing.assert_allclose(f(xv, vv), picked, rtol=1e-12)


def test_max_pool_2d_same_size(server):
    x = at.tensor4("x")
    img = np.array([1, 5, 2, 0, 3, 4, 7, 6], dtype="float64").reshape(1, 1, 2, 4)
    out = kiln.function([x], max_pool_2d_same_size(x, (2, 2)))(img)
    np.testing.assert_array_equal(out, [[[[0, 5, 0, 0], [0, 0, 7, 0]]]])


@pytest.mark.parametrize("mode", ["max", "sum", "average_inc_pad", "average_exc_pad"])
def test_gradients_match_finite_differences(server, mode):
    rng = np.random.default_rng(7)
    x = rng.permutation(60).reshape(1, 2, 5, 6) * 0.1  # distinct: no ties
    for ws, st, pad in (((2, 2), (2, 2), (0, 0)), ((3, 2), (1, 2), (1, 1))):
        kiln.gradient.verify_grad(
            lambda a: pool_2d(a, ws, ignore_border=True, stride=st, pad=pad, mode=mode), [x],
            rng=rng)
        kiln.gradient.verify_grad(
            lambda a: kiln.grad((pool_2d(a, ws, True, st, pad, mode) ** 3).sum(), a), [x],
            rng=rng)
    kiln.gradient.verify_grad(lambda a: pool_3d(a, (2, 2, 3), False, (1, 2, 2), mode=mode),
                              [x], rng=rng)


def _golden_rop_cases():
    """tests/golden/aesara_max_pool_rop.txt's MaxPoolRop lines (gen_max_pool_rop_cases.py)."""
    path = os.path.join(os.path.dirname(__file__), "..", "golden", "aesara_max_pool_rop.txt")
    with open(path) as f:
        rows = [line.rstrip("\n").split("|") for line in f if not line.startswith("#")]
    return [r for r in rows if r[0] == "MaxPoolRop"]


def _rop_array(dtype, shape, text):
    dims = tuple(int(d) for d in shape.split("x")) if shape != "-" else ()
    values = [float(v) for v in text.split(",")] if text else []
    return np.array(values, dtype=np.float64).astype(dtype).reshape(dims)


@pytest.mark.parametrize("case", _golden_rop_cases(), ids=lambda c: "|".join(c[1:9]))
def test_max_pool_rop_matches_aesara(server, case):
    nd, ib = int(case[1]), case[2] == "1"
    ws, st, pad = ([int(v) for v in case[k].split(",")] for k in (4, 5, 6))
    xv = _rop_array(case[7], case[8], case[9])
    ev = _rop_array(case[7], case[10], case[11])
    x = at.tensor(case[7], shape=(None,) * xv.ndim, name="x")
    e = at.tensor(case[7], shape=(None,) * xv.ndim, name="e")
    out = pool.MaxPoolRop(ib, ndim=nd)(x, e, ws, st, pad)
    got = kiln.function([x, e], out)(xv, ev)
    np.testing.assert_array_equal(got, _rop_array(case[7], case[12], case[13]))


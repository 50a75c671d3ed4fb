"""batch_normalization(mode="low_mem") against Aesara 2.9.4: one Elemwise{BNComposite} node
printed as Aesara's Elemwise{Composite{...}}, its values and its gradients (BNComposite.grad's)
from tests/golden/aesara_bn_composite.json (tests/golden/gen_aesara_bn_composite.py), and by
finite differences; mode="high_mem" keeps its elementwise graph."""
import json
import os

import numpy as np
import pytest

import kiln
import kiln.tensor as kt
from kiln.tensor.nnet import batchnorm

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "golden", "aesara_bn_composite.json")
with open(GOLDEN) as _f:
    CASES = json.load(_f)["cases"]
NAMES = ["inputs", "gamma", "beta", "mean", "std"]


def _case_inputs(case):
    variables = [kt.tensor(i["dtype"], shape=tuple(1 if d == 1 else None for d in i["shape"]),
                           name=n) for n, i in zip(NAMES, case["inputs"])]
    values = [np.array(i["values"], dtype=i["dtype"]).reshape(i["shape"])
              for i in case["inputs"]]
    return variables, values


@pytest.mark.parametrize("k", range(len(CASES)))
def test_low_mem_matches_aesara(server, k):
    case = CASES[k]
    variables, values = _case_inputs(case)
    out = batchnorm.batch_normalization(*variables, mode="low_mem")
    assert kiln.dprint(out, file="str") == case["dprint"]
    assert str(out.type) == case["type"]
    assert str(out.owner.op) == "Elemwise{Composite{((((i0 - i1) / i2) * i3) + i4)}}"
    y = kiln.function(variables, out)(*values)
    want = case["out"]
    assert str(y.dtype) == want["dtype"] and list(y.shape) == want["shape"]
    rtol = 1e-5 if want["dtype"] == "float32" else 1e-12
    np.testing.assert_allclose(y.ravel(), want["values"], rtol=rtol, atol=rtol)
    w = np.array(case["w"], dtype=want["dtype"]).reshape(y.shape)
    grads = kiln.grad((out * w).sum(), variables)
    got = kiln.function(variables, grads)(*values)
    for g, ref, v in zip(got, case["grads"], values):
        assert g.shape == v.shape
        np.testing.assert_allclose(g.ravel(), ref["values"], rtol=10 * rtol, atol=10 * rtol)


def test_gradient_by_finite_differences(server):
    rng = np.random.default_rng(7)
    x = rng.normal(size=(4, 3))
    # mean, std and beta as vectors, which batch_normalization broadcasts as rows.
    m, g, b = rng.normal(size=3), rng.normal(size=(4, 3)), rng.normal(size=3)
    s = rng.uniform(0.5, 2.0, size=3)
    kiln.gradient.verify_grad(
        lambda x_, m_, s_, g_, b_: batchnorm.batch_normalization(x_, g_, b_, m_, s_,
                                                                 mode="low_mem"),
        [x, m, s, g, b], rng=np.random.default_rng(0))


def test_op_identity_and_high_mem(server):
    x, v = kt.dmatrix("x"), kt.dvector("v")
    a = batchnorm.batch_normalization(x, v, v, v, v)
    b = batchnorm.batch_normalization(x, v, v, v, v, mode="low_mem")
    assert a.owner.op == b.owner.op == batchnorm.BNComposite(dtype="float64")
    assert batchnorm.BNComposite(dtype="float32") != a.owner.op
    f = kiln.function([x, v], [a])
    xv, vv = np.arange(6.0).reshape(2, 3), np.array([1.0, 2.0, 4.0])
    np.testing.assert_allclose(f(xv, vv)[0], (xv - vv) / vv * vv + vv)
    high = batchnorm.batch_normalization(x, v, v, v, v, mode="high_mem")
    assert str(high.owner.op) == "Elemwise{add,no_inplace}"
    np.testing.assert_allclose(kiln.function([x, v], high)(xv, vv), (xv - vv) * (vv / vv) + vv)
    with pytest.raises(Exception, match="do not broadcast"):
        batchnorm.batch_normalization(kt.tensor("float64", shape=(2, 3)), v, v,
                                      kt.tensor("float64", shape=(2, 4)), v)

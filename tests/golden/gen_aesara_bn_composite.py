#!/usr/bin/python3
"""Writes tests/golden/aesara_bn_composite.json: Aesara 2.9.4's
batch_normalization(inputs, gamma, beta, mean, std, mode="low_mem") (an Elemwise of its
BNComposite scalar op) for tests/python/test_bn_composite.py: the graph's dprint, the output's
type, its values and the gradients of sum(out * w) with respect to every input.

Run with Aesara 2.9.4 importable, in pure-Python mode:

    PYTHONPATH=<aesara-2.9.4> AESARA_FLAGS=cxx= \
        /usr/bin/python3 tests/golden/gen_aesara_bn_composite.py

Inputs are deterministic: the k-th input of a case is linspace(-1, 1, size) * (k + 1) + 0.5 * k
reshaped (std is that plus 2, so it stays away from zero), w = cos(arange(size)) in the
output's shape."""
import json
import os
import warnings

import numpy as np

warnings.filterwarnings("ignore")
import aesara  # noqa: E402
import aesara.tensor as at  # noqa: E402
from aesara.tensor.nnet.batchnorm import batch_normalization  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
NAMES = ["inputs", "gamma", "beta", "mean", "std"]

# (dtype, shape) of inputs, gamma, beta, mean, std; shapes give static broadcastable dims of 1
CASES = [
    [("float64", (4, 3)), ("float64", (3,)), ("float64", (3,)), ("float64", (3,)),
     ("float64", (3,))],
    [("float64", (2, 3, 2, 2)), ("float64", (1, 3, 1, 1)), ("float64", (1, 3, 1, 1)),
     ("float64", (1, 3, 1, 1)), ("float64", (1, 3, 1, 1))],
    [("float32", (3, 5)), ("float32", (5,)), ("float32", (5,)), ("float32", (5,)),
     ("float32", (5,))],
    [("float32", (2, 4)), ("float64", (2, 4)), ("float64", (4,)), ("float64", (1, 4)),
     ("float64", (4,))],
]


def value(k, dtype, shape):
    size = int(np.prod(shape))
    v = np.linspace(-1, 1, size) * (k + 1) + 0.5 * k
    if k == 4:
        v = v + 2
    return v.reshape(shape).astype(dtype)


def main():
    cases = []
    for case in CASES:
        variables = [at.tensor(dt, shape=tuple(1 if d == 1 else None for d in shp), name=n)
                     for n, (dt, shp) in zip(NAMES, case)]
        values = [value(k, dt, shp) for k, (dt, shp) in enumerate(case)]
        x, gamma, beta, mean, std = variables
        out = batch_normalization(x, gamma, beta, mean, std, mode="low_mem")
        f = aesara.function(variables, out)
        y = f(*values)
        w = np.cos(np.arange(y.size)).reshape(y.shape).astype(y.dtype)
        cost = (out * w).sum()
        grads = aesara.function(variables, aesara.grad(cost, variables))(*values)
        cases.append({
            "inputs": [{"dtype": dt, "shape": list(shp), "values": v.ravel().tolist()}
                       for (dt, shp), v in zip(case, values)],
            "dprint": aesara.dprint(out, file="str"),
            "type": str(out.type),
            "out": {"dtype": str(y.dtype), "shape": list(y.shape),
                    "values": y.ravel().tolist()},
            "w": w.ravel().tolist(),
            "grads": [{"dtype": str(g.dtype), "values": g.ravel().tolist()} for g in grads],
        })
    with open(os.path.join(HERE, "aesara_bn_composite.json"), "w") as fh:
        json.dump({"aesara": aesara.__version__, "cases": cases}, fh, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Writes the reference data of Aesara 2.9.4's batch normalization (aesara.tensor.nnet.batchnorm)
that Kiln's tests compare with:

    tests/golden/aesara_batchnorm_ops.txt    the abstract ops' own values (Aesara's perform, no
                                             rewrites): core/ops/batchnorm_test.cc
    tests/golden/aesara_batchnorm.json       the graphs batch_normalization_train / _test and
                                             their gradients build (aesara.dprint before any
                                             rewrite), their compiled values, the running
                                             averages as updates over several calls, and second
                                             derivatives (AbstractBatchNormTrainGrad's gradient):
                                             tests/python/test_batchnorm.py

Run with Aesara 2.9.4 importable, in pure-Python mode:

    PYTHONPATH=<aesara-2.9.4> AESARA_FLAGS=cxx= \
        /usr/bin/python3 tests/golden/gen_aesara_batchnorm.py

Inputs are deterministic (no random numbers): VALUES(shape) = sin(1 + i) * 3 * scale + shift,
variances shifted to be positive."""
import io
import json
import os
import warnings

import numpy as np

warnings.filterwarnings("ignore")
import aesara  # noqa: E402
import aesara.tensor as at  # noqa: E402
from aesara.compile.mode import Mode  # noqa: E402
from aesara.tensor.nnet import batchnorm as bn  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def VALUES(shape, dtype="float64", scale=0.25, shift=0.0):
    n = int(np.prod(shape))
    return (np.sin(1.0 + np.arange(n)) * 3 * scale + shift).reshape(shape).astype(dtype)


def part(a):
    """dtype;shape;values, the form core/ops/batchnorm_test.cc reads (shape - for a scalar)."""
    a = np.asarray(a)
    shape = "x".join(str(d) for d in a.shape) if a.ndim else "-"
    return "%s;%s;%s" % (a.dtype, shape, ",".join(repr(v.item()) for v in a.ravel()))


# --- the ops' own values (Aesara's perform) -----------------------------------------------------

PERFORM = Mode(linker="py", optimizer=None)

# op, axes, x shape, params shape (the statistics' shape), dtype, with running averages
OP_CASES = [
    ("train", (0,), (5, 3), (1, 3), "float64", False),
    ("train", (0,), (5, 3), (1, 3), "float64", True),
    ("train", (0, 2, 3), (2, 3, 2, 2), (1, 3, 1, 1), "float64", True),
    ("train", (0, 2), (3, 4, 5), (1, 4, 1), "float64", True),
    ("train", (1,), (4, 6), (4, 1), "float64", False),
    ("train", (0, 2, 3), (3, 2, 2, 3), (1, 2, 1, 1), "float32", True),
    ("inference", (0,), (5, 3), (1, 3), "float64", False),
    ("inference", (0, 2, 3), (2, 3, 2, 2), (1, 3, 1, 1), "float64", False),
    ("inference", (0, 2), (3, 4, 5), (1, 4, 1), "float32", False),
    ("grad", (0,), (5, 3), (1, 3), "float64", False),
    ("grad", (0, 2, 3), (2, 3, 2, 2), (1, 3, 1, 1), "float64", False),
    ("grad", (0, 2), (3, 4, 5), (1, 4, 1), "float32", False),
]


def op_cases():
    lines = ["# Aesara %s, the abstract batch-normalization ops run by their perform "
             "(linker py, no rewrites): op|axes|inputs (dtype;shape;values)...|outputs..."
             % aesara.__version__]
    for kind, axes, xs, ps, dtype, running in OP_CASES:
        x = VALUES(xs, dtype)
        p = lambda k, shift=0.0: VALUES(ps, dtype, 0.2 + 0.1 * k, shift)  # noqa: E731
        if kind == "train":
            vals = [x, p(1, 1.0), p(2), np.asarray(1e-3), np.asarray(0.3)]
            if running:
                vals += [p(3), p(4, 1.5)]
            op = bn.AbstractBatchNormTrain(axes)
        elif kind == "inference":
            vals = [x, p(1, 1.0), p(2), p(3), p(4, 1.5), np.asarray(1e-2)]
            op = bn.AbstractBatchNormInference(axes)
        else:
            mean = x.mean(axis=axes, keepdims=True)
            invstd = 1.0 / np.sqrt(x.var(axis=axes, keepdims=True) + 1e-3)
            vals = [x, VALUES(xs, dtype, 0.5, 0.1)[::-1].copy(), p(1, 1.0), mean.astype(dtype),
                    invstd.astype(dtype), np.asarray(1e-3)]
            op = bn.AbstractBatchNormTrainGrad(axes)
        ins = [at.tensor(v.dtype, shape=(None,) * v.ndim) for v in vals]
        outs = op(*ins)
        outs = outs if isinstance(outs, (list, tuple)) else [outs]
        results = aesara.function(ins, outs, mode=PERFORM)(*vals)
        lines.append("|".join([kind, ",".join(map(str, axes))] + [part(v) for v in vals] +
                              [part(r) for r in results]))
    with open(os.path.join(HERE, "aesara_batchnorm_ops.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


# --- graphs, values, updates --------------------------------------------------------------------
# Each case: an expression over `bn`, `at` and the inputs (name, dtype, shape, shift), as
# tests/python/test_batchnorm.py evaluates it with Kiln's modules; the gradient case's cost is
# sum(out ** 2) of the first output.

GRAPH_CASES = [
    ("train_per_activation", "bn.batch_normalization_train(x, g, b)",
     [("x", "float64", (6, 4), 0), ("g", "float64", (4,), 1), ("b", "float64", (4,), 0)]),
    ("train_spatial_running",
     "bn.batch_normalization_train(x, g, b, 'spatial', 1e-3, 0.3, rm, rv)",
     [("x", "float64", (3, 2, 3, 4), 0), ("g", "float64", (2,), 1), ("b", "float64", (2,), 0),
      ("rm", "float64", (2,), 0), ("rv", "float64", (2,), 1.5)]),
    ("train_axes_full_params",
     "bn.batch_normalization_train(x, g, b, (0, 2), 1e-4, 0.1, rm, rv)",
     [("x", "float64", (3, 4, 5), 0), ("g", "float64", (1, 4, 1), 1),
      ("b", "float64", (1, 4, 1), 0), ("rm", "float64", (1, 4, 1), 0),
      ("rv", "float64", (1, 4, 1), 1.5)]),
    ("train_float32_spatial", "bn.batch_normalization_train(x, g, b, 'spatial')",
     [("x", "float32", (4, 3, 2), 0), ("g", "float32", (3,), 1), ("b", "float32", (3,), 0)]),
    ("test_per_activation", "bn.batch_normalization_test(x, g, b, m, v)",
     [("x", "float64", (5, 3), 0), ("g", "float64", (3,), 1), ("b", "float64", (3,), 0),
      ("m", "float64", (3,), 0), ("v", "float64", (3,), 1.5)]),
    ("test_spatial", "bn.batch_normalization_test(x, g, b, m, v, 'spatial', 1e-2)",
     [("x", "float64", (2, 3, 2, 2), 0), ("g", "float64", (3,), 1), ("b", "float64", (3,), 0),
      ("m", "float64", (3,), 0), ("v", "float64", (3,), 1.5)]),
    ("test_axes_full_params", "bn.batch_normalization_test(x, g, b, m, v, (0, 2))",
     [("x", "float64", (3, 4, 5), 0), ("g", "float64", (1, 4, 1), 1),
      ("b", "float64", (1, 4, 1), 0), ("m", "float64", (1, 4, 1), 0),
      ("v", "float64", (1, 4, 1), 1.5)]),
]


def input_values(inputs):
    return {n: VALUES(s, d, 0.25, shift) for n, d, s, shift in inputs}


def dprint(outs):
    text = io.StringIO()
    aesara.dprint(outs, file=text)
    return text.getvalue()


def graph_cases():
    cases = []
    for name, expr, inputs in GRAPH_CASES:
        vars_ = {n: at.tensor(d, shape=(None,) * len(s), name=n) for n, d, s, _ in inputs}
        vals = input_values(inputs)
        ins = [vars_[i[0]] for i in inputs]
        outs = eval(expr, {"bn": bn, "at": at}, dict(vars_))
        outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
        results = aesara.function(ins, outs)(*[vals[i[0]] for i in inputs])
        cost = (outs[0] ** 2).sum()
        wrt = [vars_[n] for n in ("x", "g", "b", "m", "v") if n in vars_]
        if name.startswith("train"):
            wrt = wrt[:3]
        grads = aesara.grad(cost, wrt)
        gvals = aesara.function(ins, grads, on_unused_input="ignore")(
            *[vals[i[0]] for i in inputs])
        case = {"name": name, "expr": expr,
                "inputs": [[n, d, list(s), shift] for n, d, s, shift in inputs],
                "dprint": dprint(outs), "grad_dprint": dprint(grads),
                "outputs": [[str(r.dtype), list(r.shape), r.ravel().tolist()] for r in results],
                "grads": {v.name: g.ravel().tolist() for v, g in zip(wrt, gvals)}}
        cases.append(case)
    return cases


# AbstractBatchNormTrainGrad's own gradient (Aesara's second derivatives of the normalized
# output, x_mean and x_invstd taken as inputs of their own): the gradients of
# sum(out_k * w_k) over the outputs `outs` w.r.t. each input. (Through batch_normalization_train
# Aesara's second derivative is not the derivative of its gradient: AbstractBatchNormTrain.L_op
# drops the cotangents of mean and invstd, and aesara.gradient.verify_grad fails on it; Kiln adds
# those terms, so only the op's own gradient is compared.)
TRAIN_GRAD_CASES = [
    ("per_activation", (0,), (5, 3), (1, 3), [0, 1, 2]),
    ("spatial", (0, 2, 3), (2, 3, 2, 2), (1, 3, 1, 1), [0, 1, 2]),
    ("spatial_dx_only", (0, 2, 3), (2, 3, 2, 2), (1, 3, 1, 1), [0]),
    ("axes_0_2_dscale_only", (0, 2), (3, 4, 5), (1, 4, 1), [1]),
    ("axes_0_2_dbias_only", (0, 2), (3, 4, 5), (1, 4, 1), [2]),
]


def WEIGHTS(n):
    return ((np.arange(n) * 7) % 11 - 5) / 4.0


def train_grad_cases():
    cases = []
    names = ["x", "dy", "scale", "x_mean", "x_invstd"]
    for name, axes, xs, ps, outs_used in TRAIN_GRAD_CASES:
        vals = [VALUES(xs), VALUES(xs, "float64", 0.5, 0.1)[::-1].copy(),
                VALUES(ps, "float64", 0.3, 1.0), VALUES(ps, "float64", 0.2),
                VALUES(ps, "float64", 0.2, 1.2)]
        ins = [at.tensor("float64", shape=tuple(1 if d == 1 else None for d in v.shape), name=n)
               for n, v in zip(names, vals)]
        outs = bn.AbstractBatchNormTrainGrad(axes)(*ins, 1e-3)
        results = aesara.function(ins, outs)(*vals)
        cost = sum((outs[k] * WEIGHTS(results[k].size).reshape(results[k].shape)).sum()
                   for k in outs_used)
        grads = aesara.grad(cost, ins, disconnected_inputs="ignore", return_disconnected="None")
        connected = [(v, g) for v, g in zip(ins, grads) if g is not None]
        gvals = aesara.function(ins, [g for _, g in connected], on_unused_input="ignore")(*vals)
        cases.append({"name": name, "axes": list(axes), "outputs_used": outs_used,
                      "inputs": [[n, list(v.shape), v.ravel().tolist()]
                                 for n, v in zip(names, vals)],
                      "grads": {v.name: g.ravel().tolist()
                                for (v, _), g in zip(connected, gvals)}})
    return cases


# Running averages as shared variables updated by each call, as a training loop keeps them.
UPDATE_CASES = [
    ("per_activation", "float64", (6, 4), (4,), "per-activation"),
    ("spatial", "float64", (3, 2, 3, 4), (2,), "spatial"),
    ("axes_0_2", "float64", (3, 4, 5), (1, 4, 1), (0, 2)),
]


def update_cases():
    cases = []
    for name, dtype, xs, ps, axes in UPDATE_CASES:
        x = at.tensor(dtype, shape=(None,) * len(xs), name="x")
        # Parameters shaped like x keep their broadcastable dims (the updates have them).
        kw = {"shape": tuple(1 if d == 1 else None for d in ps)} if len(ps) == len(xs) else {}
        g = aesara.shared(VALUES(ps, dtype, 0.3, 1.0), name="g", **kw)
        b = aesara.shared(VALUES(ps, dtype, 0.2), name="b", **kw)
        rm = aesara.shared(np.zeros(ps, dtype), name="rm", **kw)
        rv = aesara.shared(np.ones(ps, dtype), name="rv", **kw)
        out, mean, invstd, new_rm, new_rv = bn.batch_normalization_train(
            x, g, b, axes, 1e-3, 0.2, rm, rv)
        f = aesara.function([x], [out, mean, invstd], updates=[(rm, new_rm), (rv, new_rv)])
        steps = []
        for step in range(3):
            xv = VALUES(xs, dtype, 0.25 + 0.1 * step, 0.2 * step)
            o = f(xv)
            steps.append({"x_scale": 0.25 + 0.1 * step, "x_shift": 0.2 * step,
                          "outputs": [r.ravel().tolist() for r in o],
                          "running_mean": rm.get_value().ravel().tolist(),
                          "running_var": rv.get_value().ravel().tolist()})
        cases.append({"name": name, "dtype": dtype, "x_shape": list(xs), "param_shape": list(ps),
                      "axes": axes if isinstance(axes, str) else list(axes), "steps": steps})
    return cases


def main():
    op_cases()
    with open(os.path.join(HERE, "aesara_batchnorm.json"), "w") as f:
        json.dump({"aesara": aesara.__version__, "graphs": graph_cases(),
                   "train_grad_grads": train_grad_cases(), "updates": update_cases()}, f,
                  indent=0)
        f.write("\n")


if __name__ == "__main__":
    main()

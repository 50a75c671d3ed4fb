#!/usr/bin/python3
"""Writes the reference values of Aesara 2.9.4's aesara.tensor.nnet that Kiln's tests compare with:

    tests/golden/aesara_neighbours.txt   Images2Neibs (core/ops/neighbours_test.cc and
                                         tests/python/test_nnet_more.py)
    tests/golden/aesara_nnet_more.json   batch normalization, activations, losses
                                         (tests/python/test_nnet_more.py)
    tests/golden/aesara_nnet_xent.txt    the classifier ops (core/ops/nnet_xent_test.cc)
    tests/golden/aesara_nnet_rewrites.txt  Aesara's FAST_RUN graphs of the classifier
                                         expressions, beside Kiln's nnet_rewrites.txt

Run with Aesara 2.9.4 importable, in pure-Python mode:

    PYTHONPATH=<aesara-2.9.4> AESARA_FLAGS=cxx= /usr/bin/python3 tests/golden/gen_aesara_nnet.py

Inputs are deterministic (no random numbers); every value is Aesara's own output of the compiled
function, and every gradient is aesara.grad of sum(out * w) for the fixed weights w = WEIGHTS(n)
of the output's flattened size n, reshaped to the output's shape. Two exceptions, noted where
they are made: ultra_fast_sigmoid's reference is Aesara's own UltraFastScalarSigmoid.st_impl
(pure-Python Aesara runs scipy's exact expit for it instead), and the gradients of
batch_normalization_train are of its normalized output only (Aesara drops the others)."""
import json
import os
import warnings

import numpy as np

warnings.filterwarnings("ignore")
import aesara  # noqa: E402
import aesara.tensor as at  # noqa: E402
from aesara.tensor.nnet import batchnorm, neighbours  # noqa: E402
import aesara.tensor.nnet as nnet  # noqa: E402
from aesara.tensor.nnet import sigm  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def WEIGHTS(n):
    """The fixed cotangent of the gradients: ((i * 7) % 11 - 5) / 4 for i < n."""
    return ((np.arange(n) * 7) % 11 - 5) / 4.0


def VALUES(shape, dtype, scale=0.25, shift=0.0):
    """Deterministic inputs: sin(1 + i) * 3 * scale + shift, cast to dtype (integers: i % 13)."""
    n = int(np.prod(shape))
    if np.dtype(dtype).kind in "iu":
        return (np.arange(n) % 13).reshape(shape).astype(dtype)
    return (np.sin(1.0 + np.arange(n)) * 3 * scale + shift).reshape(shape).astype(dtype)


def fmt(a):
    a = np.asarray(a)
    shape = "x".join(str(d) for d in a.shape) if a.ndim else "-"
    return shape, ",".join(repr(v.item()) for v in a.ravel())


# --- neighbours ---------------------------------------------------------------------------------

NEIB_CASES = [  # mode, dtype, image shape, neib_shape, neib_step (None: neib_shape), grad?
    ("valid", "float64", (2, 3, 4, 4), (2, 2), None, True),
    ("valid", "float64", (1, 2, 5, 6), (3, 2), (1, 2), True),
    ("valid", "float64", (1, 1, 4, 4), (2, 2), (2, 1), True),
    ("valid", "float32", (1, 2, 4, 6), (2, 3), None, True),
    ("valid", "int32", (2, 1, 3, 3), (3, 1), None, False),
    ("ignore_borders", "float64", (1, 2, 5, 7), (2, 3), None, True),
    ("ignore_borders", "float64", (2, 1, 6, 5), (3, 2), (2, 2), False),
    ("ignore_borders", "float64", (1, 1, 2, 2), (3, 3), (1, 1), False),
    ("ignore_borders", "float64", (1, 1, 7, 6), (2, 2), (3, 4), False),
    ("wrap_centered", "float64", (1, 2, 5, 6), (3, 3), (1, 1), False),
    ("wrap_centered", "float64", (2, 1, 4, 5), (3, 1), (2, 2), False),
    ("wrap_centered", "float64", (1, 1, 7, 7), (5, 3), (3, 2), False),
    ("half", "float64", (1, 2, 5, 5), (3, 3), (1, 1), False),
    ("half", "float64", (1, 1, 4, 6), (2, 2), (2, 2), False),
    ("half", "float64", (1, 1, 6, 4), (3, 2), (1, 2), False),
    ("full", "float64", (1, 2, 4, 5), (2, 3), (1, 1), False),
    ("full", "float64", (1, 1, 5, 5), (3, 3), (2, 2), False),
]

NEIB_ERRORS = [  # mode, image shape, neib_shape, neib_step
    ("valid", (1, 1, 5, 4), (2, 2), None),
    ("valid", (1, 1, 4, 5), (2, 2), None),
    ("valid", (1, 1, 4, 4), (2, 2), (0, 1)),
    ("valid", (1, 1, 4, 4), (0, 2), (1, 1)),
    ("wrap_centered", (1, 1, 4, 4), (2, 3), (1, 1)),
    ("wrap_centered", (1, 1, 2, 4), (3, 3), (1, 1)),
    ("half", (1, 1, 4, 4), (3, 3), (2, 2)),
    ("full", (1, 1, 5, 5), (2, 2), (2, 2)),
]


def neighbour_cases():
    lines = ["# Aesara %s images2neibs: mode|dtype|shape|values|neib_shape|neib_step (- when "
             "omitted)|out dtype|out shape|out values|gradient of sum(out * w) w.r.t. the images "
             "(- when not computed)" % aesara.__version__]
    for mode, dtype, shape, ns, step, with_grad in NEIB_CASES:
        x = at.tensor(dtype, shape=(None,) * 4, name="x")
        out = neighbours.images2neibs(x, ns, step, mode=mode)
        xv = VALUES(shape, dtype)
        y = aesara.function([x], out)(xv)
        grad = "-"
        if with_grad:
            w = WEIGHTS(y.size).reshape(y.shape)
            g = aesara.grad((out * w).sum(), x)
            grad = fmt(aesara.function([x], g)(xv))[1]
        lines.append("|".join([mode, dtype, fmt(xv)[0], fmt(xv)[1], "%d,%d" % ns,
                               "-" if step is None else "%d,%d" % step, str(y.dtype), *fmt(y),
                               grad]))
    lines.append("# errors: mode|shape|neib_shape|neib_step|ERROR|Aesara's message")
    for mode, shape, ns, step in NEIB_ERRORS:
        x = at.dtensor4("x")
        f = aesara.function([x], neighbours.images2neibs(x, ns, step, mode=mode))
        try:
            f(VALUES(shape, "float64"))
            raise AssertionError("no error for %s" % ((mode, shape, ns, step),))
        except (TypeError, ValueError) as e:
            msg = str(e).split("\n")[0]
        lines.append("|".join([mode, fmt(np.zeros(shape))[0], "%d,%d" % ns,
                               "-" if step is None else "%d,%d" % step, "ERROR", msg]))
    with open(os.path.join(HERE, "aesara_neighbours.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


# --- batch normalization, activations, losses ---------------------------------------------------
# Each case: an expression over the modules `nnet` (aesara.tensor.nnet), `bn` (its batchnorm),
# `sigm`, `neighbours` and `at`, and its inputs (name, dtype, shape, values or None for
# VALUES(shape, dtype)). The tests evaluate the same expression with Kiln's modules.

P = (3, 4)  # the shape of the rows of probabilities below


def probs(shape):
    e = np.exp(VALUES(shape, "float64", 1.0))
    return e / e.sum(axis=-1, keepdims=True)


UFS_POINTS = [-9.0, -6.0, -3.4, -3.3999, -3.2, -2.0, -0.5, -0.0, 0.0, 1e-3, 0.7, 3.3, 3.4,
              3.5, 5.9, 6.0, 6.1, 20.0]

CASES = [
    # name, expression, inputs, names of the inputs to differentiate
    ("bn_train_per_activation", "bn.batch_normalization_train(x, g, b)",
     [("x", "float64", (6, 4), None), ("g", "float64", (4,), None),
      ("b", "float64", (4,), None)], ["x", "g", "b"]),
    ("bn_train_spatial_running", "bn.batch_normalization_train(x, g, b, 'spatial', 1e-3, 0.3, "
     "rm, rv)",
     [("x", "float64", (3, 2, 3, 4), None), ("g", "float64", (2,), None),
      ("b", "float64", (2,), None), ("rm", "float64", (2,), None),
      ("rv", "float64", (2,), [0.5, 1.5])], ["x", "g", "b"]),
    ("bn_train_axes_full_params", "bn.batch_normalization_train(x, g, b, (0, 2), 1e-4, 0.1, "
     "rm, rv)",
     [("x", "float64", (3, 4, 5), None), ("g", "float64", (1, 4, 1), None),
      ("b", "float64", (1, 4, 1), None), ("rm", "float64", (1, 4, 1), None),
      ("rv", "float64", (1, 4, 1), [1.0, 2.0, 0.5, 0.25])], ["x", "g", "b"]),
    ("bn_train_float32", "bn.batch_normalization_train(x, g, b, 'spatial')",
     [("x", "float32", (4, 3, 2), None), ("g", "float32", (3,), None),
      ("b", "float32", (3,), None)], []),
    ("bn_test_per_activation", "bn.batch_normalization_test(x, g, b, m, v)",
     [("x", "float64", (5, 3), None), ("g", "float64", (3,), None),
      ("b", "float64", (3,), None), ("m", "float64", (3,), None),
      ("v", "float64", (3,), [0.5, 1.0, 2.0])], ["x", "g", "b", "m", "v"]),
    ("bn_test_spatial", "bn.batch_normalization_test(x, g, b, m, v, 'spatial', 1e-2)",
     [("x", "float64", (2, 3, 2, 2), None), ("g", "float64", (3,), None),
      ("b", "float64", (3,), None), ("m", "float64", (3,), None),
      ("v", "float64", (3,), [0.5, 1.0, 2.0])], ["x", "g", "m", "v"]),
    ("bn_low_mem", "bn.batch_normalization(x, g, b, m, s)",
     [("x", "float64", (4, 3), None), ("g", "float64", (3,), None),
      ("b", "float64", (3,), None), ("m", "float64", (3,), None),
      ("s", "float64", (3,), [0.5, 1.0, 2.0])], ["x", "g", "b", "m", "s"]),
    ("bn_high_mem", "bn.batch_normalization(x, g, b, m, s, mode='high_mem')",
     [("x", "float64", (4, 3), None), ("g", "float64", (3,), None),
      ("b", "float64", (3,), None), ("m", "float64", (3,), None),
      ("s", "float64", (3,), [0.5, 1.0, 2.0])], ["x", "g", "b", "m", "s"]),
    ("elu", "nnet.elu(x)", [("x", "float64", (3, 5), None)], ["x"]),
    ("elu_alpha", "nnet.elu(x, 0.5)", [("x", "float64", (7,), None)], ["x"]),
    ("selu", "nnet.selu(x)", [("x", "float64", (3, 5), None)], ["x"]),
    ("softsign", "nnet.softsign(x)", [("x", "float64", (3, 5), None)], ["x"]),
    ("softsign_f32", "nnet.softsign(x)", [("x", "float32", (6,), None)], []),
    ("relu_alpha", "nnet.relu(x, 0.1)", [("x", "float64", (3, 5), None)], ["x"]),
    ("hard_sigmoid", "nnet.hard_sigmoid(x)", [("x", "float64", (18,), UFS_POINTS)], ["x"]),
    ("hard_sigmoid_f32", "nnet.hard_sigmoid(x)", [("x", "float32", (18,), UFS_POINTS)], []),
    ("ultra_fast_sigmoid", "nnet.ultra_fast_sigmoid(x)",
     [("x", "float64", (18,), UFS_POINTS)], []),
    ("ultra_fast_sigmoid_f32", "sigm.ultra_fast_sigmoid(x)",
     [("x", "float32", (18,), UFS_POINTS)], []),
    ("sigmoid_binary_crossentropy", "nnet.sigmoid_binary_crossentropy(x, t)",
     [("x", "float64", (3, 4), None), ("t", "float64", (3, 4), [0, 1, 0.5, 0.25] * 3)],
     ["x", "t"]),
    ("binary_crossentropy", "nnet.binary_crossentropy(p, t)",
     [("p", "float64", (2, 3), [0.1, 0.5, 0.9, 0.3, 0.7, 0.01]),
      ("t", "float64", (2, 3), [0, 1, 1, 0.5, 0, 1])], ["p", "t"]),
    ("softmax_with_bias", "nnet.softmax_with_bias(x, b)",
     [("x", "float64", (3, 4), None), ("b", "float64", (4,), None)], ["x", "b"]),
    ("crossentropy_softmax_1hot", "nnet.crossentropy_softmax_1hot(x, y)",
     [("x", "float64", (3, 4), None), ("y", "int64", (3,), [3, 0, 2])], ["x"]),
    ("crossentropy_softmax_1hot_with_bias", "nnet.crossentropy_softmax_1hot_with_bias(x, b, y)",
     [("x", "float64", (3, 4), None), ("b", "float64", (4,), None),
      ("y", "int32", (3,), [1, 1, 3])], ["x", "b"]),
    ("crossentropy_softmax_argmax_1hot_with_bias",
     "nnet.crossentropy_softmax_argmax_1hot_with_bias(x, b, y)",
     [("x", "float64", (4, 3), None), ("b", "float64", (3,), None),
      ("y", "int64", (4,), [0, 2, 1, 2])], ["x", "b"]),
    ("crossentropy_softmax_max_and_argmax_1hot",
     "nnet.crossentropy_softmax_max_and_argmax_1hot(x, y)",
     [("x", "float64", (4, 3), None), ("y", "int64", (4,), [0, 2, 1, 2])], ["x"]),
    ("crossentropy_softmax_max_and_argmax_1hot_with_bias",
     "nnet.crossentropy_softmax_max_and_argmax_1hot_with_bias(x, b, y)",
     [("x", "float64", (4, 3), None), ("b", "float64", (3,), None),
      ("y", "int64", (4,), [0, 2, 1, 2])], ["x", "b"]),
    ("crossentropy_softmax_1hot_with_bias_dx",
     "nnet.crossentropy_softmax_1hot_with_bias_dx(d, s, y)",
     [("d", "float64", (3,), None), ("s", "float64", P, probs(P)),
      ("y", "int64", (3,), [3, 0, 2])], ["d", "s"]),
    ("crossentropy_categorical_1hot", "nnet.crossentropy_categorical_1hot(p, y)",
     [("p", "float64", P, probs(P)), ("y", "int64", (3,), [1, 0, 3])], ["p"]),
    ("crossentropy_categorical_1hot_grad",
     "nnet.crossentropy_categorical_1hot_grad(g, p, y)",
     [("g", "float64", (3,), None), ("p", "float64", P, probs(P)),
      ("y", "int64", (3,), [1, 0, 3])], []),
    ("categorical_crossentropy_int", "nnet.categorical_crossentropy(p, y)",
     [("p", "float64", P, probs(P)), ("y", "int32", (3,), [2, 2, 0])], ["p"]),
    ("categorical_crossentropy_dist", "nnet.categorical_crossentropy(p, t)",
     [("p", "float64", P, probs(P)), ("t", "float64", P, probs(P)[::-1].ravel().tolist())],
     ["p", "t"]),
    ("softmax_grad_legacy", "nnet.softmax_grad_legacy(g, s)",
     [("g", "float64", P, None), ("s", "float64", P, probs(P))], []),
    ("confusion_matrix", "nnet.confusion_matrix(a, p)",
     [("a", "int64", (8,), [1, 3, 3, 0, 1, 7, 3, 0]),
      ("p", "int64", (8,), [1, 3, 0, 0, 7, 7, 3, 1])], []),
    # (Aesara's gradients of the prepend ops fail: their grad returns a variable, not a list.)
    ("prepend_0_to_each_row", "nnet.prepend_0_to_each_row(x)", [("x", "float64", P, None)],
     []),
    ("prepend_1_to_each_row", "nnet.prepend_1_to_each_row(x)", [("x", "float64", P, None)],
     []),
    ("prepend_scalar_to_each_row", "nnet.prepend_scalar_to_each_row(v, x)",
     [("v", "float64", (), [2.5]), ("x", "float64", P, None)], []),
    ("h_softmax", "nnet.h_softmax(x, 4, 5, 2, 3, W1, b1, W2, b2)",
     [("x", "float64", (4, 3), None), ("W1", "float64", (3, 2), None),
      ("b1", "float64", (2,), None), ("W2", "float64", (2, 3, 3), None),
      ("b2", "float64", (2, 3), None)], ["x", "W1", "b1", "W2", "b2"]),
    ("h_softmax_target", "nnet.h_softmax(x, 4, 5, 2, 3, W1, b1, W2, b2, t)",
     [("x", "float64", (4, 3), None), ("W1", "float64", (3, 2), None),
      ("b1", "float64", (2,), None), ("W2", "float64", (2, 3, 3), None),
      ("b2", "float64", (2, 3), None), ("t", "int64", (4,), [0, 4, 2, 1])],
     ["x", "W1", "b1", "W2", "b2"]),
    ("neibs2images_valid", "neighbours.neibs2images(n, (2, 3), (2, 2, 4, 6))",
     [("n", "float64", (16, 6), None)], ["n"]),
    # (Aesara cannot differentiate this one: its concatenate's gradient fails on the padding.)
    ("neibs2images_ignore_borders",
     "neighbours.neibs2images(n, (2, 2), (1, 2, 5, 5), mode='ignore_borders')",
     [("n", "float64", (8, 4), None)], []),
]


def value_of(dtype, shape, values):
    if values is None:
        return VALUES(shape, dtype)
    return np.asarray(values, dtype=dtype).reshape(shape)


def outputs_of(expr):
    return list(expr) if isinstance(expr, (tuple, list)) else [expr]


def nnet_cases():
    env = {"nnet": nnet, "bn": batchnorm, "sigm": sigm, "neighbours": neighbours, "at": at,
           "np": np}
    cases = []
    for name, expr, inputs, wrt in CASES:
        vars_, vals = {}, {}
        for iname, dtype, shape, values in inputs:
            vars_[iname] = at.tensor(dtype, shape=(None,) * len(shape), name=iname)
            vals[iname] = value_of(dtype, shape, values)
        outs = outputs_of(eval(expr, dict(env, **vars_)))
        ins = [vars_[i[0]] for i in inputs]
        results = aesara.function(ins, outs)(*[vals[i[0]] for i in inputs])
        if name.startswith("ultra_fast_sigmoid"):
            # In pure-Python mode Aesara's Elemwise runs the op's nfunc_spec, scipy's exact
            # expit; its C code and its impl compute the piecewise approximation, which is
            # ultra_fast_sigmoid's meaning: the reference is the impl, element by element.
            x = vals["x"]
            results = [np.array([sigm.UltraFastScalarSigmoid.st_impl(v) for v in x.ravel()],
                                dtype=x.dtype).reshape(x.shape)]
        case = {"name": name, "expr": expr,
                "inputs": [[i[0], i[1], list(vals[i[0]].shape), vals[i[0]].ravel().tolist()]
                           for i in inputs],
                "outputs": [[str(r.dtype), list(r.shape), r.ravel().tolist()] for r in results],
                "ops": [str(o.owner.op) if o.owner is not None else None for o in outs],
                "grads": {}}
        if wrt:
            cost = 0
            # (batch_normalization_train: Aesara's AbstractBatchNormTrain.L_op uses the
            # normalized output's gradient only, dropping those of mean and invstd, and its
            # gradient through the new running averages fails: the cost is the output's.)
            n_cost = 1 if name.startswith("bn_train") else len(outs)
            for o, r in list(zip(outs, results))[:n_cost]:
                if r.dtype.kind == "f":
                    cost = cost + (o * WEIGHTS(r.size).reshape(r.shape)).sum()
            try:
                grads = aesara.grad(cost, [vars_[w] for w in wrt])
            except Exception as e:
                raise RuntimeError("case %s: %s" % (name, e)) from e
            gvals = aesara.function(ins, grads, on_unused_input="ignore")(
                *[vals[i[0]] for i in inputs])
            case["grads"] = {w: g.ravel().tolist() for w, g in zip(wrt, gvals)}
        cases.append(case)
    with open(os.path.join(HERE, "aesara_nnet_more.json"), "w") as f:
        json.dump({"aesara": aesara.__version__,
                   "weights": "((i * 7) % 11 - 5) / 4 for the i-th element of each output",
                   "cases": cases}, f, indent=0)
        f.write("\n")


# The cases of Aesara's dedicated ops (core/ops/nnet_xent_test.cc reads them).
XENT_OPS = ["softmax_with_bias", "crossentropy_softmax_argmax_1hot_with_bias",
            "crossentropy_softmax_1hot_with_bias_dx", "crossentropy_categorical_1hot",
            "crossentropy_categorical_1hot_grad"]


def xent_cases():
    lines = ["# Aesara %s: function|inputs (dtype;shape;values)...|outputs (dtype;shape;values)"
             "... (each part ;-separated, values ,-separated; the function of "
             "aesara.tensor.nnet applied to the inputs)" % aesara.__version__]
    extra = [  # float32, a broadcastable dy, one row
        ("softmax_with_bias", [("x", "float32", (2, 3), None), ("b", "float32", (3,), None)]),
        ("crossentropy_softmax_argmax_1hot_with_bias",
         [("x", "float32", (1, 5), None), ("b", "float32", (5,), None),
          ("y", "int32", (1,), [4])]),
        ("crossentropy_softmax_1hot_with_bias_dx",
         [("d", "float64", (1,), [0.5]), ("s", "float64", P, probs(P)),
          ("y", "int64", (3,), [1, 2, 3])]),
        ("crossentropy_categorical_1hot",
         [("p", "float32", P, probs(P)), ("y", "int8", (3,), [3, 3, 0])]),
    ]
    cases = [(c[1].split("(")[0].split(".")[-1], c[2]) for c in CASES
             if c[1].split("(")[0].split(".")[-1] in XENT_OPS] + extra
    for fn, inputs in cases:
        vars_ = [at.tensor(d, shape=(None,) * len(s), name=n) for n, d, s, _ in inputs]
        vals = [value_of(d, s, v) for _, d, s, v in inputs]
        outs = outputs_of(getattr(nnet, fn)(*vars_))
        results = aesara.function(vars_, outs)(*vals)
        part = lambda a: "%s;%s;%s" % ((a.dtype,) + fmt(a))  # noqa: E731
        lines.append("|".join([fn] + [part(v) for v in vals] + [part(r) for r in results]))
    with open(os.path.join(HERE, "aesara_nnet_xent.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


def rewrite_cases():
    """Aesara's FAST_RUN graphs of the expressions of core/passes/nnet_rules_test.cc's
    GoldenGraphs (whose Kiln graphs are tests/golden/nnet_rewrites.txt), for comparison."""
    import io
    x, b, y = at.dmatrix("x"), at.dvector("b"), at.lvector("y")
    cost = nnet.crossentropy_categorical_1hot(nnet.softmax(x + b), y).mean()
    cases = [
        ("softmax(x + b)", [nnet.softmax(x + b)]),
        ("crossentropy_categorical_1hot(softmax(x + b), y)",
         [nnet.crossentropy_categorical_1hot(nnet.softmax(x + b), y)]),
        ("crossentropy_categorical_1hot(softmax(x), y)",
         [nnet.crossentropy_categorical_1hot(nnet.softmax(x), y)]),
        ("mean of it with its gradients", [cost] + aesara.grad(cost, [x, b])),
        ("argmax(softmax(x + b), 1)", [at.argmax(nnet.softmax(x + b), axis=1)]),
    ]
    # The tutorials' negative log-likelihood written with advanced indexing
    # (local_advanced_indexing_crossentropy_onehot and _grad), as TutorialCosts in
    # core/passes/nnet_rules_test.cc builds it, each with its gradients.
    rows = at.arange(y.shape[0])
    tutorial = [
        ("-mean(log(softmax(x + b))[arange, y])", -at.mean(at.log(nnet.softmax(x + b))[rows, y])),
        ("-mean(log(softmax(x + b)[arange, y]))", -at.mean(at.log(nnet.softmax(x + b)[rows, y]))),
        ("-sum(log(softmax(x))[arange, y])", -at.sum(at.log(nnet.softmax(x))[rows, y])),
        ("-mean(log(softmax_with_bias(x, b))[arange, y])",
         -at.mean(at.log(nnet.softmax_with_bias(x, b))[rows, y])),
        ("-mean(log_softmax(x + b)[arange, y])",  # Aesara leaves this one unfused
         -at.mean(at.special.log_softmax(x + b, axis=1)[rows, y])),
        ("-sum(log(softmax(x + b)[arange, y]) * w)",
         -at.sum(at.log(nnet.softmax(x + b)[rows, y]) * at.cast(y + 1, "float64"))),
    ]
    for name, c in tutorial:
        wrt = [x, b] if "b" in name else [x]
        cases.append((name + " with its gradients", [c] + aesara.grad(c, wrt)))
    text = io.StringIO()
    text.write("# Aesara %s, FAST_RUN, aesara.dprint(f) of each function\n" % aesara.__version__)
    for name, outs in cases:
        f = aesara.function([x, b, y], outs, on_unused_input="ignore")
        text.write("== %s\n" % name)
        aesara.dprint(f, file=text)
    with open(os.path.join(HERE, "aesara_nnet_rewrites.txt"), "w") as f:
        f.write(text.getvalue())


def main():
    neighbour_cases()
    nnet_cases()
    xent_cases()
    rewrite_cases()


if __name__ == "__main__":
    main()

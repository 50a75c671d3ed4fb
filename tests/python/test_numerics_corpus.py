"""The corpus of numerically dangerous expressions (tests/golden/numerics): kiln's values and
gradients, computed by a real server, against Aesara 2.9.4's and against mpmath references
(golden.json, written by generate.py; Aesara is not needed here).

For every expression, input and dtype, value and gradient: kiln's result is finite wherever
Aesara's is; and wherever the reference is a finite number of that dtype, kiln is within
ULP_TOLERANCE units in the last place of it, or, where rounded intermediate arguments (x / 3 + 1)
put even Aesara further off, within AESARA_FACTOR times Aesara's error.

The special functions (corpus.SPECIAL, issue 37), values only: wherever the reference is a
finite number of the dtype, kiln is within ULP_TOLERANCE ulp of it or no further off than
Aesara is there; where it is an infinity, kiln gives that infinity unless Aesara does not
either."""
import json
import math
import os
import sys

import numpy as np
import pytest

import kiln
import kiln.tensor as kt

HERE = os.path.dirname(os.path.abspath(__file__))
NUMERICS = os.path.join(HERE, "..", "golden", "numerics")
sys.path.insert(0, NUMERICS)
import corpus  # noqa: E402
from structure import structure  # noqa: E402
from special_kiln import special_values  # noqa: E402
from ulp import ulp_error as _ulp_error  # noqa: E402

with open(os.path.join(NUMERICS, "golden.json")) as _f:
    GOLDEN = json.load(_f)

# Units in the last place of the dtype, against the correctly rounded reference.
ULP_TOLERANCE = {"float64": 8, "float32": 8}
AESARA_FACTOR = 4


def namespace(dtype):
    ns = {}
    for mod in (kt, kt.math, kt.special):
        ns.update({k: v for k, v in vars(mod).items() if not k.startswith("_")})
    ns.update(x=kt.vector("x", dtype=dtype), y=kt.vector("y", dtype=dtype),
              y01=kt.vector("y01", dtype=dtype), X=kt.matrix("X", dtype=dtype),
              Y1=kt.matrix("Y1", dtype=dtype))
    return ns


def arguments(kind, dtype):
    d = np.dtype(dtype)
    if kind == "elementwise":
        return [np.array(corpus.X_VALUES, d), np.array(corpus.Y_VALUES, d),
                np.array(corpus.Y01_VALUES, d), np.zeros((1, 3), d), np.zeros((1, 3), d)]
    return [np.zeros(1, d)] * 3 + [np.array(corpus.X_ROWS, d), np.array(corpus.Y1_ROWS, d)]


def kiln_function(case):
    """The compiled [expression, gradient of its sum], as Aesara's was compiled for golden.json."""
    ns = namespace(case["dtype"])
    out = eval(case["expr"], ns)
    wrt = ns["x"] if case["kind"] == "elementwise" else ns["X"]
    g = kiln.grad(out.sum(), wrt)
    ins = [ns[n] for n in ("x", "y", "y01", "X", "Y1")]
    return kiln.function(ins, [out, g], on_unused_input="ignore")


def kiln_values(case, f):
    value, grad = f(*arguments(case["kind"], case["dtype"]))
    return {"value": np.ravel(value).tolist(), "grad": np.ravel(grad).tolist()}


def ulp_error(got, want, dtype):
    """|got - want| in units in the last place of want in dtype (0 for equal infinities)."""
    t = np.dtype(dtype).type
    if got == want:
        return 0.0
    if not math.isfinite(got):
        return math.inf
    return abs(got - want) / float(np.spacing(t(abs(want))))


def problems(case, got):
    """The inputs where kiln is not finite though Aesara is, or is far from the reference."""
    dtype = case["dtype"]
    largest = float(np.finfo(dtype).max)
    out = []
    for what in ("value", "grad"):
        for i, (k, a, r) in enumerate(zip(got[what], case["aesara"][what],
                                          case["reference"][what])):
            if math.isfinite(a) and not math.isfinite(k):
                out.append("%s[%d]: kiln %r where Aesara gives %r" % (what, i, k, a))
            elif math.isfinite(r) and abs(r) <= largest:
                err = ulp_error(k, r, dtype)
                aesara_err = ulp_error(a, r, dtype)
                if err > max(ULP_TOLERANCE[dtype], AESARA_FACTOR * aesara_err):
                    out.append("%s[%d]: kiln %r, reference %r (%.3g ulp; Aesara %r)" %
                               (what, i, k, r, err, a))
    return out


CASES = GOLDEN["cases"]

# The cases where kiln is known to fall short of the rule above, each with the reason (measured,
# see the file): expected to fail, strictly, so that a fix must take its entry out; an entry with
# "strict": false fails only on some instruction sets (its reason says which).
with open(os.path.join(NUMERICS, "known_differences.json")) as _f:
    KNOWN = {(k["expr"], k["dtype"]): (k["why"], k.get("strict", True)) for k in json.load(_f)}


def _param(case):
    why, strict = KNOWN.get((case["expr"], case["dtype"]), (None, True))
    marks = [pytest.mark.xfail(strict=strict, reason=why)] if why else []
    return pytest.param(case, marks=marks, id="%s %s" % (case["dtype"], case["expr"]))


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_corpus_case(server, case):
    f = kiln_function(case)
    found = problems(case, kiln_values(case, f))
    assert not found, "%s (%s):\n  %s" % (case["expr"], case["dtype"], "\n  ".join(found))


SPECIAL = GOLDEN["special"]


def special_problems(case, got):
    """The values where kiln is further from the reference than the rule allows."""
    dtype, aesara = case["dtype"], case["aesara_ulp"]
    width = len(case["reference"]) // len(case["points"])
    out = []
    for i, (k, r) in enumerate(zip(got, case["reference"])):
        if math.isnan(r):
            continue  # mpmath's precisions disagree, or the function is undefined there
        err = _ulp_error(k, r, dtype)
        peer = aesara[i] if aesara is not None else 0.0
        if err > max(ULP_TOLERANCE[dtype], peer):
            out.append("at %s: kiln %r, reference %r (%.3g ulp; Aesara %s)" % (
                case["points"][i // width], k, r, err,
                "%.3g ulp" % peer if aesara is not None else "has none"))
    return out


@pytest.mark.parametrize("case", [_param(c) for c in SPECIAL])
def test_special_function(server, case):
    found = special_problems(case, special_values(case))
    assert not found, "%s (%s):\n  %s" % (case["expr"], case["dtype"], "\n  ".join(found))


def test_corpus_is_complete():
    """golden.json holds every expression of corpus.py in every dtype, and a few hundred, and
    every special function at every point in every dtype."""
    want = {(e, d) for e, _, _ in corpus.expressions() for d in corpus.DTYPES}
    assert {(c["expr"], c["dtype"]) for c in CASES} == want
    assert len(want) >= 400
    special = {(e, d): p for _, e, p in corpus.SPECIAL for d in corpus.DTYPES}
    assert {(c["expr"], c["dtype"]): len(c["points"]) for c in SPECIAL} == {
        k: len(p) for k, p in special.items()}
    assert set(KNOWN) <= want | set(special)


# Main cases whose optimized value differs from Aesara's on purpose, and why.
_LOG_SIGMOID = ("Aesara leaves log(1 / (1 + exp(-x))) as log(sigmoid(x)) (-inf from x = -745): "
                "stabilize sees log(sigmoid(x) * 1); kiln's -softplus(-x) is finite")
_LOG_ERFC = ("kiln's log(erfcx(x)) - x**2 is exact for every x > 0; Aesara switches to an "
             "asymptotic series at x = 26.64")
_LOGSUMEXP = ("kiln tests the maximum for inf once, outside the sum; Aesara inside it, per term "
              "(equal values)")
STRUCTURE_DIFFERS = {
    "1 - sigmoid(x)": "kiln's sigmoid(-x): Aesara's local_1msigmoid refuses a sigmoid that has other "
                      "clients (the gradient)",
    "log(1 / (1 + exp(-x)))": _LOG_SIGMOID,
    "-y01 * log(1 / (1 + exp(-x))) - (1 - y01) * log(1 - 1 / (1 + exp(-x)))": _LOG_SIGMOID,
    "log1p(-exp(-abs(x)))": "kiln's log1mexp: Aesara's log1pmexp_to_log1mexp needs a literal neg, "
                             "which its canonical form (-1 * t) does not have",
    "sqrt(x ** 2)": "kiln's abs(x) (PyTensor's local_sqrt_sqr): Aesara 2.9.4 has no rule and "
                    "overflows from |x| = 1e154",
    "log(erfc(x))": _LOG_ERFC,
    "log(1 + erf(x))": _LOG_ERFC + " (1 + erf(x) is erfc(-x))",
    "log(exp(X).sum(axis=1))": _LOGSUMEXP,
    "logsumexp(X, axis=1)": _LOGSUMEXP,
}

MAIN = [c for c in CASES if c["aesara_dprint"] and c["dtype"] == "float64"]


@pytest.mark.parametrize("case", MAIN, ids=[c["expr"] for c in MAIN])
def test_optimized_graph_as_aesara(server, case):
    """The optimized expression has Aesara's structure (structure.py): the same stable forms. The
    gradients are compared by value above; their graphs are arranged differently."""
    ours = structure(kiln.printing.debugprint(kiln_function(case), file="str")).split("\n")[0]
    theirs = structure(case["aesara_dprint"]).split("\n")[0]
    if case["expr"] in STRUCTURE_DIFFERS:
        assert ours != theirs, "now as Aesara's: take it out of STRUCTURE_DIFFERS"
    else:
        assert ours == theirs, "kiln:   %s\nAesara: %s" % (ours, theirs)

"""The corpus of numerically dangerous expressions (issue 14): the rules' patterns composed with
argument forms, each a string in the API that Aesara and kiln share, with the input values they
are evaluated at. Used by generate.py (which runs Aesara 2.9.4 and mpmath to write golden.json)
and by tests/python/test_numerics_corpus.py (which runs kiln against golden.json)."""

# Patterns in one argument t: the forms the stabilize and specialize rules recognise, and
# compositions of them.
UNARY = [
    "1 / (1 + exp(-{t}))",
    "exp({t}) / (1 + exp({t}))",
    "1 / (1 + exp({t}))",
    "2 / (1 + exp({t}))",
    "1 - sigmoid({t})",
    "sigmoid(-{t})",
    "exp({t}) * sigmoid(-{t})",
    "exp(-{t}) * sigmoid({t}) * 3",
    "sigmoid({t}) * sigmoid(-{t})",
    "log(sigmoid({t}))",
    "log(1 - sigmoid({t}))",
    "log1p(-sigmoid({t}))",
    "log(1 / (1 + exp(-{t})))",
    "log(1 - 1 / (1 + exp(-{t})))",
    "log(1 + exp({t}))",
    "log1p(exp({t}))",
    "softplus({t})",
    "log(sigmoid({t})) + log(1 - sigmoid({t}))",
    "log1p(-exp(-abs({t})))",
    "log(1 - exp(-abs({t})))",
    "exp({t}) - 1",
    "(exp({t}) - 1) / {t}",
    "log(1 + abs({t}))",
    "log(exp({t}) + exp(-{t}))",
    "log(exp({t}) + exp(2 * {t}) + exp(3))",
    "log(exp(abs({t}) + 1) - exp(abs({t})))",
    "sqrt({t} ** 2)",
    "{t} / abs({t})",
    "(3 * {t}) / {t}",
    "({t} * {t} * 2) / {t}",
    "log(erfc({t}))",
    "1 + erf({t})",
    "1 - erf({t})",
    "erf({t}) - 1",
    "1 - erfc({t})",
    "log(1 + erf({t}))",
    "{t} ** 2 + {t} ** -2",
    "{t} ** 7",
    "abs({t}) ** 0.5",
    "abs({t}) ** -0.5",
]

# Patterns in t and a second input y.
BINARY = [
    # binary cross-entropy on a sigmoid, as the tutorial writes it and with sigmoid itself
    "-y01 * log(1 / (1 + exp(-{t}))) - (1 - y01) * log(1 - 1 / (1 + exp(-{t})))",
    "-(y01 * log(sigmoid({t})) + (1 - y01) * log(1 - sigmoid({t})))",
    "log(exp({t}) + exp(y))",
    "log(exp({t}) - exp({t} - abs(y) - 1))",
    "exp({t}) / (1 + exp({t})) * y",
]

# The argument forms substituted for t.
ARGUMENTS = ["x", "-x", "2 * x", "x - 2", "x / 3 + 1"]

# Row-wise patterns on a matrix X (softmax family): value and gradient of the sum.
ROWS = [
    "log(softmax(X, axis=1))",
    "log_softmax(X, axis=1)",
    "exp(X) / exp(X).sum(axis=1, keepdims=True)",
    "log(exp(X).sum(axis=1))",
    "logsumexp(X, axis=1)",
    "-(Y1 * log(softmax(X, axis=1))).sum(axis=1)",
]

X_VALUES = [float("-inf"), -1000.0, -745.2, -710.0, -100.0, -40.0, -37.5, -30.0, -20.0, -5.0,
            -1.0, -1e-5, -1e-300, -0.0, 0.0, 1e-300, 1e-5, 0.5, 1.0, 5.0, 18.5, 20.0, 30.0, 33.5,
            37.5, 40.0, 100.0, 710.0, 745.2, 1000.0, float("inf")]
# y for the two-input patterns: the extremes in another order; y01 (targets) in [0, 1].
Y_VALUES = X_VALUES[::-1]
Y01_VALUES = [(0.0, 1.0, 0.25, 0.5, 1.0)[i % 5] for i in range(len(X_VALUES))]
# Rows of X for the softmax family, and one-hot targets Y1.
X_ROWS = [[1000.0, 0.0, -1000.0], [-1000.0, -1000.0, -999.0], [0.0, 0.0, 0.0],
          [800.0, 800.0, 799.0], [1e-300, -1e-300, 0.0], [-745.0, 0.0, 745.0],
          [30.0, -30.0, 1.0], [float("-inf"), 0.0, 1.0]]
Y1_ROWS = [[(1.0 if j == i % 3 else 0.0) for j in range(3)] for i in range(len(X_ROWS))]

DTYPES = ["float64", "float32"]


def expressions():
    """(expression, kind, main) for every case: kind is "elementwise" or "rows"; main marks a
    pattern on x itself (or a row pattern), whose optimized graph is compared with Aesara's."""
    out, seen = [], set()
    for p in UNARY + BINARY:
        for a in ARGUMENTS:
            expr = p.format(t="(%s)" % a if " " in a else a)
            if expr not in seen:  # 1 / (1 + exp(t)) at -x is the first pattern at x
                seen.add(expr)
                out.append((expr, "elementwise", a == "x"))
    out += [(r, "rows", True) for r in ROWS]
    return out


# The special functions (issue 37): each an expression in the vectors a, b, c, d (one point is
# one index into them), and its points, chosen at each function's regimes: tiny, huge, near poles
# and zeros, and both sides of the switches between series, continued fractions and asymptotic
# expansions (Boost.Math's, and the ones of core/ops/special_math.h). Every point is evaluated in
# each of DTYPES, its arguments rounded to the dtype. log_softmax's points are rows (a, b, c).
_GAMMAINC = [(0.001, 0.5), (0.5, 1e-5), (0.5, 0.5), (0.5, 3.0), (1.0, 1.0), (2.5, 0.1),
             (2.5, 2.0), (2.5, 10.0), (10.0, 5.0), (10.0, 9.9), (10.0, 11.0), (10.0, 30.0),
             (30.5, 25.0), (100.0, 90.0), (100.0, 101.0), (100.0, 130.0), (1000.0, 990.0),
             (1e5, 100100.0), (20.0, 0.01), (0.2, 40.0)]
_GAMMAINCINV = [(0.1, 1e-10), (0.1, 0.5), (0.5, 0.01), (0.5, 0.5), (1.0, 0.3), (3.0, 1e-10),
                (3.0, 0.9), (10.0, 0.01), (10.0, 0.5), (10.0, 0.999999), (100.0, 0.5),
                (1000.0, 0.05), (0.01, 0.99), (2.5, 1e-300)]
_GAMMAU = [(0.5, 0.5), (1.0, 2.0), (2.5, 0.1), (2.5, 10.0), (10.0, 9.9), (10.0, 30.0),
           (30.5, 25.0), (0.2, 40.0), (0.001, 1.0), (100.0, 101.0), (170.0, 150.0)]
_BETAINC = [(0.5, 0.5, 0.5), (1.0, 1.0, 0.3), (2.0, 3.0, 0.4), (0.1, 10.0, 0.01),
            (10.0, 0.1, 0.99), (50.0, 50.0, 0.5), (50.0, 50.0, 0.45), (200.0, 300.0, 0.4),
            (0.001, 0.001, 0.5), (5.0, 2.0, 1e-5), (5.0, 2.0, 0.999), (1000.0, 10.0, 0.99),
            (0.5, 30.0, 0.2), (30.0, 0.5, 0.8), (3.5, 7.25, 0.6), (1e4, 1e4, 0.501)]
_BETAINCINV = [(0.5, 0.5, 0.5), (2.0, 3.0, 0.1), (2.0, 3.0, 0.9), (0.1, 10.0, 0.5),
               (10.0, 0.1, 0.5), (50.0, 50.0, 0.01), (200.0, 300.0, 0.99), (1.0, 1.0, 0.3),
               (5.0, 2.0, 1e-10), (0.5, 30.0, 0.999), (0.01, 5.0, 0.3), (1000.0, 10.0, 0.5)]
_BETALN = [(1.0, 1.0), (0.5, 0.5), (1e-5, 1.0), (2.0, 3.0), (10.0, 20.0), (100.0, 100.0),
           (1e5, 1e5), (1.5, 1e6), (300.0, 0.5), (1.0, 2.0), (1e-200, 1e-200), (3.0, 1e-8)]
_POLYGAMMA = [(0.0, 1e-5), (0.0, 1.4616321449683622), (0.0, 10.0), (0.0, -2.5), (1.0, 0.5),
              (1.0, 100.0), (1.0, -0.25), (2.0, 1e-5), (2.0, 2.5), (2.0, -1.5), (3.0, 1.0),
              (3.0, 1e4), (5.0, 0.5), (5.0, 30.0), (10.0, 2.0), (10.0, -0.5)]
_TRIGAMMA = [1e-8, 0.1, 0.5, 1.0, 1.5, 2.0, 5.0, 10.0, 100.0, 1e6, -0.5, -1.5, -10.3]
_I01 = [0.0, 1e-5, 0.5, 1.0, 5.0, 15.0, 24.9, 25.0, 25.1, 100.0, 700.0, -3.0, -25.5]
_IV = [(0.0, 1e-3), (0.0, 30.0), (0.5, 1.0), (1.0, 10.0), (2.5, 1e-3), (2.5, 5.0), (10.0, 1.0),
       (10.0, 30.0), (50.0, 10.0), (50.0, 100.0), (-0.5, 2.0), (-2.5, 3.0), (2.0, -5.0),
       (3.0, -5.0), (0.0, 500.0), (100.0, 700.0)]
_IVE = _IV + [(0.0, 1e4), (1.0, 2e4), (1.0, -800.0)]
_KV = [(0.0, 1e-3), (0.0, 1.0), (0.5, 0.5), (1.0, 2.0), (1.0, 1e-5), (2.5, 5.0), (10.0, 1.0),
       (10.0, 30.0), (50.0, 10.0), (50.0, 100.0), (-2.5, 3.0), (0.0, 100.0), (3.3, 600.0)]
_KVE = _KV + [(0.0, 1e4), (2.0, 2e4)]
_JV = [(0.0, 0.1), (0.0, 1.0), (0.0, 2.404825557695773), (0.0, 50.0), (1.0, 5.0), (1.0, 1000.0),
       (0.5, 10.0), (2.5, 1.0), (10.0, 1.0), (10.0, 10.0), (10.0, 30.0), (50.0, 40.0),
       (100.0, 100.0), (-0.5, 3.0), (-2.5, 7.0), (3.0, -4.0)]
_HYP2F1 = [(1.0, 1.0, 2.0, 0.5), (0.5, 0.5, 1.5, 0.25), (1.0, 2.0, 3.0, -0.5),
           (1.0, 1.0, 2.0, -10.0), (2.0, 3.0, 4.0, 0.95), (0.5, 1.0, 1.5, 0.99),
           (-3.0, 2.0, 1.5, 0.7), (5.0, -10.0, 3.0, 0.3), (0.1, 0.2, 0.3, 1.0),
           (10.0, 20.0, 35.0, 0.9), (2.0, 3.0, 7.0, -0.99), (1.0, 1.0, 2.0, -1000.0),
           (0.25, 0.75, 1.5, 0.5), (1.1, 2.2, 3.7, 0.95), (1.5, 2.5, 5.0, 0.999),
           (0.3, 0.6, 2.0, 0.1)]
_OWENS_T = [(0.0, 1.0), (0.5, 0.5), (1.0, 0.1), (2.0, 0.5), (5.0, 1.0), (10.0, 0.5), (0.1, 10.0),
            (1.0, 100.0), (-1.0, 0.5), (1.0, -0.5), (3.0, 0.99), (0.001, 0.001), (8.0, 0.01),
            (0.5, 1.0)]
_XLOGX = [0.0, 1e-300, 1e-5, 0.5, 1.0, 1.0000000001, 2.0, 1e10, 1e300]
_XLOGY0 = [(0.0, 0.0), (0.0, 5.0), (1.0, 1.0), (2.0, 1.000000000001), (1e-5, 1e5), (3.0, 0.5),
           (1e-300, 1e-300), (7.5, 1e300), (-2.0, 3.0)]
_LOGIT = [1e-300, 1e-10, 0.1, 0.25, 0.4, 0.5, 0.500000001, 0.75, 0.9, 0.999999,
          0.9999999999999999]
_LOG1PEXP = [-800.0, -40.0, -37.1, -36.9, -20.0, -1.0, 0.0, 1e-10, 1.0, 17.9, 18.1, 33.2, 33.4,
             40.0, 800.0]
_LOGADDEXP = [(0.0, 0.0), (1000.0, 1000.0), (-1000.0, -1000.0), (1.0, 2.0), (float("-inf"), 0.0),
              (700.0, 700.0), (1e-10, -1e-10), (-745.0, -745.0), (100.0, -100.0), (0.5, -0.5),
              (30.0, 1.0)]
_LOG_SOFTMAX = [(1000.0, 0.0, -1000.0), (0.0, 0.0, 0.0), (1.0, 2.0, 3.0), (800.0, 800.0, 799.0),
                (1e-300, -1e-300, 0.0), (30.0, -30.0, 1.0), (-745.0, 0.0, 745.0),
                (float("-inf"), 0.0, 1.0), (40.0, 1e-10, -40.0)]
_POCH = [(1.0, 5.0), (0.5, 3.0), (10.0, 0.5), (2.5, -1.5), (100.0, 10.0), (0.001, 2.0),
         (-2.5, 3.0), (150.0, 30.0), (3.0, 1e-10)]
_FACTORIAL = [0.0, 1.0, 5.0, 10.0, 20.0, 50.0, 100.0, 170.0, 0.5, 2.5]
_ERF = [-6.0, -1.0, -1e-10, 0.0, 1e-300, 0.1, 0.5, 0.84, 1.0, 2.0, 3.0, 5.9]
_ERFC = [-3.0, 0.0, 1e-10, 0.1, 0.5, 1.0, 5.0, 10.0, 26.0, 27.0]
_ERFCX = [-26.0, -20.7, -5.3, -1.0, 0.0, 0.3, 1.0, 1.99, 2.5, 5.3, 9.99, 10.0, 10.01, 50.0, 1e5,
          1e10]
_ERFINV = [-0.999999, -0.5, 0.0, 1e-10, 0.1, 0.5, 0.9, 0.999, 0.999999999999]
_ERFCINV = [1e-300, 1e-100, 1e-10, 0.01, 0.0624, 0.0626, 0.5, 1.0, 1.5, 1.99]
_GAMMA = [-2.5, -0.5, 1e-10, 0.5, 1.0, 2.5, 10.0, 30.5, 100.5, 170.5, -170.5]
_GAMMALN = [1e-300, 1e-10, 0.5, 1.0, 1.0001, 1.99999, 2.0, 10.0, 100.0, 1e5, 1e300, -0.5, -2.5]
_PSI = [-2.5, -0.5, 1e-10, 0.5, 1.0, 1.4616321449683622, 2.0, 10.0, 100.0, 1e10, -1e-10]


def _one(points):
    return [(p,) for p in points]


# (name, expression, points): the name is the function the points test.
SPECIAL = [
    ("gammainc", "gammainc(a, b)", _GAMMAINC),
    ("gammaincc", "gammaincc(a, b)", _GAMMAINC),
    ("gammaincinv", "gammaincinv(a, b)", _GAMMAINCINV),
    ("gammainccinv", "gammainccinv(a, b)", _GAMMAINCINV),
    ("gammau", "gammau(a, b)", _GAMMAU),
    ("gammal", "gammal(a, b)", _GAMMAU),
    ("betainc", "betainc(a, b, c)", _BETAINC),
    ("betaincinv", "betaincinv(a, b, c)", _BETAINCINV),
    ("betaln", "betaln(a, b)", _BETALN),
    ("polygamma", "polygamma(a, b)", _POLYGAMMA),
    ("tri_gamma", "tri_gamma(a)", _one(_TRIGAMMA)),
    ("i0", "i0(a)", _one(_I01)),
    ("i1", "i1(a)", _one(_I01)),
    ("iv", "iv(a, b)", _IV),
    ("ive", "ive(a, b)", _IVE),
    ("kv", "kv(a, b)", _KV),
    ("kve", "kve(a, b)", _KVE),
    ("jv", "jv(a, b)", _JV),
    ("hyp2f1", "hyp2f1(a, b, c, d)", _HYP2F1),
    ("owens_t", "owens_t(a, b)", _OWENS_T),
    ("xlogx", "xlogx(a)", _one(_XLOGX)),
    ("xlogy0", "xlogy0(a, b)", _XLOGY0),
    ("logit", "logit(a)", _one(_LOGIT)),
    ("log1pexp", "log1pexp(a)", _one(_LOG1PEXP)),
    ("logaddexp", "logaddexp(a, b)", _LOGADDEXP),
    ("log_softmax", "log_softmax(stack([a, b, c], axis=1), axis=1)", _LOG_SOFTMAX),
    ("poch", "poch(a, b)", _POCH),
    ("factorial", "factorial(a)", _one(_FACTORIAL)),
    ("erf", "erf(a)", _one(_ERF)),
    ("erfc", "erfc(a)", _one(_ERFC)),
    ("erfcx", "erfcx(a)", _one(_ERFCX)),
    ("erfinv", "erfinv(a)", _one(_ERFINV)),
    ("erfcinv", "erfcinv(a)", _one(_ERFCINV)),
    ("gamma", "gamma(a)", _one(_GAMMA)),
    ("gammaln", "gammaln(a)", _one(_GAMMALN)),
    ("psi", "psi(a)", _one(_PSI)),
]

SPECIAL_ARGS = "abcd"


def special_inputs(points, dtype):
    """The points as one numpy vector per argument (a, b, ...) of dtype."""
    import numpy as np
    return [np.array([p[i] for p in points], dtype) for i in range(len(points[0]))]

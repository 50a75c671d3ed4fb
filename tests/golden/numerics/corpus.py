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

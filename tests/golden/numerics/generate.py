"""Writes golden.json: the corpus (corpus.py) evaluated by Aesara 2.9.4 and by mpmath at 4000 bits,
and the special functions (corpus.SPECIAL) by Aesara and by mpmath at 256 and 512 bits (more
where those disagree; see special_value).

Run with Aesara importable (not needed by the tests, which only read golden.json), in two
shards at once, then once more to write golden.json:
    export PYTHONPATH=/path/to/aesara AESARA_FLAGS=cxx=
    /usr/bin/python3 generate.py 0 2 & /usr/bin/python3 generate.py 1 2; wait
    /usr/bin/python3 generate.py
The cases of an existing golden.json are kept as computed (delete it to recompute them all).
"""
import json
import math
import os
import sys
import warnings

import mpmath as mp
from mpmath.libmp import NoConvergence
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402
import special_mp  # noqa: E402
from ulp import round_to, ulp_error  # noqa: E402

# Enough bits that 1 - exp(-2000) is not 1: the corpus's arguments reach |t| = 2000.
PREC = 4000
mp.mp.prec = PREC
NAN = mp.mpf("nan")


def _real(f):
    """f on mpf, nan where the result is complex or undefined (as the float functions)."""
    def g(*args):
        if any(mp.isnan(a) for a in args):
            return NAN
        try:
            r = f(*args)
        except (ZeroDivisionError, ValueError):
            return NAN
        if isinstance(r, mp.mpc):
            return r.real if r.imag == 0 else NAN
        return r
    return g


def _log(v):
    if v < 0:
        return NAN
    return mp.ninf if v == 0 else mp.log(v)


def _sigmoid(t):
    return 1 / (1 + mp.exp(-t))


MP_NS = {
    "exp": _real(mp.exp), "log": _real(_log), "log1p": _real(lambda v: _log(1 + v)),
    "expm1": _real(mp.expm1), "sigmoid": _real(_sigmoid),
    "softplus": _real(lambda t: _log(1 + mp.exp(t))), "erf": _real(mp.erf),
    "erfc": _real(mp.erfc), "sqrt": _real(lambda v: NAN if v < 0 else mp.sqrt(v)),
    "abs": _real(mp.fabs),
}



def _eval(expr, x, y, y01):
    ns = dict(MP_NS, x=x, y=y, y01=y01)
    try:
        r = eval(expr, {"__builtins__": {}}, ns)
    except (ZeroDivisionError, ValueError, OverflowError):
        return NAN
    if isinstance(r, mp.mpc):
        return r.real if r.imag == 0 else NAN
    return r


def mp_value(expr, x, y, y01):
    """expr at PREC bits, or nan where half the bits give another double (cancellation)."""
    r = _eval(expr, x, y, y01)
    with mp.workprec(PREC // 2):
        half = _eval(expr, x, y, y01)
    same = (mp.isnan(r) and mp.isnan(half)) or to_float(r) == to_float(half)
    return r if same else NAN


def mp_grad(f, x):
    """d f / d x at x, or nan where x is not finite or f is not smooth there."""
    if not mp.isfinite(x):
        return NAN
    try:
        left = mp.diff(f, x, direction=-1)
        right = mp.diff(f, x, direction=1)
    except (ZeroDivisionError, ValueError):
        return NAN
    if isinstance(left, mp.mpc) or isinstance(right, mp.mpc) or not (mp.isfinite(left) and
                                                                     mp.isfinite(right)):
        return NAN
    # A kink (abs at 0): no derivative to compare with.
    if abs(left - right) > mp.mpf(2) ** -100 * (1 + abs(left)):
        return NAN
    return (left + right) / 2


def to_float(v):
    if mp.isnan(v):
        return float("nan")
    try:
        return float(v)
    except OverflowError:
        return math.copysign(float("inf"), v)


def _lse(r):
    finite = [v for v in r if v != mp.ninf]
    if not finite:
        return mp.ninf
    m = max(finite)
    return m + mp.log(mp.fsum(mp.exp(v - m) for v in finite))


ROW_REFERENCE = {
    "log(softmax(X, axis=1))": lambda r, y: [v - _lse(r) for v in r],
    "log_softmax(X, axis=1)": lambda r, y: [v - _lse(r) for v in r],
    "exp(X) / exp(X).sum(axis=1, keepdims=True)": lambda r, y: [mp.exp(v - _lse(r)) for v in r],
    "log(exp(X).sum(axis=1))": lambda r, y: [_lse(r)],
    "logsumexp(X, axis=1)": lambda r, y: [_lse(r)],
    "-(Y1 * log(softmax(X, axis=1))).sum(axis=1)":
        lambda r, y: [-mp.fsum(t * (v - _lse(r)) for t, v in zip(y, r) if t != 0)],
}


def reference(expr, kind, dtype):
    """The mpmath values and gradients of expr at the corpus's inputs rounded to dtype."""
    cast = lambda vals: [mp.mpf(float(np.dtype(dtype).type(v))) for v in vals]  # noqa: E731
    if kind == "elementwise":
        xs, ys, y01s = cast(corpus.X_VALUES), cast(corpus.Y_VALUES), cast(corpus.Y01_VALUES)
        values = [mp_value(expr, x, y, t) for x, y, t in zip(xs, ys, y01s)]
        grads = [mp_grad(lambda u: mp_value(expr, u, y, t), x) for x, y, t in zip(xs, ys, y01s)]
        return values, grads
    f = ROW_REFERENCE[expr]
    values, grads = [], []
    for row, y in zip(corpus.X_ROWS, corpus.Y1_ROWS):
        r = cast(row)
        values += f(r, y)
        for j in range(len(r)):
            def along(u, j=j):
                return mp.fsum(f(r[:j] + [u] + r[j + 1:], y))
            grads.append(mp_grad(along, r[j]))
    return values, grads


def aesara_values(expr, kind, dtype):
    import aesara
    import aesara.tensor as at
    ns = {}
    for mod in (at, at.math, at.special):
        ns.update({k: v for k, v in vars(mod).items() if not k.startswith("_")})
    x, y, y01 = at.vector("x", dtype=dtype), at.vector("y", dtype=dtype), at.vector("y01", dtype=dtype)
    X, Y1 = at.matrix("X", dtype=dtype), at.matrix("Y1", dtype=dtype)
    ns.update(x=x, y=y, y01=y01, X=X, Y1=Y1)
    out = eval(expr, ns)
    wrt = x if kind == "elementwise" else X
    g = aesara.grad(out.sum(), wrt)
    f = aesara.function([x, y, y01, X, Y1], [out, g], on_unused_input="ignore")
    d = np.dtype(dtype)
    if kind == "elementwise":
        args = [np.array(corpus.X_VALUES, d), np.array(corpus.Y_VALUES, d),
                np.array(corpus.Y01_VALUES, d), np.zeros((1, 3), d), np.zeros((1, 3), d)]
    else:
        args = [np.zeros(1, d)] * 3 + [np.array(corpus.X_ROWS, d), np.array(corpus.Y1_ROWS, d)]
    with np.errstate(all="ignore"):
        try:
            v, gv = f(*args)
        except (OverflowError, ZeroDivisionError):
            # Aesara's Python implementation raises where C gives inf (0 ** -1.5): nan there.
            v, gv = _elementwise(f, args) if kind == "elementwise" else (np.nan, np.nan)
    return ([float(a) for a in np.ravel(v)], [float(a) for a in np.ravel(gv)],
            aesara.printing.debugprint(f, file="str"))


def _elementwise(f, args):
    """f at one x (y, y01) at a time; nan where it raises."""
    values, grads = [], []
    for i in range(len(args[0])):
        try:
            v, g = f(*[a[i:i + 1] for a in args[:3]], *args[3:])
            values.append(float(v[0]))
            grads.append(float(g[0]))
        except (OverflowError, ZeroDivisionError):
            values.append(float("nan"))
            grads.append(float("nan"))
    return values, grads


# The precisions (bits) at which a special function's point is computed, in pairs: a point is
# kept at the first pair whose two values round to the same number of the dtype.
SPECIAL_PRECISIONS = [(256, 512), (1024, 2048)]


def _special_once(name, args, prec):
    with mp.workprec(prec):
        try:
            r = special_mp.REFERENCE[name](*[mp.mpf(a) for a in args])
        except (ZeroDivisionError, ValueError, OverflowError, NoConvergence):
            return [NAN]
        out = []
        for v in (r if isinstance(r, list) else [r]):
            if isinstance(v, mp.mpc):
                v = v.real if v.imag == 0 else NAN
            out.append(+v)
        return out


def special_value(name, args, dtype):
    """The function at args (already rounded to dtype) rounded to dtype: a list (one value, or a
    row for log_softmax), nan where two precisions disagree."""
    for lo, hi in SPECIAL_PRECISIONS:
        a = [round_to(to_float(v), dtype) for v in _special_once(name, args, lo)]
        b = [round_to(to_float(v), dtype) for v in _special_once(name, args, hi)]
        if len(a) == len(b) and all(x == y or (math.isnan(x) and math.isnan(y))
                                    for x, y in zip(a, b)):
            return a
    return [math.nan] * len(a)


def special_aesara(expr, points, dtype, width):
    """Aesara's values of expr at the points (raveled, width values a point), or None where
    Aesara lacks a name."""
    import aesara
    import aesara.tensor as at
    import aesara.tensor.xlogx as xlogx
    ns = {}
    for mod in (at, at.math, at.special, xlogx):
        ns.update({k: v for k, v in vars(mod).items() if not k.startswith("_")})
    names = corpus.SPECIAL_ARGS[:len(points[0])]
    ins = [at.vector(n, dtype=dtype) for n in names]
    ns.update(zip(names, ins))
    try:
        out = eval(expr, ns)
    except NameError:
        return None
    f = aesara.function(ins, out)
    args = corpus.special_inputs(points, dtype)
    with np.errstate(all="ignore"):
        try:
            return [float(v) for v in np.ravel(f(*args))]
        except (OverflowError, ZeroDivisionError, ValueError):
            values = []
            for i in range(len(points)):  # one point at a time: nan where Aesara raises
                try:
                    values += [float(v) for v in np.ravel(f(*[a[i:i + 1] for a in args]))]
                except (OverflowError, ZeroDivisionError, ValueError):
                    values += [math.nan] * width
            return values


def special_case(name, expr, points, dtype):
    """One special function in one dtype: its points rounded to dtype, mpmath's values, Aesara's
    values and Aesara's errors in ulp (None where Aesara lacks the function)."""
    pts = [[round_to(v, dtype) for v in p] for p in points]
    ref = [v for p in pts for v in special_value(name, p, dtype)]
    aesara_v = special_aesara(expr, points, dtype, len(ref) // len(pts))
    return {"name": name, "expr": expr, "dtype": dtype, "points": pts, "reference": ref,
            "aesara": aesara_v,
            "aesara_ulp": None if aesara_v is None else
            [ulp_error(a, r, dtype) for a, r in zip(aesara_v, ref)]}


def main():
    """generate.py [K N]: computes the cases K, K+N, ... into a cache (KILN_NUMERICS_CACHE,
    default /tmp), so that shards run in parallel and a stopped run resumes; once every case is
    cached, writes golden.json."""
    warnings.simplefilter("ignore")
    shard, shards = (int(sys.argv[1]), int(sys.argv[2])) if len(sys.argv) == 3 else (0, 1)
    cache_dir = os.environ.get("KILN_NUMERICS_CACHE", "/tmp")
    cached = {}
    for name in os.listdir(cache_dir):
        if name.startswith("kiln-numerics-") and name.endswith(".jsonl"):
            with open(os.path.join(cache_dir, name)) as f:
                for line in f:
                    c = json.loads(line)
                    cached[(c["expr"], c["dtype"])] = c
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden.json")
    if os.path.exists(path):  # keep what golden.json already holds
        with open(path) as f:
            golden = json.load(f)
        for c in golden["cases"]:
            cached.setdefault((c["expr"], c["dtype"]), c)
        for c in golden.get("special", []):
            key = "special " + c["expr"]
            cached.setdefault((key, c["dtype"]), dict(c, expr=key))
    todo = [(e, k, m, d) for e, k, m in corpus.expressions() for d in corpus.DTYPES]
    with open(os.path.join(cache_dir, "kiln-numerics-%d.jsonl" % shard), "a") as out:
        for i, (expr, kind, main, dtype) in enumerate(todo):
            if i % shards != shard or (expr, dtype) in cached:
                continue
            value, grad, dprint = aesara_values(expr, kind, dtype)
            ref_value, ref_grad = reference(expr, kind, dtype)
            c = {"expr": expr, "kind": kind, "dtype": dtype,
                 "aesara": {"value": value, "grad": grad},
                 "reference": {"value": [to_float(v) for v in ref_value],
                               "grad": [to_float(v) for v in ref_grad]},
                 "aesara_dprint": dprint if main and dtype == "float64" else None}
            out.write(json.dumps(c) + "\n")
            out.flush()
            cached[(expr, dtype)] = c
            print(i, dtype, expr, file=sys.stderr)
        special = [(n, e, p, d) for n, e, p in corpus.SPECIAL for d in corpus.DTYPES]
        for i, (name, expr, points, dtype) in enumerate(special):
            if i % shards != shard or ("special " + expr, dtype) in cached:
                continue
            c = special_case(name, expr, points, dtype)
            out.write(json.dumps(dict(c, expr="special " + expr)) + "\n")
            out.flush()
            cached[("special " + expr, dtype)] = dict(c, expr="special " + expr)
            print("special", dtype, expr, file=sys.stderr)
    if any((e, d) not in cached for e, _, _, d in todo) or any(
            ("special " + e, d) not in cached for _, e, _, d in special):
        return
    with open(path, "w") as f:
        json.dump({"generator": "Aesara 2.9.4 (rel-2.9.4), mpmath %s at %d bits" % (mp.__version__, PREC),
                   "cases": [cached[(e, d)] for e, _, _, d in todo],
                   "special_generator": "mpmath %s at %s bits" % (
                       mp.__version__, " then ".join("%d and %d" % p for p in SPECIAL_PRECISIONS)),
                   "special": [dict(cached[("special " + e, d)], expr=e)
                               for _, e, _, d in special]}, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()

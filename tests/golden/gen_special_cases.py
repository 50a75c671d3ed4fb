#!/usr/bin/python3
"""Writes tests/golden/special_cases.txt: reference values of Kiln's special-function scalar ops
(core/ops/special_*.cc), one case a line: op|dtype|arguments|expected.

Run with Debian's /usr/bin/python3 (SciPy 1.10.1, NumPy 1.24.2, mpmath 1.2.1):
    /usr/bin/python3 tests/golden/gen_special_cases.py
- The functions SciPy has (gammainc, betainc, jv, ive, kve, hyp2f1, owens_t, polygamma...) come
  from scipy.special, in float64 and in float32 (SciPy's float loops compute in double and round).
- gammau and gammal are Aesara 2.9.4's own products, gammaincc * gamma and gammainc * gamma.
- The derivatives wrt parameters (gammainc_der, gammaincc_der, betainc_der, hyp2f1_der), which
  SciPy lacks, are Aesara 2.9.4's own values (its scalar ops' impl, the series and continued
  fractions Kiln ports), with a fifth column: mpmath's numerical derivative at 30 digits, the
  truth those series approximate within their convergence tolerances. So this script runs with
  the Aesara oracle on the path:
    cd /tmp && . /tmp/aesara-oracle/env.sh
    /usr/bin/python3 /work/main/tests/golden/gen_special_cases.py
"""
import os

import mpmath as mp
import numpy as np
import scipy
import scipy.special as sp

aesara_math = None

mp.mp.dps = 30
NAN, INF = float("nan"), float("inf")


def d_gammainc(k, x, upper):
    f = (lambda kk: mp.gammainc(kk, x, mp.inf, regularized=True)) if upper else \
        (lambda kk: mp.gammainc(kk, 0, x, regularized=True))
    return float(mp.diff(f, mp.mpf(k)))


def d_betainc(a, b, x, wrt_a):
    if wrt_a:
        return float(mp.diff(lambda t: mp.betainc(t, b, 0, x, regularized=True), mp.mpf(a)))
    return float(mp.diff(lambda t: mp.betainc(a, t, 0, x, regularized=True), mp.mpf(b)))


def d_hyp2f1(a, b, c, z, wrt):
    args = [mp.mpf(a), mp.mpf(b), mp.mpf(c)]

    def f(t):
        v = list(args)
        v[int(wrt)] = t
        return mp.hyp2f1(v[0], v[1], v[2], z)
    return float(mp.diff(f, args[int(wrt)]))


# op: (reference function of float64 arrays or None for scalar mpmath ones, float32 too?, cases)
GAMMA_ARGS = [(0.5, 0.5), (1.0, 1.0), (2.5, 1.3), (3.0, 10.0), (10.0, 3.0), (0.1, 20.0),
              (25.0, 30.0), (100.0, 90.0), (1e-3, 1e-3), (7.5, 0.01), (40.0, 41.0),
              (0.0, 1.0), (1.0, 0.0), (0.0, 0.0), (-1.0, 1.0), (1.0, -1.0), (2.0, INF),
              (INF, 1.0), (NAN, 1.0)]
INV_ARGS = [(0.5, 0.3), (1.0, 0.5), (2.5, 0.01), (10.0, 0.9), (30.0, 0.999), (0.1, 0.5),
            (1.0, 0.0), (1.0, 1.0), (0.0, 0.5), (-1.0, 0.5), (2.0, 1.5), (2.0, -0.1)]
BETA_ARGS = [(2.0, 3.0, 0.3), (0.5, 0.5, 0.1), (5.0, 1.5, 0.9), (10.0, 20.0, 0.4),
             (0.1, 7.0, 0.001), (100.0, 50.0, 0.66), (1.0, 1.0, 0.0), (1.0, 1.0, 1.0),
             (1.0, 1.0, 1.5), (0.0, 1.0, 0.5), (-1.0, 1.0, 0.5), (2.0, 3.0, -0.1)]
BETAINV_ARGS = [(2.0, 3.0, 0.3), (0.5, 0.5, 0.1), (5.0, 1.5, 0.9), (10.0, 20.0, 0.4),
                (0.8, 7.0, 0.001), (1.0, 1.0, 0.0), (1.0, 1.0, 1.0), (0.0, 1.0, 0.5)]
BESSEL_ARGS = [(0.0, 1.0), (1.0, 2.5), (0.5, 3.0), (2.0, -1.5), (3.0, 10.0), (-0.5, 1.0),
               (-1.0, 2.0), (7.3, 4.1), (0.0, 0.0), (1.0, 0.0), (0.5, -1.0), (1.5, 30.0),
               (10.0, 0.5), (0.25, 100.0)]
IVE_ARGS = BESSEL_ARGS + [(0.0, 800.0), (2.0, -1e4), (1.0, 5e4), (0.0, INF)]
KVE_ARGS = [(0.0, 1.0), (1.0, 2.5), (0.5, 3.0), (-2.5, 3.0), (3.0, 10.0), (7.3, 4.1),
            (0.0, 800.0), (1.0, 5e4), (0.25, 1e-3), (1.0, 0.0), (0.5, -1.0), (0.0, INF)]
HYP_ARGS = [(1.0, 1.0, 2.0, 0.5), (0.5, 0.5, 1.0, 0.9), (1.5, 2.5, 4.0, -0.7),
            (1.0, 1.0, 2.0, -3.0), (0.3, 0.7, 2.2, 0.95), (2.0, 3.0, 6.5, 0.99),
            (-2.0, 1.0, -3.0, 0.5), (-3.0, 2.0, 1.5, 4.0), (1.0, 1.0, 3.0, 1.0),
            (1.0, 1.0, 2.0, 1.0), (1.0, 1.0, 2.0, 1.5), (1.0, 2.0, -1.0, 0.5),
            (0.2, 0.3, 0.4, -20.0), (1.0, 2.0, 3.0, 0.0)]
HYP_DER_ARGS = [(1.0, 1.0, 2.0, 0.5), (0.5, 0.5, 1.0, 0.3), (1.5, 2.5, 4.0, -0.7),
                (0.3, 0.7, 2.2, 0.8), (2.0, 3.0, 6.5, -0.2)]

CASES = {
    "tri_gamma": (lambda x: sp.polygamma(1, x), [(0.5,), (1.0,), (2.5,), (10.0,), (1e-5,),
                                                 (100.0,), (-1.5,), (0.0,), (-2.0,), (INF,)]),
    "polygamma": (sp.polygamma, [(0.0, 2.5), (1.0, 0.5), (2.0, 3.0), (3.0, -2.5), (5.0, 1.5),
                                 (1.0, 0.0), (2.0, 0.0), (0.5, 1.0), (-1.0, 1.0), (1.0, INF)]),
    "owens_t": (sp.owens_t, [(0.0, 1.0), (1.0, 0.0), (1.0, 2.0), (-1.0, -2.0), (0.5, 0.3),
                             (3.0, 10.0), (10.0, 0.5), (INF, 1.0), (1.0, INF)]),
    "gammainc": (sp.gammainc, GAMMA_ARGS),
    "gammaincc": (sp.gammaincc, GAMMA_ARGS),
    "gammau": (lambda k, x: sp.gammaincc(k, x) * sp.gamma(k), GAMMA_ARGS[:11]),
    "gammal": (lambda k, x: sp.gammainc(k, x) * sp.gamma(k), GAMMA_ARGS[:11]),
    "gammaincinv": (sp.gammaincinv, INV_ARGS),
    "gammainccinv": (sp.gammainccinv, INV_ARGS),
    "betainc": (sp.betainc, BETA_ARGS),
    "betaincinv": (sp.betaincinv, BETAINV_ARGS),
    "jv": (sp.jv, BESSEL_ARGS),
    "iv": (sp.iv, BESSEL_ARGS + [(0.0, 800.0)]),
    "ive": (sp.ive, IVE_ARGS),
    "kve": (sp.kve, KVE_ARGS),
    "hyp2f1": (sp.hyp2f1, HYP_ARGS),
    "gammainc_der": (None, [(k, x, d_gammainc(k, x, False)) for k, x in
                            [(0.5, 0.5), (1.0, 1.0), (2.5, 1.3), (3.0, 10.0), (10.0, 3.0),
                             (0.1, 20.0), (25.0, 30.0), (7.5, 0.01)]]),
    # (50, 45) and (100, 90): Aesara's alternating series cancels (3e20 for 0.046); Kiln's
    # switches to Gautschi's series there (the test accepts Kiln no further from mpmath).
    "gammaincc_der": (None, [(k, x, d_gammainc(k, x, True)) for k, x in
                             [(0.5, 0.5), (1.0, 1.0), (2.5, 1.3), (3.0, 10.0), (10.0, 3.0),
                              (0.1, 20.0), (25.0, 30.0), (7.5, 0.01), (50.0, 45.0),
                              (100.0, 90.0), (0.05, 1e-3)]]),
    "betainc_der": (None, [(a, b, x, w, d_betainc(a, b, x, w)) for a, b, x in
                           [(2.0, 3.0, 0.3), (0.5, 0.5, 0.1), (5.0, 1.5, 0.9), (10.0, 20.0, 0.4),
                            (1.5, 7.0, 0.05)] for w in (1.0, 0.0)]),
    "hyp2f1_der": (None, [(a, b, c, z, w, d_hyp2f1(a, b, c, z, w)) for a, b, c, z in HYP_DER_ARGS
                          for w in (0.0, 1.0, 2.0)]),
}


# mpmath at 30 digits, where it has the function: the truth for the accuracy table (the fifth
# column of float64 lines; the test reports the error in ulps against it).
def _mp(f):
    def g(*args):
        try:
            with mp.workdps(30):
                v = f(*[mp.mpf(a) for a in args])
            v = complex(v)
            return v.real if v.imag == 0 else None
        except (ValueError, ZeroDivisionError, TypeError, OverflowError):
            return None
    return g


TRUTH = {
    "tri_gamma": _mp(lambda x: mp.polygamma(1, x)),
    "polygamma": _mp(lambda n, x: mp.polygamma(n, x)),
    "gammainc": _mp(lambda k, x: mp.gammainc(k, 0, x, regularized=True)),
    "gammaincc": _mp(lambda k, x: mp.gammainc(k, x, mp.inf, regularized=True)),
    "gammau": _mp(lambda k, x: mp.gammainc(k, x, mp.inf)),
    "gammal": _mp(lambda k, x: mp.gammainc(k, 0, x)),
    "betainc": _mp(lambda a, b, x: mp.betainc(a, b, 0, x, regularized=True)),
    "jv": _mp(lambda v, x: mp.besselj(v, x)),
    "iv": _mp(lambda v, x: mp.besseli(v, x)),
    "ive": _mp(lambda v, x: mp.besseli(v, x) * mp.exp(-abs(x))),
    "kve": _mp(lambda v, x: mp.besselk(v, x) * mp.exp(x)),
    "hyp2f1": _mp(lambda a, b, c, z: mp.hyp2f1(a, b, c, z)),
    "owens_t": _mp(lambda h, a: mp.quad(lambda t: mp.exp(-h * h * (1 + t * t) / 2) / (1 + t * t),
                                        [0, a]) / (2 * mp.pi)),
}


def fmt(v):
    return repr(float(v))


def main():
    global aesara_math
    import aesara.scalar.math as aesara_math  # the oracle (see the docstring)
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "special_cases.txt")
    lines = ["# scipy %s, numpy %s, mpmath %s (tests/golden/gen_special_cases.py): "
             "op|dtype|arguments|expected" % (scipy.__version__, np.__version__, mp.__version__)]
    with np.errstate(all="ignore"):
        for op, (fn, cases) in CASES.items():
            for case in cases:
                if fn is None:
                    args, truth = case[:-1], case[-1]
                    ours = getattr(aesara_math, op).impl(*[bool(a) if op == "betainc_der" and i == 3
                                                           else int(a) if i == 4 else a
                                                           for i, a in enumerate(args)])
                    lines.append("%s|float64|%s|%s|%s" % (op, ",".join(map(fmt, args)), fmt(ours),
                                                          fmt(truth)))
                    continue
                for dtype in (np.float64, np.float32):
                    args = [dtype(a) for a in case]
                    value = fn(*[np.asarray(a) for a in args])
                    value = np.asarray(value).astype(dtype)
                    line = "%s|%s|%s|%s" % (op, np.dtype(dtype).name, ",".join(map(fmt, args)),
                                            fmt(value))
                    truth = TRUTH.get(op)
                    if dtype == np.float64 and truth and all(np.isfinite(case)):
                        t = truth(*case)
                        if t is not None and np.isfinite(t) and np.isfinite(value):
                            line += "|" + fmt(t)
                    lines.append(line)
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote", out, len(lines) - 1, "cases")


if __name__ == "__main__":
    main()

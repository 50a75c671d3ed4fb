"""The mpmath references of corpus.SPECIAL: each function at working precision on exact mpf
arguments (the dtype's rounded inputs), nan where the function is undefined or complex. Used by
generate.py, which evaluates every point at two precisions and keeps it only where both round to
the same double."""
import mpmath as mp
from mpmath.libmp import NoConvergence

NAN = mp.mpf("nan")


def _is_nonpos_int(v):
    return v <= 0 and v == mp.floor(v)


def _newton(f, df, x, lo=None, hi=None):
    """The root of f from x (a double close to it) by Newton's method at the working precision."""
    x = mp.mpf(x)
    eps = mp.mpf(2) ** (-mp.mp.prec + 8)
    for _ in range(200):
        step = f(x) / df(x)
        nx = x - step
        if lo is not None and nx <= lo:
            nx = (x + lo) / 2
        if hi is not None and nx >= hi:
            nx = (x + hi) / 2
        if abs(nx - x) <= eps * abs(nx):
            return nx
        x = nx
    raise NoConvergence("newton")


def _start(fn, *args):
    import scipy.special as sc
    return float(getattr(sc, fn)(*[float(v) for v in args]))


def gammaincinv(k, p):
    if k <= 0 or p < 0 or p > 1:
        return NAN
    if p == 0:
        return mp.mpf(0)
    if p == 1:
        return mp.inf
    pdf = lambda x: mp.exp((k - 1) * mp.log(x) - x - mp.loggamma(k))  # noqa: E731
    return _newton(lambda x: mp.gammainc(k, 0, x, regularized=True) - p, pdf,
                   _start("gammaincinv", k, p), lo=0)


def gammainccinv(k, q):
    if k <= 0 or q < 0 or q > 1:
        return NAN
    if q == 0:
        return mp.inf
    if q == 1:
        return mp.mpf(0)
    pdf = lambda x: -mp.exp((k - 1) * mp.log(x) - x - mp.loggamma(k))  # noqa: E731
    return _newton(lambda x: mp.gammainc(k, x, mp.inf, regularized=True) - q, pdf,
                   _start("gammainccinv", k, q), lo=0)


def betaincinv(a, b, y):
    if a <= 0 or b <= 0:
        return NAN
    if y <= 0:
        return mp.mpf(0)
    if y >= 1:
        return mp.mpf(1)
    lb = mp.log(mp.beta(a, b))
    pdf = lambda x: mp.exp((a - 1) * mp.log(x) + (b - 1) * mp.log1p(-x) - lb)  # noqa: E731
    return _newton(lambda x: mp.betainc(a, b, 0, x, regularized=True) - y, pdf,
                   _start("betaincinv", a, b, y), lo=0, hi=1)


def owens_t(h, a):
    """T(h, a) = 1/(2 pi) int_0^a exp(-h^2 (1 + x^2) / 2) / (1 + x^2) dx."""
    f = lambda x: mp.exp(-h * h * (1 + x * x) / 2) / (1 + x * x)  # noqa: E731
    # The integrand falls off over |x| ~ 1 / |h|: split there so that quadrature sees its scale.
    cuts = [mp.mpf(0)] + [c for c in (1 / abs(h) if h else None, 1) if c and c < abs(a)]
    cuts = sorted(set(cuts)) + [abs(a)]
    return mp.sign(a) * mp.quad(f, cuts) / (2 * mp.pi)


def polygamma(n, x):
    if n < 0 or n != mp.floor(n):
        return NAN
    if _is_nonpos_int(x):
        return mp.inf if n % 2 == 1 else NAN
    return mp.psi(int(n), x)


def _gamma(x):
    return mp.inf if _is_nonpos_int(x) else mp.gamma(x)


def _loggamma(x):
    """log|gamma(x)|, as scipy's gammaln."""
    return mp.inf if _is_nonpos_int(x) else mp.log(abs(mp.gamma(x)))


def _xlogy0(x, y):
    if x == 0:
        return mp.mpf(0)
    if y < 0:
        return NAN
    return mp.ninf * mp.sign(x) if y == 0 else x * mp.log(y)


def _logit(x):
    if x < 0 or x > 1:
        return NAN
    if x == 0:
        return mp.ninf
    return mp.inf if x == 1 else mp.log(x / (1 - x))


def _logsumexp(row):
    finite = [v for v in row if v != mp.ninf]
    if not finite:
        return mp.ninf
    m = max(finite)
    return m + mp.log(mp.fsum(mp.exp(v - m) for v in finite))


def _besseli(v, x):
    return mp.besseli(v, x)


def _erfcinv(y):
    if y <= 0 or y >= 2:
        return {0: mp.inf, 2: mp.ninf}.get(y, NAN)
    return mp.erfinv(1 - y) if y > mp.mpf("0.5") else _newton(
        lambda x: mp.erfc(x) - y, lambda x: -2 / mp.sqrt(mp.pi) * mp.exp(-x * x),
        _start("erfcinv", y))


def _erfinv(y):
    if abs(y) > 1:
        return NAN
    if abs(y) == 1:
        return mp.inf * y
    return mp.erfinv(y)


REFERENCE = {
    "gammainc": lambda k, x: mp.gammainc(k, 0, x, regularized=True),
    "gammaincc": lambda k, x: mp.gammainc(k, x, mp.inf, regularized=True),
    "gammaincinv": gammaincinv,
    "gammainccinv": gammainccinv,
    "gammau": lambda k, x: mp.gammainc(k, x, mp.inf),
    "gammal": lambda k, x: mp.gammainc(k, 0, x),
    "betainc": lambda a, b, x: mp.betainc(a, b, 0, x, regularized=True),
    "betaincinv": betaincinv,
    "betaln": lambda a, b: mp.log(mp.beta(a, b)),
    "polygamma": polygamma,
    "tri_gamma": lambda x: polygamma(1, x),
    "i0": lambda x: _besseli(0, x),
    "i1": lambda x: _besseli(1, x),
    "iv": _besseli,
    "ive": lambda v, x: _besseli(v, x) * mp.exp(-abs(x)),
    "kv": lambda v, x: mp.besselk(v, x),
    "kve": lambda v, x: mp.besselk(v, x) * mp.exp(x),
    "jv": lambda v, x: mp.besselj(v, x),
    "hyp2f1": lambda a, b, c, z: mp.inf if z > 1 else mp.hyp2f1(a, b, c, z),
    "owens_t": owens_t,
    "xlogx": lambda x: _xlogy0(x, x),
    "xlogy0": _xlogy0,
    "logit": _logit,
    "log1pexp": lambda x: mp.log1p(mp.exp(x)),
    "logaddexp": lambda x, y: _logsumexp([x, y]),
    "log_softmax": lambda *row: [v - _logsumexp(row) for v in row],
    "poch": lambda z, m: mp.rf(z, m),
    "factorial": lambda n: _gamma(n + 1),
    "erf": mp.erf,
    "erfc": mp.erfc,
    "erfcx": lambda x: mp.exp(x * x) * mp.erfc(x),
    "erfinv": _erfinv,
    "erfcinv": _erfcinv,
    "gamma": _gamma,
    "gammaln": _loggamma,
    "psi": lambda x: polygamma(0, x),
}

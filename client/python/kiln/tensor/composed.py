"""The special functions Kiln writes from other ops (PyTensor's betaln, logit, poch and kv),
composed to stay within a few ulp of the exact value where the plain formulas cancel or
overflow (issue 37; the numerics corpus in tests/golden/numerics checks them against mpmath).

A switch picks a formula per element; each formula sees its own inputs only where it is taken
and a harmless constant elsewhere ("double where"), so that the gradient of an untaken formula,
zero times a derivative at a point where that formula fails, is zero and not NaN."""
import math

from kiln.gradient import disconnected_grad
from kiln.tensor.basic import ELEMWISE, as_tensor_variable, cast, constant, switch
from kiln.tensor.elemwise import upcast
from kiln.tensor.nnet.sigm import upgrade_to_float

_log, _log1p, _exp = ELEMWISE["log"], ELEMWISE["log1p"], ELEMWISE["exp"]
_gamma, _gammaln = ELEMWISE["gamma"], ELEMWISE["gammaln"]
_abs, _and, _maximum = ELEMWISE["abs"], ELEMWISE["and_"], ELEMWISE["maximum"]

# Stirling's series of log(gamma(x)) - ((x - 1/2) log(x) - x + log(2 pi) / 2), in powers of
# 1 / x**2 after a factor 1 / x: B_2k / (2k (2k - 1)). Eight terms leave less than 1e-16 from
# x = _STIRLING_FROM on.
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156,
             -3617 / 122400)
_STIRLING_FROM = 10.0
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _in_float64(fn, *xs):
    """fn of the inputs, computed in float64 and cast back to the float dtype the inputs give
    (float32 from float32 inputs), as SciPy's float32 loops are: for formulas whose
    intermediate values leave float32's range or lose its digits."""
    xs = [as_tensor_variable(x) for x in xs]
    dtype = upgrade_to_float(upcast(*[x.dtype for x in xs]))
    if dtype == "float64":
        return fn(*xs)
    return cast(fn(*[cast(x, "float64") for x in xs]), dtype)


def _stirling(x):
    """log(gamma(x)) less its Stirling approximation, for x >= _STIRLING_FROM."""
    r = 1 / (x * x)
    out = _STIRLING[-1]
    for c in _STIRLING[-2::-1]:
        out = out * r + c
    return out / x


def betaln(a, b):
    """log(abs(beta(a, b))) = gammaln(a) + gammaln(b) - gammaln(a + b), without its cancellation
    where a + b is large: with lo <= hi the arguments in order, Stirling's form (TOMS 708's
    betaln) where lo >= 10, gammaln(lo) plus Stirling's form of gammaln(hi) - gammaln(lo + hi)
    where only hi is, the plain sum elsewhere; inf where lo is 0."""
    def f(a, b):
        order = ELEMWISE["le"](a, b)
        lo, hi = switch(order, a, b), switch(order, b, a)
        big = ELEMWISE["ge"](lo, _STIRLING_FROM)
        one_big = _and(ELEMWISE["ge"](hi, _STIRLING_FROM),
                       ELEMWISE["ge"](lo + hi, _STIRLING_FROM))
        one_big = _and(one_big, ELEMWISE["invert"](big))
        # Both large: e0 - log(hi) / 2 - (lo - 1/2) log1p(hi / lo) - hi log1p(lo / hi) + the
        # Stirling corrections; every term but the corrections has the sign of the sum.
        a1, b1 = switch(big, lo, _STIRLING_FROM), switch(big, hi, _STIRLING_FROM)
        both = (_HALF_LOG_2PI - 0.5 * _log(b1) - (a1 - 0.5) * _log1p(b1 / a1)
                - b1 * _log1p(a1 / b1) + (_stirling(a1) + _stirling(b1) - _stirling(a1 + b1)))
        # hi large: gammaln(hi + lo) - gammaln(hi)
        #   = lo log(hi) + ((hi + lo - 1/2) log1p(lo / hi) - lo) + the Stirling corrections.
        a2, b2 = switch(one_big, lo, 1.0), switch(one_big, hi, _STIRLING_FROM)
        rise = (a2 * _log(b2) + ((b2 + a2 - 0.5) * _log1p(a2 / b2) - a2)
                + (_stirling(b2 + a2) - _stirling(b2)))
        one = _gammaln(a2) - rise
        small = _and(ELEMWISE["invert"](big), ELEMWISE["invert"](one_big))
        a3, b3 = switch(small, lo, 1.0), switch(small, hi, 1.0)
        plain = _gammaln(a3) + _gammaln(b3) - _gammaln(a3 + b3)
        out = switch(big, both, switch(one_big, one, plain))
        return switch(ELEMWISE["eq"](lo, 0), math.inf, out)
    return _in_float64(f, a, b)


def logit(x):
    """log(x / (1 - x)), as log1p((2x - 1) / (1 - x)) on [1/4, 3/4], where the quotient is near
    1 and its log would lose the digits of x - 1/2 (2x - 1 and, from 1/2, 1 - x are exact);
    -inf at 0, inf at 1 and NaN outside [0, 1], as SciPy's."""
    x = as_tensor_variable(x)
    x = cast(x, upgrade_to_float(x.dtype))
    mid = _and(ELEMWISE["ge"](x, 0.25), ELEMWISE["le"](x, 0.75))
    xm = switch(mid, x, 0.5)
    return switch(mid, _log1p((2 * xm - 1) / (1 - xm)), _log(x / (1 - x)))


# Below _GAMMA_DIRECT gamma is finite and the quotient of two is direct; below _GAMMA_HALVED
# gamma is finite at half the argument, and Legendre's duplication formula
#   gamma(2y) = 2**(2y - 1) gamma(y) gamma(y + 1/2) / sqrt(pi)
# writes the quotient from four such values; beyond, exp of a difference of gammaln (where both
# gammas are positive), whose error grows with the size of gammaln (about 500 ulp at 350).
_GAMMA_DIRECT, _GAMMA_HALVED = 170.0, 340.0


def _by_halves(z, m):
    """gamma(z + m) / gamma(z) by the duplication formula, from gammas at half the arguments."""
    s = z + m
    return ((_gamma(s / 2) / _gamma(z / 2)) * (_gamma((s + 1) / 2) / _gamma((z + 1) / 2))
            * ELEMWISE["pow"](constant(2.0, dtype=z.dtype), m))


def _value_of_with_gradient_of(value, log_abs):
    """value, whose gradient is that of sgn(value) exp(log_abs), a close approximation of it:
    value - approximation is exact (Sterbenz) and adding the approximation back gives value
    again. For a value whose own gradient graph multiplies gammas into overflow (kiln's
    canonicalize merges the products of quotients into one quotient)."""
    approx = disconnected_grad(ELEMWISE["sgn"](value)) * _exp(log_abs)
    diff = switch(ELEMWISE["isinf"](approx), 0.0, value - approx)
    return disconnected_grad(diff) + approx


def poch(z, m):
    """gamma(z + m) / gamma(z), the rising factorial, in float64 (float32 results cast back):
    directly where both gammas are below _GAMMA_DIRECT in size, through the duplication formula
    below _GAMMA_HALVED, and as exp(gammaln(z + m) - gammaln(z)) beyond where z and z + m are
    positive (NaN or infinite there otherwise, as the direct quotient). In the duplication
    range the gradient (of every order) is exp(gammaln(z + m) - gammaln(z))'s, whose relative
    error is about 1e-13 there, as the duplication formula's own gradient overflows."""
    def f(z, m):
        size = _maximum(_abs(z), _abs(z + m))
        direct = ELEMWISE["lt"](size, _GAMMA_DIRECT)
        halved = _and(ELEMWISE["invert"](direct), ELEMWISE["lt"](size, _GAMMA_HALVED))
        positive = _and(ELEMWISE["gt"](z, 0), ELEMWISE["gt"](z + m, 0))
        logs = _and(_and(ELEMWISE["invert"](direct), ELEMWISE["invert"](halved)), positive)
        plain = _and(ELEMWISE["invert"](halved), ELEMWISE["invert"](logs))
        z1, m1 = switch(plain, z, 1.0), switch(plain, m, 1.0)
        by_gamma = _gamma(z1 + m1) / _gamma(z1)
        z2, m2 = switch(halved, z, 1.0), switch(halved, m, 1.0)
        by_halves = _value_of_with_gradient_of(_by_halves(z2, m2),
                                               _gammaln(z2 + m2) - _gammaln(z2))
        z3, m3 = switch(logs, z, 1.0), switch(logs, m, 1.0)
        by_logs = _exp(_gammaln(z3 + m3) - _gammaln(z3))
        return switch(halved, by_halves, switch(logs, by_logs, by_gamma))
    return _in_float64(f, z, m)


def kv(v, x):
    """K_v(x) = kve(v, x) * exp(-x), the modified Bessel function of the second kind; float32 in
    float64, where exp(-x) would be subnormal from x = 88."""
    return _in_float64(lambda v, x: ELEMWISE["kve"](v, x) * _exp(-x), v, x)

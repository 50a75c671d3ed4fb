"""Aesara 2.9.4's 43 distributions (aesara.tensor.random.basic) on a real server: each one's draws
at a fixed seed against NumPy's Generator (or the SciPy distribution Aesara samples with) by a
two-sample Kolmogorov-Smirnov test and by their first two moments, its op's class, name, dtype
and shapes against golden values taken from Aesara 2.9.4 (GOLDEN, written by running each call
below there), and the API around them: Aesara's parameter names, defaults and keyword arguments,
the dtype argument Aesara ignores, RandomStream, default_rng and the generator flavours."""
import inspect
import pickle

import numpy as np
import pytest
from scipy import stats

import kiln
from kiln.tensor import random as ktr
from kiln.tensor.random import basic
from kiln.tensor.random.utils import RandomStream

N = 20000
SEED = 2024
ALPHA = 1e-4  # a fixed seed makes these deterministic; this bound only guards against a bug
A = np.array

# The calls: name -> (args, kwargs, broadcast args called without size (None: not used)).
# name: (args, kwargs, broadcast args (size None))
PARAMS = {
    "bernoulli": ((0.3,), {}, (A([0.2, 0.5, 0.7]),)),
    "beta": ((2.0, 5.0), {}, (A([1.0, 2.0, 3.0]), A([[2.0], [4.0]]))),
    "betabinom": ((10, 2.0, 3.0), {}, (A([5, 10, 20]), A([[1.0], [2.0]]), 3.0)),
    "binomial": ((20, 0.3), {}, (A([5, 10, 20]), A([[0.2], [0.6]]))),
    "categorical": ((A([0.2, 0.5, 0.3]),), {}, (A([[0.2, 0.8], [0.5, 0.5], [0.9, 0.1]]),)),
    "cauchy": ((1.0, 2.0), {}, (A([0.0, 1.0, 2.0]), A([[1.0], [2.0]]))),
    "chisquare": ((3.0,), {}, (A([1.0, 2.0, 3.0]),)),
    "choice": ((A([10, 20, 30]),), {"p": A([0.5, 0.3, 0.2])}, None),
    "dirichlet": ((A([1.0, 2.0, 5.0]),), {}, (A([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]),)),
    "exponential": ((1.5,), {}, (A([1.0, 2.0, 3.0]),)),
    "f": ((5.0, 20.0), {}, (A([1.0, 2.0, 3.0]), A([[10.0], [20.0]]))),
    "gamma": ((3.0, 2.0), {}, (A([1.0, 2.0, 3.0]), A([[1.0], [2.0]]))),
    "gengamma": ((2.0, 1.5, 3.0), {}, (A([1.0, 2.0, 3.0]), A([[1.0], [2.0]]), 1.0)),
    "geometric": ((0.3,), {}, (A([0.2, 0.5, 0.7]),)),
    "gumbel": ((1.0, 2.0), {}, (A([0.0, 1.0, 2.0]), A([[1.0], [2.0]]))),
    "halfcauchy": ((1.0, 2.0), {}, (A([0.0, 1.0, 2.0]), A([[1.0], [2.0]]))),
    "halfnormal": ((1.0, 2.0), {}, (A([0.0, 1.0, 2.0]), A([[1.0], [2.0]]))),
    "hypergeometric": ((10, 5, 7), {}, (A([10, 20, 30]), 5, A([[3], [5]]))),
    "integers": ((-2, 5), {}, (A([0, 1, 2]), A([[5], [10]]))),
    "invgamma": ((6.0, 2.0), {}, (A([3.0, 4.0, 5.0]), A([[1.0], [2.0]]))),
    "laplace": ((1.0, 2.0), {}, (A([0.0, 1.0, 2.0]), A([[1.0], [2.0]]))),
    "logistic": ((1.0, 2.0), {}, (A([0.0, 1.0, 2.0]), A([[1.0], [2.0]]))),
    "lognormal": ((0.5, 0.3), {}, (A([0.0, 0.5, 1.0]), A([[0.1], [0.3]]))),
    "multinomial": ((10, A([0.2, 0.3, 0.5])), {}, (A([5, 10]), A([[0.5, 0.5], [0.1, 0.9]]))),
    "multivariate_normal": ((A([1.0, -2.0]), A([[4.0, 1.2], [1.2, 1.0]])), {},
                            (A([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]), A([[1.0, 0.0], [0.0, 1.0]]))),
    "nbinom": ((3.5, 0.4), {}, (A([1.0, 2.0, 3.0]), A([[0.3], [0.6]]))),
    "negative_binomial": ((3.5, 0.4), {}, (A([1.0, 2.0, 3.0]), A([[0.3], [0.6]]))),
    "normal": ((3.0, 2.0), {}, (A([0.0, 1.0, 2.0]), A([[1.0], [2.0]]))),
    "pareto": ((5.0, 2.0), {}, (A([3.0, 4.0, 5.0]), A([[1.0], [2.0]]))),
    "permutation": ((10,), {}, (A([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]),)),
    "poisson": ((3.5,), {}, (A([1.0, 2.0, 3.0]),)),
    "power": ((3.0,), {}, (A([1.0, 2.0, 3.0]),)),
    "randint": ((2, 9), {}, (A([0, 1, 2]), A([[5], [10]]))),
    "random": ((1.0, 3.0), {}, (A([0.0, 1.0, 2.0]), A([[3.0], [4.0]]))),
    "rayleigh": ((2.0,), {}, (A([1.0, 2.0, 3.0]),)),
    "t": ((10.0, 1.0, 2.0), {}, (A([1.0, 2.0, 3.0]), A([[0.0], [1.0]]), 1.0)),
    "triangular": ((0.0, 1.0, 4.0), {}, (A([0.0, 0.5, 1.0]), 1.0, A([[2.0], [3.0]]))),
    "truncexpon": ((2.0, 1.0, 3.0), {}, (A([1.0, 2.0, 3.0]), A([[0.0], [1.0]]), 1.0)),
    "uniform": ((-1.0, 3.0), {}, (A([0.0, 1.0, 2.0]), A([[3.0], [4.0]]))),
    "vonmises": ((1.0, 2.0), {}, (A([0.0, 1.0, 2.0]), A([[1.0], [2.0]]))),
    "wald": ((2.0, 3.0), {}, (A([1.0, 2.0, 3.0]), A([[1.0], [2.0]]))),
    "weibull": ((1.5,), {}, (A([1.0, 2.0, 3.0]),)),
    "zipf": ((4.5,), {}, (A([2.0, 3.0, 4.0]),)),
}


# Aesara 2.9.4's answers for PARAMS's calls (golden values): name -> (op class, str(op), dtype,
# static shape, value shape) of the call with size=(2, 3), then (static shape, value shape,
# dtype) of the broadcast call without a size.
GOLDEN = {
    'bernoulli': ('BernoulliRV', 'bernoulli_rv{0, (0,), int64, False}', 'int64',
        (2, 3), (2, 3), (3,), (3,), 'int64'),
    'beta': ('BetaRV', 'beta_rv{0, (0, 0), floatX, False}', 'float64',
        (2, 3), (2, 3), (2, 3), (2, 3), 'float64'),
    'betabinom': ('BetaBinomialRV', 'beta_binomial_rv{0, (0, 0, 0), int64, False}', 'int64',
        (2, 3), (2, 3), (2, 3), (2, 3), 'int64'),
    'binomial': ('BinomialRV', 'binomial_rv{0, (0, 0), int64, False}', 'int64',
        (2, 3), (2, 3), (2, 3), (2, 3), 'int64'),
    'categorical': ('CategoricalRV', 'categorical_rv{0, (1,), int64, False}', 'int64',
        (2, 3), (2, 3), (3,), (3,), 'int64'),
    'cauchy': ('CauchyRV', 'cauchy_rv{0, (0, 0), floatX, False}', 'float64',
        (2, 3), (2, 3), (2, 3), (2, 3), 'float64'),
    'chisquare': ('ChiSquareRV', 'chisquare_rv{0, (0,), floatX, False}', 'float64',
        (2, 3), (2, 3), (3,), (3,), 'float64'),
    'choice': ('ChoiceRV', 'choice_rv{0, (1, 1, 0), None, False}', 'int64',
        (2, 3), (2, 3), None, None, None),
    'dirichlet': ('DirichletRV', 'dirichlet_rv{1, (1,), floatX, False}', 'float64',
        (2, 3, 3), (2, 3, 3), (3, 2), (3, 2), 'float64'),
    'exponential': ('ExponentialRV', 'exponential_rv{0, (0,), floatX, False}', 'float64',
        (2, 3), (2, 3), (3,), (3,), 'float64'),
    'f': ('FRV', 'f_rv{0, (0, 0), floatX, False}', 'float64',
        (2, 3), (2, 3), (2, 3), (2, 3), 'float64'),
    'gamma': ('GammaRV', 'gamma_rv{0, (0, 0), floatX, False}', 'float64',
        (2, 3), (2, 3), (2, 3), (2, 3), 'float64'),
    'gengamma': ('GenGammaRV', 'gengamma_rv{0, (0, 0, 0), floatX, False}', 'float64',
        (2, 3), (2, 3), (2, 3), (2, 3), 'float64'),
    'geometric': ('GeometricRV', 'geometric_rv{0, (0,), int64, False}', 'int64',
        (2, 3), (2, 3), (3,), (3,), 'int64'),
    'gumbel': ('GumbelRV', 'gumbel_rv{0, (0, 0), floatX, False}', 'float64',
        (2, 3), (2, 3), (2, 3), (2, 3), 'float64'),
    'halfcauchy': ('HalfCauchyRV', 'halfcauchy_rv{0, (0, 0), floatX, False}', 'float64',
        (2, 3), (2, 3), (2, 3), (2, 3), 'float64'),
    'halfnormal': ('HalfNormalRV', 'halfnormal_rv{0, (0, 0), floatX, False}', 'float64',
        (2, 3), (2, 3), (2, 3), (2, 3), 'float64'),
    'hypergeometric': ('HyperGeometricRV', 'hypergeometric_rv{0, (0, 0, 0), int64, False}', 'int64',
        (2, 3), (2, 3), (2, 3), (2, 3), 'int64'),
    'integers': ('IntegersRV', 'integers_rv{0, (0, 0), int64, False}', 'int64',
        (2, 3), (2, 3), (2, 3), (2, 3), 'int64'),
    'invgamma': ('InvGammaRV', 'invgamma_rv{0, (0, 0), floatX, False}', 'float64',
        (2, 3), (2, 3), (2, 3), (2, 3), 'float64'),
    'laplace': ('LaplaceRV', 'laplace_rv{0, (0, 0), floatX, False}', 'float64',
        (2, 3), (2, 3), (2, 3), (2, 3), 'float64'),
    'logistic': ('LogisticRV', 'logistic_rv{0, (0, 0), floatX, False}', 'float64',
        (2, 3), (2, 3), (2, 3), (2, 3), 'float64'),
    'lognormal': ('LogNormalRV', 'lognormal_rv{0, (0, 0), floatX, False}', 'float64',
        (2, 3), (2, 3), (2, 3), (2, 3), 'float64'),
    'multinomial': ('MultinomialRV', 'multinomial_rv{1, (0, 1), int64, False}', 'int64',
        (2, 3, 3), (2, 3, 3), (2, 2), (2, 2), 'int64'),
    'multivariate_normal': ('MvNormalRV', 'multivariate_normal_rv{1, (1, 2), floatX, False}',
        'float64', (2, 3, 2), (2, 3, 2), (3, 2), (3, 2), 'float64'),
    'nbinom': ('NegBinomialRV', 'nbinom_rv{0, (0, 0), int64, False}', 'int64',
        (2, 3), (2, 3), (2, 3), (2, 3), 'int64'),
    'negative_binomial': ('NegBinomialRV', 'nbinom_rv{0, (0, 0), int64, False}', 'int64',
        (2, 3), (2, 3), (2, 3), (2, 3), 'int64'),
    'normal': ('NormalRV', 'normal_rv{0, (0, 0), floatX, False}', 'float64',
        (2, 3), (2, 3), (2, 3), (2, 3), 'float64'),
    'pareto': ('ParetoRV', 'pareto_rv{0, (0, 0), floatX, False}', 'float64',
        (2, 3), (2, 3), (2, 3), (2, 3), 'float64'),
    'permutation': ('PermutationRV', 'permutation_rv{1, (1,), None, False}', 'int8',
        (10,), (10,), (3, 2), (3, 2), 'float64'),
    'poisson': ('PoissonRV', 'poisson_rv{0, (0,), int64, False}', 'int64',
        (2, 3), (2, 3), (3,), (3,), 'int64'),
    'power': ('PowerRV', 'power_rv{0, (0,), floatX, False}', 'float64',
        (2, 3), (2, 3), (3,), (3,), 'float64'),
    'randint': ('RandIntRV', 'randint_rv{0, (0, 0), int64, False}', 'int64',
        (2, 3), (2, 3), (2, 3), (2, 3), 'int64'),
    'random': ('UniformRV', 'uniform_rv{0, (0, 0), floatX, False}', 'float64',
        (2, 3), (2, 3), (2, 3), (2, 3), 'float64'),
    'rayleigh': ('RayleighRV', 'rayleigh_rv{0, (0,), floatX, False}', 'float64',
        (2, 3), (2, 3), (3,), (3,), 'float64'),
    't': ('StudentTRV', 't_rv{0, (0, 0, 0), floatX, False}', 'float64',
        (2, 3), (2, 3), (2, 3), (2, 3), 'float64'),
    'triangular': ('TriangularRV', 'triangular_rv{0, (0, 0, 0), floatX, False}', 'float64',
        (2, 3), (2, 3), (2, 3), (2, 3), 'float64'),
    'truncexpon': ('TruncExponentialRV', 'truncexpon_rv{0, (0, 0, 0), floatX, False}', 'float64',
        (2, 3), (2, 3), (2, 3), (2, 3), 'float64'),
    'uniform': ('UniformRV', 'uniform_rv{0, (0, 0), floatX, False}', 'float64',
        (2, 3), (2, 3), (2, 3), (2, 3), 'float64'),
    'vonmises': ('VonMisesRV', 'vonmises_rv{0, (0, 0), floatX, False}', 'float64',
        (2, 3), (2, 3), (2, 3), (2, 3), 'float64'),
    'wald': ('WaldRV', 'wald_rv{0, (0, 0), floatX, False}', 'float64',
        (2, 3), (2, 3), (2, 3), (2, 3), 'float64'),
    'weibull': ('WeibullRV', 'weibull_rv{0, (0,), floatX, False}', 'float64',
        (2, 3), (2, 3), (3,), (3,), 'float64'),
    'zipf': ('ZipfRV', 'zipf_rv{0, (0,), int64, False}', 'int64',
        (2, 3), (2, 3), (3,), (3,), 'int64'),
}

def _sc(dist):
    """A SciPy distribution's draws from a NumPy Generator: rng, size -> sample."""
    return lambda g, n: dist.rvs(size=n, random_state=g)


# What each distribution's draws are, from NumPy's Generator g (SciPy's where Aesara samples
# with SciPy): name -> (g, n) -> n draws (for a support of several values, the column compared).
REFERENCE = {
    "bernoulli": lambda g, n: g.binomial(1, 0.3, n),
    "beta": lambda g, n: g.beta(2.0, 5.0, n),
    "betabinom": _sc(stats.betabinom(10, 2.0, 3.0)),
    "binomial": lambda g, n: g.binomial(20, 0.3, n),
    "categorical": lambda g, n: g.choice(3, p=[0.2, 0.5, 0.3], size=n),
    "cauchy": _sc(stats.cauchy(1.0, 2.0)),
    "chisquare": lambda g, n: g.chisquare(3.0, n),
    "choice": lambda g, n: g.choice([10, 20, 30], p=[0.5, 0.3, 0.2], size=n),
    "dirichlet": lambda g, n: g.dirichlet([1.0, 2.0, 5.0], n)[:, 2],
    "exponential": lambda g, n: g.exponential(1.5, n),
    "f": lambda g, n: g.f(5.0, 20.0, n),
    "gamma": lambda g, n: g.gamma(3.0, 1 / 2.0, n),  # Aesara's gamma(shape, rate)
    "gengamma": _sc(stats.gengamma(2.0 / 1.5, 1.5, scale=3.0)),
    "geometric": lambda g, n: g.geometric(0.3, n),
    "gumbel": _sc(stats.gumbel_r(1.0, 2.0)),
    "halfcauchy": _sc(stats.halfcauchy(1.0, 2.0)),
    "halfnormal": _sc(stats.halfnorm(1.0, 2.0)),
    "hypergeometric": lambda g, n: g.hypergeometric(10, 5, 7, n),
    "integers": lambda g, n: g.integers(-2, 5, n),
    "invgamma": _sc(stats.invgamma(6.0, scale=2.0)),
    "laplace": lambda g, n: g.laplace(1.0, 2.0, n),
    "logistic": lambda g, n: g.logistic(1.0, 2.0, n),
    "lognormal": lambda g, n: g.lognormal(0.5, 0.3, n),
    "multinomial": lambda g, n: g.multinomial(10, [0.2, 0.3, 0.5], n)[:, 1],
    "multivariate_normal": lambda g, n: g.multivariate_normal(
        [1.0, -2.0], [[4.0, 1.2], [1.2, 1.0]], n)[:, 1],
    "nbinom": _sc(stats.nbinom(3.5, 0.4)),
    "negative_binomial": _sc(stats.nbinom(3.5, 0.4)),
    "normal": lambda g, n: g.normal(3.0, 2.0, n),
    "pareto": _sc(stats.pareto(5.0, scale=2.0)),
    "permutation": lambda g, n: np.array([g.permutation(10)[0] for _ in range(n)]),
    "poisson": lambda g, n: g.poisson(3.5, n),
    "power": lambda g, n: g.power(3.0, n),
    "randint": lambda g, n: np.random.RandomState(SEED).randint(2, 9, n),
    "random": lambda g, n: g.uniform(1.0, 3.0, n),
    "rayleigh": lambda g, n: g.rayleigh(2.0, n),
    "t": _sc(stats.t(10.0, 1.0, 2.0)),
    "triangular": lambda g, n: g.triangular(0.0, 1.0, 4.0, n),
    "truncexpon": _sc(stats.truncexpon(2.0, 1.0, 3.0)),
    "uniform": lambda g, n: g.uniform(-1.0, 3.0, n),
    "vonmises": lambda g, n: g.vonmises(1.0, 2.0, n),
    "wald": lambda g, n: g.wald(2.0, 3.0, n),
    "weibull": lambda g, n: g.weibull(1.5, n),
    "zipf": lambda g, n: g.zipf(4.5, n),
}
COLUMN = {"dirichlet": 2, "multinomial": 1, "multivariate_normal": 1}
NO_MOMENTS = {"cauchy", "halfcauchy"}  # heavy tails: the KS test alone
N_CALLS = {"permutation": 2000}  # permutation has no size: one permutation per call

KS_PVALUES = {}


def kiln_sample(name):
    """N draws of the distribution from a RandomStream of SEED (the column compared)."""
    args, kwargs, _ = PARAMS[name]
    ctor = np.random.RandomState if name == "randint" else np.random.default_rng
    srng = RandomStream(SEED, rng_ctor=ctor)
    if name in N_CALLS:
        f = kiln.function([], getattr(srng, name)(*args, **kwargs))
        return np.array([f()[0] for _ in range(N_CALLS[name])])
    sample = kiln.function([], getattr(srng, name)(*args, size=(N,), **kwargs))()
    return sample[:, COLUMN[name]] if name in COLUMN else sample


def test_there_are_aesaras_43_distributions():
    assert len(PARAMS) == len(REFERENCE) == len(GOLDEN) == 43
    assert all(isinstance(getattr(basic, n), basic.RandomVariable) for n in PARAMS)
    assert all(n in basic.__all__ and hasattr(ktr, n) for n in PARAMS)


@pytest.mark.parametrize("name", sorted(PARAMS))
def test_draws_match_numpy(server, name):
    sample = kiln_sample(name)
    ref = REFERENCE[name](np.random.default_rng(SEED), len(sample))
    p = stats.ks_2samp(sample.astype(float), ref.astype(float)).pvalue
    KS_PVALUES[name] = p
    assert p > ALPHA, "%s: KS p-value %g" % (name, p)
    if name in NO_MOMENTS:
        return
    n = len(sample)
    for a, b in [(sample, ref)]:
        a, b = a.astype(float), b.astype(float)
        # Means within 6 standard errors of each other; variances too, with the standard error
        # of a sample variance from the fourth central moment.
        se_mean = np.sqrt(a.var() / n + b.var() / n)
        assert abs(a.mean() - b.mean()) <= 6 * se_mean + 1e-12, (name, a.mean(), b.mean())
        se_var = np.sqrt((np.mean((a - a.mean()) ** 4) - a.var() ** 2) / n
                         + (np.mean((b - b.mean()) ** 4) - b.var() ** 2) / n)
        assert abs(a.var() - b.var()) <= 6 * se_var + 1e-12, (name, a.var(), b.var())


@pytest.mark.parametrize("name", sorted(PARAMS))
def test_ops_shapes_and_dtypes_are_aesaras(server, name):
    cls, text, dtype, static, shape, b_static, b_shape, b_dtype = GOLDEN[name]
    op = getattr(basic, name)
    assert type(op).__name__ == cls and hasattr(basic, cls)
    assert str(op) == text
    args, kwargs, bargs = PARAMS[name]
    ctor = np.random.RandomState if name == "randint" else np.random.default_rng
    srng = RandomStream(SEED, rng_ctor=ctor)
    y = getattr(srng, name)(*args, size=(2, 3), **kwargs)
    assert (y.dtype, tuple(y.type.shape)) == (dtype, static)
    assert isinstance(y.owner.op, type(op)) and y.owner.op == op
    value = kiln.function([], y)()
    assert (str(value.dtype), value.shape) == (dtype, shape)
    if bargs is not None:
        z = getattr(srng, name)(*bargs)
        assert (z.dtype, tuple(z.type.shape)) == (b_dtype, b_static)
        w = kiln.function([], z)()
        assert (str(w.dtype), w.shape) == (b_dtype, b_shape)


def test_ks_pvalues_were_all_computed():
    """Runs last: prints the range of the KS p-values (pytest -s shows it)."""
    if len(KS_PVALUES) == 43:
        print("\nKS p-values: min %.4g (%s), max %.4g" % (
            min(KS_PVALUES.values()), min(KS_PVALUES, key=KS_PVALUES.get),
            max(KS_PVALUES.values())))


def test_keyword_arguments_and_the_dtype_aesara_ignores(server):
    srng = RandomStream(7)
    p = kiln.tensor.dvector("p")
    y = srng.binomial(size=(3,), n=1, p=p, dtype="int32")
    assert y.dtype == "int64" and y.type.shape == (3,)  # Aesara 2.9.4 ignores dtype here
    out = kiln.function([p], y)(np.array([0.0, 1.0, 1.0]))
    np.testing.assert_array_equal(out, [0, 1, 1])
    assert srng.normal(size=(2,), dtype="float32").dtype == "float64"
    assert srng.poisson(size=(2,), dtype="float32").dtype == "int64"
    assert srng.t(3.0, scale=2.0, size=(2,)).owner.inputs[5].data == 2.0
    assert srng.gengamma(p=2.0).owner.inputs[3:][1].data == 2.0
    assert srng.wald().owner.inputs[3].data == 1.0  # defaults: mean=1.0, scale=1.0
    assert srng.logistic().owner.inputs[3].dtype == "int8"  # loc=0: an int, as Aesara's
    for name in ["choice", "permutation"]:  # their dtype is their input's: a second is an error
        with pytest.raises(TypeError, match="multiple values for keyword argument 'dtype'"):
            getattr(srng, name)(5, dtype="int32")
    with pytest.raises(TypeError, match="missing required argument 'p'"):
        srng.geometric()
    with pytest.raises(TypeError, match="multiple values for argument 'n'"):
        srng.binomial(3, 0.5, n=2)
    assert str(inspect.signature(type(basic.t).__call__)) == (
        "(self, df, loc=0.0, scale=1.0, size=None, **kwargs)")
    assert str(inspect.signature(basic.standard_t)) == (
        "(df, *, loc=0.0, scale=1.0, size=None, **kwargs)")
    for fn in ["standard_normal", "standard_cauchy", "standard_exponential"]:
        assert kiln.function([], getattr(srng, fn)(size=(4,)))().shape == (4,)
    assert srng.standard_gamma(2.0, size=(4,)).owner.op == basic.gamma
    assert srng.standard_t(3.0, size=(4,)).owner.op == basic.t
    # Aesara's aliases: random is uniform; negative_binomial another instance of nbinom's op.
    assert basic.random is basic.uniform
    assert basic.negative_binomial is not basic.nbinom
    assert basic.negative_binomial == basic.nbinom


def test_generator_flavours_and_makers(server):
    with pytest.raises(TypeError, match="`randint` is only available for `RandomStateType`s"):
        RandomStream(1).randint(0, 5)
    with pytest.raises(TypeError, match="`integers` is only available for `RandomGeneratorType`s"):
        RandomStream(1, rng_ctor=np.random.RandomState).integers(0, 5)
    srng = RandomStream(1, rng_ctor=np.random.RandomState)
    r = srng.randint(5, size=(1000,))  # randint(high): [0, high)
    assert str(srng.updates()[0][0]).startswith("RandomStateSharedVariable(<RandomState(MT19937)")
    assert sorted(set(kiln.function([], r)())) == [0, 1, 2, 3, 4]
    state = ktr.var.shared_generator(np.random.RandomState(3))  # kiln.shared's, for one
    assert type(state).__name__ == "RandomStateSharedVariable"
    assert basic.randint(0, 3, size=(2,), rng=state).dtype == "int64"
    gen = kiln.shared(np.random.default_rng(3))
    assert type(gen).__name__ == "RandomGeneratorSharedVariable"
    assert kiln.function([], basic.zipf(3.0, size=(5,), rng=gen))().min() >= 1
    # default_rng(seed): a constant generator; its draws repeat, and differ from another seed's.
    a = kiln.function([], basic.normal(size=(3,), rng=ktr.default_rng(3)))()
    b = kiln.function([], basic.normal(size=(3,), rng=ktr.default_rng(3)))()
    c = kiln.function([], basic.normal(size=(3,), rng=ktr.default_rng(4)))()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    with pytest.raises(TypeError, match="randint"):
        basic.randint(0, 3, rng=ktr.default_rng(3))
    assert basic.randint(0, 3, rng=ktr.RandomState(3)).dtype == "int64"


def test_random_stream_is_aesaras(server):
    srng = RandomStream(5)
    for attr in ["default_instance_seed", "gen", "gen_seedgen", "namespaces", "rng_ctor", "seed",
                 "state_updates", "updates"]:
        assert hasattr(srng, attr), attr
    assert srng.default_instance_seed == 5 and srng.rng_ctor is np.random.default_rng
    draws = [getattr(srng, n) for n in PARAMS if n not in ("randint",)]
    assert len(draws) == 42
    y = srng.gen(basic.cauchy, 0.0, 1.0, size=(2,))
    assert len(srng.updates()) == 1 and srng.updates()[0][1] is y.owner.outputs[0]
    f = kiln.function([], y)
    first = f()
    srng.seed(5)
    np.testing.assert_array_equal(f(), first)
    with pytest.raises(AttributeError, match="No attribute foo."):
        srng.foo


def test_ops_pickle_and_come_back_from_core_as_their_class(server):
    for name in PARAMS:
        op = getattr(basic, name)
        assert pickle.loads(pickle.dumps(op)) is getattr(basic, pickle.loads(
            pickle.dumps(name)))
    twin = kiln.ops.from_attrs("RandomVariable", dict(basic.multinomial.wire_attrs()))
    assert type(twin) is basic.MultinomialRV and twin == basic.multinomial
    inplace = basic.RandomVariable.from_attrs(dict(basic.zipf.wire_attrs(), inplace=True))
    assert type(inplace) is basic.ZipfRV and inplace.inplace and inplace != basic.zipf


def test_bad_parameters_are_errors_naming_them(server):
    srng = RandomStream(3)
    with pytest.raises(kiln.KilnError, match="zipf_rv: parameter a must be > 1, got 1"):
        kiln.function([], srng.zipf(1.0, size=(2,)))()
    with pytest.raises(kiln.KilnError, match="triangular_rv: parameters must be left <= mode"):
        kiln.function([], srng.triangular(0.0, 3.0, 1.0, size=(2,)))()
    with pytest.raises(kiln.KilnError, match="hypergeometric_rv: parameter nbad must be >= 0"):
        kiln.function([], srng.hypergeometric(3, -1, 1))()
    with pytest.raises(Exception, match="No gradient defined for random variables"):
        m = kiln.tensor.dscalar("m")
        kiln.grad(kiln.tensor.sum(srng.laplace(m, 1.0, size=(2,))), m)

"""Aesara's distributions (aesara.tensor.random.basic): normal(loc=0.0, scale=1.0, size=None,
rng=None) and the other 42 RandomVariable instances, each of its Aesara class (NormalRV...) with
Aesara's parameter names and defaults; core types, names and samples them (Philox draws with
NumPy's distributions, Aesara's shapes and dtypes)."""
import inspect

import numpy as np

from kiln import ops
from kiln.tensor.basic import as_tensor_variable, cast, constant, floatx
from kiln.tensor.build import stack
from kiln.tensor.random.var import RandomGeneratorSharedVariable, fresh_seed, state_for

__all__ = ["permutation", "choice", "integers", "randint", "categorical", "multinomial",
           "betabinom", "nbinom", "binomial", "laplace", "bernoulli", "truncexpon", "wald",
           "invgamma", "halfcauchy", "cauchy", "hypergeometric", "geometric", "poisson",
           "dirichlet", "multivariate_normal", "vonmises", "logistic", "weibull", "exponential",
           "gumbel", "pareto", "chisquare", "gamma", "lognormal", "halfnormal", "normal", "beta",
           "triangular", "uniform", "standard_cauchy", "standard_exponential", "standard_gamma",
           "standard_normal", "standard_t", "negative_binomial", "gengamma", "t", "random",
           "rayleigh", "power", "zipf", "f", "RandomVariable"]

# Aesara's all_dtypes: a RandomVariable's dtype input is an index into it.
ALL_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
              "float16", "float32", "float64", "complex64", "complex128"]

_REQUIRED = inspect.Parameter.empty


def normalize_size(size):
    """size as an integer vector: empty for None, [n] for an int, the entries otherwise."""
    if size is None:
        return constant(np.array([], dtype="int64"))
    if isinstance(size, (int, np.integer)):
        size = (size,)
    if isinstance(size, (list, tuple)) and all(isinstance(s, (int, np.integer)) for s in size):
        return constant(np.array(size, dtype="int64"))
    if isinstance(size, (list, tuple)):  # a MakeVector, whose constant entries stay static
        return stack([constant(np.int64(s)) if isinstance(s, (int, np.integer))
                      else cast(as_tensor_variable(s), "int64") for s in size])
    return cast(as_tensor_variable(size, ndim=1), "int64")


def _is_random_state(rng):
    """True for a RandomState's generator, False for a Generator's, None when unknown."""
    return getattr(rng, "is_random_state", None)


@ops.view
class RandomVariable(ops.RandomVariable):
    """Aesara's RandomVariable: (rng, size, dtype, *params) -> (next rng, draw); called, the draw.
    A subclass (NormalRV) declares its distribution's name, ndim_supp, ndims_params and dtype as
    class attributes and its parameters (`_params`: (name, default) pairs) for __call__. Ops core
    makes (grad's nodes, the in-place pass's, the server's) come back as that subclass."""

    is_random_variable = True
    _params = None  # ((name, default or _REQUIRED), ...); None: positional parameters only

    def __init__(self, name=None, ndim_supp=None, ndims_params=None, dtype=None, inplace=None):
        cls = type(self)
        super().__init__(cls.name if name is None else name,
                         cls.ndim_supp if ndim_supp is None else ndim_supp,
                         tuple(cls.ndims_params if ndims_params is None else ndims_params),
                         cls.dtype if dtype is None else dtype, bool(inplace))

    @classmethod
    def from_attrs(cls, attrs):
        klass = _CLASSES.get(attrs["name"])
        if klass is not None:
            return klass(inplace=bool(attrs.get("inplace", False)))
        return RandomVariable(attrs["name"], attrs["ndim_supp"], attrs["ndims_params"],
                              attrs["dtype"], bool(attrs.get("inplace", False)))

    def __reduce__(self):
        """One of this module's distributions (normal, uniform...) pickles as its name, so it
        comes back with its parameter names and defaults."""
        for key in __all__:
            if globals().get(key) is self:
                return key
        return super().__reduce__()

    def _bind(self, args, kwargs):
        """The parameters, in order, from args and kwargs by Aesara's names and defaults."""
        if self._params is None:
            return list(args)
        cls = type(self).__name__
        if len(args) > len(self._params):
            raise TypeError("%s() takes %d parameters (%s), got %d" % (
                cls, len(self._params), ", ".join(n for n, _ in self._params), len(args)))
        values = list(args)
        for name, default in self._params[len(args):]:
            if name in kwargs:
                values.append(kwargs.pop(name))
            elif default is _REQUIRED:
                raise TypeError("%s() missing required argument '%s'" % (cls, name))
            else:
                values.append(default)
        for name, _ in self._params[:len(args)]:
            if name in kwargs:
                raise TypeError("%s() got multiple values for argument '%s'" % (cls, name))
        return values

    def __call__(self, *args, size=None, **kwargs):
        return self._make(*self._bind(args, kwargs), size=size, **kwargs)

    def _make(self, *params, size=None, name=None, rng=None, dtype=None, **kwargs):
        """Aesara's RandomVariable.__call__: the draw of this op on rng (a fresh generator
        without an update when None). dtype counts only for an op of dtype None (as Aesara)."""
        params = [as_tensor_variable(p) for p in params]
        if rng is None:  # as Aesara: a generator of its own, without an update
            rng = RandomGeneratorSharedVariable(state_for(fresh_seed()))
        if self.dtype == "floatX":
            dtype = floatx()
        elif self.dtype != "None":
            dtype = self.dtype
        else:
            dtype = dtype or params[0].dtype
        index = constant(np.int64(ALL_DTYPES.index(dtype)))
        node = self.make_node(rng, normalize_size(size), index, *params)
        flavour = _is_random_state(rng)
        if flavour is not None:
            node.outputs[0].is_random_state = flavour
        draw = node.outputs[1]
        draw.name = name
        return draw


def _rv(class_name, name, ndim_supp, ndims_params, dtype, params, base=RandomVariable):
    """Aesara's class `class_name` of distribution `name`, called with `params`."""
    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    parameters += [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=d)
                   for n, d in params]
    parameters += [inspect.Parameter("size", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                     default=None),
                   inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD)]

    def __call__(self, *args, **kwargs):
        size = kwargs.pop("size", None)
        if len(args) > len(params):  # size given positionally, after the parameters
            if len(args) > len(params) + 1 or "size" in kwargs:
                raise TypeError("%s() takes %d parameters and size" % (class_name, len(params)))
            args, size = args[:len(params)], args[len(params)]
        return RandomVariable.__call__(self, *args, size=size, **kwargs)

    __call__.__signature__ = inspect.Signature(parameters)
    __call__.__qualname__ = class_name + ".__call__"
    cls = type(class_name, (base,), {
        "__module__": __name__, "__qualname__": class_name, "name": name,
        "ndim_supp": ndim_supp, "ndims_params": ndims_params, "dtype": dtype,
        "_params": tuple(params), "__call__": __call__,
        "__doc__": "Aesara's %s: %s_rv(%s)." % (class_name, name,
                                                ", ".join(n for n, _ in params)),
    })
    return cls


class ScipyRandomVariable(RandomVariable):
    """Aesara's base of the distributions it samples with SciPy (cauchy, pareto...); here core
    samples every distribution the same way."""


R = _REQUIRED
UniformRV = _rv("UniformRV", "uniform", 0, (0, 0), "floatX", [("low", 0.0), ("high", 1.0)])
NormalRV = _rv("NormalRV", "normal", 0, (0, 0), "floatX", [("loc", 0.0), ("scale", 1.0)])
BinomialRV = _rv("BinomialRV", "binomial", 0, (0, 0), "int64", [("n", R), ("p", R)])
BernoulliRV = _rv("BernoulliRV", "bernoulli", 0, (0,), "int64", [("p", R)], ScipyRandomVariable)
CategoricalRV = _rv("CategoricalRV", "categorical", 0, (1,), "int64", [("p", R)])
PoissonRV = _rv("PoissonRV", "poisson", 0, (0,), "int64", [("lam", 1.0)])
BetaRV = _rv("BetaRV", "beta", 0, (0, 0), "floatX", [("alpha", R), ("beta", R)])
ExponentialRV = _rv("ExponentialRV", "exponential", 0, (0,), "floatX", [("scale", 1.0)])
DirichletRV = _rv("DirichletRV", "dirichlet", 1, (1,), "floatX", [("alphas", R)])
BetaBinomialRV = _rv("BetaBinomialRV", "beta_binomial", 0, (0, 0, 0), "int64",
                     [("n", R), ("a", R), ("b", R)], ScipyRandomVariable)
CauchyRV = _rv("CauchyRV", "cauchy", 0, (0, 0), "floatX", [("loc", 0.0), ("scale", 1.0)],
               ScipyRandomVariable)
ChiSquareRV = _rv("ChiSquareRV", "chisquare", 0, (0,), "floatX", [("df", R)])
FRV = _rv("FRV", "f", 0, (0, 0), "floatX", [("dfn", 1), ("dfd", 1)])
GenGammaRV = _rv("GenGammaRV", "gengamma", 0, (0, 0, 0), "floatX",
                 [("alpha", 1.0), ("p", 1.0), ("lambd", 1.0)], ScipyRandomVariable)
GeometricRV = _rv("GeometricRV", "geometric", 0, (0,), "int64", [("p", R)])
GumbelRV = _rv("GumbelRV", "gumbel", 0, (0, 0), "floatX", [("loc", R), ("scale", 1.0)],
               ScipyRandomVariable)
HalfCauchyRV = _rv("HalfCauchyRV", "halfcauchy", 0, (0, 0), "floatX",
                   [("loc", 0.0), ("scale", 1.0)], ScipyRandomVariable)
HalfNormalRV = _rv("HalfNormalRV", "halfnormal", 0, (0, 0), "floatX",
                   [("loc", 0.0), ("scale", 1.0)], ScipyRandomVariable)
HyperGeometricRV = _rv("HyperGeometricRV", "hypergeometric", 0, (0, 0, 0), "int64",
                       [("ngood", R), ("nbad", R), ("nsample", R)])
InvGammaRV = _rv("InvGammaRV", "invgamma", 0, (0, 0), "floatX", [("shape", R), ("scale", R)],
                 ScipyRandomVariable)
LaplaceRV = _rv("LaplaceRV", "laplace", 0, (0, 0), "floatX", [("loc", 0.0), ("scale", 1.0)])
LogisticRV = _rv("LogisticRV", "logistic", 0, (0, 0), "floatX", [("loc", 0), ("scale", 1)])
LogNormalRV = _rv("LogNormalRV", "lognormal", 0, (0, 0), "floatX",
                  [("mean", 0.0), ("sigma", 1.0)])
MultinomialRV = _rv("MultinomialRV", "multinomial", 1, (0, 1), "int64", [("n", R), ("p", R)])
NegBinomialRV = _rv("NegBinomialRV", "nbinom", 0, (0, 0), "int64", [("n", R), ("p", R)],
                    ScipyRandomVariable)
ParetoRV = _rv("ParetoRV", "pareto", 0, (0, 0), "floatX", [("b", R), ("scale", 1.0)],
               ScipyRandomVariable)
PowerRV = _rv("PowerRV", "power", 0, (0,), "floatX", [("a", R)])
RayleighRV = _rv("RayleighRV", "rayleigh", 0, (0,), "floatX", [("scale", 1.0)])
StudentTRV = _rv("StudentTRV", "t", 0, (0, 0, 0), "floatX",
                 [("df", R), ("loc", 0.0), ("scale", 1.0)], ScipyRandomVariable)
TriangularRV = _rv("TriangularRV", "triangular", 0, (0, 0, 0), "floatX",
                   [("left", R), ("mode", R), ("right", R)])
TruncExponentialRV = _rv("TruncExponentialRV", "truncexpon", 0, (0, 0, 0), "floatX",
                         [("b", R), ("loc", 0.0), ("scale", 1.0)], ScipyRandomVariable)
VonMisesRV = _rv("VonMisesRV", "vonmises", 0, (0, 0), "floatX", [("mu", R), ("kappa", R)])
WaldRV = _rv("WaldRV", "wald", 0, (0, 0), "floatX", [("mean", 1.0), ("scale", 1.0)])
WeibullRV = _rv("WeibullRV", "weibull", 0, (0,), "floatX", [("shape", R)])
ZipfRV = _rv("ZipfRV", "zipf", 0, (0,), "int64", [("a", R)])


class GammaRV(ScipyRandomVariable):
    """Aesara's GammaRV: gamma(shape, rate), whose node holds the scale 1 / rate."""

    name, ndim_supp, ndims_params, dtype = "gamma", 0, (0, 0), "floatX"

    def __call__(self, shape, rate, size=None, **kwargs):
        scale = 1.0 / rate if isinstance(rate, (int, float)) else 1.0 / as_tensor_variable(rate)
        return self._make(shape, scale, size=size, **kwargs)


class IntegersRV(RandomVariable):
    """integers(low, high): [low, high); integers(high): [0, high). A NumPy Generator's."""

    name, ndim_supp, ndims_params, dtype = "integers", 0, (0, 0), "int64"
    _needs_random_state = False

    def __call__(self, low, high=None, size=None, **kwargs):
        if _is_random_state(kwargs.get("rng")) is (not self._needs_random_state):
            raise TypeError("`%s` is only available for `%s`s" % (
                self.name, "RandomStateType" if self._needs_random_state
                else "RandomGeneratorType"))
        if high is None:
            low, high = 0, low
        return self._make(low, high, size=size, **kwargs)


class RandIntRV(IntegersRV):
    """randint(low, high): a NumPy RandomState's integers (a RandomStream made with
    rng_ctor=np.random.RandomState, or kiln.shared(np.random.RandomState(...)))."""

    name = "randint"
    _needs_random_state = True


class ChoiceRV(RandomVariable):
    name, ndim_supp, ndims_params, dtype = "choice", 0, (1, 1, 0), "None"

    def __call__(self, a, size=None, replace=True, p=None, **kwargs):
        """choice(a, size, replace, p): a's values (or arange(a) for an int); p None is uniform
        (an empty vector on the node, where Aesara has NoneConst)."""
        a = as_tensor_variable(a)
        p = constant(np.array([], dtype="float64")) if p is None else p
        return self._make(a, p, constant(np.array(bool(replace))), size=size, dtype=a.dtype,
                          **kwargs)


class PermutationRV(RandomVariable):
    name, ndim_supp, ndims_params, dtype = "permutation", 1, (1,), "None"

    def __call__(self, x, **kwargs):
        """permutation(x): x's rows shuffled, or arange(x) shuffled for an integer x."""
        x = as_tensor_variable(x)
        return self._make(x, dtype=x.dtype, **kwargs)


class MvNormalRV(RandomVariable):
    name, ndim_supp, ndims_params, dtype = "multivariate_normal", 1, (1, 2), "floatX"

    def __call__(self, mean=None, cov=None, size=None, **kwargs):
        mean = np.array([0.0], dtype=floatx()) if mean is None else mean
        cov = np.array([[1.0]], dtype=floatx()) if cov is None else cov
        return self._make(mean, cov, size=size, **kwargs)


# Every class by its distribution's name, for ops core makes.
_CLASSES = {cls.name: cls for cls in [
    UniformRV, NormalRV, IntegersRV, RandIntRV, BinomialRV, BernoulliRV, CategoricalRV,
    PoissonRV, GammaRV, BetaRV, ExponentialRV, DirichletRV, MvNormalRV, PermutationRV, ChoiceRV,
    BetaBinomialRV, CauchyRV, ChiSquareRV, FRV, GenGammaRV, GeometricRV, GumbelRV, HalfCauchyRV,
    HalfNormalRV, HyperGeometricRV, InvGammaRV, LaplaceRV, LogisticRV, LogNormalRV,
    MultinomialRV, NegBinomialRV, ParetoRV, PowerRV, RayleighRV, StudentTRV, TriangularRV,
    TruncExponentialRV, VonMisesRV, WaldRV, WeibullRV, ZipfRV]}

uniform = UniformRV()
random = uniform  # Aesara's random is its uniform
normal = NormalRV()
integers = IntegersRV()
randint = RandIntRV()
binomial = BinomialRV()
bernoulli = BernoulliRV()
categorical = CategoricalRV()
poisson = PoissonRV()
gamma = GammaRV()
beta = BetaRV()
exponential = ExponentialRV()
dirichlet = DirichletRV()
multivariate_normal = MvNormalRV()
permutation = PermutationRV()
choice = ChoiceRV()
betabinom = BetaBinomialRV()
cauchy = CauchyRV()
chisquare = ChiSquareRV()
f = FRV()
gengamma = GenGammaRV()
geometric = GeometricRV()
gumbel = GumbelRV()
halfcauchy = HalfCauchyRV()
halfnormal = HalfNormalRV()
hypergeometric = HyperGeometricRV()
invgamma = InvGammaRV()
laplace = LaplaceRV()
logistic = LogisticRV()
lognormal = LogNormalRV()
multinomial = MultinomialRV()
nbinom = NegBinomialRV()
negative_binomial = NegBinomialRV()  # another instance of the same op, as Aesara
pareto = ParetoRV()
power = PowerRV()
rayleigh = RayleighRV()
t = StudentTRV()
triangular = TriangularRV()
truncexpon = TruncExponentialRV()
vonmises = VonMisesRV()
wald = WaldRV()
weibull = WeibullRV()
zipf = ZipfRV()


def standard_normal(*, loc=0.0, scale=1.0, size=None, **kwargs):
    return normal(loc, scale, size=size, **kwargs)


def standard_cauchy(*, loc=0.0, scale=1.0, size=None, **kwargs):
    return cauchy(loc, scale, size=size, **kwargs)


def standard_exponential(*, scale=1.0, size=None, **kwargs):
    return exponential(scale, size=size, **kwargs)


def standard_gamma(shape, *, rate=1.0, size=None, **kwargs):
    return gamma(shape, rate, size=size, **kwargs)


def standard_t(df, *, loc=0.0, scale=1.0, size=None, **kwargs):
    return t(df, loc, scale, size=size, **kwargs)


for _fn in (standard_normal, standard_cauchy, standard_exponential, standard_gamma, standard_t):
    _fn.is_random_variable = True
del _fn

"""Aesara's distributions (aesara.tensor.random.basic): normal(loc, scale, size=None, rng=None)
and the others, each a RandomVariable op that core types, names and samples."""
import numpy as np

from kiln import ops
from kiln.tensor.basic import as_tensor_variable, cast, constant, floatx
from kiln.tensor.build import stack
from kiln.tensor.random.var import RandomGeneratorSharedVariable, fresh_seed, state_for

__all__ = ["uniform", "normal", "standard_normal", "integers", "binomial", "bernoulli",
           "categorical", "choice", "permutation", "poisson", "gamma", "standard_gamma", "beta",
           "exponential", "dirichlet", "multivariate_normal", "RandomVariable"]

# Aesara's all_dtypes: a RandomVariable's dtype input is an index into it.
ALL_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
              "float16", "float32", "float64", "complex64", "complex128"]


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


@ops.view
class RandomVariable(ops.RandomVariable):
    """Aesara's RandomVariable: (rng, size, dtype, *params) -> (next rng, draw); called, the draw.
    (One the in-place pass rewrote comes back from core as the generated
    kiln.ops.RandomVariable.)"""

    is_random_variable = True

    def __init__(self, name, ndim_supp, ndims_params, dtype):
        super().__init__(name, ndim_supp, tuple(ndims_params), dtype, False)

    @classmethod
    def from_attrs(cls, attrs):
        if attrs.get("inplace"):
            return ops.RandomVariable(**attrs)
        return cls(attrs["name"], attrs["ndim_supp"], attrs["ndims_params"], attrs["dtype"])

    def __reduce__(self):
        """One of this module's distributions (normal, uniform...) pickles as its name, so it
        comes back with its parameter names and defaults."""
        if globals().get(self.name) is self:
            return self.name
        return super().__reduce__()

    def __call__(self, *params, size=None, name=None, rng=None, dtype=None, **kwargs):
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
        draw = self.make_node(rng, normalize_size(size), index, *params).outputs[1]
        draw.name = name
        return draw


class _Gamma(RandomVariable):
    def __call__(self, shape, rate, size=None, **kwargs):
        """Aesara's gamma(shape, rate): the node holds the scale 1 / rate."""
        scale = 1.0 / rate if isinstance(rate, (int, float)) else 1.0 / as_tensor_variable(rate)
        return super().__call__(shape, scale, size=size, **kwargs)


class _Integers(RandomVariable):
    def __call__(self, low, high=None, size=None, **kwargs):
        """integers(low, high): [low, high); integers(high): [0, high)."""
        if high is None:
            low, high = 0, low
        return super().__call__(low, high, size=size, **kwargs)


class _Choice(RandomVariable):
    def __call__(self, a, size=None, replace=True, p=None, **kwargs):
        """choice(a, size, replace, p): a's values (or arange(a) for an int); p None is uniform
        (an empty vector on the node, where Aesara has NoneConst)."""
        p = constant(np.array([], dtype="float64")) if p is None else p
        return super().__call__(a, p, constant(np.array(bool(replace))), size=size, **kwargs)


class _MultivariateNormal(RandomVariable):
    def __call__(self, mean=None, cov=None, size=None, **kwargs):
        mean = np.array([0.0], dtype=floatx()) if mean is None else mean
        cov = np.array([[1.0]], dtype=floatx()) if cov is None else cov
        return super().__call__(mean, cov, size=size, **kwargs)


class _Named(RandomVariable):
    """An op called with Aesara's parameter names and defaults: normal(loc=0.0, scale=1.0)."""

    def __init__(self, name, ndim_supp, ndims_params, dtype, **defaults):
        super().__init__(name, ndim_supp, ndims_params, dtype)
        self._defaults = defaults

    def __call__(self, *params, size=None, **kwargs):
        names = list(self._defaults)
        bound = dict(zip(names, params))
        for k in names[len(params):]:
            bound[k] = kwargs.pop(k, self._defaults[k])
        return super().__call__(*(bound[k] for k in names), size=size, **kwargs)


uniform = _Named("uniform", 0, (0, 0), "floatX", low=0.0, high=1.0)
normal = _Named("normal", 0, (0, 0), "floatX", loc=0.0, scale=1.0)
integers = _Integers("integers", 0, (0, 0), "int64")
binomial = RandomVariable("binomial", 0, (0, 0), "int64")
bernoulli = RandomVariable("bernoulli", 0, (0,), "int64")
categorical = RandomVariable("categorical", 0, (1,), "int64")
poisson = _Named("poisson", 0, (0,), "int64", lam=1.0)
gamma = _Gamma("gamma", 0, (0, 0), "floatX")
beta = RandomVariable("beta", 0, (0, 0), "floatX")
exponential = _Named("exponential", 0, (0,), "floatX", scale=1.0)
dirichlet = RandomVariable("dirichlet", 1, (1,), "floatX")
multivariate_normal = _MultivariateNormal("multivariate_normal", 1, (1, 2), "floatX")
permutation = RandomVariable("permutation", 1, (1,), "None")  # x's rows (or arange(x)) shuffled
choice = _Choice("choice", 0, (1, 1, 0), "None")


def standard_normal(size=None, **kwargs):
    return normal(0.0, 1.0, size=size, **kwargs)


def standard_gamma(shape, size=None, **kwargs):
    return gamma(shape, 1.0, size=size, **kwargs)


standard_normal.is_random_variable = standard_gamma.is_random_variable = True

"""Four probabilistic models' log-density and its gradient, written once against the Aesara API
names that Kiln and PyTensor share, so that the same text builds both graphs:

    model = build("radon", kiln, kiln.tensor)   # or build("radon", pytensor, pytensor.tensor)
    f = lib.function(model.inputs, model.outputs)
    logp, dlogp = f(*model.point)

Each model is what a sampler calls: one joined parameter vector `theta` (the unconstrained values,
as PyMC lays them out) -> [logp (a scalar), dlogp/dtheta (a vector as long as theta)]. As PyMC
does, the log-density is written over one variable per parameter, its gradient taken with respect
to those, and each parameter then replaced by its slice of theta (reshaped to the parameter's
shape): the graph is built directly, with no rewrite before the gradient.

  radon: PyTensor's compile benchmark (tests/fixtures.py `create_radon_model()` in
    pymc-devs/pytensor, rel-2.36 on): a hierarchical linear model of 919 observations in 85
    groups, normal intercept, half-normal scales (sampled on the log scale), zero-sum-normal group
    effects (non-centred), 173 parameters. Its data are drawn as there, from NumPy's
    default_rng(1). Unlike there, no rewrite (canonicalize, stabilize) runs before the gradient,
    and the parameters lie in theta in the order they are made (intercept, county_sd_log,
    county_raw_zerosum, floor_effect, county_floor_sd_log, county_floor_raw_zerosum, sigma_log).
  logreg: a logistic regression, 100 features and 10,000 rows (data as shared variables), normal
    priors; 101 parameters.
  eight_schools: Rubin's eight schools, non-centred: mu ~ N(0, 5), tau ~ HalfCauchy(5) sampled as
    log tau, theta_tilde ~ N(0, 1), y ~ N(mu + tau * theta_tilde, sigma); 10 parameters.
  mixture: a three-component Gaussian mixture over 1,000 points, its logp a logsumexp over the
    components of log weight + component density; weights by a log-softmax of 3 logits, means
    ~ N(0, 10), log scales ~ N(0, 1); 9 parameters.
  gp: a Gaussian process's marginal likelihood (issue 37's benchmark), n = 500 points on a line,
    a squared-exponential kernel: K = amp^2 exp(-d^2 / (2 ls^2)) + (noise^2 + 1e-6) I, logp =
    log N(y | 0, K) through its Cholesky factor and a triangular solve; log ls, log amp and
    log noise ~ N(0, 1); 3 parameters. Its cost is the factor and its gradient: O(n^3).

`point` is a fixed parameter vector (NumPy's default_rng(2024)), the values the golden file
(tests/golden/pytensor_models.json) holds PyTensor's logp and gradient at.
"""
import collections
import importlib

import numpy as np

MODELS = ("radon", "logreg", "eight_schools", "mixture", "gp")

# inputs: the compiled function's inputs (theta); outputs: [logp, dlogp]; point: its arguments.
Model = collections.namedtuple("Model", "inputs outputs point")

# log sqrt(2 pi), the normal density's constant.
LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)


def build(name, lib, at):
    """The model `name` built with `lib` (kiln or pytensor) and its tensor module `at`."""
    return {"radon": radon, "logreg": logreg, "eight_schools": eight_schools,
            "mixture": mixture, "gp": gp}[name](lib, at)


def joined(lib, at, logp, params, seed=2024, scale=0.5):
    """Model(theta, [logp, dlogp]) with each of params replaced by its slice of theta."""
    dlogp = at.concatenate([g.flatten() for g in lib.grad(logp, params)])
    size = sum(int(np.prod(p.type.shape)) for p in params)
    theta = at.TensorType("float64", shape=(size,))("theta")
    replace, start = {}, 0
    for p in params:
        n = int(np.prod(p.type.shape))
        replace[p] = theta[start:start + n].reshape(p.type.shape)
        start += n
    logp, dlogp = lib.clone_replace([logp, dlogp], replace=replace)
    point = np.random.default_rng(seed).normal(scale=scale, size=size)
    return Model([theta], [logp, dlogp], [point])


def normal_logp(at, value, mu, sigma):
    """log N(value | mu, sigma), elementwise."""
    return -0.5 * (((value - mu) / sigma) ** 2) - LOG_SQRT_2PI - at.log(sigma)


def radon(lib, at):
    """The radon model: 173 parameters, 919 observations, 85 counties."""
    terms, params = [], []

    def scalar_param(name):
        p = at.dscalar(name)
        params.append(p)
        return p

    def halfnormal(name, sigma=1.0):
        # The scale on the log scale; its density plus the log-Jacobian log|d exp(u)/du| = value.
        value = at.exp(scalar_param(name + "_log"))
        logp = (-0.5 * ((value / sigma) ** 2) + at.log(at.sqrt(2.0 / np.pi)) - at.log(sigma))
        terms.append(at.switch(value >= 0, logp, -np.inf) + value)
        return value

    def normal(name, mu=0.0, sigma=1.0, observed=None):
        value = scalar_param(name) if observed is None else at.as_tensor_variable(observed)
        terms.append(-0.5 * (((value - mu) / sigma) ** 2) - at.log(at.sqrt(2.0 * np.pi))
                     - at.log(sigma))
        return value

    def zerosumnormal(name, size, sigma=1.0):
        # size - 1 free values; the last is set so that the vector sums to zero.
        raw = at.TensorType("float64", shape=(size - 1,))(name + "_zerosum")
        params.append(raw)
        n = raw.shape[0] + 1
        total = raw.sum(0, keepdims=True)
        norm = total / (at.sqrt(n) + n)
        value = at.concatenate([raw, norm - total / at.sqrt(n)]) - norm
        shape = value.shape
        dof = at.prod(at.inc_subtensor(shape[-1:], -1))
        terms.append(at.sum(-0.5 * ((value / sigma) ** 2)
                            - (at.log(at.sqrt(2.0 * np.pi)) + at.log(sigma))
                            * (dof / at.prod(shape))))
        return value

    rng = np.random.default_rng(1)
    n_counties = 85
    county = np.sort(rng.integers(n_counties, size=919))
    floor = rng.binomial(n=1, p=0.5, size=919).astype(np.float64)
    log_radon = rng.normal(size=919)

    intercept = normal("intercept", sigma=10)
    county_sd = halfnormal("county_sd")
    county_effect = zerosumnormal("county_raw", n_counties) * county_sd
    floor_effect = normal("floor_effect", sigma=2)
    county_floor_sd = halfnormal("county_floor_sd")
    county_floor_effect = zerosumnormal("county_floor_raw", n_counties) * county_floor_sd
    mu = (intercept + county_effect[county] + floor_effect * floor
          + county_floor_effect[county] * floor)
    normal("log_radon", mu=mu, sigma=halfnormal("sigma"), observed=log_radon)
    logp = at.sum([t.sum() for t in terms])
    return joined(lib, at, logp, params)


def logreg(lib, at):
    """Logistic regression: 100 features, 10,000 rows, 101 parameters."""
    rng = np.random.default_rng(3)
    rows, features = 10000, 100
    X = rng.normal(size=(rows, features))
    true_w = rng.normal(scale=0.3, size=features)
    y = (rng.random(rows) < 1 / (1 + np.exp(-(X @ true_w - 0.5)))).astype(np.float64)
    Xs, ys = lib.shared(X, name="X"), lib.shared(y, name="y")
    b = at.dscalar("b")
    w = at.TensorType("float64", shape=(features,))("w")
    eta = at.dot(Xs, w) + b
    loglik = at.sum(ys * eta - at.log1p(at.exp(eta)))
    logp = (loglik + at.sum(normal_logp(at, w, 0.0, 1.0)) + normal_logp(at, b, 0.0, 5.0))
    return joined(lib, at, logp, [b, w], scale=0.05)


def eight_schools(lib, at):
    """Eight schools, non-centred: 10 parameters."""
    y = np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])
    sigma = np.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0])
    mu = at.dscalar("mu")
    log_tau = at.dscalar("tau_log")
    theta_tilde = at.TensorType("float64", shape=(8,))("theta_tilde")
    tau = at.exp(log_tau)
    # HalfCauchy(5) on tau, plus the log-Jacobian of tau = exp(log_tau).
    tau_logp = np.log(2.0 / (np.pi * 5.0)) - at.log1p((tau / 5.0) ** 2) + log_tau
    theta = mu + tau * theta_tilde
    logp = (normal_logp(at, mu, 0.0, 5.0) + tau_logp
            + at.sum(normal_logp(at, theta_tilde, 0.0, 1.0))
            + at.sum(normal_logp(at, at.as_tensor_variable(y), theta, sigma)))
    return joined(lib, at, logp, [mu, log_tau, theta_tilde])


def mixture(lib, at):
    """A Gaussian mixture of K=3 components over 1,000 points: 9 parameters."""
    rng = np.random.default_rng(4)
    k, n = 3, 1000
    which = rng.choice(k, size=n, p=[0.5, 0.3, 0.2])
    x = rng.normal(loc=np.array([-2.0, 0.5, 3.0])[which], scale=np.array([0.7, 1.0, 0.5])[which])
    logits = at.TensorType("float64", shape=(k,))("logits")
    means = at.TensorType("float64", shape=(k,))("means")
    log_sds = at.TensorType("float64", shape=(k,))("sds_log")
    log_w = logits - at.logsumexp(logits)
    sds = at.exp(log_sds)
    xs = at.as_tensor_variable(x[:, None])                       # (n, 1) against (k,)
    component = log_w + normal_logp(at, xs, means, sds)           # (n, k)
    loglik = at.sum(at.logsumexp(component, axis=1))
    logp = (loglik + at.sum(normal_logp(at, logits, 0.0, 1.0))
            + at.sum(normal_logp(at, means, 0.0, 10.0))
            + at.sum(normal_logp(at, log_sds, 0.0, 1.0)))
    return joined(lib, at, logp, [logits, means, log_sds])


def gp_data(n=500):
    """The GP model's points x (sorted on [0, 10]) and observations y = sin(x) + noise."""
    rng = np.random.default_rng(5)
    x = np.sort(rng.uniform(0.0, 10.0, n))
    return x, np.sin(x) + 0.3 * rng.standard_normal(n)


def gp(lib, at):
    """A Gaussian process's marginal likelihood over 500 points: 3 parameters."""
    slinalg = importlib.import_module(at.__name__ + ".slinalg")
    x, y = gp_data()
    n = len(x)
    log_ls, log_amp, log_noise = at.dscalar("ls_log"), at.dscalar("amp_log"), at.dscalar("noise_log")
    sq_dist = at.as_tensor_variable((x[:, None] - x[None, :]) ** 2)
    K = (at.exp(2.0 * log_amp) * at.exp(-0.5 * sq_dist / at.exp(2.0 * log_ls))
         + (at.exp(2.0 * log_noise) + 1e-6) * at.eye(n))
    L = slinalg.cholesky(K)
    white = slinalg.solve_triangular(L, at.as_tensor_variable(y), lower=True)
    loglik = -0.5 * at.dot(white, white) - at.sum(at.log(at.diag(L))) - n * LOG_SQRT_2PI
    logp = loglik + sum(normal_logp(at, p, 0.0, 1.0) for p in (log_ls, log_amp, log_noise))
    return joined(lib, at, logp, [log_ls, log_amp, log_noise])

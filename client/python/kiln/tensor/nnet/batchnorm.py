"""aesara.tensor.nnet.batchnorm: batch normalization for training (the batch's statistics, and
the updated running averages) and for inference (given statistics), and the older elementwise
batch_normalization.

Aesara builds AbstractBatchNormTrain / AbstractBatchNormInference nodes here and rewrites them,
when it compiles, into the elementwise graphs of its local_abstract_batch_norm_* rewrites. Kiln
builds those graphs at once, from its own ops: the values, gradients and compiled graphs are
Aesara's; only the graph printed before compilation shows the elementwise ops instead of the
abstract ones."""
import numpy as np

from kiln.tensor.basic import as_tensor_variable, floatx

__all__ = ["batch_normalization", "batch_normalization_test", "batch_normalization_train"]


def _prepare_batch_normalization_axes(axes, ndim):
    """The sorted normalized axes and the others, from 'per-activation', 'spatial' or a list."""
    if axes == "per-activation":
        axes = (0,)
    elif axes == "spatial":
        axes = (0,) + tuple(range(2, ndim))
    elif isinstance(axes, (tuple, list, np.ndarray)):
        axes = tuple(int(a) for a in axes)
    else:
        raise ValueError("invalid axes: %s" % (axes,))
    axes = tuple(sorted(axes))
    if len(axes) == 0:
        raise ValueError("there should be at least one normalization axis")
    if min(axes) < 0 or max(axes) >= ndim:
        raise ValueError("axes should be less than ndim (<%d), but %s given" % (ndim, axes))
    non_bc_axes = tuple(i for i in range(ndim) if i not in axes)
    return axes, non_bc_axes


def _specify_broadcastable(x, *axes):
    """Aesara's specify_broadcastable: x with its dims `axes` known to be 1."""
    from kiln.tensor.shape import specify_shape
    if not axes:
        return x
    if max(axes) >= x.type.ndim:
        raise ValueError("Trying to specify broadcastable of non-existent dimension")
    return specify_shape(x, [1 if i in axes else s for i, s in enumerate(x.type.shape)])


def _params(inputs, params, axes, non_bc_axes, what):
    """The parameter tensors (gamma, beta, mean...) broadcast like `inputs`: vectors over the
    non-normalized axes get the normalized ones back as broadcastable dims."""
    ndim = inputs.ndim
    params = [as_tensor_variable(p) for p in params]
    params_ndim = ndim if params[0].ndim == ndim else len(non_bc_axes)
    pattern = ["x"] * ndim
    for i, axis in enumerate(non_bc_axes):
        pattern[axis] = i
    if params[0].ndim != params_ndim or params[1].ndim != params_ndim:
        raise ValueError("gamma and beta dimensionality must match the number of non-normalized "
                         "axes, or have the same number of dimensions as the inputs; got %d and "
                         "%d instead of %d" % (params[0].ndim, params[1].ndim, params_ndim))
    for name, p in zip(what, params[2:]):
        if p.ndim != params_ndim:
            raise ValueError("%s must be of the same dimensionality as gamma and beta; got %d "
                             "instead of %d" % (name, p.ndim, params_ndim))
    if params_ndim != ndim:
        return [p.dimshuffle(pattern) for p in params], True
    return [_specify_broadcastable(p, *axes) for p in params], False


def _epsilon(epsilon):
    # The check before the cast to floatX: numpy.float32(1e-5) < 1e-5.
    epsilon = np.cast[floatx()](epsilon)
    if epsilon < 1e-5:
        raise ValueError("epsilon must be at least 1e-5, got %s" % epsilon)
    return epsilon


def _common_dtype(*tensors):
    """Aesara's as_common_dtype: every tensor cast to their upcast dtype."""
    from kiln.tensor.basic import cast
    dtype = np.result_type(*[np.dtype(t.dtype) for t in tensors]).name
    return [cast(t, dtype) if t.dtype != dtype else t for t in tensors]


def batch_normalization_train(inputs, gamma, beta, axes="per-activation", epsilon=1e-4,
                              running_average_factor=0.1, running_mean=None, running_var=None):
    """Batch normalization with the batch's own statistics over `axes` ('per-activation': (0,),
    'spatial': (0, 2, 3, ...), or a tuple): returns (out, mean, invstd), and with running_mean
    and running_var also their new values running * (1 - factor) + batch * factor (the variance
    scaled by m / (m - 1), m the number of values averaged). gamma, beta and the running
    averages are shaped like the non-normalized axes, or like inputs with 1 on `axes`."""
    from kiln.tensor.basic import cast
    from kiln.tensor.math import reciprocal, sqrt
    from kiln.tensor.reduce import mean as kmean, prod, var as kvar
    inputs = as_tensor_variable(inputs)
    axes, non_bc_axes = _prepare_batch_normalization_axes(axes, inputs.ndim)
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be given or both be "
                         "None")
    with_running = running_mean is not None
    params = [gamma, beta] + ([running_mean, running_var] if with_running else [])
    params, vectors = _params(inputs, params, axes, non_bc_axes,
                              ["running_mean", "running_var"])
    epsilon = as_tensor_variable(_epsilon(epsilon))
    factor = as_tensor_variable(running_average_factor)
    # AbstractBatchNormTrain's make_node: one dtype for the non-scalars.
    x, scale, bias, *running = _common_dtype(inputs, *params)
    # Aesara's local_abstract_batch_norm_train.
    mean = kmean(x, axes, keepdims=True)
    var = kvar(x, axes, keepdims=True)
    if var.dtype == "float32" and epsilon.dtype == "float64":
        epsilon = cast(epsilon, "float32")
    invstd = reciprocal(sqrt(var + epsilon))
    out = (x - mean) * (scale * invstd) + bias
    results = [out, mean, invstd]
    if with_running:
        results.append(running[0] * (1.0 - factor) + mean * factor)
        m = cast(prod(x.shape) / prod(scale.shape), floatx())
        results.append(running[1] * (1.0 - factor) + (m / (m - 1)) * var * factor)
    if vectors:  # the statistics without the normalized axes
        results = [results[0]] + [r.dimshuffle(non_bc_axes) for r in results[1:]]
    return tuple(results)


def batch_normalization_test(inputs, gamma, beta, mean, var, axes="per-activation",
                             epsilon=1e-4):
    """Batch normalization with given statistics: (inputs - mean) * (gamma / sqrt(var +
    epsilon)) + beta, the parameters shaped as for batch_normalization_train."""
    from kiln.tensor.basic import cast
    from kiln.tensor.math import sqrt
    inputs = as_tensor_variable(inputs)
    axes, non_bc_axes = _prepare_batch_normalization_axes(axes, inputs.ndim)
    params, _ = _params(inputs, [gamma, beta, mean, var], axes, non_bc_axes, ["mean", "var"])
    epsilon = as_tensor_variable(_epsilon(epsilon))
    x, scale, bias, est_mean, est_var = _common_dtype(inputs, *params)
    # Aesara's local_abstract_batch_norm_inference.
    if est_var.dtype == "float32" and epsilon.dtype == "float64":
        epsilon = cast(epsilon, "float32")
    return (x - est_mean) * (scale / sqrt(est_var + epsilon)) + bias


def batch_normalization(inputs, gamma, beta, mean, std, mode="low_mem"):
    """((inputs - mean) / std) * gamma + beta, all broadcastable against inputs; 'low_mem' in
    that order (Aesara's BNComposite), 'high_mem' as (inputs - mean) * (gamma / std) + beta."""
    inputs, gamma, beta, mean, std = [as_tensor_variable(t)
                                      for t in (inputs, gamma, beta, mean, std)]
    if mode == "low_mem":
        return ((inputs - mean) / std) * gamma + beta
    if mode == "high_mem":
        return (inputs - mean) * (gamma / std) + beta
    raise ValueError('mode must be either "low_mem", "high_mem"')

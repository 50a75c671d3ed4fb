"""aesara.tensor.nnet.batchnorm: batch normalization for training (the batch's statistics, and
the updated running averages) and for inference (given statistics), and the older elementwise
batch_normalization.

As Aesara, batch_normalization_train and batch_normalization_test build the abstract ops
AbstractBatchNormTrain and AbstractBatchNormInference (core/ops/batchnorm.h; the gradient is
AbstractBatchNormTrainGrad), which print as Aesara's and which the optimizer's batchnorm_opts
phase rewrites into elementwise graphs when a function is compiled (Aesara's
local_abstract_batch_norm_* rewrites).

batch_normalization(mode="low_mem") builds Aesara's Elemwise{BNComposite}: core's BNComposite op
(core/ops/bn_composite.h), computed and printed as Elemwise{Composite{((((i0 - i1) / i2) * i3)
+ i4)}} and differentiated by BNComposite.grad's formulas. It is an op class of its own rather
than a name on Kiln's Composite scalar program: a Composite carries no gradient, and the
scalar program's struct is in headers every elementwise op includes."""
import numpy as np

from kiln import ops
from kiln.tensor.basic import as_tensor_variable, floatx

__all__ = ["BNComposite", "batch_normalization", "batch_normalization_test",
           "batch_normalization_train"]

# Elemwise(scalar_op=BNComposite(dtype)) of Aesara, one op: BNComposite(dtype=...)(x, mean, std,
# gamma, beta) on inputs of one rank.
BNComposite = ops.BNComposite


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


def batch_normalization_train(inputs, gamma, beta, axes="per-activation", epsilon=1e-4,
                              running_average_factor=0.1, running_mean=None, running_var=None):
    """Batch normalization with the batch's own statistics over `axes` ('per-activation': (0,),
    'spatial': (0, 2, 3, ...), or a tuple): returns (out, mean, invstd), and with running_mean
    and running_var also their new values running * (1 - factor) + batch * factor (the variance
    scaled by m / (m - 1), m the number of values averaged). gamma, beta and the running
    averages are shaped like the non-normalized axes, or like inputs with 1 on `axes`.
    Builds Aesara's AbstractBatchNormTrain{axes}."""
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
    op = ops.AbstractBatchNormTrain(axes=axes)
    if with_running:
        results = list(op(inputs, params[0], params[1], epsilon,
                          as_tensor_variable(running_average_factor), params[2], params[3]))
        # The new running averages keep the broadcastable dims of the old ones.
        for k, old in ((3, params[2]), (4, params[3])):
            if results[k].broadcastable != old.broadcastable:
                results[k] = _specify_broadcastable(
                    results[k], *(ax for ax, b in enumerate(old.broadcastable) if b))
    else:
        results = list(op(inputs, params[0], params[1], epsilon, as_tensor_variable(0.1)))
    if vectors:  # the statistics without the normalized axes
        results = [results[0]] + [r.dimshuffle(non_bc_axes) for r in results[1:]]
    return tuple(results)


def batch_normalization_test(inputs, gamma, beta, mean, var, axes="per-activation",
                             epsilon=1e-4):
    """Batch normalization with given statistics: (inputs - mean) * (gamma / sqrt(var +
    epsilon)) + beta, the parameters shaped as for batch_normalization_train. Builds Aesara's
    AbstractBatchNormInference{axes}."""
    inputs = as_tensor_variable(inputs)
    axes, non_bc_axes = _prepare_batch_normalization_axes(axes, inputs.ndim)
    params, _ = _params(inputs, [gamma, beta, mean, var], axes, non_bc_axes, ["mean", "var"])
    epsilon = as_tensor_variable(_epsilon(epsilon))
    return ops.AbstractBatchNormInference(axes=axes)(inputs, *params, epsilon)


def batch_normalization(inputs, gamma, beta, mean, std, mode="low_mem"):
    """((inputs - mean) / std) * gamma + beta, all broadcastable against inputs; 'low_mem' as
    one Elemwise{BNComposite} node (Aesara's), 'high_mem' as (inputs - mean) * (gamma / std) +
    beta."""
    inputs, gamma, beta, mean, std = [as_tensor_variable(t)
                                      for t in (inputs, gamma, beta, mean, std)]
    if mode == "low_mem":
        # Elemwise's make_node: inputs of lower rank get broadcastable dims in front.
        args = [inputs, mean, std, gamma, beta]
        ndim = max(a.ndim for a in args)
        args = [a.dimshuffle(["x"] * (ndim - a.ndim) + list(range(a.ndim))) if a.ndim < ndim
                else a for a in args]
        return BNComposite(dtype=inputs.dtype)(*args)
    if mode == "high_mem":
        return (inputs - mean) * (gamma / std) + beta
    raise ValueError('mode must be either "low_mem", "high_mem"')

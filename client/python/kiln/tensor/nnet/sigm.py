"""aesara.tensor.nnet.sigm: the sigmoid and its cheap approximations, hard_sigmoid and
ultra_fast_sigmoid, built from Kiln's elementwise ops with Aesara's values."""
from kiln.tensor.basic import as_tensor_variable, constant

__all__ = ["hard_sigmoid", "scalar_sigmoid", "sigmoid", "ultra_fast_sigmoid",
           "ultra_fast_sigmoid_inplace"]

# The tanh approximation of Aesara's UltraFastScalarSigmoid: 1.5 t / (1 + t) below 1.7, a line
# up to 3, then a constant (t = |x| / 2).
_UFS_KNEE, _UFS_END = 1.7, 3.0
_UFS_LINE0, _UFS_SLOPE, _UFS_TOP = 0.935409070603099, 0.0458812946797165, 0.99505475368673


def upgrade_to_float(dtype):
    """Aesara's aes.upgrade_to_float: integers of up to 16 bits and bools become float32, wider
    integers float64, floats stay."""
    dtype = str(dtype)
    if dtype in ("bool", "int8", "uint8", "int16", "uint16"):
        return "float32"
    if dtype in ("int32", "uint32", "int64", "uint64"):
        return "float64"
    return dtype


def sigmoid(x):
    """Elemwise{sigmoid}: 1 / (1 + exp(-x))."""
    from kiln.tensor.basic import ELEMWISE
    return ELEMWISE["sigmoid"](x)


scalar_sigmoid = sigmoid


def hard_sigmoid(x):
    """An approximation of sigmoid in three pieces, as Aesara builds it:
    clip(x * 0.2 + 0.5, 0, 1), the constants in x's float dtype."""
    from kiln.tensor.basic import clip
    x = as_tensor_variable(x)
    out_dtype = upgrade_to_float(x.dtype)
    slope = constant(0.2, dtype=out_dtype)
    shift = constant(0.5, dtype=out_dtype)
    return clip((x * slope) + shift, 0, 1)


def ultra_fast_sigmoid(x):
    """Aesara's ultra_fast_sigmoid, the piecewise approximation of its UltraFastScalarSigmoid
    (not the exact sigmoid): with t = |x| / 2, z = 1.5 t / (1 + t) for t < 1.7,
    0.935409070603099 + 0.0458812946797165 (t - 1.7) for t < 3, else 0.99505475368673; the
    result is (1 + sign(x) z) / 2, computed in x's float dtype. (Aesara gives it no gradient;
    this composition's is the approximation's own.)"""
    from kiln.tensor.basic import ELEMWISE, cast, switch
    x = as_tensor_variable(x)
    dtype = upgrade_to_float(x.dtype)

    def c(v):
        return constant(v, dtype=dtype)
    h = cast(x, dtype) * c(0.5)
    t = ELEMWISE["abs"](h)
    z = switch(t < c(_UFS_KNEE), c(1.5) * t / (c(1.0) + t),
               switch(t < c(_UFS_END), c(_UFS_LINE0) + c(_UFS_SLOPE) * (t - c(_UFS_KNEE)),
                      c(_UFS_TOP)))
    z = switch(h >= c(0.0), z, -z)
    return c(0.5) * (z + c(1.0))


# (Kiln's graphs are never updated in place: the inplace spelling is the same function.)
ultra_fast_sigmoid_inplace = ultra_fast_sigmoid

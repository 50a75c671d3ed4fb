"""kiln.tensor.signal.pool (Aesara's aesara.tensor.signal.pool): not computed by Kiln yet.
pool_2d, pool_3d and max_pool_2d_same_size raise NotImplementedError when called; the op classes
exist so that code naming them imports."""
from kiln.graph.standin import unsupported, unsupported_class

WHY = "Kiln does not have pooling yet (no Pool op in core)"

pool_2d = unsupported("aesara.tensor.signal.pool.pool_2d", WHY)
pool_3d = unsupported("aesara.tensor.signal.pool.pool_3d", WHY)
max_pool_2d_same_size = unsupported("aesara.tensor.signal.pool.max_pool_2d_same_size", WHY)
Pool, PoolGrad, MaxPoolGrad, AveragePoolGrad, DownsampleFactorMaxGradGrad, MaxPoolRop = (
    unsupported_class(name, WHY) for name in (
        "Pool", "PoolGrad", "MaxPoolGrad", "AveragePoolGrad", "DownsampleFactorMaxGradGrad",
        "MaxPoolRop"))

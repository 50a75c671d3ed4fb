"""kiln.tensor.signal (Aesara's aesara.tensor.signal): pooling (`pool`: core's Pool and its
gradients) and the old 2-d convolution (`conv`: conv2d of image and filter stacks, on core's
AbstractConv2d)."""
from kiln.tensor.signal import conv, pool  # noqa: F401

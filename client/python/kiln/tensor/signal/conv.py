"""kiln.tensor.signal.conv (Aesara's aesara.tensor.signal.conv): not computed by Kiln yet; conv2d
raises NotImplementedError when called."""
from kiln.graph.standin import unsupported

conv2d = unsupported("aesara.tensor.signal.conv.conv2d",
                     "Kiln does not have convolution yet (no convolution op in core)")

"""kiln.tensor.signal (Aesara's aesara.tensor.signal): pooling (`pool`) and the old 2-d
convolution (`conv`). Kiln does not compute them yet: the modules and names exist, so that
programs importing them load, and calling one raises NotImplementedError saying so."""
from kiln.tensor.signal import conv, pool  # noqa: F401

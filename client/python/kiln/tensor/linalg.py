"""kiln.tensor.linalg (Aesara's aesara.tensor.linalg): the public names of kiln.tensor.nlinalg
and kiln.tensor.slinalg in one module."""
from kiln.tensor.nlinalg import *  # noqa: F401,F403
from kiln.tensor.slinalg import *  # noqa: F401,F403

"""kiln.shared (Aesara's aesara.compile.sharedvalue): variables whose value lives in this
process's session on the server, or in this process while local functions use them; a
function's updates replace them where they live."""
import numpy as np

from kiln.sparse.sharedvar import sparse_constructor
from kiln.sparse.type import is_scipy_sparse
# (_restore_shared: pickles of shared variables made before the class moved name it here.)
from kiln.tensor.random.var import shared_generator
from kiln.tensor.sharedvar import SharedVariable, _restore_shared  # noqa: F401


def shared(value, name=None, strict=False, allow_downcast=None, shape=None, **kwargs):
    """Aesara's shared(value, name): a variable of value's dtype and rank, every dim of unknown
    size, whose value functions read and update (a NumPy Generator or RandomState: a random
    generator's state, seeded from it; a SciPy sparse matrix: a sparse shared variable of its
    format, kiln.sparse.shared)."""
    if isinstance(value, (np.random.Generator, np.random.RandomState)):
        return shared_generator(value, name=name)
    if is_scipy_sparse(value):
        return sparse_constructor(value, name=name, strict=strict,
                                  allow_downcast=allow_downcast, **kwargs)
    return SharedVariable(value, name=name, strict=strict, shape=shape)

"""kiln.shared (Aesara's aesara.compile.sharedvalue): variables whose value lives in this
process's session on the server, or in this process while local functions use them; a
function's updates replace them where they live."""
import numpy as np

# (_restore_shared: pickles of shared variables made before the class moved name it here.)
from kiln.tensor.random.var import shared_generator
from kiln.tensor.sharedvar import SharedVariable, _restore_shared  # noqa: F401


def shared(value, name=None, strict=False, allow_downcast=None, shape=None, **kwargs):
    """Aesara's shared(value, name): a variable of value's dtype and rank, every dim of unknown
    size, whose value functions read and update (a NumPy Generator or RandomState: a random
    generator's state, seeded from it)."""
    if isinstance(value, (np.random.Generator, np.random.RandomState)):
        return shared_generator(value, name=name)
    return SharedVariable(value, name=name, strict=strict, shape=shape)

"""kiln.tensor.linalg (Aesara's aesara.tensor.linalg, PyTensor's pytensor.tensor.linalg): the
public names of kiln.tensor.nlinalg and kiln.tensor.slinalg in one module, with those PyTensor's
slinalg exports beyond Aesara's (block_diag, the LU and triangular solvers, Lyapunov)."""
from kiln.tensor.nlinalg import *  # noqa: F401,F403
from kiln.tensor.slinalg import *  # noqa: F401,F403
from kiln.tensor.slinalg import (block_diag, cho_solve, lu, lu_factor, lu_solve,  # noqa: F401
                                 solve_continuous_lyapunov, solve_discrete_lyapunov,
                                 solve_triangular)

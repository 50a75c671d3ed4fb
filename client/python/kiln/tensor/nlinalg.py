"""kiln.tensor.nlinalg (Aesara's aesara.tensor.nlinalg). Kiln's core has no linear-algebra
decompositions yet (det, inv, eig, svd, qr... are absent, not stubbed); what is here is built
from Kiln's products and reductions."""
from kiln.graph import Apply, Op  # noqa: F401
from kiln.tensor.basic import as_tensor_variable
from kiln.tensor.nnet.basic import dot
from kiln.tensor.type import dvector, lscalar, matrix, scalar, vector  # noqa: F401

__all__ = ["matrix_dot", "trace"]


def matrix_dot(*args):
    """The product of the matrices, left to right: dot(dot(a, b), c)..."""
    out = args[0]
    for a in args[1:]:
        out = dot(out, a)
    return out


def trace(X):
    """The sum of the matrix's diagonal."""
    from kiln.tensor.arrays import diag
    from kiln.tensor.reduce import sum as ksum
    return ksum(diag(as_tensor_variable(X)))

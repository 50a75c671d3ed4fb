"""kiln.ifelse: Aesara's aesara.ifelse. ifelse(cond, a, b) is a where the scalar cond is nonzero
and b otherwise, and the server computes only the branch chosen."""
import numpy as np

from kiln.ops import IfElse
from kiln.tensor.basic import as_tensor_variable, cast


def _same_dtype(a, b):
    """a and b in one dtype: the one both upcast to, as Aesara converts the branches."""
    if a.dtype == b.dtype:
        return a, b
    if a.ndim != b.ndim:
        raise TypeError("IfElse requires compatible types for true and false return values: "
                        "true_branch=%s, false_branch=%s" % (a.type, b.type))
    common = np.promote_types(a.dtype, b.dtype).name
    return (a if a.dtype == common else cast(a, common),
            b if b.dtype == common else cast(b, common))


def ifelse(condition, then_branch, else_branch, name=None):
    """then_branch if condition (a scalar) is nonzero, else else_branch: a variable, or a list
    when the branches are lists (of one length). Only the branch chosen is computed."""
    single = not isinstance(then_branch, (list, tuple))
    thens = [then_branch] if single else list(then_branch)
    elses = [else_branch] if not isinstance(else_branch, (list, tuple)) else list(else_branch)
    if len(thens) != len(elses):
        raise ValueError("The number of values on the `then` branch must match the `else` "
                         "branch: got %d for `then`, and %d for `else`."
                         % (len(thens), len(elses)))
    pairs = [_same_dtype(as_tensor_variable(t), as_tensor_variable(e))
             for t, e in zip(thens, elses)]
    outs = IfElse(len(pairs))(condition, *[t for t, _ in pairs], *[e for _, e in pairs])
    outs = outs if isinstance(outs, list) else [outs]
    if name is not None:
        for o in outs:
            o.name = name
    return outs[0] if single else outs

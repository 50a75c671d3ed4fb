"""kiln.tensor.type (Aesara's aesara.tensor.type): TensorType and the variable constructors
(dscalar, fmatrix, matrix(dtype=...), dscalars('ab')...)."""
from kiln.graph import TensorType
from kiln.tensor.basic import CONSTRUCTORS, tensor

__all__ = ["TensorType", "tensor"] + sorted(CONSTRUCTORS)


def _plural(ctor):
    """Aesara's plural constructors: dscalars(3) makes three unnamed variables; dscalars('a', 'b'),
    dscalars(['a', 'b']) and dscalars('ab') (a string is a sequence of one-letter names) one per
    name; a single name gives the variable itself."""
    def make(*names, **dtype):  # the unprefixed ones (scalars, matrices) also take dtype=
        if names and isinstance(names[0], int):
            return [ctor(**dtype) for _ in range(names[0])]
        if len(names) == 1:
            names = names[0]
        if len(names) == 1:
            return ctor(names[0] if isinstance(names, (list, tuple)) else names, **dtype)
        return [ctor(n, **dtype) for n in names]
    return make


# dscalars("a", "b"), fmatrices(...), vectors(...): several variables at once.
_PLURALS = {"scalar": "scalars", "vector": "vectors", "row": "rows", "col": "cols",
            "matrix": "matrices"}
PLURALS = {name[:-len(kind)] + plural: _plural(ctor)
           for name, ctor in CONSTRUCTORS.items()
           for kind, plural in _PLURALS.items() if name.endswith(kind)}
globals().update(CONSTRUCTORS)
globals().update(PLURALS)
__all__ += sorted(PLURALS)

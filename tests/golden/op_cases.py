"""Shared by the gen_*linalg_cases.py scripts: reference-file fields of arrays, random inputs, and
an op's own perform on given inputs recorded as one line of its reference file.

A line: str(op) | for each input "in|dtype|shape|values" | for each output "out|dtype|shape|values"
(tests/testing/op_cases.h reads them); complex values are written "re;im".
"""
import numpy as np


def fmt(x):
    """One value as Python prints it exactly (a complex one as "re;im")."""
    if np.iscomplexobj(x):
        return f"{float(x.real)!r};{float(x.imag)!r}"
    return repr(float(x))


def group(tag, a):
    """The fields of one array: tag|dtype|shape (2x3, or - for a scalar)|values."""
    a = np.asarray(a)
    shape = "x".join(str(d) for d in a.shape) or "-"
    return f"{tag}|{a.dtype.name}|{shape}|" + ",".join(fmt(x) for x in a.ravel())


def rand(rng, shape, dtype="float64"):
    """Standard normal values of `dtype` (complex: both parts; integer: 3x, rounded)."""
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    if np.dtype(dtype).kind == "i":
        x = np.round(3 * x)
    return x.astype(dtype)


class Cases:
    """The lines of one reference file."""

    def __init__(self):
        self.lines = []

    def case(self, op, *inputs):
        """Records op's perform on `inputs` (None: Aesara's NoneConst, not a value), each output
        cast to its declared dtype."""
        import aesara.tensor as at
        from aesara.tensor.type_other import NoneConst

        sym = [NoneConst if x is None else at.as_tensor_variable(x) for x in inputs]
        node = op.make_node(*sym)
        vals = [x for x in inputs if x is not None]
        storage = [[None] for _ in node.outputs]
        op.perform(node, vals, storage)
        parts = [str(op)] + [group("in", x) for x in vals]
        for out, st in zip(node.outputs, storage):
            parts.append(group("out", np.asarray(st[0], dtype=out.type.dtype)))
        self.lines.append("|".join(parts))

    def write(self, path, header):
        """Writes the header line (without its '# ') and the lines."""
        with open(path, "w") as f:
            f.write(f"# {header}\n")
            f.write("\n".join(self.lines) + "\n")

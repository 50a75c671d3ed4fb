#!/usr/bin/python3
"""Writes the NumPy reference files the C++ tests read. Run with Debian's /usr/bin/python3.

numpy_dtype_promotion.txt  promote_types and can_cast('safe') for every dtype pair
numpy_format.txt           str(ndarray) for tensors of several dtypes and shapes
numpy_elemwise.txt         Elemwise results: NumPy computing in the output dtype Aesara infers
numpy_scalar_ops.txt       every scalar op on edge cases of each dtype it takes (NumPy, SciPy)
numpy_reduce.txt           reductions over axes, with keepdims, empty and non-contiguous inputs
numpy_linalg.txt           dot, matmul, tensordot, outer, gemm and gemv over ranks and dtypes
numpy_indexing.txt         basic indexing, set/inc_subtensor, take and inc at repeated indices
numpy_advanced_indexing.txt  integer arrays, masks, slices and new axes; set and inc (add.at)
numpy_nnet.txt             softmax, log_softmax, logsumexp, relu, crossentropies, sort, argsort
numpy_repeat.txt           repeat with scalar and vector counts, along each axis and flattened
numpy_fill_diagonal.txt    fill_diagonal of square, tall, wide, empty and cubic tensors
numpy_bartlett.txt         numpy.bartlett(M) for M of several integer dtypes, negative to 33
numpy_array_funcs.txt      unique, searchsorted, (un)ravel_index, diagonals, tri, broadcast_to,
                           choose and topk (tests/golden/gen_numpy_cases.py's array_funcs)
numpy_sparse.txt           CSR products, sums, elementwise products and dense forms (SciPy)
"""
import os

import numpy as np
import scipy.special as sp

HERE = os.path.dirname(os.path.abspath(__file__))
NAMES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "float16", "float32", "float64", "complex64", "complex128"]


def write(name, header, lines):
    with open(os.path.join(HERE, name), "w") as f:
        f.write(f"# numpy {np.__version__}: {header}\n")
        f.write("\n".join(lines) + "\n")


def values(a):
    return ",".join(repr(x) for x in np.asarray(a, dtype=object if a.dtype == bool else None)
                    .ravel().tolist())


def shape(a):
    return "x".join(str(d) for d in a.shape) or "-"


def promotion():
    lines = [f"{a} {b} {np.promote_types(a, b).name} {int(np.can_cast(a, b, 'safe'))}"
             for a in NAMES for b in NAMES]
    write("numpy_dtype_promotion.txt",
          "a b promote_types(a, b) can_cast(a, b, 'safe') for every pair of Aesara's dtypes.", lines)


def formats():
    cases = [
        np.array(2.0), np.array(0.1, np.float32), np.array(10, np.int8), np.array(True),
        np.array(1e100), np.array(1.5e-5), np.array(0.1, np.float16), np.array(-0.0),
        np.array([0.0, 2.0, 1026.0]), np.array([0.5, 1.0, 2.0]), np.array([1, 10, -5]),
        np.array([True, False]), np.array([[1.0, 2.0], [3.0, 4.0]]),
        np.arange(8, dtype=np.int32).reshape(2, 2, 2), np.zeros((0,)), np.array([np.nan, 1.5]),
        np.array([0.1, 0.2], np.float32), np.array([-1.5, 10.0]), np.array([0.123456789123]),
        np.array([np.inf, -2.0, 3.25]), np.array([[1, -2], [30, 4]], np.int16),
    ]
    lines = [f"{a.dtype.name}|{shape(a)}|{values(a)}|{str(a)!s}".replace("\n", "\\n")
             for a in cases]
    write("numpy_format.txt", "dtype|shape|values|str(array), newlines as \\n", lines)


def elemwise():
    f64, i8 = np.float64, np.int8
    # (op, a, b or None, output dtype by Aesara's rules)
    cases = [
        ("add", np.arange(6.0).reshape(2, 3), np.array([10.0, 20.0, 30.0]), "float64"),
        ("add", np.array([100, -100, 5], i8), np.array([100, -100, 5], i8), "int8"),
        ("mul", np.array([200, 3], np.uint8), np.array([2, 100], np.uint8), "uint8"),
        ("sub", np.array([[1], [2]], np.int32), np.array([[10, 20, 30]], np.int16), "int32"),
        ("true_divide", np.array([1, 2, 3], np.int32), np.array([2, 0, -2], np.int32), "float64"),
        ("true_divide", np.array([1.0, 3.0], np.float32), np.array([4, 2], i8), "float32"),
        ("pow", np.array([0.0, 1.0, 2.0]), np.array([10], i8), "float64"),
        ("pow", np.array([2, 3, -2]), np.array([10, 3, 3]), "int64"),
        ("pow", np.array([2], np.int32), np.array([40], np.int32), "int32"),
        ("neg", np.array([-128, 5], i8), None, "int8"),
        ("neg", np.array([1.5, -0.0], np.float32), None, "float32"),
        ("exp", np.array([0.0, 1.0, -np.inf, 710.0]), None, "float64"),
        ("exp", np.array([0, 1, 2], i8), None, "float32"),
        ("log", np.array([1.0, 0.0, -1.0, np.e]), None, "float64"),
        ("log", np.array([1, 10], np.int32), None, "float64"),
        ("add", np.array([0.1, 1000, 65504], np.float16), np.array([0.2, 1000, 65504], np.float16),
         "float16"),
        ("add", np.array([True, False, False]), np.array([True, True, False]), "bool"),
        ("mul", np.array([True, False]), np.array([7, 7], i8), "int8"),
        ("add", np.array([1, 2], np.uint64), np.array([-1, 5], np.int64), "float64"),
        ("add", np.array([-1, 100], i8), np.array([200, 200], np.uint8), "int16"),
        ("add", np.zeros((0, 3)), np.array([1.0, 2.0, 3.0]), "float64"),
        ("mul", np.array(3.0), np.array([[1.0, 2.0], [3.0, 4.0]]), "float64"),
        ("sub", np.array([1], np.uint8), np.array([2], np.uint8), "uint8"),
        ("exp", np.array([0.5, -1.0], np.float16), None, "float16"),
    ]
    lines = []
    for op, a, b, out in cases:
        ops = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "true_divide": np.true_divide,
               "pow": np.power, "neg": np.negative, "exp": np.exp, "log": np.log}
        with np.errstate(all="ignore"):
            if b is None:
                r = ops[op](a.astype(out))
            else:
                r = ops[op](a.astype(out), b.astype(out))
        assert r.dtype.name == out, (op, r.dtype)
        bf = ["", "", ""] if b is None else [b.dtype.name, shape(b), values(b)]
        lines.append("|".join([op, a.dtype.name, shape(a), values(a), *bf, out, shape(r),
                               values(r)]))
    write("numpy_elemwise.txt",
          "op|a dtype|a shape|a values|b dtype|b shape|b values|out dtype|out shape|out values "
          "(shape - is a scalar; NumPy computes in the output dtype Aesara infers)", lines)


def encode(a):
    """Values as text: complex numbers as re;im, booleans as True/False, floats by repr."""
    if a.dtype.kind == "c":
        return ",".join(f"{x.real!r};{x.imag!r}" for x in a.ravel().tolist())
    return values(a)


# Aesara's output dtype rules (aesara.scalar.basic), to compute each reference in that dtype.
def upcast(*dts):
    return np.result_type(*[np.zeros((), d) for d in dts]).name


def to_float(dt):
    conv = {"bool": "float32", "int8": "float32", "int16": "float32", "uint8": "float32",
            "uint16": "float32", "int32": "float64", "int64": "float64", "uint32": "float64",
            "uint64": "float64"}
    return conv.get(dt, dt)


def real_of(dt):
    return {"complex64": "float32", "complex128": "float64"}.get(dt, dt)


def out_dtype(op, dts):
    if op in ("lt", "gt", "le", "ge", "eq", "neq", "isnan", "isinf"):
        return "bool"
    if op == "true_divide":
        return "float64" if all(np.dtype(d).kind in "biu" for d in dts) else upcast(*dts)
    if op == "pow":
        u = upcast(*dts)
        return "int8" if u == "bool" else u
    if op in UPGRADE:
        return upcast(*[to_float(d) for d in dts])
    if op in ("abs", "real", "imag"):
        return real_of(dts[0])
    if op == "angle":
        return "float64"
    if op == "switch":
        return upcast(dts[1], dts[2])
    if op == "second":
        return dts[1]
    return upcast(*dts)


UPGRADE = {"ceil", "floor", "trunc", "reciprocal", "log", "log2", "log10", "log1p", "exp", "exp2",
           "expm1", "sqrt", "deg2rad", "rad2deg", "cos", "arccos", "sin", "arcsin", "tan",
           "arctan", "arctan2", "cosh", "arccosh", "sinh", "arcsinh", "tanh", "arctanh", "erf",
           "erfc", "erfcx", "erfinv", "erfcinv", "gamma", "gammaln", "psi", "sigmoid",
           "softplus", "log1mexp", "j0", "j1", "i0", "i1", "xlogx", "xlogy0"}


def round_away(x):
    """Half away from zero, keeping the sign of zero (C's round)."""
    return np.copysign(np.floor(np.abs(x) + 0.5), x).astype(x.dtype)


def clip(x, lo, hi):
    return np.where(x < lo, lo, np.where(x > hi, hi, x)).astype(x.dtype)


def bessel_j(n, x):
    """J_n(x) from mpmath at 50 digits: SciPy 1.10's j0/j1 lose every digit beyond |x| = 1e9."""
    import mpmath
    mpmath.mp.dps = 50
    exact = [float(mpmath.besselj(n, mpmath.mpf(float(v)))) if np.isfinite(v) else
             (0.0 if np.isinf(v) else np.nan) for v in x.ravel()]
    # J_n is odd for odd n: its zeros at -0.0 and -inf are -0.0.
    signs = [np.copysign(1.0, v) if n % 2 else 1.0 for v in x.ravel()]
    return np.array([e if e != 0 else np.copysign(0.0, s) for e, s in zip(exact, signs)]
                    ).reshape(x.shape)


def bessel_i(n, x):
    """I_n(x) from mpmath at 50 digits, but infinite past |x| = 709.78 in float64, where SciPy's
    i0 and i1 (so Aesara's) overflow although I_n is finite up to 713.98."""
    import mpmath
    mpmath.mp.dps = 50
    overflow = 709.782712893384 if x.dtype == np.float64 else np.inf
    exact = [float(mpmath.besseli(n, mpmath.mpf(float(v)))) if np.isfinite(v) and abs(v) <= overflow
             else
             (np.copysign(np.inf, v) if n % 2 else np.inf) if not np.isnan(v) else np.nan
             for v in x.ravel()]
    # I_1 is odd: I_1(-0.0) is -0.0.
    return np.array([np.copysign(0.0, v) if e == 0 else e for e, v in zip(exact, x.ravel())]
                    ).reshape(x.shape)


def log1mexp(x):
    return np.where(x < -np.log(2), np.log1p(-np.exp(x)), np.log(-np.expm1(x))).astype(x.dtype)


REFERENCE = {
    "lt": np.less, "gt": np.greater, "le": np.less_equal, "ge": np.greater_equal,
    "eq": np.equal, "neq": np.not_equal, "and_": np.bitwise_and, "or_": np.bitwise_or,
    "xor": np.bitwise_xor, "invert": np.invert, "isnan": np.isnan, "isinf": np.isinf,
    "switch": np.where, "maximum": np.maximum, "minimum": np.minimum, "add": np.add,
    "sub": np.subtract, "mul": np.multiply, "true_divide": np.true_divide, "floor_divide": np.floor_divide,
    "mod": np.mod, "pow": np.power, "clip": clip, "abs": np.abs, "sgn": np.sign, "ceil": np.ceil,
    "floor": np.floor, "trunc": np.trunc, "round_half_to_even": np.rint,
    "round_half_away_from_zero": round_away, "neg": np.negative, "reciprocal": np.reciprocal,
    "log": np.log, "log2": np.log2, "log10": np.log10, "log1p": np.log1p, "exp": np.exp,
    "exp2": np.exp2, "expm1": np.expm1, "sqr": np.square, "sqrt": np.sqrt,
    "deg2rad": np.deg2rad, "rad2deg": np.rad2deg, "cos": np.cos, "arccos": np.arccos,
    "sin": np.sin, "arcsin": np.arcsin, "tan": np.tan, "arctan": np.arctan,
    "arctan2": np.arctan2, "cosh": np.cosh, "arccosh": np.arccosh, "sinh": np.sinh,
    "arcsinh": np.arcsinh, "tanh": np.tanh, "arctanh": np.arctanh, "erf": sp.erf,
    "erfc": sp.erfc, "erfcx": sp.erfcx, "erfinv": sp.erfinv, "erfcinv": sp.erfcinv,
    "j0": lambda x: bessel_j(0, x), "j1": lambda x: bessel_j(1, x),
    "i0": lambda x: bessel_i(0, x), "i1": lambda x: bessel_i(1, x), "gamma": sp.gamma, "gammaln": sp.gammaln, "psi": sp.psi, "sigmoid": sp.expit,
    "softplus": lambda x: np.logaddexp(np.zeros_like(x), x), "log1mexp": log1mexp,
    # aesara.tensor.xlogx: 0 where x is 0, whatever y is.
    "xlogx": lambda x: np.where(x == 0, 0, x * np.log(x)),
    "xlogy0": lambda x, y: np.where(x == 0, 0, x * np.log(y)),
    "identity": np.copy, "second": lambda a, b: np.broadcast_to(b, np.broadcast(a, b).shape),
    "real": np.real, "imag": np.imag, "conj": np.conj, "angle": np.angle,
}

FLOATS = [0.0, -0.0, 0.5, -1.5, 2.0, 2.5, -3.7, 1e10, -1e-10, 1e300, np.nan, np.inf, -np.inf]
INT8 = [-128, -3, -1, 0, 1, 2, 5, 127]
UINT8 = [0, 1, 2, 3, 200, 255]
SIGNED = [-(2 ** 31), -70000, -3, 0, 1, 7, 70000, 2 ** 31 - 1]
BOOLS = [True, False]
COMPLEX = [0j, 1 + 2j, -1.5 - 0.5j, 3j, -2 + 0j]
UNIT = [-1.0, -0.999, -0.5, -0.0, 0.0, 0.3, 0.9999, 1.0, 1.5, np.nan]
POSITIVE = [1e-300, 1e-5, 0.5, 1.0, 1.5, 2.0, 10.0, 171.5, 1e5, 1e300]
GAMMA = [0.0, -0.0, -1.0, -2.5, -0.5, 1e-8, 0.5, 1.0, 3.0, 4.5, 30.0, 171.0, 180.0, np.nan]
# Around the points where asinh and acosh switch to log(2|x|) (1e18 in float32, 1e150 in float64).
LARGE = [-1e300, -1e151, -1e149, -1e19, -1e17, 1e17, 3e18, 1e19, 1e30, 1e149, 1e151, 1e200, 1e308]
SPECIAL = [-40.0, -20.0, -5.0, -1.0, -0.1, 0.0, 0.1, 1.0, 5.0, 9.99, 10.0, 20.0, 30.0, 40.0]
# Around the switch from the series to the asymptotic expansion (|x| = 25) and where I_n
# overflows (float32 past 91.9, float64 past 709.78 as SciPy's).
BESSEL_I = [-1e-300, 1e-300, -8.0, 1e-5, 1.0, 7.5, 15.0, 24.99, 25.0, -25.01, 26.5, 40.0, -91.0,
            92.0, 150.0, 500.0, 709.0, 709.8, -713.9, 714.0]


def arrays_for(kind, dtype):
    return {"floats": FLOATS, "int8": INT8, "uint8": UINT8, "signed": SIGNED, "bools": BOOLS,
            "complex": COMPLEX, "unit": UNIT, "positive": POSITIVE, "gamma": GAMMA,
            "special": SPECIAL, "large": LARGE, "bessel_i": BESSEL_I}[kind]


def unary_cases():
    fl = [("float64", "floats"), ("float32", "floats")]
    ints = [("int8", "int8"), ("uint8", "uint8"), ("int32", "signed"), ("int64", "signed")]
    every = fl + ints + [("bool", "bools")]
    table = {
        "isnan": every + [("float16", "floats"), ("complex128", "complex")],
        "isinf": every, "invert": ints + [("bool", "bools")],
        "abs": fl + ints + [("complex128", "complex"), ("complex64", "complex")],
        "sgn": fl + ints, "neg": fl + ints + [("complex128", "complex")],
        "ceil": fl + [("int8", "int8")], "floor": fl + [("int64", "signed")], "trunc": fl,
        "round_half_to_even": fl + [("float16", "floats")], "round_half_away_from_zero": fl,
        "reciprocal": fl + [("int8", "int8")], "sqr": fl + ints + [("complex128", "complex")],
        "identity": every, "real": fl + [("complex128", "complex"), ("complex64", "complex")],
        "imag": [("float64", "floats"), ("complex128", "complex")],
        "conj": [("float64", "floats"), ("complex128", "complex"), ("complex64", "complex")],
        "angle": [("float64", "floats"), ("complex128", "complex")],
    }
    for op in ["log", "log2", "log10", "log1p", "exp", "exp2", "expm1", "sqrt", "deg2rad",
               "rad2deg", "cos", "sin", "tan", "arctan", "cosh", "sinh", "arcsinh", "tanh",
               "erf", "erfc", "sigmoid", "softplus"]:
        table[op] = fl + [("int8", "int8"), ("int32", "signed"), ("float16", "floats")]
    for op in ["exp", "log", "sqrt"]:
        table[op] = table[op] + [("complex128", "complex"), ("complex64", "complex")]
    for op in ["arccos", "arcsin", "arctanh", "erfinv"]:
        table[op] = [("float64", "unit"), ("float32", "unit")]
    table["arccosh"] = [("float64", "positive"), ("float32", "positive"), ("float64", "large"),
                        ("float32", "large")]
    table["arcsinh"] = table["arcsinh"] + [("float64", "large"), ("float32", "large")]
    table["erfcinv"] = [("float64", "positive")]
    table["erfcx"] = [("float64", "special"), ("float32", "special")]
    table["log1mexp"] = [("float64", "special"), ("float32", "special")]
    for op in ["j0", "j1"]:
        table[op] = fl + [("float64", "large"), ("int8", "int8")]
    table["xlogx"] = fl + [("int8", "int8")]
    for op in ["i0", "i1"]:
        table[op] = fl + [("float64", "bessel_i"), ("float32", "bessel_i"), ("int8", "int8")]
    for op in ["gamma", "gammaln", "psi"]:
        table[op] = [("float64", "gamma"), ("float32", "positive"), ("int32", "signed")]
    for op, combos in table.items():
        for dtype, kind in combos:
            yield op, [np.array(arrays_for(kind, dtype), dtype=dtype)]


def binary_cases():
    f = np.array([0.0, -0.0, 1.5, -2.5, 7.0, -7.0, 1e300, np.nan, np.inf, -np.inf, 3.0, -0.5])
    g = np.array([2.0, -2.0, 0.5, 0.5, -3.0, 3.0, 1e10, 1.0, 2.0, np.inf, 0.0, -0.0])
    i = np.array([-128, -7, -1, 0, 7, 100, 127, 5], np.int8)
    j = np.array([3, -3, 2, 5, -2, 7, -1, 127], np.int8)
    u = np.array([0, 7, 200, 255, 3, 1], np.uint8)
    v = np.array([3, 2, 7, 255, 4, 1], np.uint8)
    b = np.array([True, True, False, False])
    c = np.array([True, False, True, False])
    z = np.array([1 + 2j, -3j, 0.5 + 0.5j, 2 + 0j])
    w = np.array([2 - 1j, 1j, -1 + 0j, 0.25 + 4j])
    pairs = {
        "float": [(f, g), (f.astype(np.float32), g.astype(np.float32))],
        "int": [(i, j), (u, v), (i.astype(np.int64), j.astype(np.int64))],
        "mixed": [(i, f[:8]), (u, i[:6]), (i.astype(np.int32), g[:8].astype(np.float32))],
        "bool": [(b, c)], "complex": [(z, w)],
    }
    nonzero_j = np.where(j == 0, 1, j).astype(np.int8)
    table = {
        "lt": ["float", "int", "mixed", "bool"], "gt": ["float", "int"], "le": ["float", "int"],
        "ge": ["float", "mixed"], "eq": ["float", "int", "bool", "complex"],
        "neq": ["float", "int", "complex"], "and_": ["int", "bool"], "or_": ["int", "bool"],
        "xor": ["int", "bool"], "maximum": ["float", "int", "mixed", "bool"],
        "minimum": ["float", "int", "mixed"], "add": ["float", "int", "mixed", "bool", "complex"],
        "sub": ["float", "int", "mixed", "complex"], "mul": ["float", "int", "mixed", "bool",
                                                            "complex"],
        "true_divide": ["float", "int", "mixed", "complex"], "floor_divide": ["float"], "mod": ["float"],
        "pow": ["float", "complex"], "arctan2": ["float", "int"], "xlogy0": ["float", "int"],
    }
    for op, groups in table.items():
        for group in groups:
            for a, bb in pairs[group]:
                yield op, [a, bb]
    for op in ["floor_divide", "mod"]:
        yield op, [i, nonzero_j]
        yield op, [u, np.where(v == 0, 1, v).astype(np.uint8)]
        yield op, [i.astype(np.int64), nonzero_j.astype(np.int64)]
    yield "pow", [i, np.abs(nonzero_j % 4).astype(np.int8)]
    yield "pow", [u, np.array([0, 1, 2, 3, 8, 1], np.uint8)]
    yield "second", [f.reshape(3, 4), g[:4]]
    yield "second", [i, np.array([5.5])]


def ternary_cases():
    x = np.array([-3.0, -1.0, 0.0, 0.5, 2.0, 9.0, np.nan, np.inf])
    yield "clip", [x, np.array([-1.0]), np.array([2.0])]
    yield "clip", [np.arange(-4, 4, dtype=np.int8), np.array([-2], np.int8),
                   np.array([1], np.int32)]
    yield "switch", [np.array([1, 0, 2, 0], np.int8), np.array([1.5, 2.5, 3.5, 4.5]),
                     np.array([-1], np.int32)]
    yield "switch", [np.array([True, False]), np.array([1, 2], np.uint8),
                     np.array([-1, -2], np.int8)]


def scalar_ops():
    lines = []
    for op, args in [*unary_cases(), *binary_cases(), *ternary_cases()]:
        out = out_dtype(op, [a.dtype.name for a in args])
        with np.errstate(all="ignore"):
            if op in ("lt", "gt", "le", "ge", "eq", "neq", "maximum", "minimum", "isnan",
                      "isinf", "switch", "second", "abs", "real", "imag", "angle", "sgn",
                      "invert", "and_", "or_", "xor", "clip"):
                computed = [a for a in args]
                if op not in ("switch", "second", "abs", "real", "imag", "angle", "invert",
                              "isnan", "isinf", "sgn"):
                    common = upcast(*[a.dtype.name for a in args])
                    computed = [a.astype(common) for a in args]
                r = np.asarray(REFERENCE[op](*computed)).astype(out)
            else:
                r = np.asarray(REFERENCE[op](*[a.astype(out if out != "float16" else
                                                         "float32") for a in args])).astype(out)
        fields = [op]
        for k in range(3):
            if k < len(args):
                fields += [args[k].dtype.name, shape(args[k]), encode(args[k])]
            else:
                fields += ["", "", ""]
        fields += [out, shape(r), encode(r)]
        lines.append("|".join(fields))
    write("numpy_scalar_ops.txt",
          "op|a dtype|a shape|a values|b ...|c ...|out dtype|out shape|out values; complex "
          "values as re;im (NumPy and SciPy computing in the output dtype Aesara infers)", lines)


def reductions():
    m = np.array([[3.0, -1.0, 2.0], [0.5, 7.0, -4.0]])
    t = np.arange(24, dtype=np.float64).reshape(2, 3, 4) % 5 - 2
    i8 = np.array([[100, 100, -7], [3, 120, 1]], np.int8)
    u8 = np.array([[200, 3], [255, 0]], np.uint8)
    b = np.array([[True, False], [True, True]])
    nan = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0]])
    f32 = np.array([[0.1, 0.2, 0.3], [1e7, 1.0, -1e7]], np.float32)
    empty = np.zeros((0, 3))
    cases = []
    for fn in ["sum", "prod", "max", "min", "mean", "var", "std", "argmax", "argmin"]:
        for x in [m, t, i8, nan, f32]:
            for axes in [None, (0,), (-1,), (0, 1)]:
                if axes == (0, 1) and fn in ("argmax", "argmin") and x.ndim == 2:
                    continue
                cases.append((fn, x, axes, False))
        cases.append((fn, m, (1,), True))
    for fn in ["all", "any"]:
        for x in [b, m, i8]:
            for axes in [None, (0,), (1,)]:
                cases.append((fn, x, axes, False))
    for fn in ["sum", "prod", "all", "any", "mean"]:
        cases.append((fn, empty, (0,), False))
    cases += [("sum", u8, None, False), ("sum", b, (0,), False), ("max", u8, (1,), False),
              ("sum", m.T, (0,), False), ("max", t.transpose(2, 0, 1), (0, 2), True),
              ("argmax", t, (0, 2), False), ("argmin", u8, None, False),
              ("argmax", np.array([[1, 3, 3], [2, 2, 1]], np.int32), (1,), False)]
    for fn in ["cumsum", "cumprod"]:
        for x in [m, t, i8]:
            for axes in [None, (0,), (-1,)]:
                cases.append((fn, x, axes, False))
    lines = []
    for fn, x, axes, keepdims in cases:
        kw = {} if fn in ("cumsum", "cumprod") else {"keepdims": keepdims}
        axis = None if axes is None else (axes if len(axes) > 1 else axes[0])
        with np.errstate(all="ignore"):
            if fn in ("cumsum", "cumprod"):
                r = getattr(np, fn)(x, axis=axis, dtype=x.dtype)
            elif fn in ("argmax", "argmin") and axes is not None and len(axes) > 1:
                moved = np.moveaxis(x, axes, list(range(x.ndim - len(axes), x.ndim)))
                flat = moved.reshape(moved.shape[:x.ndim - len(axes)] + (-1,))
                r = getattr(np, fn)(flat, axis=-1)
            elif fn in ("sum", "prod", "mean", "var", "std") and x.dtype == np.float32:
                # Aesara accumulates float32 in float64 (acc_dtype), then rounds.
                r = getattr(np, fn)(x, axis=axis, dtype=np.float64, **kw).astype(np.float32)
            else:
                r = np.asarray(getattr(np, fn)(x, axis=axis, **kw))
        out = r.dtype.name
        if fn in ("mean", "var", "std") and x.dtype.kind in "iub":
            out = "float64"
        axes_text = "None" if axes is None else ",".join(map(str, axes))
        lines.append("|".join([fn, axes_text, str(int(keepdims)), x.dtype.name,
                               shape(x), values(np.ascontiguousarray(x)),
                               "T" if not x.flags.c_contiguous else "C",
                               out, shape(r), values(r.astype(out))]))
    write("numpy_reduce.txt",
          "fn|axes|keepdims|in dtype|in shape|in values (C order)|layout|out dtype|out shape|"
          "out values", lines)


def linalg():
    rng = np.random.default_rng(7)

    def arr(shape, dtype=np.float64):
        a = rng.integers(-4, 5, size=shape)
        if np.dtype(dtype).kind == "c":
            return (a + 1j * rng.integers(-3, 4, size=shape)).astype(dtype)
        if np.dtype(dtype).kind == "f":
            return (a + rng.random(shape)).astype(dtype)
        return a.astype(dtype)

    cases = []
    for sa, sb in [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((2, 0), (0, 3)),
                   ((0, 3), (3, 2))]:
        for dt in [np.float64, np.float32, np.int32, np.complex128]:
            cases.append(("dot", [arr(sa, dt), arr(sb, dt)]))
    cases.append(("dot", [arr((2, 3), np.int8), arr((3, 2), np.float32)]))
    cases.append(("dot", [arr((3, 2)).T, arr((4, 3)).T]))
    cases.append(("dot", [arr((2, 3, 4)), arr((4, 5))]))
    cases.append(("dot", [arr((2, 3, 4)), arr((3, 4, 5))]))
    for sa, sb in [((2, 2, 3), (3, 4)), ((4, 1, 2, 3), (5, 3, 2)), ((3,), (2, 3, 4)),
                   ((2, 3, 4), (4,)), ((1, 2, 3), (6, 3, 2))]:
        cases.append(("matmul", [arr(sa), arr(sb)]))
    cases.append(("matmul", [arr((2, 3), np.float32), arr((3, 2), np.float32)]))
    cases.append(("outer", [arr((3,)), arr((4,))]))
    cases.append(("tensordot2", [arr((2, 3, 4)), arr((3, 4, 5))]))
    cases.append(("tensordot1", [arr((2, 3)), arr((3, 4))]))
    lines = []
    for fn, args in cases:
        if fn == "dot":
            r = np.dot(*args) if max(a.ndim for a in args) <= 2 else np.tensordot(
                args[0], args[1], axes=([args[0].ndim - 1], [max(0, args[1].ndim - 2)]))
        elif fn == "matmul":
            r = np.matmul(*args)
        elif fn == "outer":
            r = np.outer(*args)
        else:
            r = np.tensordot(args[0], args[1], axes=int(fn[-1]))
        r = np.asarray(r)
        fields = [fn]
        for a in args:
            layout = "C" if a.flags.c_contiguous else "T"
            fields += [a.dtype.name, shape(a), encode(np.ascontiguousarray(a)), layout]
        fields += [r.dtype.name, shape(r), encode(r)]
        lines.append("|".join(fields))
    write("numpy_linalg.txt",
          "fn|a dtype|a shape|a values|a layout|b dtype|b shape|b values|b layout|out dtype|"
          "out shape|out values (layout T: a transposed, non-contiguous view)", lines)


def parse_index(spec):
    """'1,::-1,-3:' -> (1, slice(None, None, -1), slice(-3, None, None))."""
    out = []
    for part in spec.split(","):
        if ":" in part:
            bounds = [int(b) if b else None for b in part.split(":")]
            bounds += [None] * (3 - len(bounds))
            out.append(slice(*bounds))
        else:
            out.append(int(part))
    return tuple(out)


def indexing():
    x = np.arange(60, dtype=np.float64).reshape(3, 4, 5)
    v = np.arange(7, dtype=np.int32) * 10
    specs3 = ["1", "-1", "0,2", "1,-1,3", ":", "::-1", "1:", ":-1", "-2:", "::2", "1::-1",
              "-1:0:-1", "5:", "-10:2", "0:100", ":,1:3", "2,::-2,1:4:2", "::-1,::-1,::-1",
              "3:1", "1,2:2"]
    specsv = ["3", "-7", "2:5", "::-3", "10:", "-100:100:2", "6:-8:-2"]
    lines = []
    for arr, specs in [(x, specs3), (v, specsv)]:
        for spec in specs:
            r = arr[parse_index(spec)]
            lines.append("|".join(["sub", spec, arr.dtype.name, shape(arr), values(arr), "", "", "",
                                   r.dtype.name, shape(np.asarray(r)), values(np.asarray(r))]))
    for spec, y in [("1", np.float64(-1.0)), (":,2", np.arange(5.0)), ("::-1,0,1:3", np.ones((3, 2))),
                    ("0,1:4,::2", np.array([[1.0, 2.0, 3.0]]))]:
        for op in ["set", "inc"]:
            r = x.copy()
            if op == "set":
                r[parse_index(spec)] = y
            else:
                r[parse_index(spec)] += y
            y = np.asarray(y)
            lines.append("|".join([op, spec, x.dtype.name, shape(x), values(x), y.dtype.name,
                                   shape(y), values(y), r.dtype.name, shape(r), values(r)]))
    for idx in [[0, 2, -1], [1, 1, 0, 2], []]:
        ia = np.array(idx, dtype=np.int64)
        r = x[ia]
        lines.append("|".join(["take", ",".join(map(str, idx)), x.dtype.name, shape(x), values(x),
                               "", "", "", r.dtype.name, shape(r), values(r)]))
        for op in ["set", "inc"]:
            y = np.arange(len(idx) * 20, dtype=np.float64).reshape(len(idx), 4, 5) + 0.5
            r = x.copy()
            if op == "set":
                r[ia] = y
            else:
                np.add.at(r, ia, y)
            lines.append("|".join(["take_" + op, ",".join(map(str, idx)), x.dtype.name, shape(x),
                                   values(x), y.dtype.name, shape(y), values(y), r.dtype.name,
                                   shape(r), values(r)]))
    write("numpy_indexing.txt",
          "op|index (a,b:c:d; take: integer list)|x dtype|x shape|x values|y dtype|y shape|"
          "y values|out dtype|out shape|out values", lines)


def adv_spec_index(spec):
    """'[0,2];:;M[1,0,1];N;...;-1' -> ([0, 2], slice(None), mask, None, Ellipsis, -1): an advanced
    index, entries split by ';' (an integer array as a nested list, a boolean mask as M and a
    nested list of 0/1, N for numpy.newaxis)."""
    out = []
    for part in spec.split(";"):
        if part == "N":
            out.append(None)
        elif part == "...":
            out.append(Ellipsis)
        elif part.startswith("M"):
            out.append(np.array(eval(part[1:]), dtype=bool))
        elif part.startswith("["):
            out.append(np.array(eval(part), dtype=np.int64).reshape(np.shape(eval(part))))
        else:
            out.extend(parse_index(part))
    return tuple(out)


def advanced_indexing():
    """AdvancedSubtensor and AdvancedIncSubtensor (Aesara 2.9.4 runs NumPy's x[idx],
    x[idx] = y, numpy.add.at and x[idx] += y for ignore_duplicates)."""
    x = np.arange(60, dtype=np.float64).reshape(3, 4, 5) / 4.0
    m = np.arange(12, dtype=np.int32).reshape(3, 4) - 5
    reads = [(x, s) for s in [
        "[0,2,-1]", "[[0,1],[2,-1]]", ":;[1,3]", "[0,2];[1,3]", "[0,2];:;[1,4]", "1;:;[0,4,2]",
        ":;[[0],[2]];[1,3,4]", "[[0],[2]];1:3;[1,3,4]", "N;[0,2]", "[1,2];N;[0,1]", "...;[4,0]",
        "[2,0];...", "::-1;[3,-4]", "M[1,0,1]", "M[[1,0,1,1],[0,0,1,0],[1,1,1,1]]",
        "M[1,0,1];1:", ":;M[0,1,1,0]", "[0,0,2];[1,1,3]", "-1;[0];:", "[]", ":;-1;[[4],[0]]",
        "M[0,0,0]", "[1];N;::2;[-5,4]"]]
    reads += [(m, s) for s in ["[1,0];[2,2]", "M[[1,0,0,1],[0,1,1,0],[1,1,1,1]]", "::2;[-1,0,-4]"]]
    lines = []
    for arr, spec in reads:
        r = arr[adv_spec_index(spec)]
        lines.append("|".join(["sub", spec, arr.dtype.name, shape(arr), values(arr), "", "", "",
                               r.dtype.name, shape(r), values(r)]))
    rng = np.random.default_rng(36)
    writes = [("[0,0,2]", (3, 4, 5)), ("[0,2,0];[1,1,1]", (3, 5)), ("[1,1];:;[0,0]", (2, 4)),
              ("M[1,0,1]", ()), ("...;[4,4]", (2,)), ("[[0],[2]];[1,1,3]", (2, 3, 5)),
              ("N;[2,2];-1", (1, 2, 5)), (":;M[1,0,0,1];::-2", (2, 1))]
    for spec, yshape in writes:
        idx = adv_spec_index(spec)
        y = np.round(rng.normal(size=yshape), 3)
        for op in ["set", "inc", "inc_nodup"]:
            r = x.copy()
            if op == "set":
                r[idx] = y
            elif op == "inc":
                np.add.at(r, idx, y)
            else:
                r[idx] += y
            lines.append("|".join([op, spec, x.dtype.name, shape(x), values(x), y.dtype.name,
                                   shape(y), values(y), r.dtype.name, shape(r), values(r)]))
    r = m.copy()
    np.add.at(r, adv_spec_index("[1,1,2];[0,0,3]"), np.int32(7))
    lines.append("|".join(["inc", "[1,1,2];[0,0,3]", m.dtype.name, shape(m), values(m), "int32",
                           "-", "7", r.dtype.name, shape(r), values(r)]))
    write("numpy_advanced_indexing.txt",
          "op (sub, set, inc: numpy.add.at, inc_nodup: x[idx] += y)|index (entries split by ';': "
          "an integer, a:b:c, [nested integer list], M[nested 0/1 list] a boolean mask, N newaxis, "
          "...)|x dtype|x shape|x values|y dtype|y shape|y values|out dtype|out shape|out values",
          lines)


def nnet():
    x = np.array([[1.0, 2.0, 3.0, -1.0], [1000.0, -1000.0, 0.5, 999.0], [-1000.0, -1001.0, -999.0,
                                                                         -1000.0]])
    p = np.array([[0.1, 0.7, 0.2], [0.3, 0.3, 0.4]])
    t = np.array([[0.0, 1.0, 0.0], [0.5, 0.0, 0.5]])
    labels = np.array([1, 2], np.int64)
    s = np.array([[3.0, np.nan, -1.0, 2.0, -5.0], [0.5, 0.25, 0.125, 1.0, -0.5]])
    cases = [
        ("softmax", "1", [x], sp.softmax(x, axis=1)),
        ("softmax", "0", [x], sp.softmax(x, axis=0)),
        ("softmax", "None", [x], sp.softmax(x, axis=None)),
        ("log_softmax", "1", [x], sp.log_softmax(x, axis=1)),
        ("log_softmax", "0", [x.astype(np.float32)], sp.log_softmax(x.astype(np.float32), axis=0)),
        ("logsumexp", "1", [x], sp.logsumexp(x, axis=1)),
        ("logsumexp", "None", [x], np.asarray(sp.logsumexp(x))),
        ("logsumexp", "0", [np.array([[-np.inf, 1.0], [-np.inf, 2.0]])],
         sp.logsumexp(np.array([[-np.inf, 1.0], [-np.inf, 2.0]]), axis=0)),
        ("relu", "", [x], np.maximum(x, 0)),
        ("binary_crossentropy", "", [p, t], -(t * np.log(p) + (1 - t) * np.log(1 - p))),
        ("categorical_crossentropy", "", [p, t], -np.sum(t * np.log(p), axis=1)),
        ("categorical_crossentropy", "", [p, labels], -np.log(p[np.arange(2), labels])),
        ("sort", "1", [s], np.sort(s, axis=1, kind="stable")),
        ("sort", "0", [s], np.sort(s, axis=0, kind="stable")),
        ("sort", "None", [s], np.sort(s, axis=None, kind="stable")),
        ("argsort", "1", [s], np.argsort(s, axis=1, kind="stable")),
        ("argsort", "None", [np.array([3, 1, 2, 1], np.int32)],
         np.argsort(np.array([3, 1, 2, 1], np.int32), axis=None, kind="stable")),
    ]
    lines = []
    for fn, axis, args, r in cases:
        r = np.asarray(r)
        fields = [fn, axis]
        for k in range(2):
            a = args[k] if k < len(args) else None
            fields += ["", "", ""] if a is None else [a.dtype.name, shape(a), values(a)]
        fields += [r.dtype.name, shape(r), values(r)]
        lines.append("|".join(fields))
    write("numpy_nnet.txt", "fn|axis|a dtype|a shape|a values|b dtype|b shape|b values|out dtype|"
          "out shape|out values (SciPy's softmax, log_softmax and logsumexp)", lines)


def repeat():
    lines = []
    cases = [  # x dtype, x shape, repeats (int or list), axis ("" for None)
        ("float64", (5,), [1, 0, 2, 3, 1], ""), ("float64", (2, 3), [2, 0, 1], 1),
        ("float64", (2, 3), [3, 1], 0), ("int8", (2, 3), [1, 2], -2), ("float32", (2, 3, 2), 2, 1),
        ("float64", (2, 3), 3, ""), ("int64", (4,), [2], 0), ("float64", (2, 3), [0, 0, 0], 1),
        ("float64", (0, 3), [1, 2, 3], 1), ("bool", (3,), [1, 2, 0], 0),
        ("float64", (2, 3), [1, 0, 2, 1, 1, 3], ""), ("float64", (), 4, ""),
    ]
    for dt, shp, reps, axis in cases:
        x = np.arange(int(np.prod(shp)), dtype=np.float64).reshape(shp).astype(dt)
        r = np.array(reps, dtype=np.int64)
        out = np.repeat(x, r, axis=None if axis == "" else axis)
        lines.append("|".join([str(axis), dt, shape(x), encode(x), shape(r), values(r),
                               out.dtype.name, shape(out), encode(out)]))
    write("numpy_repeat.txt", "axis (empty: None)|x dtype|x shape|x values|repeats shape|"
          "repeats values (int64)|out dtype|out shape|out values", lines)


def bartlett():
    """numpy_bartlett.txt: numpy.bartlett(M), which Aesara's Bartlett.perform calls."""
    lines = []
    for dt, m in [("int64", -3), ("int64", 0), ("int64", 1), ("int64", 2), ("int32", 3),
                  ("int8", 5), ("uint8", 8), ("int16", 12), ("uint64", 33)]:
        out = np.bartlett(np.array(m, dtype=dt))
        lines.append("|".join([dt, str(m), out.dtype.name, shape(out), encode(out)]))
    write("numpy_bartlett.txt", "M dtype|M|out dtype|out shape|out values", lines)


def fill_diagonal():
    lines = []
    cases = [  # a dtype, a shape, val dtype, val
        ("float64", (3, 3), "float64", -1.5), ("float64", (4, 2), "float64", 9.0),
        ("float64", (2, 5), "int8", 7), ("float32", (3, 3), "float32", 0.25),
        ("int32", (3, 4), "int16", -2), ("bool", (2, 2), "bool", False),
        ("complex128", (2, 3), "complex128", 1 - 2j), ("float64", (3, 3, 3), "float64", 100.0),
        ("int8", (2, 2, 2, 2), "int8", -7), ("float64", (1, 4), "float64", 3.0),
        ("float64", (0, 3), "float64", 5.0), ("uint8", (5, 1), "uint8", 200),
        ("float64", (1, 1, 1), "uint16", 9),
    ]
    for dt, shp, vdt, v in cases:
        a = (np.arange(int(np.prod(shp)), dtype=np.float64).reshape(shp) + 1).astype(dt)
        val = np.array(v, dtype=vdt)
        out = a.copy()
        np.fill_diagonal(out, val)  # Aesara's FillDiagonal.perform for every case here
        lines.append("|".join([dt, shape(a), encode(a), vdt, encode(val), out.dtype.name,
                               shape(out), encode(out)]))
    write("numpy_fill_diagonal.txt", "a dtype|a shape|a values|val dtype|val value|out dtype|"
          "out shape|out values (numpy.fill_diagonal on a copy of a)", lines)


def array_funcs():
    """numpy_array_funcs.txt: the array ops of aesara.tensor.extra_ops, basic and sort (their
    perform is the NumPy function named; FillDiagonalOffset's and TopKOp's are written out as
    Aesara writes them, TopKOp's partition order as ascending order)."""
    rng = np.random.default_rng(36)
    lines = []

    def case(fn, param, ins, outs):
        fields = [fn, str(param), str(len(ins))]
        for a in ins:
            a = np.asarray(a)
            fields += [a.dtype.name, shape(a), encode(a)]
        fields.append(str(len(outs)))
        for a in outs:
            a = np.asarray(a)
            fields += [a.dtype.name, shape(a), encode(a)]
        lines.append("|".join(fields))

    i64 = lambda v: np.array(v, dtype=np.int64)  # noqa: E731
    # searchsorted: sides, ties, NaN, a sorter, an empty x, a scalar v, mixed dtypes.
    x = np.array([1.0, 2.0, 2.0, 3.0, np.nan])
    for side in ["left", "right"]:
        for v in [np.array([2.0, -5.0, 10.0, np.nan, 2.5]), np.array(2.0),
                  np.array([[0.0, 3.0], [3.0, 1.0]])]:
            case("searchsorted", side, [x, v], [np.searchsorted(x, v, side=side)])
        u = np.array([5, 1, 4, 1, 3], dtype=np.int32)
        s = np.argsort(u, kind="stable")
        v = np.array([1, 2, 5, 6, 0], dtype=np.int32)
        case("searchsorted", side, [u, v, s], [np.searchsorted(u, v, side=side, sorter=s)])
        case("searchsorted", side, [np.zeros(0), np.array([1.0])],
             [np.searchsorted(np.zeros(0), [1.0], side=side)])
        case("searchsorted", side, [np.array([1, 3], dtype=np.int8), np.array([2.5, 3.0])],
             [np.searchsorted(np.array([1, 3], dtype=np.int8), [2.5, 3.0], side=side)])
    # unique: every flag combination, axes, NaN (collapsed), ties, empty, bool, a scalar.
    m = np.array([[3.0, 1.0, 3.0], [1.0, np.nan, np.nan], [3.0, 1.0, 3.0], [0.0, 2.0, 2.0]])
    ints = rng.integers(0, 4, size=(4, 3, 2)).astype(np.int16)
    for arr in [m, ints, np.zeros(0), np.array([True, False, True]), np.array(7.5),
                np.array([[1, 2], [1, 2], [0, 5]], dtype=np.uint8)]:
        for flags in [(0, 0, 0), (1, 1, 1), (1, 0, 1), (0, 1, 0)]:
            for axis in [None] + list(range(-arr.ndim, arr.ndim)):
                if axis is not None and (np.isnan(arr).any() if arr.dtype.kind == "f" else False):
                    continue  # NaN rows: NumPy's structured comparison, not modelled
                if axis is not None and arr.size == 0:
                    continue
                out = np.unique(arr, return_index=bool(flags[0]), return_inverse=bool(flags[1]),
                                return_counts=bool(flags[2]), axis=axis)
                out = list(out) if any(flags) else [out]
                if flags[1] and axis is None:
                    k = 1 + flags[0]
                    out[k] = out[k].reshape(-1)
                case("unique", ",".join(map(str, flags)) + "," + str(axis), [arr],
                     [o.astype(np.int64) if i else o for i, o in enumerate(out)])
    # unravel_index and ravel_multi_index: orders, modes, shapes, a zero dim.
    for order in ["C", "F"]:
        idx = i64([[0, 5, 23], [7, 11, 1]])
        case("unravel_index", order, [idx, i64([2, 3, 4])],
             list(np.unravel_index(idx, (2, 3, 4), order=order)))
        case("unravel_index", order, [np.array(5, dtype=np.int32), i64([6])],
             list(np.unravel_index(5, (6,), order=order)))
        case("unravel_index", order, [i64([]), i64([0, 3])],
             list(np.unravel_index(i64([]), (0, 3), order=order)))
        for mode in ["raise", "wrap", "clip"]:
            a, b = i64([[0, 1, 1], [1, 0, 1]]), i64([[2, 0, 1], [1, 2, 2]])
            if mode != "raise":
                a, b = i64([[3, -1, 1], [1, 0, -4]]), i64([[2, 7, -1], [1, 2, 5]])
            case("ravel_multi_index", mode + "," + order, [a, b, i64([2, 3])],
                 [np.ravel_multi_index((a, b), (2, 3), mode=mode, order=order)])
        a, b = np.array([0, 1, 2], dtype=np.int8), i64(1)
        case("ravel_multi_index", "raise," + order, [a, b, i64([3, 4])],
             [np.ravel_multi_index((a, b), (3, 4), order=order)])
    # ExtractDiag and AllocDiag: offsets, axes, tall/wide/batched.
    t = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    for arr, params in [(t[0], [(0, 0, 1), (1, 0, 1), (-1, 0, 1), (3, 0, 1), (5, 0, 1),
                                (-3, 0, 1), (0, 1, 0), (2, 1, 0)]),
                        (t, [(0, 0, 1), (1, 1, 2), (-1, 0, 2), (0, 2, 0), (1, -1, -2)]),
                        (np.arange(6, dtype=np.int32).reshape(3, 2), [(0, 0, 1), (-1, 0, 1)])]:
        for off, a1, a2 in params:
            case("extract_diag", f"{off},{a1},{a2}", [arr],
                 [np.diagonal(arr, off, a1, a2).copy()])
    for d, params in [(np.array([1.0, 2.0, 3.0]), [(0, 0, 1), (2, 0, 1), (-1, 0, 1)]),
                      (np.arange(6, dtype=np.int64).reshape(2, 3), [(0, 0, 1), (1, 1, 2),
                                                                     (-2, 0, 2), (0, 2, 1)]),
                      (np.zeros(0), [(1, 0, 1)])]:
        for off, a1, a2 in params:
            # Aesara's AllocDiag.perform: the diagonal laid in the last two dims, then moved.
            n = d.shape[-1] + abs(off)
            res = np.zeros(d.shape[:-1] + (n, n), dtype=d.dtype)
            i = np.arange(d.shape[-1])
            res[..., i + max(0, -off), i + max(0, off)] = d
            lo, hi = min(a1, a2), max(a1, a2)
            axes = list(range(d.ndim - 1))
            last = d.ndim - 2
            axes = axes[:lo] + [last + 1] + axes[lo:]
            axes = axes[:hi] + [last + 2] + axes[hi:]
            case("alloc_diag", f"{off},{a1},{a2}", [d], [res.transpose(axes)])
            assert np.array_equal(np.diagonal(res.transpose(axes), off, lo, hi), d)
    # FillDiagonalOffset: Aesara's unwrapped diagonal of square, tall and wide matrices.
    for shp, off in [((3, 3), 0), ((3, 3), 1), ((3, 3), -2), ((5, 3), 1), ((5, 3), -3),
                     ((2, 5), 3), ((2, 5), -1), ((3, 3), 4), ((4, 4), -7), ((0, 2), 0)]:
        a = np.arange(int(np.prod(shp)), dtype=np.float64).reshape(shp) + 1
        out = a.copy()
        h, w = shp
        start = off if off >= 0 else -off * w
        count = min(min(w, h), w - off) if off >= 0 else min(min(w, h), h + off)
        if count > 0:
            out.flat[start:start + (w + 1) * count:w + 1] = -1.5
        case("fill_diagonal_offset", "", [a, np.array(-1.5), i64(off)], [out])
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    out = a.copy()
    out.flat[1:1 + 4 * 2:4] = 9
    case("fill_diagonal_offset", "", [a, np.array(9, dtype=np.int8), np.array(1, np.int8)], [out])
    # Tri.
    for n, mm, k, dt in [(3, 3, 0, "float64"), (3, 5, 1, "int8"), (4, 2, -1, "float32"),
                         (0, 3, 0, "float64"), (2, 2, -5, "bool"), (2, 3, 9, "int64")]:
        case("tri", dt, [i64(n), i64(mm), i64(k)], [np.tri(n, mm, k, dtype=dt)])
    # BroadcastTo.
    for arr, shp in [(np.array([1.0, 2.0, 3.0]), (2, 3)), (np.array(4, dtype=np.int16), (2, 2)),
                     (np.arange(2.0).reshape(2, 1), (3, 2, 4)), (np.array([5.0]), (0,)),
                     (np.array([[1.0, 2.0]]), (1, 2))]:
        case("broadcast_to", "", [arr] + [i64(s) for s in shp], [np.broadcast_to(arr, shp)])
    # Choose.
    choices = np.arange(12, dtype=np.float64).reshape(3, 4) * 10
    for mode, a in [("raise", i64([0, 2, 1, 0])), ("wrap", i64([4, -1, 7, 2])),
                    ("clip", i64([5, -3, 1, 2])), ("raise", i64([[0], [2]])),
                    ("raise", np.array(1, np.int8))]:
        case("choose", mode, [a, choices], [np.choose(a, choices, mode=mode)])
    case("choose", "raise", [i64([1, 0]), np.array([[1, 2], [3, 4]], dtype=np.int32)],
         [np.choose(i64([1, 0]), np.array([[1, 2], [3, 4]], dtype=np.int32))])
    # TopKOp: kth = n keeps x, |kth| = 1 is argmax/argmin, else ascending order of the kept.
    def topk(x, k, axis):
        n = x.shape[axis]
        if abs(k) == n:
            idx = np.broadcast_to(np.arange(n).reshape((n,) + (1,) * (x.ndim - 1 - axis % x.ndim)),
                                  x.shape).copy()
        elif k == 1:
            idx = np.expand_dims(np.argmax(x, axis=axis), axis)
        elif k == -1:
            idx = np.expand_dims(np.argmin(x, axis=axis), axis)
        else:
            order = np.argsort(x, axis=axis, kind="stable")
            sl = [slice(None)] * x.ndim
            sl[axis] = slice(-k, None) if k > 0 else slice(None, -k)
            idx = order[tuple(sl)]
        return np.take_along_axis(x, idx, axis), idx.astype(np.int64)
    y = rng.standard_normal((3, 5))
    y[1, 2] = y[1, 4] = 0.5  # a tie
    z = np.array([[2.0, np.nan, 1.0, 3.0], [4.0, 4.0, 0.0, -1.0]])
    for arr, axis, k in [(y, -1, 2), (y, -1, -3), (y, 0, 1), (y, 0, -1), (y, 1, 5), (y, 0, -3),
                         (z, 1, 2), (z, 1, 1), (z, 1, -1), (z, 1, -2), (z, 0, 2),
                         (np.array([3, 1, 2, 3], dtype=np.int8), 0, 3)]:
        case("topk", axis, [arr, i64(k)], list(topk(arr, k, axis)))
    write("numpy_array_funcs.txt", "fn|param|inputs (count, then dtype|shape|values each)|"
          "outputs (the same)", lines)


def sparse():
    import scipy.sparse as sps
    rng = np.random.default_rng(35)
    lines = []

    def csr(m):
        m = sps.csr_matrix(m)
        m.sort_indices()
        return [encode(m.data), encode(m.indices.astype(np.int64)), encode(m.indptr.astype(np.int64))]

    # m, k, n, density: square, wide, tall, an empty matrix, a row and a column with no entry.
    for m, k, n, density in [(4, 5, 3, 0.4), (1, 7, 2, 0.5), (6, 2, 4, 0.6), (3, 3, 3, 0.0),
                             (5, 4, 1, 0.3), (8, 6, 5, 0.2)]:
        a = sps.random(m, k, density=density, format="csr", random_state=rng)
        a.data[a.indptr[0]:a.indptr[1]] = 0  # a row with no entry
        a.eliminate_zeros()
        b = rng.standard_normal((k, n))
        c = sps.random(k, n, density=0.5, format="csr", random_state=rng)
        d = sps.random(m, k, density=0.5, format="csr", random_state=rng)
        x, y = rng.standard_normal((m, 3)), rng.standard_normal((k, 3))
        rows = np.repeat(np.arange(m), np.diff(a.indptr))
        sampled = (x @ y.T)[rows, a.indices]
        lines.append("|".join(
            [f"{m}x{k}x{n}"] + csr(a) + [encode(b)] + csr(c) + csr(d) + [encode(x), encode(y)]
            + [encode(a @ b)] + csr(a @ c) + csr(a + d) + csr(a.multiply(d)) + [encode(sampled),
                                                                                 encode(a.toarray())]))
    write("numpy_sparse.txt", "m x k x n|A (m, k) data|indices|indptr|B (k, n) dense|C (k, n) "
          "data|indices|indptr|D (m, k) data|indices|indptr|X (m, 3)|Y (k, 3)|A @ B|A @ C data|"
          "indices|indptr|A + D data|indices|indptr|A * D data|indices|indptr|(X @ Y.T) at A's "
          "entries|A dense (scipy.sparse, indices sorted)", lines)


if __name__ == "__main__":
    array_funcs()
    sparse()
    fill_diagonal()
    bartlett()
    repeat()
    promotion()
    nnet()
    indexing()
    advanced_indexing()
    linalg()
    reductions()
    formats()
    elemwise()
    scalar_ops()

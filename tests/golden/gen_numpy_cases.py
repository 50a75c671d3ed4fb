#!/usr/bin/python3
"""Writes the NumPy reference files the C++ tests read. Run with Debian's /usr/bin/python3.

numpy_dtype_promotion.txt  promote_types and can_cast('safe') for every dtype pair
numpy_format.txt           str(ndarray) for tensors of several dtypes and shapes
numpy_elemwise.txt         Elemwise results: NumPy computing in the output dtype Aesara infers
"""
import os

import numpy as np

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
        ("true_div", np.array([1, 2, 3], np.int32), np.array([2, 0, -2], np.int32), "float64"),
        ("true_div", np.array([1.0, 3.0], np.float32), np.array([4, 2], i8), "float32"),
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
        ops = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "true_div": np.true_divide,
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


if __name__ == "__main__":
    promotion()
    formats()
    elemwise()

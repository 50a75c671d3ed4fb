#!/usr/bin/python3
"""Writes tests/golden/aesara_ofg_overrides.json: the results of the programs of
tests/golden/ofg_override_programs.py (OpFromGraph's grad_overrides, lop_overrides,
rop_overrides and connection_pattern) under Aesara 2.9.4, for
tests/python/test_op_from_graph_overrides.py, which runs the same programs with Kiln.

Run with Aesara 2.9.4 importable, in pure-Python mode:

    PYTHONPATH=<aesara-2.9.4> AESARA_FLAGS=cxx= \
        /usr/bin/python3 tests/golden/gen_aesara_ofg_overrides.py
"""
import json
import os
import sys
import types
import warnings

import numpy as np

warnings.filterwarnings("ignore")
import aesara  # noqa: E402
import aesara.tensor as at  # noqa: E402
from aesara.compile.builders import OpFromGraph  # noqa: E402
from aesara.gradient import (DisconnectedInputError, DisconnectedType,  # noqa: E402
                             NullTypeGradError, Rop)
from aesara.graph.null_type import NullType  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ofg_override_programs  # noqa: E402

A = types.SimpleNamespace(function=aesara.function, grad=aesara.grad, Rop=Rop, at=at,
                          OpFromGraph=OpFromGraph, NullType=NullType,
                          DisconnectedType=DisconnectedType,
                          NullTypeGradError=NullTypeGradError,
                          DisconnectedInputError=DisconnectedInputError)


def plain(value):
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        return np.asarray(value).tolist()
    return value


def main():
    results = {}
    for program in ofg_override_programs.PROGRAMS:
        results[program.__name__] = {k: plain(v) for k, v in program(A).items()}
    with open(os.path.join(HERE, "aesara_ofg_overrides.json"), "w") as fh:
        json.dump({"aesara": aesara.__version__, "results": results}, fh, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    main()

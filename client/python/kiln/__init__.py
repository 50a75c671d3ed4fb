"""Kiln's Python client: Aesara's API over a Kiln server.

    import kiln
    import kiln.tensor as kt
    x = kt.dmatrix("x")
    f = kiln.function([x], x * 2.0)      # compiled by the server at kiln.config.server

Graphs are built in this process with Aesara's types and names, by core itself (the native
module kiln._core), which also differentiates (grad, Lop, Rop, jacobian, hessian) and prints
them here; the server (KILN_SERVER, default localhost:50051) optimizes and compiles, and runs
the compiled functions or hands them over to run here (execute="local").
"""
from kiln.config import config
from kiln import tensor
from kiln.errors import KilnError
from kiln.compile import (DebugMode, Function, In, Mode, NanGuardMode, OpFromGraph,  # noqa
                          Out, SharedVariable, function, shared)
from kiln import gradient, ifelse, printing, runners  # noqa: F401  (runners: where calls run)
from kiln.gradient import grad
from kiln.printing import debugprint, dprint, pp, pprint
from kiln.client import get_client as _get_client
from kiln.scan import foldl, foldr, map, reduce  # noqa: F401,A004
from kiln.scan import scan  # noqa: E402 (kiln.scan is the function, as aesara.scan is)


def resident(value, server=None):
    """A tensor uploaded once to the server (default kiln.config.server) and kept there: pass
    it to functions in place of its value, and calls send no data for it. It goes when
    deleted (.delete()), garbage collected, or unused for the server's --session_ttl."""
    return _get_client(server).resident(value)


__all__ = ["resident", "config", "tensor", "function", "shared", "grad", "In", "Out", "Function",
           "SharedVariable", "KilnError", "gradient", "printing", "dprint", "debugprint", "pp",
           "pprint", "scan", "map", "reduce", "foldl", "foldr", "OpFromGraph"]

# Aesara's other top-level names, and its module tree (aesara.graph, aesara.scalar...).
from kiln import d3viz, graph, onnx, scalar, sparse  # noqa: E402,F401
from kiln.gradient import Lop, Rop  # noqa: E402,F401
from kiln.graph import Variable, clone_replace  # noqa: E402,F401
from kiln.scan.basic import OrderedUpdates  # noqa: E402,F401
from kiln.tensor.basic import get_scalar_constant_value  # noqa: E402,F401

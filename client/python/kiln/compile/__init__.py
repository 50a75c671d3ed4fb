"""kiln.compile (Aesara's aesara.compile): function, In, Out and shared, compiled by the server
and run there or in this process."""
from kiln.compile.builders import OpFromGraph
from kiln.compile.functions import Function, function
from kiln.compile.io import In, Out
from kiln.compile.mode import FAST_COMPILE, FAST_RUN, DebugMode, Mode, NanGuardMode, get_mode
from kiln.compile.sharedvalue import SharedVariable, shared
from kiln import graph as _graph

_graph.compile_function = function  # for Variable.eval and verify_grad, in the layers below

__all__ = ["Function", "function", "In", "Out", "SharedVariable", "shared", "Mode", "FAST_RUN",
           "FAST_COMPILE", "DebugMode", "NanGuardMode", "get_mode", "OpFromGraph"]

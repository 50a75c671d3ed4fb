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

# Aesara's module tree under aesara.compile. Importing kiln.compile.function makes the
# package's `function` that module for a moment: the import below binds it to the function
# again, as aesara.compile.function is.
from kiln.compile.function import UnusedInputError, function  # noqa: E402,F811
from kiln.compile.io import SymbolicInput, SymbolicOutput  # noqa: E402,F401
from kiln.compile.mode import get_default_mode, optdb  # noqa: E402,F401

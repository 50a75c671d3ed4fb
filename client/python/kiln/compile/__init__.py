"""kiln.compile (Aesara's aesara.compile): function, In, Out and shared, compiled and run by
the server."""
from kiln.compile.builders import OpFromGraph
from kiln.compile.functions import Function, function
from kiln.compile.io import In, Out
from kiln.compile.mode import FAST_COMPILE, FAST_RUN, DebugMode, Mode, NanGuardMode, get_mode
from kiln.compile.sharedvalue import SharedVariable, shared

__all__ = ["Function", "function", "In", "Out", "SharedVariable", "shared", "Mode", "FAST_RUN",
           "FAST_COMPILE", "DebugMode", "NanGuardMode", "get_mode", "OpFromGraph"]

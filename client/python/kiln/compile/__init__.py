"""kiln.compile (Aesara's aesara.compile): function, In, Out and shared, compiled and run by
the server."""
from kiln.compile.functions import Function, function
from kiln.compile.io import In, Out
from kiln.compile.sharedvalue import SharedVariable, shared

__all__ = ["Function", "function", "In", "Out", "SharedVariable", "shared"]

"""kiln.compile.debugmode: Aesara's module path of DebugMode."""
from kiln.compile.mode import DebugMode  # noqa: F401

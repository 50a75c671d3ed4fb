"""kiln.compile.nanguardmode: Aesara's module path of NanGuardMode."""
from kiln.compile.mode import NanGuardMode  # noqa: F401

"""kiln.scalar (Aesara's aesara.scalar): the scalar ops and types (kiln.scalar.basic)."""
from kiln.scalar import basic  # noqa: F401
from kiln.scalar.basic import *  # noqa: F401,F403
from kiln.scalar.basic import ScalarOp, ScalarType  # noqa: F401

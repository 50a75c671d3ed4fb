"""kiln.config: where the server is, and Aesara's floatX."""
import os


class _Config:
    def __init__(self):
        # host:port of the Kiln server (environment KILN_SERVER).
        self.server = os.environ.get("KILN_SERVER", "localhost:50051")
        # The dtype of the unprefixed constructors (vector, matrix...), as Aesara's floatX.
        self.floatX = "float64"
        # Seconds a call may take before it is DEADLINE_EXCEEDED; None waits.
        self.timeout = None


config = _Config()

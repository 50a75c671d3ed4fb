"""aesara.raise_op: Assert, core's op, which returns its first input when every condition holds
and fails the call with its message otherwise (Aesara raises AssertionError(msg); Kiln's call
fails with a KilnError whose message ends with msg). Aesara's CheckAndRaise with other exception
classes has no Kiln counterpart: an exception class cannot cross to the server."""
from kiln.ops import Assert

__all__ = ["Assert", "assert_op"]

assert_op = Assert()  # Aesara's instance, with its default message

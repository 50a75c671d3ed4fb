"""kiln.compile.function (Aesara's aesara.compile.function): function, and UnusedInputError
(Aesara's aesara.compile.function.types). The compiled functions are kiln.compile.functions's."""
from kiln.compile.functions import Function, UnusedInputError, function  # noqa: F401

pfunc = function  # Aesara's pfunc(params, outputs, ...) is function's machinery

__all__ = ["function", "Function", "UnusedInputError"]

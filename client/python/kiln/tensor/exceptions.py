"""kiln.tensor.exceptions (Aesara's aesara.tensor.exceptions), with Aesara's class hierarchy."""

__all__ = ["NotScalarConstantError", "ShapeError", "AdvancedIndexingError"]


class NotScalarConstantError(Exception):
    """get_scalar_constant_value found no constant scalar value."""


class ShapeError(Exception):
    """A shape is not what an op needs."""


class AdvancedIndexingError(TypeError):
    """An advanced index Kiln cannot apply."""

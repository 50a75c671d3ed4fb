"""kiln.graph.type (Aesara's aesara.graph.type): Type, the class of every variable's type, and
the HasShape and HasDataType marks. Kiln's types are TensorType (kiln.tensor.type) and the
types core gives gradients (NullType, DisconnectedType): isinstance(x.type, Type) holds for
each."""
import abc

from kiln.graph import Constant, TensorType, Variable  # noqa: F401

__all__ = ["Type", "HasShape", "HasDataType", "Constant", "Variable"]


class Type(abc.ABC):
    """The type of a variable: filter(value) checks a value against it, and calling it makes a
    variable of it. Kiln's types are registered as its virtual subclasses."""

    def is_super(self, otype):
        return self == otype

    def in_same_class(self, otype):
        return self == otype


class HasDataType(abc.ABC):
    """A type with a dtype."""


class HasShape(abc.ABC):
    """A type with a static shape (ndim and shape)."""


for _t in (Type, HasDataType, HasShape):
    _t.register(TensorType)
del _t


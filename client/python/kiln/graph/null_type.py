"""kiln.graph.null_type (Aesara's aesara.graph.null_type): NullType, the type of an undefined
gradient, and DisconnectedType (aesara.gradient's), the type of the gradient of a variable the
cost does not depend on. Calling either makes a variable of it, which OpFromGraph's
grad_overrides, lop_overrides and rop_overrides take for such a gradient. Gradients core makes
with these types (kiln.grad with null_gradients="return" or return_disconnected=
"Disconnected") are recognised too: is_null_type and is_disconnected_type say which."""
from kiln.graph import Variable

__all__ = ["NullType", "DisconnectedType", "is_null_type", "is_disconnected_type"]


class NullType:
    """The type of an undefined gradient; why_null says why (Aesara's default: "(no explanation
    given)")."""

    def __init__(self, why_null="(no explanation given)"):
        self.why_null = why_null

    def __call__(self, name=None):
        return Variable(self, name=name)

    def __eq__(self, other):
        return type(self) is type(other) and self.why_null == other.why_null

    def __hash__(self):
        return hash((type(self), self.why_null))

    def __str__(self):
        return "NullType"


class DisconnectedType:
    """The type of the gradient of a variable the cost does not depend on."""

    def __call__(self, name=None):
        return Variable(self, name=name)

    def __eq__(self, other):
        return type(self) is type(other)

    def __hash__(self):
        return hash(type(self))

    def __str__(self):
        return "DisconnectedType"


def is_null_type(v):
    """True for a variable of NullType, made here or by core."""
    return isinstance(v, Variable) and (isinstance(v.type, NullType) or str(v.type) == "NullType")


def is_disconnected_type(v):
    """True for a variable of DisconnectedType, made here or by core."""
    return isinstance(v, Variable) and (isinstance(v.type, DisconnectedType)
                                        or str(v.type) == "DisconnectedType")


def why_null(v):
    """The reason an undefined gradient variable carries."""
    reason = getattr(v.type, "why_null", None)
    return "(no explanation given)" if reason is None else reason

"""kiln.graph.utils (Aesara's aesara.graph.utils): the graph's exceptions, with Aesara's class
hierarchy so that code catching them works unchanged, and toposort."""
from kiln.errors import KilnError


class MissingInputError(ValueError):
    """A variable a graph needs is neither an input nor a constant (function, FunctionGraph,
    OpFromGraph). Aesara's is an Exception; this one is also a ValueError, as Kiln raised
    before it had the class."""

    def __init__(self, *args, variable=None, **kwargs):
        super().__init__(*args)
        self.variable = variable


class InconsistencyError(Exception):
    """A graph change would make the graph inconsistent (Aesara's, for its rewrites)."""


class MethodNotDefined(Exception):
    """An op's method (perform, c_code...) is not defined; Kiln's ops are core's, with every
    method, so Kiln raises it only for what an op cannot do."""


class TestValueError(Exception):
    """Aesara's test values (config.compute_test_value) are not part of Kiln."""


class CoreError(KilnError):
    """An error of core raised in this process (building, differentiating), typed as Aesara's
    class where core names one; also a KilnError with core's status code. Its str is core's
    message without the class name core puts first, as Aesara's str of the error."""

    def __str__(self):
        prefix = type(self).__name__ + ": "
        return self.message[len(prefix):] if self.message.startswith(prefix) else self.message


def typed_core_error(code, message, *rest):
    """Core's error (its status code and message, as kiln._core.CallError carries them) as the
    exception Aesara raises in its place: core prefixes the messages of Aesara's user errors
    with the class name (core/grad/gradient.cc: "DisconnectedInputError: ..."), a contract
    its tests pin. Anything else is a KilnError."""
    for prefix, cls in _BY_PREFIX.items():
        if message.startswith(prefix):
            return cls(code, message, *rest)
    return KilnError(code, message, *rest)


# Filled by the modules defining the classes (kiln.gradient: DisconnectedInputError,
# NullTypeGradError), which sit above this one.
_BY_PREFIX = {}


def register_core_error(prefix):
    """A class decorator: typed_core_error gives the class for core's messages starting with
    prefix."""
    def register(cls):
        _BY_PREFIX[prefix] = cls
        return cls
    return register


class Scratchpad:
    """Aesara's attribute bag (a variable's `tag`)."""

    def clear(self):
        self.__dict__.clear()

    def update(self, other):
        self.__dict__.update(other.__dict__)
        return self

    def __str__(self):
        return "scratchpad" + str(self.__dict__)

    __repr__ = __str__


class ValidatingScratchpad(Scratchpad):
    """A Scratchpad whose attribute `attr` is filtered through attr_filter when set."""

    def __init__(self, attr, attr_filter):
        object.__setattr__(self, "attr", attr)
        object.__setattr__(self, "attr_filter", attr_filter)

    def __setattr__(self, attr, obj):
        if getattr(self, "attr", None) == attr:
            obj = self.attr_filter(obj)
        return object.__setattr__(self, attr, obj)


def add_tag_trace(thing, user_line=None):
    """Aesara records where a variable was made in its tag; Kiln keeps no trace: thing as it
    is."""
    return thing


def get_variable_trace_string(v):
    """Where v was made: Kiln records nothing, so ""."""
    return ""


def toposort(prereqs_d):
    """The keys and values of prereqs_d ({item: [items it needs]}) with each after what it
    needs; ValueError on a cycle (Aesara's generic toposort)."""
    order, state = [], {}
    for root in list(prereqs_d):
        stack = [(root, False)]
        while stack:
            item, done = stack.pop()
            if done:
                state[item] = 2
                order.append(item)
                continue
            if state.get(item) == 2:
                continue
            if state.get(item) == 1:
                raise ValueError("graph contains cycles")
            state[item] = 1
            stack.append((item, True))
            for p in prereqs_d.get(item, ()):
                if state.get(p) == 1:
                    raise ValueError("graph contains cycles")
                if state.get(p) != 2:
                    stack.append((p, False))
    return order


__all__ = ["MissingInputError", "InconsistencyError", "MethodNotDefined", "TestValueError",
           "Scratchpad", "ValidatingScratchpad", "add_tag_trace", "get_variable_trace_string",
           "toposort"]

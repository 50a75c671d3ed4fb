"""kiln.In and kiln.Out (Aesara's aesara.compile.io): a function's inputs and outputs with
their options."""


class In:
    """An input with options: a name for keyword calls, a default value, and an update: an
    expression whose value, computed by each call, becomes the input's value for the next one
    (a state kept by the function when the variable is not shared)."""

    def __init__(self, variable, name=None, value=None, update=None, mutable=False,
                 borrow=False):
        self.variable = variable
        self.name = name or variable.name
        self.value = value
        self.update = update


class Out:
    """An output; borrow is accepted for Aesara's API (results are always fresh arrays)."""

    def __init__(self, variable, borrow=False):
        self.variable = variable
        self.borrow = borrow


def as_in(x):
    """An input as Aesara accepts one: an In, a variable, (variable, value) or
    ((variable, update), value)."""
    if isinstance(x, In):
        return x
    if isinstance(x, tuple):
        if len(x) != 2:
            raise TypeError("function: an input tuple is (variable, value) or "
                            "((variable, update), value), got %r" % (x,))
        target, value = x
        if isinstance(target, tuple):
            variable, update = target
            return In(variable, value=value, update=update)
        return In(target, value=value)
    return In(x)


class Container:
    """The value a function keeps for an input with a default or an update (fn.container[x])."""

    def __init__(self, variable, value=None):
        self.variable = variable
        self.value = None  # None until set: the input is then still required in a call
        if value is not None:
            self.set(value)

    def set(self, value):
        """Stores value filtered to the variable's type (safe casts only)."""
        self.value = self.variable.type.filter(value, allow_downcast=False,
                                               name=str(self.variable))


# Aesara's base classes of In and Out.
SymbolicInput = In
SymbolicOutput = Out

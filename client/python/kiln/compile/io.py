"""kiln.In and kiln.Out (Aesara's aesara.compile.io): a function's inputs and outputs with
their options."""


class In:
    """An input with options: a name for keyword calls and a default value."""

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

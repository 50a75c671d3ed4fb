"""Stand-ins for Aesara's internals that have no meaning in Kiln (its C code generation and
linkers, its Python rewrite databases): the names exist at Aesara's paths, so that importing
them works, and using one raises NotImplementedError saying what to use instead."""

REWRITES = ("Kiln's rewrites are in core (core/rewrite, core/passes), run by the server "
            "when it compiles: a Python rewrite cannot be registered or run. Choose the "
            "phases with mode=kiln.Mode(optimizer=...); see a compiled graph with "
            "kiln.dprint(f)")
LINKERS = ("Kiln compiles and links on the server (or runs the compiled function in this "
           "process with kiln.Mode(execute='local')): there are no Python linkers")
C_CODE = ("Kiln's kernels are core's C++ (core/ops): ops have no C code to generate or "
          "register")
TEST_VALUES = "Kiln has no test values: evaluate with var.eval({x: value}) instead"


class Unsupported:
    """A stand-in for Aesara's `name`: calling it, instantiating or subclassing it and then
    instantiating, or reading an attribute of it raises NotImplementedError(why)."""

    def __init__(self, name, why):
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_why", why)

    def _fail(self, *args, **kwargs):
        raise NotImplementedError("%s is not available in Kiln: %s." % (self._name, self._why))

    __call__ = _fail

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        self._fail()

    def __repr__(self):
        return "<%s: not available in Kiln>" % self._name


def unsupported(name, why):
    """A stand-in object for Aesara's function or instance `name` (optdb, node_rewriter...)."""
    return Unsupported(name, why)


def unsupported_class(name, why):
    """A stand-in class for Aesara's class `name`: subclassing it works (so modules defining
    Aesara rewriters or linkers still import), instantiating it raises."""
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("%s is not available in Kiln: %s." % (name, why))
    return type(name, (object,), {"__init__": __init__, "__doc__":
                                  "Aesara's %s, not available in Kiln: %s." % (name, why)})

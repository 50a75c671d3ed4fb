"""Writes tests/python/data/aesara_public_names.txt: the public names Aesara 2.9.4 defines in its
user modules, one "module:name" line each, sorted. The golden file is committed; this script is
only needed to regenerate it, with Aesara 2.9.4 importable (the tests never run it):

    cd /tmp && . /tmp/aesara-oracle/env.sh && \
        /usr/bin/python3 /work/main/tests/python/gen_aesara_names.py

A module's public names are those of dir(module) that do not start with "_" and whose object
Aesara defines: a class or function whose __module__ starts with "aesara", an instance of such
a class (at.add, an Elemwise; at.dmatrix, a TensorType; aesara.config), or one of Aesara's
modules (at.random). Names NumPy, typing or the standard library define are left out.
tests/python/test_api_surface.py checks how many of them kiln has at the same path."""
import importlib
import os
import sys
import types
import warnings

# Aesara's user modules: what its docs, tutorials and classic Theano programs import.
MODULES = [
    "aesara",
    "aesara.tensor", "aesara.tensor.basic", "aesara.tensor.math", "aesara.tensor.elemwise",
    "aesara.tensor.subtensor", "aesara.tensor.shape", "aesara.tensor.extra_ops",
    "aesara.tensor.nlinalg", "aesara.tensor.slinalg", "aesara.tensor.nnet",
    "aesara.tensor.nnet.basic", "aesara.tensor.random", "aesara.tensor.random.basic",
    "aesara.tensor.random.utils", "aesara.tensor.sharedvar", "aesara.tensor.var",
    "aesara.tensor.type", "aesara.tensor.sort", "aesara.tensor.blas", "aesara.tensor.fft",
    "aesara.tensor.xlogx", "aesara.tensor.signal", "aesara.tensor.special",
    "aesara.tensor.exceptions",
    "aesara.scalar", "aesara.scalar.basic",
    "aesara.sparse",
    "aesara.scan",
    "aesara.ifelse",
    "aesara.compile", "aesara.compile.function", "aesara.compile.io", "aesara.compile.mode",
    "aesara.compile.sharedvalue",
    "aesara.gradient",
    "aesara.printing",
    "aesara.graph", "aesara.graph.basic", "aesara.graph.fg", "aesara.graph.op",
    "aesara.graph.type", "aesara.graph.utils",
]

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "aesara_public_names.txt")


def defined_by_aesara(obj):
    """Whether Aesara defines obj: one of its modules, classes or functions, or an instance of
    one of its classes."""
    if isinstance(obj, types.ModuleType):
        return obj.__name__.split(".")[0] == "aesara"
    owner = obj.__module__ if isinstance(obj, (type, types.FunctionType)) else None
    if owner is None:
        owner = getattr(obj, "__module__", None) if callable(obj) else None
    if not isinstance(owner, str):
        owner = type(obj).__module__
    return owner.split(".")[0] == "aesara"


def public_names(module_name):
    # sys.modules: aesara.compile.function is both a module and the function its package exports
    module = sys.modules[module_name]
    # (a set: aesara.tensor.math's dir() is its __all__, which names std twice)
    return sorted(set(n for n in dir(module)
                  if not n.startswith("_") and defined_by_aesara(getattr(module, n))))


def main():
    warnings.simplefilter("ignore")
    import aesara
    assert aesara.__version__.startswith("2.9.4"), aesara.__version__
    for m in MODULES:  # import them all first, so that every dir() sees the same package
        importlib.import_module(m)
    lines = ["%s:%s" % (m, n) for m in MODULES for n in public_names(m)]
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        f.write("\n".join(sorted(lines)) + "\n")
    print("%d names in %d modules -> %s" % (len(lines), len(MODULES), OUT))


if __name__ == "__main__":
    main()

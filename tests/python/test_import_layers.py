"""The Python package's layers point down: _core -> graph -> tensor -> compile ->
(client | lane | shm), each importing only its own layer and those below it, at module level and
inside functions alike (the modules are parsed, not imported). A new module must be given its
layer in LAYERS; an import that points up fails unless ALLOWED_UPWARD lists it, with why."""
import ast
import os

import pytest

PACKAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "client",
                       "python", "kiln")

# Each module's layer, by the longest matching name. _core's layer holds what sits beside the
# native module: the generated kiln.v1 stubs (_pb), kiln.config and the errors (kiln.errors).
# kiln.scalar (Aesara's scalar ops, applied as Elemwise), kiln.sparse (sparse matrices as four
# tensors), kiln.gradient, kiln.ifelse, kiln.scan and kiln.printing build graphs as kiln.tensor
# does
# (kiln.tensor re-exports grad, as Aesara's does), and kiln.wire writes graphs and tensors as kiln.v1 messages, sending nothing:
# all of tensor's layer. The package's own __init__, __main__ and cli sit above every layer.
LAYERS = {
    "kiln._core": 0, "kiln._pb": 0, "kiln.config": 0, "kiln.errors": 0, "kiln.v1": 0,
    "kiln.graph": 1, "kiln.ops": 1,
    "kiln.tensor": 2, "kiln.scalar": 2, "kiln.gradient": 2, "kiln.ifelse": 2, "kiln.scan": 2,
    "kiln.printing": 2, "kiln.sparse": 2,
    "kiln.wire": 2,
    "kiln.compile": 3,
    "kiln.client": 4, "kiln.lane": 4, "kiln.shm": 4, "kiln.runners": 4,
    "kiln": 5, "kiln.__main__": 5, "kiln.cli": 5,
}
LAYER_NAMES = ["_core", "graph", "tensor", "compile", "client | lane | shm", "kiln (top)"]

# The upward imports still there, as (importing module, imported module), each with why (none
# of execution since it split into kiln.runners):
# - sigmoid_binary_crossentropy is an OpFromGraph, as Aesara's (which imports
#   aesara.compile.builders in aesara.tensor.nnet.basic too), imported when it is called.
ALLOWED_UPWARD = {("kiln.tensor.nnet.basic", "kiln.compile.builders")}


def layer_of(module):
    """The layer of a module of the package, by the longest prefix LAYERS names; None when
    none does."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        name = ".".join(parts[:n])
        if name in LAYERS:
            return LAYERS[name]
    return None


def modules(package=PACKAGE):
    """{module name: path} of every .py file of the package."""
    found = {}
    root = os.path.dirname(os.path.abspath(package))
    for folder, _, files in os.walk(package):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(folder, f)
                name = os.path.relpath(path, root)[:-3].replace(os.sep, ".")
                found[name[:-len(".__init__")] if name.endswith(".__init__") else name] = path
    return found


def imported(module, path, known):
    """(line, imported module) of every import of the package in the file, at any depth: `from
    kiln.x import name` imports kiln.x.name when that is a module, else kiln.x; parents of the
    imported module (whose __init__ runs too) are not counted."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "kiln"]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            if base.split(".")[0] != "kiln":
                continue
            for a in node.names:
                full = base + "." + a.name
                out.append((node.lineno, full if full in known or full == "kiln._core" else base))
    return out


def upward_imports(package=PACKAGE):
    """[(module, line, imported module)] of every import that points up a layer."""
    found = modules(package)
    known = set(found) | {"kiln._core"}
    up = set()
    for module, path in sorted(found.items()):
        for line, target in imported(module, path, known):
            if layer_of(target) > layer_of(module):
                up.add((module, line, target))
    return sorted(up)


def test_every_module_has_a_layer():
    unplaced = [m for m in modules() if layer_of(m) is None]
    assert not unplaced, "give these modules a layer in LAYERS: %s" % unplaced


def test_imports_point_down():
    up = upward_imports()
    unexpected = ["%s:%d imports %s (%s -> %s)" % (m, line, t, LAYER_NAMES[layer_of(m)],
                                                    LAYER_NAMES[layer_of(t)])
                  for m, line, t in up if (m, t) not in ALLOWED_UPWARD]
    assert not unexpected, "imports that point up a layer:\n" + "\n".join(unexpected)


def test_the_allow_list_has_no_stale_entries():
    """An entry whose import is gone comes off the list, so the list only shrinks."""
    present = {(m, t) for m, _, t in upward_imports()}
    assert not ALLOWED_UPWARD - present, sorted(ALLOWED_UPWARD - present)


@pytest.mark.parametrize("source,expected", [
    ("from kiln.tensor import basic\n", ["kiln.tensor.basic"]),
    ("from kiln.tensor import as_tensor_variable\n", ["kiln.tensor"]),
    ("from kiln import _core, gradient\n", ["kiln._core", "kiln.gradient"]),
    ("def f():\n    import kiln.compile as c\n", ["kiln.compile"]),
    ("from . import basic\n", ["kiln.tensor.basic"]),
    ("from ..graph import Op\n", ["kiln.graph"]),
])
def test_imports_are_read_as_python_resolves_them(tmp_path, source, expected):
    path = tmp_path / "mod.py"
    path.write_text(source)
    known = {"kiln.tensor", "kiln.tensor.basic", "kiln.gradient", "kiln.graph", "kiln.compile"}
    assert [t for _, t in imported("kiln.tensor.mod", str(path), known)] == expected

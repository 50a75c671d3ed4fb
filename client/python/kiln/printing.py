"""kiln.dprint, kiln.pp and kiln.printing.pydotprint: Aesara's debugprint text, pretty printer
and picture (core's, of the graph's twin in kiln._core, drawn by graphviz; a compiled function's
optimized graph as the server prints it), and Print, the op that shows a value each time a
function computes it."""
import subprocess
import sys
import warnings

from kiln import ops
from kiln.graph import _core, ancestors, core_variable
from kiln.tensor.variable import SparseOperand


def _server_text(obj, fmt):
    """A compiled function's graph as the server prints it (its print_compiled method, so that
    this layer need not import kiln.compile), or None for a variable or a list of them."""
    print_compiled = getattr(obj, "print_compiled", None)
    return print_compiled(fmt) if callable(print_compiled) else None


def debugprint(obj, file=None, depth=-1, print_type=False, ids="CHAR", stop_on_name=False,
               done=None, max_nesting=100):
    """Prints the graph of a variable, a list of variables or a compiled function (its
    optimized graph, as the server prints it) to `file` (sys.stdout by default) and returns
    the file, or returns the text with file='str'. A sparse variable (kiln.sparse) prints as the
    graphs of its four tensors (data, indices, indptr, shape). A subtree nested deeper
    than max_nesting levels ends its line with " ..." and is printed as a block of its own
    below, so that the text stays linear in the graph's size (-1: never cut)."""
    text = _server_text(obj, "DPRINT")
    if text is None:
        outs = list(obj) if isinstance(obj, (list, tuple)) else [obj]
        text = _debugprint(outs, depth, print_type, ids, stop_on_name, max_nesting)
    if file == "str":
        return text
    file = file or sys.stdout
    file.write(text)
    return file


def _tensors(outputs):
    """The outputs with each sparse variable (kiln.sparse) as its four tensors."""
    return [t for o in outputs for t in (o.parts if isinstance(o, SparseOperand) else [o])]


def _debugprint(outputs, depth, print_type, ids, stop_on_name, max_nesting):
    return _core.dprint([core_variable(o) for o in _tensors(outputs)], print_type, ids, depth,
                        stop_on_name, max_nesting)


dprint = debugprint


def pydotprint(fct, outfile=None, format="png", compact=True, var_with_name_simple=False,
               print_output_file=True, **kwargs):
    """Draws a variable's graph (core writes its DOT in pydotprint's conventions, here:
    compact draws unnamed intermediate variables as edge labels, var_with_name_simple labels
    a named variable by its name alone) or a compiled function's optimized graph (as the
    server writes it) with graphviz."""
    dot = _server_text(fct, "DOT")
    if dot is None:
        outs = list(fct) if isinstance(fct, (list, tuple)) else [fct]
        dot = _core.dot([core_variable(o) for o in _tensors(outs)], bool(compact),
                        bool(var_with_name_simple))
    outfile = outfile or "kiln.%s" % format
    if format == "dot":
        with open(outfile, "w") as f:
            f.write(dot)
    else:
        subprocess.run(["dot", "-T" + format, "-o", outfile], input=dot.encode(), check=True)
    if print_output_file:
        print("The output file is available at", outfile)
    return outfile


def pp(var):
    """Aesara's pretty printer: the expression computing var on one line, "((x * y) + 1.0)".
    A graph whose text outgrows 1 MiB (shared subexpressions are written out at each use)
    raises kiln.graph.GraphError. A sparse variable (kiln.sparse) prints as the constructor of
    its four tensors: "CSM{format='csr'}(x.data, x.indices, x.indptr, x.shape)"."""
    if isinstance(var, SparseOperand):
        return "CSM{format=%r}(%s)" % (var.format, ", ".join(map(pp, var.parts)))
    return _core.pp(core_variable(var))


pprint = pp


def _print_fn(op, xin):
    """Print's default global_fn, as Aesara's: one line per attribute of the value."""
    for attr in op.attrs:
        temp = getattr(xin, attr)
        print(op.message, attr, "=", temp() if callable(temp) else temp)


@ops.view
class Print(ops.Print):
    """Aesara's printing.Print: Print(message, attrs)(x) is x, and each call of a function
    computing it shows `message` and those attributes of x's value. The server computes the
    value and returns it with the call's results; global_fn(op, value) shows it here."""

    __props__ = ("message", "attrs", "global_fn")

    def __init__(self, message="", attrs=("__str__",), global_fn=_print_fn):
        self.message = message
        self.attrs = tuple(attrs)
        self.global_fn = global_fn
        self.core_op()

    @classmethod
    def from_attrs(cls, attrs):
        return cls(attrs.get("message", ""), tuple(attrs.get("attrs", "__str__").split(",")))

    def wire_attrs(self):
        return [("message", self.message), ("attrs", ",".join(self.attrs))]

    def __str__(self):
        return "%s, global_fn=%r}" % (str(self.core_op())[:-1], self.global_fn)


def printers(outputs, order=None):
    """{(message, attrs): Print op} of the Print ops in the outputs' graph (`order`:
    ancestors(outputs), when the caller has it)."""
    ops = {}
    for v in ancestors(outputs) if order is None else order:
        if v.owner is not None and isinstance(v.owner.op, Print):
            ops.setdefault((v.owner.op.message, v.owner.op.attrs), v.owner.op)
    return ops


def show_printed(printed, dropped, ops):
    """Shows the values Print ops computed in a call ((message, attrs, array) triples), each by
    the global_fn of its op in `ops` (printers()), and warns of the `dropped` values the server
    left out. (A Print is known by its message and attrs: two that share both show by the
    first one's global_fn.)"""
    for message, attrs, value in printed:
        op = ops.get((message, tuple(attrs))) or Print(message, attrs)
        op.global_fn(op, value)
    if dropped:
        warnings.warn("%d printed values were left out: they exceed the server's "
                      "--max_printed_bytes" % dropped)
